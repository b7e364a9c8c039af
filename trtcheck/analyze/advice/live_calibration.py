"""Calibrate the serving simulator from a live Triton run, to predict other settings.

A live run (``trtcheck serve --url``) records, per configuration, the client's latency of
every request and the delta of Triton's own statistics (``/v2/models/NAME/stats``,
:class:`~trtcheck.results.serve.TritonStatsDelta`). From one such configuration (the
*calibration run*) this module takes what the simulator needs to predict others:

1. **T(b) from Triton's ``batch_stats``**: per batch size ``b`` the server ran, the mean
   time an execution occupied the instance, ``(compute_input + compute_infer +
   compute_output) / executions``. These are batches as the real batcher formed them, so
   whatever the backend spends per request inside an execution (the python backend's
   per-request tensor conversion and IPC) is in them. Sizes that ran fewer than
   :data:`MIN_EXECUTIONS` times are left out; dips are removed by a weighted isotonic
   regression (weights: executions), as for a bench curve.
2. **The per-request overhead outside the queue**: what the client saw beyond the
   server's queue and compute, as a distribution. The calibration configuration is
   simulated with the curve; the delay at each quantile ``q`` is ``client(q) -
   simulated server(q)`` (quantile matching: client latency from the actual send minus
   the simulated queue + execution time), clipped at 0. It holds the client's encoding
   and decoding, the network, Triton's protocol handling and response (``success`` -
   ``queue`` - ``compute`` in its statistics) and the client's scheduling jitter. Its
   tail is mostly stalls that hold back every answer of an execution together, so a
   closed loop draws it once per execution
   (:attr:`~trtcheck.analyze.advice.simulator.ServiceModel.delay_per_execution`).
3. **The queueing behaviour**: the mean time a request waits before its batch starts,
   simulated for the calibration configuration (with the run's actual send gaps when
   they are known), is compared with Triton's (``queue.total / queue.count``). A
   shortfall is fitted as instance time per execution outside ``compute``
   (``per_batch_overhead_ms``: the scheduler handing the batch to the instance, the
   instance thread waking, the response leaving), by bisection, so the simulated mean
   queue time matches the server's. The server's mean batch (an exact count) is
   reported beside the simulated one: the server's time, not its batch count, is what
   latency predictions rest on, and the batch count also depends on how requests
   bunched on their way to the server, which the client does not see.

Triton's batcher rules themselves (delay from the oldest request, preferred sizes, how
instances take batches) are in :mod:`trtcheck.policy`, shared with the simulator; every
simulation here runs Triton's batcher thread (``ServiceModel(batcher="triton")``): its
batcher closes a batch when the window expires even while the instances are busy, and
Triton's queue time includes the wait of a formed batch for its instance. Fitted with the
embedded batcher's rule (a batch forms only for a free instance), the per-execution
overhead absorbed that difference (0.84 ms on a 16-core host, 0.06 ms with Triton's rule).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from trtcheck.analyze.advice.curve import LatencyCurve, isotonic_fit, make_curve
from trtcheck.analyze.advice.simulator import Candidate, ServiceModel, make_arrivals, simulate
from trtcheck.errors import InputError
from trtcheck.policy import BatchingPolicy
from trtcheck.stats import percentile
from trtcheck.units import us_to_ms

MIN_EXECUTIONS = 5
"""Executions a batch size needs in the calibration run to give a point of T(b) (a size
that ran once or twice carries one noisy time; our threshold, as for a serve run)."""

DELAY_QUANTILES = 200
"""Quantiles of the per-request delay distribution kept (0.25% steps)."""

MIN_SEND_TIMES = 200
"""Send times a calibration run needs before its own arrival gaps replace Poisson ones."""

DELAY_REFINEMENTS = 3
"""Fixed-point steps that re-match the delay quantiles after the independent delay is
added to the simulated server time (their sum's quantiles are not the sum of quantiles);
three bring the calibration run's simulated P50 and P99 within a few percent of the
client's (our choice)."""

CALIBRATION_REQUESTS = 6000
"""Requests simulated for each step of the calibration (enough for a stable mean queue
time and a P99 from 60 samples above it)."""

QUEUE_MATCH_TOLERANCE = 0.02
"""A simulated mean queue time within 2% of Triton's needs no fitted overhead (about the
simulation's own sampling noise at :data:`CALIBRATION_REQUESTS` requests)."""

TRANSIENT_SEGMENTS = 16
"""Consecutive segments (in request order) a repeat is cut into to find a transient."""

TRANSIENT_MIN_SEGMENT = 25
"""Fewest requests per segment (a repeat of fewer than four segments has no transient)."""

TRANSIENT_FACTOR = 2.0
"""A segment is in a transient when its median latency is above this multiple of the
repeat's steady level (the 25th percentile of the segment medians): most requests of
the segment waited behind something, not a tail (our threshold; the segment medians of
steady GPU and CPU runs stayed within 1.6x of that level)."""

TRANSIENT_MIN_STEADY = 200
"""Fewest requests a repeat must keep outside its transients for them to be left out."""

MAX_PER_BATCH_OVERHEAD_SHARE = 1.0
"""The fitted per-execution overhead is searched in ``[0, share x T(1)]`` (our bound: more
than the execution itself means the calibration run is not explained by the model)."""


@dataclass(frozen=True)
class LiveObservation:
    """One measured configuration of a live Triton (the calibration run).

    Attributes:
        window_us: ``max_queue_delay_microseconds`` the server ran with.
        max_batch_size: ``max_batch_size``.
        preferred_batch_sizes: ``preferred_batch_size`` list (empty: Triton's default,
            the max batch size).
        instances: instance count of the model.
        rate_per_s: the arrival rate the client achieved, requests per second.
        batch_stats: ``{b: (executions, total ms)}``: executions of batch size ``b`` and
            their summed compute (input + infer + output) time.
        queue_mean_ms: Triton's mean queue time per request.
        compute_mean_ms: Triton's mean compute (input + infer + output) per request.
        server_request_mean_ms: Triton's mean request time (``success``).
        mean_batch: inferences / executions on the server.
        client_latencies_ms: the client's latency of every ok request, from its actual
            send, ms.
        send_times_s: when each request was actually sent (s, any origin, increasing),
            or ``None``; the calibration then simulates these arrivals rather than
            Poisson ones at ``rate_per_s`` (a client that fell behind sends in bunches,
            which batch differently).
        transient_share: share (0..1) of the run's requests that fell in a transient
            (:func:`transient_mask`) and are not in ``client_latencies_ms``.
        transient_excess_ms: those requests' latency above their repeat's steady median,
            summed and divided by all the run's requests (ms per request): the part of
            Triton's mean queue time the transient added.
    """

    window_us: float
    max_batch_size: int
    preferred_batch_sizes: tuple[int, ...]
    instances: int
    rate_per_s: float
    batch_stats: dict[int, tuple[int, float]]
    queue_mean_ms: float
    compute_mean_ms: float
    server_request_mean_ms: float
    mean_batch: float
    client_latencies_ms: np.ndarray
    send_times_s: np.ndarray | None = None
    transient_share: float = 0.0
    transient_excess_ms: float = 0.0

    @property
    def steady_queue_mean_ms(self) -> float:
        """Triton's mean queue time without the transient's excess (ms, >= 0)."""
        return max(0.0, self.queue_mean_ms - self.transient_excess_ms)

    def policy(self) -> BatchingPolicy:
        """The batching policy the server ran."""
        return BatchingPolicy(max_batch_size=self.max_batch_size,
                              max_queue_delay_us=self.window_us,
                              preferred_batch_sizes=tuple(
                                  p for p in self.preferred_batch_sizes
                                  if p <= self.max_batch_size))


@dataclass
class LiveCalibration:
    """What a live run calibrates (inputs of :class:`~trtcheck.analyze.advice.simulator.ServiceModel`).

    Attributes:
        curve: T(b) from Triton's ``batch_stats``.
        request_delay_ms: per-request delay outside the queue, :data:`DELAY_QUANTILES`
            quantiles (ms, >= 0) in a fixed random order (the simulator resamples
            blocks of consecutive samples; sorted quantiles would make a block a tail).
        per_batch_overhead_ms: fitted instance time per execution outside compute, ms.
        observation: the calibration run.
        check: what the calibrated model predicts for the calibration run itself, with
            the measured numbers beside it (``mean_batch``, ``queue_mean_ms``, ``p50_ms``,
            ``p99_ms`` and ``measured_...``).
        notes: what was left out or could not be fitted, in words.
    """

    curve: LatencyCurve
    request_delay_ms: tuple[float, ...]
    per_batch_overhead_ms: float
    observation: LiveObservation
    check: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def service(self) -> ServiceModel:
        """The calibrated service model (no spread beyond the delay distribution: Triton
        reports means per batch size, not each execution; Triton's batcher; in a closed
        loop the delay is drawn once per execution)."""
        return ServiceModel(self.curve, per_batch_overhead_ms=self.per_batch_overhead_ms,
                            spread="none", request_delay_ms=self.request_delay_ms,
                            batcher="triton", delay_per_execution=True)


def curve_from_batch_stats(batch_stats: dict[int, tuple[int, float]], *,
                           source: str = "Triton batch_stats",
                           min_executions: int = MIN_EXECUTIONS) -> LatencyCurve:
    """T(b) in ms from per-batch-size execution counts and total compute times.

    Args:
        batch_stats: ``{b: (executions, total_ms)}``, ``b >= 1``.
        source: where they came from (for messages).
        min_executions: sizes with fewer executions are left out (noted); when every
            size has fewer, all are kept.

    Raises:
        InputError: no execution at all.
    """
    pts = {int(b): (int(n), float(ms)) for b, (n, ms) in batch_stats.items()
           if int(n) > 0 and float(ms) > 0}
    if not pts:
        raise InputError(f"{source} holds no execution, so T(b) is unknown",
                         "calibrate from a run in which the server executed requests")
    kept = {b: v for b, v in pts.items() if v[0] >= min_executions} or pts
    dropped = sorted(set(pts) - set(kept))
    bs = sorted(kept)
    means = [kept[b][1] / kept[b][0] for b in bs]
    weights = [float(kept[b][0]) for b in bs]
    fitted = isotonic_fit(weights, means)
    notes = []
    if dropped:
        sizes = (f"batch size {dropped[0]}" if len(dropped) == 1
                 else f"batch sizes {', '.join(map(str, dropped))}")
        notes.append(f"{sizes} ran fewer than {min_executions} times in the calibration "
                     f"run and give{'s' if len(dropped) == 1 else ''} no point")
    moved = [f"T({b}) {m:.4g} -> {f:.4g} ms" for b, m, f in zip(bs, means, fitted)
             if abs(f - m) > 1e-12]
    if moved:
        notes.append("made non-decreasing by a weighted isotonic regression (weights: "
                     "executions): " + ", ".join(moved))
    curve = make_curve(list(zip(bs, fitted)), source=source)
    return curve.with_notes(notes) if notes else curve


def _simulate(obs: LiveObservation, service: ServiceModel, seed: int,
              latencies: list[float] | None = None) -> Any:
    n = max(CALIBRATION_REQUESTS, int(obs.client_latencies_ms.size))
    if obs.send_times_s is not None and obs.send_times_s.size >= MIN_SEND_TIMES:
        # the run's own gaps, repeated end to end up to n arrivals (keeps its bunching)
        gaps = np.diff(np.sort(np.asarray(obs.send_times_s, dtype=np.float64)))
        gaps = np.tile(gaps, -(-n // gaps.size))[:n]
        arrivals = np.cumsum(np.concatenate(([1.0 / obs.rate_per_s], gaps[1:])))
    else:
        arrivals = make_arrivals("poisson", obs.rate_per_s, n, seed)
    return simulate(obs.policy(), obs.instances, service, arrivals, seed=seed,
                    warmup_fraction=0.1, rate_per_s=obs.rate_per_s, latencies_out=latencies)


def _queue_mean_ms(pred: Any) -> float:
    """Mean time a request waited before its batch started, ms (Little: L / lambda)."""
    if not pred.stable or not pred.throughput_queries_per_s:
        return math.inf
    return 1e3 * float(pred.mean_queue_len) / float(pred.throughput_queries_per_s)


def _quantiles(samples: Sequence[float] | np.ndarray, qs: np.ndarray) -> np.ndarray:
    """``samples`` at each fraction of ``qs`` (:func:`trtcheck.stats.percentile`)."""
    arr = np.asarray(samples, dtype=np.float64)
    return np.array([percentile(arr, float(q)) for q in qs])


def transient_mask(latencies_ms: Sequence[float] | np.ndarray) -> np.ndarray:
    """Which requests of one repeat (latencies in request order, ms) fell in a transient.

    The repeat is cut into :data:`TRANSIENT_SEGMENTS` consecutive segments (at least
    :data:`TRANSIENT_MIN_SEGMENT` requests each); a segment whose median is above
    :data:`TRANSIENT_FACTOR` x the steady level (the 25th percentile of the segment
    medians) is in a transient. That is a stretch where most requests waited behind
    something: first executions of new batch sizes (a framework autotuning each new
    shape), a stall that built a queue the server then worked off. It is only a
    transient when the run came back: a repeat whose last segment is still above the
    level may be a queue that grows with the load, and keeps every request. Nothing is
    marked when fewer than :data:`TRANSIENT_MIN_STEADY` requests would stay.

    Returns:
        A boolean array of ``len(latencies_ms)``, True for a request in a transient.
    """
    lat = np.asarray(latencies_ms, dtype=np.float64)
    n = lat.size
    mask = np.zeros(n, dtype=bool)
    k = min(TRANSIENT_SEGMENTS, n // TRANSIENT_MIN_SEGMENT)
    if k < 4:
        return mask
    bounds = [i * n // k for i in range(k + 1)]
    medians = np.array([np.median(lat[a:b]) for a, b in zip(bounds, bounds[1:])])
    level = float(np.percentile(medians, 25))
    hot = medians > TRANSIENT_FACTOR * level
    if level <= 0 or hot[-1] or not hot.any():
        return mask
    for i in np.flatnonzero(hot):
        mask[bounds[i]:bounds[i + 1]] = True
    if n - int(mask.sum()) < TRANSIENT_MIN_STEADY:
        mask[:] = False
    return mask


class OverloadedCalibration(InputError):
    """A calibration run whose load exceeds what its configuration serves (the simulated
    queue grows without bound)."""


#: Fewest ok requests a calibration run needs.
MIN_CALIBRATION_OK = 10


def calibrate(obs: LiveObservation, *, seed: int = 0) -> LiveCalibration:
    """Calibrate T(b), the per-execution overhead and the per-request delay from one
    measured configuration (see the module text for the method).

    Raises:
        InputError: no executions, no ok request, or a rate/configuration the simulator
            refuses.
    """
    if obs.client_latencies_ms.size < MIN_CALIBRATION_OK:
        need_s = math.ceil(2 * MIN_CALIBRATION_OK / max(obs.rate_per_s, 1e-9))
        raise InputError(f"the calibration run has fewer than {MIN_CALIBRATION_OK} ok "
                         "requests",
                         f"calibrate from a run of at least {2 * MIN_CALIBRATION_OK} requests "
                         f"(at {obs.rate_per_s:.3g} req/s: serve --duration-s {need_s})")
    notes: list[str] = []
    curve = curve_from_batch_stats(obs.batch_stats)
    notes.extend(curve.notes)

    if obs.transient_share > 0:
        notes.append(f"{obs.transient_share:.0%} of the calibration run's requests fell in a "
                     "transient (latency medians above "
                     f"{TRANSIENT_FACTOR:g}x the run's steady level, then back to it: first "
                     "executions of new batch sizes or a stall the server worked off); "
                     "they are left out of the per-request delay, and their "
                     f"{obs.transient_excess_ms:.3g} ms per request out of the queue-time fit")
    # queueing: fit the per-execution overhead to Triton's mean queue time
    hi = MAX_PER_BATCH_OVERHEAD_SHARE * curve.t1_ms
    target = obs.steady_queue_mean_ms

    def queue_at(c_ms: float) -> float:
        sv = ServiceModel(curve, per_batch_overhead_ms=c_ms, spread="none", batcher="triton")
        return _queue_mean_ms(_simulate(obs, sv, seed))

    q0 = queue_at(0.0)
    c_batch = 0.0
    if target > q0 * (1.0 + QUEUE_MATCH_TOLERANCE):
        q_hi = queue_at(hi)
        if q_hi <= target:
            c_batch = hi
            notes.append(f"Triton's mean queue time {target:.3g} ms is more than the model "
                         f"explains even with {hi:.3g} ms per execution outside compute "
                         f"({q_hi:.3g} ms): the calibration run was disturbed or the server "
                         "does more than the model knows; predictions will run low")
        else:
            lo_c, hi_c = 0.0, hi
            for _ in range(10):  # 1/1024 of the range
                mid = 0.5 * (lo_c + hi_c)
                if queue_at(mid) < target:
                    lo_c = mid
                else:
                    hi_c = mid
            c_batch = 0.5 * (lo_c + hi_c)
    elif target < q0 * (1.0 - QUEUE_MATCH_TOLERANCE):
        notes.append(f"Triton's mean queue time {target:.3g} ms is below what the simulated "
                     f"batcher gives with no overhead at all ({q0:.3g} ms)")
    service = ServiceModel(curve, per_batch_overhead_ms=c_batch, spread="none",
                           batcher="triton")
    sim_lat: list[float] = []
    _simulate(obs, service, seed, sim_lat)
    if not sim_lat:  # the simulated queue grows without bound: no steady state to match
        cap = obs.instances * 1e3 * max(b / float(curve.t_ms(b))
                                        for b in range(1, max(1, obs.max_batch_size) + 1))
        raise OverloadedCalibration(
            f"the calibration run's load ({obs.rate_per_s:.3g} req/s) is more than its "
            f"configuration serves (at most about {cap:.3g} req/s with {obs.instances} "
            "instance(s)): its queue only grows, so it calibrates nothing",
            "calibrate from a run at a rate the configuration keeps up with")

    # per-request delay: client quantiles minus simulated server quantiles
    qs = (np.arange(DELAY_QUANTILES) + 0.5) / DELAY_QUANTILES
    delay = np.clip(_quantiles(obs.client_latencies_ms, qs) - _quantiles(sim_lat, qs),
                    0.0, None)
    order = np.random.default_rng(seed + 17).permutation(DELAY_QUANTILES)
    cal = LiveCalibration(curve=curve, request_delay_ms=tuple(delay[order].tolist()),
                          per_batch_overhead_ms=float(c_batch), observation=obs, notes=notes)
    return rematch_request_delay(cal, LiveCalibration.service, seed=seed)


def rematch_request_delay(cal: LiveCalibration,
                          service_of: Callable[[LiveCalibration], ServiceModel], *,
                          seed: int = 0, steps: int = DELAY_REFINEMENTS) -> LiveCalibration:
    """``cal`` with its per-request delay re-matched so that the service model
    ``service_of(cal)`` reproduces the calibration run's client latency quantiles.

    Fixed point over the :data:`DELAY_QUANTILES` quantiles ``q``: ``delay(q) +=
    client(q) - simulated(q)``, clipped at 0 ms, ``steps`` times (the delay is drawn
    independently of the server time, so the quantiles of their sum are not the sum of
    quantiles). The step is not a contraction in the tail (a P99 gap added in full to
    the delay's top quantiles moves the sum's P99 by more or less than the gap), so
    the delay kept is the one among the starting point and the ``steps`` iterates whose
    simulated P50 and P99 are nearest the client's (the sum of the two relative misses:
    a P50 the clipped delay cannot lower does not decide among them). A predictor whose
    service model differs from the calibration's own (another T(b), an idle slowdown,
    stalls) calls it with that model, so that it reproduces its calibration run before
    it predicts anything else. ``cal.check`` is recomputed under ``service_of``.

    Args:
        cal: a calibration (:func:`calibrate` with the same ``seed``); its delay, in
            the order that seed gives, is the starting point.
        service_of: builds the simulated service model from a calibration, ms units.
        seed: simulation seed; steps: fixed-point steps (>= 0).

    Returns:
        A new calibration; ``cal`` is unchanged.
    """
    obs = cal.observation
    qs = (np.arange(DELAY_QUANTILES) + 0.5) / DELAY_QUANTILES
    client_q = _quantiles(obs.client_latencies_ms, qs)
    # the simulator resamples delays in blocks of consecutive samples (a time series):
    # the quantiles go in a fixed random order, so a block is a spread, not a tail
    order = np.random.default_rng(seed + 17).permutation(DELAY_QUANTILES)
    stored = np.asarray(cal.request_delay_ms, dtype=np.float64)
    delay = np.zeros(DELAY_QUANTILES)
    if stored.size == DELAY_QUANTILES:
        delay[order] = stored  # back to quantile order
    elif stored.size:
        delay = _quantiles(stored, qs)
    out = replace(cal, request_delay_ms=tuple(delay[order].tolist()),
                  notes=list(cal.notes), check=dict(cal.check))
    measured = (percentile(obs.client_latencies_ms, 0.5),
                percentile(obs.client_latencies_ms, 0.99))
    best: tuple[float, tuple[float, ...]] | None = None
    for step in range(steps + 1):  # the delay is added independently: re-match
        lat: list[float] = []
        _simulate(obs, service_of(out), seed, lat)
        if not lat:
            break
        miss = sum(abs(percentile(lat, q) / m - 1.0) for q, m in zip((0.5, 0.99), measured)
                   if m > 0)
        if best is None or miss < best[0]:
            best = (miss, out.request_delay_ms)
        if step == steps:
            break
        delay = np.clip(delay + (client_q - _quantiles(lat, qs)), 0.0, None)
        out.request_delay_ms = tuple(delay[order].tolist())
    if best is not None:
        out.request_delay_ms = best[1]
    final = _simulate(obs, service_of(out), seed)
    out.check = {
        "mean_batch": float(final.mean_batch or 0.0),
        "measured_mean_batch": float(obs.mean_batch),
        "queue_mean_ms": _queue_mean_ms(final),
        "measured_queue_mean_ms": float(obs.steady_queue_mean_ms),
        "p50_ms": float(final.p50_ms or 0.0),
        "measured_p50_ms": percentile(obs.client_latencies_ms, 0.50),
        "p99_ms": float(final.p99_ms or 0.0),
        "measured_p99_ms": percentile(obs.client_latencies_ms, 0.99),
    }
    return out


PREDICTION_REQUESTS = 8000
"""Requests simulated per predicted configuration (P99 from 80 samples above it)."""


def predict(cal: LiveCalibration, configs: Sequence[Any], rate_per_s: float, *,
            seed: int = 0, requests: int = PREDICTION_REQUESTS) -> list[Any]:
    """Predict configurations (:class:`~trtcheck.analyze.advice.simulator.Candidate`: window,
    max batch, instances, preferred sizes) under Poisson arrivals at ``rate_per_s`` with
    the calibrated service model (common random numbers across configurations).

    Returns:
        one :class:`~trtcheck.results.advice.SimPrediction` per configuration.
    """
    from trtcheck.analyze.advice.simulator import sweep

    arrivals = make_arrivals("poisson", rate_per_s, requests, seed)
    return sweep(configs, cal.service(), arrivals, seed=seed, rate_per_s=rate_per_s)


def _server_settings(cfg: Any, live: Any, settings: Any) -> tuple[float, int, tuple[int, ...],
                                                                  int]:
    """``(window_us, max_batch, preferred, instances)`` the server ran a configuration
    with: its recorded model config (the sweep's override, else the one read before the
    run), else the sweep's settings."""
    mc = getattr(cfg, "server_model_config", None) or getattr(live, "model_config_json", None)
    if isinstance(mc, dict) and mc:
        db = mc.get("dynamic_batching") or {}
        groups = [g for g in (mc.get("instance_group") or []) if isinstance(g, dict)]
        count = sum(int(str(g.get("count", 1) or 1)) for g in groups) or 1
        mbs = int(str(mc.get("max_batch_size", 0) or 0))
        window = float(str(db.get("max_queue_delay_microseconds", 0) or 0)) if db else 0.0
        pref = tuple(int(str(p)) for p in (db.get("preferred_batch_size") or []))
        return window, max(mbs, 1) if db else 1, pref, count
    pref = cfg.preferred_batch_sizes if cfg.preferred_batch_sizes is not None else \
        settings.preferred_batch_sizes
    inst = cfg.instances if cfg.instances is not None else settings.instances
    return cfg.window_us, int(cfg.max_batch_size), tuple(pref), int(inst)


def observation_from_serve(serve: Any, source: str = "results.json") -> LiveObservation:
    """The calibration run of a live serving run (``trtcheck serve --url``): its first
    open-loop configuration with server statistics, all repeats pooled (counts and times summed;
    their latencies from the actual send joined); the send times of its longest repeat;
    the rate the client achieved. ``batch_stats`` pool every configuration of the run
    with the same instance count (a sweep over windows adds larger batch sizes to T(b);
    CPU instances that share cores run slower, so other counts are left out).

    Raises:
        InputError: the run is not a live run, has no open-loop configuration, or no
            repeat has server statistics.
    """
    live = getattr(serve, "live", None)
    if live is None:
        raise InputError(f"{source} holds a run of trtcheck's own batcher, not of a live "
                         "server", "record a live run with trtcheck serve --url URL --model "
                         "NAME -o live.json")
    for cfg in serve.configs:
        reps = [r for r in cfg.repeats if r.server_stats is not None]
        if reps and cfg.load.kind == "open":
            break
    else:
        if any(r.server_stats is not None for c in serve.configs for r in c.repeats):
            raise InputError(f"the live run in {source} has no open-loop load: a burst or a "
                             "closed loop says nothing about arrivals at a rate",
                             "calibrate from trtcheck serve --url URL --model NAME --load "
                             "open:RATE -o live.json")
        raise InputError(f"the live run in {source} has no server statistics",
                         "record it against a Triton server (its statistics extension, "
                         "GET /v2/models/NAME/stats)")
    window_us, mbs, pref, inst = _server_settings(cfg, live, serve.settings)
    bstats: dict[int, list[float]] = {}
    for other in serve.configs:  # T(b): every configuration with this instance count
        if _server_settings(other, live, serve.settings)[3] != inst:
            continue
        for r in other.repeats:
            for s in (r.server_stats.batch_stats if r.server_stats is not None else []):
                acc = bstats.setdefault(int(s.batch_size), [0.0, 0.0])
                acc[0] += s.execution_count
                acc[1] += s.compute_input_ms + s.compute_infer_ms + s.compute_output_ms
    inf = ex = q_n = 0
    q_ms = c_ms = c_n = s_ms = s_n = 0.0
    lat: list[float] = []
    n_all = n_transient = 0
    excess_ms = 0.0
    for r in reps:
        st = r.server_stats
        inf += st.inference_count
        ex += st.execution_count
        q_n += st.queue.count
        q_ms += st.queue.total_ms
        c_n += st.compute_infer.count
        c_ms += st.compute_input.total_ms + st.compute_infer.total_ms + st.compute_output.total_ms
        s_n += st.success.count
        s_ms += st.success.total_ms
        lags = r.send_lag_ms
        if len(lags) == len(r.latencies_ms):  # open loop: latency from the actual send
            rep_lat = np.asarray(r.latencies_ms, dtype=np.float64) - np.asarray(lags)
        else:
            rep_lat = np.asarray(r.latencies_ms, dtype=np.float64)
        hot = transient_mask(rep_lat)
        n_all += rep_lat.size
        if hot.any():
            steady = rep_lat[~hot]
            n_transient += int(hot.sum())
            excess_ms += float(np.clip(rep_lat[hot] - np.median(steady), 0.0, None).sum())
            rep_lat = steady
        lat.extend(rep_lat.tolist())
    if not ex or not q_n:
        raise InputError(f"the server's statistics in {source} count no executed request",
                         "calibrate from a run the server answered")
    longest = max(reps, key=lambda r: len(r.enqueue_offsets_ms))
    sends = (np.asarray(longest.enqueue_offsets_ms, dtype=np.float64) / 1e3
             if len(longest.enqueue_offsets_ms) > 1 else None)
    rates = [r.achieved_send_rate_per_s for r in reps if r.achieved_send_rate_per_s]
    if rates:
        rate = float(np.median(rates))
    else:
        rate = float(np.median([r.throughput_queries_per_s for r in reps]))
    return LiveObservation(
        window_us=window_us, max_batch_size=mbs, preferred_batch_sizes=pref, instances=inst,
        rate_per_s=rate, batch_stats={b: (int(v[0]), float(v[1])) for b, v in bstats.items()},
        queue_mean_ms=q_ms / q_n, compute_mean_ms=c_ms / max(c_n, 1),
        server_request_mean_ms=s_ms / s_n if s_n else 0.0, mean_batch=inf / ex,
        client_latencies_ms=np.asarray(lat, dtype=np.float64), send_times_s=sends,
        transient_share=n_transient / n_all if n_all else 0.0,
        transient_excess_ms=excess_ms / n_all if n_all else 0.0)


def inputs_from_live(results: Any, source: str = "results.json", *, seed: int = 0
                     ) -> tuple[LatencyCurve, dict[str, Any]]:
    """T(b) and the measured inputs of ``advise`` from a live Triton run, in the form of
    :func:`trtcheck.analyze.advice.inputs.inputs_from_results`: ``measured`` holds
    ``request_delay_ms`` (the calibrated per-request delay quantiles),
    ``calibrated_per_batch_overhead_ms`` (the fitted per-execution overhead, ms, simulated
    as :attr:`~trtcheck.analyze.advice.simulator.ServiceModel.per_batch_overhead_ms`, as
    the calibration fitted it), ``model_name``,
    ``server_max_batch_size`` (the served model's configured ``max_batch_size``, the
    larger of the run's and the model's own configuration before a sweep loaded
    another; it may exceed the largest batch the run formed), ``client_network_ms`` (the run's mean
    client + network time per request: client latency from the send - the server's
    request time), ``calibration_command`` (the serve
    command that calibrates again, RATE and MS left to fill in),
    ``source`` and ``live_calibration`` (the :class:`LiveCalibration`).

    Raises:
        InputError: as :func:`observation_from_serve` and :func:`calibrate`.
    """
    serve = results.serve
    cal = calibrate(observation_from_serve(serve, source), seed=seed)
    o = cal.observation
    curve = cal.curve.with_notes([
        f"calibrated from the live Triton run in {source}: window {us_to_ms(o.window_us):g} ms, "
        f"max batch {o.max_batch_size}, {o.instances} instance"
        f"{'s' if o.instances != 1 else ''}, {o.rate_per_s:.4g} req/s; the server formed "
        f"batches of {o.mean_batch:.3g} (simulated {cal.check['mean_batch']:.3g}); client "
        f"P50 {cal.check['measured_p50_ms']:.3g} ms (simulated {cal.check['p50_ms']:.3g}), "
        f"P99 {cal.check['measured_p99_ms']:.3g} ms (simulated {cal.check['p99_ms']:.3g}); "
        f"{cal.per_batch_overhead_ms:.3g} ms per execution outside compute"]
        + [n for n in cal.notes if n not in cal.curve.notes])
    live = serve.live
    measured: dict[str, Any] = {
        "model_name": live.model_name or "model",
        "source": f"calibrated from a live Triton run ({source})",
        "request_delay_ms": cal.request_delay_ms,
        "calibrated_per_batch_overhead_ms": cal.per_batch_overhead_ms,
        "live_calibration": cal,
        # the model's own max batch (a sweep's run may have loaded a smaller one)
        "server_max_batch_size": max(int(o.max_batch_size), live.model_max_batch_size),
        "client_network_ms": max(0.0, float(np.mean(o.client_latencies_ms))
                                 - o.server_request_mean_ms),
        "calibration_command": (f"trtcheck serve --url {live.url} --model "
                                f"{live.model_name or 'MODEL'} --load open:RATE "
                                "--window-ms MS -o live.json"),
        "batcher": "triton",
        "delay_per_execution": True,
        "calibrated_instances": int(o.instances),
        "run_to_run_rel": _repeat_spread(serve),
        "calibration_latencies_ms": _repeat_series(serve),
        "calibration_config": (Candidate(float(o.window_us), int(o.max_batch_size),
                                         int(o.instances)), float(o.rate_per_s)),
    }
    return curve, measured


def _repeat_series(serve: Any) -> tuple[tuple[float, ...], ...]:
    """Each repeat's client latencies (ms, send order) of the calibration configuration
    (the open-loop configuration :func:`_repeat_spread` reads), for the what-if
    intervals' run-to-run spread of P50 and P99; ``()`` without one."""
    for cfg in serve.configs:
        reps = [r for r in cfg.repeats if r.server_stats is not None and r.latency is not None]
        if cfg.load.kind == "open" and reps:
            return tuple(tuple(float(x) for x in r.latencies_ms) for r in reps)
    return ()


def _repeat_spread(serve: Any) -> float | None:
    """The relative run-to-run spread of P50 between the repeats of the calibration
    configuration (the largest pair's ``|a - b| / sqrt(2)`` over their mean), ``None``
    with a single repeat."""
    for cfg in serve.configs:
        lat = [r.latency.median_ms for r in cfg.repeats
               if r.server_stats is not None and r.latency is not None]
        if cfg.load.kind == "open" and lat:
            if len(lat) < 2:
                return None
            m = float(np.mean(lat))
            return float(np.std(lat, ddof=1) / m) if m > 0 else None
    return None
