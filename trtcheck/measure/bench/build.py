"""Build TensorRT / TensorRT-RTX engines from ONNX, per precision.

Uses the builder API directly (``Builder`` -> ``create_network`` -> ``OnnxParser`` ->
``BuilderConfig`` with ``ProfilingVerbosity.DETAILED`` and one optimization profile ->
``build_serialized_network``), the same steps Polygraphy's ``NetworkFromOnnxPath`` /
``CreateConfig`` / ``EngineBytesFromNetwork`` take. We do not go through Polygraphy here
because it picks TensorRT or TensorRT-RTX once per process (``POLYGRAPHY_USE_TENSORRT_RTX``
read when ``polygraphy.backend.trt`` is first imported), and a precision sweep or a test
suite may need both.

Precision (TensorRT developer guide, "Strong Typing vs Weak Typing"):

* TensorRT 10 (weakly typed networks): ``fp16``/``bf16``/``int8``/``fp8`` set the builder
  flag of that name and TensorRT may choose it per layer; ``int8`` without Q/DQ nodes
  needs calibration, which trtcheck does not do (it asks for a Q/DQ model instead).
* TensorRT 11 and TensorRT-RTX (strongly typed; the flags are gone): precision lives in
  the ONNX graph. ``fp16`` converts the model with ONNX Runtime's
  ``float16.convert_float_to_float16(keep_io_types=True)`` (:mod:`trtcheck.measure.bench.fp16`;
  I/O stay FP32);
  ``int8``/``fp8`` need a model that already has QuantizeLinear/DequantizeLinear nodes.

What the build exposes without a GPU: the serialized plan (header read by
:mod:`trtcheck.load.plan_header`) and the network definition's layers (before
fusion, with output data types). The engine inspector's per-layer JSON needs a
deserialized engine, which needs a CUDA driver (on a CPU-only machine
``deserialize_cuda_engine`` returns ``None``: "CUDA driver version is insufficient").
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtcheck.errors import EnvironmentProblem, InputError
from trtcheck.files import replace_atomically
from trtcheck.results.engine import (
    EngineLayer, EngineTensor, OptimizationProfile, PlanInfo, ProfileShape,
)

PRECISIONS = ("fp32", "fp16", "bf16", "int8", "fp8")
RUNTIMES = ("tensorrt", "tensorrt_rtx")
INSTALL = {
    "tensorrt": 'pip install tensorrt-cu12 "cuda-python>=12,<13" (CUDA 12) or tensorrt-cu13 '
                '"cuda-python>=13" (CUDA 13)',
    "tensorrt_rtx": 'pip install tensorrt-rtx-cu13 "cuda-python>=13"',
}

_DTYPE_NAMES = {"FLOAT": "fp32", "HALF": "fp16", "BF16": "bf16", "INT8": "int8",
                "FP8": "fp8", "INT32": "int32", "INT64": "int64", "BOOL": "bool",
                "UINT8": "uint8", "INT4": "int4", "FP4": "fp4", "E8M0": "e8m0"}


def import_runtime(runtime: str) -> Any:
    """Import ``tensorrt`` or ``tensorrt_rtx``.

    Raises:
        InputError: unknown runtime name.
        EnvironmentProblem: the module is not installed (exit 3, names the extra).
    """
    if runtime not in RUNTIMES:
        raise InputError(f"unknown runtime {runtime!r}", f"choose one of: {', '.join(RUNTIMES)}")
    try:
        return importlib.import_module(runtime)
    except ImportError as exc:
        raise EnvironmentProblem(f"the {runtime} Python module is not importable ({exc})",
                                 INSTALL[runtime]) from None


def dtype_name(dt: Any) -> str:
    """TensorRT ``DataType`` -> short lower-case name (``DataType.HALF`` -> ``"fp16"``)."""
    raw = str(dt).rsplit(".", 1)[-1]
    return _DTYPE_NAMES.get(raw, raw.lower())


def parser_errors(parser: Any, model_path: str | Path) -> list[str]:
    """Every error of a failed TensorRT (or TensorRT-RTX) ONNX parse, one line each, with
    the node, its op and the op's domain (``ai.onnx`` for the default one; read from the
    model, since the parser's error names the op only), e.g. ``node 3 'q' (com.example::Foo):
    No importer registered for op: Foo``. Never raises: a model that cannot be read
    again gives the errors without domains."""
    domains: dict[str, str] = {}
    by_index: list[str] = []
    try:
        import onnx

        m = onnx.load(str(model_path), load_external_data=False)
        for n in m.graph.node:
            d = n.domain or "ai.onnx"
            by_index.append(d)
            if n.name:
                domains[n.name] = d
    except Exception:  # noqa: BLE001 - the parse error is the message; domains are extra
        pass
    out = []
    for i in range(int(parser.num_errors)):
        e = parser.get_error(i)
        try:
            node = int(e.node())
            name = str(e.node_name())
            op = str(e.node_operator())
            desc = " ".join(str(e.desc()).split())
        except Exception:  # noqa: BLE001 - an older parser: its text as it is
            out.append(" ".join(str(e).split())[:300])
            continue
        domain = domains.get(name) or (by_index[node] if 0 <= node < len(by_index) else None)
        where = f"node {node}" + (f" {name!r}" if name else "")
        what = f"{domain}::{op}" if domain and op else op or "?"
        out.append(f"{where} ({what}): {desc}"[:300])
    return out


@dataclass
class BuildResult:
    """One built engine.

    Attributes:
        plan_path: where the plan was written.
        precision: requested precision.
        runtime / runtime_version: the builder used.
        build_s: wall time of ``build_serialized_network`` in seconds.
        plan_size_bytes: serialized size.
        onnx_path: the ONNX actually built (a converted copy for strongly typed fp16).
        network_layers: layers of the network definition (before fusion).
        inputs / outputs: network I/O.
        plan: pre-flight of the written plan.
        notes: what was done to get this precision.
        profiles: the optimization profile(s) the builder was given and built with, as
            TensorRT holds them (read back from the ``IOptimizationProfile``: min/opt/max
            per dynamic input); empty for a model with static shapes.
    """

    plan_path: Path
    precision: str
    runtime: str
    runtime_version: str
    build_s: float
    plan_size_bytes: int
    onnx_path: Path
    network_layers: list[EngineLayer]
    inputs: list[EngineTensor]
    outputs: list[EngineTensor]
    plan: PlanInfo
    notes: list[str] = field(default_factory=list)
    profiles: list[OptimizationProfile] = field(default_factory=list)


def _capture_logger(trt: Any) -> tuple[Any, list[str]]:
    lines: list[str] = []

    class _Logger(trt.ILogger):
        def __init__(self) -> None:
            trt.ILogger.__init__(self)

        def log(self, severity: Any, msg: str) -> None:  # noqa: D401
            if severity <= trt.ILogger.Severity.WARNING:
                lines.append(f"[{str(severity).rsplit('.', 1)[-1]}] {msg}")

    return _Logger(), lines


def has_qdq(onnx_path: Path) -> bool:
    """Whether the ONNX graph holds QuantizeLinear/DequantizeLinear nodes."""
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    return any(n.op_type in ("QuantizeLinear", "DequantizeLinear") for n in model.graph.node)


def convert_fp16(onnx_path: Path, out_path: Path) -> Path:
    """FP16 copy of an ONNX model with FP32 I/O (ONNX Runtime's converter,
    ``convert_float_to_float16(keep_io_types=True)``, :mod:`trtcheck.measure.bench.fp16`);
    written to ``out_path``.

    Raises:
        InputError: the converter refuses the model (e.g. it already holds FP16 tensors).
        EnvironmentProblem: neither onnxruntime nor onnxruntime-gpu is installed.
    """
    import onnx

    from trtcheck.measure.bench.fp16 import convert_to_fp16

    model = onnx.load(str(onnx_path))
    try:
        converted = convert_to_fp16(model, Path(onnx_path).name)
    except InputError as exc:
        raise InputError(exc.message,
                         "a model that already holds FP16 tensors builds as it is: use "
                         "--precision fp32 (strongly typed: the model's own types are kept)"
                         ) from None
    onnx.save(converted, str(out_path))
    return out_path


def build_engine(onnx_path: str | Path, plan_path: str | Path, *, runtime: str = "tensorrt",
                 precision: str = "fp32",
                 shapes: dict[str, tuple[list[int], list[int], list[int]]] | None = None,
                 workspace_bytes: int | None = None, overwrite: bool = False) -> BuildResult:
    """Build one engine from ``onnx_path`` and write it to ``plan_path``.

    Args:
        onnx_path: the ONNX model.
        plan_path: output file (refused if it exists and ``overwrite`` is false).
        runtime: ``"tensorrt"`` or ``"tensorrt_rtx"``.
        precision: one of :data:`PRECISIONS`.
        shapes: input name -> (min, opt, max) shapes for the optimization profile;
            required for every input with a dynamic dimension.
        workspace_bytes: builder workspace pool limit, or ``None`` for the default.
        overwrite: replace an existing ``plan_path``.

    Returns:
        :class:`BuildResult`.

    Raises:
        InputError: missing model, unknown precision, dynamic input without shapes,
            int8/fp8 asked for a model without Q/DQ in a strongly typed runtime, parse
            or build failure (with TensorRT's first error line), existing output. A
            failed build removes the FP16-converted model it wrote.
        EnvironmentProblem: the runtime is not installed.
    """
    written: list[Path] = []
    try:
        return _build_engine(onnx_path, plan_path, runtime=runtime, precision=precision,
                             shapes=shapes, workspace_bytes=workspace_bytes,
                             overwrite=overwrite, written=written)
    except BaseException:
        for p in written:  # a failed build leaves no converted model behind to block a rerun
            p.unlink(missing_ok=True)
        raise


def _build_engine(onnx_path: str | Path, plan_path: str | Path, *, runtime: str = "tensorrt",
                  precision: str = "fp32",
                  shapes: dict[str, tuple[list[int], list[int], list[int]]] | None = None,
                  workspace_bytes: int | None = None, overwrite: bool = False,
                  written: list[Path] | None = None) -> BuildResult:
    """:func:`build_engine`'s work; files it writes besides the plan go to ``written``."""
    from trtcheck.load.plan_header import read_plan_info

    src = Path(onnx_path)
    out = Path(plan_path)
    if not src.is_file():
        raise InputError(f"ONNX model not found: {src}", "check the path")
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {precision!r}",
                         f"choose from: {', '.join(PRECISIONS)}")
    if out.exists() and not out.is_file():
        raise InputError(f"{out} exists and is not a regular file", "choose another output "
                         "folder")
    if out.exists() and not overwrite:
        raise InputError(f"{out} exists; not overwriting it", "choose another output "
                         "folder or remove the file")
    trt = import_runtime(runtime)
    logger, log_lines = _capture_logger(trt)
    builder = trt.Builder(logger)
    weak_flags = hasattr(trt.BuilderFlag, "FP16")
    notes: list[str] = []
    model_path = src
    if precision in ("int8", "fp8") and not has_qdq(src):
        raise InputError(f"{precision} needs a model with QuantizeLinear/DequantizeLinear "
                         f"nodes; {src.name} has none",
                         "quantize it first (e.g. NVIDIA ModelOpt or onnxruntime "
                         "quantization to a Q/DQ model) and build that")
    if precision in ("fp16", "bf16") and not weak_flags:
        if precision == "bf16":
            raise InputError(f"bf16 in strongly typed {runtime} needs a BF16 ONNX model",
                             "convert the model to BF16 yourself, or build fp16")
        model_path = out.with_name(out.stem + ".converted-fp16.onnx")
        if model_path.exists() and not overwrite:
            raise InputError(f"{model_path} exists; not overwriting it",
                             "choose another output folder")
        convert_fp16(src, model_path)
        if written is not None:
            written.append(model_path)
        notes.append(f"strongly typed {runtime}: converted to FP16 with ONNX Runtime's converter "
                     f"(keep_io_types=True) -> {model_path.name}")
    flags = 0
    if not weak_flags and hasattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED"):
        flags = 1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(model_path)):
        errs = parser_errors(parser, model_path)
        shown = "; ".join(errs[:5]) + (f"; and {len(errs) - 5} more" if len(errs) > 5 else "")
        raise InputError(f"{runtime} could not parse {model_path.name} "
                         f"({len(errs)} error(s)): "
                         f"{shown if errs else (log_lines or ['no reason given'])[0][:300]}",
                         "check the model with `trtcheck inspect`; the opset or an op may "
                         "be unsupported by this TensorRT")
    config = builder.create_builder_config()
    config.profiling_verbosity = trt.ProfilingVerbosity.DETAILED
    if workspace_bytes:
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(workspace_bytes))
    if weak_flags and precision != "fp32":
        config.set_flag(getattr(trt.BuilderFlag, precision.upper()))
        notes.append(f"builder flag {precision.upper()} (TensorRT may keep layers in FP32)")
    inputs: list[EngineTensor] = []
    outputs: list[EngineTensor] = []
    profile = builder.create_optimization_profile()
    need_profile = False
    shapes = shapes or {}
    for i in range(network.num_inputs):
        t = network.get_input(i)
        dims = [int(d) for d in t.shape]
        inputs.append(EngineTensor(name=t.name, dims=dims, dtype=dtype_name(t.dtype),
                                   mode="input"))
        if any(d < 0 for d in dims):
            need_profile = True
            if t.name not in shapes:
                raise InputError(f"input {t.name!r} has dynamic shape {dims}; a profile is "
                                 "needed", f"pass --min-shapes/--opt-shapes/--max-shapes "
                                 f"(e.g. --min-shapes {t.name}:"
                                 f"{'x'.join(str(d if d > 0 else 1) for d in dims)} "
                                 f"--max-shapes {t.name}:...), or --shapes for one fixed shape")
            mn, op, mx = shapes[t.name]
            profile.set_shape(t.name, tuple(mn), tuple(op), tuple(mx))
    unknown = set(shapes) - {t.name for t in inputs}
    if unknown:
        raise InputError(f"shapes given for unknown input(s): {', '.join(sorted(unknown))}",
                         f"inputs are: {', '.join(t.name for t in inputs)}")
    built_profiles: list[OptimizationProfile] = []
    if need_profile:
        config.add_optimization_profile(profile)
        built_profiles.append(OptimizationProfile(index=0, shapes={
            t.name: ProfileShape(**dict(zip(("min", "opt", "max"),
                                            ([int(d) for d in v]
                                             for v in profile.get_shape(t.name)))))
            for t in inputs if any(d < 0 for d in t.dims)}))
    for i in range(network.num_outputs):
        t = network.get_output(i)
        outputs.append(EngineTensor(name=t.name, dims=[int(d) for d in t.shape],
                                    dtype=dtype_name(t.dtype), mode="output"))
    layers = network_layers(network)
    t0 = time.perf_counter()
    serialized = builder.build_serialized_network(network, config)
    build_s = time.perf_counter() - t0
    if serialized is None:
        errs = [ln for ln in log_lines if ln.startswith("[ERROR]")] or log_lines
        first = (errs or ["no reason given"])[0]
        hint = "check the profile shapes (--min-shapes/--opt-shapes/--max-shapes) and the model"
        if "contradictory IOptimizationProfile" in first or "different constant values" in first:
            hint = ("dimensions that share one name in the ONNX model must be equal (TensorRT "
                    "forces it): give them equal sizes in every profile shape, or rename the "
                    "dims in the model (`trtcheck inspect MODEL` lists shared names)")
        raise InputError(f"{runtime} failed to build {model_path.name}: {first[:400]}", hint)
    data = memoryview(serialized).tobytes()
    write_plan_atomic(out, data)
    plan = read_plan_info(out)
    return BuildResult(plan_path=out, precision=precision, runtime=runtime,
                       runtime_version=str(trt.__version__), build_s=build_s,
                       plan_size_bytes=len(data), onnx_path=model_path,
                       network_layers=layers, inputs=inputs, outputs=outputs, plan=plan,
                       notes=notes, profiles=built_profiles)


def write_plan_atomic(path: str | Path, data: bytes) -> Path:
    """Write the serialized plan ``data`` to ``path`` with
    :func:`trtcheck.files.replace_atomically` (flushed to disk before the rename): an
    interrupted or failed write never leaves a truncated plan under the final name, and an existing plan there stays intact
    until the new one is complete. Missing folders above ``path`` are created.

    Raises:
        InputError: the folder cannot be created or written (one line, exit 2).
    """
    out = Path(path)

    def fill(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(out, fill, fsync=True)
    except OSError as exc:
        raise InputError(f"cannot write {out}: {exc.strerror or exc}",
                         "choose a writable output folder") from None
    return out


def network_layers(network: Any) -> list[EngineLayer]:
    """Layers of a TensorRT ``INetworkDefinition`` (before fusion): name, type, the data
    type of the first output, and weight counts where the layer exposes them."""
    out: list[EngineLayer] = []
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        outs = []
        for j in range(layer.num_outputs):
            t = layer.get_output(j)
            try:
                dims = [int(d) for d in t.shape]
            except (TypeError, ValueError):
                dims = []
            outs.append(EngineTensor(name=t.name, dims=dims, dtype=dtype_name(t.dtype)))
        ltype = str(layer.type).rsplit(".", 1)[-1]
        out.append(EngineLayer(name=layer.name, layer_type=ltype,
                               precision=outs[0].dtype if outs else None, outputs=outs))
    return out
