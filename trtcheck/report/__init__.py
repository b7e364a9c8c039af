"""Reports rendered from the results model alone: HTML (offline, charts), Markdown, JSON.

``render_report(results, out_dir)`` builds every section's view-model and charts, renders
``templates/report.html.j2`` and ``report.md.j2``, and writes ``report.html``,
``report.md``, ``charts/*.png`` and ``results.json`` atomically: everything is written to
a temporary folder beside ``out_dir`` first and moved into place only when complete, so
a failure never leaves a partial report that looks finished.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from trtcheck.errors import InputError
from trtcheck.report.charts import ChartSink
from trtcheck.report.sections import Section, build_sections
from trtcheck.report.templating import render_template
from trtcheck.results import Results, results_to_json

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
        p.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".trtcheck-probe-", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"cannot write to output directory {p}: {exc.strerror or exc}",
                         "choose a writable directory with -o/--output") from None
    charts = p / "charts"
    if charts.exists() and (not charts.is_dir() or any(
            not (f.is_file() and f.suffix == ".png") for f in charts.iterdir())):
        raise InputError(f"{charts} holds files trtcheck did not write (only charts/*.png "
                         "is replaced with --overwrite)",
                         "move them away or choose another -o/--output")
    existing = [n for n in (*REPORT_FILES, "charts") if (p / n).exists()]
    if existing and not overwrite:
        raise InputError(f"{p} already holds a report ({', '.join(existing)})",
                         "pass --overwrite to replace it, or choose another -o/--output")
    return p


def build_report(results: Results) -> tuple[str, str, list[Section], ChartSink]:
    """Render the HTML and Markdown text of a report in memory.

    Returns:
        ``(html, markdown, sections, charts)``.
    """
    charts = ChartSink()
    sections = build_sections(results, charts)
    ctx = {"results": results, "sections": sections,
           "title": _title(results), "schema_version": results.schema_version}
    html = render_template("report.html.j2", ctx, markdown=False)
    md = render_template("report.md.j2", ctx, markdown=True)
    return html, md, sections, charts


def _title(results: Results) -> str:
    if results.inspection is not None:
        return f"trtcheck report: {Path(results.inspection.path).name}"
    if results.bench:
        return f"trtcheck report: {Path(results.bench[0].model_path).name}"
    engine = getattr(results, "engine", None)
    if engine is not None:
        return f"trtcheck report: {Path(engine.path).name}"
    return "trtcheck report"


def render_report(results: Results, out_dir: str | os.PathLike[str],
                  overwrite: bool = False) -> list[Path]:
    """Write report.html, report.md, charts/*.png and results.json into ``out_dir``.

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
        if (dest / "charts").is_dir():
            shutil.rmtree(dest / "charts")
        if (staging / "charts").is_dir():
            os.replace(staging / "charts", dest / "charts")
            written += sorted((dest / "charts").iterdir())
        # results.json last-but-one, report.html last: a reader seeing report.html sees all
        for name in ("report.md", "results.json", "report.html"):
            os.replace(staging / name, dest / name)
            written.append(dest / name)
    except OSError as exc:
        raise InputError(f"cannot write the report into {dest}: {exc.strerror or exc}",
                         "check free space and permissions of the output directory") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written
