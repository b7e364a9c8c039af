"""Calibrating the simulator from a live Triton run (analyze/advice/live_calibration.py), and
``advise --from live.json`` against a real tritonserver."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import assert_one_line_error, run_cli
from trtcheck.analyze.advice.live_calibration import (
    LiveObservation,
    calibrate,
    curve_from_batch_stats,
    predict,
)
from trtcheck.analyze.advice.curve import make_curve
from trtcheck.analyze.advice.simulator import Candidate, ServiceModel, make_arrivals, simulate
from trtcheck.errors import InputError
from trtcheck.policy import BatchingPolicy

TRUE_CURVE = [(b, 2.0 + 0.25 * b) for b in range(1, 33)]


def _truth(overhead_ms: float, delay_ms: float) -> ServiceModel:
    """A server that batches as Triton's batcher thread does (trtcheck.policy)."""
    return ServiceModel(make_curve(TRUE_CURVE), per_batch_overhead_ms=overhead_ms,
                        spread="none", request_delay_ms=(delay_ms,), batcher="triton")


def _observe(service: ServiceModel, rate: float, window_us: float, mbs: int,
             seed: int = 7) -> LiveObservation:
    """What a live run would record if the server behaved exactly as ``service``."""
    arr = make_arrivals("poisson", rate, 6000, seed)
    lat: list[float] = []
    p = simulate(BatchingPolicy(mbs, window_us), 1, service, arr, seed=seed,
                 warmup_fraction=0.1, rate_per_s=rate, latencies_out=lat)
    stats = {b: (100, 100 * t) for b, t in TRUE_CURVE[:8]}  # compute only, no overhead
    return LiveObservation(window_us=window_us, max_batch_size=mbs, preferred_batch_sizes=(),
                           instances=1, rate_per_s=rate, batch_stats=stats,
                           queue_mean_ms=1e3 * p.mean_queue_len / p.throughput_queries_per_s,
                           compute_mean_ms=3.0, server_request_mean_ms=4.0,
                           mean_batch=float(p.mean_batch), client_latencies_ms=np.array(lat))


def test_curve_from_batch_stats_drops_rare_sizes_and_dips():
    c = curve_from_batch_stats({1: (100, 300.0), 2: (50, 140.0), 3: (2, 100.0),
                                4: (40, 160.0)})
    pooled = (100 * 3.0 + 50 * 2.8) / 150  # the dip T(2) < T(1) pooled, weighted by runs
    assert c.points() == [(1, pytest.approx(pooled)), (2, pytest.approx(pooled)), (4, 4.0)]
    assert "batch size 3 ran fewer than 5 times in the calibration run and gives no point" \
        in c.notes  # one size: singular
    several = curve_from_batch_stats({1: (100, 300.0), 2: (2, 7.0), 3: (1, 4.0)})
    assert "batch sizes 2, 3 ran fewer than 5 times in the calibration run and give no " \
        "point" in several.notes
    assert any("isotonic" in n for n in c.notes)
    with pytest.raises(InputError, match="no execution"):
        curve_from_batch_stats({1: (0, 0.0)})


def test_calibration_recovers_a_known_server():
    truth = _truth(overhead_ms=0.6, delay_ms=1.5)
    obs = _observe(truth, rate=500.0, window_us=2000, mbs=32)
    cal = calibrate(obs)
    # the fitted per-execution overhead reproduces the server's queue time and batches
    assert cal.check["queue_mean_ms"] == pytest.approx(obs.queue_mean_ms, rel=0.05)
    assert cal.check["mean_batch"] == pytest.approx(obs.mean_batch, rel=0.05)
    assert cal.per_batch_overhead_ms == pytest.approx(0.6, abs=0.25)
    assert float(np.median(cal.request_delay_ms)) == pytest.approx(1.5, abs=0.4)
    assert cal.check["p50_ms"] == pytest.approx(cal.check["measured_p50_ms"], rel=0.05)
    # other configurations are predicted as the true server behaves
    cfgs = [Candidate(500.0, 32, 1), Candidate(5000.0, 16, 1), Candidate(1000.0, 32, 2),
            Candidate(2000.0, 32, 1, (4, 8))]
    for rate in (300.0, 900.0):
        got = predict(cal, cfgs, rate, seed=3)
        want = predict(type(cal)(curve=make_curve(TRUE_CURVE), request_delay_ms=(1.5,),
                                 per_batch_overhead_ms=0.6, observation=obs), cfgs, rate,
                       seed=3)
        for g, w in zip(got, want):
            assert g.mean_batch == pytest.approx(w.mean_batch, rel=0.10)
            assert g.p50_ms == pytest.approx(w.p50_ms, rel=0.10)
            assert g.p99_ms == pytest.approx(w.p99_ms, rel=0.20)


def test_a_server_queueing_less_than_the_model_is_noted():
    obs = _observe(_truth(0.0, 1.0), rate=500.0, window_us=2000, mbs=32)
    obs = LiveObservation(**{**obs.__dict__, "queue_mean_ms": obs.queue_mean_ms * 0.5})
    cal = calibrate(obs)
    assert cal.per_batch_overhead_ms == 0.0
    assert any("below what the simulated batcher gives" in n for n in cal.notes)


def test_a_server_queueing_beyond_the_model_is_noted():
    obs = _observe(_truth(0.0, 1.0), rate=500.0, window_us=2000, mbs=32)
    obs = LiveObservation(**{**obs.__dict__, "queue_mean_ms": obs.queue_mean_ms * 50})
    cal = calibrate(obs)
    assert cal.per_batch_overhead_ms == pytest.approx(cal.curve.t1_ms)
    assert any("more than the model explains" in n for n in cal.notes)


def test_too_few_requests_is_one_error():
    obs = _observe(_truth(0.0, 1.0), rate=500.0, window_us=2000, mbs=32)
    obs = LiveObservation(**{**obs.__dict__, "client_latencies_ms": np.array([1.0, 2.0])})
    with pytest.raises(InputError, match="fewer than 10"):
        calibrate(obs)


@pytest.mark.triton
@pytest.mark.slow
def test_advise_from_a_live_run_predicts_and_exports_a_repository_that_loads(triton,
                                                                             tmp_path):
    live = tmp_path / "live.json"
    res = run_cli("serve", "--url", triton.http_url, "--model", "tb_linear", "--load",
                  "open:200", "--duration-s", "2", "-o", str(live), timeout=180)
    assert res.returncode == 0, res.stderr
    model_py = triton.repo / "tb_linear" / "1" / "model.py"
    res = run_cli("advise", "--from", str(live), "--arrival-rate", "250", "--window-ms",
                  "1,4", "--max-batch", "8,16", "--instances", "1", "--format", "json",
                  "--export-dir", str(triton.repo), "--model-name", "tb_advised",
                  "--model-file", str(model_py), timeout=300)
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    wi = adv["what_if"]
    assert sorted((w["window_us"], w["max_batch_size"]) for w in wi) == [
        (1000.0, 8), (1000.0, 16), (4000.0, 8), (4000.0, 16)]
    for w in wi:
        assert w["stable"] and w["instances"] == 1 and w["arrival_rate_per_s"] == 250
        assert w["p50_ms"] <= w["p95_ms"] <= w["p99_ms"]
        assert 1.0 <= w["mean_batch"] <= w["max_batch_size"]
    # the longer window forms larger batches at the same load
    by = {(w["window_us"], w["max_batch_size"]): w for w in wi}
    assert by[(4000.0, 16)]["mean_batch"] > by[(1000.0, 16)]["mean_batch"]
    assert "calibrated from the live Triton run" in " ".join(adv["curve"]["notes"])
    # the export keeps the server's backend and tensors, and loads in the same server
    cfg = (triton.repo / "tb_advised" / "config.pbtxt").read_text()
    assert 'backend: "python"' in cfg and "KIND_CPU" in cfg and "gpus" not in cfg
    assert (triton.repo / "tb_advised" / "1" / "model.py").read_bytes() == model_py.read_bytes()
    triton.load("tb_advised")
    try:
        assert triton._get("/v2/models/tb_advised/ready")[0] == 200
    finally:
        triton.unload("tb_advised")


def test_advise_from_an_embedded_run_is_not_calibrated_as_live(tmp_path):
    from trtcheck.analyze.advice.live_calibration import observation_from_serve

    class Run:
        live = None

    with pytest.raises(InputError, match="not of a live server"):
        observation_from_serve(Run())


def test_model_file_without_export_dir_is_one_line(tmp_path):
    res = run_cli("advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "100",
                  "--model-file", str(tmp_path / "m.py"))
    assert_one_line_error(res, 2, "--export-dir")


@pytest.mark.triton
@pytest.mark.slow
def test_a_burst_is_no_calibration_run(triton, tmp_path):
    live = tmp_path / "live.json"
    res = run_cli("serve", "--url", triton.http_url, "--model", "tb_linear", "--load",
                  "burst:16", "-o", str(live), timeout=180)
    assert res.returncode == 0, res.stderr
    res = run_cli("advise", "--from", str(live), "--arrival-rate", "100")
    assert_one_line_error(res, 2, "open-loop", "--load open:RATE")
