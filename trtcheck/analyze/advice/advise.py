"""The batching decision tree: from T(b), overheads and an arrival rate to a configuration.

The tree follows the order of optimisations for online serving (largest measured gain
first, in ResNet-18 serving measurements): thin the HTTP layer -> replace the Python
serving layer -> more execution contexts -> batching -> scale out. Each step is an
explicit question with a threshold, answered by a given or measured number that the node
records. The configuration itself (window, max batch, instances) is chosen by simulating
every candidate with :mod:`trtcheck.analyze.advice.simulator` (same dispatch policy as the
batcher); the closed-form rules of :mod:`trtcheck.analyze.advice.queueing` explain the choice.

Choice rule (documented, deterministic):

1. A candidate is *feasible* when its utilisation ``rho = lambda / capacity`` is at most
   ``max_utilisation`` (default 0.9: headroom for load fluctuations, a common operating
   target for queues near saturation) and, when an objective is given, its simulated
   P99 is within ``slo_p99_ms``.
2. The fewest instances with a feasible candidate win (instances are GPUs or replicas:
   the expensive resource).
3. Among those, the lowest simulated P99 wins; candidates within 2% (+0.01 ms) of that
   P99 count as ties (below the simulator's run-to-run noise), and the simplest tie
   wins: shortest window, then smallest max batch.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

import numpy as np

from trtcheck.analyze.advice import queueing as qf
from trtcheck.analyze.advice.curve import (
    LatencyCurve,
    LinearFit,
    fit_knee,
    fit_linear,
    make_curve,
)
from trtcheck.analyze.advice.simulator import (
    Candidate,
    ClosedLoop,
    ServiceModel,
    default_grid,
    make_arrivals,
    sweep,
    trace_rate_per_s,
)
from trtcheck.errors import InputError
from trtcheck.results.advice import (
    Advice,
    AdviceInputs,
    CurveFit,
    DecisionNode,
    Formulas,
    Recommendation,
    SimPrediction,
)
from trtcheck.results.stats import Finding
from trtcheck.units import int_ranges, ms_to_us, sig, us_to_ms

OVERHEAD_DOMINATES_RATIO = 1.0
"""Step 1 threshold: serving overhead per request >= T(1) means the serving layer, not
the model, is the larger cost (ResNet-18 behind a Python HTTP layer: 12 ms overhead vs
0.29 ms inference)."""

PYTHON_LAYER_OVERHEAD_MS = 1.0
"""Step 2 threshold: a per-request overhead of 1 ms or more is a Python-class serving
layer. Measured: a Python layer costs ~10 ms per request; C++ servers (Triton, vLLM)
far below; the bare asyncio batcher design costs ~0.2 ms (pitfall 5). 1 ms is a tenth of
the Python layer's cost."""

CONTEXTS_KNEE = 4
"""Step 3: the knee of concurrent execution contexts per engine: in the ResNet-18 serving
measurements behind this tree, throughput stopped growing beyond 4."""

DEFAULT_MAX_UTILISATION = 0.9
TIE_REL = 0.02
TIE_ABS_MS = 0.01
MAX_AUTO_INSTANCES = 1024
SLO_SCREEN_REQUESTS = 1000
"""Simulated requests per candidate when screening instance counts for a P99 objective."""

MAX_SEARCH_PROBES = 32
"""Instance counts simulated by one search, at most (our choice). A P99 objective probes
counts by doubling (at most 11 steps to :data:`MAX_AUTO_INSTANCES`), bisects (at most 10)
and simulates up to 4 counts in full; without one, counts are searched in increasing
order. The bound is on work, not on wall-clock time, so the same inputs give the same
answer on any machine; when it is reached the search stops and says so."""


@dataclass
class AdviseRequest:
    """Inputs of :func:`advise`.

    Attributes:
        curve: T(b).
        rate_per_s: arrival rate, req/s (> 0); for a trace, ``None`` takes the trace's rate.
        arrival_process: ``poisson``, ``constant`` or ``trace:FILE``.
        slo_p99_ms: latency objective for P99 (ms), or ``None``.
        per_request_overhead_ms: latency per request outside the queue (HTTP etc.).
        serial_overhead: the per-request overhead runs on one thread (a single Python
            process): it then caps the rate at ``1000 / overhead`` per process and
            queues like a single server (the serving measurement's front stage).
        per_batch_overhead_ms: instance time added per execution (executor hop etc.).
        per_batch_overhead_calibrated: ``per_batch_overhead_ms`` was fitted by a live
            Triton calibration (not given by the user).
        per_item_overhead_ms: instance time per request in a batch (gather/scatter).
        timer_slack_us: how late window timers fire (event-loop timer granularity).
        batch_excess_ms: measured per-execution extra instance time samples (see
            :class:`~trtcheck.analyze.advice.simulator.ServiceModel`); empty: none.
        contention_per_arrival_ms: instance time added to a running execution per
            request arriving meanwhile (interpreter-lock contention, measured by a serve
            run; see :class:`~trtcheck.analyze.advice.simulator.ServiceModel`), >= 0.
        request_delay_ms: measured per-request delay samples outside the queue
            (added to ``per_request_overhead_ms``); empty: none.
        batcher: ``"embedded"`` or ``"triton"`` (the dispatch rule simulated,
            :class:`~trtcheck.analyze.advice.simulator.ServiceModel`; a live-Triton calibration
            sets ``"triton"``).
        delay_per_execution: closed loops draw ``request_delay_ms`` once per execution
            (:class:`~trtcheck.analyze.advice.simulator.ServiceModel`; a live-Triton
            calibration sets it).
        instances: instance counts to search (``None``: as many as needed, automatic).
        max_utilisation: the utilisation a feasible candidate may reach, in (0, 1].
        requests: simulated requests per candidate (``None``: automatic).
        seed: random seed (arrivals and spread).
        overheads_source: where the overheads came from, in words.
        burst_size: a burst of this many requests at once (``serve --load burst:N``)
            instead of an arrival rate; ``None``: open loop.
        closed_loop: a closed loop (``serve --load closed:C[:COUNT]``) instead of an
            arrival rate; ``None``: open loop.
        what_if: configurations to predict as given, next to the recommendation
            (:func:`what_if`); empty: none.
        target: the deployment target the advice is for (``"triton"``,
            ``"onnxruntime"``, ``"tensorrt"``, ``"tensorrt_rtx"``; ``None``: not said):
            the text names its parallel executions (Triton model instances for Triton).
        device: ``"gpu"``, ``"cpu"`` or ``None`` (unknown): where T(b) was measured,
            for the wording (GPUs vs CPU hosts and processes).
        replicas: bootstrap replicas of the measurements the choice is rerun on
            (:mod:`trtcheck.analyze.advice.advise_noise`), >= 0; 0: the nominal choice only.
        server_max_batch_size: the live server's configured ``max_batch_size`` when T(b)
            was calibrated from a live run (``None``: no live server); sizes above the
            curve's largest batch are then not assessed, and the advice says so.
        calibration_command: the command that calibrates the live server again (for
            the remedy of that finding); ``None``: a generic one.
        client_network_ms: a live run's mean client + network time per request, ms
            (client latency from the send - the server's request time); ``None``: no
            live run.
        calibrated_instances: the instance count T(b) was calibrated at (a live run);
            a what-if at another count is simulated with the assumed contention factor
            (:func:`trtcheck.analyze.what_if_intervals.contention_for`), said in a note,
            and its interval widened; ``None``: no such calibration.
        run_to_run_rel: the calibration's run-to-run relative spread (repeats), for the
            what-if intervals when ``calibration_latencies_ms`` is empty; ``None``: the
            floor of :data:`trtcheck.analyze.tune_plan.DRIFT_FLOOR_REL`.
        calibration_latencies_ms: the calibration run's client latencies per repeat (ms,
            send order): the what-if intervals take their P50 and P99 run-to-run spreads
            and the length of the measurement they are for from them, as ``trtcheck
            tune`` does (:func:`trtcheck.analyze.tune_plan.series_drifts`); ``()``: no
            live calibration.
        calibration_config: the live calibration run's configuration and its arrival
            rate (req/s): the what-if intervals carry the drift measured there to each
            configuration by its elasticity to T(b)
            (:func:`trtcheck.analyze.tune_plan.drift_factors`); ``None``: the drift is
            taken as measured for every configuration.
        instance_contention: T(b) at each instance count over T(b) at one instance and
            its source (``"measured"``, ``"interpolated"``, ...) as a ``trtcheck tune``
            search calibrated them (``advise --from tune.json``); a what-if at such a
            count uses that factor instead of the assumed one, and only an inferred
            source (:data:`trtcheck.analyze.tune_plan.INFERRED_CONTENTION`) widens its
            interval; ``{}``: none.
        objective: the objective's name (:mod:`trtcheck.analyze.objectives`):
            ``fewest-instances`` (the default: the fewest instances with a feasible
            configuration, then the bootstrap tie-break), ``p99`` or ``throughput``
            (every searched instance count, picked by that objective; no tie-break).
        per_request_overhead_recorded: ``per_request_overhead_ms`` is the serial front
            stage a serving run recorded in its settings (not given by the user).
        tune_measured: configurations a ``trtcheck tune`` search measured at its target
            rate (``advise --from tune.json``): ``(window_us, max_batch, instances)`` ->
            ``(p50_ms, p99_ms, throughput req/s, live run label)``; a recommendation the
            search measured quotes that measurement; ``{}``: none.
        tune_pick: the search's own pick ``(window_us, max_batch, instances)`` and its
            target rate (req/s); ``None``: not from a search.
    """

    curve: LatencyCurve
    rate_per_s: float | None
    arrival_process: str = "poisson"
    slo_p99_ms: float | None = None
    per_request_overhead_ms: float = 0.0
    serial_overhead: bool = False
    per_batch_overhead_ms: float = 0.0
    per_batch_overhead_calibrated: bool = False
    per_item_overhead_ms: float = 0.0
    timer_slack_us: float = 0.0
    instances: list[int] | None = None
    max_utilisation: float = DEFAULT_MAX_UTILISATION
    requests: int | None = None
    seed: int = 0
    overheads_source: str = "given"
    batch_excess_ms: tuple[float, ...] = ()
    contention_per_arrival_ms: float = 0.0
    request_delay_ms: tuple[float, ...] = ()
    notes: list[str] = field(default_factory=list)
    batcher: str = "embedded"
    delay_per_execution: bool = False
    burst_size: int | None = None
    closed_loop: ClosedLoop | None = None
    what_if: list[Candidate] = field(default_factory=list)
    device: str | None = None
    target: str | None = None
    replicas: int = 12
    server_max_batch_size: int | None = None
    calibration_command: str | None = None
    client_network_ms: float | None = None
    objective: str = "fewest-instances"
    calibrated_instances: int | None = None
    run_to_run_rel: float | None = None
    calibration_latencies_ms: tuple[tuple[float, ...], ...] = ()
    calibration_config: tuple[Candidate, float] | None = None
    instance_contention: dict[int, tuple[float, str]] = field(default_factory=dict)
    per_request_overhead_recorded: bool = False
    tune_measured: dict[tuple[float, int, int], tuple[float, float, float, str]] = field(
        default_factory=dict)
    tune_pick: tuple[tuple[float, int, int], float] | None = None

    @property
    def unassessed_above(self) -> int | None:
        """The largest batch size assessed when a live server allows larger ones it was
        not calibrated at (``None``: every size the server allows was assessed)."""
        top = int(self.curve.max_batch_measured)
        if self.server_max_batch_size is not None and self.server_max_batch_size > top:
            return top
        return None

    @property
    def finite_load(self) -> bool:
        """A burst or a closed loop: a load that drains, with no offered rate."""
        return self.burst_size is not None or self.closed_loop is not None

    @property
    def load_label(self) -> str:
        """The load in ``serve --load`` syntax."""
        if self.burst_size is not None:
            return f"burst:{self.burst_size}"
        if self.closed_loop is not None:
            return f"closed:{self.closed_loop.clients}:{self.closed_loop.count}"
        rate = "" if self.rate_per_s is None else f"{self.rate_per_s:g}"
        return f"open:{rate}:{self.arrival_process}" if rate else self.arrival_process


@dataclass
class SimLoad:
    """What the simulator is driven with for one request (see :func:`simulation_load`).

    Attributes:
        arrivals: arrival times (s), shape ``[n]``, or a :class:`ClosedLoop`.
        rate_per_s: offered rate (req/s) of an open load; ``None`` for a finite one.
        finite: a burst or closed loop (drains; never refused for capacity).
        warmup_fraction: share of the first requests left out of the statistics (0 for
            a finite load: ``serve`` counts every request of a burst).
    """

    arrivals: np.ndarray | ClosedLoop
    rate_per_s: float | None
    finite: bool
    warmup_fraction: float

    def __len__(self) -> int:
        return (self.arrivals.count if isinstance(self.arrivals, ClosedLoop)
                else len(self.arrivals))

    def head(self, n: int) -> np.ndarray | ClosedLoop:
        """The first ``n`` requests (a shorter screening run)."""
        if isinstance(self.arrivals, ClosedLoop):
            return ClosedLoop(self.arrivals.clients, max(2, min(n, self.arrivals.count)))
        return self.arrivals[:n]


MAX_FINITE_REQUESTS = 20_000
"""Most requests a burst or closed loop may simulate (the advise time bound)."""

CLOSED_LOOP_DEFAULT_REQUESTS = 2000
"""Requests a closed loop without COUNT simulates (``serve`` sends until its duration
bound; 2,000 gives a P99 from 20 samples above it)."""


def simulation_load(req: AdviseRequest) -> SimLoad:
    """The arrivals (or closed loop) of an advice request, as :func:`advise` and
    :func:`what_if` simulate them.

    Raises:
        InputError: no rate for an open load, a bad rate, an unreadable trace, a burst
            or closed loop larger than :data:`MAX_FINITE_REQUESTS`.
    """
    if req.burst_size is not None or req.closed_loop is not None:
        n = req.burst_size if req.burst_size is not None else req.closed_loop.count  # type: ignore[union-attr]
        if n > MAX_FINITE_REQUESTS:
            raise InputError(f"load {req.load_label} simulates {n:,} requests, more than "
                             f"{MAX_FINITE_REQUESTS:,}", "give a smaller burst or count")
        if req.burst_size is not None:
            if req.burst_size < 2:
                raise InputError("a burst needs at least 2 requests", "e.g. --load burst:64")
            return SimLoad(np.zeros(req.burst_size), None, True, 0.0)
        return SimLoad(req.closed_loop, None, True, 0.0)  # type: ignore[arg-type]
    if req.arrival_process.startswith("trace:"):
        arrivals = make_arrivals(req.arrival_process, req.rate_per_s, 0, req.seed)
        rate = req.rate_per_s if req.rate_per_s is not None else trace_rate_per_s(arrivals)
        qf.check_rate(rate)
        return SimLoad(arrivals, float(rate), False, 0.1)
    if req.rate_per_s is None:
        raise InputError("an arrival rate is needed", "pass --arrival-rate REQ_PER_S")
    qf.check_rate(req.rate_per_s)
    rate = float(req.rate_per_s)
    n_req = req.requests or _auto_requests(rate)
    return SimLoad(make_arrivals(req.arrival_process, rate, n_req, req.seed), rate, False, 0.1)


def what_if(req: AdviseRequest, configs: list[Candidate] | None = None,
            service: ServiceModel | None = None) -> list[SimPrediction]:
    """Predict exactly the given configurations at the request's load.

    Args:
        req: the load, T(b) and overheads (as for :func:`advise`).
        configs: configurations to simulate (default ``req.what_if``).
        service: the service model to use (default :func:`service_model` of ``req``;
            a caller with a calibrated model, e.g. a live server's, passes its own).

    Returns:
        one :class:`SimPrediction` per configuration, in order. A configuration the
        load cannot carry (offered rate >= its capacity) is returned with
        ``stable=False`` and its utilisation, never raised.

    Raises:
        InputError: a bad load (see :func:`simulation_load`) or a configuration out of
            range (preferred batch size above max batch).
    """
    configs = list(req.what_if if configs is None else configs)
    if not configs:
        return []
    load = simulation_load(req)
    service = service or service_model(req)
    if req.calibrated_instances is not None and not load.finite:
        from trtcheck.analyze.what_if_intervals import predict_with_intervals

        return predict_with_intervals(req, configs, service, load.arrivals, load.rate_per_s,
                                      load.warmup_fraction)
    return sweep(configs, service, load.arrivals, seed=req.seed, rate_per_s=load.rate_per_s,
                 finite=load.finite, warmup_fraction=load.warmup_fraction)


def _kind(p: SimPrediction) -> str:
    if p.max_batch_size == 1:
        return "no-batching"
    if p.window_us == 0:
        return "batch-without-waiting"
    return "window"


def _fmt_ms(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3g} ms" if x < 10 else f"{x:.0f} ms"


def _cfg(p: SimPrediction) -> str:
    w = us_to_ms(p.window_us)
    inst = f", {p.instances} instance{'s' if p.instances != 1 else ''}"
    if p.max_batch_size == 1:
        return f"no batching (max batch 1){inst}"
    if p.window_us == 0:
        return f"max batch {p.max_batch_size} without waiting (window 0){inst}"
    return f"window {w:g} ms, max batch {p.max_batch_size}{inst}"


def _pred_text(p: SimPrediction, finite: bool = False) -> str:
    if not p.stable:
        return f"unstable (utilisation {p.utilisation:.2f})"
    if finite:
        return (f"P50 {_fmt_ms(p.p50_ms)}, P99 {_fmt_ms(p.p99_ms)}, "
                f"{p.throughput_queries_per_s or 0:.4g} req/s completed, mean batch "
                f"{p.mean_batch:.2f}")
    return (f"P50 {_fmt_ms(p.p50_ms)}, P99 {_fmt_ms(p.p99_ms)}, keeps up with "
            f"{p.arrival_rate_per_s:g} req/s at utilisation {p.utilisation:.2f}, "
            f"mean batch {p.mean_batch:.2f}")


def _validate(req: AdviseRequest, fit: LinearFit) -> None:
    if req.slo_p99_ms is not None:
        delay = float(np.median(req.request_delay_ms)) if req.request_delay_ms else 0.0
        excess = max(0.0, float(np.median(req.batch_excess_ms))) if req.batch_excess_ms else 0.0
        floor = (req.curve.t1_ms + req.per_request_overhead_ms + req.per_batch_overhead_ms
                 + delay + excess)
        if not (math.isfinite(req.slo_p99_ms) and req.slo_p99_ms > 0):
            raise InputError(f"--slo-p99-ms must be a positive number of ms, got "
                             f"{req.slo_p99_ms!r}")
        if req.slo_p99_ms <= floor:
            raise InputError(
                f"the P99 objective {req.slo_p99_ms:g} ms is below what one request alone "
                f"takes: T(1) {req.curve.t1_ms:.4g} ms + overheads "
                f"{floor - req.curve.t1_ms:.4g} ms = {floor:.4g} ms",
                "no configuration can meet it; loosen --slo-p99-ms or make the model "
                "or the serving layer faster")
    if not 0 < req.max_utilisation <= 1:
        raise InputError(f"max utilisation must be in (0, 1], got {req.max_utilisation}")
    if req.instances is not None:
        if not req.instances or any((not isinstance(n, int)) or n < 1 for n in req.instances):
            raise InputError("--instances must be integers >= 1", "e.g. --instances 2 or 1..8")


def _auto_requests(rate: float) -> int:
    """Requests per simulated candidate: about 2 s of traffic, 3,000 to 6,000 (enough
    for a P99 from >= 30 samples above it at 3,000; bounded for speed)."""
    return int(min(6000, max(3000, rate * 2.0)))


CONTENTION_SENSITIVE_SHARE = 0.3
"""Share of an execution's time taken by the event loop's per-arrival work (rate x
contention) above which the advice warns that its latency predictions are sensitive: the
stretch ``1 / (1 - share)`` turns a relative error ``e`` in the measured contention into
``e * share / (1 - share)`` of execution time, 0.43 e at 0.3 (our threshold; in
validation the contention measured from one 3-s calibration run of eager PyTorch
ResNet-18 was 0.40 and 0.54 ms per arrival in two runs, docs/advise.md)."""


def _clip0(x_ms: float) -> float:
    """``x_ms`` with a negative or rounding-error value (below 1 ns) shown as 0."""
    return x_ms if x_ms > 1e-6 else 0.0


def clamped_excess(samples: tuple[float, ...]) -> tuple[float, ...]:
    """The measured per-execution excess with a negative mean shifted to mean 0.

    A negative mean excess says the serving run's executions were faster than the bench's
    T(b): an artefact of a disturbed bench or of the fit, not a negative overhead (an
    execution cannot cost less than the model). The spread of the samples is kept; their
    mean is clamped at 0 (:func:`advise` notes it)."""
    if not samples:
        return ()
    mean = float(np.mean(samples))
    if mean >= 0:
        return tuple(samples)
    return tuple(float(x) - mean for x in samples)


def service_model(req: AdviseRequest) -> ServiceModel:
    """The simulator's service model for an advice request: its curve (a one-point curve
    becomes the best case for batching, T(b) = T(1), so a "no batching" answer is
    conclusive), the given overheads, and the measured distributions and contention.
    Used by :func:`advise` and by the report's predicted-vs-measured table, so both
    simulate the same model."""
    curve = req.curve
    sim_curve = curve
    if curve.batch_sizes.size == 1:
        b0, t0 = curve.points()[0]
        sim_curve = make_curve([(b0, t0), (max(8, b0 * 8), t0)],
                               source=curve.source + " (best case: T(b) = T(1) assumed)")
    c_given = req.per_request_overhead_ms
    return ServiceModel(
        sim_curve, per_batch_overhead_ms=req.per_batch_overhead_ms,
        per_item_overhead_ms=req.per_item_overhead_ms,
        per_request_overhead_ms=0.0 if req.serial_overhead else c_given,
        ingress_per_request_us=ms_to_us(c_given, None) if req.serial_overhead else 0.0,
        timer_slack_us=req.timer_slack_us,
        spread="none" if req.batch_excess_ms else "empirical",
        batch_excess_ms=clamped_excess(req.batch_excess_ms),
        request_delay_ms=tuple(req.request_delay_ms),
        contention_per_arrival_ms=req.contention_per_arrival_ms, batcher=req.batcher,
        delay_per_execution=req.delay_per_execution)


def advise(req: AdviseRequest) -> Advice:
    """Run the decision tree and the candidate sweep.

    Returns:
        :class:`trtcheck.results.advice.Advice` (without ``export``; see
        :mod:`trtcheck.export.settings`).

    Raises:
        InputError: bad rates, an objective below T(1), an instance count or range that
            cannot carry the load (the message says the capacity and instances needed),
            or an objective no searched configuration meets (with the best reached).
    """
    t_start = time.perf_counter()
    curve = req.curve
    fit = fit_linear(curve)
    _validate(req, fit)
    if req.batch_excess_ms and float(np.mean(req.batch_excess_ms)) < 0:
        req.notes.append(
            f"the calibrated per-batch overhead came out negative "
            f"({float(np.mean(req.batch_excess_ms)):.4g} ms: the serving run's executions "
            "were faster than the bench's T(b), a fit artefact of a disturbed bench); it is "
            "clamped to 0 ms, keeping the measured spread")

    # arrivals ----------------------------------------------------------------------
    load = simulation_load(req)
    if load.finite:
        return _advise_finite(req, load, fit, t_start)
    arrivals = load.arrivals
    rate = float(load.rate_per_s)  # type: ignore[arg-type]

    service = service_model(req)
    sim_curve = service.curve
    max_b = sim_curve.max_batch_measured
    c_given = req.per_request_overhead_ms
    delay_med = float(np.median(req.request_delay_ms)) if req.request_delay_ms else 0.0
    c_req = c_given + delay_med  # what one request costs outside the model, in all

    cap1, cap_b = service.capacity_per_instance_per_s(max_b, rate)
    front_cap = service.ingress_capacity_per_s()
    if rate >= front_cap:
        need = math.ceil(rate / front_cap + 1e-12)
        raise InputError(
            f"{rate:g} req/s is more than one serving process with a serial "
            f"{c_given:g} ms per-request overhead can take ({front_cap:.0f} req/s): "
            f"{need} processes are needed before batching matters",
            "thin the serving layer (step 1-2 of the decision order) or run more "
            "processes, then advise per process (--arrival-rate divided by processes)")
    share = rate * req.contention_per_arrival_ms / 1000.0
    if share >= 1.0:
        per_proc = 1000.0 / req.contention_per_arrival_ms
        raise InputError(
            f"at {rate:g} req/s the serving process's own work for arriving requests "
            f"({req.contention_per_arrival_ms:.3g} ms of interpreter-lock time each, measured) "
            "leaves the model function no time: no number of instances in one process keeps up",
            f"run at least {math.ceil(rate / per_proc + 1e-12)} processes and advise per process "
            "(--arrival-rate divided by processes), or serve with a model call that releases "
            "the lock (TensorRT, ONNX Runtime, a C++ server such as Triton)")
    if share > CONTENTION_SENSITIVE_SHARE:
        req.notes.append(
            f"at {rate:g} req/s the event loop holds the interpreter lock for {share:.0%} of an "
            f"execution's time (rate x {req.contention_per_arrival_ms:.3g} ms per arrival), so "
            f"executions run {1.0 / (1.0 - share):.2g}x their bench time and a 10% error in "
            f"the measured contention moves them by {10.0 * share / (1.0 - share):.0f}%: "
            "treat the latency predictions as approximate, and measure a serve sweep at this "
            "rate (several windows and max batch sizes) to calibrate from")
    gpus_implied = qf.instances_needed(rate, cap1)

    # instance counts ----------------------------------------------------------------
    if req.instances is not None:
        inst_list = sorted(set(req.instances))
        top = inst_list[-1]
        if (need := instances_needed(req, rate, cap1)) > top:
            from trtcheck.analyze.what_if_intervals import factor_at

            f_top = factor_at(req, top)
            each = (f"{cap1:.3g} req/s each" if f_top == 1.0 else
                    f"{cap1 / f_top:.3g} req/s each: T(b) x {f_top:.3g} as {top} instances "
                    "share a device")
            raise InputError(
                f"{rate:g} req/s is above the capacity of {top} instance"
                f"{'s' if top != 1 else ''} ({cap1 * top / f_top:.3g} req/s at batch "
                f"{cap_b}, {each}): at least {need} instances are needed",
                _instances_hint(need, "or leave --instances out to search"))
    else:
        inst_list = []
        batches = sorted({c.max_batch_size for c in default_grid(max_b, [1])})
        for bb in batches:
            cap_bb, _ = service.capacity_per_instance_per_s(bb, rate)
            n0 = instances_needed(req, rate, cap_bb, req.max_utilisation)
            for n in (n0, n0 + 1):
                if n <= MAX_AUTO_INSTANCES:
                    inst_list.append(n)
        if not inst_list:
            need = instances_needed(req, rate, cap1, req.max_utilisation)
            raise InputError(
                f"{rate:g} req/s needs {need:,} instances at {cap1:.3g} req/s each (batch "
                f"{cap_b}), more than the {MAX_AUTO_INSTANCES} this search covers",
                "check the arrival rate and the curve's units (ms), or advise per "
                "cluster share (--arrival-rate divided by the number of clusters)")
        lo, hi = min(inst_list), max(inst_list)
        inst_list = list(range(lo, hi + 1))  # no gaps between the counts searched
    slo_search = req.slo_p99_ms is not None and req.instances is None

    # sweep in order of instance count; stop at the first count with a feasible config.
    # With a P99 objective and no --instances, probe counts lo, 2 lo, 4 lo, ... until one
    # is feasible, then bisect down to the fewest (P99 does not rise with instances).
    preds: list[SimPrediction] = []
    chosen: SimPrediction | None = None
    feasible_at: list[SimPrediction] = []
    searched: list[int] = []
    screened: list[SimPrediction] = []  # what the screens simulated (not kept in preds)
    stopped = ""

    def probe(n: int, screen: bool = False) -> list[SimPrediction]:
        """Simulate every candidate at ``n`` instances; the feasible ones. A screen runs
        shorter and its predictions are not kept (the chosen count is simulated again)."""
        searched.append(n)
        sv = service
        if req.calibrated_instances is not None:
            from trtcheck.analyze.what_if_intervals import service_at

            sv = service_at(req, service, n)  # instances sharing a device contend
        cands = [c for c in default_grid(max_b, [n])
                 if (sv.capacity_per_instance_per_s(c.max_batch_size, rate)[0] * n)
                 > rate]
        if not cands:
            return []
        arr = load.head(max(SLO_SCREEN_REQUESTS, len(load) // 3)) if screen else arrivals
        res = sweep(cands, sv, arr, seed=req.seed, rate_per_s=rate)
        (screened if screen else preds).extend(res)
        return [p for p in res if p.stable and p.utilisation <= req.max_utilisation + 1e-12
                and (req.slo_p99_ms is None or (p.p99_ms or math.inf) <= req.slo_p99_ms)]

    def out_of_time() -> bool:
        nonlocal stopped
        if len(searched) >= MAX_SEARCH_PROBES:
            stopped = (f"search stopped after {MAX_SEARCH_PROBES} instance counts, "
                       f"at {searched[-1]} instances")
            req.notes.append(stopped)
            return True
        return False

    if slo_search:
        # screen counts on a shorter run, then simulate the chosen count in full
        bad, n = inst_list[0] - 1, inst_list[0]
        good = None
        while n <= MAX_AUTO_INSTANCES and not out_of_time():
            if probe(n, screen=True):
                good = n
                break
            bad, n = n, min(MAX_AUTO_INSTANCES + 1, max(n + 1, 2 * n))
        if good is not None:
            while good - bad > 1 and not out_of_time():
                mid = (good + bad) // 2
                if probe(mid, screen=True):
                    good = mid
                else:
                    bad = mid
            for m in range(good, min(good + 3, MAX_AUTO_INSTANCES) + 1):
                feas = probe(m)  # full length; the screen's P99 is noisier
                if feas:
                    feasible_at, chosen = _objective_choice(req, feas, m, inst_list, probe)
                    break
    for n in ([] if slo_search else inst_list):
        if out_of_time():
            break
        feas = probe(n)
        if feas:
            feasible_at, chosen = _objective_choice(req, feas, n, inst_list, probe)
            break
    if chosen is None:
        # a P99 search that found no feasible count kept only its screens' predictions
        stable = [p for p in preds if p.stable] or [p for p in screened if p.stable]
        if req.instances is not None and stable and req.slo_p99_ms is None:
            # fixed instances, stable but above the utilisation target: still advise
            feasible_at = [p for p in stable if p.instances == max(q.instances for q in stable)]
            chosen = _pick(feasible_at)
            req.notes.append(f"no configuration stays below {req.max_utilisation:.0%} "
                             f"utilisation with {chosen.instances} instance"
                             f"{'s' if chosen.instances != 1 else ''}; "
                             "the least loaded is shown")
        elif stable:
            best = min(stable, key=lambda p: p.p99_ms or math.inf)
            if req.slo_p99_ms is not None:
                raise InputError(
                    f"no searched configuration meets P99 <= {req.slo_p99_ms:g} ms at "
                    f"{rate:g} req/s (instances searched: {int_ranges(searched)}"
                    f"{'; ' + stopped if stopped else ''}); the best reached is P99 "
                    f"{_fmt_ms(best.p99_ms)} with {_cfg(best)}",
                    "loosen --slo-p99-ms, allow more instances (--instances), or make "
                    "the model faster")
            raise InputError(f"no searched configuration keeps utilisation under "
                             f"{req.max_utilisation:.0%}", "allow more instances")
        else:
            need = instances_needed(req, rate, cap1)
            raise InputError(
                f"{rate:g} req/s is above the capacity of every searched configuration "
                f"({cap1:.3g} req/s per instance at batch {cap_b}): at least {need} "
                "instances are needed", _instances_hint(need))

    interval_rule: str | None = None
    if req.calibrated_instances is not None and chosen.stable:
        # a live calibration gives every prediction an interval: choose on it, as tune does
        n0 = chosen.instances
        more = ([m for m in inst_list if m > n0] if req.instances is not None else
                list(range(n0 + 1, min(n0 + 2, MAX_AUTO_INSTANCES) + 1)))
        feasible_at, chosen, interval_rule = _choose_on_intervals(
            req, load, service, rate, feasible_at, chosen, probe, more)
    return _finish(req, load, rate, fit, service, chosen, feasible_at, preds, cap1, cap_b,
                   gpus_implied, c_req, front_cap, inst_list, t_start, screened,
                   interval_rule)


def _advise_finite(req: AdviseRequest, load: SimLoad, fit: LinearFit,
                   t_start: float) -> Advice:
    """:func:`advise` for a burst or a closed loop: the instance counts given (default
    1) are simulated in full; every run drains, so none is refused for capacity; the
    rules use the rate at which requests reached the queue in the chosen simulation."""
    service = service_model(req)
    max_b = service.curve.max_batch_measured
    inst_list = sorted(set(req.instances or [1]))
    preds: list[SimPrediction] = []
    chosen: SimPrediction | None = None
    feasible_at: list[SimPrediction] = []
    for n in inst_list:
        res = sweep(default_grid(max_b, [n]), service, load.arrivals, seed=req.seed,
                    finite=True, warmup_fraction=0.0)
        preds.extend(res)
        feas = [p for p in res if req.slo_p99_ms is None
                or (p.p99_ms or math.inf) <= req.slo_p99_ms]
        if feas:
            feasible_at, chosen = feas, _pick(feas)
            break
    if chosen is None:
        best = min(preds, key=lambda p: p.p99_ms or math.inf)
        raise InputError(
            f"no searched configuration meets P99 <= {req.slo_p99_ms:g} ms under load "
            f"{req.load_label} (instances searched: {int_ranges(inst_list)}); the best "
            f"reached is P99 {_fmt_ms(best.p99_ms)} with {_cfg(best)}",
            "loosen --slo-p99-ms or allow more instances (--instances)")
    rate = chosen.arrival_rate_per_s
    if not math.isfinite(rate):  # an instant burst without a serial front
        rate = chosen.throughput_queries_per_s or 1.0
    cap1, cap_b = service.capacity_per_instance_per_s(max_b, None)
    return _finish(req, load, rate, fit, service, chosen, feasible_at, preds, cap1, cap_b,
                   instances_needed(req, rate, cap1), _c_req(req),
                   service.ingress_capacity_per_s(), inst_list, t_start)


def instances_needed(req: AdviseRequest, rate: float, cap_per_instance: float,
                     max_utilisation: float = 1.0) -> int:
    """Fewest instances for ``rate`` (req/s) at ``cap_per_instance`` req/s each (the
    capacity of one instance at the calibrated instance count), ``max_utilisation``
    busy: :func:`~trtcheck.analyze.advice.queueing.instances_needed`, and with a live
    calibration at ``req.calibrated_instances`` the smallest ``n`` whose capacity
    ``n x cap / f(n)`` carries it, ``f(n)`` the T(b) multiplier the search simulates
    ``n`` instances with (:func:`~trtcheck.analyze.what_if_intervals.contention_of`:
    instances sharing a device run each execution slower). Without it, the count
    refused its own hint: "at least 10 instances" for 200 req/s where 10 instances at
    1.83x carried 113 req/s."""
    naive = qf.instances_needed(rate, cap_per_instance, max_utilisation)
    if req.calibrated_instances is None or naive > MAX_AUTO_INSTANCES:
        return naive
    from trtcheck.analyze.what_if_intervals import factor_at

    n = 1
    while n < 64 * naive:
        f = factor_at(req, n)
        if n * cap_per_instance / f * max_utilisation >= rate * (1.0 - 1e-12):
            return n
        n += 1
    return n


def _c_req(req: AdviseRequest) -> float:
    """What one request costs outside the model in all (given + median measured), ms."""
    delay_med = float(np.median(req.request_delay_ms)) if req.request_delay_ms else 0.0
    return req.per_request_overhead_ms + delay_med


def _finish(req: AdviseRequest, load: SimLoad, rate: float, fit: LinearFit,
            service: ServiceModel, chosen: SimPrediction, feasible_at: list[SimPrediction],
            preds: list[SimPrediction], cap1: float, cap_b: int, gpus_implied: int,
            c_req: float, front_cap: float, inst_list: list[int],
            t_start: float, screened: Sequence[SimPrediction] = (),
            interval_rule: str | None = None) -> Advice:
    """The noise check, runner-up, formulas, decision path, summary and record of a
    chosen configuration (shared by the open and the finite loads); ``screened``: the
    shorter screening runs of a P99 search (they decided which counts fall short);
    ``interval_rule``: set when the choice was made on the P99 intervals
    (:func:`_choose_on_intervals`; no bootstrap replicas then)."""
    from trtcheck.analyze.advice.advise_noise import stabilise

    curve = req.curve
    single_point = curve.batch_sizes.size == 1
    stability = None
    if (interval_rule is None and req.replicas > 0 and len(feasible_at) > 1
            and req.objective == "fewest-instances"):
        def feasible(p: SimPrediction) -> bool:
            if not load.finite and p.utilisation > req.max_utilisation + 1e-12:
                return False
            return req.slo_p99_ms is None or (p.p99_ms or math.inf) <= req.slo_p99_ms

        chosen, stability = stabilise(req, service_model, load, feasible_at, chosen,
                                      feasible, req.replicas)
        if load.finite:  # the rules use the rate the recommended run reached the queue at
            rate = chosen.arrival_rate_per_s
            if not math.isfinite(rate):
                rate = chosen.throughput_queries_per_s or rate
    runner = _runner_up(chosen, feasible_at, preds, req.max_utilisation,
                        req.slo_p99_ms if interval_rule is not None else None)
    eff = _effective_service(req, service, fit, rate, chosen)
    formulas = _formulas(rate, curve, eff, service, chosen, cap1, cap_b, gpus_implied,
                         c_req, req.max_utilisation)
    from trtcheck.analyze.objectives import p99_upper_ms

    def one_instance_p99s(ps: Sequence[SimPrediction]) -> list[float]:
        # on the intervals, one instance misses the objective by its upper ends
        return [p99_upper_ms(p) if interval_rule is not None else p.p99_ms
                for p in ps if p.instances == 1 and p.stable
                and p.p99_ms is not None and p.utilisation <= req.max_utilisation + 1e-12
                and (interval_rule is None or p.p99_interval_ms is not None)]

    # the full-length runs decide when there are any (a screen's P99 is noisier)
    ones = one_instance_p99s(preds) or one_instance_p99s(screened)
    path = _path(req, load, rate, curve, eff, formulas, chosen, runner, cap1, cap_b,
                 gpus_implied, single_point, c_req, stability,
                 best_one_p99_ms=min(ones) if ones else None,
                 on_intervals=interval_rule is not None)
    certified = None
    if interval_rule is not None and req.slo_p99_ms is not None and chosen.p99_interval_ms:
        certified = chosen.p99_interval_ms[1] <= req.slo_p99_ms
    extra = _instances_given_beyond_need(req, rate, chosen, cap1)
    kind = "add-instances" if chosen.instances > 1 and extra is None else _kind(chosen)
    summary = _summary(req, load, kind, chosen, formulas, eff, c_req, stability)
    if interval_rule is not None:
        summary += " " + _interval_choice_words(chosen, req.slo_p99_ms)
    if extra is not None:
        summary += (f" {chosen.instances} instances as given (--instances): one instance "
                    f"would carry {rate:g} req/s, so the extra instances are not needed for "
                    "capacity; "
                    "instances that share a device contend, so compare with --instances 1.")
    if not load.finite and chosen.utilisation > req.max_utilisation + 1e-12:
        need = instances_needed(req, rate, cap1, req.max_utilisation)
        summary += (f" Above the {req.max_utilisation:.0%} utilisation target with "
                    f"{chosen.instances} instance{'s' if chosen.instances != 1 else ''}: {need} "
                    "keep it below.")
    top = req.unassessed_above
    b0 = curve.max_batch_measured
    if single_point and chosen.max_batch_size > b0:
        # the recommendation lies beyond the one measured size: say so, and by what
        summary += (f" Max batch {chosen.max_batch_size} extrapolates beyond the measured "
                    f"batch sizes: only T({b0}) is known, so this assumes T(b) = T({b0}) for "
                    "every b (the best case for batching); measure T(b) at larger batches "
                    "before relying on it"
                    + (" (calibrate at a higher rate or a longer window)." if top is not None
                       else "."))
    elif single_point and top is not None:
        summary += (f" Max batch {top} is the largest batch size the calibration run "
                    f"measured; sizes up to the server's {req.server_max_batch_size} were "
                    f"simulated only as T(b) = T({top}), the best case for batching "
                    "(calibrate at a higher rate or a longer window to measure them).")
    elif single_point and kind != "no-batching":
        summary += (" Only T(1) is known: this assumes T(b) = T(1) for every b (the best "
                    "case for batching); measure T(b) at larger batches before relying on it.")
    elif top is not None and chosen.max_batch_size >= top:
        summary += (f" Max batch {top} is the largest batch size the calibration run "
                    "measured; "
                    f"sizes up to the server's {req.server_max_batch_size} were not assessed "
                    "(calibrate at a higher rate or a longer window to assess them).")
    pitfalls = _pitfalls(chosen, c_req, req)
    tail = float(service.mean_spread_factors(np.array([1]))[0])
    if tail > HEAVY_TAIL_FACTOR:
        req.notes.append(
            f"the measured executions have a heavy tail: at batch 1 their mean is {tail:.2g}x "
            f"the median T(1) = {curve.t1_ms:.3g} ms (a busy or unstable machine); capacity, "
            "utilisation, the rules and the simulation all use that mean; re-measure on a "
            "quiet machine if serving will not see it")
    wi = what_if(req, service=service)  # before the notes: it may add its own
    if req.calibrated_instances is not None and not load.finite and chosen.stable:
        from trtcheck.analyze.what_if_intervals import predict_with_intervals

        # the recommendation and its runner-up with their intervals, as tune gives both
        _set_intervals(req, [p for p in (chosen, runner) if p is not None and p.stable
                             and p.p99_interval_ms is None], service, load, rate)
        uncertified = _interval_above_objective(chosen, req.slo_p99_ms)
        if uncertified is not None:
            pitfalls.append(uncertified)
    if not load.finite:
        pitfalls += _tune_measured_findings(req, rate, chosen)
    notes = (list(fit.notes) + list(curve.notes)
             + _per_request_findings(service, None if load.finite else rate, curve)
             + req.notes)
    return Advice(
        inputs=AdviceInputs(
            arrival_rate_per_s=rate, arrival_process=req.arrival_process,
            slo_p99_ms=req.slo_p99_ms, per_request_overhead_ms=c_req,
            per_batch_overhead_ms=_clip0(req.per_batch_overhead_ms
                                         + service.mean_batch_excess_ms),
            per_item_overhead_ms=req.per_item_overhead_ms,
            ingress_per_request_us=service.ingress_per_request_us,
            timer_slack_us=req.timer_slack_us, instances_searched=inst_list,
            overheads_source=req.overheads_source, load=req.load_label,
            device=req.device, objective=req.objective),
        curve=CurveFit(source=curve.source, points_ms={b: t for b, t in curve.points()},
                       tau0_ms=fit.tau0_ms, alpha_ms_per_sample=fit.alpha_ms_per_sample,
                       r2=None if math.isnan(fit.r2) else fit.r2,
                       max_rel_residual=fit.max_rel_residual, notes=notes),
        formulas=formulas, path=path,
        recommendation=Recommendation(kind=kind, summary=summary, prediction=chosen,
                                      runner_up=runner,
                                      runner_up_kind=_kind(runner) if runner else None,
                                      stability=stability, interval_rule=interval_rule,
                                      certified=certified),
        candidates=preds, pitfalls=pitfalls, gpus_implied=gpus_implied,
        simulated_requests=int(len(load)),
        what_if=wi,
        sweep_seconds=time.perf_counter() - t_start)


def _per_request_findings(service: ServiceModel, rate: float | None,
                          curve: LatencyCurve) -> list[str]:
    """Where the simulated execution time per request S(b)/b rises with b (batching past
    that size costs more), at the curve's measured batch sizes: the same times the
    simulation and the decision path use (with no overheads, S(b) = T(b))."""
    from trtcheck.analyze.advice.curve import PER_SAMPLE_RISE_TOLERANCE

    bs = [int(b) for b in curve.batch_sizes]
    per = [service.batch_time_ms(b, rate) / b for b in bs]
    name = "T(b)/b" if all(abs(service.batch_time_ms(b, rate) - float(curve.t_ms(b)))
                           < 1e-9 for b in bs) else \
        "S(b)/b (simulated execution time per request, overheads included)"
    out = []
    for i in range(1, len(bs)):
        if per[i] > per[i - 1] * (1 + PER_SAMPLE_RISE_TOLERANCE):
            out.append(f"{name} rises from {per[i - 1]:.4g} ms at b={bs[i - 1]} to "
                       f"{per[i]:.4g} ms at b={bs[i]}: batches above {bs[i - 1]} give no "
                       "throughput")
    return out


@dataclass(frozen=True)
class EffectiveService:
    """The instance time per execution that the simulation uses, as the rules see it.

    Attributes:
        s1_ms: mean instance time of a batch of 1, ms (``ServiceModel.batch_time_ms``:
            T(1) x mean spread factor + per-batch and per-item overheads + mean measured
            excess, stretched by contention at the rate).
        tau0_ms, alpha_ms_per_sample: least-squares line through that time at the
            curve's measured batch sizes (the fixed and per-sample cost per execution).
        per_batch_ms: ``s1_ms - T(1)``: what an execution costs beyond the bench's T(1).
        parts: how ``s1_ms`` is made up, in words (for the decision path).
    """

    s1_ms: float
    tau0_ms: float
    alpha_ms_per_sample: float
    per_batch_ms: float
    parts: str


def _effective_service(req: AdviseRequest, service: ServiceModel, fit: LinearFit,
                       rate: float, chosen: SimPrediction) -> EffectiveService:
    """:class:`EffectiveService` of the simulation's service model at ``rate``: the rules
    of the decision path use the same execution times the simulation used."""
    r = None if req.finite_load else rate
    bs = [int(b) for b in service.curve.batch_sizes]
    if len(bs) < 2:
        bs = [1, 8]
    ts = [service.batch_time_ms(b, r) for b in bs]
    s1 = service.batch_time_ms(1, r)
    if len(set(bs)) >= 2:
        alpha, tau0 = np.polyfit(np.asarray(bs, dtype=np.float64), np.asarray(ts), 1)
        if fit.knee is not None:  # a knee: the segment below it, where batches form
            line = np.asarray(alpha * np.asarray(bs, dtype=np.float64) + tau0)
            rel = float(np.max(np.abs(line - np.asarray(ts)) / np.asarray(ts)))
            knee = fit_knee(np.asarray(bs, dtype=np.float64), np.asarray(ts), rel)
            if knee is not None:
                alpha, tau0 = knee.alpha_ms_per_sample, knee.tau0_ms
    else:
        alpha, tau0 = 0.0, s1
    alpha = max(float(alpha), 0.0)
    tau0 = min(max(float(tau0), 0.0), s1)
    t1 = req.curve.t1_ms
    bits = [f"T(1) {t1:.3g} ms"]
    spread = float(service.mean_spread_factors(np.array([1]))[0])
    if abs(spread - 1.0) > 0.02:
        bits.append(f"x {spread:.2f} (mean over median of the measured spread)")
    ob = req.per_batch_overhead_ms + service.mean_batch_excess_ms
    if ob > 0:
        src = ("calibrated from the serving run" if req.per_batch_overhead_calibrated
               else "given" if req.batch_excess_ms == () else
               "calibrated from the serving run" if req.per_batch_overhead_ms == 0 else
               "given plus calibrated")
        bits.append(f"+ per-batch overhead {ob:.3g} ms ({src})")
    if req.per_item_overhead_ms > 0:
        bits.append(f"+ per-item overhead {req.per_item_overhead_ms:.3g} ms")
    stretch = service.contention_stretch(r)
    if stretch > 1.0:
        bits.append(f"x {stretch:.2f} (interpreter-lock contention at {rate:g} req/s)")
    parts = " ".join(bits)
    if len(bits) > 1:
        parts = f"S(1) = {parts} = {s1:.3g} ms"
    else:
        parts = f"S(1) = T(1) = {s1:.3g} ms (no per-batch overhead)"
    return EffectiveService(s1_ms=s1, tau0_ms=tau0, alpha_ms_per_sample=alpha,
                            per_batch_ms=max(0.0, s1 - t1), parts=parts)


def _objective_choice(req: AdviseRequest, feas: list[SimPrediction], n: int,
                      inst_list: list[int], probe: Any) -> tuple[list[SimPrediction],
                                                                 SimPrediction]:
    """``(feasible, chosen)`` once ``n`` instances have a feasible configuration: the
    default objective picks among those (:func:`_pick`); another objective also probes
    the larger instance counts searched (the given ``--instances``, else one more) and
    picks by its own rule (:mod:`trtcheck.analyze.objectives`), stated in the notes."""
    if req.objective == "fewest-instances":
        return feas, _pick(feas)
    from trtcheck.analyze.objectives import get_objective

    obj = get_objective(req.objective)
    more = [m for m in inst_list if m > n] if req.instances is not None else [n + 1]
    every = list(feas)
    for m in more:
        every += probe(m)
    req.notes.append(f"objective {obj.name}: {obj.describe(req.slo_p99_ms)} (instance "
                     f"counts {int_ranges([n, *more])}; no bootstrap tie-break)")
    return every, obj.pick(every)


def _pick(feas: list[SimPrediction]) -> SimPrediction:
    """The fewest instances, then the lowest P99 (the interval's upper end where the
    predictions have intervals: :func:`~trtcheck.analyze.objectives.p99_upper_ms`), ties
    within :data:`TIE_REL` to no or the shorter window, then the smaller max batch."""
    from trtcheck.analyze.objectives import p99_upper_ms

    n_min = min(p.instances for p in feas)
    at = [p for p in feas if p.instances == n_min and p.p99_ms is not None]
    best = min(p99_upper_ms(p) for p in at)
    ties = [p for p in at if p99_upper_ms(p) <= best * (1 + TIE_REL) + TIE_ABS_MS]
    return min(ties, key=lambda p: (p.window_us, p.max_batch_size))


def _choose_on_intervals(req: AdviseRequest, load: SimLoad, service: ServiceModel,
                         rate: float, feasible: list[SimPrediction], chosen: SimPrediction,
                         probe: Any = None, more_counts: Sequence[int] = ()
                         ) -> tuple[list[SimPrediction], SimPrediction, str]:
    """The recommendation chosen on the P99 prediction intervals, by the objective's own
    rule as ``trtcheck tune`` applies it (:mod:`trtcheck.analyze.objectives`).

    Every stable configuration of ``feasible`` (the configurations searched whose point
    P99 meets the objective) gets its P50 and P99 intervals
    (:func:`~trtcheck.analyze.what_if_intervals.predict_with_intervals`, set on the
    predictions); the objective then ranks those whose P99 interval's upper end is within
    the objective (all of them without one) by its rule, P99 compared by that upper end.
    For ``fewest-instances``, when no upper end at the count searched is within the
    objective, the larger counts ``more_counts`` are simulated in turn (``probe(n)``: the
    configurations at ``n`` instances whose point meets the objective) until one has a
    configuration whose upper end is. When none is, the objective's first by the upper end
    is recommended uncertified (the ``p99-interval-above-objective`` warning says so).
    The bootstrap replicas are not run then: the interval already holds the calibration's
    run-to-run spread and the sampling noise they would estimate.

    Returns:
        ``(candidates, chosen, rule)``: every configuration ranked (with intervals), the
        recommendation, and the rule in words (``Recommendation.interval_rule``).
    """
    from trtcheck.analyze.objectives import get_objective, p99_upper_ms

    obj = get_objective(req.objective)

    def with_intervals(ps: list[SimPrediction]) -> list[SimPrediction]:
        _set_intervals(req, ps, service, load, rate)
        return [p for p in ps if p.p99_interval_ms is not None]

    def within(ps: list[SimPrediction]) -> list[SimPrediction]:
        return [p for p in ps if obj.feasible(p, slo_p99_ms=req.slo_p99_ms,
                                              max_utilisation=req.max_utilisation)]

    first = [p for p in feasible if p.stable]
    if chosen not in first:
        first.append(chosen)
    ranked = with_intervals(first) or [chosen]
    ok = within(ranked)
    if (not ok and probe is not None and req.slo_p99_ms is not None
            and req.objective == "fewest-instances"):
        for m in more_counts:
            extra = with_intervals([p for p in probe(m) if p.stable])
            ranked += extra
            ok = within(extra)
            if ok:
                break
    pick = obj.pick(ok or ranked)
    counts = int_ranges(sorted({p.instances for p in ranked}))
    plural = "s" if counts != "1" else ""
    pool = ("whose point P99 meets the objective" if req.slo_p99_ms is not None else
            "that keep up")
    rule = (f"the P99 prediction interval, as trtcheck tune chooses: "
            f"{obj.describe(req.slo_p99_ms)}; ")
    if req.slo_p99_ms is not None:
        rule += (f"of the {len(ranked)} configurations searched at {counts} instance{plural} "
                 f"{pool}, {len(ok)} {'has' if len(ok) == 1 else 'have'} the interval's upper "
                 f"end within the {req.slo_p99_ms:g} ms objective")
    else:
        rule += (f"the {len(ranked)} configurations searched at {counts} instance{plural} "
                 f"{pool} were ranked by it")
    if not ok and req.slo_p99_ms is not None:
        rule += (f"; as none does (the lowest upper end is {sig(p99_upper_ms(pick))} ms), "
                 "the objective's first by the upper end is recommended uncertified")
    return ranked, pick, rule


def _set_intervals(req: AdviseRequest, ps: list[SimPrediction], service: ServiceModel,
                   load: SimLoad, rate: float) -> None:
    """Give each of ``ps`` its P50 and P99 prediction intervals and the contention factor
    they were simulated with (:func:`~trtcheck.analyze.what_if_intervals.predict_with_intervals`
    on the same configurations; the points stay the search's)."""
    from trtcheck.analyze.what_if_intervals import predict_with_intervals

    if not ps:
        return
    again = predict_with_intervals(req, [Candidate(
        p.window_us, p.max_batch_size, p.instances, tuple(p.preferred_batch_sizes))
        for p in ps], service, load.arrivals, rate, load.warmup_fraction)
    for p, q in zip(ps, again):
        p.p50_interval_ms, p.p99_interval_ms = q.p50_interval_ms, q.p99_interval_ms
        p.contention_factor, p.contention_source = q.contention_factor, q.contention_source


def _interval_choice_words(chosen: SimPrediction, slo_p99_ms: float | None) -> str:
    """One sentence for the summary: the recommendation was chosen on its P99 interval."""
    iv = chosen.p99_interval_ms
    if not iv:
        return ""
    where = ("" if slo_p99_ms is None else
             f", within the {slo_p99_ms:g} ms objective" if iv[1] <= slo_p99_ms else
             f", above the {slo_p99_ms:g} ms objective: uncertified")
    assumed = ""
    if chosen.contention_source in ("interpolated", "extrapolated", "assumed"):
        assumed = (f"; T(b) x {chosen.contention_factor:.3g} for {chosen.instances} instances "
                   f"is {chosen.contention_source}, not measured")
    return (f"Chosen on the P99 prediction interval (upper end {sig(iv[1])} ms{where}"
            f"{assumed}), as trtcheck tune chooses.")


def _runner_up(chosen: SimPrediction, feasible: list[SimPrediction],
               preds: list[SimPrediction], max_util: float,
               slo_upper_ms: float | None = None) -> SimPrediction | None:
    """Best configuration of another kind: the best feasible one by P99 (the fewest
    instances first; by the interval's upper end where the predictions have intervals,
    one whose upper end is within ``slo_upper_ms`` first), else the best stable one at
    the same instance count, else the least loaded."""
    from trtcheck.analyze.objectives import p99_upper_ms

    k = _kind(chosen)
    others = [p for p in feasible if _kind(p) != k]
    if slo_upper_ms is not None:
        others = [p for p in others if p99_upper_ms(p) <= slo_upper_ms] or others
    if others:
        return _pick(others)
    same_n = [p for p in preds if p.instances == chosen.instances and _kind(p) != k]
    stable = [p for p in same_n if p.stable]
    if stable:
        return min(stable, key=lambda p: (p.p99_ms, p.window_us, p.max_batch_size))
    return min(same_n, key=lambda p: p.utilisation) if same_n else None


def _formulas(rate: float, curve: LatencyCurve, eff: EffectiveService,
              service: ServiceModel, chosen: SimPrediction, cap1: float, cap_b: int,
              gpus: int, c_req: float, max_util: float) -> Formulas:
    """The closed-form numbers, from the simulation's own execution times (``eff``) and
    the per-instance rate of the recommendation."""
    lam_inst = rate / chosen.instances
    try:
        nat = qf.natural_batch_no_wait(lam_inst, eff.tau0_ms, eff.alpha_ms_per_sample)
    except InputError:
        nat = None
    w_ms = us_to_ms(chosen.window_us)  # the closed forms take ms
    return Formulas(
        queue_formation_ratio=lam_inst * eff.s1_ms / 1000.0,
        waiting_pays_index=qf.waiting_pays_index(lam_inst, eff.tau0_ms),
        break_even_window_us_at_max_batch=ms_to_us(qf.max_paying_window_ms(
            chosen.max_batch_size, eff.tau0_ms), None),
        single_request_batch_share_at_window=(qf.single_request_batch_share(lam_inst, w_ms)
                                              if w_ms > 0 else None),
        natural_batch_no_wait=nat,
        min_batch_to_keep_up_one_instance=qf.min_batch_to_keep_up(
            rate, lambda b: service.batch_time_ms(b, rate), service.curve.max_batch_measured),
        capacity_per_instance_per_s=cap1, capacity_batch_size=cap_b,
        instances_needed_min=qf.instances_needed(rate, cap1, max_util),
        serving_overhead_to_inference_ratio=c_req / curve.t1_ms,
        per_instance_rate_per_s=lam_inst, s1_ms=eff.s1_ms, s_tau0_ms=eff.tau0_ms)


def _unit_words(device: str | None, serving: str | None = None) -> tuple[str, str]:
    """(what one instance runs on, in plural, e.g. "GPUs"), (the context noun); the
    singular of the first is :data:`_UNIT_SINGULAR`. ``serving``: the serving layer the
    advice is for (``"triton"``: parallel executions are Triton model instances, the
    ``instance_group`` count, whatever backend runs inside)."""
    if serving == "triton":
        where = "per GPU" if device == "gpu" else "per host" if device == "cpu" else \
            "per device"
        return (("GPUs" if device == "gpu" else "processes on CPU hosts" if device == "cpu"
                 else "GPUs or processes"),
                f"Triton model instances {where} (instance_group count)")
    if device == "cpu":
        return "processes on CPU hosts", "ONNX Runtime sessions (or intra-op threads) per host"
    if device == "gpu":
        return "GPUs", "execution contexts per GPU (Triton instance_group count)"
    return "GPUs or processes", "execution contexts (GPU) or sessions (CPU) per device"


def _finite_queue_words(req: AdviseRequest, rate: float, eff: EffectiveService,
                        chosen: SimPrediction) -> str:
    """How a burst or closed loop queues, from its own numbers: a burst of N is a queue of
    N at t=0 (a closed loop of C clients keeps up to C requests waiting), and the share of
    time one context is busy in the simulated run (completed executions per second x
    S(mean batch) per instance; S(b) = tau0 + (S(1) - tau0) x b, ms). Never the open-loop
    lambda x S(1) rule, which does not describe a queue that is there from the start."""
    if req.burst_size is not None:
        words = f"a burst of {req.burst_size} requests is a queue of {req.burst_size} at t=0"
    else:
        words = (f"a closed loop of {req.closed_loop.clients} clients keeps up to "  # type: ignore[union-attr]
                 f"{req.closed_loop.clients} requests outstanding")  # type: ignore[union-attr]
    if req.serial_overhead and req.per_request_overhead_ms > 0:
        words += (f"; it waits at the serial front ({req.per_request_overhead_ms:.3g} ms per "
                  f"request on one thread), which passes {rate:.4g} req/s on to execution")
    q_per_s = chosen.throughput_queries_per_s
    if q_per_s and chosen.mean_batch:
        b = chosen.mean_batch
        s_b_ms = eff.tau0_ms + (eff.s1_ms - eff.tau0_ms) * b
        busy = min(1.0, q_per_s / b * s_b_ms / 1000.0 / max(1, chosen.instances))
        words += (f"; in the simulated run one execution context is busy {busy:.1%} of the "
                  "time")
    return words


_UNIT_SINGULAR = {"processes on CPU hosts": "process on a CPU host", "GPUs": "GPU",
                  "GPUs or processes": "GPU or process"}


def _load_words(req: AdviseRequest, rate: float) -> str:
    if req.burst_size is not None:
        how = ("through the serial front" if req.serial_overhead and req.per_request_overhead_ms
               else "as fast as the recommended run served them")
        return f"a burst of {req.burst_size} requests reaching the queue at {rate:.4g} req/s ({how})"
    if req.closed_loop is not None:
        return (f"a closed loop of {req.closed_loop.clients} clients running at {rate:.4g} "
                "req/s (the recommended run's throughput)")
    return f"{rate:g} req/s"


def _path(req: AdviseRequest, load: SimLoad, rate: float, curve: LatencyCurve,
          eff: EffectiveService, f: Formulas, chosen: SimPrediction,
          runner: SimPrediction | None, cap1: float, cap_b: int, gpus: int,
          single_point: bool, c_req: float, stability: Any,
          best_one_p99_ms: float | None = None, on_intervals: bool = False
          ) -> list[DecisionNode]:
    """The decision path. Every step uses the rate, T(b) and overheads the simulation
    used (``eff``: the simulated execution time) and says which; ``c_req``: per-request
    overhead in all (given + measured), ms; ``best_one_p99_ms``: the lowest simulated
    P99 of a stable one-instance configuration (the scale-out step's number when one
    instance carries the rate but misses the P99 objective)."""
    t1 = curve.t1_ms
    s1 = eff.s1_ms
    units, contexts = _unit_words(req.device, "triton" if req.batcher == "triton"
                                  or req.target == "triton" else None)
    measured = c_req > req.per_request_overhead_ms
    given = ("recorded by the serving run (its serial front)"
             if req.per_request_overhead_recorded else "given")
    c_src = ("measured by the serving run" if measured and req.per_request_overhead_ms <= 0
             else f"{given} plus measured" if measured else given)
    nodes: list[DecisionNode] = []
    lw = _load_words(req, rate)
    # step 1: thin the HTTP layer
    ratio = f.serving_overhead_to_inference_ratio
    if req.client_network_ms is not None and req.per_request_overhead_ms <= 0:
        net = req.client_network_ms
        yes = net >= OVERHEAD_DOMINATES_RATIO * t1
        nodes.append(DecisionNode(
            step="thin-http", question="Is the serving overhead per request at least the "
            "inference time T(1)?", value=net / t1 if t1 > 0 else 0.0,
            threshold=OVERHEAD_DOMINATES_RATIO, answer="yes" if yes else "no",
            conclusion=(f"the live run measured {net:.3g} ms of client + network time per "
                        "request (mean client latency from the send minus the server's "
                        f"request time), {net / t1:.3g}x T(1) = {t1:.3g} ms (the simulation "
                        f"adds a calibrated {c_req:.3g} ms per request, median: what the "
                        "server's queue and per-execution time do not explain): "
                        + ("thin the client and network path first (binary payloads, "
                           "keep-alive, gRPC); no batching setting recovers this" if yes else
                           "the model dominates; the client and network path is not the "
                           "first thing to fix"))))
    elif c_req <= 0 and req.overheads_source.startswith("calibrated"):
        nodes.append(DecisionNode(
            step="thin-http", question="Is the serving overhead per request at least the "
            "inference time T(1)?", value=0.0, threshold=OVERHEAD_DOMINATES_RATIO,
            answer="no", conclusion="the serving run measured no per-request cost outside "
            f"the model ({req.overheads_source}): the model dominates"))
    elif c_req <= 0:
        nodes.append(DecisionNode(
            step="thin-http", question="Is the serving overhead per request at least the "
            "inference time T(1)?", value=0.0, threshold=OVERHEAD_DOMINATES_RATIO,
            answer="unknown", conclusion="no per-request overhead was given or measured; "
            "pass --per-request-overhead-ms, or advise from a results file with a "
            "serving measurement (trtcheck serve)"))
    else:
        yes = ratio >= OVERHEAD_DOMINATES_RATIO
        serial_cap = 1000.0 / c_req
        concl = (f"the serving layer costs {c_req:.3g} ms per request ({c_src}"
                 f"{', serial' if req.serial_overhead else ''}), {ratio:.3g}x T(1) = "
                 f"{t1:.3g} ms: " + ("thin the HTTP layer first (binary payloads, keep-alive, "
                                     "pre-warmed connections); no batching setting recovers "
                                     "this" if yes else "the model dominates; the HTTP layer "
                                     "is not the first thing to fix"))
        if req.serial_overhead:
            concl += (f". On one thread (as given) it caps a serving process at "
                      f"{serial_cap:.0f} req/s, and the simulation queues requests there")
        elif yes and not req.finite_load:
            procs = math.ceil(rate / serial_cap - 1e-12)
            concl += (f". If this overhead runs on one thread (a single Python process) it "
                      f"caps that process at {serial_cap:.0f} req/s"
                      + (f": {rate:g} req/s needs {procs} processes" if procs > 1 else ""))
        nodes.append(DecisionNode(
            step="thin-http", question="Is the serving overhead per request at least the "
            "inference time T(1)?", value=ratio, threshold=OVERHEAD_DOMINATES_RATIO,
            answer="yes" if yes else "no", conclusion=concl))
    # step 2: replace the Python serving layer
    if c_req > 0:
        yes = c_req >= PYTHON_LAYER_OVERHEAD_MS
        nodes.append(DecisionNode(
            step="replace-python-layer", question="Is the per-request overhead at the level "
            "of a Python serving layer (>= 1 ms; a Python HTTP layer typically costs ~10 ms, "
            "a C++ server far less)?",
            value=c_req, threshold=PYTHON_LAYER_OVERHEAD_MS, answer="yes" if yes else "no",
            conclusion=(("the server is Triton already: "
                         f"{c_req:.3g} ms per request is what a Python layer costs, so look "
                         "at the model's own per-request work (a python-backend model.py) "
                         "and the client path (gRPC, shared memory, more client processes)"
                         if req.batcher == "triton" else
                         "move serving to a C++ server (Triton, gRPC, shared memory): "
                         f"{c_req:.3g} ms per request is what a Python layer costs")
                        if yes else f"{c_req:.3g} ms per request is already below a Python "
                        "layer's cost")))
    # step 3: more execution contexts (all of the load on one context at batch 1)
    rho_all = rate * s1 / 1000.0
    yes = rho_all >= req.max_utilisation
    nodes.append(DecisionNode(
        step="execution-contexts", question="Does one execution context at batch 1 fall "
        f"short of the load (lambda x S(1) >= {req.max_utilisation:g}, S(1) the simulated "
        "execution time)?", value=rho_all, threshold=req.max_utilisation,
        answer="yes" if yes else "no",
        conclusion=(f"{_finite_queue_words(req, rate, eff, chosen)}: "
                    + ("the execution context is the bottleneck; more contexts (up to "
                       f"{CONTEXTS_KNEE}, measured) and batching drain it sooner"
                       if yes else "more contexts add nothing")
                    if load.finite else
                    f"{lw} x S(1) {s1:.3g} ms = {rho_all:.2f} ({eff.parts}): one context "
                    "serving one request at a time cannot keep up; " + (
                        f"batching up to {chosen.max_batch_size} lets one instance carry it "
                        "(the recommendation below), so no more contexts are needed for this "
                        "load" if chosen.instances == 1 and chosen.max_batch_size > 1 else
                        "the one instance recommended runs above the utilisation target "
                        "(scale-out below says how many keep it below)"
                        if chosen.instances == 1 else
                        f"try up to {CONTEXTS_KNEE} {contexts} (throughput usually stops "
                        "growing there) - their overlap is not in the single-stream curve, "
                        "so measure it - and batch")
                    if yes else f"{lw} x S(1) {s1:.3g} ms = {rho_all:.3f} ({eff.parts}): one "
                    f"context is busy {rho_all:.1%} of the time at batch 1; more contexts "
                    "add nothing")))
    # step 4: batching, per instance of the recommendation
    n = chosen.instances
    lam_inst = f.per_instance_rate_per_s or rate / n
    rho1 = f.queue_formation_ratio
    per = (f"{lam_inst:.4g} req/s per instance ({n} instances)" if n > 1
           else f"{lam_inst:.4g} req/s")
    if load.finite:
        q_concl = (_finite_queue_words(req, rate, eff, chosen) + (
            f"; behind the serial front {per} x S(1) {s1:.3g} ms = {rho1:.3g} < 1, so no "
            "queue forms at execution and batches would mostly be single requests"
            if rho1 < 1 and req.serial_overhead and req.per_request_overhead_ms > 0 else
            f"; {chosen.mean_queue_len or 0:.2g} requests wait at execution on average there, "
            + ("so batches form from that backlog without any window"
               if (chosen.mean_queue_len or 0) >= 1 else
               "so batches would mostly be single requests")))
    elif rho1 >= 1.0:
        q_concl = (f"{per} x S(1) {s1:.3g} ms = {rho1:.3g} >= 1: requests arrive at least as "
                   "fast as one executes; a queue forms by itself and batches form from it "
                   "without any window")
    else:
        lq = rho1 * rho1 / (2.0 * (1.0 - rho1))  # M/D/1 mean queue (Pollaczek-Khinchine)
        q_concl = (f"{per} x S(1) {s1:.3g} ms = {rho1:.3g} < 1: no queue forms by itself; "
                   f"at batch 1 about {lq:.2g} requests wait on average (M/D/1, "
                   "Pollaczek-Khinchine), " + ("so the queue is mostly empty and batches "
                                               "would mostly be single requests" if lq < 1
                                               else "so a short queue is often there to "
                                               "batch from without a window"))
    nodes.append(DecisionNode(
        step="batching", question="Does a queue form by itself (queue-formation ratio "
        "lambda x S(1) >= 1, per instance)?", value=rho1, threshold=1.0,
        answer="yes" if rho1 >= 1 else "no", conclusion=q_concl))
    lam_tau = f.waiting_pays_index
    w_probe_ms = 1.0
    b_probe = qf.expected_window_batch(lam_inst, w_probe_ms, max(curve.max_batch_measured, 2))
    be = qf.break_even_optimistic(b_probe, t1, w_probe_ms, eff.per_batch_ms)
    kind = _kind(chosen)
    probe_words = (
        f"; break-even rule at a 1 ms window: batch {b_probe:.2f} x T(1) {t1:.3g} ms = "
        f"{be.saved_ms:.3g} ms saved vs {be.added_ms:.3g} ms added (window + "
        f"per-batch overhead {eff.per_batch_ms:.3g} ms; cost/gain {be.ratio:.2g})"
        if b_probe >= 1.5 else
        f"; a 1 ms window would collect {b_probe:.2f} requests on average: nearly "
        "every batch would be a single request")
    if lam_tau > 1:
        w_answer = "yes"
        w_concl = ("a window fills fast enough to save more fixed cost than it waits"
                   if kind == "window" else
                   "on average a window would fill fast enough to save more fixed cost "
                   "than it waits; " + (
                       "the queue already forms batches without one, and the simulation "
                       "(next step) finds no window better by more than the noise"
                       if kind == "batch-without-waiting" else
                       "the simulation (next step), with the measured spread, finds no "
                       "batching setting better by more than the noise"))
    elif kind == "window":
        # the recommended window pays in the simulated tail, not by the average estimate:
        # say that, never that the recommended window waits longer than it saves
        w_answer = "not on average"
        w_concl = (f"on average a window collects too few requests to save its wait"
                   f"{probe_words}; the recommended {us_to_ms(chosen.window_us):g} ms window "
                   "pays in the tail instead: the simulation (next step), with the measured "
                   "spread and the queue that builds up in bursts, finds it gives the lowest "
                   + ("upper end of the P99 interval" if on_intervals else "P99"))
    else:
        w_answer = "no"
        w_concl = "by this estimate a window waits longer than it saves" + probe_words
    nodes.append(DecisionNode(
        step="batching", question="Does waiting for a batch pay (sharp break-even: "
        "lambda x tau0 > 1, tau0 the fixed cost of one simulated execution)?", value=lam_tau,
        threshold=1.0, answer=w_answer,
        conclusion=f"{per} x tau0 {eff.tau0_ms:.3g} ms = {lam_tau:.3g}: {w_concl}"))
    if single_point:
        nodes.append(DecisionNode(
            step="batching", question="Is T(b) known beyond one batch size?", value=1.0,
            threshold=2.0, answer="no",
            conclusion="only T(1) was given; the simulation assumed T(b) = T(1) for every b "
            "(the best case for batching), so a 'no batching' answer is conclusive and a "
            "'batch' answer needs a measured curve"))
    undecided = stability is not None and stability.status == "cannot-tell"
    if undecided:
        alts = "; ".join(f"{_cfg_short(c)} in {c.share:.0%}" for c in stability.choices[:3])
        concl = (f"cannot tell: over {stability.replicas} bootstrap replicas of the "
                 f"measurements the choice was {alts} of them; the simulated latency moves "
                 "with the noise, so no number is given; re-measure "
                 + "; ".join(stability.remeasure))
    else:
        concl = f"{_cfg(chosen)}: {_pred_text(chosen, load.finite)}"
        if stability is not None:
            concl += (f" ({_holds_words(stability)}; chosen outright in "
                      f"{stability.chosen_share:.0%})")
        if runner is not None:
            concl += f"; runner-up {_cfg(runner)}: {_pred_text(runner, load.finite)}"
            concl += _runner_up_text(chosen, runner, req, load.finite, on_intervals)
        if kind == "window" and lam_tau <= 1 and not on_intervals:
            concl += ("; the window's gain is in the tail (P99), which the average estimate "
                      "above does not see")
    if on_intervals and chosen.p99_interval_ms:
        question = ("Which batching configuration gives the lowest upper end of the P99 "
                    "prediction interval at the fewest instances?"
                    if req.objective == "fewest-instances" else
                    "Which batching configuration gives the lowest upper end of the P99 "
                    "prediction interval?" if req.objective == "p99" else
                    f"Which configuration does the {req.objective} objective choose on the "
                    "P99 prediction intervals?")
        value = chosen.p99_interval_ms[1]
    else:
        question = ("Which batching configuration gives the lowest simulated P99 at the "
                    "fewest instances, beyond the noise?")
        value = None if undecided else chosen.p99_ms
    nodes.append(DecisionNode(
        step="batching", question=question, value=value, threshold=req.slo_p99_ms,
        answer="cannot-tell" if undecided else kind, conclusion=concl))
    # step 5: scale out
    yes = chosen.instances > 1
    given = _instances_given_beyond_need(req, rate, chosen, cap1)
    if given is not None:  # the count was given, and one instance carries the load
        own1, own1_b = given
        one = (f"one instance of the recommended configuration would carry {rate:g} req/s "
               f"at utilisation {rate / own1:.2f} (capacity {own1:.0f} req/s at its max "
               f"batch {own1_b})" if own1 * req.max_utilisation >= rate else
               f"one instance would carry {rate:g} req/s at a larger max batch (capacity "
               f"{cap1:.0f} req/s {_cap_batch(req, cap_b, 'at ')})")
        nodes.append(DecisionNode(
            step="scale-out", question="Does one instance fall short (capacity at its best "
            f"batch x {req.max_utilisation:g} < lambda, or the P99 objective missed)?",
            value=cap1, threshold=rate / req.max_utilisation, answer="given",
            conclusion=(f"the instance count is as given ({chosen.instances}, --instances); "
                        f"{one}, so the extra instances are not needed for capacity"
                        + (" (one instance was not simulated against the P99 objective)"
                           if req.slo_p99_ms is not None else "")
                        + "; instances that share a device contend, so compare with "
                        "--instances 1")))
        return nodes
    if req.finite_load:
        s_concl = (f"the instance count is as given ({chosen.instances}); a {req.load_label} "
                   "load drains whatever the count, more instances only shorten it")
        nodes.append(DecisionNode(step="scale-out", question="How many instances?",
                                  value=float(chosen.instances), threshold=None,
                                  answer="given", conclusion=s_concl))
        return nodes
    beyond = _beyond_capacity_text(req, chosen, rate, cap1, best_one_p99_ms, on_intervals)
    # more instances that the user's objective chose: one instance does not fall short
    by_objective = beyond is not None and req.objective != "fewest-instances"
    # one instance carries the rate but misses the P99 objective: that half decided
    by_p99 = (beyond is not None and not by_objective and req.slo_p99_ms is not None
              and best_one_p99_ms is not None)
    nodes.append(DecisionNode(
        step="scale-out", question="Does one instance fall short (capacity at its best batch "
        f"x {req.max_utilisation:g} < lambda, or the P99 objective missed)?",
        value=best_one_p99_ms if by_p99 else cap1,
        threshold=req.slo_p99_ms if by_p99 else rate / req.max_utilisation,
        answer="yes" if yes and not by_objective else "no",
        conclusion=(f"{beyond}; {_headroom_text(req, chosen, rate, cap1)}" if beyond
                    else f"one instance serves at most {cap1:.0f} req/s "
                    f"({_cap_batch(req, cap_b)}, simulated "
                    f"execution {float(chosen_time(eff, cap_b, curve)):.3g} ms); {rate:g} req/s "
                    f"needs at least {gpus} instance{'s' if gpus != 1 else ''} "
                    f"({gpus} {_UNIT_SINGULAR[units] if gpus == 1 else units} with this curve "
                    "each), " + _headroom_text(
                        req, chosen, rate, cap1)
                    if yes else f"one instance carries {rate:g} req/s at utilisation "
                    f"{chosen.utilisation:.2f} ({_config_capacity_text(req, chosen, rate, cap1, cap_b)})"
                    + ("" if chosen.utilisation <= req.max_utilisation + 1e-12 else
                       f", above the {req.max_utilisation:.0%} utilisation target"))))
    return nodes


def _config_capacity_text(req: AdviseRequest, chosen: SimPrediction, rate: float,
                          cap1: float, cap_b: int) -> str:
    """The recommended configuration's own capacity (the one its utilisation is quoted
    against: per-instance rate / utilisation, at its max batch), and the best batch's
    when that is a different batch size."""
    if chosen.utilisation > 0 and math.isfinite(chosen.utilisation):
        own = rate / max(chosen.instances, 1) / chosen.utilisation
        text = f"capacity {own:.0f} req/s at its max batch {chosen.max_batch_size}"
        if cap_b != chosen.max_batch_size and abs(own - cap1) > 0.5:
            text += f"; {cap1:.0f} req/s {_cap_batch(req, cap_b, 'at ')}"
        return text
    return f"capacity {cap1:.0f} req/s {_cap_batch(req, cap_b, 'at ')}"


def _instances_given_beyond_need(req: AdviseRequest, rate: float, chosen: SimPrediction,
                                 cap1: float) -> tuple[float, int] | None:
    """With ``--instances`` given (one instance not among them) and a recommendation of
    several instances that one instance could carry (open load, capacity at the best
    batch x the utilisation target >= the rate): one instance's capacity at the
    recommended max batch and that batch size; ``None`` otherwise (the instances are
    needed, or were searched from one up)."""
    if (req.instances is None or req.finite_load or chosen.instances <= 1
            or 1 in req.instances or cap1 * req.max_utilisation < rate):
        return None
    own1, _ = service_model(req).capacity_per_instance_per_s(chosen.max_batch_size, rate)
    return own1, chosen.max_batch_size


def capacity_batch_words(sizes: list[int], b: int, unassessed: bool) -> str:
    """The batch size ``b`` a capacity is quoted at, in words, given the measured batch
    sizes: the largest calibrated batch when ``unassessed`` (a live server allows larger
    sizes that were not measured); a size beyond the measured ones is called
    extrapolated, with how the simulation extrapolated its T(b) (one measured size b0:
    T(b) = T(b0), the best case for batching; else along the fit's slope). Shared by
    the decision path and the rendered formulas, so both say the same."""
    top = max(sizes) if sizes else 0
    if sizes and b > top:
        if len(sizes) == 1:
            return (f"batch {b}, extrapolated as T({b}) = T({top}), the best case for "
                    f"batching: only batch {top} was measured")
        return (f"batch {b}, extrapolated along the fit's slope beyond the largest "
                f"measured batch, {top}")
    if unassessed and b == top:
        return f"the largest calibrated batch, {b}"
    return f"batch {b}"


def _cap_batch(req: AdviseRequest, cap_b: int, prefix: str = "") -> str:
    """The batch a capacity is quoted at, in words (:func:`capacity_batch_words`)."""
    return prefix + capacity_batch_words([int(b) for b in req.curve.batch_sizes], cap_b,
                                         req.unassessed_above is not None)


def chosen_time(eff: EffectiveService, b: int, curve: LatencyCurve) -> float:
    """The simulated mean execution time of a batch of ``b`` on the rules' line, ms."""
    return eff.tau0_ms + eff.alpha_ms_per_sample * b if curve.batch_sizes.size > 1 \
        else eff.s1_ms


def _exact(stability: Any) -> bool:
    """Whether the replicas resampled the simulation alone (exact, given input)."""
    return any(r.startswith("simulation only") for r in getattr(stability, "resampled", []))


def _holds_words(stability: Any) -> str:
    """How the recommendation held, for the advice text: on bootstrap replicas of the
    measurements (its share), or, for exact (given) input, chosen on the median P99 of
    the simulation replicas (their disagreement is the simulation's own noise)."""
    if _exact(stability):
        return (f"chosen on the median P99 of {stability.replicas} simulation replicas "
                "(exact input: they differ only in the simulated arrivals)")
    return (f"holds in {stability.share:.0%} of {stability.replicas} bootstrap replicas of "
            "the measurements")


def _cfg_short(c: Any) -> str:
    if c.max_batch_size == 1:
        return "no batching"
    w = us_to_ms(c.window_us)
    inst = f" x{c.instances}" if c.instances != 1 else ""
    return (f"window {w:g} ms, max batch {c.max_batch_size}{inst}" if w > 0
            else f"max batch {c.max_batch_size} without waiting{inst}")


def _material() -> float:
    from trtcheck.analyze.advice.advise_noise import MATERIAL_GAIN

    return MATERIAL_GAIN


def runner_up_shortfall(runner: SimPrediction, req: AdviseRequest,
                        finite: bool = False) -> str | None:
    """Why the runner-up is not a feasible choice, in words, or ``None`` when it is one:
    it cannot carry the load, runs above the utilisation target (open loads only), or
    misses the P99 objective (``req.slo_p99_ms``, ms)."""
    if not runner.stable:
        return f"cannot carry the load (utilisation {runner.utilisation:.2f})"
    if not finite and runner.utilisation > req.max_utilisation + 1e-12:
        return (f"runs above the utilisation target ({runner.utilisation:.2f} > "
                f"{req.max_utilisation:g})")
    if req.slo_p99_ms is not None and (runner.p99_ms or math.inf) > req.slo_p99_ms:
        return f"misses the objective (P99 {_fmt_ms(runner.p99_ms)} > {req.slo_p99_ms:g} ms)"
    return None


def _runner_up_text(chosen: SimPrediction, runner: SimPrediction, req: AdviseRequest,
                    finite: bool, on_intervals: bool = False) -> str:
    """Why the recommendation is kept over the runner-up: the runner-up is not feasible
    (never "within the noise" then), or it reads better on a number within the noise
    (a more complex runner-up), or the recommendation's lower P99 beat it beyond the
    noise (a simpler runner-up); ``on_intervals``: the choice was on the P99 intervals'
    upper ends (:func:`_choose_on_intervals`), which the text then compares."""
    from trtcheck.analyze.advice.advise_noise import MATERIAL_GAIN, simplicity

    better = [name for name, a, b in (("P50", runner.p50_ms, chosen.p50_ms),
                                      ("P99", runner.p99_ms, chosen.p99_ms))
              if a is not None and b is not None and a < b]
    short = runner_up_shortfall(runner, req, finite)
    if short is not None:
        return (f"; the runner-up {short}, so it is no choice"
                + (f" (its lower {' and '.join(better)} does not count)" if better else ""))
    verb = "are" if len(better) > 1 else "is"
    if on_intervals and chosen.p99_interval_ms and runner.p99_interval_ms:
        from trtcheck.analyze.objectives import capacity_per_s

        c_hi, r_hi = chosen.p99_interval_ms[1], runner.p99_interval_ms[1]
        if req.objective == "throughput":
            ends = (f"capacity, {capacity_per_s(chosen):.4g} against the runner-up's "
                    f"{capacity_per_s(runner):.4g} req/s, among the configurations whose P99 "
                    "interval's upper end meets the objective")
        else:
            ends = (f"the P99 interval's upper end, {sig(c_hi)} ms against the "
                    f"runner-up's {sig(r_hi)} ms"
                    + (f" (within {TIE_REL:.0%}, the simpler or fewer-instance one wins)"
                       if c_hi > r_hi else ""))
        slo = req.slo_p99_ms
        if slo is not None and r_hi > slo >= c_hi:
            ends += f"; the runner-up's upper end is above the {slo:g} ms objective"
        if better:
            return (f"; the runner-up's lower {' and '.join(better)} in this one simulated run "
                    f"{verb} within the noise of the prediction intervals: the choice is on "
                    f"{ends}")
        return f"; the choice is on {ends}"
    if not better:
        return ""
    if simplicity(runner) < simplicity(chosen):
        if "P99" in better:  # the replicas decided, not this one simulated run
            return (f"; the runner-up's lower {' and '.join(better)} in this one simulated "
                    f"run {verb} within the simulation's noise (the choice rests on the "
                    "replicas or the objective's rule, stated above)")
        return ("; the runner-up is simpler and its P50 is lower, but the recommendation's "
                "P99 is lower by more than the tie-break allows, so the more complex one "
                "is recommended")
    return (f"; the runner-up's lower {' and '.join(better)} {verb} within the noise (a more "
            f"complex configuration must lower P99 by more than {MATERIAL_GAIN:.0%} in most "
            "replicas), so the simpler one is recommended")


HEAVY_TAIL_FACTOR = 1.5
"""Mean execution time over the median T(1) above which the advice notes a heavy-tailed
bench (our threshold; a loaded 2-core machine gave 3.2x: median 0.56 ms, p90 8.6 ms)."""

MAX_SENSIBLE_INSTANCES = 100_000
"""Above this many instances a hint to pass --instances is no help (the CLI's bound)."""


def _instances_hint(need: int, extra: str = "") -> str:
    """The hint for a shortfall of instances: pass more, or check the inputs when the
    count is beyond reason."""
    if need > MAX_SENSIBLE_INSTANCES:
        return ("check the arrival rate (req/s) and the curve's units (ms): this many "
                "instances means the model is far too slow for the load")
    return f"pass --instances {need} or more" + (f", {extra}" if extra else "")


def _headroom_text(req: AdviseRequest, chosen: SimPrediction, rate: float,
                   cap1: float) -> str:
    """The instance count chosen, and whether it keeps the utilisation target."""
    n = chosen.instances
    if chosen.utilisation <= req.max_utilisation + 1e-12:
        return (f"{n} with headroom (utilisation {chosen.utilisation:.2f} <= "
                f"{req.max_utilisation:g})" + (" and the objective" if req.slo_p99_ms else ""))
    need = instances_needed(req, rate, cap1, req.max_utilisation)
    return (f"{n} as given, at utilisation {chosen.utilisation:.2f}, above the "
            f"{req.max_utilisation:g} target: {need} instances keep it below")


def _beyond_capacity_text(req: AdviseRequest, chosen: SimPrediction, rate: float,
                          cap1: float, best_one_p99_ms: float | None = None,
                          on_intervals: bool = False) -> str | None:
    """Why ``chosen`` has more than one instance when one would carry ``rate`` (req/s)
    with headroom (``cap1``: one instance's capacity at its best batch, req/s): the
    user's objective ranked it first, or one instance misses the P99 objective (by
    ``best_one_p99_ms``, its lowest simulated P99, when given); ``None`` when one
    instance falls short of the rate (capacity is the reason)."""
    if chosen.instances <= 1 or cap1 * req.max_utilisation < rate:
        return None
    one = f"one instance would carry {rate:g} req/s (capacity {cap1:.0f} req/s)"
    if req.objective != "fewest-instances":
        return f"{one}; the objective {req.objective} chose {chosen.instances} (see its rule)"
    what = "lowest P99 interval upper end" if on_intervals else "best simulated P99"
    by = ("" if best_one_p99_ms is None or req.slo_p99_ms is None else
          f" (its {what} {sig(best_one_p99_ms)} ms against {req.slo_p99_ms:g} ms)")
    return f"{one} but misses the P99 objective{by}; {chosen.instances} meet it"


def _summary(req: AdviseRequest, load: SimLoad, kind: str, chosen: SimPrediction,
             f: Formulas, eff: EffectiveService, c_req: float, stability: Any) -> str:
    """The headline: the configuration, why (from the same numbers as the path), the
    prediction, and how stable the choice is; "Cannot tell" (no numbers) when the
    replicas do not decide."""
    t1 = req.curve.t1_ms
    if stability is not None and stability.status == "cannot-tell":
        alts = ", ".join(f"{_cfg_short(c)} ({c.share:.0%})" for c in stability.choices[:3])
        return (f"Cannot tell: the measurements are too noisy to decide; bootstrap replicas "
                f"chose {alts}. Re-measure " + "; ".join(stability.remeasure) + ". Until then "
                f"the replicas' most frequent choice is the best guess: {_cfg_short(chosen)}.")
    pred = _pred_text(chosen, load.finite)
    stab = ((" " + _holds_words(stability)[:1].upper() + _holds_words(stability)[1:]
             + ("" if _exact(stability) else
                f" (as good as each replica's own choice, within {_material():.0%} on P99)")
             + ".") if stability is not None else "")
    if kind == "no-batching":
        reasons = []
        if load.finite:
            first = ("a burst of {0} is a queue of {0} at t=0".format(req.burst_size)
                     if req.burst_size is not None else
                     f"a closed loop of {req.closed_loop.clients} clients keeps up to "  # type: ignore[union-attr]
                     f"{req.closed_loop.clients} requests outstanding")  # type: ignore[union-attr]
            if req.serial_overhead and req.per_request_overhead_ms > 0 \
                    and f.queue_formation_ratio < 1:
                reasons.append(f"{first}, but the serial front passes only "
                               f"{chosen.arrival_rate_per_s:.4g} req/s to execution (lambda x S(1) = "
                               f"{f.queue_formation_ratio:.3g} there, so no queue forms at "
                               "execution)")
            else:
                reasons.append(f"{first}, yet batches do not lower the simulated P99 beyond "
                               "the noise")
        elif f.queue_formation_ratio < 1:
            reasons.append(f"lambda x S(1) = {f.queue_formation_ratio:.3g} < 1 (no queue forms "
                           "by itself)")
        else:
            reasons.append(f"lambda x S(1) = {f.queue_formation_ratio:.3g} (a queue forms) but "
                           "batches do not lower the simulated P99 beyond the noise")
        if f.waiting_pays_index <= 1:
            reasons.append(f"lambda x tau0 = {f.waiting_pays_index:.3g} <= 1 (a window costs "
                           "more than it saves)")
        why = "batching does not pay: " + " and ".join(reasons)
        if c_req > t1:
            why += (f"; the {c_req:.3g} ms per-request serving overhead is "
                    f"{c_req / t1:.0f}x the {t1:.3g} ms inference, fix that first")
        return f"No batching: {why}. Predicted: {pred}.{stab}"
    if kind == "batch-without-waiting":
        return (f"Batch without waiting (window 0, max batch {chosen.max_batch_size}): "
                f"batches form from the backlog only. Predicted: {pred}.{stab}")
    if kind == "window":
        return (f"Window {us_to_ms(chosen.window_us):g} ms with max batch "
                f"{chosen.max_batch_size}. Predicted: {pred}.{stab}")
    why = _beyond_capacity_text(req, chosen, chosen.arrival_rate_per_s,
                                f.capacity_per_instance_per_s) or (
        f"one instance serves at most {f.capacity_per_instance_per_s:.0f} req/s "
        f"({_cap_batch(req, f.capacity_batch_size)})")
    return (f"{chosen.instances} instances, {_cfg(chosen).rsplit(',', 1)[0]}: {why}. "
            f"Predicted: {pred}.{stab}")


def _tune_measured_findings(req: AdviseRequest, rate: float, chosen: SimPrediction
                            ) -> list[Finding]:
    """What a ``trtcheck tune`` search measured, beside advice from its document
    (``req.tune_measured``, ``req.tune_pick``), at the search's own target rate (within
    1%): the recommendation's measurement when the search ran it (a warning when it missed
    the P99 objective), and the search's pick when the advice recommends another."""
    if req.tune_pick is None:
        return []
    (pick_cfg, tune_rate) = req.tune_pick
    if abs(rate - tune_rate) > 0.01 * tune_rate:
        return []
    out: list[Finding] = []
    key = (float(chosen.window_us), int(chosen.max_batch_size), int(chosen.instances))
    slo = req.slo_p99_ms
    m = req.tune_measured.get(key)
    if m is not None:
        p50, p99, q, run = m
        missed = slo is not None and p99 > slo
        out.append(Finding(
            code="tune-measured-recommendation", severity="warning" if missed else "info",
            message=(f"trtcheck tune measured the recommended configuration in live run {run} "
                     f"at {tune_rate:g} req/s: P50 {sig(p50)} ms, P99 {sig(p99)} ms, "
                     f"{q:.4g} req/s"
                     + (f", above the {slo:g} ms objective" if missed else "")),
            remedy=("prefer the search's pick, or measure again (its run is one measurement)"
                    if missed else None)))
    if pick_cfg != key:
        pm = req.tune_measured.get(pick_cfg)
        w, b, n = pick_cfg
        what = (f"window {us_to_ms(w):g} ms, max batch {b}, {n} instance{'s' if n != 1 else ''}")
        out.append(Finding(
            code="tune-pick-differs", severity="info",
            message=(f"the search picked {what}"
                     + (f", measured at P50 {sig(pm[0])} ms, P99 {sig(pm[1])} ms "
                        f"(live run {pm[3]})" if pm is not None else "")
                     + "; this advice simulates every configuration from the search's "
                     "calibration and chooses among them by its own search"),
            remedy="the search's measured pick is the stronger evidence at its target rate"))
    return out


def _interval_above_objective(chosen: SimPrediction, slo_p99_ms: float | None
                              ) -> Finding | None:
    """The warning when the recommendation's P99 point meets the objective but its
    prediction interval reaches above it (``None`` otherwise, or without an objective or
    an interval): advise recommends on the point with bootstrap stability, ``trtcheck
    tune`` only picks on an interval within the objective and otherwise measures."""
    iv = chosen.p99_interval_ms
    if slo_p99_ms is None or iv is None or chosen.p99_ms is None:
        return None
    if chosen.p99_ms > slo_p99_ms or iv[1] <= slo_p99_ms:
        return None
    return Finding(
        code="p99-interval-above-objective", severity="warning",
        message=(f"the recommendation's P99 prediction interval reaches {iv[1]:.3g} ms, "
                 f"above the {slo_p99_ms:g} ms objective: its point prediction "
                 f"({chosen.p99_ms:.3g} ms) meets the objective, its interval does not "
                 "certify it (the calibration's run-to-run spread and its run's few "
                 "slowest requests)"),
        remedy=("measure it before relying on it: trtcheck tune --url URL --model NAME "
                f"--arrival-rate R --slo-p99-ms {slo_p99_ms:g} measures its pick; or "
                "calibrate from a longer run (serve --duration-s) to narrow the interval"))


def _pitfalls(chosen: SimPrediction, c_req: float, req: AdviseRequest) -> list[Finding]:
    """Seed notes' pitfalls that apply to this recommendation."""
    out: list[Finding] = []
    top = req.unassessed_above
    if top is not None:
        out.append(Finding(
            code="uncalibrated-batch-sizes", severity="warning",
            message=(f"batch sizes above {top}, the largest the calibration run measured "
                     "(formed often enough to time), have no measured T(b) (the server "
                     f"allows {req.server_max_batch_size}): this advice simulated them as "
                     f"T(b) = T({top}), the best case for batching, so it cannot say by how "
                     "much larger batches pay, and a max batch above "
                     f"{top} rests on that assumption"
                     if req.curve.batch_sizes.size == 1 else
                     f"batch sizes above {top}, the largest the calibration run measured "
                     "(formed often enough to time), were not assessed (the server allows "
                     f"{req.server_max_batch_size}): this advice "
                     "cannot say whether larger batches pay"
                     + (f", and its max batch {top} is a limit of the data, not of the model"
                        if chosen.max_batch_size >= top else
                        f" (its max batch {chosen.max_batch_size} is below them)")) + (
                "; the what-if rows above it extrapolate T(b) along the fitted line"
                if any(c.max_batch_size > top for c in req.what_if) else ""),
            remedy="calibrate at a higher rate or with a longer window, so that larger "
            "batches form: " + (req.calibration_command or "trtcheck serve --url URL "
                                "--model NAME --load open:RATE --window-ms MS -o live.json")))
    batching = chosen.max_batch_size > 1
    own_batcher = req.batcher == "embedded"  # implementation pitfalls: not a live server
    python_layer = own_batcher and c_req >= PYTHON_LAYER_OVERHEAD_MS
    w_ms = us_to_ms(chosen.window_us)
    if batching and python_layer:
        out.append(Finding(
            code="pitfall-asyncio-queue-loop", severity="warning",
            message="a Python batcher's asyncio.Queue created before the event loop runs "
            "binds to the wrong loop and every request hangs",
            remedy="create queues and tasks once a running loop exists (startup hook)"))
    if batching:
        out.append(Finding(
            code="pitfall-count-batches-server-side", severity="info",
            message="count batches on the server (executions vs inferences), not from "
            "responses: N responses come back per batch",
            remedy="Triton: nv_inference_count / nv_inference_exec_count"))
    calibrated = req.overheads_source.startswith("calibrated")  # an open-loop serve run
    if req.closed_loop is not None and not calibrated:
        out.append(Finding(
            code="pitfall-load-shape", severity="info",
            message="closed-loop load (fixed concurrency) caps the arrival rate and hides "
            "batching; check this advice with open-loop arrivals at the target rate and a "
            "burst, with pre-warmed connections",
            remedy="trtcheck serve --load open:RATE --load burst:N"))
    if req.burst_size is not None:
        out.append(Finding(
            code="pitfall-burst-load", severity="info",
            message=f"a burst sends all {req.burst_size} requests at once, so a queue is there "
            "from the start: this advice is for draining one burst, not for a steady rate",
            remedy="check it at the steady rate too: trtcheck serve --load open:RATE"))
    if batching and python_layer and 2.0 <= w_ms <= 10.0:
        out.append(Finding(
            code="pitfall-short-python-window", severity="warning",
            message=f"a {w_ms:g} ms window in a Python service rarely collects a batch: "
            "its own per-request cost spreads the arrivals",
            remedy="prefer a C++ batcher (Triton) or measure the batch sizes you get"))
    if batching and w_ms == 0 and own_batcher:
        out.append(Finding(
            code="pitfall-window-zero-gives-up", severity="warning",
            message="with window 0 a batcher must take what is already queued before it "
            "waits; asyncio.wait_for(queue.get(), 0) gives up at once and never batches",
            remedy="drain the queue up to max batch without awaiting, then wait"))
    return out

