"""``trtcheck advise``: acceptance scenarios, decision paths, bad input, formats, report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import assert_one_line_error
from trtcheck.analyze.advice.advise import AdviseRequest, advise
from trtcheck.analyze.advice.curve import parse_curve_text
from trtcheck.export.settings import export_settings
from trtcheck.results import (
    BackendInfo,
    BatchResult,
    BenchRun,
    BenchSettings,
    Results,
    ToolInfo,
    load_results,
    save_results,
    utc_now_iso,
)
from trtcheck.stats import summarize
from trtcheck.cli import main

SEED_CMD = ["advise", "--latency-curve", "1:0.29", "--per-request-overhead-ms", "12",
            "--arrival-rate", "200"]
HEAVY_CMD = ["advise", "--latency-curve", "1:20,8:40,32:110", "--arrival-rate", "3000"]


def _results_with_bench(points: dict[int, float], spread: float = 0.02) -> Results:
    from trtcheck.fingerprint import collect_environment

    rng = np.random.default_rng(0)
    batches = []
    for b, t in points.items():
        s = (t * (1 + spread * rng.standard_normal(200))).clip(t * 0.5).tolist()
        st = summarize(s)
        batches.append(BatchResult(batch_size=b, input_shapes={"x": [b, 3]}, samples_ms=s,
                                   stats=st, throughput_queries_per_s=1000 / st.median_ms,
                                   throughput_samples_per_s=b * 1000 / st.median_ms,
                                   measured_duration_s=sum(s) / 1000, stopped_by="min_reached"))
    run = BenchRun(label="t", model_path="/m/resnet.onnx",
                   backend=BackendInfo(name="synthetic", version="1", device="none"),
                   settings=BenchSettings(warmup_s=0, warmup_min_iterations=0,
                                          min_duration_s=0, min_samples=1, max_duration_s=1,
                                          max_samples=1000, batch_sizes=list(points),
                                          input_source="random"),
                   batches=batches)
    return Results(tool=ToolInfo(version="0"), created_utc=utc_now_iso(),
                   environment=collect_environment(), bench=[run])


# -- acceptance scenarios --------------------------------------------------------------

def test_seed_scenario_says_batching_does_not_pay_and_why(cli):
    res = cli(*SEED_CMD)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "Recommendation [no-batching]" in out
    assert "batching does not pay" in out
    assert "lambda x S(1) = 0.058" in out and "lambda x tau0 = 0.058 <= 1" in out
    assert "41x the 0.29 ms inference" in out
    assert "caps that process at 83 req/s" in out


def test_seed_scenario_decision_path():
    adv = advise(AdviseRequest(parse_curve_text("1:0.29"), 200.0, per_request_overhead_ms=12))
    steps = [(n.step, n.answer) for n in adv.path]
    assert steps[:3] == [("thin-http", "yes"), ("replace-python-layer", "yes"),
                         ("execution-contexts", "no")]
    assert ("batching", "no") in steps and steps[-1] == ("scale-out", "no")
    thin = adv.path[0]
    assert thin.value == pytest.approx(12 / 0.29) and thin.threshold == 1.0
    wait = next(n for n in adv.path if "Does waiting" in n.question)
    assert wait.value == pytest.approx(0.058)
    r = adv.recommendation
    assert r.kind == "no-batching" and r.prediction.max_batch_size == 1
    assert r.prediction.p50_ms == pytest.approx(12.29, abs=0.05)
    assert r.runner_up is not None and r.runner_up.max_batch_size > 1


def test_heavy_model_scenario_recommends_window_batch_and_instances(cli):
    res = cli(*HEAVY_CMD, "--format", "json")
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    rec = adv["recommendation"]
    p = rec["prediction"]
    assert rec["kind"] == "add-instances"
    # a window 10 ms beats batching without waiting by ~7% on P99: within the noise
    # tie-break (10%), so the simpler configuration without a window is recommended
    assert p["max_batch_size"] == 32 and rec["stability"]["status"] == "stable"
    # one instance serves 32 / 110 ms = 291 req/s: 3000 req/s needs >= 11 such GPUs
    assert adv["gpus_implied"] == 11
    assert adv["formulas"]["capacity_per_instance_per_s"] == pytest.approx(290.9, abs=0.1)
    assert p["instances"] >= 11 and p["stable"] and p["utilisation"] <= 0.9
    assert p["throughput_queries_per_s"] == pytest.approx(3000, rel=0.08)
    assert adv["export"]["triton_config_pbtxt"].count("max_queue_delay_microseconds") == 1
    steps = {n["step"]: n["answer"] for n in adv["path"]}
    assert steps["scale-out"] == "yes" and steps["execution-contexts"] == "yes"
    text = cli(*HEAVY_CMD).stdout
    assert "this curve implies 11 instances" in text


def test_slo_changes_the_answer():
    curve = parse_curve_text("1:20,8:40,32:110")
    loose = advise(AdviseRequest(curve, 3000.0))
    tight = advise(AdviseRequest(curve, 3000.0, slo_p99_ms=80.0))
    pt = tight.recommendation.prediction
    assert pt.p99_ms <= 80.0
    assert pt.instances > loose.recommendation.prediction.instances


def test_fixed_instances_stay_fixed():
    adv = advise(AdviseRequest(parse_curve_text("1:20,8:40,32:110"), 3000.0, instances=[14]))
    assert adv.recommendation.prediction.instances == 14


def test_light_model_at_high_rate_batches_without_waiting():
    adv = advise(AdviseRequest(parse_curve_text("1:0.29,8:1.02,16:1.73"), 3000.0))
    r = adv.recommendation
    assert r.kind == "batch-without-waiting"
    assert r.prediction.window_us == 0 and r.prediction.max_batch_size > 1
    assert any(p.code == "pitfall-window-zero-gives-up" for p in adv.pitfalls)


# -- bad input -------------------------------------------------------------------------

@pytest.mark.parametrize("args,needle", [
    (["--latency-curve", "", "--arrival-rate", "10"], "empty"),
    (["--latency-curve", "1:2,8:1", "--arrival-rate", "10"], "not monotone"),
    (["--latency-curve", "1:0", "--arrival-rate", "10"], "positive"),
    (["--latency-curve", "1:1", "--arrival-rate", "0"], "> 0"),
    (["--latency-curve", "1:1", "--arrival-rate", "-5"], "> 0"),
    (["--latency-curve", "1:1"], "--arrival-rate is required"),
    (["--latency-curve", "1:0.29", "--arrival-rate", "10", "--slo-p99-ms", "0.1"],
     "below what one request alone takes"),
    (["--latency-curve", "1:20,8:40,32:110", "--arrival-rate", "3000", "--instances", "1"],
     "at least 11 instances"),
    (["--latency-curve", "1:20,8:40,32:110", "--arrival-rate", "3000", "--instances", "1..4"],
     "at least 11 instances"),
    (["--latency-curve", "1:1", "--arrival-rate", "10", "--instances", "0"], "--instances"),
    (["--latency-curve", "1:1", "--arrival-rate", "10", "--instances", "5..2"], "--instances"),
    (["--latency-curve", "1:0.29", "--arrival-rate", "200", "--per-request-overhead-ms", "12",
      "--serial-overhead"], "3 processes"),
    (["--latency-curve", "1:1", "--arrival-rate", "10", "--per-request-overhead-ms", "-1"],
     ">= 0"),
    (["--latency-curve", "1:1", "--arrival-rate", "10", "--arrival", "trace:/nonexistent"],
     "trace file not found"),
    (["--latency-curve", "1:1", "--arrival-rate", "10", "--arrival", "weird"],
     "unknown arrival process"),
    (["--arrival-rate", "10"], "exactly one source"),
    (["--latency-curve", "1:1", "--from", "x.json", "--arrival-rate", "10"], "exactly one source"),
    (["--from", "/nonexistent.json", "--arrival-rate", "10"], "not found"),
    (["--latency-curve", "1:20,8:40", "--arrival-rate", "3000", "--slo-p99-ms", "21",
      "--instances", "40..60"], "no searched configuration meets"),
])
def test_bad_input_one_line_exit_2(cli, args, needle):
    res = cli("advise", *args)
    line = assert_one_line_error(res, 2)
    assert needle in line, line
    assert "hint:" in res.stderr


def test_results_without_bench_is_bad_input(cli, tmp_path):
    r = _results_with_bench({1: 1.0})
    r.bench = []
    save_results(r, tmp_path / "r.json")
    line = assert_one_line_error(cli("advise", "--from", str(tmp_path / "r.json"),
                                     "--arrival-rate", "10"), 2)
    assert "no bench run" in line


# -- results file, formats, report ----------------------------------------------------

def test_from_results_json_round_trip_and_markdown(cli, tmp_path):
    r = _results_with_bench({1: 2.0, 4: 3.0, 16: 7.0})
    src = tmp_path / "in.json"
    save_results(r, src)
    out = tmp_path / "out.json"
    res = cli("advise", "--from", str(src), "--arrival-rate", "1500", "-o", str(out),
              "--format", "md")
    assert res.returncode == 0, res.stderr
    assert "**Decision path**" in res.stdout and "config.pbtxt" in res.stdout
    back = load_results(out)
    assert back.advice is not None and back.bench[0].label == "t"
    assert back.advice.curve.source == "bench run 't'"
    assert 'name: "resnet"' in back.advice.export.triton_config_pbtxt
    # never overwrite without asking
    res2 = cli("advise", "--from", str(src), "--arrival-rate", "1500", "-o", str(out))
    assert_one_line_error(res2, 2, "already exists")


def test_advice_report_section_renders_html_and_markdown():
    from trtcheck.report.charts import ChartSink
    from trtcheck.report.sec_advice import build

    r = _results_with_bench({1: 2.0, 4: 3.0, 16: 7.0})
    adv = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 1500.0))
    adv.export = export_settings(adv.recommendation.prediction, 'm<script>')
    r.advice = adv
    sec = build(r, ChartSink())
    assert sec is not None and sec.title == "Batching advice"
    assert "Decision path" in sec.html and "<script>" not in sec.html
    assert "| # | step |" in sec.markdown
    assert build(_results_with_bench({1: 1.0}), ChartSink()) is None


def test_exports_follow_each_servers_vocabulary():
    from trtcheck.results.advice import SimPrediction

    p = SimPrediction(window_us=2500, max_batch_size=16, instances=3, arrival_rate_per_s=1,
                      stable=True, utilisation=0.5)
    e = export_settings(p, "resnet")
    assert "max_queue_delay_microseconds: 2500" in e.triton_config_pbtxt
    assert "preferred_batch_size" not in e.triton_config_pbtxt  # none chosen: none written
    assert "{ count: 1, kind: KIND_GPU }" in e.triton_config_pbtxt  # no GPU ids unless asked
    assert "gpus:" not in e.triton_config_pbtxt and "3 GPUs visible" in e.triton_config_pbtxt
    assert "@serve.batch(max_batch_size=16, batch_wait_timeout_s=0.0025)" in e.ray_serve_python
    assert "num_replicas=3" in e.ray_serve_python
    assert '"batchSize": 16, "maxBatchDelay": 3' in e.torchserve_config
    assert "rounded up to 3 ms" in e.torchserve_config
    single = export_settings(SimPrediction(window_us=0, max_batch_size=1, instances=1,
                                           arrival_rate_per_s=1, stable=True, utilisation=0.1))
    assert "dynamic_batching" not in single.triton_config_pbtxt.replace("# no dynamic_batching", "")
    assert "@serve.batch(" not in single.ray_serve_python


def test_advise_imports_no_runtime_or_plotting(cli, tmp_path):
    r = _results_with_bench({1: 2.0, 4: 3.0, 16: 7.0})
    save_results(r, tmp_path / "r.json")
    res = cli("advise", "--from", str(tmp_path / "r.json"), "--arrival-rate", "800",
              env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert res.returncode == 0, res.stderr
    imported = {ln.split("|")[-1].strip() for ln in res.stderr.splitlines()
                if ln.startswith("import time:")}
    assert "trtcheck.analyze.advice.simulator" in imported
    for heavy in ("onnxruntime", "matplotlib", "scipy", "tensorrt", "torch", "onnx"):
        assert heavy not in imported, heavy


def test_trace_and_constant_arrivals(cli, tmp_path):
    trace = tmp_path / "arrivals.txt"
    rng = np.random.default_rng(1)
    trace.write_text("\n".join(f"{t:.6f}" for t in np.cumsum(rng.exponential(1 / 500, 3000))))
    res = cli("advise", "--latency-curve", "1:1,8:2", "--arrival", f"trace:{trace}",
              "--format", "json")
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    assert adv["inputs"]["arrival_rate_per_s"] == pytest.approx(500, rel=0.05)
    assert adv["simulated_requests"] == 3000
    const = advise(AdviseRequest(parse_curve_text("1:1,8:2"), 500.0, arrival_process="constant"))
    # 2 ms gaps, 1 ms executions: nothing ever queues
    assert const.recommendation.prediction.p99_ms == pytest.approx(1.0, abs=1e-6)


def test_serial_overhead_queues_in_front_of_the_batcher():
    curve = parse_curve_text("1:0.29")
    par = advise(AdviseRequest(curve, 60.0, per_request_overhead_ms=12))
    ser = advise(AdviseRequest(curve, 60.0, per_request_overhead_ms=12, serial_overhead=True))
    # parallel: a pure 12 ms delay; serial: a single 12 ms server at rho = 0.72 queues
    assert par.recommendation.prediction.p50_ms == pytest.approx(12.29, abs=0.01)
    assert ser.recommendation.prediction.p50_ms > 15.0
    assert ser.recommendation.prediction.p99_ms > par.recommendation.prediction.p99_ms * 3
    assert ser.inputs.ingress_per_request_us == 12000.0


def test_per_sample_time_rise_is_noted_in_the_advice():
    adv = advise(AdviseRequest(parse_curve_text("1:1,8:4,16:12"), 100.0))
    assert any("T(b)/b rises" in n for n in adv.curve.notes)


def test_advise_from_a_report_folder(tmp_path, capsys):
    """gate and compare take a report folder for its results.json; advise --from did not."""
    from trtcheck.testing import synthetic_results as g
    d = tmp_path / "report"
    d.mkdir()
    g.write(g.results({1: 2.0, 8: 4.0}, n=200, seed=1), d / "results.json")
    with pytest.raises(SystemExit) as e:
        main(["advise", "--from", str(d), "--arrival-rate", "100"])
    cap = capsys.readouterr()
    assert e.value.code in (0, None), cap.err
    assert "Recommendation" in cap.out


def test_advise_dispatch_reasons_add_up_to_batches(capsys):
    """Counters add up: the simulator counted dispatch reasons over the warm-up batches too,
    so sum(dispatch_reasons) exceeded `batches` (1,986 vs 1,763 in the demo report)."""
    import json
    with pytest.raises(SystemExit) as e:
        main(["advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "1500", "--format",
              "json"])
    assert e.value.code in (0, None)
    data = json.loads(capsys.readouterr().out)
    cands = data["candidates"]
    assert cands
    for c in cands:
        if c.get("batches"):
            assert sum(c["dispatch_reasons"].values()) == c["batches"], c


def test_advise_from_serve_faster_than_bench_does_not_crash(tmp_path, capsys):
    """`report --demo` on a loaded machine exited 2 with "capacity must be > 0": the serve
    run's executions were much faster than the bench's T(b) (measured under other load),
    the calibrated mean excess was below -T(1), and every batch time came out <= 0."""
    from trtcheck.testing import synthetic_results as g
    from trtcheck.results import load_results, save_results
    serve = tmp_path / "s.json"
    with pytest.raises(SystemExit):
        main(["serve", "--synthetic-curve", "1:0.1,8:0.2", "--window-ms", "2",
              "--max-batch", "8", "--load", "open:2000:400", "--repeats", "1",
              "--warmup-requests", "0", "-o", str(serve)])
    capsys.readouterr()
    res = load_results(g.write(g.results({1: 2.0, 8: 40.0}, n=200, seed=1), tmp_path / "b.json"))
    res.serve = load_results(serve).serve
    for cfg in res.serve.configs:  # a loaded host sends 2000 req/s late: not what is tested
        cfg.validity = [f for f in cfg.validity if f.code != "generator-limited"]
    save_results(res, tmp_path / "both.json")
    with pytest.raises(SystemExit) as e:
        main(["advise", "--from", str(tmp_path / "both.json"), "--arrival-rate", "100"])
    cap = capsys.readouterr()
    assert e.value.code in (0, None), cap.err
    assert "faster on average than the bench" in cap.out


def test_one_instance_is_singular(cli):
    """A count of one reads "1 instance, i.e. GPU or process", never "1 GPUs"."""
    res = cli("advise", "--latency-curve", "1:0.29", "--per-request-overhead-ms", "12",
              "--arrival-rate", "200")
    assert res.returncode == 0, res.stderr
    assert "this curve implies 1 instance, i.e. GPU or process, for 200 req/s" in res.stdout
    assert "instance(s)" not in res.stdout and "1 GPUs" not in res.stdout
    assert "1 processes" not in res.stdout
