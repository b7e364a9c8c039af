"""Records for TensorRT engines: plan pre-flight, layers, I/O, profiles, memory, timing.

Filled by :mod:`trtcheck.load.plan_header`, :mod:`trtcheck.load.engine_json`,
:mod:`trtcheck.inspection.engine.trtexec`, :mod:`trtcheck.inspection.engine.engine_memory` and
:mod:`trtcheck.measure.bench.build`; read by the report section ``sec_engine``. Every string
that comes from a file (layer, tensor, tactic names) is untrusted text.
"""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from trtcheck.results.base import Record
from trtcheck.results.stats import Finding


class PlanInfo(Record):
    """What the first bytes of a serialized engine (plan) say, read without TensorRT.

    Attributes:
        path: the file examined.
        file_size_bytes: size on disk.
        kind: ``"tensorrt"`` (magic ``ftrt``), ``"tensorrt_rtx"`` (magic ``vtrt``),
            ``"onnx"``, ``"text"``, ``"empty"`` or ``"unknown"``.
        magic: the first four bytes as text (printable) or hex.
        plan_offset_bytes: where the plan starts (0 unless something was prepended).
        built_with_version: TensorRT/TensorRT-RTX version that built it, ``"10.8.0.43"``.
        header_size_bytes: the plan length recorded in the header (bytes 16..23), when
            the header has one.
        prefix_metadata_keys: top-level keys of a JSON metadata block found before the
            plan (exporter metadata), ``None`` when there is none.
        runtime_name: the installed runtime it was compared with (``"tensorrt"``,
            ``"tensorrt_rtx"``) or ``None`` when none is installed.
        runtime_version: that runtime's version.
        can_load: ``True``/``False``, or ``None`` when it cannot be told here.
        verdict: one line: ``"can load"`` or ``"cannot load because ..."``.
        problems: findings with a remedy each (codes ``plan-*``).
    """

    path: str
    file_size_bytes: int
    kind: str
    magic: str
    plan_offset_bytes: int = 0
    built_with_version: str | None = None
    header_size_bytes: int | None = None
    prefix_metadata_keys: list[str] | None = None
    runtime_name: str | None = None
    runtime_version: str | None = None
    can_load: bool | None = None
    verdict: str
    problems: list[Finding] = []


class EngineTensor(Record):
    """A tensor as an engine layer or engine I/O sees it.

    Attributes:
        name: tensor name.
        dims: dimensions (``-1`` for a dynamic one in I/O descriptions).
        dtype: data type as TensorRT names it, lower case (``"fp32"``, ``"fp16"``,
            ``"int8"``, ``"fp8"``, ``"bf16"``, ``"int32"``, ``"int64"``, ``"bool"``).
        format: memory format in TensorRT's words (``"Row major linear"``,
            ``"Channel major ... channel % 8 == 0"``), or ``None``.
        location: ``"Device"`` or ``"Host"`` when known.
        mode: ``"input"``/``"output"`` for engine I/O, ``None`` for layer tensors.
    """

    name: str
    dims: list[int] = []
    dtype: str | None = None
    format: str | None = None
    location: str | None = None
    mode: str | None = None


def layer_is_reformat(layer_type: str | None, origin: str | None) -> bool:
    """A format/type conversion inserted by TensorRT: ``Reformat`` type (unless it came
    from a Q/DQ pair, origin ``QDQ``) or ``REFORMAT`` origin (the engine inspector's
    labels)."""
    return (layer_type or "").lower() == "reformat" and (origin or "").upper() != "QDQ" \
        or (origin or "").upper() == "REFORMAT"


class EngineLayer(Record):
    """One layer of a built engine (after fusion).

    Attributes:
        name: layer name (fused layers join their origins with ``" + "``).
        layer_type: TensorRT layer type (``"CaskConvolution"``, ``"Reformat"``, ...).
        precision: what the layer computes in: its weight type when it has weights (a
            QAT convolution reads INT8 and may write FP32), else its first output's type.
        tactic: tactic (kernel) name, or the tactic value when no name is given.
        origin: ``"REFORMAT"``, ``"QDQ"``, ... when TensorRT says where it came from.
        fused_ops: names of the network layers fused into this one.
        inputs: input tensors; outputs: output tensors.
        weights_count: number of weight + bias values (``None`` if unknown).
        weights_bytes: their size in bytes (``None`` if the type is unknown).
        avg_time_ms: average time per inference from a per-layer profile, or ``None``.
        time_pct: share of the summed layer times, percent, or ``None``.
        reformat: a format/type conversion TensorRT inserted (:func:`layer_is_reformat`);
            filled from ``layer_type``/``origin`` when absent (older results files). The
            precision mix leaves these out, and so does the gate filter
            ``engine.layers[precision=fp32,reformat=false]``.
    """

    name: str
    layer_type: str | None = None
    precision: str | None = None
    tactic: str | None = None
    origin: str | None = None
    fused_ops: list[str] = []
    inputs: list[EngineTensor] = []
    outputs: list[EngineTensor] = []
    weights_count: int | None = None
    weights_bytes: int | None = None
    avg_time_ms: float | None = None
    time_pct: float | None = None
    reformat: bool = False

    @model_validator(mode="before")
    @classmethod
    def _fill_reformat(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("reformat") is None:
            data = {**data, "reformat": layer_is_reformat(data.get("layer_type"),
                                                          data.get("origin"))}
        return data


class ProfileShape(Record):
    """min/opt/max shapes of one input in one optimization profile."""

    min: list[int]
    opt: list[int]
    max: list[int]


class OptimizationProfile(Record):
    """One optimization profile: input name -> min/opt/max."""

    index: int
    shapes: dict[str, ProfileShape]


class EngineTiming(Record):
    """Timing figures from trtexec exports or the TensorRT backend, all in ms.

    Attributes:
        engine_mean_ms: mean GPU compute time per inference (``--exportTimes``).
        engine_median_ms: median of the same.
        iterations: number of timed inferences behind ``engine_mean_ms``.
        layer_sum_ms: sum of per-layer average times (``--exportProfile``).
        profile_iterations: the profile's ``count`` (inferences it averaged).
        profiling_overhead_ratio: ``layer_sum_ms / engine_mean_ms - 1`` (per-layer
            profiling serialises layers and adds event overhead; trtexec's own docs warn
            that profiled runs are slower), or ``None``.
        h2d_mean_ms / d2h_mean_ms / enqueue_mean_ms: transfer and host enqueue means.
        source: where the numbers came from (file names or ``"cuda events"``).
    """

    engine_mean_ms: float | None = None
    engine_median_ms: float | None = None
    iterations: int | None = None
    layer_sum_ms: float | None = None
    profile_iterations: int | None = None
    profiling_overhead_ratio: float | None = None
    h2d_mean_ms: float | None = None
    d2h_mean_ms: float | None = None
    enqueue_mean_ms: float | None = None
    source: str = ""


class EngineMemory(Record):
    """Memory figures of an engine; all ``_bytes``; ``None`` when not known.

    Attributes:
        plan_size_bytes: serialized size.
        weights_bytes: weights held by the engine; ``weights_source`` says how it was
            obtained (``"engine_stat"``, ``"layer weights"``, ``"onnx initializers"``).
        device_memory_bytes_per_profile: activation (scratch) memory per optimization
            profile at its max shapes (``get_device_memory_size_for_profile_v2``).
        device_memory_bytes: ``device_memory_size_v2`` (max over profiles).
        weight_streaming_min_budget_bytes / weight_streaming_automatic_budget_bytes:
            from the engine when built with weight streaming.
        gpu_free_bytes / gpu_total_bytes: the device, when measured.
        io_bytes_per_sample: bytes of all I/O tensors for one batch item.
        largest_batch_fits: the largest batch whose estimated need fits in free memory
            (:func:`trtcheck.inspection.engine.engine_memory.largest_batch_that_fits`).
        notes: how each estimate was made.
    """

    plan_size_bytes: int | None = None
    weights_bytes: int | None = None
    weights_source: str | None = None
    device_memory_bytes_per_profile: dict[int, int] = {}
    device_memory_bytes: int | None = None
    weight_streaming_min_budget_bytes: int | None = None
    weight_streaming_automatic_budget_bytes: int | None = None
    gpu_free_bytes: int | None = None
    gpu_total_bytes: int | None = None
    io_bytes_per_sample: int | None = None
    largest_batch_fits: int | None = None
    notes: list[str] = []


class EngineInspection(Record):
    """Everything trtcheck found about one TensorRT engine.

    Attributes:
        source: ``"plan"`` (a serialized engine), ``"trtexec"`` (exported JSON files) or
            ``"build"`` (a network trtcheck built).
        path: the file or folder inspected.
        inspector_schema: ``"8.x/10.x"`` (``Bindings``, ``Format/Datatype``), ``"11.x"``
            (``I/O Tensors``, ``Datatype`` + ``Format``) or ``None``.
        detailed: whether layer information is detailed (built with
            ``ProfilingVerbosity.DETAILED``); ``False`` means names only.
        runtime_name / runtime_version / built_with_version: software involved.
        device_name / compute_capability: the GPU the engine was built or profiled on.
        build_options / inference_options: trtexec's recorded options (strings).
        layers: engine layers in execution order.
        io_tensors: engine inputs and outputs.
        profiles: optimization profiles.
        precision_mix: layer count per precision (``{"fp16": 30, "fp32": 2}``).
        reformat_count: number of reformat layers (format/type conversions).
        hardware_compatibility / version_compatible: build-time compatibility flags
            when known.
        plan / memory / timing: see their records.
        lints: TREx-style findings.
    """

    source: str
    path: str
    inspector_schema: str | None = None
    detailed: bool = True
    runtime_name: str | None = None
    runtime_version: str | None = None
    built_with_version: str | None = None
    device_name: str | None = None
    compute_capability: str | None = None
    build_options: dict[str, str] = {}
    inference_options: dict[str, str] = {}
    layers: list[EngineLayer] = []
    io_tensors: list[EngineTensor] = []
    profiles: list[OptimizationProfile] = []
    precision_mix: dict[str, int] = {}
    reformat_count: int = 0
    hardware_compatibility: str | None = None
    version_compatible: bool | None = None
    plan: PlanInfo | None = None
    memory: EngineMemory | None = None
    timing: EngineTiming | None = None
    lints: list[Finding] = []
