"""How long ``trtcheck tune`` measures a pick: ``--duration-s`` when the calibration's
P99 held between its repeats and the run holds 1,000 requests, longer when it did not
(the P99 of a few seconds hinges on one stall more or less) or holds fewer, at most 4x.
The live wiring (the confirming run's recorded sending time) is checked in
tests/test_tune_cli.py."""

from __future__ import annotations

import numpy as np
import pytest

from trtcheck.analyze import tune_plan as tp


class _Rep:
    def __init__(self, lat):
        self.latencies_ms = lat


def test_a_calm_tail_keeps_the_run_length():
    assert tp.confirm_duration_s(tp.Drift(0.05, 3), 3.0) == 3.0
    assert tp.confirm_duration_s(tp.Drift(tp.P99_DRIFT_MAX, 3), 3.0) == 3.0


def test_a_spread_tail_lengthens_the_run_by_the_square_of_the_spread_ratio():
    # the spread of a quantile falls as 1 / sqrt(requests): 1.2x the spread the
    # intervals assume needs 1.44x the requests
    d = tp.Drift(1.2 * tp.P99_DRIFT_MAX, 3)
    assert tp.confirm_duration_s(d, 3.0) == pytest.approx(3.0 * 1.44)
    assert tp.confirm_duration_s(d, 10.0) == pytest.approx(14.4)


def test_the_lengthening_is_bounded():
    # ResNet-18 on an H200: P99 pairs spread 2.3 (one repeat had a stall, the other none)
    d = tp.Drift(2.3, 3)
    assert tp.confirm_duration_s(d, 3.0) == pytest.approx(3.0 * tp.CONFIRM_LENGTHEN_MAX)


def test_the_note_gives_the_length_and_its_reason():
    rng = np.random.default_rng(5)
    a, b = (list(rng.lognormal(1.8, 0.1, 1000)) for _ in range(2))
    a[500:] = [x + 60.0 if i % 50 == 0 else x for i, x in enumerate(a[500:])]
    b[:500] = [x + 60.0 if i % 50 == 0 else x for i, x in enumerate(b[:500])]
    tail = tp.tail_drift([_Rep(a), _Rep(b)])
    assert tail.sd_log > tp.P99_DRIFT_MAX
    want = tp.confirm_duration_s(tail, 3.0, 1000.0)
    assert want > 3.0
    note = tp.confirm_length_note(tail, 3.0, 1000.0)
    assert note is not None and note.startswith(f"the runs that measure a pick send for "
                                                f"{want:.3g} s instead of 3 s")
    assert f"P99 spread of {tail.sd_log:.2f}" in note and "requests at" not in note
    assert ("at most 4x" in note) == (want == pytest.approx(12.0))
    # the spread's own note says what moved, not the length
    spread = tp.p99_spread_note(tail, 3.0)
    assert spread is not None and "send for" not in spread
    # a spread just above the bound at a high rate: lengthened, not capped
    mild = tp.confirm_length_note(tp.Drift(0.4, 3), 3.0, 1000.0)
    assert mild == ("the runs that measure a pick send for 3.92 s instead of 3 s: the "
                    "calibration's P99 spread of 0.40 asks for 3.92 s")
    assert tp.confirm_length_note(tp.Drift(0.2, 3), 3.0, 1000.0) is None


def test_a_low_rate_lengthens_the_run_to_a_thousand_requests():
    calm = tp.Drift(0.05, 3)
    assert tp.confirm_duration_s(calm, 3.0, 1000.0) == 3.0  # 3,000 requests already
    # ResNet-101 on an H100 at 84 req/s: 252 requests in 3 s; 1,000 take 11.9 s
    assert tp.confirm_duration_s(calm, 3.0, 84.0) == pytest.approx(1000 / 84)
    assert tp.confirm_duration_s(calm, 3.0, 50.0) == pytest.approx(12.0)  # the 4x bound
    # the longer of the two reasons
    spread = tp.Drift(2 * tp.P99_DRIFT_MAX, 3)
    assert tp.confirm_duration_s(spread, 2.0, 200.0) == pytest.approx(8.0)
    assert tp.confirm_duration_s(spread, 2.0, 125.0) == pytest.approx(8.0)


def test_a_run_short_of_a_thousand_requests_is_named_with_its_remedy():
    calm = tp.Drift(0.05, 3)
    at84 = tp.confirm_length_note(calm, 3.0, 84.0)
    assert at84 == ("the runs that measure a pick send for 11.9 s instead of 3 s: 1,000 "
                    "requests at 84 req/s take 11.9 s")
    # both reasons; the 4x bound; what is left short and the --duration-s that reaches it
    note = tp.confirm_length_note(tp.Drift(0.44, 3), 3.0, 20.0)
    assert note is not None
    assert note.startswith("the runs that measure a pick send for 12 s instead of 3 s: the "
                           "calibration's P99 spread of 0.44 asks for 4.74 s; 1,000 requests "
                           "at 20 req/s take 50 s (at most 4x --duration-s)")
    assert "about 240 requests, about 2 of them above the P99" in note
    assert "--duration-s of 12.5 s or more lets the run hold 1,000" in note
