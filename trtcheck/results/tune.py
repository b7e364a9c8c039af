"""Records of ``trtcheck tune``: calibrate -> predict -> confirm against a live Triton.

A tune document (``kind: "tune"``) is a results document whose ``tune`` section holds
every live run (as ``serve --url`` records it), the calibration per instance count, the
prediction of every candidate with its interval, the pick with what was predicted and
what was measured, the runner-up and the objective.
"""

from __future__ import annotations

from typing import Any, ClassVar

from trtcheck.results.base import Record
from trtcheck.results.serve import ServeRun


RUN_NOISE_CODES = ("late-sends", "unstable-repeats")
"""Findings of a live run that say its measurement is noisier than it looks (the load
generator fell behind its schedule, the repeats disagreed): tune names them in its notes
and warnings with the run they came from."""

LOAD_SHORTFALL_CODES = ("load-share-lost", "generator-limited")
"""Findings of a live run whose load fell short of its schedule (a Ray actor lost, a
generator that could not keep up): what such a run calibrates or measures is another
rate than the target."""


def live_run_labels(runs: Any) -> list[str]:
    """The live-run numbers of each of ``runs`` (``tune.runs``) as tune's progress
    lines and notes count them: from 1, one per repeat (``["1", "2-3", "4", "5"]``)."""
    out, k = [], 1
    for run in runs:
        n = max(1, len(run.configs[0].repeats)) if run.configs else 1
        out.append(f"{k}" if n == 1 else f"{k}-{k + n - 1}")
        k += n
    return out


def load_short_runs(runs: Any) -> list[int]:
    """Indices into ``runs`` (``tune.runs``) of the runs that did not send their
    schedule (a finding of :data:`LOAD_SHORTFALL_CODES` on the run or its
    configuration)."""
    out = []
    for i, run in enumerate(runs):
        found = [*run.warnings, *(f for c in run.configs for f in c.validity)]
        if any(f.code in LOAD_SHORTFALL_CODES for f in found):
            out.append(i)
    return out


def tune_target_difference(a: Any, b: Any) -> str | None:
    """Why the picks of two ``trtcheck tune`` documents were not measured under one load:
    ``"different target rates (5 / 10 req/s)"`` when their target rates differ (by more
    than 0.1%), else ``None`` (also when either is no tune document)."""
    ta, tb = getattr(a, "tune", None), getattr(b, "tune", None)
    if ta is None or tb is None:
        return None
    ra, rb = float(ta.arrival_rate_per_s), float(tb.arrival_rate_per_s)
    if abs(ra - rb) <= 1e-3 * max(abs(ra), abs(rb)):
        return None
    return f"different target rates ({ra:g} / {rb:g} req/s)"


class TuneInterval(Record):
    """A predicted latency with its prediction interval, ms.

    Attributes:
        point_ms: the simulated value.
        lo_ms, hi_ms: the interval (see docs/advise.md, "Prediction intervals").
    """

    point_ms: float
    lo_ms: float
    hi_ms: float

    def holds(self, value_ms: float) -> bool:
        """Whether ``value_ms`` lies inside the interval (ends included)."""
        return self.lo_ms <= value_ms <= self.hi_ms


class TunePrediction(Record):
    """One candidate configuration as predicted.

    Attributes:
        window_us, max_batch_size, instances: the configuration.
        stable: the offered rate is below its capacity.
        utilisation: offered rate / capacity (the configuration's capacity at its max
            batch: its headroom, not the share of time an instance is busy; >= 1:
            unstable).
        p50_ms, p99_ms: predicted P50/P99 (``None`` when unstable).
        p50, p99: the same with their prediction intervals.
        throughput_queries_per_s: predicted completed requests per second at the rate.
        mean_batch: predicted requests per execution.
        capacity_queries_per_s: the most requests per second the configuration carries
            (``instances x max_b b / T_n(b)`` up to its max batch).
        contention_factor: T(b) at this instance count / T(b) at one instance.
        contention_source: ``"measured"`` (T(b) calibrated at this count),
            ``"interpolated"`` or ``"extrapolated"`` (the factor measured at the
            largest calibrated count, scaled by instance count to a count below or
            above it), ``"assumed"`` (no multi-instance run: the default factor) or
            ``"none"`` (one instance).
        extrapolated_above: the largest calibrated batch size when this configuration's
            max batch exceeds it (T(b) above it extrapolated along the fit's slope),
            else ``None``.
        feasible: meets the objective's constraints on the interval (see the objective).
    """

    match_fields: ClassVar[tuple[str, ...]] = ("window_us", "max_batch_size", "instances")

    window_us: float
    max_batch_size: int
    instances: int
    stable: bool
    utilisation: float
    p50_ms: float | None = None
    p99_ms: float | None = None
    p50: TuneInterval | None = None
    p99: TuneInterval | None = None
    throughput_queries_per_s: float | None = None
    mean_batch: float | None = None
    capacity_queries_per_s: float = 0.0
    contention_factor: float = 1.0
    contention_source: str = "none"
    extrapolated_above: int | None = None
    feasible: bool = False


class TuneMeasured(Record):
    """A configuration as measured on the live server.

    Attributes:
        p50_ms, p99_ms: client latency percentiles (from the scheduled send).
        throughput_queries_per_s: completed requests per second.
        mean_batch: the server's inferences / executions.
        requests: ok requests measured.
        run: index into ``tune.runs`` of the run measured, from 0 (the progress lines
            and the report number live runs from 1, one per repeat:
            :func:`live_run_labels`).
        p50_inside, p99_inside: whether each lies inside its predicted interval.
    """

    p50_ms: float
    p99_ms: float
    throughput_queries_per_s: float
    mean_batch: float
    requests: int
    run: int
    p50_inside: bool
    p99_inside: bool


class TuneChoice(Record):
    """A picked configuration: what was predicted, and what was measured (``None``
    when it was not measured, e.g. the runner-up, or an interrupted run).

    Attributes:
        window_us, max_batch_size, instances: the configuration.
        predicted: its prediction with intervals.
        measured: its measurement, if any.
        round: the confirmation round that picked it (1 = after the calibration).
        certified: whether a round's prediction interval placed it within the
            objective (its P99 upper end at most the P99 objective). ``False``: no
            configuration's interval did, and this one was measured because its point
            prediction did; its measurement met the objective.
    """

    match_fields: ClassVar[tuple[str, ...]] = ("window_us", "max_batch_size", "instances")

    window_us: float
    max_batch_size: int
    instances: int
    predicted: TunePrediction
    measured: TuneMeasured | None = None
    round: int = 1
    certified: bool = True


class TuneInstanceCalibration(Record):
    """T(b) at one instance count.

    Attributes:
        instances: the instance count.
        batch_sizes, t_ms: T(b) per calibrated batch size, ms per execution.
        contention_factor: T(b) here / T(b) at one instance (weighted median of the
            ratios at the batch sizes both hold; 1 at one instance).
        source: ``"measured"``, ``"interpolated"``, ``"extrapolated"`` or ``"assumed"`` (as
            :attr:`TunePrediction.contention_source`).
        runs: indices into ``tune.runs`` that calibrated it.
    """

    instances: int
    batch_sizes: list[int] = []
    t_ms: list[float] = []
    contention_factor: float = 1.0
    source: str = "measured"
    runs: list[int] = []


class TuneCalibration(Record):
    """What the live runs calibrated.

    Attributes:
        per_instances: T(b) per instance count searched.
        per_batch_overhead_ms: instance time per execution outside compute (fitted).
        request_delay_median_ms: median per-request delay outside the server's queue.
        drift_p50_rel, drift_p99_rel: run-to-run relative standard deviation of P50 and
            P99 from the repeated calibration run (a floor applied; see the interval
            formula).
        contention_per_instance: the fitted (or assumed) extra T(b) share per doubling
            of the instance count: ``T_n(b) = T_1(b) x (1 + k log2(n))``.
        contention_source: ``"measured"`` or ``"assumed"``.
        idle_slowdown: relative extra time of an execution on an instance idle for long
            (``1 + a (1 - exp(-g / tau))`` after ``g`` ms idle), >= 0; 0 when not fitted.
        idle_tau_ms: its time constant, ms.
        idle_source: ``"fitted"`` (from target-rate runs at two instance counts),
            ``"rejected"`` (the fit reached its upper bound without explaining the
            slower run: none applied), ``"contradicted"`` (the one-instance closed loop
            ran slower than the fitted busy T(b): none applied) or ``"none"``.
        largest_batch_measured: largest batch size with a T(b) point.
        device: ``"GPU"`` or ``"CPU"``: where the instances run (from instance_group).
        devices: how many devices the instances share (``gpus`` of ``KIND_GPU``; 1 on CPU).
    """

    per_instances: list[TuneInstanceCalibration] = []
    per_batch_overhead_ms: float = 0.0
    request_delay_median_ms: float = 0.0
    drift_p50_rel: float = 0.0
    drift_p99_rel: float = 0.0
    contention_per_instance: float = 0.0
    contention_source: str = "assumed"
    idle_slowdown: float = 0.0
    idle_tau_ms: float = 0.0
    idle_source: str = "none"
    largest_batch_measured: int = 1
    device: str = "CPU"
    devices: int = 1


class TuneResult(Record):
    """The whole ``trtcheck tune`` search.

    Attributes:
        url, model: the live server and model.
        arrival_rate_per_s: the target Poisson rate, req/s.
        slo_p99_ms: the P99 objective (ms) or ``None``.
        objective: the objective's name (``fewest-instances``, ``p99``, ``throughput``).
        objective_rule: the objective's rule in words (how it picks on the intervals).
        max_instances: largest instance count searched.
        max_batch_size: largest max batch searched.
        max_batch_source: ``"server"`` (the model's configured max batch) or ``"user"``.
        original_config: the model's configuration before the search (restored after).
        runs: every live run, in order, as ``serve --url`` records it (one
            configuration and one load each).
        run_purposes: what each run was for (``calibration``, ``repeat``, ``confirm``).
        calibration: the calibration (``None`` when it did not finish).
        predictions: every candidate as predicted in the last round (the pick's own
            ``predicted`` is its round's, ``pick.round``: after a measured run joined the
            calibration, the last round's prediction of the same configuration differs).
        pick: the chosen configuration with predicted and measured.
        runner_up: the objective's second choice (predicted).
        rounds: every confirmed pick, in order (the last is ``pick``).
        why: the reasons, in words.
        notes: assumptions and what could not be measured.
        live_runs: live runs used; wall_s: the search's wall time, s.
        restored: the original configuration was loaded again afterwards.
    """

    url: str
    model: str
    arrival_rate_per_s: float
    slo_p99_ms: float | None = None
    objective: str
    objective_rule: str = ""
    max_instances: int = 1
    max_batch_size: int = 1
    max_batch_source: str = "server"
    original_config: dict[str, Any] = {}
    runs: list[ServeRun] = []
    run_purposes: list[str] = []
    calibration: TuneCalibration | None = None
    predictions: list[TunePrediction] = []
    pick: TuneChoice | None = None
    runner_up: TunePrediction | None = None
    rounds: list[TuneChoice] = []
    why: list[str] = []
    notes: list[str] = []
    live_runs: int = 0
    wall_s: float = 0.0
    restored: bool = True
