"""Reports rendered from the results model alone: HTML (offline, charts), Markdown, JSON.

``render_report(results, out_dir)`` builds every section's view-model and charts, renders
``templates/report.html.j2`` and ``report.md.j2``, and writes ``report.html``,
``report.md``, ``charts/*.png`` and ``results.json`` atomically: everything is written to
a temporary folder beside ``out_dir`` first and moved into place only when complete, so
a failure never leaves a partial report that looks finished.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from trtcheck.errors import InputError
from trtcheck.report.charts import ChartSink
from trtcheck.report.sections import Section, build_sections
from trtcheck.report.templating import render_template
from trtcheck.results import Results, results_to_json
from trtcheck.files import probe_writable_dir

REPORT_FILES = ("report.html", "report.md", "results.json")


def check_output_dir(out_dir: str | os.PathLike[str], overwrite: bool) -> Path:
    """Make sure ``out_dir`` can take a report, before any measurement runs.

    Creates the folder when missing. Refuses to replace an existing report unless
    ``overwrite`` is true (nothing the user has is overwritten without asking).

    Raises:
        InputError: the path is a file, cannot be created, is not writable, or already
            holds report files and ``overwrite`` is false.
    """
    if not str(out_dir).strip():  # e.g. -o "$UNSET_VARIABLE": never the current folder
        raise InputError("-o is empty", "give the report's folder, e.g. -o report/")
    p = Path(out_dir)
    if p.exists() and not p.is_dir():
        raise InputError(f"output path {p} exists and is not a directory",
                         "pass a directory with -o/--output")
    try:
        probe_writable_dir(p)
    except OSError as exc:
        raise InputError(f"cannot write to output directory {p}: {exc.strerror or exc}",
                         "choose a writable directory with -o/--output") from None
    charts = p / "charts"
    if charts.exists() and not charts.is_dir():
        raise InputError(f"{charts} exists and is not a folder; the report writes its "
                         "charts into charts/", "move it away or choose another -o/--output")
    existing = [n for n in REPORT_FILES if (p / n).exists()]
    existing += [f"charts/{n}" for n in _own_charts(charts)]
    if existing and not overwrite:
        raise InputError(f"{p} already holds a report ({', '.join(existing)})",
                         "pass --overwrite to replace it, or choose another -o/--output")
    return p


def _own_charts(charts: Path) -> list[str]:
    """Names of the chart files in the folder ``charts`` that trtcheck writes
    (:func:`~trtcheck.report.charts.is_trtcheck_chart`), sorted; ``[]`` without one."""
    from trtcheck.report.charts import is_trtcheck_chart

    if not charts.is_dir():
        return []
    return sorted(f.name for f in charts.iterdir() if f.is_file() and is_trtcheck_chart(f.name))


def report_output_files(out_dir: str | os.PathLike[str]) -> list[str]:
    """The files a report into ``out_dir`` may write or replace: results.json,
    report.html, report.md and the trtcheck chart files already in ``charts/`` (new ones
    are named by :data:`~trtcheck.report.charts.CHART_NAME_PATTERN`)."""
    p = Path(out_dir)
    return [str(p / n) for n in REPORT_FILES] + [str(p / "charts" / n)
                                                 for n in _own_charts(p / "charts")]


def build_report(results: Results) -> tuple[str, str, list[Section], ChartSink]:
    """Render the HTML and Markdown text of a report in memory; the verdict block
    comes first when ``results.verdict`` is set (:func:`with_verdict` sets it).

    Returns:
        ``(html, markdown, sections, charts)``.
    """
    from trtcheck.report.verdict import verdict_view
    from trtcheck.report.views import ReportPageView

    charts = ChartSink()
    sections = build_sections(results, charts)
    page = ReportPageView(
        title=_title(results), schema_version=results.schema_version, results=results,
        sections=sections,
        verdict=verdict_view(results.verdict) if results.verdict is not None else None)
    ctx = {f.name: getattr(page, f.name) for f in dataclasses.fields(page)}
    html = render_template("report.html.j2", ctx, markdown=False)
    md = render_template("report.md.j2", ctx, markdown=True)
    return html, md, sections, charts


def with_verdict(results: Results) -> Results:
    """``results`` completed by :func:`trtcheck.analyze.derived.derived.complete` (derived
    findings, the predicted-vs-measured table and the verdict, each only where the
    results hold none). The input is not changed."""
    from trtcheck.analyze.derived import complete

    completed: Results = complete(results)
    return completed


def _title(results: Results) -> str:
    """The page title and H1: ``trtcheck report: <model>``, the model being the file
    inspected/benchmarked/profiled, or for a live serve run the server's model name with
    its version and where it ran (``tb_linear on triton at http://127.0.0.1:8000``)."""
    live = results.serve.live if results.serve is not None else None
    if live is not None and results.inspection is None and not results.bench:
        version = f" version {live.model_version}" if live.model_version else ""
        return (f"trtcheck report: {live.model_name}{version} on "
                f"{live.server_name or 'a KServe v2 server'} at {live.url}")
    if results.inspection is not None:
        return f"trtcheck report: {Path(results.inspection.path).name}"
    if results.bench:
        return f"trtcheck report: {Path(results.bench[0].model_path).name}"
    engine = getattr(results, "engine", None)
    if engine is not None:
        return f"trtcheck report: {Path(engine.path).name}"
    for run in (results.serve, results.precision):
        if run is not None and run.model_path:
            return f"trtcheck report: {Path(run.model_path).name}"
    return "trtcheck report"


def render_report(results: Results, out_dir: str | os.PathLike[str],
                  overwrite: bool = False) -> list[Path]:
    """Write report.html, report.md, charts/*.png and results.json into ``out_dir``.

    The verdict comes first in each (judged from ``results`` when they hold none, with
    the other derived analyses, see :func:`with_verdict`) and is stored in the
    results.json written.

    With ``overwrite``, only those files are replaced, and the chart files of an earlier
    report that this one does not draw are removed (named by
    :data:`~trtcheck.report.charts.CHART_NAME_PATTERN`); any other file in ``out_dir`` or
    ``charts/`` is left as it is.

    Args:
        results: the results model (nothing is measured here).
        out_dir: destination folder (created when missing).
        overwrite: replace an existing report in ``out_dir``.

    Returns:
        the paths written.

    Raises:
        InputError: see :func:`check_output_dir`.
    """
    dest = check_output_dir(out_dir, overwrite)
    results = with_verdict(results)
    html, md, _sections, charts = build_report(results)
    staging = Path(tempfile.mkdtemp(prefix=".trtcheck-report-", dir=dest))
    try:
        (staging / "report.html").write_text(html, encoding="utf-8")
        (staging / "report.md").write_text(md, encoding="utf-8")
        (staging / "results.json").write_text(results_to_json(results), encoding="utf-8")
        if charts.charts:
            (staging / "charts").mkdir()
            for ch in charts.charts:
                (staging / ch.png_relpath).write_bytes(ch.png_bytes)
        written: list[Path] = []
        new_charts = sorted((staging / "charts").iterdir()) if charts.charts else []
        with _signals_deferred():  # all files land, or none: no mix of old and new
            written = _place(staging, dest, new_charts, overwrite)
    except OSError as exc:
        raise InputError(f"cannot write the report into {dest}: {exc.strerror or exc}",
                         "check free space and permissions of the output directory") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written


def _claim(src: Path, dst: Path, dest: Path) -> None:
    """Move ``src`` to ``dst`` only if ``dst`` does not exist, atomically (a hard link
    fails on an existing name; where links are not supported, an exclusive create): of two
    runs writing one new folder, exactly one gets it.

    Raises:
        InputError: ``dst`` exists (another run wrote a report there meanwhile).
    """
    try:
        try:
            os.link(src, dst)
        except FileExistsError:
            raise
        except OSError:  # no hard links on this file system
            with open(dst, "xb") as fh:
                fh.write(src.read_bytes())
    except FileExistsError:
        raise InputError(f"{dest} already holds a report ({dst.name} appeared while this one "
                         "was being made: another run writes there)",
                         "pass --overwrite to replace it, or choose another -o/--output"
                         ) from None
    src.unlink()


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM for the few renames that publish a report (main thread, POSIX);
    a signal that arrives meanwhile is delivered right after."""
    if not hasattr(signal, "pthread_sigmask") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return
    sigs = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _place(staging: Path, dest: Path, new_charts: list[Path], overwrite: bool) -> list[Path]:
    """Publish the staged report into ``dest``. Without ``overwrite`` the first file is
    claimed with :func:`_claim` before anything else lands, and so are the others."""
    written: list[Path] = []
    if not overwrite:
        _claim(staging / "report.md", dest / "report.md", dest)
        written.append(dest / "report.md")
    if new_charts:
        (dest / "charts").mkdir(exist_ok=True)
    for f in new_charts:  # replace only the files this report writes
        os.replace(f, dest / "charts" / f.name)
        written.append(dest / "charts" / f.name)
    made = {f.name for f in new_charts}
    stale = [n for n in _own_charts(dest / "charts") if n not in made]
    for name in stale:  # charts of an earlier report that this one does not draw
        (dest / "charts" / name).unlink()
    if stale and not any((dest / "charts").iterdir()):
        (dest / "charts").rmdir()  # it held only trtcheck's charts
    # results.json last-but-one, report.html last: a reader seeing report.html sees all
    for name in ("report.md", "results.json", "report.html"):
        if not overwrite:
            if name != "report.md":
                _claim(staging / name, dest / name, dest)
                written.append(dest / name)
            continue
        os.replace(staging / name, dest / name)
        written.append(dest / name)
    return written
