"""Transients in a calibration run: stretches where most requests waited behind
something, then the run came back (analyze/advice/live_calibration.py
``transient_mask`` and its use by ``observation_from_serve`` and ``calibrate``)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import numpy as np
from trtcheck.analyze.advice.live_calibration import (
    TRANSIENT_MIN_STEADY,
    calibrate,
    observation_from_serve,
    transient_mask,
)
from trtcheck.results import load_results
from trtcheck.stats import percentile

RAW = Path(__file__).parent / "data" / "tune-gpu-raw" / "h200-host-resnet50.json.xz"


def _steady(n: int, seed: int = 0) -> np.ndarray:
    """Latencies (ms) of a steady run: about 6 ms with a long tail."""
    rng = np.random.default_rng(seed)
    return 5.0 + rng.gamma(2.0, 0.6, n) + np.where(rng.random(n) < 0.02, 20.0, 0.0)


def test_a_steady_run_has_no_transient():
    assert not transient_mask(_steady(1600)).any()


def test_a_stretch_that_waited_and_came_back_is_a_transient():
    lat = _steady(1600)
    lat[200:400] += np.linspace(80.0, 5.0, 200)  # a backlog worked off
    mask = transient_mask(lat)
    assert mask[200:300].all()  # the segments whose median waited
    assert not mask[:200].any() and not mask[400:].any()
    assert 0.05 <= mask.mean() <= 0.125


def test_a_run_that_ends_high_keeps_every_request():
    lat = _steady(1600)
    lat[1000:] += np.linspace(0.0, 200.0, 600)  # a queue that grows to the end: overload
    assert not transient_mask(lat).any()


def test_too_few_requests_or_too_few_left_keep_every_request():
    short = _steady(90)  # fewer than four segments
    short[30:60] += 100.0
    assert not transient_mask(short).any()
    lat = _steady(TRANSIENT_MIN_STEADY + 40)
    lat[: len(lat) // 2] += 100.0  # the steady part alone is below the minimum
    lat[-5:] = 6.0
    assert not transient_mask(lat).any()


def _calibration_run(design: str, instances: int = 1):
    rec = json.loads(lzma.decompress(RAW.read_bytes()))
    for c in rec["calibrations"]:
        if c["design"] == design and c["instances"] == instances and "live" in c:
            return c["live"]
    raise AssertionError(f"no {design} x{instances} run in {RAW.name}")


def _serve(tmp_path: Path, live: dict):
    p = tmp_path / "live.json"
    p.write_text(json.dumps(live))
    return load_results(p).serve


def test_measured_gpu_run_with_a_transient_calibrates_from_its_steady_part(tmp_path):
    # eager ResNet-50 fp16 in Triton's python backend on an H200 at 404 req/s: new batch
    # sizes ran cold, the backlog took most of the run to work off (P50 79 ms against
    # 12 ms when the same configuration was measured warm)
    serve = _serve(tmp_path, _calibration_run("open-high"))
    obs = observation_from_serve(serve)
    assert 0.3 < obs.transient_share < 0.8
    assert obs.transient_excess_ms > 10.0
    assert obs.steady_queue_mean_ms < 0.5 * obs.queue_mean_ms
    steady_p50 = percentile(obs.client_latencies_ms, 0.5)
    assert steady_p50 < 20.0
    cal = calibrate(obs)
    # the overhead is not pushed to its bound (one T(1) per execution) by the backlog
    assert cal.per_batch_overhead_ms < 0.5 * cal.curve.t1_ms
    # its own T(b) still holds the cold sizes' compute, so its P50 runs above the steady
    # one, but nowhere near the whole run's
    whole_p50 = float(np.median(serve.configs[0].repeats[0].latencies_ms))
    assert whole_p50 > 60.0
    assert steady_p50 <= cal.check["p50_ms"] < 1.5 * steady_p50
    assert any("transient" in n for n in cal.notes)


def test_measured_gpu_run_without_a_transient_is_unchanged(tmp_path):
    obs = observation_from_serve(_serve(tmp_path, _calibration_run("open-repeat")))
    assert obs.transient_share == 0.0 and obs.transient_excess_ms == 0.0
    assert obs.steady_queue_mean_ms == obs.queue_mean_ms
    assert not any("transient" in n for n in calibrate(obs).notes)
