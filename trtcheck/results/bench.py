"""Records for latency/throughput measurements across batch sizes."""

from __future__ import annotations

from pydantic import model_validator

from trtcheck.results import consistency as C
from trtcheck.results.base import Record
from trtcheck.results.stats import Finding, LatencyStats


class BackendInfo(Record):
    """Which runtime produced the numbers.

    Attributes:
        name: backend id, e.g. ``"onnxruntime"``, ``"tensorrt"``, ``"tensorrt_rtx"``,
            ``"callable"``, ``"synthetic"``.
        version: runtime version string.
        device: human name of the device that executed, e.g. ``"CPU (AMD EPYC ...)"`` or
            ``"NVIDIA H200"``.
        providers: ONNX Runtime execution providers in priority order (empty otherwise).
        precision: the precision the model/engine computes in, e.g. ``"fp32"``,
            ``"fp16"``, ``"int8"``, or ``"mixed"``.
        options: backend-specific settings that change timing (threads, graphs, ...).
    """

    name: str
    version: str
    device: str
    providers: list[str] = []
    precision: str = "fp32"
    options: dict[str, str | int | float | bool | None] = {}


class BenchSettings(Record):
    """The stopping rule and inputs used for every batch size of a run.

    Per batch size: warm up for ``warmup_s`` seconds (and at least ``warmup_min_iterations``
    runs), then measure until **both** ``min_duration_s`` and ``min_samples`` are
    reached, or until ``max_duration_s`` / ``max_samples`` stop it first. Then, while
    the 95% interval of the median is wider than ``median_precision`` of the median
    (a ratio; 0: off), go on measuring, for ``precision_bound_s`` seconds in all at most.
    Files written before these two fields existed read ``None`` (no adaptive part).
    """

    warmup_s: float
    warmup_min_iterations: int
    min_duration_s: float
    min_samples: int
    max_duration_s: float
    max_samples: int
    median_precision: float | None = None
    precision_bound_s: float | None = None
    batch_sizes: list[int]
    input_source: str
    seed: int | None = None
    shapes: dict[str, list[int]] = {}


class BatchResult(Record):
    """Measurements at one batch size.

    Attributes:
        batch_size: samples per execution (dim 0 of the batched inputs).
        input_shapes: the concrete input shapes executed.
        samples_ms: raw end-to-end latency of every measured execution, in ms,
            in measurement order (kept so gates can bootstrap and reports can re-derive).
        warmup_samples_ms: latency of the warm-up executions, in ms.
        components_ms: optional raw per-execution components measured by the backend,
            keyed by the standard names ``h2d_ms``, ``gpu_compute_ms``, ``d2h_ms``,
            ``host_enqueue_ms``; each list is aligned with ``samples_ms``.
        stats: statistics of ``samples_ms``.
        component_stats: statistics of each ``components_ms`` entry.
        throughput_queries_per_s: executions per second, ``1000 / stats.median_ms``.
        throughput_samples_per_s: samples per second,
            ``batch_size * throughput_queries_per_s``.
        throughput_gain_vs_batch1: ``samples_per_s(b) / samples_per_s(1)`` of the same
            run (``None`` when batch 1 was not measured); a ResNet-18 on a GPU
            reached 2.7 at batch 16.
        scaling_efficiency: ``throughput_gain_vs_batch1 / b``: 1.0 is perfect linear
            scaling (a batch costs no more than one sample), ``1/b`` means batching gave
            nothing.
        measured_duration_s: wall time spent in the measured executions.
        stopped_by: which rule ended measurement (``"min_reached"``,
            ``"precision_reached"``, ``"precision_bound"``, ``"max_duration"``,
            ``"max_samples"``).
        warnings: stability warnings (pyperf-style) with a remedy each.
        first_call_ms: latency of the first execution at this batch size (the first
            warm-up run: lazy initialisation, kernel selection and allocation for a new
            shape), shown apart from the measured samples; ``None`` without warm-up.
        input_bytes: bytes of the input arrays of one execution.
        validity: marks that this measurement cannot certify a budget (codes
            ``implausible-latency`` (error): faster than the work allows, e.g. a backend
            that returns before its work completes; ``unstable`` (warning): the samples
            vary or drift too much (see ``warnings``)). The gate refuses to pass a
            budget on a marked record (docs/gate.md).
    """

    batch_size: int
    input_shapes: dict[str, list[int]]
    samples_ms: list[float]
    warmup_samples_ms: list[float] = []
    components_ms: dict[str, list[float]] = {}
    stats: LatencyStats
    component_stats: dict[str, LatencyStats] = {}
    throughput_queries_per_s: float
    throughput_samples_per_s: float
    throughput_gain_vs_batch1: float | None = None
    scaling_efficiency: float | None = None
    measured_duration_s: float
    stopped_by: str
    warnings: list[Finding] = []
    first_call_ms: float | None = None
    input_bytes: int | None = None
    validity: list[Finding] = []

    @model_validator(mode="after")
    def _consistent(self) -> BatchResult:
        """Batch size in range; raw samples finite, >= 0 and aligned with their
        components (:mod:`trtcheck.results.consistency`)."""
        C.check_batch_size(self.batch_size, "batch_size")
        C.check_times_ms(self.samples_ms, "samples_ms")
        C.check_times_ms(self.warmup_samples_ms, "warmup_samples_ms")
        for name, values in self.components_ms.items():
            C.check_times_ms(values, f"components_ms.{name}")
        C.check_aligned(self.samples_ms, {f"components_ms.{k}": v
                                          for k, v in self.components_ms.items()},
                        "samples_ms", allow_empty=True)
        return self


class FailedBatch(Record):
    """A batch size the sweep could not measure; the sweep went on with the others.

    Attributes:
        batch_size: samples per execution that was tried.
        input_shapes: the input shapes that were tried.
        reason: ``"out-of-memory"`` (an allocation failed: host or device memory) or
            ``"failed"`` (the runtime refused or failed the execution).
        message: the runtime's message, one line.
        requested_bytes: the allocation that failed, bytes, when the runtime's message
            names it (``None`` otherwise).
    """

    batch_size: int
    input_shapes: dict[str, list[int]]
    reason: str
    message: str
    requested_bytes: int | None = None

    @model_validator(mode="after")
    def _consistent(self) -> FailedBatch:
        """Batch size in range (:mod:`trtcheck.results.consistency`)."""
        C.check_batch_size(self.batch_size, "batch_size")
        return self


class BenchRun(Record):
    """One batch-size sweep of one model on one backend and precision.

    ``label`` identifies the run within a results file (e.g. ``"onnxruntime-fp32"``);
    the first run in :attr:`trtcheck.results.Results.bench` is the primary one that
    gate paths like ``bench.batch[8].p99_ms`` refer to.

    ``failed_batches`` lists the batch sizes that could not run (out of memory, a runtime
    failure) while the others were measured; ``incomplete`` says why the sweep stopped
    early (SIGINT/SIGTERM) or is ``None``; ``first_call_ms`` is the first execution of the
    first batch size measured (session start-up costs), shown apart and never mixed into
    the samples.
    """

    label: str
    model_path: str
    backend: BackendInfo
    settings: BenchSettings
    batches: list[BatchResult]
    failed_batches: list[FailedBatch] = []
    incomplete: str | None = None
    first_call_ms: float | None = None

    @model_validator(mode="after")
    def _unique_batches(self) -> BenchRun:
        """Each batch size once (rows are looked up by it)."""
        C.check_unique([b.batch_size for b in self.batches], "batch size")
        return self

    def batch(self, batch_size: int) -> BatchResult | None:
        """Return the result for ``batch_size`` or ``None`` when it was not measured."""
        for b in self.batches:
            if b.batch_size == batch_size:
                return b
        return None
