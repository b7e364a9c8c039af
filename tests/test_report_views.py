"""The report's typed template inputs (trtcheck/report/views.py) and shared findings macros.

Every section's view is built from seeded results: the golden ``full.json`` (a real report
run of the small classifier: inspection, bench, FP16, serving, advice), the seeded
synthetic results of :mod:`trtcheck.testing.synthetic_results`, and a real trtexec export
for the engine. Each view holds the types it declares, renders in HTML and Markdown, and
a template that reads a field the view lacks fails instead of rendering an empty cell.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pydantic
import pytest

from trtcheck.inspection.engine.trtexec import load_trtexec_export
from trtcheck.report import sec_advice, sec_bench, sec_engine, sec_inspection, sec_precision
from trtcheck.report import sec_imported, sec_serve, sec_summary, sec_tune, views
from trtcheck.report.sections import SECTION_MODULES, render_partial
from trtcheck.report.templating import render_template, templates_dir
from trtcheck.results import Finding, Results, results_from_json
from trtcheck.results.engine import EngineMemory
from trtcheck.results.precision import LayerError, Localization, RangeOverflow
from trtcheck.testing import synthetic_results

FULL = Path(__file__).resolve().parent / "gold" / "inputs" / "full.json"


@pytest.fixture(scope="module")
def full() -> Results:
    """The golden full report's results, with a localisation and input files added to
    the FP16 variant so every precision block has something to show."""
    res = results_from_json(FULL.read_text(encoding="utf-8"))
    p = res.precision
    assert p is not None
    variant = p.variants["fp16"]
    loc = Localization(
        method="FP32 activations checked against FP16's largest finite value 65504",
        tensors_compared=9,
        first_failing=[LayerError(index=3, node="Conv_3", op_type="Conv", tensor="t3",
                                  element_count=40, reference_max_abs=9.5, max_abs_error=0.5,
                                  range_rel_error=0.05, outside_tolerance_fraction=0.1,
                                  cosine_similarity=0.99, rel_l2_error=0.02)],
        range_overflows=[RangeOverflow(index=2, node="Mul_2", op_type="Mul", tensor="t2",
                                       reference_max_abs=7e4, limit_abs=65504.0,
                                       overflow_count=3, element_count=40)],
        range_overflow_total=1, notes=["a note on the search"])
    variant = variant.model_copy(update={"localization": loc, "findings": [
        *variant.findings, Finding(code="fp16-range-overflow", severity="error",
                                   message="Mul_2 overflows FP16", remedy="keep it in FP32")]})
    inputs = p.inputs.model_copy(update={"files": [f"in{i}.npz" for i in range(12)]})
    res.precision = p.model_copy(update={"variants": {"fp16": variant}, "inputs": inputs})
    return res


@pytest.fixture(scope="module")
def engine_results(full: Results, trtexec_exports: Path) -> Results:
    """A real trtexec export (detailed layers, per-layer times, lints) with a memory
    record, so every engine block has something to show."""
    insp = load_trtexec_export(trtexec_exports / "resnet18-a100-fp16")
    insp = insp.model_copy(update={"memory": EngineMemory(
        plan_size_bytes=47_000_000, weights_bytes=46_000_000, device_memory_bytes=8_000_000,
        device_memory_bytes_per_profile={0: 8_000_000}, gpu_free_bytes=80_000_000_000,
        largest_batch_fits=512, notes=["activation memory grows linearly with batch"])})
    return full.model_copy(update={"engine": insp})


#: section id -> (title, view builder from results)
BUILDERS: dict[str, tuple[str, Callable[[Results], Any]]] = {
    "summary": ("Summary", sec_summary.summary_view),
    "inspection": ("Model inspection",
                   lambda r: sec_inspection.inspection_view(r.inspection)),
    "bench": ("Latency and throughput", sec_bench.bench_view),
    "engine": ("TensorRT engine", lambda r: sec_engine.engine_view(r.engine)),
    "precision": ("Precision: accuracy vs speed",
                  lambda r: sec_precision.precision_view(r.precision)),
    "serve": ("Serving with dynamic batching", lambda r: sec_serve.serve_view(r.serve)),
    "advice": ("Batching advice",
               lambda r: sec_advice.advice_view(r.advice, sec_advice.serve_comparison(r.advice))),
    "tune": ("Tune: calibrate, predict, confirm",
             lambda r: sec_tune.tune_view(r.tune or _tune_sample())),
    "imported": ("Imported measurements",
                 lambda r: sec_imported.imported_view(r.imported)),
}

#: real files of other tools (perf_analyzer 2.41, Triton 2.51 statistics)
IMPORTS = Path(__file__).resolve().parent / "data" / "perf-analyzer"


def _tune_sample() -> Any:
    """A small tune search (a pick predicted and measured, a runner-up, a calibration)."""
    from trtcheck.results.tune import (
        TuneCalibration, TuneChoice, TuneInstanceCalibration, TuneInterval, TuneMeasured,
        TunePrediction, TuneResult,
    )

    def pred(w: float, b: int) -> TunePrediction:
        return TunePrediction(window_us=w, max_batch_size=b, instances=1, stable=True,
                              utilisation=0.4, p50_ms=5.0, p99_ms=9.0,
                              p50=TuneInterval(point_ms=5.0, lo_ms=4.0, hi_ms=6.0),
                              p99=TuneInterval(point_ms=9.0, lo_ms=7.0, hi_ms=12.0),
                              throughput_queries_per_s=200.0, mean_batch=1.3,
                              capacity_queries_per_s=600.0, feasible=True)

    p = pred(0.0, 4)
    return TuneResult(
        url="http://127.0.0.1:8000", model="m", arrival_rate_per_s=200.0, slo_p99_ms=20.0,
        objective="fewest-instances", objective_rule="fewest instances ...",
        max_instances=2, max_batch_size=8,
        calibration=TuneCalibration(per_instances=[TuneInstanceCalibration(
            instances=1, batch_sizes=[1, 8], t_ms=[2.0, 4.0])]),
        predictions=[p, pred(1000.0, 8)],
        pick=TuneChoice(window_us=0.0, max_batch_size=4, instances=1, predicted=p,
                        measured=TuneMeasured(p50_ms=5.2, p99_ms=10.0,
                                              throughput_queries_per_s=199.0,
                                              mean_batch=1.3, requests=400, run=0,
                                              p50_inside=True, p99_inside=True)),
        runner_up=pred(1000.0, 8), why=["objective fewest-instances"], notes=["a note"])


def _results_for(section: str, full: Results, engine_results: Results) -> Results:
    if section == "imported":
        from trtcheck.results.documents import load_results_input as load_results

        return load_results(IMPORTS / "request-rate.csv")
    return engine_results if section == "engine" else full


def test_imported_statistics_render():
    from trtcheck.results.documents import load_results_input as load_results

    res = load_results(IMPORTS / "tb_linear-stats.json")
    view = sec_imported.imported_view(res.imported)
    _check_types(view)
    sec = render_partial("imported", "Imported", view)
    assert "compute ms per batch" in sec.html and "| 4 | 696 |" in sec.markdown


def test_every_section_has_a_view_builder():
    assert sorted(f"sec_{s}" for s in BUILDERS) == sorted(SECTION_MODULES)


def _check_types(value: Any, path: str = "v") -> None:
    """Every field of the dataclass ``value`` holds its declared type (pydantic strict
    validation, which takes an ``int`` for a ``float`` but never a ``str`` for a number),
    recursively through nested views."""
    hints = typing.get_type_hints(type(value))
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        try:
            pydantic.TypeAdapter(hints[f.name]).validate_python(item, strict=True)
        except pydantic.ValidationError as exc:
            raise AssertionError(f"{path}.{f.name}: {item!r} is not {hints[f.name]}: "
                                 f"{exc}") from None
        for i, sub in enumerate(item if isinstance(item, list) else [item]):
            if dataclasses.is_dataclass(sub) and type(sub).__module__ == views.__name__:
                _check_types(sub, f"{path}.{f.name}[{i}]")


@pytest.mark.parametrize("section", sorted(BUILDERS))
def test_view_holds_its_declared_types(section, full, engine_results):
    view = BUILDERS[section][1](_results_for(section, full, engine_results))
    assert type(view).__module__ == views.__name__
    assert dataclasses.is_dataclass(view)
    _check_types(view)


@pytest.mark.parametrize("section", sorted(BUILDERS))
def test_view_renders_html_and_markdown(section, full, engine_results):
    title, build = BUILDERS[section]
    sec = render_partial(section, title, build(_results_for(section, full, engine_results)))
    assert sec.html.strip() and sec.markdown.strip()
    assert "Undefined" not in sec.html + sec.markdown


def test_synthetic_results_render_every_section_they_hold():
    res = synthetic_results.results(seed=3)
    for section in ("summary", "inspection", "bench"):
        title, build = BUILDERS[section]
        view = build(res)
        _check_types(view)
        sec = render_partial(section, title, view)
        assert sec.html and sec.markdown
    assert "onnx-dynamic-batch" in render_partial(
        "inspection", "Model inspection", BUILDERS["inspection"][1](res)).markdown


def test_views_are_frozen(full):
    view = sec_summary.summary_view(full)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.command = "other"  # type: ignore[misc]


def _without(view: Any, name: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(**{f.name: getattr(view, f.name)
                                    for f in dataclasses.fields(view) if f.name != name})


@pytest.mark.parametrize("section", sorted(BUILDERS))
def test_a_missing_view_field_fails_loudly(section, full, engine_results):
    """Drop each field in turn: one of the two templates must fail on it (every field a
    view declares is read, and a template never renders an absent field as empty)."""
    title, build = BUILDERS[section]
    view = build(_results_for(section, full, engine_results))
    render_partial(section, title, view)  # the whole view renders
    for f in dataclasses.fields(view):
        with pytest.raises(jinja2.UndefinedError):
            render_partial(section, title, _without(view, f.name))


LIVE = Path(__file__).resolve().parent / "gold" / "inputs" / "live.json"


def test_live_serve_view_holds_its_types_and_every_field_is_read():
    """A live server's run (a recorded ``serve --url`` sweep): the serving view with its
    live part holds the declared types, renders, and each field of the live part is
    read by a template."""
    run = results_from_json(LIVE.read_text(encoding="utf-8")).serve
    assert run is not None and run.live is not None
    view = sec_serve.serve_view(run)
    assert view.live is not None
    _check_types(view)
    title = sec_serve.serve_title(run)
    sec = render_partial("serve", title, view)
    assert "Server statistics" in sec.html and "Server statistics" in sec.markdown
    for part in (view.live, view.live.target):
        for f in dataclasses.fields(part):
            stripped = _without(part, f.name)
            broken = (dataclasses.replace(view, live=stripped) if part is view.live else
                      dataclasses.replace(view, live=dataclasses.replace(
                          view.live, target=stripped)))
            with pytest.raises(jinja2.UndefinedError):
                render_partial("serve", title, broken)


def test_a_template_reading_an_undeclared_field_fails(full):
    env_template = "{{ v.headlines }}{{ v.no_such_field }}"
    import trtcheck.report.templating as templating

    for markdown in (False, True):
        with pytest.raises(jinja2.UndefinedError):
            templating.environment(markdown).from_string(env_template).render(
                v=sec_summary.summary_view(full))


# ------------------------------------------------------------------- findings macros

FINDING = Finding(code="unstable-cv", severity="warning", message="CV is 40% <high>",
                  remedy="pin the CPU | close programs", where="batch 2")


def _macro(markdown: bool, call: str, **ctx: Any) -> str:
    ext = "md" if markdown else "html"
    src = f'{{% import "macros/findings.{ext}.j2" as findings %}}{{{{ {call} }}}}'
    from trtcheck.report.templating import environment

    return environment(markdown).from_string(src).render(**ctx)


def test_findings_macros_html():
    from trtcheck.report.findings_view import group_findings

    g = group_findings([FINDING, FINDING.model_copy(update={"where": "batch 4"})], gpu=False)[0]
    assert _macro(False, "findings.group(g)", g=g) == (
        '<div class="finding warning"><code>unstable-cv</code> at <b>batch 2, 4</b>: '
        'CV is 40% &lt;high&gt; <span class="muted">(the first of 2)</span> &mdash; '
        '<i>pin the CPU | close programs</i></div>')
    assert _macro(False, "findings.finding(f)", f=FINDING) == (
        '<div class="finding warning"><b>unstable-cv</b>: CV is 40% &lt;high&gt; &mdash; '
        '<i>pin the CPU | close programs</i></div>')
    assert _macro(False, "findings.lint(f)", f=FINDING) == (
        '<div class="finding warning"><strong>warning</strong> <code>unstable-cv</code>: '
        'CV is 40% &lt;high&gt;<br><em>Fix:</em> pin the CPU | close programs</div>')
    assert _macro(False, "findings.note(m)", m="<b>") == \
        '<div class="finding info">&lt;b&gt;</div>'
    assert _macro(False, 'findings.note(f.message, f.severity, f.remedy)', f=FINDING) == (
        '<div class="finding warning">CV is 40% &lt;high&gt; &mdash; '
        '<i>pin the CPU | close programs</i></div>')


def test_findings_macros_markdown():
    from trtcheck.report.findings_view import group_findings

    g = group_findings([FINDING], gpu=False)[0]
    assert _macro(True, "findings.group(g)", g=g) == (
        "- **warning** unstable-cv at batch 2: CV is 40% &lt;high&gt;. "
        "Remedy: pin the CPU \\| close programs")
    assert _macro(True, "findings.finding(f)", f=FINDING) == (
        "- **unstable-cv**: CV is 40% &lt;high&gt;. Remedy: pin the CPU \\| close programs")
    assert _macro(True, "findings.lint(f)", f=FINDING) == (
        "- **warning** `unstable-cv`: CV is 40% &lt;high&gt; *Fix:* pin the CPU \\| close "
        "programs")
    assert _macro(True, 'findings.lint(f, fix_prefix=". Fix: ")', f=FINDING).endswith(
        ". Fix: pin the CPU \\| close programs")
    assert _macro(True, 'findings.note("note", m)', m="a|b") == "- note: a\\|b"


def test_no_section_template_writes_a_finding_box_itself():
    """Finding boxes come from the shared macros only (one place to change their look)."""
    for path in sorted((templates_dir() / "sections").glob("*.j2")):
        text = path.read_text(encoding="utf-8")
        assert 'class="finding' not in text, path.name
        assert "remedy %}" not in text, path.name  # no remedy clause of its own


def test_report_renders_with_every_section(engine_results):
    from trtcheck.report import build_report

    html, md, sections, _charts = build_report(engine_results)
    assert [s.id for s in sections] == ["summary", "inspection", "bench", "engine",
                                        "precision", "serve", "advice"]
    assert html.count('class="finding') >= 5
    assert render_template("report.md.j2", {
        "results": engine_results, "sections": sections, "verdict": None,
        "title": "t", "schema_version": engine_results.schema_version}, markdown=True) \
        .startswith("# t")


# --------------------------------------------------------------------------- compare

#: CompareView fields only the text and Markdown renderers show
COMPARE_TEXT_ONLY = {"serve_only_in_a", "serve_only_in_b"}


@pytest.fixture(scope="module")
def comparison_view(engine_results: Results, trtexec_exports: Path) -> Any:
    """``full`` against itself with a different engine on each side (layers, serving, precision,
    bench runs: every block of the compare page)."""
    from trtcheck.analyze.compare.compare import compare
    from trtcheck.report.compare_render import view

    b = engine_results.model_copy(update={
        "engine": load_trtexec_export(trtexec_exports / "resnet18-a100-qat")})
    return view(compare(engine_results, b, name_a="a.json", name_b="b.json", resamples=200))


def test_compare_view_holds_its_declared_types(comparison_view):
    assert comparison_view.layers is not None and comparison_view.layers.rows
    assert comparison_view.serve and comparison_view.precision and comparison_view.runs
    _check_types(comparison_view)


def test_compare_page_fails_on_a_missing_view_field(comparison_view):
    render_template("compare.html.j2", {"v": comparison_view}, markdown=False)
    for f in dataclasses.fields(comparison_view):
        if f.name in COMPARE_TEXT_ONLY:
            continue
        with pytest.raises(jinja2.UndefinedError):
            render_template("compare.html.j2", {"v": _without(comparison_view, f.name)},
                            markdown=False)


# ----------------------------------------------------------------------------- page


def test_report_page_view_types_and_missing_fields(engine_results, monkeypatch):
    """The page context is a ReportPageView; each of its fields is read by the page."""
    import trtcheck.report as report

    pages: list[Any] = []
    real = views.ReportPageView

    def keep(**kw: Any) -> Any:
        pages.append(real(**kw))
        return pages[-1]

    monkeypatch.setattr(views, "ReportPageView", keep)
    report.build_report(report.with_verdict(engine_results))
    (page,) = pages
    assert page.verdict is not None and len(page.sections) == 7
    _check_types(page)
    for f in dataclasses.fields(page):
        ctx = {g.name: getattr(page, g.name) for g in dataclasses.fields(page)
               if g.name != f.name}
        for name, markdown in (("report.html.j2", False), ("report.md.j2", True)):
            with pytest.raises(jinja2.UndefinedError):
                render_template(name, ctx, markdown=markdown)


def test_a_fractional_window_is_shown_as_measured(full):
    """Window cells print the value (0.25 ms), not a rounding of it ("0")."""
    r = full.model_copy(deep=True)
    for c in r.serve.configs:
        c.window_us = 250.0 if c.window_us == 0 else c.window_us
    sec = render_partial("serve", "Serving with dynamic batching", sec_serve.serve_view(r.serve))
    assert "<td>0.25</td>" in sec.html and "| 0.25 |" in sec.markdown
