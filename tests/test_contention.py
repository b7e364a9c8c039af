"""Interpreter-lock contention: arrivals stretch a running Python-bound execution
(measured with eager PyTorch ResNet-18 on an H200)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from trtcheck.analyze.advice.curve import curve_from_bench, make_curve
from trtcheck.analyze.advice.inputs import fit_contention, calibration_from_serve
from trtcheck.analyze.advice.simulator import ServiceModel, poisson_arrivals, simulate
from trtcheck.errors import InputError
from trtcheck.policy import BatchingPolicy
from trtcheck.results.bench import BenchRun
from trtcheck.results.migrate import migrate_section
from trtcheck.results.serve import ServeRun

#: raw serve runs measured by benchmarks/advise_validation.py --keep-raw (see its README)
RESULTS = Path(__file__).resolve().parent / "data" / "advise-validation-raw"


def test_fit_recovers_a_slope_and_keeps_time_order():
    rng = np.random.default_rng(0)
    arrivals = rng.poisson(3.0, 500).astype(float)
    excess = 1.0 + 0.4 * arrivals + rng.normal(0, 0.3, 500)
    c, resid = fit_contention(excess.tolist(), arrivals.tolist())
    assert c == pytest.approx(0.4, abs=0.03)
    assert len(resid) == 500
    assert np.allclose(np.asarray(resid), excess - c * arrivals)


def test_fit_returns_zero_without_a_significant_effect():
    rng = np.random.default_rng(1)
    arrivals = rng.poisson(3.0, 500).astype(float)
    noise = (1.0 + rng.normal(0, 0.3, 500)).tolist()
    assert fit_contention(noise, arrivals.tolist()) == (0.0, noise)
    neg = (1.0 - 0.4 * arrivals + rng.normal(0, 0.3, 500)).tolist()
    assert fit_contention(neg, arrivals.tolist())[0] == 0.0  # never negative
    few = [1.0, 2.0, 3.0]
    assert fit_contention(few, [0.0, 1.0, 2.0]) == (0.0, few)


def test_stretch_and_capacity():
    curve = make_curve([(1, 5.0), (8, 5.0)])
    sv = ServiceModel(curve, contention_per_arrival_ms=2.0)
    assert sv.contention_stretch(100.0) == pytest.approx(1.25)  # 1 / (1 - 100 * 2e-3)
    assert sv.contention_stretch(None) == 1.0
    assert sv.batch_time_ms(1, 100.0) == pytest.approx(6.25)
    cap, b = sv.capacity_per_instance_per_s(8, 100.0)
    assert b == 8 and cap == pytest.approx(8000.0 / 6.25)
    assert sv.capacity_per_instance_per_s(8, 500.0)[0] == 0.0  # the loop fills the time
    with pytest.raises(InputError):
        ServiceModel(curve, contention_per_arrival_ms=-1.0)


def test_simulated_executions_stretch_with_arrivals():
    curve = make_curve([(1, 5.0), (8, 5.0)])
    arr = poisson_arrivals(100.0, 3000, np.random.default_rng(2))
    pol = BatchingPolicy(1, 0.0)
    plain = simulate(pol, 1, ServiceModel(curve, spread="none"), arr, seed=2)
    slow = simulate(pol, 1, ServiceModel(curve, spread="none", contention_per_arrival_ms=2.0),
                    arr, seed=2, rate_per_s=100.0)
    assert plain.p50_ms == pytest.approx(5.0, abs=0.6)
    # service ~6.25 ms on average (M/G/1 at utilisation ~0.62): latency rises well beyond
    assert slow.mean_ms > plain.mean_ms + 2.0
    assert slow.utilisation == pytest.approx(100.0 * 6.25e-3, rel=1e-9)


def _saved_run(record: dict) -> ServeRun:
    """A serve run the benchmark saved before results schema 2.0 (windows in ms)."""
    return ServeRun.model_validate(migrate_section("serve", record, 1, 2))


def _calibration(name: str, backend: str) -> dict:
    raw = json.loads(gzip.decompress((RESULTS / f"advise_validation-{name}_raw.json.gz")
                                     .read_bytes()))[backend]
    curve = curve_from_bench(BenchRun.model_validate(raw["bench"]))
    return calibration_from_serve(_saved_run(raw["calibration"]), curve)


def test_measured_runs_eager_pytorch_has_contention_onnxruntime_has_none():
    gpu = _calibration("h200-torch-gpu", "torch-gpu")
    # instrumental-variables estimate (least squares said 0.396: biased upward)
    assert gpu["contention_per_arrival_ms"] == pytest.approx(0.284, abs=0.01)
    assert _calibration("dev-quiet-ort", "onnxruntime")["contention_per_arrival_ms"] == 0.0
    assert _calibration("dev-quiet-synthetic", "synthetic")["contention_per_arrival_ms"] == 0.0


def _gpu_request(rate: float):
    from trtcheck.analyze.advice.inputs import build_request, overheads_from_serve

    raw = json.loads(gzip.decompress((RESULTS / "advise_validation-h200-torch-gpu_raw.json.gz")
                                     .read_bytes()))["torch-gpu"]
    curve = curve_from_bench(BenchRun.model_validate(raw["bench"]))
    measured = overheads_from_serve(_saved_run(raw["calibration"]), curve)
    return build_request(curve, measured, rate_per_s=rate)


def test_advice_explains_contention_and_its_sensitivity():
    from trtcheck.analyze.advice.advise import advise

    low = advise(_gpu_request(300.0))
    assert any("interpreter lock" in n and "0.284 ms" in n for n in low.curve.notes)
    assert not any("holds the interpreter lock for" in n for n in low.curve.notes)
    high = advise(_gpu_request(1500.0))
    sens = [n for n in high.curve.notes if "holds the interpreter lock for" in n]
    assert len(sens) == 1 and "43%" in sens[0] and "1.7x" in sens[0]


def test_advice_refuses_a_rate_the_loop_alone_saturates():
    from trtcheck.analyze.advice.advise import advise

    with pytest.raises(InputError) as e:
        advise(_gpu_request(4000.0))
    assert "no number of instances in one process keeps up" in str(e.value)
    assert "at least 2 processes" in e.value.hint


def test_slow_executions_alone_do_not_fake_contention():
    """Executions slow for another reason (a loaded CPU) see more arrivals because they
    last longer: least squares finds a slope, the fixed-window instrument does not."""
    rng = np.random.default_rng(5)
    rate_per_ms, t_bench = 0.047, 16.0  # ONNX Runtime demo at 47 req/s
    excess = rng.gamma(1.0, 20.0, 400)  # heavy, arrival-independent slowness
    dur = t_bench + excess
    window = rng.poisson(rate_per_ms * t_bench, 400).astype(float)  # first T(b) ms
    arrivals = window + rng.poisson(rate_per_ms * (dur - t_bench))  # + the rest
    ols_c, _ = fit_contention(excess.tolist(), arrivals.tolist())
    iv_c, _ = fit_contention(excess.tolist(), arrivals.tolist(), window.tolist())
    assert ols_c > 3.0  # the bias: ~1/rate
    assert iv_c == 0.0
