"""The analysis of ``trtcheck tune``: calibration design, T(b) per instance count,
prediction intervals, and the pick.

**Calibration design** (:func:`calibration_window_us`, :func:`closed_loop_clients`): a
closed loop of ``B`` clients (the search's max batch) at one instance (T(b) up to ``B``),
the target Poisson rate at the fewest instances that carry it, twice (the per-request
delay, the batcher's overhead, the run-to-run drift), and the target rate at the largest
instance count searched (how instances that share a device slow each other at that
load).

**T(b) per instance count** (:func:`instance_curves`): T_1(b) from Triton's
``batch_stats`` of every one-instance run (pooled; isotonic); at ``n`` instances
``T_n(b) = f_n x T_1(b)``. ``f_n`` is measured where a run at ``n`` instances exists
(the weighted median of ``T_n(b) / T_1(b)`` over the batch sizes it ran, weights =
executions), otherwise interpolated in ``log n`` from the largest measured count
(:func:`contention_interp`), or :func:`assumed_contention` when there is none (stated,
and the interval widened by :data:`ASSUMED_CONTENTION_REL`).

**Prediction intervals** (:func:`interval`): see docs/advise.md, "Prediction
intervals".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from trtcheck.analyze.advice.curve import LatencyCurve, make_curve
from trtcheck.analyze.advice.live_calibration import (
    MAX_PER_BATCH_OVERHEAD_SHARE,
    LiveCalibration,
    calibrate,
    curve_from_batch_stats,
    observation_from_serve,
    rematch_request_delay,
)
from trtcheck.analyze.objectives import Objective
from trtcheck.analyze.advice.simulator import Candidate, ServiceModel, make_arrivals, simulate
from trtcheck.results.tune import (
    TuneCalibration,
    TuneInstanceCalibration,
    TuneInterval,
    TunePrediction,
)
from trtcheck.stats import percentile
from trtcheck.units import us_to_ms

Z_INTERVAL = 1.96
"""Normal quantile of the intervals' two-sided 95% level."""

DRIFT_FLOOR_REL = 0.05
"""Smallest run-to-run relative standard deviation used (two runs estimate a spread
poorly; 5% is below every drift seen on the dev CPU and the H200: 15-20% there)."""

ASSUMED_CONTENTION_PER_INSTANCE = 0.25
"""Extra T(b) share per doubling of the instance count when no multi-instance run was
measured (eager ResNet-18 on one H200: 2 instances ran each batch 1.1-1.3x slower, 4
instances 1.1-1.37x)."""

ASSUMED_CONTENTION_REL = 0.15
"""Relative standard deviation added to the interval of an instance count whose
contention was assumed or scaled from another count (the H200 factor's range)."""

EXTRAPOLATION_REL = 0.10
"""Relative standard deviation added where the max batch exceeds the calibrated sizes
(T(b) extrapolated along the fit's slope)."""

INFERRED_CONTENTION = ("interpolated", "extrapolated", "assumed")
"""Contention sources of an instance count that no live run calibrated
(:attr:`InstanceCurves.sources`): ``"interpolated"`` (between one instance and the
largest measured count, :func:`contention_interp`), ``"extrapolated"`` (above it, along
the same curve) and ``"assumed"`` (no multi-instance run, :func:`assumed_contention`).
Their intervals are widened by :data:`ASSUMED_CONTENTION_REL`."""

ELASTICITY_STEP = 0.10
"""Relative step of T(b) by which :func:`elasticity` differentiates a simulated
quantile (both simulations draw the same arrivals and service samples)."""

ELASTICITY_FLOOR = 0.5
"""Smallest elasticity taken for the configuration whose repeat measured the drift: a
quantile that barely moves with T(b) there (a run whose latency is mostly the window)
says little about how much T(b) drifted, so the drift is not scaled up by dividing by
a value near zero (our bound)."""

DRIFT_SCALE_MAX = 2.0
"""Largest factor by which a candidate's drift term exceeds the measured one: one
repeat pair is carried to other configurations by a local derivative, which says more
about the direction than the size of a large change (our bound, checked on the GPU
records: 2 and 3 cover the same measurements)."""

SEARCH_WINDOWS_US = (0.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0)
"""Windows searched (µs)."""

PREDICTION_REQUESTS = 8000
"""Requests simulated per candidate."""

DEFAULT_MAX_UTILISATION = 0.9


def closed_loop_clients(max_batch: int) -> int:
    """Clients of the calibration closed loop: ``max_batch`` (every client waits, so the
    queue fills a batch of the max size)."""
    return max(2, int(max_batch))


def calibration_window_us(rate_per_s: float, max_batch: int) -> float:
    """Window of the target-rate calibration run (µs): the time two more requests take
    to arrive at the rate, 0.5 to 2 ms (a window the search is likely to pick: the
    per-request delay and the batcher's overhead are calibrated near the answer; the
    closed loops give T(b) at the larger sizes)."""
    w_s = 2.0 / max(rate_per_s, 1e-9)
    return float(min(2000.0, max(500.0, round(w_s * 1e6, -2))))


def pooled_batch_stats(runs: Sequence[Any]) -> dict[int, tuple[int, float]]:
    """``{b: (executions, total compute ms)}`` over every repeat of every configuration
    of ``runs`` (:class:`~trtcheck.results.serve.ServeRun`). Sizes a repeat ran cold
    (:func:`~trtcheck.results.serve.cold_batch_sizes`) stay in, as measured: the backlog
    their one-time cost built is in the same run's latencies, and a T(b) without the cost
    leaves that backlog to the stall and queue fits (on the H200 records this made
    predictions worse); the run carries a ``cold-batch-sizes`` warning instead."""
    acc: dict[int, list[float]] = {}
    for run in runs:
        for c in run.configs:
            for r in c.repeats:
                for s in (r.server_stats.batch_stats if r.server_stats is not None else []):
                    a = acc.setdefault(int(s.batch_size), [0.0, 0.0])
                    a[0] += s.execution_count
                    a[1] += s.compute_input_ms + s.compute_infer_ms + s.compute_output_ms
    return {b: (int(v[0]), float(v[1])) for b, v in acc.items() if v[0] > 0}


def latency_floor_ms(run: Any) -> tuple[float, str] | None:
    """What one request takes at least on any configuration, from the first calibration
    run (a closed loop at one instance): the smaller of its fastest request and
    ``T(b) / b`` at the smallest batch size it executed (``T(1)`` itself when it ran
    batches of one; a batch of ``b`` never takes more than ``b`` requests alone, so
    ``T(1) >= T(b) / b``). Windows, more instances (contention) and queueing only add to
    it, so a P99 objective below it cannot be met. ``(floor, in words)``, or ``None``
    when the run holds neither an execution nor a request."""
    parts: list[tuple[float, str]] = []
    stats = pooled_batch_stats([run])
    if stats:
        b = min(stats)
        n, ms = stats[b]
        t = ms / n
        parts.append((t / b, f"T(1) {t:.3g} ms" if b == 1 else
                      f"T({b}) / {b} = {t / b:.3g} ms (no batch of 1 ran)"))
    lat = [x for c in run.configs for r in c.repeats for x in r.latencies_ms]
    if lat:
        parts.append((float(min(lat)), f"its fastest request {min(lat):.3g} ms"))
    if not parts:
        return None
    return min(p for p, _ in parts), ", ".join(w for _, w in parts)


def lowest_latency_floor_ms(runs: Sequence[Any]) -> tuple[float, str] | None:
    """:func:`latency_floor_ms` over every run of ``runs``, the lowest (``None`` when no
    run has one): a mean T(1) measured under one load is not a floor for a request under
    another (the demo ResNet-18 on a 2-core CPU: T(1) 41.3 ms in the closed loop, 35.8
    ms at the target rate, where P50 measured 39.9 ms), so every run so far bounds it."""
    found = [f for f in (latency_floor_ms(r) for r in runs) if f is not None]
    return min(found, key=lambda f: f[0]) if found else None


def run_instances(run: Any) -> int:
    """Instance count a run's (single) configuration ran with."""
    c = run.configs[0]
    return int(c.instances or 1)


def contention_ratio(curve_1: LatencyCurve, stats_n: dict[int, tuple[int, float]]) -> float:
    """Weighted median of ``T_n(b) / T_1(b)`` over the batch sizes of ``stats_n``
    (weights: executions); T_1 interpolated where it has no point."""
    rs, ws = [], []
    for b, (n, ms) in stats_n.items():
        if n <= 0:
            continue
        rs.append((ms / n) / float(curve_1.t_ms(b)))
        ws.append(float(n))
    if not rs:
        return 1.0
    order = np.argsort(rs)
    cw = np.cumsum(np.asarray(ws)[order])
    return float(np.asarray(rs)[order][int(np.searchsorted(cw, 0.5 * cw[-1]))])


def scaled_curve(curve: LatencyCurve, factor: float, source: str) -> LatencyCurve:
    """``curve`` with every T(b) multiplied by ``factor``."""
    return make_curve([(b, t * factor) for b, t in curve.points()], source=source)


@dataclass
class InstanceCurves:
    """T(b) per instance count and how each was obtained.

    ``idle_slowdown`` (:attr:`~trtcheck.analyze.advice.simulator.ServiceModel.idle_slowdown`,
    time constant :data:`IDLE_TAU_MS`) is the fitted slowdown of an execution on an
    instance that was idle; with it, ``curve_1`` is T(b) of a busy instance and the
    target-rate runs' T(b) were divided by their simulated idle factors
    (:func:`fit_idle_slowdown`). ``idle_fitted`` is the fit's value before any check set
    it aside, ``idle_closed_ratio`` the one-instance closed loop's T(b) over the fitted
    busy T(b) (:func:`closed_to_busy_ratio`; ``idle_source`` ``"contradicted"`` above
    :data:`IDLE_CLOSED_RATIO_MAX`)."""

    curve_1: LatencyCurve
    factors: dict[int, float]
    sources: dict[int, str]
    k_per_instance: float
    k_source: str
    runs_at: dict[int, list[int]] = field(default_factory=dict)
    open_top: int = 0
    idle_slowdown: float = 0.0
    idle_source: str = "none"
    idle_residual: float = 1.0
    idle_high_instances: int = 0
    idle_fitted: float = 0.0
    idle_closed_ratio: float = 1.0

    @property
    def idle_clipped(self) -> bool:
        """The fit reached :data:`IDLE_SLOWDOWN_MAX` without explaining the ratio and was
        set aside (``idle_source == "rejected"``, no idle slowdown applied)."""
        return self.idle_source == "rejected"

    def curve(self, n: int) -> LatencyCurve:
        """T_n(b)."""
        f = self.factors[n]
        return self.curve_1 if n == 1 else scaled_curve(
            self.curve_1, f, f"T_1(b) x {f:.3g} ({self.sources[n]} contention, {n} instances)")


def _is_open(run: Any) -> bool:
    return bool(run.configs) and run.configs[0].load.kind == "open"


LEVEL_BOUNDS = (0.5, 2.0)
"""Bounds of the level ratio between the target-rate runs' T(b) and the closed loops'
(a ratio outside is a disturbed run; clipped)."""


STALL_RATIO = 1.3
"""A batch size whose mean execution time is this much above the weighted line through
the others, with fewer than :data:`STALL_EXECUTIONS` executions, is a stall, not T(b)
(on an H200, T(3) = 17.9 ms over 9 executions with one stall, beside T(2) 7.2 ms)."""

STALL_EXECUTIONS = 30


def drop_stalled_sizes(stats: dict[int, tuple[int, float]]) -> dict[int, tuple[int, float]]:
    """``stats`` without the sizes a stall made slow: each size (but the smallest) is
    checked against the least-squares line through the other sizes (weights:
    executions); one above it by :data:`STALL_RATIO` with fewer than
    :data:`STALL_EXECUTIONS` executions is dropped."""
    if len(stats) < 3:
        return dict(stats)
    keep = dict(stats)
    smallest = min(stats)
    for b in sorted(stats):
        n, ms = stats[b]
        others = [(x, v) for x, v in keep.items() if x != b]
        if b == smallest or n >= STALL_EXECUTIONS or len(others) < 2:
            continue
        xs = np.array([x for x, _ in others], dtype=np.float64)
        ys = np.array([v[1] / v[0] for _, v in others])
        ws = np.array([float(v[0]) for _, v in others])
        slope, icpt = np.polyfit(xs, ys, 1, w=np.sqrt(ws))
        line = icpt + max(0.0, slope) * b
        if line > 0 and ms / n > STALL_RATIO * line:
            keep.pop(b)
    return keep


def blended_curve(open_stats: dict[int, tuple[int, float]],
                  closed_stats: dict[int, tuple[int, float]], source: str
                  ) -> tuple[LatencyCurve, int]:
    """T(b) at the target rate where the target-rate runs formed a size often enough
    (:data:`~trtcheck.analyze.advice.live_calibration.MIN_EXECUTIONS` executions); above the
    largest such size ``top``, a line from ``T_open(top)`` whose slope is the weighted
    median (weights: executions) of the slopes from that anchor to each closed-loop size
    above it with enough executions, or to every one that ran when none has (a Theil-Sen
    slope through the anchor).

    Why not the closed loop's own values: a closed loop loads the host and the device
    differently from the target rate (a GPU kept busy runs batch 1 faster than one with
    idle gaps, 1.34x on an H200), and its large batches in the python backend were
    erratic (2-4x the line on an H200: b = 26 at 24 ms beside b = 27 at 9 ms); the median
    slope keeps the trend and drops such sizes.

    Returns:
        ``(curve, top)``: ``top`` is the largest size calibrated at the target rate (0:
        none; the curve is then the closed loop's, made non-decreasing).
    """
    from trtcheck.analyze.advice.live_calibration import MIN_EXECUTIONS

    good_open = drop_stalled_sizes(
        {b: v for b, v in open_stats.items() if v[0] >= MIN_EXECUTIONS})
    if not closed_stats:
        return curve_from_batch_stats(good_open or open_stats, source=source), max(
            good_open, default=0)
    if not good_open:
        return curve_from_batch_stats(closed_stats, source=source), 0
    base = curve_from_batch_stats(good_open, source=source)
    top = int(base.max_batch_measured)
    t_top = float(base.t_ms(top))
    # the closed-loop sizes above ``top`` with enough executions; when none has, every
    # one that ran (weighted by executions): a 3 s closed loop of a slow model (the demo
    # ResNet-18 on 2 CPU cores, T(8) 276 ms) ran each size 1-4 times, and a curve with no
    # slope put T(8) at T(1) and the capacity at 8x
    above = {b: v for b, v in closed_stats.items() if b > top and v[0] > 0}
    enough = {b: v for b, v in above.items() if v[0] >= MIN_EXECUTIONS}
    slopes, ws = [], []
    for b, (n, ms) in (enough or above).items():
        slopes.append(max(0.0, (ms / n - t_top) / (b - top)))
        ws.append(float(n))
    if not slopes:  # no closed-loop size above: the fit's slope extends the curve
        return base, top
    order = np.argsort(slopes)
    cw = np.cumsum(np.asarray(ws)[order])
    slope = float(np.asarray(slopes)[order][int(np.searchsorted(cw, 0.5 * cw[-1]))])
    top_closed = max(enough or above)
    pts = list(base.points())
    if top_closed > top:
        pts.append((top_closed, t_top + slope * (top_closed - top)))
    return make_curve(pts, source=source), top


IDLE_TAU_MS = 3.0
"""Time constant of the idle slowdown, ms (not fitted: the runs of a search hold one
idle share each; 1-10 ms fitted the T(b) of 37 configurations of eager ResNet-18 on an
H200 about equally, 3 ms best)."""

IDLE_SLOWDOWN_MAX = 2.0
"""Upper end of the fitted idle slowdown (an idle instance runs at most 3x slower); a
ratio it cannot explain stays a contention factor."""

IDLE_CLOSED_RATIO_MAX = 1.75
"""Largest ratio of the one-instance closed loop's T(b) to the fitted busy T(b), at the
sizes both ran, with which the idle slowdown is kept (:func:`closed_to_busy_ratio`):
the closed loop keeps its instance busy, so a busy T(b) fitted far below it is
contradicted (the demo ResNet-18 on 2 CPU cores: a = 1.75 put T(1) at 19.2 ms where
the closed loop measured 41 ms, a ratio of 2.13). Not lower: on the 22 searches of the
GPU records the ratio was 0.54-1.58, where a closed loop's few small batches run
erratically (python backend) and the fit, kept, predicts better (a bound of 1.25 set it
aside on 5 of them and put P99 within 20% in 172 of 315 measurements, against 175)."""

IDLE_FIT_REQUESTS = 4000
"""Poisson arrivals per simulated run while fitting the idle slowdown."""


def _open_observation(run: Any) -> Any:
    """The :class:`~trtcheck.analyze.advice.live_calibration.LiveObservation` of an
    open-loop run (repeats pooled)."""
    return observation_from_serve(run, "a calibration run")


def idle_factors(obs: Any, curve: LatencyCurve, idle_slowdown: float, seed: int = 0
                 ) -> dict[int, float]:
    """Mean simulated idle factor per batch size of the configuration and rate of
    ``obs`` (Triton's batcher, T(b) ``curve`` of a busy instance, Poisson arrivals at
    its rate); sizes it did not form get the mean over all executions; ``{}`` when the
    rate is past the capacity."""
    from trtcheck.analyze.advice.simulator import ServiceModel

    sv = ServiceModel(curve, spread="none", batcher="triton", idle_slowdown=idle_slowdown,
                      idle_tau_ms=IDLE_TAU_MS)
    ex: list[tuple[int, float]] = []
    arrivals = make_arrivals("poisson", obs.rate_per_s, IDLE_FIT_REQUESTS, seed)
    p = simulate(obs.policy(), obs.instances, sv, arrivals, seed=seed, warmup_fraction=0.1,
                 rate_per_s=obs.rate_per_s, executions_out=ex)
    if not p.stable or not ex:
        return {}
    acc: dict[int, list[float]] = {}
    for b, f in ex:
        acc.setdefault(b, []).append(f)
    mean_all = float(np.mean([f for _, f in ex]))
    out = {b: float(np.mean(v)) for b, v in acc.items()}
    return {b: out.get(b, mean_all) for b in obs.batch_stats} | out


def busy_stats(stats: dict[int, tuple[int, float]], factors: dict[int, float]
               ) -> dict[int, tuple[int, float]]:
    """``stats`` (``{b: (executions, total ms)}``) with each size's total divided by its
    idle factor (1 where ``factors`` has none): what a busy instance would have taken."""
    return {b: (n, ms / factors.get(b, 1.0)) for b, (n, ms) in stats.items()}


def _weighted_time_ms(stats: dict[int, tuple[int, float]]) -> float:
    return float(sum(ms for _, ms in stats.values()))


def closed_to_busy_ratio(closed_stats: dict[int, tuple[int, float]],
                         busy: LatencyCurve) -> float:
    """The closed loop's compute time over ``busy``'s T(b) for the same executions, at the
    sizes up to the largest ``busy`` measured (``{b: (executions, total ms)}``; 1 when
    they share none): above 1, a busy instance ran slower than the busy T(b) says."""
    top = busy.max_batch_measured
    shared = {b: v for b, v in closed_stats.items() if b <= top and v[0] > 0}
    sim = sum(n * float(busy.t_ms(b)) for b, (n, _) in shared.items())
    return _weighted_time_ms(shared) / sim if sim > 0 else 1.0


def fit_idle_slowdown(obs_low: Any, obs_high: Any, seed: int = 0) -> tuple[float, float]:
    """The idle slowdown ``a`` that explains why the same load ran each execution slower
    at ``obs_high.instances`` than at ``obs_low.instances`` (two target-rate runs:
    instances that share a load each idle longer between executions), and the ratio
    left over at ``a``: ``(a, residual)``.

    For a trial ``a``: T(b) of a busy instance is the low run's T(b) divided by its
    simulated idle factors (twice: the factors depend on T(b)); the high run is then
    simulated with it, and ``R(a)`` = the high run's measured compute time over the
    simulated one (its own executions per batch size, stalled sizes dropped:
    :func:`drop_stalled_sizes`). ``R`` falls as ``a`` grows; ``a`` is found by
    bisection on ``[0, IDLE_SLOWDOWN_MAX]`` where ``R(a) = 1``; ``(0, R(0))`` when the
    high run was not slower, ``(IDLE_SLOWDOWN_MAX, R(max))`` when even that does not
    explain it (the rest is contention on the device)."""
    low = drop_stalled_sizes(obs_low.batch_stats)
    high = drop_stalled_sizes(obs_high.batch_stats)
    if not low or not high:
        return 0.0, 1.0

    def ratio(a: float) -> float:
        curve = curve_from_batch_stats(low)
        for _ in range(2):
            f = idle_factors(obs_low, curve, a, seed) if a > 0 else {}
            curve = curve_from_batch_stats(busy_stats(low, f))
        fh = idle_factors(obs_high, curve, a, seed) if a > 0 else {}
        sim_ms = sum(n * float(curve.t_ms(b)) * fh.get(b, 1.0) for b, (n, _) in high.items())
        return _weighted_time_ms(high) / sim_ms if sim_ms > 0 else 1.0

    r0 = ratio(0.0)
    if r0 <= 1.0:
        return 0.0, r0
    r_max = ratio(IDLE_SLOWDOWN_MAX)
    if r_max >= 1.0:
        return IDLE_SLOWDOWN_MAX, r_max
    lo, hi = 0.0, IDLE_SLOWDOWN_MAX
    for _ in range(8):
        mid = 0.5 * (lo + hi)
        if ratio(mid) > 1.0:
            lo = mid
        else:
            hi = mid
    a = 0.5 * (lo + hi)
    return a, ratio(a)


def contention_interp(f_top: float, n: int, n_top: int) -> float:
    """The contention factor at ``n`` instances from the one measured at ``n_top``:
    ``1 + (f_top - 1) log(n) / log(n_top)`` (concave in ``n``: on an H200, 4 instances of
    eager ResNet-18 ran 1.1-1.37x slower per batch, 2 instances 1.1-1.27x, far below
    the linear ``1 + 3 (f_2 - 1)``)."""
    if n <= 1 or n_top <= 1:
        return 1.0
    return 1.0 + (f_top - 1.0) * math.log(n) / math.log(n_top)


def assumed_contention(n: int) -> float:
    """The assumed contention factor at ``n`` instances without any multi-instance run:
    ``1 + k log2(n)`` with ``k`` = :data:`ASSUMED_CONTENTION_PER_INSTANCE` (1.25 at 2
    instances, 1.5 at 4)."""
    return 1.0 + ASSUMED_CONTENTION_PER_INSTANCE * math.log2(max(n, 1))


def instance_curves(runs: Sequence[Any], max_instances: int, seed: int = 0
                    ) -> InstanceCurves:
    """T(b) at every instance count 1..``max_instances`` from the live runs (see the
    module text): T_1(b) blended from the one-instance target-rate and closed-loop runs
    (:func:`blended_curve`); contention factors from target-rate runs at ``n`` against
    the one-instance target-rate T(b) (the same load on both sides: how often instances
    overlap depends on it), else from closed loops at ``n`` against the one-instance
    closed loop.

    With target-rate runs at two instance counts, the idle slowdown is fitted first
    (:func:`fit_idle_slowdown`, from the first target-rate run at the fewest instances
    and the one at the most): every target-rate run's T(b) is divided by its own
    simulated idle factors (a busy instance's T(b)), and what the slowdown does not
    explain stays a contention factor.

    Raises:
        InputError: no one-instance run with executions.
    """
    by_n: dict[int, list[int]] = {}
    for i, r in enumerate(runs):
        if r.configs:
            by_n.setdefault(run_instances(r), []).append(i)
    open_ns = sorted(n for n, idx in by_n.items() if any(_is_open(runs[i]) for i in idx))
    idle, idle_source, idle_residual = 0.0, "none", 1.0
    obs_of: dict[int, Any] = {}
    if len(open_ns) >= 2:
        for i, r in enumerate(runs):
            if _is_open(r):
                obs_of[i] = _open_observation(r)
        first = {n: next(i for i in by_n[n] if _is_open(runs[i])) for n in open_ns}
        idle, idle_residual = fit_idle_slowdown(obs_of[first[open_ns[0]]],
                                                obs_of[first[open_ns[-1]]], seed)
        idle_source = "fitted"
        if idle >= IDLE_SLOWDOWN_MAX:
            # even the largest slowdown leaves the run at more instances slower: idle gaps
            # are not what slowed it (CPU instances sharing cores: dividing the runs' T(b)
            # by a 3x idle factor halved T(1) and doubled the predicted capacity of a
            # demo ResNet-18 on 2 cores); the contention factor takes the whole ratio
            idle, idle_source = 0.0, "rejected"

    def stats_of(group: list[Any], idx: list[int]) -> dict[int, tuple[int, float]]:
        """Pooled batch stats; target-rate runs as a busy instance's (idle factors out)."""
        if idle <= 0:
            return pooled_batch_stats(group)
        acc: dict[int, list[float]] = {}
        for i, r in zip(idx, group):
            st = pooled_batch_stats([r])
            if i in obs_of:
                base = curve_from_batch_stats(drop_stalled_sizes(st) or st)
                f = idle_factors(obs_of[i], base, idle, seed)
                st = busy_stats(st, f)
                f = idle_factors(obs_of[i], curve_from_batch_stats(
                    drop_stalled_sizes(st) or st), idle, seed)
                st = busy_stats(pooled_batch_stats([r]), f)
            for b, (n, ms) in st.items():
                a = acc.setdefault(b, [0.0, 0.0])
                a[0] += n
                a[1] += ms
        return {b: (int(v[0]), float(v[1])) for b, v in acc.items() if v[0] > 0}

    ones_idx = by_n.get(1, [])
    ones = [runs[i] for i in ones_idx]
    closed_1 = pooled_batch_stats([r for r in ones if not _is_open(r)])
    open_1_idx = [i for i in ones_idx if _is_open(runs[i])]
    open_1 = [runs[i] for i in open_1_idx]
    open_stats = stats_of(open_1, open_1_idx)
    idle_fitted, idle_closed_ratio = idle, 1.0
    if idle > 0 and closed_1 and open_stats:
        # the closed loop keeps its instance busy: a busy T(b) far below what it measured
        # at the sizes both ran contradicts the fit
        idle_closed_ratio = closed_to_busy_ratio(closed_1, curve_from_batch_stats(open_stats))
        if idle_closed_ratio > IDLE_CLOSED_RATIO_MAX:
            idle, idle_source = 0.0, "contradicted"
            open_stats = stats_of(open_1, open_1_idx)  # as measured, no idle factors
    curve_1, open_top = blended_curve(open_stats, closed_1, "Triton batch_stats, 1 instance"
                                      + (", busy" if idle > 0 else ""))
    ref = curve_from_batch_stats(closed_1) if closed_1 else curve_1
    factors: dict[int, float] = {1: 1.0}
    sources: dict[int, str] = {1: "none"}
    measured = {}
    for n, idx in by_n.items():
        if n > 1:
            open_idx = [i for i in idx if _is_open(runs[i])]
            open_n = [runs[i] for i in open_idx]
            closed_n = [runs[i] for i in idx if not _is_open(runs[i])]
            if open_n and open_top:
                # target-rate runs on both sides: the contention at that load
                stats_n, base = stats_of(open_n, open_idx), curve_1
            elif closed_n and closed_1:
                stats_n, base = pooled_batch_stats(closed_n), ref
            else:
                stats_n = (stats_of(open_n, open_idx) if open_n
                           else pooled_batch_stats(closed_n))
                base = curve_1
            measured[n] = max(1.0, contention_ratio(base, stats_n))
    top = max(measured) if measured else 0
    k = (measured[top] - 1.0) / math.log2(top) if measured else ASSUMED_CONTENTION_PER_INSTANCE
    k_source = "measured" if measured else "assumed"
    for n in range(2, max_instances + 1):
        if n in measured:
            factors[n], sources[n] = measured[n], "measured"
        elif measured:
            factors[n] = contention_interp(measured[top], n, top)
            sources[n] = "interpolated" if n < top else "extrapolated"
        else:
            factors[n], sources[n] = assumed_contention(n), "assumed"
    return InstanceCurves(curve_1, factors, sources, k, k_source, by_n, open_top,
                          idle_slowdown=idle, idle_source=idle_source,
                          idle_residual=idle_residual, idle_fitted=idle_fitted,
                          idle_closed_ratio=idle_closed_ratio,
                          idle_high_instances=open_ns[-1] if len(open_ns) >= 2 else 0)


def calibrate_queueing(runs: Sequence[Any], open_index: int, seed: int = 0
                       ) -> LiveCalibration:
    """The per-request delay and per-execution overhead from open-loop run
    ``runs[open_index]``, both repeats pooled (T(b) of the fit: the target-rate runs at
    its instance count, which the blended T(b) of :func:`blended_curve` follows at those
    sizes). A stall in one repeat lands in the pooled delay's tail, which
    :func:`split_stalls` then separates from the body; calibrating from the repeat with
    the lower P99 instead chose the faster of two runs and biased every P50 low (over the
    163 configurations of the GPU records, P50 within 10% in 90, against 95 pooled; P99
    within 20% 96 against 100)."""
    base = runs[open_index]
    n = run_instances(base)
    cfg = base.configs[0]
    reps = [r for r in cfg.repeats if r.latency is not None and r.server_stats is not None]
    if reps and len(reps) < len(cfg.repeats):
        cfg = cfg.model_copy(update={"repeats": reps})
    others = [c for j, r in enumerate(runs) if j != open_index and _is_open(r)
              and run_instances(r) == n for c in r.configs]
    serve = base.model_copy(update={"configs": [cfg, *others]})
    return calibrate(observation_from_serve(serve, "the calibration run"), seed=seed)


def prediction_service(queueing: LiveCalibration, curves: InstanceCurves, instances: int,
                       stall: StallFit | None = None, seed: int = 0) -> ServiceModel:
    """The service model the search simulates at ``instances`` instances: the
    calibrated per-request delay and overhead, T(b) at that count
    (:meth:`InstanceCurves.curve`), the idle slowdown (:data:`IDLE_TAU_MS`) and the
    stalls drawn per execution (none when ``stall`` is None)."""
    return replace(queueing.service(), curve=curves.curve(instances),
                   batch_excess_ms=stall.excess_series_ms(seed) if stall else (),
                   idle_slowdown=curves.idle_slowdown, idle_tau_ms=IDLE_TAU_MS)


STALL_FENCE_IQR = 3.0
"""The per-request delay's body ends at Tukey's far-out fence, ``Q3 + 3 IQR`` of its
quantiles; samples above it are stalls."""

STALL_SERIES = 2000
"""Length of the per-execution stall series the simulator resamples."""


@dataclass(frozen=True)
class StallFit:
    """Rare long server stalls, separated from the per-request delay's body.

    A stall holds one execution (and so every request of its batch and every request
    queued behind it on that instance); the simulator adds :attr:`size_ms` to an
    execution with probability :attr:`per_execution`, so its effect on P99 follows the
    queueing of each candidate (absorbed by idle instances, piled up near capacity),
    while P50 follows the body.

    Attributes:
        per_execution: probability that an execution stalls, 0-1 (0: none found).
        size_ms: extra time of a stalled execution, ms.
        fence_ms: the body's upper fence on the per-request delay, ms.
        measured_share: share of the calibration run's requests later than its median
            by more than the fence's excess or half a stall (what the fit reproduces), 0-1.
    """

    per_execution: float = 0.0
    size_ms: float = 0.0
    fence_ms: float = 0.0
    measured_share: float = 0.0

    def excess_series_ms(self, seed: int = 0) -> tuple[float, ...]:
        """The per-execution extra time series for
        :attr:`~trtcheck.analyze.advice.simulator.ServiceModel.batch_excess_ms`
        (:data:`STALL_SERIES` samples, ``round(p x n)`` of them stalled, at random
        places; empty without stalls)."""
        k = int(round(self.per_execution * STALL_SERIES))
        if k <= 0 or self.size_ms <= 0:
            return ()
        out = np.zeros(STALL_SERIES)
        out[np.random.default_rng(seed + 29).choice(STALL_SERIES, k, replace=False)] = \
            self.size_ms
        return tuple(out.tolist())


def _share_above(lat_ms: Sequence[float] | np.ndarray, threshold_ms: float) -> float:
    arr = np.asarray(lat_ms, dtype=np.float64)
    return float(np.mean(arr > threshold_ms)) if arr.size else 0.0


def split_stalls(cal: LiveCalibration, seed: int = 0) -> tuple[LiveCalibration, StallFit]:
    """The calibration with its per-request delay cut to the body, and the stalls.

    Body: the delay quantiles at most the fence ``F = max(Q3 + 3 IQR, median +
    T(1))`` (of the delay's quantiles, ms: a stall is longer than one batch-1
    execution; shorter excesses are the body's spread). Stalls: the size ``S`` is the
    median excess of the delay quantiles above ``F`` over the delay's median; the
    per-execution rate ``p`` is fitted by bisection so
    the simulated calibration run (body delay + stalls) has as many requests later than
    ``median(client) + max(F - median(delay), S / 2)`` as the measured run. ``p`` and ``S`` are
    the measured frequency and size; they hold across candidates because a stall is a
    per-execution event, not a per-request one."""
    d = np.asarray(cal.request_delay_ms, dtype=np.float64)
    obs = cal.observation
    if d.size < 20 or obs.client_latencies_ms.size < 20:
        return cal, StallFit()
    q25, med, q75 = (float(np.percentile(d, x)) for x in (25, 50, 75))
    # a stall is longer than one batch-1 execution: the fence is at least that far
    # above the median (the delay's quartiles can coincide, e.g. all 0)
    fence = max(q75 + STALL_FENCE_IQR * (q75 - q25), med + float(cal.curve.t1_ms))
    tail = d[d > fence]
    if not tail.size:
        return cal, StallFit(fence_ms=fence)
    size = float(np.median(tail)) - med
    # the requests a stall clearly delayed: later than the median by half a stall
    thr = float(np.median(obs.client_latencies_ms)) + max(fence - med, 0.5 * size)
    measured = _share_above(obs.client_latencies_ms, thr)
    body = replace(cal, request_delay_ms=tuple(np.minimum(d, fence).tolist()))
    arrivals = make_arrivals("poisson", obs.rate_per_s,
                             max(PREDICTION_REQUESTS // 2, obs.client_latencies_ms.size), seed)

    def share(p: float) -> float:
        st = StallFit(p, size, fence, measured)
        sv = replace(body.service(), batch_excess_ms=st.excess_series_ms(seed))
        lat: list[float] = []
        r = simulate(obs.policy(), obs.instances, sv, arrivals, seed=seed,
                     warmup_fraction=0.1, rate_per_s=obs.rate_per_s, latencies_out=lat)
        return _share_above(lat, thr) if r.stable and lat else 1.0

    if share(0.0) >= measured:
        return body, StallFit(0.0, size, fence, measured)
    lo, hi = 0.0, 0.5
    if share(hi) < measured:
        return body, StallFit(hi, size, fence, measured)
    for _ in range(9):
        mid = 0.5 * (lo + hi)
        if share(mid) < measured:
            lo = mid
        else:
            hi = mid
    return body, StallFit(0.5 * (lo + hi), size, fence, measured)


def log_ratio(a: float, b: float) -> float:
    """``ln(a / b)`` of two positive measurements of one quantity (0 when either is not
    positive)."""
    return math.log(a / b) if a > 0 and b > 0 else 0.0


def relative_spread(a: float, b: float) -> float:
    """Run-to-run standard deviation of ``ln(value)`` estimated from two runs:
    ``|ln(a / b)| / sqrt(2)`` (the difference of two runs has twice one run's
    variance)."""
    return abs(log_ratio(a, b)) / math.sqrt(2.0)


@dataclass(frozen=True)
class Drift:
    """Run-to-run spread of one quantity (P50 or P99) on the log scale.

    Attributes:
        sd_log: standard deviation of ``ln(value)`` between runs (>= :data:`DRIFT_FLOOR_REL`).
        dof: degrees of freedom of the estimate (pairs compared), >= 1.
    """

    sd_log: float
    dof: int = 1

    @property
    def t_quantile(self) -> float:
        """Student's t quantile of the two-sided 95% level at :attr:`dof` (the
        small-sample inflation of an estimated spread; 1.96 as ``dof`` grows)."""
        from trtcheck.analyze.gate.regression import t_quantile

        return t_quantile(0.975, float(max(1, self.dof)))

    @property
    def half_width_log(self) -> float:
        """``t x sd_log``: the interval's half width on the log scale."""
        return self.t_quantile * self.sd_log


MAD_NORMAL = 0.6745
"""Median of ``|X|`` for a standard normal ``X`` (the median absolute deviation's
consistency constant)."""


def drift_from_pairs(log_ratios: Sequence[float], residuals_log: Sequence[float] = ()
                     ) -> Drift:
    """The drift of the serving level from ``k`` pairs of runs of one configuration
    (``r_i = ln(a_i / b_i)``, one run's deviation ``|r_i| / sqrt(2)``) and ``m``
    confirming runs (``r_j = ln(measured / predicted)``, deviation ``|r_j|``), by the
    median absolute deviation (robust: a start-of-run transient in one half does not
    set the spread)::

        sd = max(floor, median(deviations) / 0.6745),  dof = k + m

    ``floor`` = :data:`DRIFT_FLOOR_REL`; the interval multiplies it by Student's t at
    ``dof`` (:attr:`Drift.t_quantile`)."""
    devs = [abs(float(r)) / math.sqrt(2.0) for r in log_ratios] + [
        abs(float(r)) for r in residuals_log]
    if not devs:
        return Drift(DRIFT_FLOOR_REL, 1)
    return Drift(max(DRIFT_FLOOR_REL, float(np.median(devs)) / MAD_NORMAL), len(devs))


def half_pairs(latency_series_ms: Sequence[Sequence[float]], q: float) -> list[float]:
    """``ln(L_first / L_second)`` of the ``q`` quantile of the first and second half (in
    send order) of each series: the drift inside a run, one more pair per run."""
    out = []
    for s in latency_series_ms:
        if len(s) >= 10:
            h = len(s) // 2
            out.append(log_ratio(percentile(s[:h], q), percentile(s[h:], q)))
    return out


def repeat_log_ratios(repeats: Sequence[Any], q: float = 0.5) -> list[float]:
    """The pairs of a repeated calibration run (its repeats, each with ``latencies_ms``
    in send order) at quantile ``q``: consecutive repeats, and the two halves of each
    repeat (three pairs from two repeats)."""
    return series_log_ratios([list(r.latencies_ms) for r in repeats], q)


def series_log_ratios(latency_series_ms: Sequence[Sequence[float]], q: float = 0.5
                      ) -> list[float]:
    """:func:`repeat_log_ratios` of the repeats' latency series (ms, send order; series
    of fewer than 10 requests are left out)."""
    series = [list(s) for s in latency_series_ms if len(s) >= 10]
    pairs = [log_ratio(percentile(series[i], q), percentile(series[i + 1], q))
             for i in range(len(series) - 1)]
    return pairs + half_pairs(series, q)


P99_DRIFT_MAX = 0.35
"""Largest run-to-run log-scale spread given to P99 (:func:`repeat_drifts`): at the
repeat pair's 3 degrees of freedom, ``t x 0.35 = 1.11``, an interval 3x either side of
the point. A calibration whose P99 pairs spread further says that the P99 of a run of
a few seconds is not a serving level (one stall more or less moves it); tune says so in
its notes rather than predict an interval 10x wide."""


def tail_drift(repeats: Sequence[Any]) -> Drift:
    """The P99 pairs of a repeated calibration run (:func:`repeat_log_ratios` at 0.99:
    consecutive repeats and the halves of each) by :func:`drift_from_pairs`, unbounded.
    On the GPU records (ResNet-18/34/50 on an H200; MobileNetV3, Wide ResNet-50-2 and
    VGG-16 on an H100) it was 0.17-1.58, against a P50 level of 0.05-0.07; the same
    configuration measured twice, minutes apart, moved up to 3.6x in P99 (VGG-16, w4ms
    b8 x3 at 532 req/s: 35.7 and 10.0 ms) and up to 1.8x in P50 (Wide ResNet-50-2:
    22.9 and 12.6 ms)."""
    return drift_from_pairs(repeat_log_ratios(repeats, 0.99))


CONFIRM_LENGTHEN_MAX = 4.0
"""Most a confirming run is lengthened over ``--duration-s`` (:func:`confirm_duration_s`):
4x halves the P99's sampling spread; the search's default budget stays under 3 minutes."""

CONFIRM_MIN_REQUESTS = 1000
"""Requests a run that measures a pick's P99 aims to hold (:func:`confirm_duration_s`):
10 of them above the P99. With 300 the P99 is the third-slowest request: ResNet-101 on
an H100 at 84 req/s, tune's 3.8 s run of its pick measured P99 21 ms, perf_analyzer's
1,200 requests 55 ms."""


def _confirm_wants_s(tail: Drift, duration_s: float, rate_per_s: float
                     ) -> list[tuple[str, float]]:
    """What asks a run that measures a pick to send longer than ``duration_s``:
    ``[(reason in words, seconds)]`` (see :func:`confirm_duration_s`)."""
    out = []
    if tail.sd_log > P99_DRIFT_MAX:
        out.append((f"the calibration's P99 spread of {tail.sd_log:.2f} asks for",
                    duration_s * (tail.sd_log / P99_DRIFT_MAX) ** 2))
    if rate_per_s > 0 and CONFIRM_MIN_REQUESTS / rate_per_s > duration_s:
        out.append((f"{CONFIRM_MIN_REQUESTS:,} requests at {rate_per_s:g} req/s take",
                    CONFIRM_MIN_REQUESTS / rate_per_s))
    return out


def confirm_duration_s(tail: Drift, duration_s: float, rate_per_s: float = 0.0) -> float:
    """Sending time (s) of a run that measures a pick's P99 (a confirming run, or the
    run of the configuration that comes closest to the objective).

    The longest of ``duration_s``; ``duration_s x (sd / P99_DRIFT_MAX)^2`` when the
    calibration's P99 pairs (``tail``: :func:`tail_drift`) spread more than
    :data:`P99_DRIFT_MAX` (the spread of a quantile falls as one over the square root
    of the requests, so this brings the run's spread down to the one its interval
    assumes); and :data:`CONFIRM_MIN_REQUESTS` / ``rate_per_s`` (req/s; 0: not used);
    at most :data:`CONFIRM_LENGTHEN_MAX` times ``duration_s``. A run of a few seconds
    at a rate whose tail comes from rare stalls may hold none: VGG-16 on an H100 at
    938 req/s (P99 pairs spread 0.49), tune's 3 s confirming run of its pick measured
    P99 7.5 ms, perf_analyzer 22.2 and 28.2 ms in the same session; ResNet-18 on an
    H200 spread 1.4-2.3 (one repeat of the calibration had a stall, the other none)."""
    want = max([float(duration_s)] + [t for _, t in _confirm_wants_s(tail, duration_s,
                                                                      rate_per_s)])
    return min(want, CONFIRM_LENGTHEN_MAX * float(duration_s))


def p99_spread_note(tail: Drift, duration_s: float) -> str | None:
    """The note a tune document carries when the calibration's P99 pairs spread beyond
    :data:`P99_DRIFT_MAX` (``tail``: :func:`tail_drift`; ``duration_s``: the sending
    time of one live run, s), else ``None``."""
    if tail.sd_log <= P99_DRIFT_MAX:
        return None
    return (f"P99 moved with a log-scale spread of {tail.sd_log:.2f} between the repeats "
            f"and halves of the calibration run at the rate: the P99 of a {duration_s:g} s "
            f"run hinges on one stall more or less; the P99 intervals take "
            f"{P99_DRIFT_MAX:g}")


def confirm_length_note(tail: Drift, duration_s: float, rate_per_s: float) -> str | None:
    """The note a tune document carries when the runs that measure a pick send longer
    than ``duration_s`` (``--duration-s``, s; :func:`confirm_duration_s` at the target
    rate ``rate_per_s``, req/s, and the calibration's P99 pairs ``tail``), with each
    reason and, when the run still holds fewer than :data:`CONFIRM_MIN_REQUESTS`, the
    ``--duration-s`` that reaches them; else ``None``."""
    wants = _confirm_wants_s(tail, duration_s, rate_per_s)
    confirm = confirm_duration_s(tail, duration_s, rate_per_s)
    if confirm <= duration_s:
        return None
    text = (f"the runs that measure a pick send for {confirm:.3g} s instead of "
            f"{duration_s:g} s: " + "; ".join(f"{why} {t:.3g} s" for why, t in wants))
    if confirm < max(t for _, t in wants):
        text += f" (at most {CONFIRM_LENGTHEN_MAX:g}x --duration-s)"
    n = int(rate_per_s * confirm)
    if n < CONFIRM_MIN_REQUESTS:
        text += (f"; about {n} requests, about {max(1, round(0.01 * n))} of them above the "
                 f"P99, so a rare stall may be missed (a --duration-s of "
                 f"{CONFIRM_MIN_REQUESTS / rate_per_s / CONFIRM_LENGTHEN_MAX:.3g} s or more "
                 f"lets the run hold {CONFIRM_MIN_REQUESTS:,})")
    return text


def repeat_drifts(repeats: Sequence[Any], residuals_log: Sequence[float] = ()
                  ) -> tuple[Drift, Drift]:
    """``(P50 drift, P99 drift)`` of a repeated calibration run.

    P50: the serving level's drift, :func:`drift_from_pairs` of the P50 pairs
    (:func:`repeat_log_ratios`) and the confirming runs' P50 log misses. P99: the
    larger of that level and the P99 pairs' own spread (:func:`tail_drift`), at most
    :data:`P99_DRIFT_MAX`, with the level's degrees of freedom. The P99 of a few seconds
    hinges on how many stalls fell into it, and the simulated stalls (:class:`StallFit`)
    with the order-statistic band covered too little of it: with the level alone, the
    P99 intervals held 127 of 163 measured configurations on the GPU records (26 of 40
    on VGG-16, 20 of 37 on ResNet-18); with the P99 pairs' spread, bounded, 149 of 163
    (34 of 40, 30 of 37)."""
    return series_drifts([list(r.latencies_ms) for r in repeats], residuals_log)


def series_drifts(latency_series_ms: Sequence[Sequence[float]],
                  residuals_log: Sequence[float] = ()) -> tuple[Drift, Drift]:
    """:func:`repeat_drifts` of the repeats' latency series (ms, send order)."""
    level = drift_from_pairs(series_log_ratios(latency_series_ms, 0.5), residuals_log)
    tail = drift_from_pairs(series_log_ratios(latency_series_ms, 0.99))
    return level, Drift(max(level.sd_log, min(P99_DRIFT_MAX, tail.sd_log)), level.dof)


def queueing_and_stalls(runs: Sequence[Any], open_index: int, seed: int = 0,
                        curves: InstanceCurves | None = None
                        ) -> tuple[LiveCalibration, StallFit]:
    """:func:`calibrate_queueing` from ``runs[open_index]`` (the repeated target-rate
    run), then :func:`split_stalls`: the per-request delay's body and the stalls.

    With ``curves`` (the search's :func:`instance_curves`), the delay is re-matched
    (:func:`~trtcheck.analyze.advice.live_calibration.rematch_request_delay`) under the
    service model the search predicts with (:func:`prediction_service` at the run's
    instance count: the blended T(b) and the idle slowdown instead of the run's own
    T(b)), so the search reproduces its own calibration run's P50 and P99 before it
    predicts another configuration. The stalls are then fitted under the run's own
    T(b), as without ``curves`` (fitted under the blended T(b) instead, they came out
    1x-7x more frequent on the recorded H200 runs and the P99 of 2- and 4-instance
    configurations was over-predicted up to 8x)."""
    cal = calibrate_queueing(runs, open_index, seed=seed)
    if curves is None:
        return split_stalls(cal, seed=seed)
    n = run_instances(runs[open_index])

    def service_of(c: LiveCalibration) -> ServiceModel:
        return prediction_service(c, curves, n)

    return split_stalls(rematch_request_delay(cal, service_of, seed=seed), seed=seed)


CLUSTER_LAGS = 64
"""Lags summed in :func:`cluster_factor` (requests; the simulator's resample block)."""


def cluster_factor(latencies_ms: np.ndarray, q: float) -> float:
    """Kish's design effect of the ``q`` quantile of a series of latencies (arrival
    order), >= 1: ``1 + 2 sum_{k=1..K} rho_k`` with ``rho_k`` the lag-``k``
    autocorrelation of the indicator ``latency > L(q)`` and ``K`` =
    :data:`CLUSTER_LAGS` (negative sums clipped to 1). A stall that delays 30 requests
    in a row makes a few seconds' P99 hinge on whether one more stall falls into the
    run; the effective sample size is ``n / cluster_factor``."""
    arr = np.asarray(latencies_ms, dtype=np.float64)
    if arr.size < 4:
        return 1.0
    x = (arr > percentile(arr, q)).astype(np.float64)
    x -= x.mean()
    var = float(np.dot(x, x))
    if var <= 0:
        return 1.0
    lags = range(1, min(CLUSTER_LAGS, arr.size - 1) + 1)
    rho = sum(float(np.dot(x[:-k], x[k:])) for k in lags) / var
    return max(1.0, 1.0 + 2.0 * rho)


def interval(latencies_ms: np.ndarray, q: float, n_measured: int, rel_sd: float,
             dof: int | None = None) -> TuneInterval:
    """The prediction interval of the ``q`` quantile of a run of ``n_measured``
    requests (see docs/advise.md, "Prediction intervals")::

        h = z sqrt(q (1 - q) c / n)
        lo = L(q - h) x exp(-t s),  hi = L(q + h) x exp(t s)

    ``L`` the simulated latency quantile function (arrival order), ``c``
    :func:`cluster_factor` of the simulated latencies at ``q``, ``z``
    :data:`Z_INTERVAL`, ``s`` the log-scale standard deviation of run-to-run drift (and
    any assumed contention or extrapolation, in quadrature), ``t`` Student's 97.5%
    quantile at ``dof`` degrees of freedom (``None``: ``z``). The interval is positive
    wherever the point is."""
    c = cluster_factor(latencies_ms, q)
    half = Z_INTERVAL * math.sqrt(q * (1 - q) * c / max(n_measured, 1))
    q_lo, q_hi = max(0.0, q - half), min(1.0, q + half)
    point = percentile(latencies_ms, q)
    t = Z_INTERVAL if dof is None else Drift(rel_sd, dof).t_quantile
    lo = percentile(latencies_ms, q_lo) * math.exp(-t * rel_sd)
    hi = percentile(latencies_ms, q_hi) * math.exp(t * rel_sd)
    return TuneInterval(point_ms=float(point), lo_ms=float(lo), hi_ms=float(hi))


@dataclass
class Search:
    """What a prediction round needs.

    Attributes:
        queueing: the calibrated delay/overhead (its curve is replaced per count).
        curves: T(b) per instance count.
        drift_p50_rel, drift_p99_rel: run-to-run log-scale standard deviations.
        rate_per_s: target rate; run_requests: requests a confirming run measures.
        max_batch: the search's max batch; max_instances: the largest count.
        windows_us: windows searched.
        drift_dof: degrees of freedom of the drift estimates (the t quantile).
        stall: the server stalls (:func:`split_stalls`), drawn per execution.
        floor_ms: what one request takes at least (:func:`latency_floor_ms`, ms; 0: not
            known): no interval's lower end lies below it.
        drift_at: the configuration whose repeated run measured the drift and its
            arrival rate (req/s); ``None``: the drift term is the same for every
            candidate. Given, each candidate's drift term is scaled by
            :func:`drift_scale`.
    """

    queueing: LiveCalibration
    curves: InstanceCurves
    drift_p50_rel: float
    drift_p99_rel: float
    rate_per_s: float
    run_requests: int
    max_batch: int
    max_instances: int
    windows_us: tuple[float, ...] = SEARCH_WINDOWS_US
    drift_dof: int = 1
    stall: StallFit = field(default_factory=StallFit)
    floor_ms: float = 0.0
    drift_at: tuple[Candidate, float] | None = None
    _drift_elasticity: tuple[float, float] | None = field(default=None, repr=False)

    def drift_elasticity(self, seed: int = 0) -> tuple[float, float]:
        """:func:`elasticity` of P50 and P99 at :attr:`drift_at` (computed once)."""
        if self._drift_elasticity is None:
            assert self.drift_at is not None
            c, rate = self.drift_at
            e = elasticity(self, c, rate, seed)
            # an unstable drift run has no finite derivative: the drift is taken as it is
            self._drift_elasticity = e if e is not None else (1.0, 1.0)
        return self._drift_elasticity


def grid(max_batch: int, max_instances: int, windows_us: Sequence[float]
         ) -> list[Candidate]:
    """Window x max batch (1, powers of two, the max) x instances 1..N (max batch 1:
    window 0 only)."""
    sizes = [1]
    b = 2
    while b < max_batch:
        sizes.append(b)
        b *= 2
    if max_batch > 1:
        sizes.append(max_batch)
    out = []
    for n in range(1, max_instances + 1):
        out.append(Candidate(0.0, 1, n))
        for bb in sizes[1:]:
            out += [Candidate(float(w), bb, n) for w in windows_us]
    return out


def scaled_service(service: ServiceModel, factor: float) -> ServiceModel:
    """``service`` with every T(b) multiplied by ``factor`` (``service`` itself at 1)."""
    if factor == 1.0:
        return service
    return replace(service, curve=scaled_curve(service.curve, factor, service.curve.source))


def simulated_quantiles(c: Candidate, service: ServiceModel, arrivals: Any, seed: int,
                        rate_per_s: float | None, warmup_fraction: float = 0.1
                        ) -> tuple[float, float] | None:
    """Simulated P50 and P99 (ms) of ``c`` under Triton's batcher (``None``: unstable)."""
    lat: list[float] = []
    p = simulate(c.policy(), c.instances, service, arrivals, seed=seed,
                 warmup_fraction=warmup_fraction, rate_per_s=rate_per_s, latencies_out=lat)
    if not p.stable or not lat:
        return None
    arr = np.asarray(lat, dtype=np.float64)
    return percentile(arr, 0.5), percentile(arr, 0.99)


def _quantiles_at(s: Search, c: Candidate, rate_per_s: float, scale: float,
                  seed: int) -> tuple[float, float] | None:
    """:func:`simulated_quantiles` of ``c`` at ``rate_per_s`` as the search predicts it,
    T(b) times ``scale``."""
    service = prediction_service(s.queueing, s.curves, c.instances, s.stall, seed)
    return simulated_quantiles(c, scaled_service(service, scale), make_arrivals(
        "poisson", rate_per_s, PREDICTION_REQUESTS, seed), seed, rate_per_s)


def elasticity_of(quantiles_at: Callable[[float], tuple[float, float] | None],
                  base: tuple[float, float] | None = None) -> tuple[float, float] | None:
    """``d ln L(q) / d ln T`` of P50 and P99 by a forward difference of
    :data:`ELASTICITY_STEP`: ``quantiles_at(scale)`` simulates P50 and P99 (ms) with
    T(b) times ``scale`` and the same random draws (``None``: unstable); ``base`` is
    ``quantiles_at(1.0)`` when already known. ``None`` where either is unstable."""
    a = base if base is not None else quantiles_at(1.0)
    b = quantiles_at(1.0 + ELASTICITY_STEP)
    if a is None or b is None or min(*a, *b) <= 0:
        return None
    step = math.log1p(ELASTICITY_STEP)
    return math.log(b[0] / a[0]) / step, math.log(b[1] / a[1]) / step


def drift_factors(e: tuple[float, float] | None, at: tuple[float, float]
                  ) -> tuple[float, float]:
    """The drift terms' factors of a prediction of elasticity ``e`` when the drift was
    measured where the elasticity was ``at`` (see :func:`drift_scale`)."""
    if e is None:
        return DRIFT_SCALE_MAX, DRIFT_SCALE_MAX
    f50, f99 = (min(DRIFT_SCALE_MAX, max(1.0, ei / max(ai, ELASTICITY_FLOOR)))
                for ei, ai in zip(e, at))
    return f50, f99


def scaled_drift_terms(d50: float, d99: float, f50: float, f99: float
                       ) -> tuple[float, float]:
    """The P50 and P99 drift terms (log scale) of a prediction: ``d50 x f50`` and ``d99
    x f99`` (:func:`drift_factors`), the P99 term at most :data:`P99_DRIFT_MAX` (or
    ``d99`` where that is larger): the bound on the P99 spread holds after the scaling,
    as it does for the measured spread."""
    return d50 * f50, min(d99 * f99, max(d99, P99_DRIFT_MAX))


def elasticity(s: Search, c: Candidate, rate_per_s: float, seed: int = 0,
               base: tuple[float, float] | None = None) -> tuple[float, float] | None:
    """How strongly the simulated P50 and P99 of ``c`` at ``rate_per_s`` follow T(b)
    (:func:`elasticity_of`). About 1 where a request's latency is mostly its own
    execution, above 1 where a queue forms (a slower T(b) also lengthens the waits),
    below 1 where the window or fixed overheads dominate."""
    return elasticity_of(lambda k: _quantiles_at(s, c, rate_per_s, k, seed), base)


def drift_scale(s: Search, c: Candidate, seed: int = 0,
                base: tuple[float, float] | None = None) -> tuple[float, float]:
    """Factors on the P50 and P99 drift terms of ``c``: the run-to-run drift measured
    at :attr:`Search.drift_at` is read as a drift of T(b) (``drift /
    elasticity there``, the elasticity floored at :data:`ELASTICITY_FLOOR`) and
    carried to ``c`` by its own :func:`elasticity` (first-order propagation of
    uncertainty), clipped to ``[1, DRIFT_SCALE_MAX]``: a candidate's interval is never
    narrower than the measured drift. A candidate that turns unstable with T(b) 10%
    slower is next to its capacity and gets the largest factor. ``(1, 1)`` without
    :attr:`Search.drift_at`. ``base``: as for :func:`elasticity`."""
    if s.drift_at is None:
        return 1.0, 1.0
    return drift_factors(elasticity(s, c, s.rate_per_s, seed, base),
                         s.drift_elasticity(seed))


def predict_one(s: Search, c: Candidate, seed: int = 0) -> TunePrediction:
    """One candidate with intervals (Triton's batcher, T(b) at its instance count;
    :func:`interval` for P50 and P99; the P50 interval's lower end raised to
    ``s.floor_ms`` and the P99 interval's to the P50 interval's where the drift terms
    would put them below)."""
    service = prediction_service(s.queueing, s.curves, c.instances, s.stall, seed)
    arrivals = make_arrivals("poisson", s.rate_per_s, PREDICTION_REQUESTS, seed)
    lat: list[float] = []
    p = simulate(c.policy(), c.instances, service, arrivals, seed=seed, warmup_fraction=0.1,
                 rate_per_s=s.rate_per_s, latencies_out=lat)
    cap = c.instances * max(1000.0 * b / service.batch_time_ms(b)
                            for b in range(1, c.max_batch_size + 1))
    top = s.curves.curve_1.max_batch_measured
    extra = 0.0
    if s.curves.sources[c.instances] in INFERRED_CONTENTION:
        extra += ASSUMED_CONTENTION_REL ** 2
    extrap = c.max_batch_size > top
    # sizes the target-rate runs did not form come from the closed loop's line
    if extrap or (s.curves.open_top and int(p.max_batch or 0) > s.curves.open_top):
        extra += EXTRAPOLATION_REL ** 2
    pred = TunePrediction(
        window_us=c.window_us, max_batch_size=c.max_batch_size, instances=c.instances,
        stable=bool(p.stable), utilisation=float(p.utilisation),
        throughput_queries_per_s=p.throughput_queries_per_s,
        mean_batch=p.mean_batch, capacity_queries_per_s=float(cap),
        contention_factor=float(s.curves.factors[c.instances]),
        contention_source=s.curves.sources[c.instances],
        extrapolated_above=int(top) if extrap else None)
    if p.stable and lat:
        arr = np.asarray(lat, dtype=np.float64)
        t50, t99 = scaled_drift_terms(s.drift_p50_rel, s.drift_p99_rel, *drift_scale(
            s, c, seed, (percentile(arr, 0.5), percentile(arr, 0.99))))
        pred.p50 = interval(arr, 0.5, s.run_requests, math.sqrt(t50 ** 2 + extra),
                            s.drift_dof)
        pred.p99 = interval(arr, 0.99, s.run_requests, math.sqrt(t99 ** 2 + extra),
                            s.drift_dof)
        if 0.0 < s.floor_ms <= pred.p50.point_ms and pred.p50.lo_ms < s.floor_ms:
            # no request is faster than the fastest one alone: a wide drift term must not
            # put the lower end below it
            pred.p50 = pred.p50.model_copy(update={"lo_ms": s.floor_ms})
        if pred.p99.lo_ms < pred.p50.lo_ms:
            # a run's P99 is never below its P50: the P99 interval starts no lower than
            # the P50 interval does (its wider drift term would put it there)
            pred.p99 = pred.p99.model_copy(update={"lo_ms": pred.p50.lo_ms})
        pred.p50_ms, pred.p99_ms = pred.p50.point_ms, pred.p99.point_ms
    return pred


def predict_all(s: Search, seed: int = 0) -> list[TunePrediction]:
    """Every candidate of :func:`grid` predicted."""
    return [predict_one(s, c, seed) for c in grid(s.max_batch, s.max_instances,
                                                   s.windows_us)]


def choose(preds: Sequence[TunePrediction], objective: Objective, slo_p99_ms: float | None,
           max_utilisation: float = DEFAULT_MAX_UTILISATION,
           exclude: Sequence[tuple[float, int, int]] = ()
           ) -> tuple[TunePrediction | None, TunePrediction | None]:
    """``(pick, runner_up)`` by the objective on the intervals; marks ``feasible``.
    ``exclude``: configurations ``(window_us, max_batch, instances)`` not to pick
    (measured and found outside their interval twice)."""
    feas = []
    for p in preds:
        p.feasible = objective.feasible(p, slo_p99_ms=slo_p99_ms,
                                        max_utilisation=max_utilisation)
        if p.feasible and (p.window_us, p.max_batch_size, p.instances) not in exclude:
            feas.append(p)
    if not feas:
        return None, None
    ranked = objective.rank(feas)
    return ranked[0], (ranked[1] if len(ranked) > 1 else None)


def probe_candidate(preds: Sequence[TunePrediction], slo_p99_ms: float | None,
                    max_utilisation: float = DEFAULT_MAX_UTILISATION,
                    exclude: Sequence[tuple[float, int, int]] = (),
                    objective: Objective | None = None) -> TunePrediction | None:
    """The configuration to measure when no interval is within the objective: among the
    stable predictions at most ``max_utilisation`` busy, not in ``exclude``, whose P99
    point prediction is at most ``slo_p99_ms`` (ms), the first by ``objective``'s
    ranking (:meth:`~trtcheck.analyze.objectives.Objective.rank`: the fewest instances,
    the highest capacity or the lowest P99, each with the P99 interval's upper end as
    its P99), so the measured configuration is the one the objective would pick if its
    interval were within; without ``objective``, the one whose P99 interval comes
    closest (lowest upper end; ties to the simpler). ``None`` when there is no P99
    objective or no point prediction meets it: then no measurement is likely to."""
    if slo_p99_ms is None:
        return None
    cands = [p for p in preds
             if p.stable and p.p99 is not None and p.p99_ms is not None
             and p.utilisation <= max_utilisation and p.p99_ms <= slo_p99_ms
             and (p.window_us, p.max_batch_size, p.instances) not in exclude]
    if not cands:
        return None
    if objective is not None:
        return objective.rank(cands)[0]
    return min(cands, key=lambda p: (p.p99.hi_ms, p.instances,  # type: ignore[union-attr]
                                     p.window_us, p.max_batch_size))


def none_keeps_up(preds: Sequence[TunePrediction],
                  max_utilisation: float = DEFAULT_MAX_UTILISATION
                  ) -> TunePrediction | None:
    """When no prediction keeps up with the rate at most ``max_utilisation`` busy (0-1),
    the one that carries the most (its ``capacity_queries_per_s``): the rate, not the P99
    objective, is what no configuration searched meets. ``None`` when one keeps up or
    there are no predictions."""
    if not preds or any(p.stable and p.utilisation <= max_utilisation for p in preds):
        return None
    return max(preds, key=lambda p: p.capacity_queries_per_s or 0.0)


def best_p99(preds: Sequence[TunePrediction]) -> TunePrediction | None:
    """The stable prediction with the lowest P99 upper end (what an unmet objective
    came closest to)."""
    st = [p for p in preds if p.stable and p.p99 is not None]
    return min(st, key=lambda p: p.p99.hi_ms) if st else None  # type: ignore[union-attr]


def config_text(p: Any, device_words: str = "instance") -> str:
    """``window 1 ms, max batch 8, 2 instances``."""
    n = p.instances
    return (f"window {us_to_ms(p.window_us):g} ms, max batch {p.max_batch_size}, {n} "
            f"{device_words}{'s' if n != 1 else ''}")


def calibration_record(s: Search, device: str, devices: int) -> TuneCalibration:
    """The calibration as recorded in tune.json."""
    per = []
    for n in range(1, s.max_instances + 1):
        cv = s.curves.curve(n)
        per.append(TuneInstanceCalibration(
            instances=n, batch_sizes=[int(b) for b, _ in cv.points()],
            t_ms=[round(float(t), 4) for _, t in cv.points()],
            contention_factor=round(float(s.curves.factors[n]), 4),
            source="measured" if n == 1 else s.curves.sources[n],
            runs=list(s.curves.runs_at.get(n, []))))
    delay = s.queueing.request_delay_ms
    return TuneCalibration(
        per_instances=per, per_batch_overhead_ms=float(s.queueing.per_batch_overhead_ms),
        request_delay_median_ms=float(np.median(delay)) if delay else 0.0,
        drift_p50_rel=float(s.drift_p50_rel), drift_p99_rel=float(s.drift_p99_rel),
        contention_per_instance=float(s.curves.k_per_instance),
        contention_source=s.curves.k_source,
        idle_slowdown=round(float(s.curves.idle_slowdown), 4),
        idle_tau_ms=IDLE_TAU_MS, idle_source=s.curves.idle_source,
        largest_batch_measured=int(s.curves.curve_1.max_batch_measured),
        device=device, devices=devices)


def idle_clip_note(curves: InstanceCurves) -> str | None:
    """The note a tune document carries when the idle slowdown's fit was set aside: it
    reached its upper bound (:data:`IDLE_SLOWDOWN_MAX`) without explaining the slower
    run (:attr:`InstanceCurves.idle_clipped`), or the one-instance closed loop
    contradicted it (``idle_source == "contradicted"``, :data:`IDLE_CLOSED_RATIO_MAX`);
    else ``None``."""
    n = curves.idle_high_instances
    f = float(curves.factors.get(n, 1.0))
    if curves.idle_source == "contradicted":
        return (f"no idle slowdown is applied: its fit (x{1 + curves.idle_fitted:.3g} for an "
                "idle instance) made a busy instance's T(b) faster than the closed loop at 1 "
                "instance, which keeps its instance busy, measured: that run took "
                f"x{curves.idle_closed_ratio:.3g} the fitted T(b) at the sizes both ran "
                f"(above {IDLE_CLOSED_RATIO_MAX:g} sets the fit aside), so idle gaps are not "
                f"what slowed the {n}-instance run at the rate (instances sharing a device or "
                f"cores); the whole ratio is the contention factor, x{f:.3g} for {n} "
                "instances, and T(b) is the runs' own")
    if not curves.idle_clipped:
        return None
    return (f"no idle slowdown is applied: its fit reached the upper bound "
            f"{IDLE_SLOWDOWN_MAX:g} (an idle instance at most {1 + IDLE_SLOWDOWN_MAX:g}x "
            f"slower) and the {n}-instance run at the rate was still x"
            f"{curves.idle_residual:.3g} slower per execution than that explains, so idle "
            "gaps are not what slowed it (instances sharing a device or cores); the whole "
            f"ratio is the contention factor, x{f:.3g} for {n} instances, and T(b) is the "
            "runs' own")


def overhead_bound_note(cal: LiveCalibration) -> str | None:
    """The note a tune document carries when the per-execution overhead fitted to
    Triton's queue time (:func:`~trtcheck.analyze.advice.live_calibration.calibrate`)
    stopped at its upper bound, ``MAX_PER_BATCH_OVERHEAD_SHARE x T(1)`` of the
    calibration run's own T(b), else ``None``."""
    bound = MAX_PER_BATCH_OVERHEAD_SHARE * float(cal.curve.t1_ms)
    if bound <= 0 or cal.per_batch_overhead_ms < bound * (1.0 - 1e-9):
        return None
    q_sim = cal.check.get("queue_mean_ms")
    q_meas = cal.check.get("measured_queue_mean_ms")
    queue = (f"Triton's mean queue time {q_meas:.3g} ms against {q_sim:.3g} ms simulated"
             if q_sim is not None and q_meas is not None else "Triton's mean queue time")
    return (f"the per-execution overhead fitted to Triton's queue time stopped at its upper "
            f"bound, T(1) = {bound:.3g} ms ({queue}): the calibration run queued more than "
            "the model explains (a disturbed run, or a window timer that fires late), so "
            "queue times at other configurations may be off")


CONTENTION_EXECUTIONS_RATIO = 2.0
"""A pick on 2+ instances whose predicted executions per second reach this multiple of
the contention run's gets :func:`contention_load_note` (our threshold: the live picks
on the GPU records that lost to a configuration batching wider ran about 3x)."""


def contention_load_note(pick: TunePrediction, rate_per_s: float, contention_run: Any,
                         unit: str = "instance") -> str | None:
    """The note a tune document carries when the pick shares a device among 2 or more
    instances and runs at least :data:`CONTENTION_EXECUTIONS_RATIO` times the executions
    per second of the contention run (the target rate at the largest instance count),
    else ``None``.

    Executions per second: the pick's ``rate_per_s / mean batch`` (predicted, req/s)
    against the contention run's measured throughput over its mean batch. The contention
    factor is calibrated on that run; how much instances that share a device slow each
    other grows with how often they execute together (docs/tune.md, "Measured on GPUs":
    ConvNeXt-Tiny from CUDA graphs on an H100 ran each batch 2.37x its one-instance time
    at 1,120 executions/s on 4 instances, against 1.23-1.32x at 315-375/s), so such a
    pick's prediction leans optimistic until its confirming run measures it."""
    mb = pick.mean_batch
    if pick.instances < 2 or not mb or mb <= 0 or rate_per_s <= 0:
        return None
    m = measured_of(contention_run)
    if m["mean_batch"] <= 0 or m["throughput_queries_per_s"] <= 0:
        return None
    e_cal = m["throughput_queries_per_s"] / m["mean_batch"]
    e_pick = rate_per_s / float(mb)
    ratio = e_pick / e_cal
    if ratio < CONTENTION_EXECUTIONS_RATIO:
        return None
    n_cal = run_instances(contention_run)
    return (f"the pick runs about {e_pick:.4g} executions/s on {pick.instances} "
            f"{unit}s, {ratio:.2g}x the {e_cal:.4g}/s of the contention run ({n_cal} "
            f"{unit}s at the rate, mean batch {m['mean_batch']:.3g}) that calibrated how "
            "much they slow each other: that slowdown grows with how often they execute "
            "together, so its prediction may be optimistic; the confirming run measures it, "
            "and a configuration that batches wider runs fewer executions")


def device_of(config: dict[str, Any]) -> tuple[str, int]:
    """``("GPU", gpus)`` when every instance group is ``KIND_GPU`` (the GPUs its
    ``gpus`` lists, else 1: Triton's default places them on every visible GPU, which
    the config does not say), else ``("CPU", 1)``: instances share the host's cores."""
    groups = [g for g in (config.get("instance_group") or []) if isinstance(g, dict)]
    if groups and all(str(g.get("kind", "")) == "KIND_GPU" for g in groups):
        gpus = {int(x) for g in groups for x in (g.get("gpus") or [])}
        return "GPU", max(1, len(gpus))
    return "CPU", 1


def measured_of(run: Any) -> dict[str, float]:
    """``p50_ms``, ``p99_ms``, ``throughput_queries_per_s``, ``mean_batch``,
    ``requests`` of a one-configuration live run (its headline: the median repeat)."""
    c = run.configs[0]
    lat = [x for r in c.repeats for x in r.latencies_ms]
    thr = [r.throughput_queries_per_s for r in c.repeats]
    mb = [r.mean_batch_size for r in c.repeats]
    return {"p50_ms": percentile(lat, 0.5) if lat else math.nan,
            "p99_ms": percentile(lat, 0.99) if lat else math.nan,
            "throughput_queries_per_s": float(np.median(thr)) if thr else 0.0,
            "mean_batch": float(np.median(mb)) if mb else 0.0,
            "requests": float(len(lat))}
