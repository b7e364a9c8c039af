"""The precision report section, rendered from the results model alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trtcheck.load.precision_models import build_overflow_model, build_safe_model
from trtcheck.measure.bench.bench import StopRule
from trtcheck.measure.precision.precision import compare_onnx_precisions, precision_section_for_report
from trtcheck.measure.bench.runner import RunOptions, new_results
from trtcheck.report.charts import ChartSink
from trtcheck.results import results_from_json, results_to_json

QUICK = StopRule(warmup_s=0.0, warmup_min_iterations=1, min_duration_s=0.0, min_samples=5,
                 max_duration_s=5.0)


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import onnx

    d = tmp_path_factory.mktemp("precision-report")
    out = {}
    for name, b in (("overflow", build_overflow_model), ("safe", build_safe_model)):
        out[name] = d / f"{name}.onnx"
        onnx.save_model(b(), str(out[name]))
    return out


def _results(p: Any) -> Any:
    r = new_results(["trtcheck", "precision"])
    r.precision = p
    return r


def test_section_shows_speed_and_cost_side_by_side(paths: dict[str, Path]) -> None:
    from trtcheck.report import sec_precision

    p = compare_onnx_precisions(paths["overflow"], ["fp16"], sample_count=2, bench_rule=QUICK)
    charts = ChartSink()
    sec = sec_precision.build(_results(p), charts)
    assert sec is not None and sec.id == "precision"
    for text in (sec.html, sec.markdown):
        assert "fp32 (reference)" in text
        assert "speed-up vs FP32" in text
        assert "x the FP32 speed" in text
        assert "fp16-range-overflow" in text
        assert "square" in text and "Where the error starts" in text
        assert "why these bounds" in text
    assert [c.name for c in charts.charts] == ["precision"]
    assert charts.charts[0].png_bytes.startswith(b"\x89PNG")
    assert "FAIL" in sec.markdown


def test_section_absent_without_precision_results() -> None:
    from trtcheck.report import sec_precision

    assert sec_precision.build(new_results([]), ChartSink()) is None


def test_untrusted_names_are_escaped(paths: dict[str, Path], tmp_path: Path) -> None:
    import onnx

    from trtcheck.report import sec_precision

    m = build_safe_model()
    m.graph.output[0].name = "<b>y|1</b>"
    m.graph.node[-1].output[0] = "<b>y|1</b>"
    path = tmp_path / "evil.onnx"
    onnx.save_model(m, str(path))
    p = compare_onnx_precisions(path, ["fp16"], sample_count=1)
    sec = sec_precision.build(_results(p), ChartSink())
    assert sec is not None
    assert "<b>y" not in sec.html and "&lt;b&gt;y" in sec.html
    assert "<b>y" not in sec.markdown and "y\\|1" in sec.markdown


def test_full_report_and_json_round_trip(paths: dict[str, Path], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from trtcheck.report import render_report, sections

    # render only the sections this branch has (others are merged by the lead)
    have = [m for m in sections.SECTION_MODULES
            if (Path(sections.__file__).parent / f"{m}.py").is_file()]
    assert "sec_precision" in have
    monkeypatch.setattr(sections, "SECTION_MODULES", have)
    opts = RunOptions(rule=QUICK, threads=1)
    p = precision_section_for_report(str(paths["safe"]), opts, ("fp16",), sample_count=2)
    assert p.passed and p.variants["fp16"].latency is not None
    res = _results(p)
    written = render_report(res, tmp_path / "out")
    names = {w.name for w in written}
    assert {"report.html", "report.md", "results.json", "precision.png"} <= names
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Precision: accuracy vs speed" in html
    back = results_from_json((tmp_path / "out" / "results.json").read_text())
    assert back.verdict is not None  # the report stores its verdict beside the results
    back.verdict = None
    assert back == res
    assert results_to_json(back) == results_to_json(res)
