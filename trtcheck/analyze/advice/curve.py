"""The batch-latency curve T(b): parsing, checking, interpolation and the linear fit.

T(b) is the time one execution of a batch of ``b`` requests occupies an instance, in ms.
It comes from a bench run (median per batch size, raw samples kept for the spread), or
from the command line (``1:0.29,8:1.02,16:1.73``).

The linear model ``T(b) = tau0 + alpha * b`` (a fixed per-execution cost ``tau0`` and a
per-sample cost ``alpha``) is the usual first-order model of batched inference; Clipper
(Crankshaw et al., NSDI 2017, adaptive batching) observes batch latency close to linear
in batch size and builds its batch-size control on that. It is a model, not a law: the
fit quality (R^2, largest relative residual) is reported with every use, and the
simulator uses the measured points themselves (piecewise-linear), not the line.
Every formula in :mod:`trtcheck.analyze.advice.queueing` is written in terms of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from trtcheck.errors import InputError
from trtcheck.results.consistency import MAX_BATCH_SIZE

MONOTONE_NOISE_TOLERANCE = 0.5
"""A measured T(b) may dip below T(b') for b > b' by up to 50% before the curve is
rejected as a broken measurement; smaller dips are removed by a weighted isotonic
regression (:func:`isotonic_fit`) and reported in :attr:`LatencyCurve.notes`. A
launch-bound GPU curve is flat, so its points differ by the host's noise alone: bench
points of eager PyTorch ResNet-18 fp16 on an H200 dipped 7% (T(2) 2.31 ms after T(1)
2.49 ms) and, on a host whose CPU speed drifted, 17-30% (T(8) 2.39 ms after T(4) 3.41 ms;
docs/advise.md). Our thresholds; it was 3% (and a running maximum) until the GPU
measurements. A curve given by hand gets no tolerance: it must be non-decreasing."""

PER_SAMPLE_RISE_TOLERANCE = 0.03
"""T(b)/b may rise by up to 3% between measured batch sizes (timing noise) before the
advice reports that batching past that size gives no throughput (our threshold)."""

UNSTABLE_DIP = 0.15
"""A dip larger than this is more than timing noise: the note asks for a re-measurement
on a quiet machine (our threshold)."""


@dataclass(frozen=True)
class LinearFit:
    """Least-squares fit of ``T(b) = tau0_ms + alpha_ms_per_sample * b``.

    Attributes:
        tau0_ms: fixed cost per execution, ms (clamped to >= 0; see ``notes``).
        alpha_ms_per_sample: cost per batch item, ms (clamped to >= 0).
        r2: coefficient of determination of the fit on the medians; ``nan`` with fewer
            than 3 points (a line through 2 points is exact, through 1 undetermined).
        max_rel_residual: largest ``|T_fit(b) - T(b)| / T(b)`` over the points.
        n_points: number of batch sizes fitted.
        notes: what was assumed (single point, clamping, a knee).
        knee: the two-segment fit when the curve has a knee the line misses
            (:func:`fit_knee`), else ``None``; the closed-form rules then use its
            segment below the knee.
    """

    tau0_ms: float
    alpha_ms_per_sample: float
    r2: float
    max_rel_residual: float
    n_points: int
    notes: tuple[str, ...] = ()
    knee: KneeFit | None = None

    def t_ms(self, b: float) -> float:
        """Fitted T(b) in ms."""
        return self.tau0_ms + self.alpha_ms_per_sample * b


@dataclass(frozen=True)
class LatencyCurve:
    """T(b) at measured batch sizes.

    Attributes:
        batch_sizes: strictly increasing batch sizes, each >= 1 (int array, shape [n]).
        median_ms: T(b) per batch size in ms (float array, shape [n]), non-decreasing.
        samples_ms: raw execution times per batch size (ms), when measured; used by the
            simulator to reproduce the spread. Empty for a hand-given curve.
        source: where the curve came from, in words (``"--latency-curve"``,
            ``"results.json bench run onnxruntime-fp32"``).
        notes: corrections applied (flattened dips) and other remarks.
    """

    batch_sizes: np.ndarray
    median_ms: np.ndarray
    samples_ms: Mapping[int, np.ndarray] = field(default_factory=dict)
    source: str = "given"
    notes: tuple[str, ...] = ()

    @property
    def t1_ms(self) -> float:
        """T(1) in ms: measured, or, when the curve starts at a larger batch size (a serve
        run that only formed large batches), extrapolated along the linear fit's slope
        (:meth:`t_ms`; :func:`make_curve` notes it)."""
        if int(self.batch_sizes[0]) == 1:
            return float(self.median_ms[0])
        return float(self.t_ms(1))

    def with_notes(self, notes: Sequence[str]) -> LatencyCurve:
        """The same curve with ``notes`` added after its own."""
        return replace(self, notes=tuple(self.notes) + tuple(notes))

    @property
    def max_batch_measured(self) -> int:
        """Largest batch size on the curve."""
        return int(self.batch_sizes[-1])

    def points(self) -> list[tuple[int, float]]:
        """``[(b, T(b) ms), ...]``."""
        return [(int(b), float(t)) for b, t in zip(self.batch_sizes, self.median_ms)]

    def t_ms(self, b: int | float | np.ndarray, fit: LinearFit | None = None) -> np.ndarray | float:
        """T(b) in ms: piecewise-linear between measured points.

        Below the smallest measured size, and above the largest, the linear fit's slope
        is used from the nearest measured point (``fit`` defaults to :func:`fit_linear`),
        so an extrapolated T never decreases. Callers that extrapolate must say so (see
        :meth:`is_extrapolated`).

        Args:
            b: batch size(s) >= 1.
        """
        fit = fit or fit_linear(self)
        bs = self.batch_sizes.astype(np.float64)
        ts = self.median_ms
        x = np.asarray(b, dtype=np.float64)
        y = np.interp(x, bs, ts)
        slope = fit.alpha_ms_per_sample
        y = np.where(x > bs[-1], ts[-1] + slope * (x - bs[-1]), y)
        y = np.where(x < bs[0], np.maximum(ts[0] - slope * (bs[0] - x), 1e-9), y)
        return float(y) if np.ndim(y) == 0 else y

    def is_extrapolated(self, b: int) -> bool:
        """Whether T(b) lies outside the measured batch sizes."""
        return b > self.max_batch_measured or b < int(self.batch_sizes[0])

    def spread_factors(self, b: int) -> np.ndarray | None:
        """Raw samples of the nearest measured batch size divided by their median.

        Returns ``None`` when no raw samples are kept. The simulator multiplies T(b) by
        factors drawn from this array (the measured relative spread).
        """
        if not self.samples_ms:
            return None
        keys = np.array(sorted(self.samples_ms))
        k = int(keys[np.argmin(np.abs(np.log(keys) - math.log(max(b, 1))))])
        s = np.asarray(self.samples_ms[k], dtype=np.float64)
        med = float(np.median(s))
        return s / med if med > 0 else None


MAX_CURVE_TIME_MS = 1e7
"""Largest batch time a curve may hold, ms (2.8 hours: the bound every duration option
has; longer is no inference latency and overflows the queueing arithmetic)."""


def make_curve(points: Iterable[tuple[int, float]], *, source: str = "given",
               samples_ms: Mapping[int, Sequence[float]] | None = None,
               noise_tolerance: float = 0.0) -> LatencyCurve:
    """Build and check a :class:`LatencyCurve`.

    Args:
        points: ``(batch_size, T_ms)`` pairs, any order, batch sizes unique integers in
            ``1..MAX_BATCH_SIZE`` (2**31 - 1), times finite, > 0 and at most
            :data:`MAX_CURVE_TIME_MS`.
        source: where the points came from (used in messages).
        samples_ms: raw samples per batch size (ms), optional.
        noise_tolerance: relative dip allowed before a non-monotone curve is an error
            (0 for hand-given curves; :data:`MONOTONE_NOISE_TOLERANCE` for measured ones).

    Raises:
        InputError: empty curve, batch size < 1 or repeated, time <= 0 or not finite,
            or T(b) decreasing with b beyond ``noise_tolerance``.
    """
    pts = list(points)
    if not pts:
        raise InputError(f"the latency curve from {source} is empty",
                         "give at least T(1), e.g. --latency-curve 1:0.29,8:1.02")
    seen: set[int] = set()
    for b, t in pts:
        if not isinstance(b, (int, np.integer)) or not 1 <= b <= MAX_BATCH_SIZE:
            raise InputError(f"batch size {b!r} in the latency curve from {source} must be "
                             f"an integer >= 1 and <= {MAX_BATCH_SIZE}",
                             "write batch:milliseconds pairs, e.g. 1:0.29")
        if b in seen:
            raise InputError(f"batch size {b} appears twice in the latency curve from {source}",
                             "give each batch size once")
        seen.add(int(b))
        if not (isinstance(t, (int, float, np.floating)) and math.isfinite(t)
                and 0 < t <= MAX_CURVE_TIME_MS):
            raise InputError(f"T({b}) = {t!r} ms in the latency curve from {source} must be "
                             f"a positive number of milliseconds <= {MAX_CURVE_TIME_MS:g}",
                             "e.g. 1:0.29 for 0.29 ms")
    pts.sort()
    bs = np.array([p[0] for p in pts], dtype=np.int64)
    ts = np.array([float(p[1]) for p in pts], dtype=np.float64)
    notes = check_monotone(pts, source=source, noise_tolerance=noise_tolerance)
    raw = {int(k): np.asarray(v, dtype=np.float64) for k, v in (samples_ms or {}).items()
           if len(v) > 0}
    if notes:
        weights = [float(raw[int(b)].size) if int(b) in raw else 1.0 for b in bs]
        fitted = np.asarray(isotonic_fit(weights, ts.tolist()), dtype=np.float64)
        moved = [f"T({int(b)}) {t:.4g} -> {f:.4g} ms" for b, t, f in zip(bs, ts, fitted)
                 if abs(f - t) > 1e-12]
        notes.append("made non-decreasing by a weighted isotonic regression (weights: "
                     "samples per batch size): " + ", ".join(moved))
        ts = fitted
    curve = LatencyCurve(bs, ts, raw, source, tuple(notes))
    if int(bs[0]) > 1:
        curve = curve.with_notes([
            f"T(1) was not measured (the curve starts at batch {int(bs[0])}): "
            f"{curve.t1_ms:.4g} ms is extrapolated along the fit's slope; measure batch 1 "
            "(trtcheck bench MODEL --batch 1,...) to decide on batching from data"])
    return curve


def check_monotone(points: Iterable[tuple[int, float]], *, source: str,
                   noise_tolerance: float = 0.0) -> list[str]:
    """The one rule for a batch-latency curve's shape: T(b) must not decrease with b.

    Used by :func:`make_curve` (``advise --latency-curve``, measured curves) and by
    ``serve --synthetic-curve``.

    Args:
        points: ``(batch_size, T_ms)`` pairs (any order), times finite and >= 0.
        source: where the points came from (used in messages).
        noise_tolerance: relative dip allowed before the curve is rejected
            (0 for hand-given curves; :data:`MONOTONE_NOISE_TOLERANCE` for measured ones).

    Returns:
        notes on the dips within the tolerance (each to be flattened by the caller).

    Raises:
        InputError: T(b) decreasing with b beyond ``noise_tolerance``.
    """
    pts = sorted((int(b), float(t)) for b, t in points)
    bs = [b for b, _ in pts]
    ts = np.array([t for _, t in pts], dtype=np.float64)
    notes: list[str] = []
    for i in range(1, len(ts)):
        prev = float(np.max(ts[:i]))
        if ts[i] < prev:
            dip = (prev - ts[i]) / prev
            if dip > noise_tolerance:
                raise InputError(
                    f"the latency curve from {source} is not monotone: T({bs[i]}) = "
                    f"{ts[i]:.4g} ms is below T({bs[int(np.argmax(ts[:i]))]}) = {prev:.4g} ms",
                    "a larger batch cannot take less time; re-measure (the machine may be "
                    "noisy) or correct the curve")
            notes.append(f"T({bs[i]}) = {ts[i]:.4g} ms dipped {dip:.1%} below a smaller "
                         f"batch's {prev:.4g} ms" + (
                             " (timing noise)" if dip <= UNSTABLE_DIP else
                             ": more than timing noise; re-measure on a quiet machine, "
                             "pinned (taskset), after a warm-up"))
    return notes


def isotonic_fit(weights: Sequence[float], values: Sequence[float]) -> list[float]:
    """Weighted least-squares non-decreasing fit of ``values`` (in order), by the
    pool-adjacent-violators algorithm (Ayer et al. 1955; Barlow et al., "Statistical
    Inference under Order Restrictions", 1972). Weights > 0; same length as values."""
    blocks: list[list[float]] = []  # [weighted mean, weight, count]
    for w, v in zip(weights, values):
        blocks.append([float(v), float(w), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    out: list[float] = []
    for v, _, n in blocks:
        out.extend([v] * int(n))
    return out


def parse_curve_text(text: str) -> LatencyCurve:
    """Parse ``"1:0.29,8:1.02,16:1.73"`` (batch:milliseconds, comma-separated).

    Raises:
        InputError: malformed text or a curve :func:`make_curve` rejects.
    """
    pts: list[tuple[int, float]] = []
    hint = "write batch:milliseconds pairs, e.g. --latency-curve 1:0.29,8:1.02,16:1.73"
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part.count(":") != 1:
            raise InputError(f"cannot read {part!r} in --latency-curve", hint)
        b_txt, t_txt = part.split(":")
        try:
            b = int(b_txt)
            t = float(t_txt)
        except ValueError:
            raise InputError(f"cannot read {part!r} in --latency-curve", hint) from None
        pts.append((b, t))
    return make_curve(pts, source="--latency-curve")


def curve_from_bench(run: object, noise_tolerance: float | None = None) -> LatencyCurve:
    """T(b) from a :class:`trtcheck.results.BenchRun`: median and raw samples per batch.

    Dips up to ``noise_tolerance`` (default :data:`MONOTONE_NOISE_TOLERANCE`) are
    flattened by the weighted isotonic regression (and noted); 1.0 accepts any dip.

    Raises:
        InputError: the run has no batches, or a dip beyond ``noise_tolerance``.
    """
    batches = getattr(run, "batches", [])
    label = getattr(run, "label", "?")
    pts = [(int(b.batch_size), float(b.stats.median_ms)) for b in batches]
    samples = {int(b.batch_size): b.samples_ms for b in batches}
    return make_curve(pts, source=f"bench run {label!r}", samples_ms=samples,
                      noise_tolerance=(MONOTONE_NOISE_TOLERANCE if noise_tolerance is None
                                       else noise_tolerance))


KNEE_MIN_POINTS = 4
"""Batch sizes needed to fit a knee: two lines joined at a measured batch size have 3
free parameters, so 4 points leave one degree of freedom."""

KNEE_LINEAR_RESIDUAL = 0.10
"""A knee is looked for only when one straight line misses some point by more than this
share of T(b) (our threshold: timing noise of a median is a few percent)."""

KNEE_GAIN = 0.5
"""A knee is kept only when it at least halves the largest relative residual of the
straight line (our threshold: a real knee fits far better, noise does not)."""


@dataclass(frozen=True)
class KneeFit:
    """Two least-squares lines joined at a knee ``b_k`` (a measured batch size):
    ``T(b) = tau0_ms + alpha_ms_per_sample * b`` up to ``b_k`` and a steeper
    ``alpha_above_ms_per_sample`` beyond (a GPU that is launch-bound below the knee and
    compute-bound above it).

    Attributes:
        knee_batch: the batch size where the slope changes.
        tau0_ms: fixed cost per execution of the segment below the knee, ms (>= 0).
        alpha_ms_per_sample: per-sample cost below the knee, ms (>= 0).
        alpha_above_ms_per_sample: per-sample cost above the knee, ms.
        max_rel_residual: largest ``|T_fit(b) - T(b)| / T(b)`` over the points.
    """

    knee_batch: int
    tau0_ms: float
    alpha_ms_per_sample: float
    alpha_above_ms_per_sample: float
    max_rel_residual: float

    def t_ms(self, b: float) -> float:
        """Fitted T(b) in ms."""
        return (self.tau0_ms + self.alpha_ms_per_sample * b
                + (self.alpha_above_ms_per_sample - self.alpha_ms_per_sample)
                * max(0.0, b - self.knee_batch))


def fit_knee(batch_sizes: np.ndarray, times_ms: np.ndarray,
             linear_max_rel_residual: float) -> KneeFit | None:
    """The two-segment (hinge) least-squares fit of T(b) with its knee at a measured
    batch size, or ``None`` when the curve has no knee a straight line misses.

    For each interior batch size ``k`` (at least two points up to it, one beyond), the
    continuous hinge ``T(b) = c + a1 b + d max(0, b - k)`` is fitted by ordinary least
    squares (``numpy.linalg.lstsq``); the ``k`` with the smallest squared error wins. It
    is kept only when the straight line misses some point by more than
    :data:`KNEE_LINEAR_RESIDUAL`, the hinge at least halves that largest relative
    residual (:data:`KNEE_GAIN`), the slope rises at the knee (``d > 0``) and the lower
    segment's fixed cost and slope are not negative.

    Args:
        batch_sizes: batch sizes, increasing, shape ``[n]``.
        times_ms: T(b) at them, ms, shape ``[n]``.
        linear_max_rel_residual: the straight line's largest relative residual.
    """
    b = np.asarray(batch_sizes, dtype=np.float64)
    t = np.asarray(times_ms, dtype=np.float64)
    if b.size < KNEE_MIN_POINTS or linear_max_rel_residual <= KNEE_LINEAR_RESIDUAL:
        return None
    best: tuple[float, KneeFit] | None = None
    for i in range(1, b.size - 1):
        k = b[i]
        basis = np.column_stack([np.ones_like(b), b, np.maximum(0.0, b - k)])
        (c, a1, d), *_ = np.linalg.lstsq(basis, t, rcond=None)
        if d <= 0 or c < 0 or a1 < 0:
            continue
        pred = basis @ np.array([c, a1, d])
        sse = float(np.sum((pred - t) ** 2))
        fit = KneeFit(int(k), float(c), float(a1), float(a1 + d),
                      float(np.max(np.abs(pred - t) / t)))
        if best is None or sse < best[0]:
            best = (sse, fit)
    if best is None or best[1].max_rel_residual > KNEE_GAIN * linear_max_rel_residual:
        return None
    return best[1]


def fit_linear(curve: LatencyCurve) -> LinearFit:
    """Least-squares fit ``T(b) = tau0 + alpha * b`` over the curve's medians.

    Ordinary least squares (``numpy.linalg.lstsq``) on the points as given (no
    weighting). With one point the fit is undetermined: ``alpha = 0`` and
    ``tau0 = T(b0)`` is the most favourable assumption for batching (a batch costs no
    more than one request), and is noted. Negative coefficients (curvature in the
    data) are clamped to 0 and the other refitted.

    Returns:
        :class:`LinearFit` with R^2 (``nan`` below 3 points) and the largest relative
        residual.
    """
    b = curve.batch_sizes.astype(np.float64)
    t = curve.median_ms
    notes: list[str] = []
    if b.size == 1:
        notes.append(f"one point only: assumed T(b) = T({int(b[0])}) for every b "
                     "(alpha = 0, the best case for batching)")
        return LinearFit(float(t[0]), 0.0, math.nan, 0.0, 1, tuple(notes))
    a_mat = np.column_stack([np.ones_like(b), b])
    (tau0, alpha), *_ = np.linalg.lstsq(a_mat, t, rcond=None)
    if alpha < 0:
        alpha = 0.0
        tau0 = float(np.mean(t))
        notes.append("fitted per-sample cost was negative; clamped to 0")
    if tau0 < 0:
        tau0 = 0.0
        alpha = float(np.dot(b, t) / np.dot(b, b))
        notes.append("fitted fixed cost was negative; clamped to 0 (line through origin)")
    pred = tau0 + alpha * b
    ss_res = float(np.sum((t - pred) ** 2))
    ss_tot = float(np.sum((t - t.mean()) ** 2))
    r2 = (1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0) if b.size >= 3 else math.nan
    rel = float(np.max(np.abs(pred - t) / t))
    knee = fit_knee(b, t, rel)
    if knee is not None:
        notes.append(
            f"T(b) has a knee at b={knee.knee_batch}: up to it T(b) = {knee.tau0_ms:.4g} ms + "
            f"{knee.alpha_ms_per_sample:.4g} ms x b, beyond it {knee.alpha_above_ms_per_sample:.4g} "
            f"ms per sample (largest residual {knee.max_rel_residual:.1%}, against "
            f"{rel:.1%} for one line, whose fixed cost is {float(tau0):.4g} ms); the rules use "
            "the segment below the knee, where batches form")
    return LinearFit(float(tau0), float(alpha), r2, rel, int(b.size), tuple(notes), knee)


def per_sample_findings(curve: LatencyCurve) -> list[str]:
    """Where the per-sample time T(b)/b rises with b (batching past that size costs more).

    Returns:
        one sentence per rise, e.g. ``"T(b)/b rises from 0.12 ms at b=16 to 0.13 ms at
        b=32"``; empty when T(b)/b is non-increasing (the normal case).
    """
    out: list[str] = []
    per = curve.median_ms / curve.batch_sizes
    for i in range(1, per.size):
        if per[i] > per[i - 1] * (1 + PER_SAMPLE_RISE_TOLERANCE):
            out.append(f"T(b)/b rises from {per[i - 1]:.4g} ms at b={curve.batch_sizes[i - 1]} "
                       f"to {per[i]:.4g} ms at b={curve.batch_sizes[i]}: batches above "
                       f"{curve.batch_sizes[i - 1]} give no throughput")
    return out
