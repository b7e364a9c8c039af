"""Regression statistics: bootstrap ratio intervals, verdicts, early-stopping certification."""

from __future__ import annotations

import math

import gate_synth as g
import numpy as np
import pytest

from trtcheck.analyze import regression as R
from trtcheck.analyze.metrics import SampleStat
from trtcheck.stats import min_samples_to_certify

MEDIAN = SampleStat("quantile", 0.5)


@pytest.mark.parametrize("n,p", [(10, 0.3), (459, 0.01), (1000, 0.5), (57, 0.9)])
def test_binomial_cdf_matches_exact_sum(n, p):
    for k in (0, 1, 3, n // 2, n - 1, n):
        exact = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))
        assert R.binomial_cdf(k, n, p) == pytest.approx(min(1.0, exact), rel=1e-9, abs=1e-300)


def test_zero_over_rule_matches_mlperf_459():
    assert min_samples_to_certify(0.99, 0.99) == 459
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 459)
    c = R.certify_quantile(x, 0.99, bound=1.0)
    assert c.certified and c.over == 0 and c.max_over_allowed == 0
    c2 = R.certify_quantile(x[:458], 0.99, bound=1.0)
    assert not c2.certified and c2.max_over_allowed == -1
    assert c2.min_samples_zero_over == 459


def test_general_early_stopping_allows_some_samples_over():
    # 10,000 samples may have up to k over the bound where P[Bin(10000, 0.01) <= k] <= 0.01
    k = R.max_over_allowed(10_000, 0.99, 0.99)
    assert R.binomial_cdf(k, 10_000, 0.01) <= 0.01 < R.binomial_cdf(k + 1, 10_000, 0.01)
    assert 70 <= k <= 80  # mean 100, sd ~9.95: about 2.33 sd below
    x = np.zeros(10_000)
    x[:k] = 10.0
    assert R.certify_quantile(x, 0.99, 1.0).certified
    x[: k + 1] = 10.0
    assert not R.certify_quantile(x, 0.99, 1.0).certified


def test_lower_bound_certification_mirrors():
    x = np.linspace(1.0, 2.0, 1000)
    assert R.certify_quantile(x, 0.5, bound=1.2, upper=False).certified     # median >= 1.2
    assert not R.certify_quantile(x, 0.5, bound=1.49, upper=False).certified


def test_ratio_interval_is_seeded_and_covers_truth():
    rng = np.random.default_rng(5)
    a = rng.lognormal(np.log(10), 0.1, 2000)
    b = rng.lognormal(np.log(11), 0.1, 2000)
    ci1 = R.ratio_interval(a, b, MEDIAN, seed=3)
    ci2 = R.ratio_interval(a, b, MEDIAN, seed=3)
    assert ci1 == ci2
    assert ci1.low < 1.1 < ci1.high
    assert ci1.low <= ci1.ratio <= ci1.high
    # the run-to-run term widens the interval; without it, it is narrower
    ci0 = R.ratio_interval(a, b, MEDIAN, seed=3, run_to_run_cv=0.0)
    assert (ci0.high - ci0.low) < (ci1.high - ci1.low)


def test_block_bootstrap_widens_for_drifting_runs():
    rng = np.random.default_rng(11)
    iid = rng.lognormal(np.log(10), 0.05, 2000)
    drift = iid * np.exp(0.08 * np.sin(np.linspace(0, 3 * np.pi, 2000)))  # slow wander
    w_iid = R.ratio_interval(iid, iid[::-1].copy(), MEDIAN, run_to_run_cv=0)
    w_drift = R.ratio_interval(drift, drift[::-1].copy(), MEDIAN, run_to_run_cv=0)
    assert (w_drift.high - w_drift.low) > 1.5 * (w_iid.high - w_iid.low)


def test_throughput_ratio_is_inverse_of_latency():
    rng = np.random.default_rng(2)
    a = rng.lognormal(np.log(4), 0.05, 800)
    b = a * 1.25
    thr = SampleStat("inverse_median", 0.5, 8000.0)
    ci = R.ratio_interval(a, b, thr, run_to_run_cv=0.0)
    assert ci.ratio == pytest.approx(0.8, rel=1e-9)
    assert ci.high < 0.81


@pytest.mark.parametrize("low,high,direction,reg,verdict", [
    (1.10, 1.20, "lower", 0.05, "fail"),
    (0.90, 1.04, "lower", 0.05, "pass"),
    (1.01, 1.08, "lower", 0.05, "inconclusive"),
    (0.80, 0.90, "higher", 0.03, "fail"),
    (0.98, 1.10, "higher", 0.03, "pass"),
    (0.95, 1.00, "higher", 0.03, "inconclusive"),
    (1.05, 1.05, "lower", 0.05, "pass"),
])
def test_regression_verdicts(low, high, direction, reg, verdict):
    assert R.regression_verdict(low, high, direction, reg) == verdict


def test_argument_checks():
    x = np.ones(10)
    with pytest.raises(ValueError):
        R.ratio_interval(x, x, MEDIAN, confidence=1.2)
    with pytest.raises(ValueError):
        R.ratio_interval(x[:1], x, MEDIAN)
    with pytest.raises(ValueError):
        R.certify_quantile(x, 1.0, 1.0)


def test_noise_model_is_what_the_docs_say():
    rng = np.random.default_rng(0)
    x = g.noisy_latencies(rng, 5000, 9.0)
    assert np.median(x) == pytest.approx(9.0, rel=0.1)
    assert np.all(x > 0)


def test_early_stopping_bound_is_the_tightest_certified_budget():
    rng = np.random.default_rng(8)
    x = rng.lognormal(0, 0.3, 5000)
    b = R.early_stopping_bound(x, 0.99, 0.99)
    assert b is not None and b > np.percentile(x, 99)
    assert R.certify_quantile(x, 0.99, b).certified
    below = np.max(x[x < b])  # the next smaller sample is not enough
    assert not R.certify_quantile(x, 0.99, below).certified
    assert R.early_stopping_bound(x[:458], 0.99, 0.99) is None
    lo = R.early_stopping_bound(x, 0.5, 0.99, upper=False)
    assert lo is not None and lo < np.median(x)
    assert R.certify_quantile(x, 0.5, lo, upper=False).certified
