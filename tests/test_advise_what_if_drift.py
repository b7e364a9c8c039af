"""``advise --from live.json``: the what-if intervals carry the calibration's run-to-run
drift to each configuration by its elasticity to T(b), as tune does
(:func:`trtcheck.analyze.tune_plan.drift_factors`; tests/gold/inputs/live.json: one
instance, calibrated at about 200 req/s)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from trtcheck.analyze.advice import Candidate, build_request, inputs_from_live, what_if
from trtcheck.results import load_results

LIVE = Path(__file__).resolve().parent / "gold" / "inputs" / "live.json"


def _request(rate_per_s: float):
    curve, measured = inputs_from_live(load_results(LIVE), source=str(LIVE))
    return build_request(curve, measured, rate_per_s=rate_per_s, instances=[1])


def _log_width(p, key: str) -> float:
    lo, hi = getattr(p, key)
    return hi / lo


def test_the_calibration_configuration_is_recorded_for_the_intervals():
    req = _request(300.0)
    c, rate = req.calibration_config
    assert c.instances == 1 and c.max_batch_size >= 1 and rate > 0


def test_a_busier_what_if_than_the_calibration_gets_a_wider_interval_same_point():
    """Near its capacity (a small max batch at a rate above the calibration's) a
    configuration follows T(b) more steeply than the calibration run did: its intervals
    widen; the point predictions stay."""
    req = _request(300.0)
    busy = [Candidate(0.0, 2, 1)]
    scaled = what_if(req, busy)[0]
    flat = what_if(replace(req, calibration_config=None), busy)[0]
    assert scaled.stable and flat.stable
    assert scaled.p50_ms == flat.p50_ms and scaled.p99_ms == flat.p99_ms
    assert _log_width(scaled, "p50_interval_ms") > _log_width(flat, "p50_interval_ms")
    assert _log_width(scaled, "p99_interval_ms") >= _log_width(flat, "p99_interval_ms")


def test_no_what_if_interval_is_narrower_than_the_measured_drift():
    req = _request(50.0)
    cands = [Candidate(w, b, 1) for w in (0.0, 2000.0) for b in (1, 4, 16)]
    for scaled, flat in zip(what_if(req, cands),
                            what_if(replace(req, calibration_config=None), cands)):
        if not flat.stable:
            continue
        for key in ("p50_interval_ms", "p99_interval_ms"):
            assert _log_width(scaled, key) >= _log_width(flat, key) * (1 - 1e-9)


def test_no_what_if_interval_starts_below_the_calibrations_fastest_request():
    """A second repeat three times slower than the first makes a drift wide enough to
    put the P50 interval's lower end far below what one request took alone: it is
    raised to the fastest request the calibration measured, as tune does."""
    req = _request(100.0)
    fast = req.calibration_latencies_ms[0]
    half = len(fast) // 2  # each repeat drifts threefold between its halves as well
    drifting = fast[:half] + tuple(3.0 * x for x in fast[half:])
    slow = tuple(3.0 * x for x in drifting)
    wide = replace(req, calibration_latencies_ms=(drifting, slow))
    cands = [Candidate(0.0, 1, 1), Candidate(2000.0, 8, 1)]
    for p, free in zip(what_if(wide, cands), what_if(replace(
            wide, calibration_latencies_ms=(fast, fast)), cands)):
        assert p.p50_interval_ms[0] == round(min(fast), 4) == p.p99_interval_ms[0]
        assert p.p50_interval_ms[1] > free.p50_interval_ms[1]  # the drift is wide


def test_the_runner_up_carries_its_interval_as_the_recommendation_does():
    """As tune's runner-up has one: ``advise --from live.json`` gives the runner-up a
    P50 and P99 interval that holds its point."""
    from trtcheck.analyze.advice.advise import advise

    adv = advise(replace(_request(300.0), replicas=0))
    ru = adv.recommendation.runner_up
    assert ru is not None and ru.stable
    for key in ("p50", "p99"):
        lo, hi = getattr(ru, f"{key}_interval_ms")
        assert lo <= getattr(ru, f"{key}_ms") <= hi
