"""Re-matching a live calibration's per-request delay under another service model
(analyze/advice/live_calibration.py ``rematch_request_delay``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from trtcheck.analyze.advice.curve import make_curve
from trtcheck.analyze.advice.live_calibration import (
    LiveCalibration,
    LiveObservation,
    calibrate,
    rematch_request_delay,
)
from trtcheck.analyze.advice.simulator import ServiceModel, make_arrivals, simulate
from trtcheck.policy import BatchingPolicy
from trtcheck.stats import percentile

TRUE_CURVE = [(b, 2.0 + 0.25 * b) for b in range(1, 33)]


def _observation(seed: int = 7) -> LiveObservation:
    """A run of a server with a long-tailed per-request delay (1 ms, 5% of them 6 ms)."""
    rng = np.random.default_rng(seed)
    delay = tuple(np.where(rng.random(400) < 0.05, 6.0, 1.0).tolist())
    truth = ServiceModel(make_curve(TRUE_CURVE), spread="none", request_delay_ms=delay,
                         batcher="triton")
    arr = make_arrivals("poisson", 300.0, 6000, seed)
    lat: list[float] = []
    p = simulate(BatchingPolicy(32, 2000), 1, truth, arr, seed=seed, warmup_fraction=0.1,
                 rate_per_s=300.0, latencies_out=lat)
    return LiveObservation(window_us=2000, max_batch_size=32, preferred_batch_sizes=(),
                           instances=1, rate_per_s=300.0,
                           batch_stats={b: (100, 100 * t) for b, t in TRUE_CURVE[:8]},
                           queue_mean_ms=1e3 * p.mean_queue_len / p.throughput_queries_per_s,
                           compute_mean_ms=3.0, server_request_mean_ms=4.0,
                           mean_batch=float(p.mean_batch), client_latencies_ms=np.array(lat))


def _slower(cal: LiveCalibration) -> ServiceModel:
    """Another predictor's model: T(b) 1.3x the calibration's own."""
    pts = [(b, 1.3 * t) for b, t in cal.curve.points()]
    return replace(cal.service(), curve=make_curve(pts))


def _simulated_quantiles(cal: LiveCalibration, service: ServiceModel) -> tuple[float, float]:
    obs = cal.observation
    lat: list[float] = []
    simulate(obs.policy(), obs.instances, service, make_arrivals("poisson", obs.rate_per_s,
                                                                 6000, 3),
             seed=3, warmup_fraction=0.1, rate_per_s=obs.rate_per_s, latencies_out=lat)
    return percentile(lat, 0.5), percentile(lat, 0.99)


def test_the_other_model_reproduces_the_calibration_run_after_the_rematch():
    cal = calibrate(_observation())
    measured = (percentile(cal.observation.client_latencies_ms, 0.5),
                percentile(cal.observation.client_latencies_ms, 0.99))
    before = _simulated_quantiles(cal, _slower(cal))
    assert before[0] > 1.1 * measured[0]  # the slower T(b) alone overshoots the body
    out = rematch_request_delay(cal, _slower)
    after = _simulated_quantiles(out, _slower(out))
    assert after[0] == pytest.approx(measured[0], rel=0.05)
    assert after[1] == pytest.approx(measured[1], rel=0.08)
    assert out.check["p50_ms"] == pytest.approx(out.check["measured_p50_ms"], rel=0.05)
    # the delay shrank where the slower T(b) explains more, and is never negative
    assert np.median(out.request_delay_ms) < np.median(cal.request_delay_ms)
    assert min(out.request_delay_ms) >= 0.0
    # the input calibration is unchanged
    assert cal.check["p50_ms"] == pytest.approx(cal.check["measured_p50_ms"], rel=0.05)


def test_rematch_under_the_calibrations_own_model_keeps_it():
    cal = calibrate(_observation())
    same = rematch_request_delay(cal, LiveCalibration.service)
    assert np.allclose(sorted(same.request_delay_ms), sorted(cal.request_delay_ms),
                       atol=0.15)
    assert same.check["p99_ms"] == pytest.approx(cal.check["p99_ms"], rel=0.05)
