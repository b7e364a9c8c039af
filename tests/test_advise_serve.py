"""Advice from a results file that also holds a serving measurement: calibrated
overheads, and predicted vs measured in the report section."""

from __future__ import annotations

import pytest

from tests.test_advise_cli import _results_with_bench
from trtcheck.analyze.advise import AdviseRequest, advise
from trtcheck.analyze.curve import curve_from_bench
from trtcheck.analyze.inputs import calibration_from_serve, inputs_from_results
from trtcheck.backends.synthetic import SyntheticBackend
from trtcheck.measure.serve import measure_serving
from trtcheck.results import load_results, save_results


@pytest.fixture(scope="module")
def served():
    """Bench curve + a short real serving run of the synthetic backend (async mode)."""
    res = _results_with_bench({1: 2.0, 8: 4.0, 32: 10.0}, spread=0.01)
    be = SyntheticBackend("1:2,8:4,32:10", mode="async")
    res.serve = measure_serving(be, windows_ms=[0.0, 2.0], max_batch_sizes=[8],
                                loads=["open:300:poisson:150"], repeats=1,
                                max_duration_s=5.0, warmup_requests=4, seed=3)
    return res


def test_calibration_reads_the_waterfall(served):
    curve = curve_from_bench(served.bench[0])
    cal = calibration_from_serve(served.serve, curve)
    n_batches = sum(c.repeats[0].counters.execution_count for c in served.serve.configs)
    # one excess sample per execution (requests of a batch are counted once)
    assert 0 < len(cal["batch_excess_ms"]) <= n_batches
    assert len(cal["request_delay_ms"]) == sum(len(c.repeats[0].latencies_ms)
                                               for c in served.serve.configs)
    # the synthetic backend sleeps T(b): the median excess is small against T(1) = 2 ms
    assert -1.0 < cal["per_batch_overhead_ms"] < 2.0
    assert cal["per_request_overhead_ms"] >= 0.0
    assert cal["send_lag_ms"] == ()  # only for replaying a measurement
    assert "2 open-loop" in cal["source"]


def test_advise_from_results_uses_measured_overheads(served, cli, tmp_path):
    curve, measured = inputs_from_results(served)
    assert measured["batch_excess_ms"] and measured["request_delay_ms"]
    adv = advise(AdviseRequest(curve, 300.0, batch_excess_ms=measured["batch_excess_ms"],
                               request_delay_ms=measured["request_delay_ms"],
                               overheads_source=measured["source"]))
    assert adv.inputs.overheads_source.startswith("calibrated on a serving measurement")
    f = tmp_path / "r.json"
    save_results(served, f)
    out = tmp_path / "advised.json"
    res = cli("advise", "--from", str(f), "--arrival-rate", "300", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert "calibrated on a serving measurement" in res.stdout
    back = load_results(out)
    assert back.serve is not None and back.advice is not None


def test_report_section_compares_predicted_and_measured(served):
    from trtcheck.report.charts import ChartSink
    from trtcheck.report.sec_advice import build

    curve, measured = inputs_from_results(served)
    served.advice = advise(AdviseRequest(curve, 300.0,
                                         batch_excess_ms=measured["batch_excess_ms"],
                                         request_delay_ms=measured["request_delay_ms"]))
    from trtcheck.analyze.derived import add_serve_predictions

    assert add_serve_predictions(served)  # computed once, stored in the advice
    sink = ChartSink()
    sec = build(served, sink)
    assert sec is not None and "Predicted vs measured" in sec.html
    assert [c.name for c in sink.charts] == ["advice-predicted-vs-measured"]
    assert sec.markdown.count("open:300:poisson:150") == 2
    # open-loop QPS is set by the schedule: the prediction must agree closely
    from trtcheck.analyze.serve_compare import predict_serve_configs

    assert predict_serve_configs(served, served.advice) == served.advice.serve_predictions
    for row in served.advice.serve_predictions:
        assert row.predicted_throughput_queries_per_s == pytest.approx(
            row.measured_throughput_queries_per_s, rel=0.1)


def test_advise_measures_a_model_on_the_spot(cli, demo_model):
    """``advise MODEL``: a short bench of the real demo ResNet-18, then the advice."""
    import json

    res = cli("advise", str(demo_model), "--batch", "1,2", "--arrival-rate", "5",
              "--format", "json")
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    assert adv["curve"]["source"].startswith("bench run")
    assert sorted(int(b) for b in adv["curve"]["points_ms"]) == [1, 2]
    t1, t2 = (adv["curve"]["points_ms"][k] for k in ("1", "2"))
    assert 0 < t1 <= t2 * 1.03
    assert 'name: "resnet18-demo-v1"' in adv["export"]["triton_config_pbtxt"]
    assert "measuring T(b)" in res.stderr
