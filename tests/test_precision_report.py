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
        # ONNX Runtime's CPU provider has no FP16 kernels: no speed-up headline
        assert "x the FP32 speed" not in text
        assert "not measurable on this backend" in text
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
    opts = RunOptions(rule=QUICK, backend_options={"threads": 1})
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


def _latency_with(samples_ms, info):
    from trtcheck.results.bench import BatchResult, BenchRun, BenchSettings
    from trtcheck.results.precision import PrecisionLatency
    from trtcheck.stats import summarize

    st = summarize(samples_ms)
    run = BenchRun(label="x", model_path="m.onnx", backend=info,
                   settings=BenchSettings(warmup_s=0, warmup_min_iterations=0,
                                          min_duration_s=0, min_samples=1, max_duration_s=1,
                                          max_samples=10, batch_sizes=[1],
                                          input_source="random-uniform"),
                   batches=[BatchResult(batch_size=1, input_shapes={}, samples_ms=list(samples_ms),
                                        stats=st, throughput_queries_per_s=1.0,
                                        throughput_samples_per_s=1.0, measured_duration_s=1.0,
                                        stopped_by="min_reached")])
    return PrecisionLatency(median_ms=st.median_ms, p99_ms=st.p99_ms,
                            throughput_samples_per_s=1.0, batch_size=1, bench=run)


def test_speedup_is_shown_with_its_interval_only_where_the_backend_has_the_kernels():
    import numpy as np

    from trtcheck.measure.precision.precision import set_speedup
    from trtcheck.measure.precision.precision_judge import speedup_findings
    from trtcheck.report.sec_precision import speedup_text
    from trtcheck.results.bench import BackendInfo

    rng = np.random.default_rng(0)
    ref = list(10.0 + rng.normal(0, 0.2, 200))
    gpu = BackendInfo(name="onnxruntime", version="1", device="cuda:0",
                      providers=["CUDAExecutionProvider"])
    cpu = BackendInfo(name="onnxruntime", version="1", device="CPU",
                      providers=["CPUExecutionProvider"])
    fast = _latency_with(list(7.7 + rng.normal(0, 0.2, 200)), gpu)
    set_speedup(fast, _latency_with(ref, gpu), "fp16", gpu)
    lo, hi = fast.speedup_interval
    assert lo < fast.speedup_vs_reference < hi and 1.2 < lo and hi < 1.4
    assert speedup_text(fast).startswith("1.3") and "-" in speedup_text(fast)
    assert speedup_findings("fp16", "fp16", fast) == []
    # the same numbers on ONNX Runtime's CPU provider: FP32 kernels, nothing to claim
    upcast = _latency_with(list(7.7 + rng.normal(0, 0.2, 200)), cpu)
    set_speedup(upcast, _latency_with(ref, cpu), "fp16", cpu)
    assert upcast.speedup_vs_reference is None and upcast.speedup_interval is None
    assert "not measurable on this backend" in upcast.speedup_not_measurable
    assert speedup_text(upcast) == "not measurable on this backend"
    # requested, has the kernels, and slower: 0.92x is a finding
    slow = _latency_with(list(10.9 + rng.normal(0, 0.1, 200)), gpu)
    set_speedup(slow, _latency_with(ref, gpu), "fp16", gpu)
    (f,) = speedup_findings("fp16", "fp16", slow)
    assert f.code == "precision-no-speedup" and "0.92x" in f.message
