"""Records of ``trtcheck advise``: inputs, formulas, simulated candidates, the decision
path, the recommendation and its ready-to-paste settings."""

from __future__ import annotations

from typing import ClassVar

from trtcheck.results.base import Record
from trtcheck.results.stats import Finding


class SimPrediction(Record):
    """What the serving simulator predicts for one configuration.

    Attributes:
        window_us: batching window (Triton ``max_queue_delay_microseconds``).
        max_batch_size: largest batch.
        instances: execution instances sharing one queue.
        arrival_rate_per_s: offered load, requests per second.
        stable: ``False`` when the offered load exceeds capacity (then the latency
            fields are ``None``: a queue that grows without bound has no percentiles).
        utilisation: offered load / capacity of the instances at ``max_batch_size``
            (``rho``; >= 1 is unstable).
        throughput_queries_per_s: requests completed per second: completed / (last
            completion - first arrival), the definition ``trtcheck serve`` measures
            (the drain at the end counts, so a short run reads slightly below the rate).
        mean_ms, p50_ms, p95_ms, p99_ms: request latency from arrival to response,
            including the per-request overhead.
        mean_batch: mean requests per execution (server side: requests / executions).
        max_batch: largest batch executed.
        mean_queue_len: time-averaged number of requests waiting (Little's law:
            total wait / span).
        max_queue_len: largest number waiting when a batch was dispatched.
        single_request_batch_share: share of executions that carried one request.
        requests: simulated requests counted (after the warm-up share).
        batches: executions simulated.
        dispatch_reasons: counts of the policy's reasons (``full``, ``window-expired``, ...).
        p50_interval_ms, p99_interval_ms: ``[lo, hi]`` prediction intervals of a what-if
            prediction (docs/advise.md, "Prediction intervals"); ``None``: not computed.
        contention_factor: T(b) multiplier applied for instances sharing a device when the
            instance count differs from the calibrated one (``None``: none applied).
        contention_source: where that factor comes from: ``"assumed"`` (the default,
            not measured), or as a tune search calibrated it (``"measured"``,
            ``"interpolated"``, ``"extrapolated"``; ``advise --from tune.json``).
    """

    #: What identifies a prediction across two results files: the gate pairs
    #: ``advice.candidates[*]`` with the baseline's by these and names each by them.
    match_fields: ClassVar[tuple[str, ...]] = ("window_us", "max_batch_size", "instances")

    window_us: float
    max_batch_size: int
    instances: int
    arrival_rate_per_s: float
    stable: bool
    utilisation: float
    throughput_queries_per_s: float | None = None
    mean_ms: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    mean_batch: float | None = None
    max_batch: int | None = None
    mean_queue_len: float | None = None
    max_queue_len: int | None = None
    single_request_batch_share: float | None = None
    requests: int = 0
    batches: int = 0
    dispatch_reasons: dict[str, int] = {}
    preferred_batch_sizes: list[int] = []
    p50_interval_ms: list[float] | None = None
    p99_interval_ms: list[float] | None = None
    contention_factor: float | None = None
    contention_source: str | None = None


class CurveFit(Record):
    """The batch-latency curve used and its linear fit ``T(b) = tau0 + alpha*b``."""

    source: str
    points_ms: dict[int, float]
    tau0_ms: float
    alpha_ms_per_sample: float
    r2: float | None = None
    max_rel_residual: float
    notes: list[str] = []


class AdviceInputs(Record):
    """What the advice was computed from (all given or measured numbers, with units).

    ``load`` is the load in ``serve --load`` syntax (``open:200:poisson``, ``burst:64``,
    ``closed:32:2000``); for a burst or closed loop ``arrival_rate_per_s`` is the rate at
    which requests reached the queue in the recommended configuration's simulation.
    ``objective`` is the name of the objective the recommendation was chosen by
    (:mod:`trtcheck.analyze.objectives`)."""

    arrival_rate_per_s: float
    arrival_process: str
    slo_p99_ms: float | None = None
    per_request_overhead_ms: float = 0.0
    per_batch_overhead_ms: float = 0.0
    per_item_overhead_ms: float = 0.0
    ingress_per_request_us: float = 0.0
    timer_slack_us: float = 0.0
    instances_searched: list[int] = []
    overheads_source: str = "given"
    load: str = ""
    device: str | None = None
    objective: str = "fewest-instances"


class DecisionNode(Record):
    """One question of the decision tree and the number that answered it.

    Attributes:
        step: the optimisation step (``thin-http``, ``replace-python-layer``,
            ``execution-contexts``, ``batching``, ``scale-out``) or ``check``.
        question: the question in words.
        value: the measured or given number that decided it.
        threshold: the threshold it was compared with.
        answer: ``yes`` or ``no``.
        conclusion: what follows, in one sentence with the numbers.
    """

    step: str
    question: str
    value: float | None = None
    threshold: float | None = None
    answer: str
    conclusion: str


class Formulas(Record):
    """The closed-form numbers (see :mod:`trtcheck.analyze.advice.queueing` for each source).

    They use the execution time the simulation used: ``s1_ms`` = S(1), the mean
    simulated instance time of a batch of 1 (T(1) with the measured spread, per-batch
    and per-item overheads, contention), ``s_tau0_ms`` its fixed part per execution,
    and the per-instance rate of the recommendation (``per_instance_rate_per_s``):
    ``queue_formation_ratio`` = rate per instance x S(1), ``waiting_pays_index`` = rate
    per instance x tau0 of S; ``break_even_window_us_at_max_batch`` is the longest window
    (microseconds) that still pays at the largest batch
    (:func:`trtcheck.analyze.advice.queueing.max_paying_window_ms`)."""

    queue_formation_ratio: float
    waiting_pays_index: float
    break_even_window_us_at_max_batch: float
    single_request_batch_share_at_window: float | None = None
    natural_batch_no_wait: float | None = None
    min_batch_to_keep_up_one_instance: int | None = None
    capacity_per_instance_per_s: float
    capacity_batch_size: int
    instances_needed_min: int
    serving_overhead_to_inference_ratio: float
    per_instance_rate_per_s: float | None = None
    s1_ms: float | None = None
    s_tau0_ms: float | None = None


class ReplicaChoice(Record):
    """One configuration chosen on bootstrap replicas and the share of replicas that
    chose it."""

    window_us: float
    max_batch_size: int
    instances: int
    share: float


class AdviceStability(Record):
    """How stable the recommendation is under the measurement noise
    (:mod:`trtcheck.analyze.advice.advise_noise`).

    Attributes:
        status: ``stable`` (the recommendation holds in at least 80% of replicas),
            ``likely`` (60-80%) or ``cannot-tell`` (below 60%: the measurements cannot
            decide; see ``remeasure``).
        replicas: bootstrap replicas rerun.
        share: share of replicas in which the recommendation is as good as the
            replica's own choice (P99 not worse by more than the material gain), 0-1.
        chosen_share: share of replicas whose own choice is exactly the recommendation.
        kind_share: share whose choice is of the same kind (no batching, batch without
            waiting, window).
        choices: every configuration chosen on some replica, most frequent first.
        p50_ms_range, p99_ms_range: 10th and 90th percentile of the recommendation's
            simulated P50/P99 over the replicas, ms (empty: no replica).
        resampled: what each replica draws again, in words.
        remeasure: what to measure again to decide (``cannot-tell`` only).
        tie_break: the tie-break rule in words.
    """

    status: str
    replicas: int
    share: float
    chosen_share: float = 0.0
    kind_share: float
    choices: list[ReplicaChoice] = []
    p50_ms_range: list[float] = []
    p99_ms_range: list[float] = []
    resampled: list[str] = []
    remeasure: list[str] = []
    tie_break: str = ""


class Recommendation(Record):
    """The advice.

    Attributes:
        kind: ``no-batching``, ``batch-without-waiting``, ``window`` or ``add-instances``
            (``add-instances`` when one instance cannot keep up or meet the objective;
            its window and batch are in ``prediction``).
        summary: one sentence.
        prediction: simulated numbers for the recommended configuration.
        runner_up: the best configuration of another kind, for comparison.
        runner_up_kind: its kind.
        stability: how stable the choice is under measurement noise (``None``: not
            assessed).
        interval_rule: the rule in words when the choice was made on the P99 prediction
            intervals (a live calibration: the objective ranks by the interval's upper
            end, as ``trtcheck tune`` does; no bootstrap replicas then); ``None``: chosen
            on the point prediction.
        certified: with ``interval_rule`` and a P99 objective, whether the
            recommendation's P99 interval upper end is within it (``False``: recommended
            uncertified, with the ``p99-interval-above-objective`` warning); ``None``
            otherwise.
    """

    kind: str
    summary: str
    prediction: SimPrediction
    runner_up: SimPrediction | None = None
    runner_up_kind: str | None = None
    stability: AdviceStability | None = None
    interval_rule: str | None = None
    certified: bool | None = None


class ExportedSettings(Record):
    """The recommendation as settings for common servers (text to paste)."""

    triton_config_pbtxt: str
    ray_serve_python: str
    torchserve_config: str


class ServePrediction(Record):
    """One measured open-loop serving configuration next to what the advice's service
    model predicts for it (same window, max batch, instances and arrival times).

    Attributes:
        config: ``"W=2 ms B=8"``; load: the load spec label (``"open:300:poisson:150"``).
        window_us, max_batch_size, instances: the configuration (window in microseconds,
            Triton ``max_queue_delay_microseconds``).
        measured_*: the serving measurement (medians over repeats).
        predicted_*: the simulation; ``None`` when the simulated system is unstable at
            that rate (a queue without bound has no percentiles).
    """

    #: What identifies a prediction across two results files (as for serve
    #: configurations): the gate pairs ``advice.serve_predictions[*]`` by these.
    match_fields: ClassVar[tuple[str, ...]] = ("load", "window_us", "max_batch_size",
                                               "instances")

    config: str
    load: str
    window_us: float
    max_batch_size: int
    instances: int = 1
    measured_throughput_queries_per_s: float
    predicted_throughput_queries_per_s: float | None = None
    measured_mean_batch: float
    predicted_mean_batch: float | None = None
    measured_p50_ms: float | None = None
    predicted_p50_ms: float | None = None
    measured_p99_ms: float | None = None
    predicted_p99_ms: float | None = None


class Advice(Record):
    """Everything ``trtcheck advise`` concluded (the ``advice`` section of results.json).

    ``what_if`` holds the predictions of the configurations asked for with
    ``--window-ms/--max-batch/--instances/--preferred-batch``, in the order given
    (``stable`` false: the load exceeds that configuration's capacity)."""

    inputs: AdviceInputs
    curve: CurveFit
    formulas: Formulas
    path: list[DecisionNode]
    recommendation: Recommendation
    candidates: list[SimPrediction] = []
    pitfalls: list[Finding] = []
    export: ExportedSettings | None = None
    gpus_implied: int | None = None
    simulated_requests: int = 0
    sweep_seconds: float | None = None
    serve_predictions: list[ServePrediction] = []
    what_if: list[SimPrediction] = []
