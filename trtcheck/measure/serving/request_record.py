"""Per-request values of one load run in bounded memory, however long the run.

A run of 10^6 requests through ``trtcheck serve`` once kept every request's times until
it ended (about 1 KB each: 1 GB). :class:`RequestReservoir` keeps instead, per named
series (latency, each waterfall part, send lag, ...):

* every request's value in running sums (count, sum, sum of squares, min, max: the mean,
  standard deviation and extremes are exact);
* the values of every ``stride``-th request, aligned across the series, at most
  ``capacity`` of them: while the run has at most ``capacity`` requests, that is every
  request, and each statistic is computed from all of them exactly as before
  (:func:`trtcheck.stats.summarize`); when it has more, the stride doubles (every 2nd
  kept request is dropped) each time the kept values fill up, so the results file holds
  every ``stride``-th request in request order (``ServeRepeat.raw_stride``), and the
  statistics come from the histogram:
* a log-linear histogram of all values
  (HdrHistogram's bucketing: values in units of 0.1 us, the resolution results are
  rounded to; exact below 0.2048 ms, above it 1,024 buckets per power of two, so a
  percentile read from it is within 1/2048 (0.05 %) of the sample's value): its
  percentiles and median absolute deviation, and the exact mean, standard deviation and
  extremes from the running sums.

Memory: ``capacity`` x series floats, :data:`FLUSH_EVERY` queued requests and
:data:`MAX_BUCKETS` counts per series and sign: a few MB whatever the count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from trtcheck import stats as tstats
from trtcheck.results.stats import LatencyStats

#: Values kept per series (every stride-th request's), as the results files keep.
DEFAULT_CAPACITY = 100_000
#: Units per ms in the histogram (0.1 us: results round per-request values to 4
#: decimals of a ms).
UNITS_PER_MS = 10_000
#: Sub-bucket bits: values below 2**SUB_BITS units are counted exactly; above, each power
#: of two has 2**(SUB_BITS - 1) buckets.
SUB_BITS = 11
#: Histogram size per sign (covers values up to 2**63 units).
MAX_BUCKETS = (1 << SUB_BITS) + (64 - SUB_BITS) * (1 << (SUB_BITS - 1))
#: Values staged per series before they are added to the histogram at once.
FLUSH_EVERY = 4096


def _bucket_index(units: np.ndarray) -> np.ndarray:
    """Histogram bucket of each non-negative integer value (int64 array)."""
    u = units.astype(np.int64)
    idx = u.copy()
    big = u >= (1 << SUB_BITS)
    if big.any():
        ub = u[big]
        _, bl = np.frexp(ub.astype(np.float64))  # bit length (exact below 2**53)
        bl = bl.astype(np.int64)
        # frexp rounds values at the top of a power of two up: correct the bit length
        bl = np.where((ub >> (bl - 1)) == 0, bl - 1, bl)
        e = bl - SUB_BITS
        mant = ub >> e  # in [2**(SUB_BITS-1), 2**SUB_BITS)
        idx[big] = ((1 << SUB_BITS) + (e - 1) * (1 << (SUB_BITS - 1))
                    + (mant - (1 << (SUB_BITS - 1))))
    return np.minimum(idx, MAX_BUCKETS - 1)


def _bucket_value_units(idx: np.ndarray) -> np.ndarray:
    """The middle of each bucket, in units (float64)."""
    idx = idx.astype(np.int64)
    out = idx.astype(np.float64)
    big = idx >= (1 << SUB_BITS)
    if big.any():
        j = idx[big] - (1 << SUB_BITS)
        e = j // (1 << (SUB_BITS - 1)) + 1
        mant = j % (1 << (SUB_BITS - 1)) + (1 << (SUB_BITS - 1))
        lo = mant.astype(np.float64) * np.exp2(e)
        out[big] = lo + (np.exp2(e) - 1) / 2
    return out


class _Series:
    """Running sums and the histogram of one series."""

    __slots__ = ("count", "total", "total_sq", "lo", "hi", "pos", "neg")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.total_sq = 0.0
        self.lo = math.inf
        self.hi = -math.inf
        self.pos = np.zeros(MAX_BUCKETS, dtype=np.int64)
        self.neg = np.zeros(MAX_BUCKETS, dtype=np.int64)

    def add(self, v: np.ndarray) -> None:
        """Values (1-D float64, finite)."""
        self.count += int(v.size)
        self.total += float(v.sum())
        self.total_sq += float(np.dot(v, v))
        self.lo = min(self.lo, float(v.min()))
        self.hi = max(self.hi, float(v.max()))
        units = np.clip(np.rint(v * UNITS_PER_MS), -(2.0 ** 62), 2.0 ** 62)
        p = units >= 0
        if p.any():
            self.pos += np.bincount(_bucket_index(units[p]), minlength=MAX_BUCKETS)
        if not p.all():
            self.neg += np.bincount(_bucket_index(-units[~p]), minlength=MAX_BUCKETS)

    def distribution(self) -> tuple[np.ndarray, np.ndarray]:
        """``(values_ms ascending, counts)`` of the histogram's non-empty buckets."""
        ni = np.nonzero(self.neg)[0][::-1]
        pi = np.nonzero(self.pos)[0]
        vals = np.concatenate([-_bucket_value_units(ni), _bucket_value_units(pi)])
        counts = np.concatenate([self.neg[ni], self.pos[pi]])
        return vals / UNITS_PER_MS, counts


def _weighted_percentile(vals: np.ndarray, counts: np.ndarray, q: float,
                         method: str) -> float:
    """Percentile ``q`` of the values ``vals`` (ascending), each repeated ``counts``
    times, by ``method`` (``linear``: Hyndman & Fan type 7; ``nearest-rank``: type 1)."""
    cum = np.cumsum(counts)
    n = int(cum[-1])

    def at(rank: int) -> float:  # the value of the 0-based rank-th smallest sample
        return float(vals[int(np.searchsorted(cum, rank, side="right"))])

    if method == "nearest-rank":
        return at(max(0, math.ceil(q * n) - 1))
    h = (n - 1) * q
    k = math.floor(h)
    lo = at(k)
    hi = at(min(k + 1, n - 1))
    return lo + (h - k) * (hi - lo)


class RequestReservoir:
    """Per-request values of named series in bounded memory (module docstring).

    :meth:`add` only queues a request's values (a tuple append, well under a
    microsecond, so the load generator's loop is not slowed); they are folded in, with
    NumPy, every :data:`FLUSH_EVERY` requests and before any statistic is read.

    Args:
        names: the series, in the order :meth:`add` takes their values.
        capacity: most requests whose values are kept (>= 2).
    """

    def __init__(self, names: Sequence[str], capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 2:
            raise ValueError("capacity must be >= 2")
        self.names = tuple(names)
        self.capacity = int(capacity)
        self.stride = 1
        self._flushed = 0
        self._rows: list[Sequence[float]] = []
        self._kept: list[np.ndarray] = []  # chunks of rows (requests x series)
        self._kept_rows = 0
        self._series = [_Series() for _ in self.names]

    def add(self, values: Sequence[float]) -> None:
        """One request's values, one per series, in :attr:`names` order (finite)."""
        self._rows.append(values)
        if len(self._rows) >= FLUSH_EVERY:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        a = np.asarray(self._rows, dtype=np.float64).reshape(len(self._rows),
                                                             len(self.names))
        self._rows = []
        first = self._flushed
        self._flushed += a.shape[0]
        for j, s in enumerate(self._series):
            s.add(a[:, j])
        idx = np.arange(first, self._flushed)
        sel = a[idx % self.stride == 0]
        if sel.size:
            self._kept.append(sel)
            self._kept_rows += sel.shape[0]
        while self._kept_rows > self.capacity:
            whole = np.concatenate(self._kept)[::2]
            self.stride *= 2
            self._kept = [whole]
            self._kept_rows = whole.shape[0]

    def merge(self, other: RequestReservoir) -> None:
        """Fold in another reservoir of the same series (e.g. another load process's):
        running sums and histograms add exactly; the kept requests are both sets
        together, halved (every 2nd dropped) while more than :attr:`capacity`, and
        statistics are read from the histogram from then on when either dropped any or
        the two together are more than the capacity.

        Raises:
            ValueError: other series.
        """
        if other.names != self.names:
            raise ValueError("cannot merge reservoirs of different series")
        self._flush()
        other._flush()
        for mine, theirs in zip(self._series, other._series):
            mine.count += theirs.count
            mine.total += theirs.total
            mine.total_sq += theirs.total_sq
            mine.lo = min(mine.lo, theirs.lo)
            mine.hi = max(mine.hi, theirs.hi)
            mine.pos += theirs.pos
            mine.neg += theirs.neg
        self._flushed += other._flushed
        self.stride = max(self.stride, other.stride)
        self._kept += other._kept
        self._kept_rows += other._kept_rows
        if self._kept_rows > self.capacity and self.stride == 1:
            self.stride = 2  # not every request kept any more: histogram statistics
        while self._kept_rows > self.capacity:
            whole = np.concatenate(self._kept)[::2]
            self.stride *= 2
            self._kept = [whole]
            self._kept_rows = whole.shape[0]

    def shift(self, name: str, by: float) -> None:
        """Subtract ``by`` from every value of the series ``name`` (times moved onto
        another clock): the kept values, the running sums and extremes exactly; the
        histogram is left as it was, so read no percentile of a shifted series."""
        self._flush()
        j = self.names.index(name)
        for chunk in self._kept:
            chunk[:, j] -= by
        s = self._series[j]
        if s.count:
            s.total_sq += -2 * by * s.total + s.count * by * by
            s.total -= by * s.count
            s.lo -= by
            s.hi -= by

    @property
    def count(self) -> int:
        """Requests added."""
        return self._flushed + len(self._rows)

    @property
    def exact(self) -> bool:
        """Whether every request's values are kept (statistics computed from all)."""
        self._flush()
        return self.stride == 1

    def kept_rows(self, order_by: str | None = None) -> np.ndarray:
        """The kept requests' values, one row per request, one column per series
        (float64, ``[kept, len(names)]``), sorted by the series ``order_by`` when given
        (stable)."""
        self._flush()
        if not self._kept:
            return np.zeros((0, len(self.names)))
        rows = np.concatenate(self._kept)
        if order_by is not None:
            rows = rows[np.argsort(rows[:, self.names.index(order_by)], kind="stable")]
        return rows

    def kept(self, name: str) -> list[float]:
        """The kept values of ``name`` (every :attr:`stride`-th request's, in order)."""
        self._flush()
        j = self.names.index(name)
        if not self._kept:
            return []
        return np.concatenate(self._kept)[:, j].tolist()

    def _check(self, name: str) -> _Series:
        self._flush()
        s = self._series[self.names.index(name)]
        if not s.count:
            raise ValueError(f"no values of {name}")
        return s

    def mean(self, name: str) -> float:
        """Mean of every value of ``name`` (exact)."""
        s = self._check(name)
        if self.exact:
            return float(np.mean(self.kept(name)))
        return s.total / s.count

    def percentile(self, name: str, q: float, method: str | None = None) -> float:
        """Percentile ``q`` (fraction) of every value of ``name``: exact while
        :attr:`exact`, else from the histogram (within 0.05 %)."""
        method = (method or tstats.current_percentile_method())
        s = self._check(name)
        if self.exact:
            return tstats.percentile(self.kept(name), q, method)
        vals, counts = s.distribution()
        return min(max(_weighted_percentile(vals, counts, q, method), s.lo), s.hi)

    def summarize(self, name: str, method: str | None = None) -> LatencyStats:
        """:func:`trtcheck.stats.summarize` of every value of ``name``: itself while
        :attr:`exact`; else mean, standard deviation (ddof 1), min and max exact from the
        running sums, percentiles and the median absolute deviation from the histogram.
        """
        method = (method or tstats.current_percentile_method())
        s = self._check(name)
        if self.exact:
            return tstats.summarize(self.kept(name), method)
        vals, counts = s.distribution()
        q = {p: min(max(_weighted_percentile(vals, counts, p / 100, method), s.lo), s.hi)
             for p in (25, 75, 90, 95, 99)}
        median = min(max(_weighted_percentile(vals, counts, 0.5, "linear"), s.lo), s.hi)
        mean = s.total / s.count
        var = max(0.0, (s.total_sq - s.count * mean * mean) / (s.count - 1)) \
            if s.count > 1 else 0.0
        std = math.sqrt(var)
        dev = np.abs(vals - median)
        order = np.argsort(dev, kind="stable")
        mad = _weighted_percentile(dev[order], counts[order], 0.5, "linear")
        return LatencyStats(
            percentile_method=method,  # type: ignore[arg-type]
            count=s.count, mean_ms=mean, median_ms=median,
            min_ms=s.lo, max_ms=s.hi, std_ms=std, p25_ms=q[25], p75_ms=q[75],
            p90_ms=q[90], p95_ms=q[95], p99_ms=q[99], mad_ms=mad, iqr_ms=q[75] - q[25],
            cv=(std / mean) if mean > 0 else 0.0)
