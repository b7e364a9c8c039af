"""Typed inputs of the section templates (view models), one frozen dataclass per block.

Each report section (``trtcheck/report/sec_*.py``) turns the results model into one of
the ``*View`` classes here and renders ``templates/sections/<id>.html.j2`` and
``<id>.md.j2`` with it as ``v``. A template reads only attributes these classes
declare; the Jinja2 environment uses ``StrictUndefined``
(:func:`trtcheck.report.templating.environment`), so a template asking for an attribute
a view lacks fails instead of rendering an empty cell.

Values are the results' values, not rounded or formatted: the templates format numbers
with the ``num`` filter (an ``int`` prints with thousands separators, a ``float`` with
fixed digits), so a field keeps the type the results hold. Text fields that the section
builds (joined shapes, sentences) are ``str``. ``None`` shows as ``-``. Every quantity
carries its unit in its name (``_ms``, ``_pct`` = percent, ``_per_s``).

Findings are shown by the shared macros of ``templates/macros/findings.html.j2`` and
``findings.md.j2``: a field of type :class:`~trtcheck.results.Finding` or
:class:`~trtcheck.report.findings_view.FindingGroup` is what those macros read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trtcheck.report.charts import Chart
from trtcheck.report.findings_view import FindingGroup
from trtcheck.report.sections import Section
from trtcheck.report.verdict import VerdictView
from trtcheck.results import BackendInfo, Environment, Finding, Results
from trtcheck.results.advice import Advice
from trtcheck.results.imported import ImportedRun
from trtcheck.results.precision import Localization, PrecisionTolerance

# ----------------------------------------------------------------------------- report


@dataclass(frozen=True)
class ReportPageView:
    """The whole report page (``report.html.j2`` and ``report.md.j2``; each field is a
    top-level name there).

    Attributes:
        title: the page title (``trtcheck report: <model file>``).
        schema_version: the results schema version shown in the header.
        results: the results (tool version, creation time, host, ``incomplete``).
        sections: the rendered sections, in display order.
        verdict: the verdict block, ``None`` when the results hold no verdict.
    """

    title: str
    schema_version: str
    results: Results
    sections: list[Section]
    verdict: VerdictView | None


# ---------------------------------------------------------------------------- summary


@dataclass(frozen=True)
class HeadlineRow:
    """One bench run in the summary table: its first batch size and its best one.

    Attributes:
        label: run label.
        where: ``"<backend> <version> on <device>"``.
        first_batch_size: smallest batch size measured.
        first_median_ms, first_p99_ms: latency per execution at that batch size (ms).
        best_batch_size: batch size with the highest samples/s.
        best_samples_per_s: that throughput (samples/s).
        best_gain_vs_batch1: samples/s at the best batch size over samples/s at batch 1
            (``None`` without batch 1).
    """

    label: str
    where: str
    first_batch_size: int
    first_median_ms: float
    first_p99_ms: float
    best_batch_size: int
    best_samples_per_s: float
    best_gain_vs_batch1: float | None


@dataclass(frozen=True)
class SummaryView:
    """The summary section: headline numbers, how many findings, where it ran.

    Attributes:
        env: the environment record of the results.
        gpus: the GPUs with their driver, joined (``"none visible"`` without one).
        packages: ``(package, version)`` pairs, sorted by name.
        headlines: one row per bench run that measured a batch.
        finding_sentence: ``"1 error, 9 warnings and 2 notes in this report."``.
        command: the command line that made the results, joined with spaces.
    """

    env: Environment
    gpus: str
    packages: list[tuple[str, str]]
    headlines: list[HeadlineRow]
    finding_sentence: str
    command: str


# ------------------------------------------------------------------------- inspection


@dataclass(frozen=True)
class TensorRow:
    """A model input or output: name, dtype (ONNX name, e.g. ``float32``) and shape
    (``[batch, 3, 224, 224]``; ``?`` for an unnamed dynamic axis)."""

    name: str
    dtype: str
    shape: str


@dataclass(frozen=True)
class DynamicDimRow:
    """One dynamic axis: the tensor, ``input`` or ``output``, the axis index (as text)
    and the dim name (``(unnamed)`` without one)."""

    tensor: str
    kind: str
    axis: str
    name: str


@dataclass(frozen=True)
class OpMacsRow:
    """Multiply-accumulates of one op type: ``macs`` in SI form (``1.8 GMACs``) and its
    share of the total (``"42.0%"``)."""

    op: str
    macs: str
    share: str


@dataclass(frozen=True)
class ComputeView:
    """The compute estimate, formatted.

    Attributes:
        macs: total multiply-accumulates in SI form (``1.8 GMACs``).
        macs_exact: the same with thousands separators.
        flops: ``2 x MACs`` in SI form.
        at: the input shapes it was counted at (``x: 1x3x224x224``).
        by_op: MACs per op type.
        counted_nodes: nodes counted (as text).
        unresolved_nodes: nodes with unknown shapes left out.
        method: how it was counted, in words.
    """

    macs: str
    macs_exact: str
    flops: str
    at: str
    by_op: list[OpMacsRow]
    counted_nodes: str
    unresolved_nodes: int
    method: str


@dataclass(frozen=True)
class OpCountRow:
    """Nodes of one op type: the count (as text) and the share of all nodes
    (``"12.5%"``)."""

    op: str
    count: str
    share: str


@dataclass(frozen=True)
class InspectionView:
    """The ONNX model inspection section.

    Attributes:
        facts: ``(fact, value)`` pairs (file, size, SHA-256, opsets, parameters, ...).
        inputs, outputs: the model's tensors.
        dynamic: every dynamic axis of the inputs and outputs.
        compute: the compute estimate, ``None`` when shapes are unknown.
        ops: the most frequent op types (at most
            :data:`trtcheck.report.sec_inspection.TOP_OPS_TABLE`).
        more_ops: op types left out of ``ops``.
        lints: the model's lints.
    """

    facts: list[tuple[str, str]]
    inputs: list[TensorRow]
    outputs: list[TensorRow]
    dynamic: list[DynamicDimRow]
    compute: ComputeView | None
    ops: list[OpCountRow]
    more_ops: int
    lints: list[Finding]


# ------------------------------------------------------------------------------ bench


@dataclass(frozen=True)
class BenchRow:
    """Latency statistics and throughput at one batch size.

    Attributes:
        batch_size: samples per execution.
        median_ms, mean_ms, p90_ms, p95_ms, p99_ms, min_ms, max_ms: latency per
            execution (ms; percentiles by linear interpolation).
        mad_ms, iqr_ms: median absolute deviation and interquartile range (ms).
        cv_pct: coefficient of variation (standard deviation / mean), percent.
        queries_per_s: executions per second (1000 / median ms).
        samples_per_s: ``batch_size x queries_per_s``.
        gain_vs_batch1: samples/s over samples/s at batch 1 (``None`` without batch 1).
        scaling_efficiency: ``gain_vs_batch1 / batch_size``.
        sample_count: timed executions.
        median_pm_pct: half the width of the median's 95% interval over the median,
            percent (``None`` below 6 samples): how well the median is known.
    """

    batch_size: int
    median_ms: float
    mean_ms: float
    p90_ms: float
    p95_ms: float
    p99_ms: float
    min_ms: float
    max_ms: float
    mad_ms: float
    iqr_ms: float
    cv_pct: float
    queries_per_s: float
    samples_per_s: float
    gain_vs_batch1: float | None
    scaling_efficiency: float | None
    sample_count: int
    median_pm_pct: float | None = None


@dataclass(frozen=True)
class ComponentRow:
    """One timed part of an execution at one batch size (``part`` is the component
    key, e.g. ``gpu_compute_ms``): median and p99 in ms, and how many were timed."""

    batch_size: int
    part: str
    median_ms: float
    p99_ms: float
    sample_count: int


@dataclass(frozen=True)
class BenchRunView:
    """One bench run.

    Attributes:
        label: run label.
        model_path: the model file as given.
        backend: the backend record (name, version, device, precision).
        providers: execution providers, joined (``-`` without one).
        stopping_rule: the warm-up and stopping rule, in words.
        rows: one row per batch size.
        components: timed parts per batch size (empty when none were timed).
        warnings: warnings and errors, grouped per code.
        infos: notes, grouped per code.
        failed: the batch sizes that could not run, one line each (batch, why, message).
    """

    label: str
    model_path: str
    backend: BackendInfo
    providers: str
    stopping_rule: str
    rows: list[BenchRow]
    components: list[ComponentRow]
    warnings: list[FindingGroup]
    infos: list[FindingGroup]
    failed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class BenchView:
    """The bench section: one entry per run."""

    runs: list[BenchRunView]


# ----------------------------------------------------------------------------- engine


@dataclass(frozen=True)
class IoTensorRow:
    """An engine I/O tensor: name, mode (``INPUT``/``OUTPUT``), shape (``1x3x224x224``,
    ``?`` for a dynamic axis), dtype and format; ``-`` where unknown."""

    name: str
    mode: str
    shape: str
    dtype: str
    format: str


@dataclass(frozen=True)
class ProfileRow:
    """The min/opt/max shapes of one input in one optimization profile."""

    index: int
    input: str
    min: str
    opt: str
    max: str


@dataclass(frozen=True)
class LayerRow:
    """One engine layer.

    Attributes:
        name: layer name.
        layer_type: TensorRT layer type (``-`` when unknown).
        precision: compute precision (``-`` when unknown).
        time_ms: average time per inference (ms), ``None`` without a per-layer profile.
        time_pct: share of the summed layer time, percent.
        tactic: the chosen tactic (at most 60 characters).
        outputs: output shapes and dtypes, joined.
    """

    name: str
    layer_type: str
    precision: str
    time_ms: float | None
    time_pct: float | None
    tactic: str
    outputs: str


@dataclass(frozen=True)
class EngineTimingView:
    """Engine timing: mean and median engine latency (ms), inferences timed, the sum of
    the per-layer averages (ms), how much per-layer profiling slows the engine (percent,
    ``None`` when not measured) and where the numbers come from."""

    engine_mean_ms: float | None
    engine_median_ms: float | None
    iterations: int | None
    layer_sum_ms: float | None
    overhead_pct: float | None
    source: str


@dataclass(frozen=True)
class EngineView:
    """The TensorRT engine section (also ``trtcheck inspect``'s text and Markdown).

    Attributes:
        kv: ``(fact, value)`` pairs: source, path, plan, pre-flight, device, runtime, ...
        detailed: layer information came with detailed profiling verbosity.
        layer_count: layers in the engine.
        timed: a per-layer profile exists (``rows`` are slowest first).
        rows: at most ``top`` layers.
        top: the row limit.
        io: I/O tensors.
        profiles: optimization profile shapes, one row per profile and input.
        precision_mix: ``(precision, layers)`` pairs, most layers first.
        reformats: reformat layers.
        timing: engine timing, ``None`` without one.
        memory: ``(what, bytes)`` pairs, ``None`` without a memory record.
        memory_per_profile: ``(profile, activation bytes)`` pairs.
        largest_batch: the largest batch size that fits in free GPU memory, if known.
        memory_notes: notes on the memory numbers.
        lints: the engine's lints.
    """

    kv: list[tuple[str, str]]
    detailed: bool
    layer_count: int
    timed: bool
    rows: list[LayerRow]
    top: int
    io: list[IoTensorRow]
    profiles: list[ProfileRow]
    precision_mix: list[tuple[str, int]]
    reformats: int
    timing: EngineTimingView | None
    memory: list[tuple[str, int]] | None
    memory_per_profile: list[tuple[int, int]]
    largest_batch: int | None
    memory_notes: list[str]
    lints: list[Finding]


# -------------------------------------------------------------------------- precision


@dataclass(frozen=True)
class PrecisionRow:
    """One precision in the summary table (the FP32 reference first).

    Attributes:
        label: ``fp32 (reference)`` or the variant label.
        backend: ``"<backend> <version>"``.
        median_ms, p99_ms: latency (ms), ``None`` when not measured.
        samples_per_s: throughput (samples/s).
        speedup_vs_fp32: FP32 median / this median.
        min_cosine_similarity: worst cosine similarity over outputs.
        max_rel_l2_error: worst relative L2 error.
        max_abs_error: worst absolute error.
        outside_pct: worst share of elements outside tolerance, percent.
        nonfinite_count: NaN/Inf the candidate produced where the reference did not.
        min_top1_agreement: worst top-1 agreement (0..1).
        verdict: ``reference``, ``pass`` or ``FAIL``.
        speedup_text: the speed-up as shown: ``1.30 (1.21-1.40)`` with its 95%
            interval, ``not measurable on this backend``, or ``-``.
    """

    label: str
    backend: str
    median_ms: float | None
    p99_ms: float | None
    samples_per_s: float | None
    speedup_vs_fp32: float | None
    min_cosine_similarity: float | None
    max_rel_l2_error: float | None
    max_abs_error: float | None
    outside_pct: float | None
    nonfinite_count: int | None
    min_top1_agreement: float | None
    verdict: str
    speedup_text: str = "-"


@dataclass(frozen=True)
class PrecisionOutputRow:
    """The error of one output of one variant against FP32.

    Attributes:
        name: output name.
        shape: ``1x1000``.
        reference_max_abs: max |reference|.
        max_abs_error, mean_abs_error, p99_abs_error: absolute errors.
        rounding_floor: max |ref - ref stored in this precision|.
        max_rel_error, mean_rel_error: relative errors over non-zero references.
        rel_l2_error: ||cand - ref|| / ||ref||.
        cosine_similarity: cosine of the flattened outputs.
        outside_pct: elements outside tolerance, percent.
        nan_count, inf_count: NaN and Inf in the candidate.
        top1_pct, top5_pct: top-k agreement, percent (``None`` for non-class outputs).
        polygraphy: Polygraphy's elementwise check: ``pass``, ``fail`` or ``-``.
        passed: within tolerance.
        not_judged: each metric shown that did not judge this output, with why
            (``cosine 0.998700: not judged: every |ref| <= atol 0.01 ...``).
    """

    name: str
    shape: str
    reference_max_abs: float
    max_abs_error: float
    rounding_floor: float | None
    mean_abs_error: float
    p99_abs_error: float
    max_rel_error: float | None
    mean_rel_error: float | None
    rel_l2_error: float | None
    cosine_similarity: float | None
    outside_pct: float
    nan_count: int
    inf_count: int
    top1_pct: float | None
    top5_pct: float | None
    polygraphy: str
    passed: bool
    not_judged: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PrecisionVariantView:
    """One precision variant in detail.

    Attributes:
        label: variant label (``fp16``).
        built_by: how the variant was built, in words.
        model_path: the model it ran.
        passed: every output within tolerance.
        tolerance: the bounds and their source.
        kept: the nodes kept in FP32 (the first 20, joined; empty when none).
        outputs: one row per output.
        findings: warnings and errors.
        infos: notes.
        localization: where the error starts, ``None`` when not searched.
        cost: one sentence: speed-up against accuracy cost.
    """

    label: str
    built_by: str
    model_path: str
    passed: bool
    tolerance: PrecisionTolerance
    kept: str
    outputs: list[PrecisionOutputRow]
    findings: list[Finding]
    infos: list[Finding]
    localization: Localization | None
    cost: str


@dataclass(frozen=True)
class PrecisionView:
    """The precision section: every variant against the FP32 reference.

    Attributes:
        model_path: the FP32 model.
        reference: the backend that ran the reference.
        inputs: where the inputs came from, in words.
        files: input files (the first 10).
        more_files: input files left out of ``files``.
        passed: every variant within tolerance.
        rows: the summary table (reference first).
        variants: each variant in detail.
        notes: notes on the comparison.
        reference_noise_max_abs: max difference of two FP32 runs on sample 0 (runtime
            noise floor), ``None`` when not measured.
    """

    model_path: str
    reference: BackendInfo
    inputs: str
    files: list[str]
    more_files: int
    passed: bool
    rows: list[PrecisionRow]
    variants: list[PrecisionVariantView]
    notes: list[str]
    reference_noise_max_abs: float | None


# ------------------------------------------------------------------------------ serve


@dataclass(frozen=True)
class WaterfallPartRow:
    """One part of a request's time (label in words): median and p99 in ms."""

    name: str
    median_ms: float
    p99_ms: float


@dataclass(frozen=True)
class ServeRow:
    """One serving configuration under one load (medians over repeats).

    Attributes:
        window_ms: batching window (ms).
        max_batch_size: the batcher's batch limit.
        mean_batch_size: server-side inferences / executions.
        max_batch_size_seen: largest batch executed.
        queries_per_s: successful requests / (first send to last answer).
        p50_ms, p99_ms: request latency (ms).
        ok_pct: ok requests / requests sent, percent.
        late_send_pct: open loop: sends later than the late threshold, percent.
        send_lag_p99_ms: open loop: p99 send lag (ms).
        parts: the waterfall of the median repeat.
        e2e_median_ms: its end-to-end median latency (ms).
        residual_median_ms, residual_p99_ms: latency minus the sum of the parts (ms).
        instances: model instances (workers) serving it.
    """

    window_ms: float
    max_batch_size: int
    mean_batch_size: float
    max_batch_size_seen: int
    queries_per_s: float
    p50_ms: float | None
    p99_ms: float | None
    ok_pct: float
    late_send_pct: float | None
    send_lag_p99_ms: float | None
    parts: list[WaterfallPartRow]
    e2e_median_ms: float | None
    residual_median_ms: float | None
    residual_p99_ms: float | None
    instances: int = 1


@dataclass(frozen=True)
class ServeLoadView:
    """One load shape: its label, one row per configuration, and its QPS/P99 chart.

    ``show_instances``: the rows differ in instance count, or run more than one (the
    tables then carry an instances column)."""

    label: str
    rows: list[ServeRow]
    chart: Chart | None = None

    @property
    def show_instances(self) -> bool:
        """Whether the load's tables need an instances column."""
        return any(r.instances != 1 for r in self.rows)


@dataclass(frozen=True)
class LiveCommandView:
    """The server's statistics over a whole ``serve --url`` command: the mean batch it
    formed (inferences / executions) and the two counts."""

    mean_batch_size: float
    inference_count: int
    execution_count: int


@dataclass(frozen=True)
class LiveTargetView:
    """The live server a run measured (``trtcheck serve --url``).

    Attributes:
        server: server name and version (``triton 2.51.0``).
        protocol: ``HTTP`` or ``GRPC``; url: as given.
        model, version: the model (version in words when the server chose it).
        backend: the model's platform/backend (``python``, ``tensorrt_plan``).
        client_processes: load generator processes.
        model_control: in words: each configuration loaded through the model-repository
            API, or measured as loaded.
        command: the server's statistics over the whole command (warm-up included;
            ``None`` in a sweep).
    """

    server: str
    protocol: str
    url: str
    model: str
    version: str
    backend: str
    client_processes: int
    model_control: str
    command: LiveCommandView | None


@dataclass(frozen=True)
class LiveConfigRow:
    """One model configuration the server ran (its ``/v2/models/NAME/config``).

    Attributes:
        window_ms: ``max_queue_delay_microseconds`` in ms.
        max_batch_size: Triton's ``max_batch_size`` (0: no batch axis).
        instances: execution instances (``None``: not recorded).
        kind: the instance groups' kinds (``KIND_CPU``).
        dynamic_batching: ``on`` or ``off``.
        preferred_batch_sizes: comma-separated, ``-`` when none.
        max_queue_size: the default queue policy's bound (0: unbounded).
    """

    window_ms: float
    max_batch_size: int
    instances: int | None
    kind: str
    dynamic_batching: str
    preferred_batch_sizes: str
    max_queue_size: int


@dataclass(frozen=True)
class LiveStatsRow:
    """The server's statistics of one configuration's median repeat.

    Attributes:
        load, window_ms, max_batch_size, instances: the configuration.
        mean_batch_size: inferences / executions, the mean batch the server formed.
        inference_count, execution_count: Triton's counts.
        executions_per_batch_size: ``1×77, 2×24`` (batch size × executions).
        queue_ms, compute_input_ms, compute_infer_ms, compute_output_ms: means per
            request (ms); ``None`` when nothing was counted.
    """

    load: str
    window_ms: float
    max_batch_size: int
    instances: int | None
    mean_batch_size: float
    inference_count: int
    execution_count: int
    executions_per_batch_size: str
    queue_ms: float | None
    compute_input_ms: float | None
    compute_infer_ms: float | None
    compute_output_ms: float | None


@dataclass(frozen=True)
class LiveSplitRow:
    """Where one configuration's requests spent their time (means, ms).

    Attributes:
        load, window_ms, max_batch_size, instances: the configuration.
        client_mean_ms: the client's mean latency from the actual send.
        parts_ms: client + network, server queue, server compute, server other (they
            add up to ``client_mean_ms``), labelled by ``LiveServeView.part_labels``.
        server_pct: the server's mean request time / the client mean, percent.
        send_lag_mean_ms: open loop: mean delay between schedule and send.
    """

    load: str
    window_ms: float
    max_batch_size: int
    instances: int | None
    client_mean_ms: float
    parts_ms: list[float]
    server_pct: float | None
    send_lag_mean_ms: float


@dataclass(frozen=True)
class LiveBatchRow:
    """Executions of one batch size in one configuration's median repeat (Triton's
    ``batch_stats``); times per execution, ms."""

    load: str
    window_ms: float
    max_batch_size: int
    instances: int | None
    batch_size: int
    execution_count: int
    share_pct: float | None
    compute_input_ms: float | None
    compute_infer_ms: float | None
    compute_output_ms: float | None


@dataclass(frozen=True)
class LiveNodeRow:
    """One Ray load actor's share of one configuration's median repeat
    (``serve --url ... --ray``).

    Attributes:
        load, window_ms, max_batch_size, instances: the configuration.
        actor: the actor index; node: ``host/IP`` and the first 8 characters of the Ray
            node id.
        scheduled, sent, ok, lost: its requests; lost_reason: why its share was lost.
        late_pct: open loop: late sends / sent, percent.
        send_lag_p99_ms, sent_per_s: open loop: p99 send lag and achieved send rate.
        p50_ms, p99_ms: latency of its ok requests.
        cpu_pct: its load thread's CPU time / the run's wall time, percent.
        clock_offset_ms, clock_offset_error_ms: node clock - driver clock, and its bound.
        start_skew_ms: its run's start after the common epoch.
    """

    load: str
    window_ms: float
    max_batch_size: int
    instances: int | None
    actor: int
    node: str
    scheduled: int
    sent: int
    ok: int
    lost: int
    lost_reason: str | None
    late_pct: float | None
    send_lag_p99_ms: float | None
    sent_per_s: float | None
    p50_ms: float | None
    p99_ms: float | None
    cpu_pct: float | None
    clock_offset_ms: float | None
    clock_offset_error_ms: float | None
    start_skew_ms: float | None


@dataclass(frozen=True)
class LiveServeView:
    """A live server's part of the serving section: the target, the model configuration
    per run, the server's statistics, the latency split and executions per batch size;
    with a Ray load, every actor's share (``nodes``, empty otherwise)."""

    target: LiveTargetView
    configs: list[LiveConfigRow]
    stats: list[LiveStatsRow]
    split: list[LiveSplitRow]
    batches: list[LiveBatchRow]
    part_labels: list[str]
    nodes: list[LiveNodeRow] = field(default_factory=list)
    ray_address: str | None = None


@dataclass(frozen=True)
class ServeView:
    """The serving section.

    Attributes:
        model_path: the served target.
        backend: the backend record.
        settings: repeats, instances, queue bound, overheads, front, loop, payload.
        loads: one entry per load shape.
        warnings: findings of every configuration and of the run, grouped per code.
        live: a live server's run (``trtcheck serve --url``), else ``None``.
        waterfall_chart: the per-request waterfall chart (HTML report only; embedded
            batcher).
        split_chart: a live run's latency split chart (HTML report only).
    """

    model_path: str
    backend: BackendInfo
    settings: str
    loads: list[ServeLoadView]
    warnings: list[FindingGroup]
    live: LiveServeView | None = None
    waterfall_chart: Chart | None = None
    split_chart: Chart | None = None


# ----------------------------------------------------------------------------- advice


@dataclass(frozen=True)
class PredictionRow:
    """One simulated candidate configuration.

    Attributes:
        label: what it is (``recommended``, ``no batching``, ...).
        config: ``window 0.25 ms, max batch 4, 1 instance``-style text.
        stable: the simulated queue stays bounded (otherwise no percentile exists).
        p50_ms, p95_ms, p99_ms: simulated latency (ms).
        queries_per_s: simulated throughput over the run (requests/s).
        mean_batch: mean requests per execution.
        max_batch: largest batch executed.
        mean_queue_len: time-averaged requests waiting.
        utilisation: offered load / capacity (0..1 and above).
        p50_interval_ms, p99_interval_ms: the 95% prediction intervals ``(lo, hi)``
            of a live calibration's prediction (docs/advise.md); ``None``: none.
        contention: the T(b) factor applied for instances sharing a device, in words
            (empty: none).
    """

    label: str
    config: str
    stable: bool
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    queries_per_s: float | None
    mean_batch: float | None
    max_batch: int | None
    mean_queue_len: float | None
    utilisation: float
    p50_interval_ms: tuple[float, float] | None = None
    p99_interval_ms: tuple[float, float] | None = None
    contention: str = ""


@dataclass(frozen=True)
class DecisionStep:
    """One question on the decision path: its number (from 1), step name, question,
    answer, the deciding value and threshold (units as the step states) and the
    conclusion."""

    n: int
    step: str
    question: str
    answer: str
    value: float | None
    threshold: float | None
    conclusion: str


@dataclass(frozen=True)
class ComparisonRow:
    """Predicted against measured for one measured serving configuration (``None``
    where the simulation is unstable: no percentile exists).

    Attributes:
        config: the configuration (``W=2 ms B=8``).
        load: the load label.
        measured_queries_per_s, predicted_queries_per_s: throughput (requests/s).
        measured_mean_batch, predicted_mean_batch: mean batch size.
        measured_p50_ms, predicted_p50_ms, measured_p99_ms, predicted_p99_ms: latency.
    """

    config: str
    load: str
    measured_queries_per_s: float
    predicted_queries_per_s: float | None
    measured_mean_batch: float
    predicted_mean_batch: float | None
    measured_p50_ms: float | None
    predicted_p50_ms: float | None
    measured_p99_ms: float | None
    predicted_p99_ms: float | None


@dataclass(frozen=True)
class AdviceView:
    """The batching advice section.

    Attributes:
        adv: the advice record (recommendation, inputs, curve, pitfalls, export).
        rows: the simulated candidates.
        path: the decision path.
        run_qps_note: how the simulated throughput is defined.
        points: the measured curve ``(batch size, T(b) ms)``, by batch size.
        comparison: predicted vs measured (report only; empty in ``advise`` output).
        predicted_dash: some prediction in ``comparison`` is unstable (shown as ``-``).
        interval_rows: the rows of ``rows`` with prediction intervals.
    """

    adv: Advice
    rows: list[PredictionRow]
    path: list[DecisionStep]
    run_qps_note: str
    points: list[tuple[int, float]]
    comparison: list[ComparisonRow] = field(default_factory=list)
    predicted_dash: bool = False
    interval_rows: list[PredictionRow] = field(default_factory=list)


@dataclass(frozen=True)
class ImportedView:
    """Measurements read from another tool's file (a perf_analyzer CSV, a Triton
    statistics dump).

    Attributes:
        run: the imported record (source, file, perf_analyzer levels, Triton models,
            what the source lacks).
        source_label: the source in words (``"perf_analyzer CSV"``).
        load_column: the heading of the load column (``"concurrency"`` or
            ``"request rate req/s"``; empty for statistics).
    """

    run: ImportedRun
    source_label: str
    load_column: str


# ---------------------------------------------------------------------------- compare
# ``trtcheck compare`` (text, Markdown and templates/compare.html.j2): every value is
# already formatted text (with its unit), B relative to A.


@dataclass(frozen=True)
class FieldPairRow:
    """One field in both files (environment, model, backend, precision setup): its name,
    A's and B's value as text, and whether they differ."""

    field: str
    a: str
    b: str
    differs: bool


@dataclass(frozen=True)
class CompareMetricRow:
    """One bench statistic at one batch size, A against B.

    Attributes:
        batch_size: the batch size.
        sample_count: ``"<samples A>/<samples B>"``.
        metric: the statistic (``median_ms``).
        a, b: the two values with their unit.
        change_pct: B/A - 1 in percent (``+4.2%``), ``-`` without a ratio.
        interval: its confidence interval (``[+1.0%, +7.5%]``), ``-`` without one.
        change: the verdict (``better``, ``worse``, ``no change``, ...).
    """

    batch_size: int
    sample_count: str
    metric: str
    a: str
    b: str
    change_pct: str
    interval: str
    change: str


@dataclass(frozen=True)
class CompareRunView:
    """One bench run matched across the two files: its title, how it was matched, the
    backend fields side by side, one row per statistic and batch size, and the batch sizes
    only one side measured."""

    title: str
    matched_by: str
    backend: list[FieldPairRow]
    rows: list[CompareMetricRow]
    only_in_a: list[int]
    only_in_b: list[int]


@dataclass(frozen=True)
class CompareLayerRow:
    """One engine layer matched across the two engines: names (``a -> b`` when renamed),
    type, precision (``a -> b`` when it changed), average times with unit, the signed
    difference, B/A - 1 in percent (``change_pct``) and how it was matched."""

    name: str
    layer_type: str
    precision: str
    a: str
    b: str
    delta: str
    change_pct: str
    matched_by: str


@dataclass(frozen=True)
class CompareLayersView:
    """The engine layers of the two files.

    Attributes:
        counts: ``"<A> / <B> layers, <n> matched"``.
        summed_time: summed layer time A / B with unit (``-`` without per-layer times).
        mix_a, mix_b: precision mix of each engine (``FP16 40, INT8 12``).
        rows: matched layers, largest time change first (at most the row limit).
        hidden: matched layers left out of ``rows``.
        only_in_a, only_in_b: unmatched layer names.
    """

    counts: str
    summed_time: str
    mix_a: str
    mix_b: str
    rows: list[CompareLayerRow]
    hidden: int
    only_in_a: list[str]
    only_in_b: list[str]


@dataclass(frozen=True)
class CompareServeRow:
    """One serving configuration in both files: ``"A / B"`` pairs of QPS (requests/s),
    mean batch and P50/P99 (ms), each with B/A - 1 in percent (``-`` where missing)."""

    config: str
    qps: str
    qps_change: str
    batch: str
    p50: str
    p50_change: str
    p99: str
    p99_change: str


@dataclass(frozen=True)
class ComparePrecisionMetricRow:
    """One accuracy metric of a precision variant in both files, ``B - A`` and which
    direction is better."""

    metric: str
    better: str
    a: str
    b: str
    difference: str


@dataclass(frozen=True)
class ComparePrecisionView:
    """One precision variant in both files: verdicts ``"pass / FAIL"``, speed-ups vs FP32
    ``"1.80x / 1.75x"`` (``None`` when neither measured one), the setup fields that differ,
    and one row per metric."""

    variant: str
    passed: str
    speedup: str | None
    setup: list[FieldPairRow]
    rows: list[ComparePrecisionMetricRow]


@dataclass(frozen=True)
class CompareView:
    """Two results files side by side (``trtcheck compare``).

    Attributes:
        name_a, name_b: the names shown for A and B.
        comparable: the environments are comparable.
        different_models: why the two files measured different models, or ``None``.
        nothing_paired: one line when nothing was paired (what each file holds, what
            compare pairs), or ``None``.
        environment, inspection: fields side by side.
        runs: matched bench runs; runs_only_in_a, runs_only_in_b: unmatched labels.
        layers: engine layers, ``None`` unless both files hold an engine.
        serve: matched serving configurations; serve_only_in_a, serve_only_in_b:
            unmatched ones.
        precision_setup: the precision comparison's setup side by side.
        precision: matched variants; precision_only_in_a, precision_only_in_b: the rest.
        layers_note: how layers are matched.
        method: how changes are judged.
    """

    name_a: str
    name_b: str
    comparable: bool
    different_models: str | None
    nothing_paired: str | None
    environment: list[FieldPairRow]
    inspection: list[FieldPairRow]
    runs: list[CompareRunView]
    runs_only_in_a: list[str]
    runs_only_in_b: list[str]
    layers: CompareLayersView | None
    serve: list[CompareServeRow]
    serve_only_in_a: list[str]
    serve_only_in_b: list[str]
    precision_setup: list[FieldPairRow]
    precision: list[ComparePrecisionView]
    precision_only_in_a: list[str]
    precision_only_in_b: list[str]
    layers_note: str
    method: str


@dataclass(frozen=True)
class TuneConfigRow:
    """One row of the tune pick's table: the pick measured, the pick predicted, or the
    runner-up predicted (every value formatted, ``-`` when absent).

    Attributes:
        what: ``measured``, ``predicted`` or ``runner-up (predicted)``.
        config: window, max batch and instances in words.
        p50, p99: the latency, with the predicted interval (``6.12 ms [3.92, 8.32]``) or,
            measured, whether it fell inside it (``4.99 ms (inside)``).
        throughput: queries per second; mean_batch: the mean batch size.
        detail: requests measured, or the predicted capacity.
    """

    what: str
    config: str
    p50: str
    p99: str
    throughput: str
    mean_batch: str
    detail: str


@dataclass(frozen=True)
class TuneCalibrationRow:
    """T(b) at one instance count: ``points`` (``1: 3.95, 2: 4.21``, ms), the contention
    factor (``x1.22``) and where it came from (``measured``, ``fitted``)."""

    instances: int
    points: str
    contention: str
    source: str


@dataclass(frozen=True)
class TuneRunRow:
    """One run of the search: its live-run number(s) as the progress lines counted them
    (``"4"``; ``"2-3"`` for a run with two repeats), purpose (``calibration``,
    ``confirm``), load, configuration and P50/P99/mean batch per repeat (``10.7/9.18``)."""

    live_runs: str
    purpose: str
    load: str
    window_ms: str
    max_batch: int
    instances: int
    p50_ms: str
    p99_ms: str
    mean_batch: str


@dataclass(frozen=True)
class TuneView:
    """The ``trtcheck tune`` section (``report --from tune.json``, ``tune --format md``):
    the pick measured and predicted with intervals, the runner-up, why, the calibration
    and every live run, as tables and lists.

    Attributes:
        headline: model, server, rate, objective and search range in one sentence.
        pick: the picked configuration in words, or ``None`` (nothing picked).
        rows: the pick measured and predicted, and the runner-up (empty without a pick
            and a runner-up).
        why: the reasons, in words.
        calibration: the calibration in one sentence, or ``None`` (it did not finish).
        idle: the fitted idle slowdown in words, or ``None``.
        calibration_rows: T(b) per instance count.
        runs_summary: how many live runs, how long, and whether the original
            configuration was restored.
        runs: every live run.
        notes: assumptions and what could not be measured.
    """

    headline: str
    pick: str | None
    rows: list[TuneConfigRow]
    why: list[str]
    calibration: str | None
    idle: str | None
    calibration_rows: list[TuneCalibrationRow]
    runs_summary: str
    runs: list[TuneRunRow]
    notes: list[str]
