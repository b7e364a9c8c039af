"""Records of a serving measurement: embedded dynamic batcher under generated load.

One :class:`ServeRun` holds a sweep of configurations (window x max batch size x load
shape); each :class:`ServeConfigResult` holds its repeats with raw per-request data, and
headline numbers that are the **median over repeats** of each metric (3 repeats per configuration by default).

Waterfall parts (per request, ms; see docs/serving.md):

=================  ==========================================================================
``send_lag_ms``    open loop: actual send - scheduled send (0 for burst/closed)
``http_ms``        HTTP front only: client send -> server handler, + handler reply -> client
``front_ms``       handler/send -> accepted in the batcher queue (submission, the serial
                   per-request overhead stage when configured, back-pressure waits)
``queue_wait_ms``  queued while every execution instance was busy
``window_wait_ms`` an instance was free and the policy waited for the batch to fill
``assembly_ms``    stacking/copying the requests into one batch input
``executor_hop_ms`` thread hand-off of a sync batch function, there and back
``compute_ms``     the batch function itself
``result_dispatch_ms`` batch output back on the loop -> this request's future resolved
=================  ==========================================================================

``residual_ms`` = end-to-end latency - sum of the parts: time no part covers (the
event-loop turn between a future being resolved and the waiting client running again,
and with HTTP the handler's reply serialisation); it is reported, not hidden.

A **live target** (``trtcheck serve --url``: a Triton or other KServe v2 server) has no
per-request server timestamps. Its repeats keep the client's per-request data
(``latencies_ms``, ``send_lag_ms``) and, from the server's statistics read before and
after the run (:class:`TritonStatsDelta`), the server's own counts and times. Its
waterfall (:class:`LiveSplit`) splits the **mean** request latency into client and
network, server queue and server compute; ``counters`` hold the server's counts
(``inference_count``/``execution_count`` are Triton's), ``batch_sizes`` is empty (the
server does not say which batch a request ran in) and ``batch_size_histogram`` counts
executions per batch size from Triton's ``batch_stats``. In its settings,
``max_queue_size`` is Triton's ``default_queue_policy.max_queue_size`` (0: unbounded) and
``http`` is false (the embedded HTTP front was not used; ``live.protocol`` says how the
requests went).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import model_validator

from trtcheck.results import consistency as C
from trtcheck.results.base import Record
from trtcheck.results.bench import BackendInfo
from trtcheck.results.load_nodes import DistributedLoad
from trtcheck.results.stats import Finding, LatencyStats

WATERFALL_PARTS: tuple[str, ...] = (
    "send_lag_ms", "http_ms", "front_ms", "queue_wait_ms", "window_wait_ms", "assembly_ms",
    "executor_hop_ms", "compute_ms", "result_dispatch_ms",
)
"""Waterfall part names in the order a request passes through them."""


class LoadSpec(Record):
    """A load shape as run.

    Attributes:
        label: the spec text (``"burst:64"``, ``"closed:32"``, ``"open:3000"``, ``"trace:f.txt"``).
        kind: ``"burst"``, ``"closed"`` or ``"open"``.
        count: requests planned (closed loops without a count: the time bound decides).
        concurrency: closed-loop clients (0 otherwise).
        rate_per_s: open-loop target rate (0 otherwise).
        arrival: ``"poisson"``, ``"constant"``, ``"trace"`` or ``""``.
    """

    label: str
    kind: str
    count: int
    concurrency: int = 0
    rate_per_s: float = 0.0
    arrival: str = ""


class ServeSettings(Record):
    """Settings shared by every configuration of a sweep.

    Attributes:
        windows_us: batching windows swept, microseconds (Triton
            ``max_queue_delay_microseconds``).
        max_batch_sizes: ``max_batch_size`` values swept.
        loads: load specs swept.
        repeats: runs per configuration (headline = median over them).
        preferred_batch_sizes: Triton ``preferred_batch_size`` list (empty: none).
        instances: concurrent execution instances.
        max_queue_size: batcher queue bound; ``on_full``: ``"reject"`` or ``"wait"``.
        per_request_overhead_ms: serial front-stage cost per request (0: none).
        http: whether the loopback HTTP front was used.
        max_duration_s: sending bound per run; drain_timeout_s: finishing bound after it.
        late_threshold_ms: a send later than this after its schedule counts as late.
        warmup_requests: requests sent and discarded before each configuration.
        seed: seed of Poisson arrivals (repeat r uses seed + r).
        event_loop: ``"asyncio"`` or ``"uvloop"``.
        payload: what one request carried, in words (e.g. ``"x float32 [1, 3, 224, 224]"``).
    """

    windows_us: list[float]
    max_batch_sizes: list[int]
    loads: list[str]
    repeats: int
    preferred_batch_sizes: list[int] = []
    instances: int = 1
    max_queue_size: int
    on_full: str = "reject"
    per_request_overhead_ms: float = 0.0
    http: bool = False
    max_duration_s: float
    drain_timeout_s: float
    late_threshold_ms: float = 1.0
    warmup_requests: int = 0
    seed: int = 0
    event_loop: str = "asyncio"
    payload: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> ServeSettings:
        """Batch sizes in range, at least one repeat and one instance."""
        C.check_batch_sizes(self.max_batch_sizes, "max_batch_sizes")
        C.check_batch_sizes(self.preferred_batch_sizes, "preferred_batch_sizes")
        C.check_times_ms(self.windows_us, "windows_us", unit="us")
        for name, v in (("repeats", self.repeats), ("instances", self.instances)):
            if not 1 <= v <= C.MAX_COUNT:
                raise ValueError(f"{name} is {v}; it must be 1..{C.MAX_COUNT}")
        return self


class ServeCounters(Record):
    """Server-side batcher counters of one run (counted by the server, not inferred from
    client-side responses, which come back one per request).

    ``avg_batch_size`` = ``inference_count / execution_count`` (Triton's definition).
    Histogram keys are batch sizes as strings (JSON object keys).
    """

    submitted: int
    accepted: int
    rejected: int
    execution_count: int
    inference_count: int
    avg_batch_size: float
    batch_size_histogram: dict[str, int]
    completed: int
    failed: int
    cancelled_queued: int
    cancelled_in_flight: int
    batch_errors: int
    decision_reasons: dict[str, int] = {}


class TritonDuration(Record):
    """A Triton ``StatisticDuration`` delta over one run: how many, and their total time.

    Attributes:
        count: events counted (requests or executions, per field; see Triton's
            statistics extension).
        total_ms: their summed duration, ms (Triton reports ns).
    """

    count: int
    total_ms: float

    @property
    def mean_ms(self) -> float | None:
        """``total_ms / count``, or ``None`` when nothing was counted."""
        return self.total_ms / self.count if self.count else None


class TritonBatchStat(Record):
    """Executions of one batch size during a run (Triton's ``batch_stats`` delta).

    Times are totals over ``execution_count`` executions, in ms; per execution, the
    model's T(b) as the server's batcher formed the batches is ``compute_infer_ms /
    execution_count``.
    """

    batch_size: int
    execution_count: int
    compute_input_ms: float
    compute_infer_ms: float
    compute_output_ms: float
    first_since_load: bool = False
    """The model had not executed this batch size since it was loaded, before this run
    (its first executions, and any one-time cost per new shape, fall in this run)."""

    @property
    def mean_compute_ms(self) -> float:
        """Mean server compute time of one execution (input + infer + output), ms."""
        return ((self.compute_input_ms + self.compute_infer_ms + self.compute_output_ms)
                / max(1, self.execution_count))


#: A batch size new to the model runs cold when its mean compute time exceeds the most a
#: warm T(b) can be (:func:`cold_batch_sizes`) by this factor.
COLD_RATIO = 1.5


def cold_batch_sizes(stats: list[TritonBatchStat]) -> list[tuple[int, float]]:
    """Batch sizes that ran for the first time since the model was loaded and paid a
    one-time cost (an eager framework's or a cuDNN algorithm search per new shape):
    ``[(batch size, estimated one-time cost ms)]``, ascending.

    The bound: from the sizes the model had run before the run (warm), a warm T(b) is
    at most the mean time of any warm larger size (T(b) does not decrease with b) and at
    most ``T(c) * b / c`` for any warm smaller size ``c`` (batching never costs more per
    item). A first-time size whose mean compute time is over :data:`COLD_RATIO` times
    that bound is cold; its one-time cost is ``executions * (mean - bound)``. Without a
    warm size there is no bound and nothing is named.

    Args:
        stats: one run's ``batch_stats`` (:attr:`TritonStatsDelta.batch_stats`).
    """
    warm = [(s.batch_size, s.mean_compute_ms) for s in stats
            if not s.first_since_load and s.execution_count > 0 and s.batch_size >= 1]
    if not warm:
        return []
    out: list[tuple[int, float]] = []
    for s in stats:
        if not s.first_since_load or s.execution_count <= 0 or s.batch_size < 1:
            continue
        b = s.batch_size
        bound = min([m for c, m in warm if c >= b]
                    + [m * b / c for c, m in warm if c < b])
        if bound > 0 and s.mean_compute_ms > COLD_RATIO * bound:
            out.append((b, s.execution_count * (s.mean_compute_ms - bound)))
    return sorted(out)


class TritonStatsDelta(Record):
    """The server's own statistics of one run: ``GET /v2/models/NAME/stats`` after the
    run minus before it (Triton's statistics extension of KServe v2).

    Attributes:
        model_name, model_version: the model the statistics belong to.
        inference_count: requests' samples inferred (Triton counts a batch-1 request as 1).
        execution_count: model executions (batches).
        avg_batch_size: ``inference_count / execution_count`` (0 with no execution), the
            mean batch the server formed.
        success, fail: requests and their end-to-end server time (received -> response).
        queue: requests and their time waiting in the scheduler queue.
        compute_input, compute_infer, compute_output: requests and the time of the
            executions they were part of (a request's share is the whole execution).
        batch_stats: per executed batch size, ascending.
    """

    model_name: str
    model_version: str = ""
    inference_count: int
    execution_count: int
    avg_batch_size: float
    success: TritonDuration
    fail: TritonDuration
    queue: TritonDuration
    compute_input: TritonDuration
    compute_infer: TritonDuration
    compute_output: TritonDuration
    batch_stats: list[TritonBatchStat] = []


class LiveSplit(Record):
    """Mean request latency of a live run split into client + network, server queue and
    server compute, ms.

    ``server_queue_mean_ms`` and ``server_compute_mean_ms`` (compute input + infer +
    output) are Triton's per-request means (:class:`TritonStatsDelta`);
    ``server_other_mean_ms`` is the rest of the server's request time (``success`` mean
    - queue - compute: protocol handling, response); ``client_network_mean_ms`` = the
    client's mean latency from the actual send - the server's mean request time (client
    encoding/decoding, network, the client's event loop). Open loop: the client mean is
    from the send; ``send_lag_mean_ms`` is the mean delay between schedule and send.
    """

    client_mean_ms: float
    send_lag_mean_ms: float = 0.0
    client_network_mean_ms: float
    server_request_mean_ms: float
    server_queue_mean_ms: float
    server_compute_mean_ms: float
    server_other_mean_ms: float


class LiveTarget(Record):
    """The live server a run measured (``trtcheck serve --url``).

    Attributes:
        url: as given (``http://HOST:PORT`` or ``grpc://HOST:PORT``).
        protocol: ``"http"`` or ``"grpc"`` (KServe v2).
        model_name, model_version: the model (version ``""``: the server's choice).
        server_name, server_version: from the server's metadata (``GET /v2``).
        server_extensions: protocol extensions the server announces.
        model_platform: the model's platform/backend (e.g. ``"python"``,
            ``"tensorrt_plan"``, ``"onnxruntime_onnx"``).
        model_metadata: ``GET /v2/models/NAME[/versions/V]`` as JSON (inputs, outputs).
        model_config_json: ``GET /v2/models/NAME/config`` as JSON (Triton's model config) as
            it was before the run; per-configuration overrides are on each
            :class:`ServeConfigResult`.
        explicit_model_control: whether configurations were loaded through the
            model-repository API (a sweep).
        client_processes: load generator processes (with a Ray cluster: per actor).
        ray_address: the Ray cluster the load ran from (``--ray``), or ``None``.
        ray_actors: Ray actors the load was split across (0 without Ray).
        command_stats: without a sweep, the server's statistics delta over the whole
            command (warm-up requests included), from its first read to its last.
    """

    url: str
    protocol: str
    model_name: str
    model_version: str = ""
    server_name: str = ""
    server_version: str = ""
    server_extensions: list[str] = []
    model_platform: str = ""
    model_metadata: dict[str, Any] = {}
    model_config_json: dict[str, Any] = {}
    explicit_model_control: bool = False
    client_processes: int = 1
    ray_address: str | None = None
    ray_actors: int = 0
    command_stats: TritonStatsDelta | None = None

    @property
    def model_max_batch_size(self) -> int:
        """The model's own ``max_batch_size`` (its configuration before a sweep loaded
        others: what the server allows it; 0 when none is recorded or it does not
        batch)."""
        try:
            return int(str(self.model_config_json.get("max_batch_size", 0) or 0))
        except ValueError:
            return 0


class WaterfallPart(Record):
    """One part of the per-request latency waterfall (statistics over ok requests)."""

    name: str
    median_ms: float
    p99_ms: float
    mean_ms: float


class ServeRepeat(Record):
    """One run of one configuration, with its raw per-request data.

    Attributes:
        repeat: 0-based repeat number.
        latencies_ms: end-to-end latency of every ``ok`` request, in request order
            (open loop: from its scheduled send; otherwise from its actual send).
        parts_ms: waterfall parts of the same requests, aligned with ``latencies_ms``
            (names in :data:`WATERFALL_PARTS`; parts that do not apply are absent).
        batch_sizes: size of the batch each of those requests ran in.
        enqueue_offsets_ms: when each of those requests entered the batcher queue, in ms
            after the run's first send (the arrival process the batcher saw; input for
            validating a batching simulator against this measurement).
        send_lag_ms: open loop: lag of every sent request (empty otherwise).
        outcomes: ``ok``/``error``/``rejected``/``timeout``/``not_sent`` -> count.
        errors: exception type name -> count.
        latency: statistics of ``latencies_ms`` (``None`` when no request succeeded).
        duration_s: first send (or schedule) -> last completion.
        throughput_queries_per_s: ok requests / ``duration_s``.
        mean_batch_size: server counters' ``avg_batch_size``.
        max_batch_size: largest batch executed.
        waterfall: median/p99/mean of each part.
        residual_median_ms, residual_p99_ms: statistics of latency - sum of parts.
        late_send_share: open loop: share of sends later than the late threshold.
        send_lag_p50_ms, send_lag_p99_ms: open loop send-lag percentiles.
        achieved_send_rate_per_s: open loop: (sent - 1) / (last send - first send).
        counters: server-side counters.
        ok_count: ok requests (every statistic above is computed over all of them).
        raw_stride: the per-request lists keep every ``raw_stride``-th ok request (1:
            all), in request order. Beyond :data:`trtcheck.measure.serving.serve.MAX_RAW_REQUESTS`
            ok requests per repeat the stride doubles each time the kept requests fill
            up (a power of two), to bound memory and file size; ``latency``,
            ``waterfall`` and the send-lag statistics still describe every request
            (their percentiles then from a histogram within 0.05 %:
            :mod:`trtcheck.measure.serving.request_record`).
        server_stats: live target: the server's statistics delta of this run.
        live_split: live target: the mean latency split (client+network, queue, compute).
        distributed: live target with ``--ray``: every actor's share (node, sends, lag,
            clock offset, lost or not) and the totals.
    """

    repeat: int
    latencies_ms: list[float]
    parts_ms: dict[str, list[float]]
    batch_sizes: list[int]
    enqueue_offsets_ms: list[float] = []
    send_lag_ms: list[float] = []
    outcomes: dict[str, int]
    errors: dict[str, int] = {}
    latency: LatencyStats | None
    duration_s: float
    throughput_queries_per_s: float
    mean_batch_size: float
    max_batch_size: int
    waterfall: list[WaterfallPart] = []
    residual_median_ms: float | None = None
    residual_p99_ms: float | None = None
    late_send_share: float | None = None
    send_lag_p50_ms: float | None = None
    send_lag_p99_ms: float | None = None
    achieved_send_rate_per_s: float | None = None
    counters: ServeCounters
    ok_count: int | None = None
    raw_stride: int = 1
    server_stats: TritonStatsDelta | None = None
    live_split: LiveSplit | None = None
    distributed: DistributedLoad | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ServeRepeat:
        """Per-request arrays finite, >= 0 and aligned with ``latencies_ms``; batch sizes
        in range (:mod:`trtcheck.results.consistency`)."""
        C.check_times_ms(self.latencies_ms, "latencies_ms")
        for name, values in self.parts_ms.items():
            C.check_times_ms(values, f"parts_ms.{name}")
        aligned: dict[str, Sequence[object]] = {
            f"parts_ms.{k}": v for k, v in self.parts_ms.items()}
        if self.server_stats is None or self.batch_sizes:
            # a live server does not say which batch a request ran in: empty there
            aligned["batch_sizes"] = self.batch_sizes
        C.check_aligned(self.latencies_ms, aligned, "latencies_ms")
        C.check_aligned(self.latencies_ms, {"enqueue_offsets_ms": self.enqueue_offsets_ms},
                        "latencies_ms", allow_empty=True)
        C.check_batch_sizes(self.batch_sizes, "batch_sizes")
        if self.max_batch_size:  # 0 when no request succeeded
            C.check_batch_size(self.max_batch_size, "max_batch_size")
        return self


class ServeConfigResult(Record):
    """One configuration (window, max batch, load) with its repeats.

    ``window_us`` is the batching window in microseconds (Triton
    ``max_queue_delay_microseconds``).
    Headline fields are the median over repeats of each metric separately (not the
    metrics of one repeat); ``ok_share`` is ok requests / requests sent (requests the time bound
    kept from being sent are ``not_sent`` in each repeat's outcomes, not failures);
    ``median_repeat`` is the repeat whose throughput is the median, whose
    waterfall the report shows. A live target's sweep records the model config the
    server ran this configuration with in ``server_model_config`` (Triton's config JSON)
    and its ``instances`` and ``preferred_batch_sizes`` (``None``: as in the settings).

    ``validity`` marks a configuration whose numbers cannot certify a budget:
    ``generator-limited`` (error: the open-loop sender fell behind its schedule, so the
    load generator, not the server, shaped the run), ``unstable`` (warning: throughput
    varied across repeats). The gate refuses to pass a budget on a marked configuration
    (docs/gate.md).
    """

    #: The fields that identify a configuration across two results files (the same key
    #: as ``trtcheck compare``): the gate pairs ``serve.configs[*]`` of a results file and
    #: its baseline by these, and names a configuration by them
    #: (``serve.configs[load.label=open:200,window_us=2000,max_batch_size=32]``);
    #: ``instances`` only where recorded.
    match_fields: ClassVar[tuple[str, ...]] = ("load.label", "window_us", "max_batch_size",
                                               "instances")

    window_us: float
    max_batch_size: int
    load: LoadSpec
    repeats: list[ServeRepeat]
    median_repeat: int
    throughput_queries_per_s: float
    mean_batch_size: float
    max_batch_size_seen: int
    p50_ms: float | None
    p99_ms: float | None
    ok_share: float
    late_send_share: float | None = None
    send_lag_p99_ms: float | None = None
    warnings: list[Finding] = []
    validity: list[Finding] = []
    server_model_config: dict[str, Any] | None = None
    instances: int | None = None
    preferred_batch_sizes: list[int] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ServeConfigResult:
        """At least one repeat, ``median_repeat`` one of them, batch sizes in range."""
        if not self.repeats:
            raise ValueError("a configuration has no repeats")
        if not 0 <= self.median_repeat < len(self.repeats):
            raise ValueError(f"median_repeat is {self.median_repeat} but there are "
                             f"{len(self.repeats)} repeat(s)")
        C.check_batch_size(self.max_batch_size, "max_batch_size")
        return self

    @property
    def key(self) -> tuple[str, float, int]:
        """``(load label, window_us, max_batch_size)``."""
        return (self.load.label, self.window_us, self.max_batch_size)


class ServeRun(Record):
    """A serving sweep of one backend.

    Attributes:
        label: identifies the run (e.g. ``"onnxruntime"`` or ``"synthetic"``).
        model_path: the model file, or a description of the callable/synthetic target.
        backend: which runtime executed the batches.
        settings: sweep settings.
        configs: one entry per (load, window, max batch), in sweep order.
        warnings: run-level findings (e.g. a slow event loop, timed-out requests).
        incomplete: why the sweep stopped early (SIGINT/SIGTERM: the configurations
            finished are kept, the one running is dropped), or ``None``.
        live: the live server measured (``trtcheck serve --url``); ``None`` for the
            embedded batcher.

    A live run broken by a server fault (the server stopped answering or restarted, the
    model was unloaded or loaded again by someone else, an answer failed its check) keeps
    the configurations finished before it; ``incomplete`` then reads ``"invalid: ..."``
    (which configuration broke and what happened, one line) and ``warnings`` holds a
    ``server-fault`` finding (severity ``error``) with the same reason
    (:func:`trtcheck.measure.serving.live.live_faults.run_fault` reads it back).
    """

    label: str
    model_path: str
    backend: BackendInfo
    settings: ServeSettings
    configs: list[ServeConfigResult]
    warnings: list[Finding] = []
    incomplete: str | None = None
    live: LiveTarget | None = None

    def config(self, load: str, window_us: float, max_batch_size: int) -> ServeConfigResult | None:
        """The configuration with these keys (window in microseconds), or ``None``."""
        for c in self.configs:
            if c.key == (load, float(window_us), int(max_batch_size)):
                return c
        return None
