"""Latency statistics and stability checks, computed one way everywhere.

Percentiles are given as fractions in ``[0, 1]`` in code (``0.99``) and named ``p99``
in results. Two methods (:data:`PERCENTILE_METHODS`), recorded with every
:class:`~trtcheck.results.stats.LatencyStats` as ``percentile_method``:

* ``linear`` (the default): linear interpolation between closest ranks (NumPy
  ``method="linear"``, Hyndman & Fan 1996 type 7; pyperf and NumPy's default).
* ``nearest-rank``: the smallest sample with at least a fraction ``q`` of the samples at or
  below it, ``x[ceil(q * n) - 1]`` of the sorted samples (NumPy ``method="inverted_cdf"``,
  Hyndman & Fan type 1). trtexec's ``findPercentile`` (samples/common/sampleReporting.cpp:
  ``x[max(n - 1 - int((1 - q) * n), 0)]``) is this formula; it differs only where its
  float32 arithmetic rounds ``(1 - q) * n`` across an integer (p99 of exactly 100 samples
  gives the maximum there, the 99th sample here). perf_analyzer's ``SummarizeLatency``
  (src/inference_profiler.cc: ``x[size_t(q * (n - 1) + 0.5)]``) takes the sample nearest
  the linear position, which is the same sample or one rank away.

Nearest-rank never interpolates, so its tail percentiles are at or above linear ones at
small sample counts (at 50 samples p99 is the maximum). Medians (``median_ms``) are the
middle sample or the mean of the two middle ones under both methods, as in trtexec's
``findMedian``. Use ``nearest-rank`` when numbers go next to trtexec's or
perf_analyzer's; :func:`percentile_method` sets the method for a block of code.

Stability rules follow pyperf's ``check`` (pyperf/_cli.py): a run is flagged when its
standard deviation is more than 10% of the mean, when the minimum is far below the
median, or when too few samples were taken; we add a drift check (first vs second
half), a p99 certification check (MLPerf LoadGen early stopping) and an outlier check.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import statistics
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from trtcheck.results.stats import Finding, LatencyStats

CV_WARN = 0.10
"""pyperf warns when std > 10% of the mean (``pyperf check``)."""

MIN_VS_MEDIAN_WARN = 0.5
"""pyperf warns when the minimum is more than 50% below the mean; we use the median."""

DRIFT_WARN = 0.05
"""Medians of the first and second half differing by more than 5%: warm-up or thermal drift."""

MIN_SAMPLES_WARN = 20
"""pyperf flags fewer than 20 values as too few for a stable mean."""


PERCENTILE_METHODS = ("linear", "nearest-rank")
"""The percentile methods trtcheck offers (``--percentile-method``)."""

ANCHOR_PERCENTILE_METHOD = "nearest-rank"
"""The method of trtexec and perf_analyzer, for numbers put next to theirs."""

_NUMPY_METHOD: dict[str, Any] = {"linear": "linear", "nearest-rank": "inverted_cdf"}
_METHOD: contextvars.ContextVar[str] = contextvars.ContextVar("trtcheck_percentile_method",
                                                              default="linear")


def numpy_quantile_method(method: str) -> str:
    """NumPy's ``method=`` argument of :func:`numpy.quantile` for a percentile method of
    :data:`PERCENTILE_METHODS` (``"linear"`` -> ``"linear"``, ``"nearest-rank"`` ->
    ``"inverted_cdf"``).

    Raises:
        ValueError: ``method`` not in :data:`PERCENTILE_METHODS`.
    """
    return _NUMPY_METHOD[_check_method(method)]


def current_percentile_method() -> str:
    """The method :func:`percentile` and :func:`summarize` use when given none."""
    return _METHOD.get()


@contextlib.contextmanager
def percentile_method(method: str) -> Iterator[None]:
    """Within the block, :func:`percentile` and :func:`summarize` use ``method`` by default
    (a context variable: asyncio tasks started inside inherit it).

    Raises:
        ValueError: ``method`` not in :data:`PERCENTILE_METHODS`.
    """
    token = _METHOD.set(_check_method(method))
    try:
        yield
    finally:
        _METHOD.reset(token)


def _check_method(method: str | None) -> str:
    if method is None:
        return _METHOD.get()
    if method not in PERCENTILE_METHODS:
        raise ValueError(f"percentile method must be one of {', '.join(PERCENTILE_METHODS)}, "
                         f"got {method!r}")
    return method


def percentile(samples: Sequence[float] | np.ndarray, q: float,
               method: str | None = None) -> float:
    """Percentile of ``samples`` for a fraction ``q`` in ``[0, 1]``.

    Args:
        samples: 1-D values.
        q: fraction in ``[0, 1]``.
        method: ``"linear"`` or ``"nearest-rank"`` (module docstring); ``None``: the
            current :func:`percentile_method` (``"linear"`` unless set).

    Raises:
        ValueError: empty samples, ``q`` outside ``[0, 1]`` or an unknown method.
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"percentile fraction must be in [0, 1], got {q}")
    method = _check_method(method)
    arr = np.asarray(samples, dtype=np.float64)
    if arr.size == 0:
        raise ValueError("no samples")
    return float(np.percentile(arr, q * 100.0, method=_NUMPY_METHOD[method]))


def summarize(samples_ms: Sequence[float] | np.ndarray,
              method: str | None = None) -> LatencyStats:
    """Summary statistics of a latency sample set in milliseconds.

    Args:
        samples_ms: 1-D sequence of at least one latency, in ms.
        method: percentile method of p25..p99 (``None``: the current
            :func:`percentile_method`); recorded in ``percentile_method``.

    Returns:
        :class:`LatencyStats`; ``median_ms`` is the middle sample (mean of the two middle
        ones for an even count) under either method; ``std_ms`` is the sample standard
        deviation (ddof=1, 0 for a single sample); ``cv`` = std / mean (0 when the mean
        is 0); ``mad_ms`` is taken around the median.

    Raises:
        ValueError: empty input, non-finite values or an unknown method.
    """
    method = _check_method(method)
    arr = np.asarray(samples_ms, dtype=np.float64)
    if arr.size == 0:
        raise ValueError("cannot summarize zero samples")
    if not np.all(np.isfinite(arr)):
        raise ValueError("samples contain NaN or infinity")
    q = np.percentile(arr, [25, 50, 75, 90, 95, 99], method=_NUMPY_METHOD[method])
    mean = float(arr.mean())
    std = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
    median = float(np.median(arr))
    return LatencyStats(
        percentile_method=method,  # type: ignore[arg-type]  # checked by _check_method
        count=int(arr.size),
        mean_ms=mean,
        median_ms=median,
        min_ms=float(arr.min()),
        max_ms=float(arr.max()),
        std_ms=std,
        p25_ms=float(q[0]),
        p75_ms=float(q[2]),
        p90_ms=float(q[3]),
        p95_ms=float(q[4]),
        p99_ms=float(q[5]),
        mad_ms=float(np.median(np.abs(arr - median))),
        iqr_ms=float(q[2] - q[0]),
        cv=(std / mean) if mean > 0 else 0.0,
    )


def min_samples_to_certify(q: float, confidence: float = 0.99) -> int:
    """Smallest sample count that can certify percentile ``q`` with no sample over it.

    MLPerf LoadGen early stopping: with ``n`` samples all at or under the bound, the
    probability that the true ``q``-quantile lies above the bound is at most ``q**n``;
    certification needs ``q**n <= 1 - confidence``. For ``q = 0.99`` at 99% confidence
    this gives 459 samples (the number in the LoadGen docs).

    Args:
        q: percentile as a fraction in ``(0, 1)``.
        confidence: confidence level in ``(0, 1)``.

    Raises:
        ValueError: arguments out of range.
    """
    if not 0.0 < q < 1.0 or not 0.0 < confidence < 1.0:
        raise ValueError("q and confidence must be in (0, 1)")
    return int(math.ceil(math.log(1.0 - confidence) / math.log(q)))


MEDIAN_CI_CONFIDENCE = 0.95
"""Confidence of the median's interval (:func:`median_interval`)."""


def median_interval(samples_ms: Sequence[float] | np.ndarray,
                    confidence: float = MEDIAN_CI_CONFIDENCE) -> tuple[float, float] | None:
    """Distribution-free confidence interval of the median, in the samples' unit (ms).

    The order-statistics interval ``[x(j), x(k)]`` of the sorted samples with
    ``j, k = n/2 -+ z sqrt(n)/2`` (1-based ranks, rounded outwards; the normal
    approximation of the binomial ranks, Conover, *Practical Nonparametric Statistics*,
    3rd ed., 1999, section 3.2). It assumes independent samples only, no distribution:
    heavy tails (outliers) that inflate the coefficient of variation barely widen it,
    and it narrows as ``1 / sqrt(n)`` with more samples, which a CV does not.

    Args:
        samples_ms: the samples (any order), at least 1.
        confidence: in ``(0, 1)``.

    Returns:
        ``(low, high)``, or ``None`` for fewer than 6 samples (the interval would be the
        whole range).

    Raises:
        ValueError: ``confidence`` out of range.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    arr = np.sort(np.asarray(samples_ms, dtype=np.float64))
    n = int(arr.size)
    if n < 6:
        return None
    z = statistics.NormalDist().inv_cdf((1.0 + confidence) / 2.0)
    half = z * math.sqrt(n) / 2.0
    j = max(1, int(math.floor(n / 2.0 - half)))
    k = min(n, int(math.ceil(n / 2.0 + half + 1.0)))
    return float(arr[j - 1]), float(arr[k - 1])


def median_relative_halfwidth(samples_ms: Sequence[float] | np.ndarray,
                              confidence: float = MEDIAN_CI_CONFIDENCE) -> float | None:
    """Half the width of :func:`median_interval` over the median (a ratio: 0.05 means
    the median is known to +-5%), or ``None`` when the interval is undefined or the
    median is not positive."""
    ci = median_interval(samples_ms, confidence)
    if ci is None:
        return None
    med = float(np.median(np.asarray(samples_ms, dtype=np.float64)))
    if med <= 0:
        return None
    return (ci[1] - ci[0]) / 2.0 / med


AUTOCORRELATION_WARN = 0.5
"""Lag-1 autocorrelation of a time-ordered series above which its samples are not
independent: a slow drift (a host whose speed wanders, co-tenants, frequency changes).
Our threshold from the advise validation (docs/advise.md): the per-execution excess of
ONNX Runtime serving runs had a median of 0.12 per run (up to 0.50) on a quiet
development CPU and 0.61 (up to 0.87) on a host whose CPU speed drifted; pooled over a
calibration run, 0.13 and 0.54."""


def lag1_autocorrelation(series: Sequence[float] | np.ndarray) -> float | None:
    """Lag-1 sample autocorrelation ``sum((x_t - m)(x_{t+1} - m)) / sum((x_t - m)^2)``
    of a time-ordered series (Box & Jenkins, "Time Series Analysis", the standard
    estimator), in ``[-1, 1]``.

    Returns:
        ``None`` when fewer than 3 samples or the series is constant.
    """
    x = np.asarray(series, dtype=np.float64)
    if x.size < 3:
        return None
    d = x - x.mean()
    den = float(np.dot(d, d))
    if den <= 0.0:
        return None
    return float(np.dot(d[1:], d[:-1]) / den)


def circular_block_indices(n_source: int, n_out: int, block: int,
                           rng: np.random.Generator) -> np.ndarray:
    """Indices of one circular block resample (Politis & Romano 1992, "A circular
    block-resampling procedure for stationary data").

    Blocks of ``block`` consecutive indices of a series of length ``n_source``, each
    starting at a uniformly drawn position and wrapping around its end (so every index is
    equally likely), are concatenated and cut to ``n_out``. Unlike independent draws,
    this keeps what neighbouring samples share (a slow drift of a host's speed, a
    process-wide stall that delays many consecutive requests) inside each block.

    Args:
        n_source: length of the series, >= 1.
        n_out: number of indices wanted, >= 0.
        block: block length, >= 1 (1: independent draws; clipped to ``n_source``).
        rng: the NumPy generator to draw the block starts from.

    Returns:
        int64 array of shape ``[n_out]`` with values in ``[0, n_source)``.

    Raises:
        ValueError: ``n_source < 1``, ``n_out < 0`` or ``block < 1``.
    """
    if n_source < 1 or n_out < 0 or block < 1:
        raise ValueError("need n_source >= 1, n_out >= 0 and block >= 1")
    block = min(int(block), int(n_source))
    nb = -(-int(n_out) // block)
    starts = rng.integers(0, n_source, size=nb)
    idx = (starts[:, None] + np.arange(block)).reshape(-1)[:n_out]
    return idx % n_source


def stability_findings(samples_ms: Sequence[float] | np.ndarray,
                       stats: LatencyStats | None = None,
                       where: str | None = None) -> list[Finding]:
    """pyperf-style stability warnings for one sample set, each with a remedy.

    Codes: ``too-few-samples``, ``unstable-cv``, ``min-far-below-median``,
    ``drift``, ``p99-not-certified``, ``outliers``.
    """
    arr = np.asarray(samples_ms, dtype=np.float64)
    st = stats or summarize(arr)
    out: list[Finding] = []
    remedy_noise = ("close other programs, pin the process (taskset) and CPU frequency "
                    "(cpupower / nvidia-smi -lgc), and raise --min-duration")
    if st.count < MIN_SAMPLES_WARN:
        out.append(Finding(code="too-few-samples", where=where,
                           message=f"only {st.count} samples (fewer than {MIN_SAMPLES_WARN})",
                           remedy="raise --min-samples or --min-duration"))
    if st.cv > CV_WARN:
        out.append(Finding(code="unstable-cv", where=where,
                           message=(f"standard deviation is {st.cv:.0%} of the mean "
                                    f"(over {CV_WARN:.0%}): the result may be unstable"),
                           remedy=remedy_noise))
    if st.median_ms > 0 and st.min_ms < st.median_ms * (1 - MIN_VS_MEDIAN_WARN):
        out.append(Finding(code="min-far-below-median", where=where,
                           message=(f"minimum {st.min_ms:.3f} ms is more than "
                                    f"{MIN_VS_MEDIAN_WARN:.0%} below the median "
                                    f"{st.median_ms:.3f} ms"),
                           remedy="the machine's speed varies (turbo, throttling): " + remedy_noise))
    if arr.size >= 2 * MIN_SAMPLES_WARN:
        half = arr.size // 2
        m1, m2 = float(np.median(arr[:half])), float(np.median(arr[half:]))
        if min(m1, m2) > 0 and abs(m2 - m1) / min(m1, m2) > DRIFT_WARN:
            out.append(Finding(code="drift", where=where,
                               message=(f"median moved from {m1:.3f} ms (first half) to "
                                        f"{m2:.3f} ms (second half)"),
                               remedy="raise --warmup; check for thermal throttling or "
                                      "other load starting during the run"))
    need = min_samples_to_certify(0.99)
    if st.count < need:
        out.append(Finding(code="p99-not-certified", severity="info", where=where,
                           message=(f"{st.count} samples cannot certify p99 "
                                    f"(MLPerf early stopping needs >= {need})"),
                           remedy=f"raise --min-samples to {need} for a p99 you can gate on"))
    if st.mad_ms > 0:
        far = int(np.sum(arr > st.median_ms + 10 * st.mad_ms))
        if far > max(1, 0.01 * arr.size):
            out.append(Finding(code="outliers", where=where,
                               message=(f"{far} samples ({far / arr.size:.1%}) are more than "
                                        f"10 MADs above the median"),
                               remedy="look for periodic background work (GC, other "
                                      "processes, power management); " + remedy_noise))
    return out


@contextlib.contextmanager
def quiet_numerics() -> Iterator[None]:
    """Keep NumPy's floating-point RuntimeWarnings (overflow, invalid value) off the
    terminal for the ``with`` body: a command reports bad numbers in one ``error:`` line,
    never a warning with a source line."""
    import warnings

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
