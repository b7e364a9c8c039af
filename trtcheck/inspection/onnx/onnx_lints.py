"""Static lints of an ONNX model: what TensorRT will refuse or treat differently.

:func:`lint_model` runs the lints that need the model, its I/O and the given shapes; the
entry point :func:`trtcheck.inspection.onnx.onnx_inspect.inspect_onnx` adds the rest.

Lint codes (stable; gates and tests match on them), see :func:`lint_model`:

==============================  =========  ==============================================
code                            severity   meaning
==============================  =========  ==============================================
onnx-shared-dim-name            warning    two axes of one tensor share a dynamic dim
                                           name; TensorRT forces them equal (``error``
                                           when the given ``--shapes`` differ there, also
                                           across inputs sharing a name)
onnx-dynamic-input-no-shape     warning    dynamic dims with no size given (``info``
                                           when only the batch axis is dynamic)
onnx-fixed-batch                info       every input fixes axis 0: no batch sweep
onnx-integer-scalar-input       warning    an integer input of one element (sample rate,
                                           length): generated data gives it 0 or 1
onnx-fp64                       warning    float64 tensors (TensorRT casts to float32)
onnx-int64-io                   info       int64 inputs/outputs (TensorRT 8.x casts down)
onnx-string-tensor              error      string inputs/outputs (TensorRT has no strings)
onnx-trt-unsupported-op         error      op marked ``N`` in onnx-tensorrt's table
onnx-trt-unlisted-op            info       default-domain op not in that table
onnx-custom-domain-op           warning    op outside the default domain (needs a plugin)
onnx-trt-constant-attr          error      Constant with sparse_value/value_string(s)
onnx-trt-op-restriction         error      node settings the table's Restrictions forbid
                                           (Resize modes, pool dilations, TopK, Q/DQ
                                           zero points, ScatterND reduction, LSTM)
onnx-opset-range                warning    default opset outside TensorRT's 9..24
onnx-checker                    warning    ``onnx.checker.check_model`` rejects the model
onnx-shape-inference-failed     info       no MACs: shape inference raised
onnx-compute-unresolved         info       some Conv/Gemm/MatMul shapes stayed unknown
==============================  =========  ==============================================
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trtcheck.inspection.onnx import trt_onnx_support as trt
from trtcheck.inspection.onnx.onnx_compute import small_value
from trtcheck.inspection.onnx.onnx_shapes import dynamic_axes_of, example_shapes, fmt_shape
from trtcheck.load.onnx_model import external_data_refs, iter_graphs
from trtcheck.results.inspection import TensorInfo
from trtcheck.results.stats import Finding

if TYPE_CHECKING:  # pragma: no cover
    import onnx


# --------------------------------------------------------------------------- lints


def distinct_dims(t: TensorInfo) -> list[int | str]:
    """``t``'s dims for ``update_inputs_outputs_dims``: ints kept, unnamed -> -1 (onnx
    then makes a unique name), a name shared by several axes -> ``<tensor>_axis<i>``."""
    names = [d for d in t.shape if isinstance(d, str)]
    out: list[int | str] = []
    for i, d in enumerate(t.shape):
        if isinstance(d, str):
            out.append(d if names.count(d) == 1 else f"{t.name}_axis{i}")
        else:
            out.append(-1 if d is None or d < 0 else d)
    return out


def _rename_remedy(inputs: list[TensorInfo], outputs: list[TensorInfo]) -> str:
    if len(inputs) + len(outputs) <= 4 and all(t.rank_known for t in inputs + outputs):
        ins = {t.name: distinct_dims(t) for t in inputs}
        outs = {t.name: distinct_dims(t) for t in outputs}
        call = (f"onnx.tools.update_model_dims.update_inputs_outputs_dims(model, {ins!r}, "
                f"{outs!r})")
    else:
        call = ("onnx.tools.update_model_dims.update_inputs_outputs_dims(model, input_dims, "
                "output_dims) with a distinct name per dynamic axis")
    return (f"give each axis its own dim name, e.g. {call}, then onnx.save the model; or "
            "build TensorRT profiles with equal sizes on these axes only")


def _lint_shared_names(tensors: list[TensorInfo], shapes: dict[str, list[int]],
                       remedy: str) -> list[Finding]:
    out: list[Finding] = []
    for t in tensors:
        axes_by_name: dict[str, list[int]] = {}
        for i, d in enumerate(t.shape):
            if isinstance(d, str):
                axes_by_name.setdefault(d, []).append(i)
        for name, axes in axes_by_name.items():
            if len(axes) < 2:
                continue
            axes_txt = " and ".join(str(a) for a in axes)
            msg = (f"{t.name!r} axes {axes_txt} share the dynamic dim name {name!r}: "
                   "TensorRT's ONNX parser treats equal dim names as one dimension and forces "
                   "them equal, so an optimization profile with different sizes on these axes "
                   "fails to build (\"contradictory IOptimizationProfile kMIN/kMAX\"); "
                   "ONNX Runtime is not affected.")
            severity = "warning"
            given = shapes.get(t.name)
            if given is not None and len({given[a] for a in axes}) > 1:
                severity = "error"
                msg += (f" The given shape {t.name}:{fmt_shape(given)} has different sizes "
                        "on those axes, so TensorRT cannot build it.")
            out.append(Finding(
                code="onnx-shared-dim-name", severity=severity, message=msg, where=t.name,
                remedy=remedy))
    return out


def _lint_shared_names_across(inputs: list[TensorInfo],
                              shapes: dict[str, list[int]]) -> list[Finding]:
    """A dim name used by several inputs whose given sizes differ (e.g. ``batch`` 1 vs 4).

    Sharing a name across inputs is usually intended (one batch axis); TensorRT then
    forces those axes equal, so given shapes that differ there cannot build either.
    """
    sizes: dict[str, dict[str, int]] = {}
    for t in inputs:
        given = shapes.get(t.name)
        if given is None:
            continue
        for i, d in enumerate(t.shape):
            if isinstance(d, str):
                sizes.setdefault(d, {})[f"{t.name} axis {i}"] = given[i]
    out = []
    for name, where in sizes.items():
        tensors = {w.rsplit(" axis ", 1)[0] for w in where}
        if len(tensors) > 1 and len(set(where.values())) > 1:
            detail = ", ".join(f"{w} = {v}" for w, v in where.items())
            out.append(Finding(
                code="onnx-shared-dim-name", severity="error", where=", ".join(sorted(tensors)),
                message=(f"dim name {name!r} is shared by several inputs but the given shapes "
                         f"differ there ({detail}): TensorRT forces axes with one name equal, "
                         "so it cannot build these shapes"),
                remedy="give equal sizes to axes that share a dim name"))
    return out


def _lint_dynamic(inputs: list[TensorInfo], shapes: dict[str, list[int]]) -> list[Finding]:
    out: list[Finding] = []
    for t in inputs:
        if t.name in shapes:
            continue
        axes = dynamic_axes_of(t)
        if not axes:
            continue
        labels = ", ".join(f"axis {i} ({t.shape[i]})" if isinstance(t.shape[i], str)
                           else f"axis {i} (unnamed)" for i in axes)
        batch_only = axes == [0]
        out.append(Finding(
            code="onnx-dynamic-input-no-shape",
            severity="info" if batch_only else "warning",
            message=(f"input {t.name!r} {t.shape_text()} has dynamic dims with no size given: "
                     f"{labels}" + ("; the compute estimate uses batch 1" if batch_only else
                                    "; the compute estimate needs them, and so do bench and "
                                    "TensorRT optimization profiles")),
            remedy=f"give concrete sizes, e.g. {example_shapes(inputs)}",
            where=t.name))
    if inputs and all(t.shape and isinstance(t.shape[0], int) and t.shape[0] > 0
                      for t in inputs):
        b = inputs[0].shape[0]
        out.append(Finding(
            code="onnx-fixed-batch", severity="info",
            message=(f"every input fixes axis 0 (e.g. {inputs[0].name!r} {inputs[0].shape_text()}):"
                     f" the model runs at batch {b} only, so a batch-size sweep is not possible"),
            remedy="re-export with a dynamic batch axis (e.g. torch.onnx.export "
                   "dynamic_axes={'input': {0: 'batch'}}) to measure batching"))
    return out


def pb_text(value: str | bytes) -> str:
    """A protobuf string field as text: protobuf hands over ``bytes`` when the field is
    not valid UTF-8; each bad byte is then shown as ``\\xNN``."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return value


def lint_integer_scalars(inputs: list[TensorInfo],
                         given: set[str] | frozenset[str] = frozenset()) -> list[Finding]:
    """Integer inputs of one element (a scalar, ``[1]``): a sample rate, a length, a
    count or a flag. Generated data fills integers with 0 or 1
    (:func:`trtcheck.load.inputs.make_feed`), which for a sample rate or a length is a
    degenerate run (a 0-length sequence, a 1 Hz signal), so the user is told to give the
    real value. ``given``: inputs whose value was given (``--input-value``, ``--inputs``):
    they are fed that value, so they get no finding."""
    out: list[Finding] = []
    for t in inputs:
        if t.name in given:
            continue
        if not t.rank_known or not t.dtype.startswith(("int", "uint")):
            continue
        if not all(isinstance(d, int) and d == 1 for d in t.shape):
            continue
        kind = "scalar" if not t.shape else f"of one element {t.shape_text()}"
        out.append(Finding(
            code="onnx-integer-scalar-input", severity="warning",
            message=(f"input {t.name!r} is a {t.dtype} {kind} (a length, rate, count or "
                     "flag?); "
                     "generated data gives it 0 or 1 at random, which measures a degenerate "
                     "run for a sample rate or a length"),
            remedy=f"give its real value, e.g. --input-value {t.name}=16000, or --inputs "
                   "data.npz",
            where=t.name))
    return out


def _lint_dtypes(model: onnx.ModelProto, inputs: list[TensorInfo],
                 outputs: list[TensorInfo]) -> list[Finding]:
    from onnx import TensorProto

    out: list[Finding] = []
    io = inputs + outputs
    fp64_io = [t.name for t in io if t.dtype == "float64"]
    fp64_weights = 0
    fp64_casts = 0
    for g in iter_graphs(model.graph):
        fp64_weights += sum(1 for t in g.initializer if t.data_type == TensorProto.DOUBLE)
        for node in g.node:
            if node.op_type == "Cast" and any(a.name == "to" and a.i == TensorProto.DOUBLE
                                              for a in node.attribute):
                fp64_casts += 1
            if node.op_type == "Constant":
                fp64_weights += sum(1 for a in node.attribute
                                    if a.HasField("t") and a.t.data_type == TensorProto.DOUBLE)
    if fp64_io or fp64_weights or fp64_casts:
        parts = []
        if fp64_io:
            parts.append("inputs/outputs " + ", ".join(map(repr, fp64_io)))
        if fp64_weights:
            parts.append(f"{fp64_weights} weight tensor(s)")
        if fp64_casts:
            parts.append(f"{fp64_casts} Cast node(s) to DOUBLE")
        out.append(Finding(
            code="onnx-fp64", severity="warning",
            message=("float64 (DOUBLE) in " + "; ".join(parts) + ": TensorRT has no float64 "
                     "math and casts DOUBLE down to FLOAT, clamping values to +-FLT_MAX "
                     f"({trt.SOURCE}); results can differ from ONNX Runtime and the casts cost "
                     "time"),
            remedy="export in float32 (e.g. model.float() before torch.onnx.export) and "
                   "remove Casts to double"))
    i64 = [t.name for t in io if t.dtype == "int64"]
    if i64:
        out.append(Finding(
            code="onnx-int64-io", severity="info",
            message=("int64 inputs/outputs " + ", ".join(map(repr, i64)) + ": TensorRT 8.x "
                     "casts INT64 down to INT32 (clamping to +-INT_MAX, per onnx-tensorrt "
                     "8.x docs/operators.md); TensorRT 10 supports INT64 natively"),
            remedy="values beyond +-2^31 need TensorRT 10+; otherwise nothing to do"))
    strings = [t.name for t in io if t.dtype == "string"]
    if strings:
        out.append(Finding(
            code="onnx-string-tensor", severity="error",
            message=("string inputs/outputs " + ", ".join(map(repr, strings))
                     + f": TensorRT has no string type ({trt.SOURCE} lists none)"),
            remedy="keep tokenisation/text handling outside the TensorRT engine"))
    return out


def _lint_ops(model: onnx.ModelProto) -> list[Finding]:
    out: list[Finding] = []
    local_functions = {(f.domain, f.name) for f in model.functions}
    unsupported: Counter[str] = Counter()
    unlisted: Counter[str] = Counter()
    custom: Counter[str] = Counter()
    bad_constants = 0
    for g in iter_graphs(model.graph):
        for node in g.node:
            if node.domain in trt.DEFAULT_DOMAINS:
                s = trt.support_of(node.op_type)
                if s == "N":
                    unsupported[node.op_type] += 1
                elif s == "unlisted" and (node.domain, node.op_type) not in local_functions:
                    unlisted[node.op_type] += 1
                if node.op_type == "Constant" and any(
                        a.name in ("sparse_value", "value_string", "value_strings")
                        for a in node.attribute):
                    bad_constants += 1
            elif (node.domain, node.op_type) not in local_functions:
                custom[f"{node.domain}:{node.op_type}"] += 1
    if unsupported:
        ops = ", ".join(f"{op} ({n})" for op, n in sorted(unsupported.items()))
        out.append(Finding(
            code="onnx-trt-unsupported-op", severity="error",
            message=f"TensorRT's ONNX parser does not import {ops} ({trt.SOURCE}: Supported = N)",
            remedy="rewrite these ops at export time, provide a TensorRT plugin with the same "
                   "op name, or run that part of the model outside TensorRT"))
    if unlisted:
        ops = ", ".join(f"{op} ({n})" for op, n in sorted(unlisted.items()))
        out.append(Finding(
            code="onnx-trt-unlisted-op", severity="info",
            message=f"ops not listed in {trt.SOURCE}: {ops}; support unknown",
            remedy="try parsing with TensorRT (polygraphy inspect model --mode=basic "
                   "--show layers, or trtexec --onnx) to confirm"))
    if custom:
        ops = ", ".join(f"{op} ({n})" for op, n in sorted(custom.items()))
        ms = any(k.startswith("com.microsoft:") for k in custom)
        out.append(Finding(
            code="onnx-custom-domain-op", severity="warning",
            message=(f"ops outside the default ONNX domain: {ops}; TensorRT's parser imports "
                     "them only through a plugin registered under the same op name"
                     + ("; com.microsoft ops are ONNX Runtime contrib ops (often inserted by "
                        "ORT's graph optimizer)" if ms else "")),
            remedy=("load a TensorRT plugin library that implements them, or export the "
                    "model without them" + (" (save the model before ORT optimisation)"
                                            if ms else ""))))
    if bad_constants:
        out.append(Finding(
            code="onnx-trt-constant-attr", severity="error",
            message=(f"{bad_constants} Constant node(s) use sparse_value or value_string(s), "
                     f"which TensorRT's parser does not support ({trt.SOURCE})"),
            remedy="store these constants as dense initializers"))
    return out


def _small_constants(graph: Any) -> dict[str, Any]:
    """Values of a graph's inline initializers and Constant nodes (<= FOLD_MAX_ELEMENTS)."""
    out: dict[str, Any] = {}
    tensors = [(t.name, t) for t in graph.initializer]
    tensors += [(n.output[0], a.t) for n in graph.node if n.op_type == "Constant" and n.output
                for a in n.attribute if a.name == "value" and a.HasField("t")]
    for name, t in tensors:
        value = small_value(t)
        if value is not None:
            out[name] = value
    return out


def _restriction_problems(node: Any, consts: dict[str, Any]) -> list[str]:
    """Why ``node`` breaks a restriction of onnx-tensorrt's support table (TensorRT 10.15)."""
    import numpy as np
    from onnx import helper

    at = {a.name: helper.get_attribute_value(a) for a in node.attribute}

    def s(name: str, default: str) -> str:
        v = at.get(name, default)
        return v.decode() if isinstance(v, bytes) else str(v)

    op = node.op_type
    probs: list[str] = []
    if op == "Resize":
        if s("mode", "nearest") not in trt.RESIZE_MODES:
            probs.append(f"Resize mode {s('mode', 'nearest')!r} (supported: nearest, linear)")
        ctm = s("coordinate_transformation_mode", "half_pixel")
        if ctm not in trt.RESIZE_COORDINATE_MODES:
            probs.append(f"Resize coordinate_transformation_mode {ctm!r}")
        if s("mode", "nearest") == "nearest" and \
                s("nearest_mode", "round_prefer_floor") not in trt.RESIZE_NEAREST_MODES:
            probs.append(f"Resize nearest_mode {s('nearest_mode', '')!r}")
        if int(at.get("antialias", 0)):
            probs.append("Resize antialias=1 (antialiasing is not supported)")
        if s("keep_aspect_ratio_policy", "stretch") != "stretch":
            probs.append("Resize keep_aspect_ratio_policy other than 'stretch'")
    elif op in ("MaxPool", "AveragePool", "LpPool"):
        if any(int(d) != 1 for d in at.get("dilations", [])):
            probs.append(f"{op} with dilations {list(at['dilations'])} (must be empty or all ones)")
        if op == "MaxPool" and len(node.output) > 1 and node.output[1]:
            probs.append("MaxPool Indices output (unsupported)")
    elif op == "TopK":
        if int(at.get("sorted", 1)) != 1:
            probs.append("TopK sorted=0 (must be 1)")
        k = consts.get(node.input[1]) if len(node.input) > 1 else None
        if k is not None and np.asarray(k).size == 1 and int(np.asarray(k).ravel()[0]) >= trt.TOPK_MAX_K:
            probs.append(f"TopK K={int(np.asarray(k).ravel()[0])} (must be < {trt.TOPK_MAX_K})")
    elif op == "ScatterND" and s("reduction", "none") != "none":
        probs.append(f"ScatterND reduction {s('reduction', 'none')!r} (only 'none')")
    elif op == "LSTM" and (int(at.get("input_forget", 0)) or int(at.get("layout", 0))):
        probs.append("LSTM input_forget/layout other than 0")
    elif op in ("QuantizeLinear", "DequantizeLinear") and len(node.input) > 2 and node.input[2]:
        zp = consts.get(node.input[2])
        if zp is not None and np.any(np.asarray(zp).astype(np.float64) != 0):
            probs.append(f"{op} with a non-zero zero point (must be zero)")
    return probs


def _lint_restrictions(model: onnx.ModelProto) -> list[Finding]:
    found: Counter[str] = Counter()
    for g in iter_graphs(model.graph):
        consts: dict[str, Any] | None = None
        for node in g.node:
            if node.domain not in trt.DEFAULT_DOMAINS or node.op_type not in (
                    "Resize", "MaxPool", "AveragePool", "LpPool", "TopK", "ScatterND", "LSTM",
                    "QuantizeLinear", "DequantizeLinear"):
                continue
            if consts is None:
                consts = _small_constants(g)
            for problem in _restriction_problems(node, consts):
                found[problem] += 1
    if not found:
        return []
    items = "; ".join(f"{p} x{n}" if n > 1 else p for p, n in found.items())
    return [Finding(code="onnx-trt-op-restriction", severity="error",
                    message=f"TensorRT's ONNX parser rejects these node settings: {items} "
                            f"({trt.SOURCE}, Restrictions column)",
                    remedy="change the op's attributes at export time (e.g. Resize to "
                           "linear/nearest with a supported coordinate mode) or replace the op")]


def _lint_opset(opset: dict[str, int]) -> list[Finding]:
    v = opset.get("ai.onnx")
    if v is None or trt.OPSET_MIN <= v <= trt.OPSET_MAX:
        return []
    return [Finding(
        code="onnx-opset-range", severity="warning",
        message=(f"default-domain opset {v} is outside the range TensorRT {trt.TRT_VERSION} "
                 f"imports (opset {trt.OPSET_MIN} to {trt.OPSET_MAX}, {trt.SOURCE})"),
        remedy=("convert it with onnx.version_converter.convert_version(model, "
                f"{min(max(v, trt.OPSET_MIN), trt.OPSET_MAX)}) or re-export at that opset"))]


def lint_checker(model: onnx.ModelProto, path: Path) -> list[Finding]:
    """Findings of ``onnx.checker`` on ``model`` (by ``path`` when its weights are external or
    the proto nears protobuf's 2 GiB limit); an empty list when it passes."""
    import onnx

    try:
        # by path when weights live in external files (the checker resolves them from
        # the model's folder) or when the proto nears protobuf's 2 GiB limit
        if external_data_refs(model) or model.ByteSize() > 1_800_000_000:
            onnx.checker.check_model(str(path))
        else:
            onnx.checker.check_model(model)
    except Exception as exc:  # noqa: BLE001 - ValidationError and others: a lint, not fatal
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        return [Finding(code="onnx-checker", severity="warning",
                        message=f"onnx.checker.check_model (onnx {onnx.__version__}) rejects "
                                f"the model: {first}",
                        remedy="re-export with a current exporter; ONNX Runtime or TensorRT "
                               "may still load it")]
    return []


def lint_model(model: onnx.ModelProto, inputs: list[TensorInfo], outputs: list[TensorInfo],
               opset: dict[str, int], shapes: dict[str, list[int]]) -> list[Finding]:
    """All static lints of the module table, in a fixed order."""
    return (_lint_shared_names(inputs + outputs, shapes, _rename_remedy(inputs, outputs))
            + _lint_shared_names_across(inputs, shapes) + _lint_dynamic(inputs, shapes)
            + _lint_dtypes(model, inputs, outputs) + _lint_ops(model)
            + _lint_restrictions(model) + _lint_opset(opset))
