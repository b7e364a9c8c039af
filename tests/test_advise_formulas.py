"""Closed-form rules of trtcheck.analyze.advice.queueing and the T(b) curve, against values
computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trtcheck.analyze.advice import queueing as qf
from trtcheck.analyze.advice.curve import (
    curve_from_bench,
    fit_linear,
    make_curve,
    parse_curve_text,
    per_sample_findings,
)
from trtcheck.errors import InputError


def test_seed_break_even_reproduces_the_seed_experiment():
    # ResNet-18, Python HTTP layer: batch 3.34 x 0.29 ms = ~0.97 ms saved vs a 100 ms window
    be = qf.break_even_optimistic(3.34, 0.29, 100.0)
    assert be.saved_ms == pytest.approx(0.9686)
    assert be.added_ms == 100.0
    assert not be.pays
    assert be.ratio == pytest.approx(100 / 0.9686)
    assert qf.break_even_optimistic(8, 20.0, 10.0, 5.0).pays  # 160 > 15


def test_sharp_break_even_equals_b_minus_1_tau0_rule():
    tau0, alpha, b = 17.0, 3.0, 8
    t1, tb = tau0 + alpha, tau0 + alpha * b
    # (b-1) tau0 = 119 ms: a window just below pays, just above does not
    assert qf.max_paying_window_ms(b, tau0) == pytest.approx(119.0)
    assert qf.break_even_sharp(b, t1, tb, 118.9).pays
    assert not qf.break_even_sharp(b, t1, tb, 119.1).pays


def test_waiting_pays_index_and_queue_formation_ratio():
    assert qf.waiting_pays_index(200, 0.29) == pytest.approx(0.058)
    assert qf.waiting_pays_index(3000, 17.0) == pytest.approx(51.0)
    # seed: 0.29 ms inference vs ~0.3 ms gaps in the burst -> ratio ~1
    assert qf.queue_formation_ratio(0.29, 1 / 0.0003) == pytest.approx(0.9667, rel=1e-3)


def test_poisson_window_fill_and_expected_batch():
    assert qf.single_request_batch_share(100, 2.0) == pytest.approx(math.exp(-0.2))
    assert qf.single_request_batch_share(100, 0.0) == 1.0
    assert qf.expected_window_batch(1000, 5.0, 32) == pytest.approx(6.0)
    assert qf.expected_window_batch(1000, 50.0, 32) == 32.0


def test_natural_batch_and_min_batch_to_keep_up():
    # lambda = 250/s = 0.25/ms, tau0 = 16, alpha = 2: b* = 4 / (1 - 0.5) = 8
    assert qf.natural_batch_no_wait(250, 16.0, 2.0) == pytest.approx(8.0)
    with pytest.raises(InputError, match="1/alpha"):
        qf.natural_batch_no_wait(600, 16.0, 2.0)  # lambda*alpha = 1.2
    t = lambda b: 16.0 + 2.0 * b  # noqa: E731
    # need b/(16+2b) > 0.25/ms  <=>  b > 8  -> 9
    assert qf.min_batch_to_keep_up(250, t, 32) == 9
    assert qf.min_batch_to_keep_up(250, t, 8) is None


def test_utilisation_capacity_and_instances():
    assert qf.utilisation(100, 20.0, 1) == pytest.approx(2.0)
    cap, b = qf.capacity_per_instance_per_s(lambda b: 16.0 + 2.0 * b, 32)
    assert b == 32 and cap == pytest.approx(1000 * 32 / 80)
    assert qf.instances_needed(3000, 400.0) == 8
    assert qf.instances_needed(3200, 400.0) == 8
    assert qf.instances_needed(3201, 400.0) == 9
    assert qf.instances_needed(3000, 400.0, 0.9) == 9


def test_md1_mean_wait():
    # rho = 0.6, S = 2 ms: Wq = 0.6 * 2 / (2 * 0.4) = 1.5 ms
    assert qf.md1_mean_wait_ms(300, 2.0) == pytest.approx(1.5)
    with pytest.raises(InputError):
        qf.md1_mean_wait_ms(500, 2.0)


@pytest.mark.parametrize("rate", [0, -1, math.inf, math.nan])
def test_rates_must_be_positive(rate):
    with pytest.raises(InputError, match="arrival rate"):
        qf.waiting_pays_index(rate, 1.0)


def test_curve_parse_fit_and_interpolation():
    c = parse_curve_text("8:1.02, 1:0.29,16:1.73")
    assert c.points() == [(1, 0.29), (8, 1.02), (16, 1.73)]
    fit = fit_linear(c)
    # hand least squares on (1,.29),(8,1.02),(16,1.73)
    b = np.array([1, 8, 16.0])
    t = np.array([0.29, 1.02, 1.73])
    slope = np.sum((b - b.mean()) * (t - t.mean())) / np.sum((b - b.mean()) ** 2)
    assert fit.alpha_ms_per_sample == pytest.approx(slope)
    assert fit.tau0_ms == pytest.approx(t.mean() - slope * b.mean())
    assert 0.99 < fit.r2 <= 1.0
    assert c.t_ms(4) == pytest.approx(0.29 + (1.02 - 0.29) * 3 / 7)
    assert c.t_ms(32) == pytest.approx(1.73 + slope * 16)  # extrapolated along the fit
    assert c.is_extrapolated(32) and not c.is_extrapolated(8)


def test_exact_line_fit_and_single_point():
    fit = fit_linear(make_curve([(1, 12.0), (2, 14.0), (4, 18.0)]))
    assert (fit.tau0_ms, fit.alpha_ms_per_sample, fit.r2) == pytest.approx((10.0, 2.0, 1.0))
    assert fit.max_rel_residual == pytest.approx(0.0, abs=1e-12)
    one = fit_linear(make_curve([(1, 0.29)]))
    assert one.alpha_ms_per_sample == 0.0 and one.tau0_ms == 0.29 and math.isnan(one.r2)
    assert "one point" in one.notes[0]


@pytest.mark.parametrize("text,needle", [
    ("", "empty"),
    ("1:2,8:1", "not monotone"),
    ("0:1", "integer >= 1"),
    ("1:0", "positive"),
    ("1:-3", "positive"),
    ("1:2,1:3", "twice"),
    ("1-2", "cannot read"),
    ("a:2", "cannot read"),
])
def test_bad_curves(text, needle):
    with pytest.raises(InputError, match=needle):
        parse_curve_text(text)


def test_measured_curve_tolerates_small_noise_dips_only():
    class B:  # minimal stand-in for BatchResult
        def __init__(self, b, med):
            self.batch_size = b
            self.samples_ms = [med] * 3

            class S:
                median_ms = med
            self.stats = S()

    class Run:
        label = "r"
        batches = [B(1, 1.0), B(2, 1.5), B(4, 1.48)]

    c = curve_from_bench(Run())  # equal weights: the two points pool to their mean
    assert c.median_ms.tolist() == pytest.approx([1.0, 1.49, 1.49])
    assert "dipped 1.3%" in c.notes[0] and "(timing noise)" in c.notes[0]
    assert "isotonic" in c.notes[1] and "T(4) 1.48 -> 1.49 ms" in c.notes[1]
    Run.batches = [B(1, 1.0), B(2, 1.5), B(4, 1.2)]  # 20%: kept, flagged as unstable
    c = curve_from_bench(Run())
    assert c.median_ms.tolist() == pytest.approx([1.0, 1.35, 1.35])
    assert "more than timing noise" in c.notes[0]
    Run.batches = [B(1, 1.0), B(2, 1.5), B(4, 0.7)]  # 53%: a broken measurement
    with pytest.raises(InputError, match="not monotone"):
        curve_from_bench(Run())


def test_per_sample_time_rise_is_reported():
    assert per_sample_findings(make_curve([(1, 1.0), (8, 4.0)])) == []
    msgs = per_sample_findings(make_curve([(1, 1.0), (8, 4.0), (16, 12.0)]))
    assert len(msgs) == 1 and "b=16" in msgs[0]


def test_a_curve_with_a_knee_gets_a_piecewise_fit():
    """A launch-bound GPU curve, flat to b=8 and linear beyond: one straight line puts the
    fixed cost at 0 (clamped), so the break-even step said "no" at every rate. The hinge
    fit finds the knee at 8 and the fixed cost of ~1 ms below it, by hand: T(1) = 1,
    T(8) = 1.07 -> slope 0.01, intercept 0.99."""
    from trtcheck.analyze.advice.advise import AdviseRequest, advise

    c = make_curve([(1, 1.0), (8, 1.07), (32, 7.07), (64, 15.07)])  # 0.25 ms/sample above 8
    fit = fit_linear(c)
    assert fit.tau0_ms == 0.0  # the straight line across the knee
    assert fit.knee is not None and fit.knee.knee_batch == 8
    assert fit.knee.tau0_ms == pytest.approx(0.99, abs=1e-9)
    assert fit.knee.alpha_ms_per_sample == pytest.approx(0.01, abs=1e-9)
    assert fit.knee.max_rel_residual < 1e-9
    assert any("knee at b=8" in n for n in fit.notes)
    # the break-even step now answers "yes" at a rate where a window does fill
    adv = advise(AdviseRequest(curve=c, rate_per_s=1500.0, requests=1000, replicas=0))
    wait = next(n for n in adv.path if n.question.startswith("Does waiting for a batch pay"))
    assert adv.formulas.s_tau0_ms == pytest.approx(0.99, rel=1e-6)
    assert wait.value == pytest.approx(1500.0 * 0.99 / 1000.0, rel=1e-6)
    assert wait.answer == "yes"


def test_a_straight_curve_gets_no_knee():
    """A curve one line fits (or nearly: noise of a few percent) keeps the line."""
    assert fit_linear(make_curve([(1, 20.0), (8, 40.0), (32, 110.0)])).knee is None
    assert fit_linear(make_curve([(1, 2.0), (2, 2.3), (4, 2.9), (8, 4.1),
                                  (16, 6.6)])).knee is None
