"""Regression statistics on raw samples: bootstrap ratio intervals, certified percentiles.

NumPy only (no SciPy), deterministic for a given seed.

* :func:`ratio_interval` - confidence interval of ``stat(new) / stat(base)`` by a
  moving-block bootstrap (Kunsch 1989; Efron & Tibshirani 1993, ch. 13 percentile
  interval). Blocks of ``ceil(sqrt(n))`` consecutive samples keep the slow drift and
  interference bursts of a busy machine inside each resample, so the interval widens
  when a run wandered; an iid bootstrap would be too narrow for such runs. A single
  run cannot show its own run-to-run shift (clock states, placement, cache state), so
  an assumed run-to-run coefficient of variation ``run_to_run_cv`` is folded into
  the log-ratio (a normal term with standard deviation ``sqrt(2) * run_to_run_cv``,
  one per run), as pyperf advises comparing several processes rather than one.
* :func:`regression_verdict` - pass / fail / inconclusive for "may get worse by at most
  X%" given a direction (lower or higher is better).
* :func:`certify_quantile` - MLPerf LoadGen early stopping: can ``n`` samples, of which
  ``k`` lie over the bound, certify that the ``q``-quantile is within the bound at a
  confidence level? With ``k = 0`` this is ``q**n <= 1 - confidence`` (p99 at 99%:
  459 samples, :func:`trtcheck.stats.min_samples_to_certify`); in general the binomial
  tail ``P[Binomial(n, 1 - q) <= k] <= 1 - confidence`` (MLPerf Inference LoadGen,
  "early stopping", loadgen/early_stopping.cc).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trtcheck.analyze.metrics import HIGHER, LOWER, SampleStat
from trtcheck.stats import min_samples_to_certify

DEFAULT_CONFIDENCE = 0.95
"""Two-sided confidence of ratio intervals (a fail needs the whole interval past the limit,
so the false-fail probability at the limit is at most 2.5%, far less below it)."""

DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples; Efron & Tibshirani recommend >= 1000 for percentile intervals."""

DEFAULT_RUN_TO_RUN_CV = 0.01
"""Assumed run-to-run variation of a statistic (1%), which one run cannot measure."""

MAX_BOOTSTRAP_SAMPLES = 4000
"""Longer sample sets are thinned (every k-th, keeping time order) before resampling so a
gate stays well under a second; thinning only widens the interval (conservative)."""


@dataclass(frozen=True)
class RatioInterval:
    """Ratio ``stat(new) / stat(base)`` with its bootstrap confidence interval.

    Attributes:
        ratio: point estimate from all samples.
        low, high: interval bounds (``low <= ratio <= high`` in practice).
        confidence: two-sided level, e.g. 0.95.
        n_base, n_new: sample counts used (before thinning).
        method: description of how the interval was computed.
    """

    ratio: float
    low: float
    high: float
    confidence: float
    n_base: int
    n_new: int
    method: str


def _thin(x: np.ndarray, cap: int) -> np.ndarray:
    if x.size <= cap:
        return x
    step = int(math.ceil(x.size / cap))
    return x[::step]


def _boot_stats(x: np.ndarray, stat: SampleStat, resamples: int,
                rng: np.random.Generator) -> np.ndarray:
    n = x.size
    block = max(1, int(math.ceil(math.sqrt(n))))
    if block >= n:
        idx = rng.integers(0, n, size=(resamples, n))
    else:
        nb = int(math.ceil(n / block))
        starts = rng.integers(0, n - block + 1, size=(resamples, nb))
        idx = (starts[:, :, None] + np.arange(block)).reshape(resamples, nb * block)[:, :n]
    return np.asarray(stat.of(x[idx], axis=1), dtype=np.float64)


def ratio_interval(base: np.ndarray, new: np.ndarray, stat: SampleStat,
                   confidence: float = DEFAULT_CONFIDENCE,
                   resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                   run_to_run_cv: float = DEFAULT_RUN_TO_RUN_CV) -> RatioInterval:
    """Confidence interval of ``stat(new) / stat(base)`` from raw samples.

    Args:
        base, new: 1-D raw latency samples in ms, in measurement order (>= 2 each).
        stat: the statistic (median, a quantile, mean, or ``scale / median``).
        confidence: two-sided level in ``(0.5, 1)``.
        resamples: bootstrap resamples (>= 100).
        seed: seed of ``numpy.random.default_rng``; same inputs and seed give the same
            interval.
        run_to_run_cv: assumed run-to-run coefficient of variation of the statistic
            (>= 0), folded into the interval (see the module docstring).

    Returns:
        :class:`RatioInterval`.

    Raises:
        ValueError: too few samples, non-positive statistics, arguments out of range.
    """
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0.5, 1), got {confidence}")
    if resamples < 100:
        raise ValueError(f"resamples must be >= 100, got {resamples}")
    if run_to_run_cv < 0:
        raise ValueError("run_to_run_cv must be >= 0")
    a = np.asarray(base, dtype=np.float64)
    b = np.asarray(new, dtype=np.float64)
    if a.size < 2 or b.size < 2:
        raise ValueError("need at least 2 samples on each side")
    sa, sb = float(stat.of(a)), float(stat.of(b))
    if sa <= 0 or sb <= 0:
        raise ValueError("statistics must be positive to form a ratio")
    rng = np.random.default_rng(seed)
    ba = _boot_stats(_thin(a, MAX_BOOTSTRAP_SAMPLES), stat, resamples, rng)
    bb = _boot_stats(_thin(b, MAX_BOOTSTRAP_SAMPLES), stat, resamples, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        logr = np.log(bb) - np.log(ba)
    logr = logr[np.isfinite(logr)]
    if run_to_run_cv > 0:
        logr = logr + rng.normal(0.0, math.sqrt(2.0) * run_to_run_cv, logr.size)
    alpha = 1.0 - confidence
    lo, hi = np.quantile(logr, [alpha / 2, 1 - alpha / 2])
    ratio = sb / sa
    return RatioInterval(ratio=ratio, low=min(float(math.exp(lo)), ratio),
                         high=max(float(math.exp(hi)), ratio), confidence=confidence,
                         n_base=int(a.size), n_new=int(b.size),
                         method=(f"moving-block bootstrap ({resamples} resamples, block "
                                 f"sqrt(n)), percentile interval, run-to-run cv "
                                 f"{run_to_run_cv:g}"))


PASS = "pass"
FAIL = "fail"
INCONCLUSIVE = "inconclusive"


def regression_limit(direction: str, max_regression: float) -> float:
    """The worst acceptable ratio new/base: ``1 + r`` when lower is better (latency may
    grow by r), ``1 - r`` when higher is better (throughput may drop by r)."""
    if direction == LOWER:
        return 1.0 + max_regression
    if direction == HIGHER:
        return 1.0 - max_regression
    raise ValueError(f"direction must be {LOWER!r} or {HIGHER!r}")


def regression_verdict(low: float, high: float, direction: str,
                       max_regression: float) -> str:
    """Verdict for a ratio interval ``[low, high]`` against "worse by at most r".

    Lower is better: fail when ``low > 1 + r`` (surely worse than allowed), pass when
    ``high <= 1 + r``, else inconclusive. Higher is better: fail when ``high < 1 - r``,
    pass when ``low >= 1 - r``, else inconclusive. A point comparison passes
    ``low == high``.
    """
    limit = regression_limit(direction, max_regression)
    if direction == LOWER:
        if low > limit:
            return FAIL
        return PASS if high <= limit else INCONCLUSIVE
    if high < limit:
        return FAIL
    return PASS if low >= limit else INCONCLUSIVE


def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P[X <= k]`` for ``X ~ Binomial(n, p)``, summed in log space (NumPy only).

    Raises:
        ValueError: ``n < 0`` or ``p`` outside ``[0, 1]``.
    """
    if n < 0 or not 0.0 <= p <= 1.0:
        raise ValueError("need n >= 0 and 0 <= p <= 1")
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p == 0.0:
        return 1.0
    if p == 1.0:
        return 0.0
    i = np.arange(1, k + 1, dtype=np.float64)
    log_c = np.concatenate([[0.0], np.cumsum(np.log((n - i + 1) / i))])
    j = np.arange(0, k + 1, dtype=np.float64)
    logpmf = log_c + j * math.log(p) + (n - j) * math.log1p(-p)
    m = float(logpmf.max())
    return float(min(1.0, math.exp(m) * float(np.sum(np.exp(logpmf - m)))))


@dataclass(frozen=True)
class Certification:
    """Whether a sample set certifies ``quantile(q) <= bound`` (or ``>=``).

    Attributes:
        certified: the bound holds at ``confidence`` by the early-stopping rule.
        n: samples.
        over: samples on the wrong side of the bound.
        max_over_allowed: most wrong-side samples ``n`` samples may have and still
            certify (``-1`` when even zero is not enough).
        min_samples_zero_over: samples needed when none is on the wrong side.
        tail_probability: ``P[Binomial(n, 1 - q) <= over]``.
        confidence: the level used.
    """

    certified: bool
    n: int
    over: int
    max_over_allowed: int
    min_samples_zero_over: int
    tail_probability: float
    confidence: float


def max_over_allowed(n: int, q: float, confidence: float) -> int:
    """Largest ``k`` with ``P[Binomial(n, 1 - q) <= k] <= 1 - confidence`` (-1 if none)."""
    alpha = 1.0 - confidence
    if binomial_cdf(0, n, 1.0 - q) > alpha:
        return -1
    lo, hi = 0, n
    while lo < hi:  # binomial_cdf is increasing in k
        mid = (lo + hi + 1) // 2
        if binomial_cdf(mid, n, 1.0 - q) <= alpha:
            lo = mid
        else:
            hi = mid - 1
    return lo


def certify_quantile(samples: np.ndarray, q: float, bound: float, upper: bool = True,
                     confidence: float = 0.99) -> Certification:
    """MLPerf LoadGen early-stopping test for a percentile budget.

    Args:
        samples: raw samples (any unit, the bound in the same unit).
        q: the quantile as a fraction in ``(0, 1)`` (0.99 for p99).
        bound: the budget.
        upper: ``True`` to certify ``quantile(q) <= bound`` (latency budgets; samples
            ``> bound`` count as over); ``False`` for ``quantile(q) >= bound`` (samples
            ``< bound`` count, and the test runs on the mirrored quantile ``1 - q``).
        confidence: level in ``(0, 1)``, 0.99 as in LoadGen.

    Returns:
        :class:`Certification`.

    Raises:
        ValueError: ``q`` or ``confidence`` outside ``(0, 1)``.
    """
    if not 0.0 < q < 1.0 or not 0.0 < confidence < 1.0:
        raise ValueError("q and confidence must be in (0, 1)")
    x = np.asarray(samples, dtype=np.float64)
    n = int(x.size)
    if upper:
        over = int(np.sum(x > bound))
        qq = q
    else:
        over = int(np.sum(x < bound))
        qq = 1.0 - q
    tail = binomial_cdf(over, n, 1.0 - qq)
    return Certification(certified=tail <= 1.0 - confidence, n=n, over=over,
                         max_over_allowed=max_over_allowed(n, qq, confidence) if n else -1,
                         min_samples_zero_over=min_samples_to_certify(qq, confidence),
                         tail_probability=tail, confidence=confidence)
