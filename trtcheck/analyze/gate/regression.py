"""Regression statistics on raw samples: bootstrap ratio intervals, certified percentiles.

NumPy only (SciPy, when installed, only for the t quantile), deterministic for a given seed.

* :func:`ratio_interval` - confidence interval of ``stat(new) / stat(base)``. The
  standard error of the log ratio comes from a circular block bootstrap of each run
  (Kunsch 1989; Politis & Romano 1992, circular blocks so that the first and last
  samples are drawn as often as the others; Efron & Tibshirani 1993, ch. 6 and 12:
  bootstrap standard error with a t interval). Blocks of consecutive samples
  (:func:`block_length`: ``sqrt(n)``, or ``n // 5`` when the run drifted) keep the
  slow drift and interference bursts of a busy machine inside each resample; the t
  quantile uses the number of blocks minus one as degrees of freedom, so a drifting run
  with few effective blocks gets a wide interval instead of a falsely precise one. A
  single run cannot show its own run-to-run shift (clock states, placement, cache
  state), so an assumed run-to-run coefficient of variation ``run_to_run_cv`` adds
  ``2 * cv**2`` to the variance of the log ratio (one term per run); pyperf likewise
  advises comparing several processes.
  For central statistics (median, mean, throughput) the variance of each run is at least
  its batch-means estimate (spread over 10 consecutive segments / 10), which catches slow
  drift that blocks of sqrt(n) miss; the t quantile then has 9 degrees of freedom.
  Tail quantiles (p90 and beyond) hinge on rare bursts that one run may have missed: their
  standard error is the larger of the separate one and one from both runs' blocks pooled
  (the spread expected under "no change", as in a permutation test).
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
import re
import zlib
from dataclasses import dataclass

import numpy as np

from trtcheck.analyze.gate.metricpath.metric_checks import HIGHER, LOWER
from trtcheck.analyze.gate.metricpath.metric_resolver import SampleStat
from trtcheck.stats import min_samples_to_certify

DEFAULT_CONFIDENCE = 0.95
"""Two-sided confidence of ratio intervals (a fail needs the whole interval past the limit,
so the false-fail probability at the limit is at most 2.5%, far less below it)."""

DEFAULT_RESAMPLES = 300
"""Bootstrap resamples for a standard error; Efron & Tibshirani (1993, sec. 6.4) find 200
enough for standard errors (percentile intervals would need >= 1000)."""

DEFAULT_RUN_TO_RUN_CV = 0.01
"""Assumed run-to-run variation of a statistic (1%), which one run cannot measure."""


_BATCH_RE = re.compile(r"(?:^|\.)batch\[(\d+)\]\.(?:stats\.)?(.+)$")


def interval_seed(seed: int, metric_path: str) -> int:
    """The bootstrap seed of one metric's ratio interval, shared by ``trtcheck gate`` and
    ``trtcheck compare`` so both give the same interval for the same pair of files.

    Args:
        seed: the user's seed (policy ``seed`` / ``compare --seed``), >= 0.
        metric_path: the metric's path; a bench path is reduced to its canonical form
            ``batch[N].LEAF`` (run label and ``stats.`` dropped: ``bench[onnxruntime-fp32]
            .batch[1].stats.p99_ms`` and ``bench.batch[1].p99_ms`` give the same seed).

    Returns:
        an int in [0, 2**63).
    """
    m = _BATCH_RE.search(metric_path)
    key = f"batch[{m.group(1)}].{m.group(2)}" if m else metric_path
    return (seed * 1_000_003 + zlib.crc32(key.encode())) % (2**63)

TAIL_Q = 0.1
"""Quantiles at or above 0.9 (or at or below 0.1) are tails: their spread is also estimated from the
two runs pooled (rare interference bursts that one run happened not to catch)."""

MAX_BOOTSTRAP_SAMPLES = 2000
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
    step = math.ceil(x.size / cap)
    return x[::step]


DRIFT_SD_RATIO = 1.5
"""Segment medians spread more than 1.5x what independent samples would give: the run
drifted (for 10 segments of independent samples the ratio exceeds 1.5 with probability
about 2%, from the chi-square distribution with 9 degrees of freedom)."""


def drift_ratio(x: np.ndarray, segments: int = 10) -> float:
    """Spread of the medians of ``segments`` consecutive segments relative to independent
    samples: ``sd(segment medians) / (1.2533 * sigma / sqrt(m))`` with ``m`` samples per
    segment and ``sigma = 1.4826 * MAD`` (robust to outliers; 1.2533 = sqrt(pi/2) is the
    asymptotic standard error factor of a median). About 1 for a stationary run."""
    n = int(x.size)
    m = n // segments
    if m < 5:
        return 1.0
    med = np.median(x[: m * segments].reshape(segments, m), axis=1)
    sigma = 1.4826 * float(np.median(np.abs(x - np.median(x))))
    if sigma <= 0:
        return 1.0
    return float(np.std(med, ddof=1) / (1.2533 * sigma / math.sqrt(m)))


def block_length(x: np.ndarray) -> int:
    """Moving-block length for a sample series.

    ``ceil(sqrt(n))`` for a stationary run (the usual order between the ``n**(1/3)``
    optimum for variance estimation and longer choices, Kunsch 1989, Lahiri 2003); when
    :func:`drift_ratio` exceeds :data:`DRIFT_SD_RATIO` the run wandered on a time
    scale comparable to its length, and blocks of ``n // 5`` keep that wander inside
    each resample, so the interval widens honestly instead of trusting a drifting run.
    """
    n = int(x.size)
    base = max(1, math.ceil(math.sqrt(n)))
    if n >= 50 and drift_ratio(x) > DRIFT_SD_RATIO:
        return max(base, n // 5)
    return base


_BOOT_CACHE: dict[tuple[object, ...], np.ndarray] = {}
_BOOT_CACHE_MAX = 256


def _digest(x: np.ndarray) -> int:
    import hashlib
    return int.from_bytes(hashlib.blake2b(np.ascontiguousarray(x).tobytes(),
                                          digest_size=8).digest(), "little")


def _log_boot(x: np.ndarray, stat: SampleStat, resamples: int, seed: int, block: int,
              size: int | None = None) -> np.ndarray:
    """``log`` of the statistic over ``resamples`` circular block resamples of ``x``.

    ``inverse_median`` is bootstrapped as the median (``log(scale / m)`` differs from
    ``log m`` only by sign and a constant, so variances of log ratios are the same).
    The generator is seeded from ``seed`` and the content of ``x``, so results do not
    depend on the order in which rules are evaluated, and repeated requests (median and
    throughput of one batch) are served from a small cache.
    """
    kind, q = ("mean", 0.0) if stat.kind == "mean" else ("quantile",
                                                        0.5 if stat.kind == "inverse_median"
                                                        else stat.q)
    dig = _digest(x)
    n = size or x.size
    key = (x.size, dig, kind, q, resamples, seed, block, n)
    hit = _BOOT_CACHE.get(key)
    if hit is not None:
        return hit
    rng = np.random.default_rng([seed % (2**63), dig, n, block])
    total = x.size
    xs = x.astype(np.float32)
    if block >= total:
        idx = rng.integers(0, total, size=(resamples, n))
    else:
        nb = math.ceil(n / block)
        starts = rng.integers(0, total, size=(resamples, nb))
        idx = (starts[:, :, None] + np.arange(block)).reshape(resamples, nb * block)[:, :n]
        idx %= total  # circular blocks: every sample equally likely (Politis & Romano 1992)
    res = xs[idx]
    if kind == "mean":
        vals = res.mean(axis=1, dtype=np.float64)
    else:
        vals = np.quantile(res, q, axis=1, method="linear").astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(vals)
    if len(_BOOT_CACHE) >= _BOOT_CACHE_MAX:
        _BOOT_CACHE.clear()
    _BOOT_CACHE[key] = out
    return out


BATCH_MEANS_SEGMENTS = 10
"""Segments for the batch-means variance floor (Schmeiser 1982 advises 10 to 30)."""


def _batch_means_var(x: np.ndarray, stat: SampleStat) -> float:
    """Variance of ``log stat`` of a whole run estimated from its segments:
    ``var(log stat of each of k consecutive segments) / k`` (the batch-means method of
    simulation output analysis; Law & Kelton, "Simulation Modeling and Analysis",
    sec. 9.5.3). 0 when segments would be shorter than 10 samples."""
    k = BATCH_MEANS_SEGMENTS
    m = x.size // k
    if m < 10:
        return 0.0
    seg = x[: m * k].reshape(k, m)
    if stat.kind == "mean":
        vals = seg.mean(axis=1)
    else:
        q = 0.5 if stat.kind == "inverse_median" else stat.q
        vals = np.quantile(seg, q, axis=1, method="linear")
    if np.any(vals <= 0):
        return 0.0
    return float(np.var(np.log(vals), ddof=1) / k)


def ratio_interval(base: np.ndarray, new: np.ndarray, stat: SampleStat,
                   confidence: float = DEFAULT_CONFIDENCE,
                   resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                   run_to_run_cv: float = DEFAULT_RUN_TO_RUN_CV) -> RatioInterval:
    """Confidence interval of ``stat(new) / stat(base)`` from raw samples.

    ``log(ratio) +- t * se`` with ``se**2 = var_boot(log stat_new - log stat_base)
    + 2 * run_to_run_cv**2`` (see the module docstring), ``t`` the Student quantile with
    (number of bootstrap blocks - 1) degrees of freedom.

    Args:
        base, new: 1-D raw latency samples in ms, in measurement order (>= 2 each).
        stat: the statistic (median, a quantile, mean, or ``scale / median``).
        confidence: two-sided level in ``(0.5, 1)``.
        resamples: bootstrap resamples (>= 100; standard errors need about 200,
            Efron & Tibshirani 1993, sec. 6.4).
        seed: base seed; same inputs and seed give the same interval.
        run_to_run_cv: assumed run-to-run coefficient of variation of the statistic
            (>= 0).

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
    ta, tb = _thin(a, MAX_BOOTSTRAP_SAMPLES), _thin(b, MAX_BOOTSTRAP_SAMPLES)
    la, lb = block_length(ta), block_length(tb)
    boot_a = _log_boot(ta, stat, resamples, seed, la)
    boot_b = _log_boot(tb, stat, resamples, seed, lb)
    if np.sum(np.isfinite(boot_a)) < resamples // 2 or np.sum(np.isfinite(boot_b)) < resamples // 2:
        raise ValueError("bootstrap statistics were not positive")
    var_a = float(np.var(boot_a[np.isfinite(boot_a)], ddof=1))
    var_b = float(np.var(boot_b[np.isfinite(boot_b)], ddof=1))
    blocks = min(ta.size / la, tb.size / lb)
    tail = stat.kind == "quantile" and not TAIL_Q < stat.q < 1.0 - TAIL_Q
    if not tail:
        # batch means floor (Schmeiser 1982): the spread of the statistic over
        # BATCH_MEANS_SEGMENTS consecutive segments catches drift the blocks missed
        bm_a, bm_b = _batch_means_var(ta, stat), _batch_means_var(tb, stat)
        if bm_a > var_a or bm_b > var_b:
            blocks = min(blocks, float(BATCH_MEANS_SEGMENTS))
        var_a, var_b = max(var_a, bm_a), max(var_b, bm_b)
    var = var_a + var_b
    if tail:
        # tails: rare events one run may not have seen; estimate the spread under "no
        # change" from both runs' blocks pooled, and keep the larger standard error
        lp = max(la, lb)
        pooled = np.concatenate([ta, tb])
        plog = (_log_boot(pooled, stat, resamples, seed + 1, lp, size=tb.size)
                - _log_boot(pooled, stat, resamples, seed + 2, lp, size=ta.size))
        plog = plog[np.isfinite(plog)]
        if plog.size >= resamples // 2:
            var = max(var, float(np.var(plog, ddof=1)))
        blocks = min(blocks, pooled.size / lp / 2)
    se = math.sqrt(var + 2.0 * run_to_run_cv ** 2)
    df = max(1.0, blocks - 1.0)
    t = t_quantile(0.5 + confidence / 2.0, df)
    ratio = sb / sa
    centre = math.log(ratio)
    return RatioInterval(ratio=ratio, low=math.exp(centre - t * se),
                         high=math.exp(centre + t * se), confidence=confidence,
                         n_base=int(a.size), n_new=int(b.size),
                         method=(f"circular block bootstrap standard error of the log ratio "
                                 f"({resamples} resamples, blocks {la}/{lb} samples), "
                                 f"run-to-run cv {run_to_run_cv:g}, Student t with "
                                 f"{df:.3g} df"))


def t_quantile(p: float, df: float) -> float:
    """Quantile ``p`` (in ``(0.5, 1)``) of Student's t with ``df > 0`` degrees of freedom.

    ``df`` is real (a bootstrap's effective block count minus one is rarely an integer).
    Computed by :func:`t_quantile_exact` (the inverse of the regularized incomplete beta
    function by bisection, about 1 ms); it agrees with ``scipy.stats.t.ppf`` to 1e-12
    relative (the tests use SciPy as the oracle only, so the gate imports no SciPy).

    Raises:
        ValueError: ``p`` outside ``(0.5, 1)`` or ``df <= 0``.
    """
    return t_quantile_exact(p, df)


def t_quantile_exact(p: float, df: float) -> float:
    """Quantile ``p`` (in ``(0.5, 1)``) of Student's t with real ``df > 0``, without SciPy.

    For ``t > 0``, ``P[T > t] = I_x(df/2, 1/2) / 2`` with ``x = df / (df + t**2)``
    (Abramowitz & Stegun 26.7.1 and 26.5.27), so ``x`` solves
    ``I_x(df/2, 1/2) = 2 (1 - p)``: found by bisection in ``x`` down to adjacent doubles,
    ``I_x`` by :func:`regularized_incomplete_beta`; then ``t = sqrt(df (1 - x) / x)``.

    Raises:
        ValueError: ``p`` outside ``(0.5, 1)`` or ``df <= 0``.
    """
    if not 0.5 < p < 1.0:
        raise ValueError("p must be in (0.5, 1)")
    if not df > 0.0:
        raise ValueError("df must be > 0")
    target = 2.0 * (1.0 - p)
    a, b = 0.5 * df, 0.5
    lo, hi = 0.0, 1.0                      # I_lo < target <= I_hi
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if regularized_incomplete_beta(a, b, mid) < target:
            lo = mid
        else:
            hi = mid
    x = 0.5 * (lo + hi)
    return math.sqrt(df * (1.0 - x) / x)


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """``I_x(a, b)`` for ``a, b > 0`` and ``x`` in ``[0, 1]``.

    The continued fraction of A&S 26.5.8, evaluated with the modified Lentz method
    (Press et al., Numerical Recipes, 3rd ed., 6.4), on ``x`` or, past the mean
    ``(a + 1) / (a + b + 2)``, on ``1 - x`` through ``I_x(a, b) = 1 - I_{1-x}(b, a)``.

    Raises:
        ValueError: ``x`` outside ``[0, 1]`` or ``a, b <= 0``.
    """
    if not 0.0 <= x <= 1.0:
        raise ValueError("x must be in [0, 1]")
    if not (a > 0.0 and b > 0.0):
        raise ValueError("a and b must be > 0")
    if x == 0.0 or x == 1.0:
        return x
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - regularized_incomplete_beta(b, a, 1.0 - x)
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    tiny, eps = 1e-300, 1e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return math.exp(log_front) * h / a


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


def early_stopping_bound(samples: np.ndarray, q: float, confidence: float = 0.99,
                         upper: bool = True) -> float | None:
    """The tightest bound the samples certify for the ``q``-quantile (MLPerf LoadGen's
    "early stopping estimate"): with ``h = max_over_allowed(n, q, confidence)``, the
    ``(h + 1)``-th largest sample (``upper``; the ``(h + 1)``-th smallest for a lower
    bound on the quantile, using ``1 - q``). ``None`` when ``n`` is too small to certify
    anything. Any budget at or beyond this value is certified by
    :func:`certify_quantile`."""
    x = np.sort(np.asarray(samples, dtype=np.float64))
    n = int(x.size)
    if n == 0:
        return None
    h = max_over_allowed(n, q if upper else 1.0 - q, confidence)
    if h < 0:
        return None
    return float(x[n - 1 - h]) if upper else float(x[h])
