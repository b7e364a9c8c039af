"""tune's drift term follows each candidate's elasticity to T(b)
(:func:`trtcheck.analyze.tune_plan.drift_scale`)."""

from __future__ import annotations

import math

import pytest

from tests.factories import one_instance_tune_calibration

from trtcheck.analyze import tune_plan as tp
from trtcheck.analyze.advice.simulator import Candidate


def _search(rate_per_s: float, drift_at=None) -> tp.Search:
    cal, curves = one_instance_tune_calibration()
    return tp.Search(cal, curves, 0.1, 0.2, rate_per_s, 2000, 8, 1, drift_dof=5,
                     drift_at=drift_at)


def test_elasticity_is_about_one_without_a_queue_and_larger_with_one():
    """At 20 req/s a request is mostly its own 2 ms execution (elasticity near 1, below
    it by the fixed 0.5 ms delay); at 450 req/s of batch 1 (90% busy) a slower T(b)
    also lengthens the waits."""
    s = _search(20.0)
    e50, _ = tp.elasticity(s, Candidate(0.0, 1, 1), 20.0)
    assert 0.6 < e50 < 1.0
    busy50, busy99 = tp.elasticity(s, Candidate(0.0, 1, 1), 450.0)
    assert busy50 > 1.5 and busy99 > 1.5


def test_a_candidate_past_its_capacity_with_a_slower_t_has_no_elasticity():
    """At 480 req/s of batch 1 a T(1) 10% slower (2.2 ms) carries at most 455 req/s."""
    assert tp.elasticity(_search(480.0), Candidate(0.0, 1, 1), 480.0) is None


def test_without_a_drift_source_every_candidate_keeps_the_measured_drift():
    s = _search(450.0)
    assert tp.drift_scale(s, Candidate(0.0, 1, 1)) == (1.0, 1.0)


def test_a_busier_candidate_than_the_drift_run_gets_a_wider_interval():
    """The drift was measured at 20 req/s (a light load); at 450 req/s the same T(b)
    drift moves P50 and P99 more: the interval widens, up to DRIFT_SCALE_MAX, and the
    point stays where it was."""
    light = Candidate(0.0, 1, 1)
    plain = tp.predict_one(_search(450.0), light)
    s = _search(450.0, drift_at=(light, 20.0))
    f50, f99 = tp.drift_scale(s, light)
    assert 1.0 < f50 <= tp.DRIFT_SCALE_MAX and 1.0 < f99 <= tp.DRIFT_SCALE_MAX
    wide = tp.predict_one(s, light)
    assert wide.p50_ms == plain.p50_ms and wide.p99_ms == plain.p99_ms
    assert wide.p50.lo_ms < plain.p50.lo_ms and wide.p50.hi_ms > plain.p50.hi_ms
    assert wide.p99.hi_ms > plain.p99.hi_ms
    # the drift term alone, on the log scale: scaled by f50
    t = tp.Drift(0.1, 5).t_quantile
    ratio = math.log(wide.p50.hi_ms / plain.p50.hi_ms)
    assert math.isclose(ratio, t * 0.1 * (f50 - 1.0), rel_tol=1e-6)


def test_a_calmer_candidate_is_never_narrower_than_the_measured_drift():
    """The drift measured at 450 req/s, a candidate at 20 req/s: its elasticity is lower,
    but the factor stays 1 (the measured spread is a floor)."""
    busy = Candidate(0.0, 1, 1)
    s = _search(20.0, drift_at=(busy, 450.0))
    assert tp.drift_scale(s, busy) == (1.0, 1.0)
    assert tp.predict_one(s, busy).p50 == tp.predict_one(_search(20.0), busy).p50


def test_next_to_its_capacity_a_candidate_gets_the_largest_factor():
    s = _search(470.0, drift_at=(Candidate(0.0, 1, 1), 20.0))
    assert tp.drift_scale(s, Candidate(0.0, 1, 1)) == (tp.DRIFT_SCALE_MAX,
                                                         tp.DRIFT_SCALE_MAX)


def test_the_p99_bound_holds_after_scaling():
    """A P99 spread at the bound (0.35 on the log scale) is not doubled to 0.7 (with
    t = 3.18, a high end 9x the point); a P50 spread is scaled in full."""
    t50, t99 = tp.scaled_drift_terms(0.1, tp.P99_DRIFT_MAX, 2.0, 2.0)
    assert t50 == 0.2 and t99 == tp.P99_DRIFT_MAX
    assert tp.scaled_drift_terms(0.1, 0.1, 1.5, 1.5) == pytest.approx((0.15, 0.15))
    # a measured P99 spread above the bound (none is kept so, but the rule holds) stays
    assert tp.scaled_drift_terms(0.1, 0.5, 1.0, 2.0)[1] == 0.5
