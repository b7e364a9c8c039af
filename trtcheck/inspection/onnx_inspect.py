"""Inspect an ONNX model without running it: I/O, opsets, ops, parameters, MACs, lints.

:func:`inspect_onnx` is the entry point; it returns a
:class:`trtcheck.results.ModelInspection`. Everything is read from the model file; no
runtime is needed. Weights stored in external-data files are checked (exist, long
enough) but never read: their sizes come from the tensor dims.

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

import math
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trtcheck.errors import InputError
from trtcheck.inspection import trt_onnx_support as trt
from trtcheck.load.onnx_model import (
    external_data_refs,
    iter_graphs,
    load_onnx,
    sha256_file,
)
from trtcheck.results.inspection import ComputeEstimate, ModelInspection, TensorInfo
from trtcheck.results.stats import Finding

if TYPE_CHECKING:  # pragma: no cover
    import onnx


#: TensorProto.DataType name -> (numpy-style name, bits per element; 0 = variable size)
_DTYPES: dict[str, tuple[str, int]] = {
    "FLOAT": ("float32", 32), "UINT8": ("uint8", 8), "INT8": ("int8", 8),
    "UINT16": ("uint16", 16), "INT16": ("int16", 16), "INT32": ("int32", 32),
    "INT64": ("int64", 64), "STRING": ("string", 0), "BOOL": ("bool", 8),
    "FLOAT16": ("float16", 16), "DOUBLE": ("float64", 64), "UINT32": ("uint32", 32),
    "UINT64": ("uint64", 64), "COMPLEX64": ("complex64", 64),
    "COMPLEX128": ("complex128", 128), "BFLOAT16": ("bfloat16", 16),
    "FLOAT8E4M3FN": ("float8e4m3fn", 8), "FLOAT8E4M3FNUZ": ("float8e4m3fnuz", 8),
    "FLOAT8E5M2": ("float8e5m2", 8), "FLOAT8E5M2FNUZ": ("float8e5m2fnuz", 8),
    "UINT4": ("uint4", 4), "INT4": ("int4", 4), "FLOAT4E2M1": ("float4e2m1", 4),
    "FLOAT8E8M0": ("float8e8m0", 8), "UINT2": ("uint2", 2), "INT2": ("int2", 2),
}

#: op types whose MACs :func:`estimate_compute` counts
COUNTED_OPS = ("Conv", "ConvTranspose", "Gemm", "MatMul")


def dtype_name(elem_type: int) -> str:
    """Numpy-style name of an ONNX ``TensorProto.DataType`` value, e.g. 1 -> ``"float32"``.

    Unknown codes give ``"onnx_type_<n>"``; 0 (UNDEFINED) gives ``"undefined"``.
    """
    from onnx import TensorProto

    try:
        name = TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"onnx_type_{elem_type}"
    if name == "UNDEFINED":
        return "undefined"
    return _DTYPES.get(name, (name.lower(), 0))[0]


def _bits(elem_type: int) -> int:
    from onnx import TensorProto

    try:
        return _DTYPES.get(TensorProto.DataType.Name(elem_type), ("", 0))[1]
    except ValueError:
        return 0


def _dims_of(type_proto: Any) -> list[int | str | None] | None:
    """Shape of a tensor TypeProto: int, dim_param str, or None; None if rank unknown."""
    tt = type_proto.tensor_type
    if not tt.HasField("shape"):
        return None
    out: list[int | str | None] = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            out.append(int(d.dim_value) if d.dim_value >= 0 else None)
        elif d.HasField("dim_param") and d.dim_param:
            out.append(d.dim_param)
        else:
            out.append(None)
    return out


def tensor_info(value_info: Any) -> TensorInfo:
    """A graph input/output ``ValueInfoProto`` as :class:`TensorInfo`.

    Non-tensor types (sequence, map, optional) get dtype ``"sequence"``/``"map"``/
    ``"optional"``/``"sparse_tensor"`` and an empty shape. A tensor of unknown rank gets an
    empty shape and ``rank_known=False``.
    """
    t = value_info.type
    kind = t.WhichOneof("value")
    if kind != "tensor_type":
        return TensorInfo(name=value_info.name, dtype=(kind or "undefined").replace("_type", ""),
                          shape=[])
    dims = _dims_of(t)
    return TensorInfo(name=value_info.name, dtype=dtype_name(t.tensor_type.elem_type),
                      shape=dims or [], rank_known=dims is not None)


def _numel(dims: Any) -> int:
    return int(math.prod(int(d) for d in dims)) if len(dims) else 1


def _tensor_bytes(t: Any) -> int:
    bits = _bits(t.data_type)
    if bits:
        return (_numel(t.dims) * bits + 7) // 8
    return sum(len(s) for s in t.string_data)


def _op_key(node: Any) -> str:
    """Op type, prefixed with its domain when not the default ONNX domain."""
    return node.op_type if node.domain in trt.DEFAULT_DOMAINS else f"{node.domain}:{node.op_type}"


def _fmt_shape(dims: list[int]) -> str:
    return "x".join(str(d) for d in dims)


# --------------------------------------------------------------------------- inputs


def graph_inputs(model: onnx.ModelProto) -> list[Any]:
    """Real graph inputs: IR < 4 models also list initializers as inputs; drop those."""
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _placeholder(t: TensorInfo, axis: int) -> str:
    if axis == 0:
        return "1"
    if len(t.shape) == 4 and axis in (2, 3):
        return "HW"[axis - 2]
    return f"D{axis}"


def _example_shapes(inputs: list[TensorInfo], given: dict[str, list[int]] | None = None) -> str:
    """A ``--shapes`` example: given sizes, fixed dims, 1 for a dynamic axis 0 and a
    placeholder (``H``, ``W`` for axes 2, 3 of a 4-D input, else ``D<axis>``) for the
    other dynamic axes, followed by what to replace."""
    parts = []
    holes: list[str] = []
    for t in inputs:
        if given and t.name in given:
            dims: list[str] = [str(d) for d in given[t.name]]
        else:
            dims = [str(d) if isinstance(d, int) and d > 0 else _placeholder(t, i)
                    for i, d in enumerate(t.shape)]
            holes += [d for d in dims if not d.isdigit()]
        parts.append(f"{t.name}:{'x'.join(dims)}")
    text = "--shapes " + ",".join(parts)
    if holes:
        text += f" (replace {', '.join(dict.fromkeys(holes))} with sizes)"
    return text


def validate_shapes(inputs: list[TensorInfo], shapes: dict[str, list[int]]) -> None:
    """Check user-given shapes against the model's inputs.

    Raises:
        InputError: a name that is not an input, a rank mismatch, a non-positive dim, or a
            dim that contradicts a fixed dim of the model.
    """
    names = [t.name for t in inputs]
    unknown = [n for n in shapes if n not in names]
    if unknown:
        raise InputError(f"--shapes names unknown input(s) {', '.join(map(repr, unknown))}; "
                         f"the model's inputs are {', '.join(map(repr, names))}",
                         f"use {_example_shapes(inputs)}")
    for t in inputs:
        if t.name not in shapes:
            continue
        dims = shapes[t.name]
        if len(dims) != len(t.shape):
            raise InputError(f"--shapes gives {t.name!r} {len(dims)} dims but the model input "
                             f"has {len(t.shape)} {t.shape_text()}",
                             f"use {_example_shapes(inputs)}")
        for i, (d, m) in enumerate(zip(dims, t.shape)):
            if int(d) < 1:
                raise InputError(f"--shapes gives {t.name!r} axis {i} = {d}; dims must be >= 1",
                                 f"use {_example_shapes(inputs)}")
            if isinstance(m, int) and m > 0 and int(d) != m:
                raise InputError(f"--shapes gives {t.name!r} axis {i} = {d}, but the model "
                                 f"fixes it to {m} {t.shape_text()}",
                                 f"use {_example_shapes(inputs)}")


def _dynamic_axes(t: TensorInfo) -> list[int]:
    return [i for i, d in enumerate(t.shape) if not (isinstance(d, int) and d > 0)]


def _dim_label(t: TensorInfo, axis: int) -> str:
    d = t.shape[axis]
    return f"{t.name} axis {axis} ({d})" if isinstance(d, str) else f"{t.name} axis {axis}"


def concrete_shapes(inputs: list[TensorInfo], shapes: dict[str, list[int]] | None
                    ) -> tuple[dict[str, list[int]] | None, str]:
    """The input shapes the compute estimate uses, and how they were chosen.

    User-given shapes win; static inputs keep their dims; when the only dims left
    dynamic are axis 0 (the batch axis) they are set to 1.

    Returns:
        ``(shapes, how)``; ``shapes`` is ``None`` when other dynamic dims are left
        (``how`` then names them).
    """
    shapes = shapes or {}
    out: dict[str, list[int]] = {}
    batch_set: list[str] = []
    missing: list[str] = []
    for t in inputs:
        if t.name in shapes:
            out[t.name] = [int(d) for d in shapes[t.name]]
            continue
        if not t.shape and t.dtype in ("sequence", "map", "optional", "sparse_tensor"):
            missing.append(f"{t.name} (a {t.dtype}, not a tensor)")
            continue
        dims = [d if isinstance(d, int) and d > 0 else None for d in t.shape]
        if dims and dims[0] is None:
            dims[0] = 1
            batch_set.append(t.name)
        gaps = [i for i, d in enumerate(dims) if d is None]
        missing.extend(_dim_label(t, i) for i in gaps)
        if not gaps:
            out[t.name] = [int(d) for d in dims if d is not None]
    if missing:
        return None, "dynamic dims without a size: " + ", ".join(missing)
    if shapes and not batch_set:
        how = "given with --shapes" if len(shapes) == len(inputs) else \
            "given with --shapes, the rest static"
    elif batch_set:
        how = ("batch axis (axis 0) set to 1 for " + ", ".join(batch_set)
               + ("; others given with --shapes" if shapes else ""))
    else:
        how = "static shapes of the model"
    return out, how


# --------------------------------------------------------------------------- parameters


def _parameter_stats(model: onnx.ModelProto) -> dict[str, Any]:
    """Parameter counts/bytes by source and stored-tensor counts by dtype."""
    count_by_source: Counter[str] = Counter()
    bytes_total = 0
    dtypes: Counter[str] = Counter()

    def add(t: Any, source: str) -> None:
        nonlocal bytes_total
        count_by_source[source] += _numel(t.dims)
        bytes_total += _tensor_bytes(t)
        dtypes[dtype_name(t.data_type)] += 1

    for g in iter_graphs(model.graph):
        for t in g.initializer:
            add(t, "initializer")
        for sp in g.sparse_initializer:
            # a sparse tensor stores nnz values (+ indices); parameters = stored values
            count_by_source["sparse_initializer"] += _numel(sp.values.dims)
            bytes_total += _tensor_bytes(sp.values) + _tensor_bytes(sp.indices)
            dtypes[dtype_name(sp.values.data_type)] += 1
        for node in g.node:
            if node.op_type != "Constant" or node.domain not in trt.DEFAULT_DOMAINS:
                continue
            for attr in node.attribute:
                if attr.name == "value" and attr.HasField("t"):
                    add(attr.t, "constant_node")
                elif attr.name == "sparse_value":
                    count_by_source["constant_node"] += _numel(attr.sparse_tensor.values.dims)
                    bytes_total += (_tensor_bytes(attr.sparse_tensor.values)
                                    + _tensor_bytes(attr.sparse_tensor.indices))
                    dtypes[dtype_name(attr.sparse_tensor.values.data_type)] += 1
                elif attr.name in ("value_float", "value_int"):
                    count_by_source["constant_node"] += 1
                    bytes_total += 4 if attr.name == "value_float" else 8
                    dtypes["float32" if attr.name == "value_float" else "int64"] += 1
                elif attr.name in ("value_floats", "value_ints"):
                    n = len(attr.floats) if attr.name == "value_floats" else len(attr.ints)
                    count_by_source["constant_node"] += n
                    bytes_total += n * (4 if attr.name == "value_floats" else 8)
                    dtypes["float32" if attr.name == "value_floats" else "int64"] += 1
    return {"count_by_source": dict(count_by_source), "bytes": bytes_total,
            "dtypes": dict(sorted(dtypes.items()))}


# --------------------------------------------------------------------------- compute


def _static(dims: list[Any] | None) -> list[int] | None:
    if dims is None or any(not isinstance(d, int) or d < 0 for d in dims):
        return None
    return [int(d) for d in dims]


def _shape_table(graph: Any) -> dict[str, list[Any] | None]:
    table: dict[str, list[Any] | None] = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        if vi.type.WhichOneof("value") == "tensor_type":
            table[vi.name] = _dims_of(vi.type)
    for t in graph.initializer:
        table[t.name] = [int(d) for d in t.dims]
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.HasField("t"):
                    table[node.output[0]] = [int(d) for d in attr.t.dims]
    return table


def _node_macs(node: Any, shape: dict[str, list[Any] | None]) -> int | None:
    """MACs of one Conv/ConvTranspose/Gemm/MatMul node, or None if shapes are unknown.

    Formulas (one MAC = one multiply + one add; bias additions not counted):

    * Conv: ``N*Cout*prod(out_spatial) * (Cin/group)*prod(kernel)``
      = ``prod(Y.shape) * prod(W.shape[1:])`` (W is ``[Cout, Cin/group, k...]``).
    * ConvTranspose: ``N*Cin*prod(in_spatial) * (Cout/group)*prod(kernel)``
      = ``prod(X.shape) * prod(W.shape[1:])`` (W is ``[Cin, Cout/group, k...]``).
    * Gemm: ``M*N*K`` = ``prod(Y.shape) * K`` with K from A (``transA`` honoured).
    * MatMul: ``prod(batch)*M*N*K`` = ``prod(Y.shape) * A.shape[-1]`` (numpy matmul
      semantics, broadcast batch dims included in Y).
    """
    def get(i: int, out: bool = False) -> list[int] | None:
        names = node.output if out else node.input
        if i >= len(names) or not names[i]:
            return None
        return _static(shape.get(names[i]))

    op = node.op_type
    if op == "Conv":
        y, w = get(0, out=True), get(1)
        if y is None or w is None or len(w) < 2:
            return None
        return _numel(y) * _numel(w[1:])
    if op == "ConvTranspose":
        x, w = get(0), get(1)
        if x is None or w is None or len(w) < 2:
            return None
        return _numel(x) * _numel(w[1:])
    if op == "Gemm":
        a, y = get(0), get(0, out=True)
        if a is None or y is None or len(a) != 2:
            return None
        trans_a = next((int(at.i) for at in node.attribute if at.name == "transA"), 0)
        k = a[0] if trans_a else a[1]
        return _numel(y) * k
    if op == "MatMul":
        a, y = get(0), get(0, out=True)
        if a is None or y is None or not a:
            return None
        return _numel(y) * a[-1]
    return None


#: shape-inference passes after constant folding, at most
MAX_FOLD_ROUNDS = 4

#: largest tensor (elements) that :func:`_fold_shape_values` evaluates or keeps
FOLD_MAX_ELEMENTS = 4096
_NO_FOLD = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                      "Multinomial", "Bernoulli", "If", "Loop", "Scan"})


def _small_value(t: Any) -> Any:
    """``t``'s value as a numpy array when it is inline and has <= FOLD_MAX_ELEMENTS
    elements, else ``None`` (also for dtypes numpy_helper cannot convert)."""
    import onnx
    from onnx import numpy_helper

    if _numel(t.dims) > FOLD_MAX_ELEMENTS or t.data_location == onnx.TensorProto.EXTERNAL:
        return None
    try:
        return numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 - exotic dtypes (float4, int2...): just not folded
        return None


def _fold_shape_values(model: onnx.ModelProto, shape: dict[str, list[Any] | None]) -> int:
    """Constant-fold the small tensors that feed shape arguments, in place.

    ONNX data propagation stops at ops it does not model (e.g. ``Cast`` to int32 on a
    ``Shape -> Slice -> Cast -> Concat -> Reshape`` chain, as PaddlePaddle exports
    write). This evaluates, with ``onnx.reference`` one node at a time, every
    default-domain node whose inputs are all known and small (<= FOLD_MAX_ELEMENTS
    elements): ``Shape``/``Size`` from the inferred static shapes, ``Constant`` values,
    and inline initializers. Folded nodes are replaced by initializers so the next
    ``infer_shapes`` pass sees their values.

    Returns:
        the number of computing (non-``Constant``) nodes folded; 0 means another shape
        inference pass would learn nothing new.
    """
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    g = model.graph
    known: dict[str, Any] = {}
    for t in g.initializer:
        value = _small_value(t)
        if value is not None:
            known[t.name] = value
    folded: list[int] = []
    for index, node in enumerate(g.node):
        if node.domain not in trt.DEFAULT_DOMAINS or node.op_type in _NO_FOLD or not node.output:
            continue
        vals: list[Any] | None = None
        try:
            if node.op_type == "Constant":
                attr = next((a for a in node.attribute if a.name == "value" and a.HasField("t")),
                            None)
                if attr is not None and _numel(attr.t.dims) <= FOLD_MAX_ELEMENTS:
                    vals = [numpy_helper.to_array(attr.t)]
            elif node.op_type in ("Shape", "Size"):
                dims = _static(shape.get(node.input[0]))
                if dims is not None:
                    if node.op_type == "Size":
                        vals = [np.array(_numel(dims), dtype=np.int64)]
                    else:
                        at = {a.name: int(a.i) for a in node.attribute}
                        start, end = at.get("start", 0), at.get("end", len(dims))
                        vals = [np.array(dims[start:end] if "end" in at else dims[start:],
                                         dtype=np.int64)]
            elif node.input and all((not i) or i in known for i in node.input):
                if any(helper.get_attribute_value(a) is not None and a.type in (
                        onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                        for a in node.attribute):
                    continue
                sub = helper.make_model(
                    helper.make_graph([node], "fold", [], [helper.make_empty_tensor_value_info(o)
                                                           for o in node.output],
                                      initializer=[numpy_helper.from_array(known[i], i)
                                                   for i in dict.fromkeys(node.input) if i]),
                    opset_imports=list(model.opset_import), ir_version=model.ir_version)
                out = ReferenceEvaluator(sub).run(None, {})
                if all(np.asarray(v).size <= FOLD_MAX_ELEMENTS for v in out):
                    vals = [np.asarray(v) for v in out]
        except Exception:  # noqa: BLE001 - a node onnx.reference cannot run: not folded
            vals = None
        if vals is None or len(vals) != len(node.output):
            continue
        for name, v in zip(node.output, vals):
            known[name] = v
        folded.append(index)
    graph_outputs = {o.name for o in g.output}
    removable = [i for i in folded if not any(o in graph_outputs for o in g.node[i].output)]
    if not removable:
        return 0
    new_inits = [numpy_helper.from_array(np.asarray(known[o]), o)
                 for i in removable for o in g.node[i].output if o]
    computed = sum(1 for i in removable if g.node[i].op_type != "Constant")
    for i in sorted(removable, reverse=True):
        del g.node[i]
    g.initializer.extend(new_inits)
    return computed


_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
                "uint64_data", "string_data")


def _strip_large_tensors(model: onnx.ModelProto) -> int:
    """Drop the values of tensors above FOLD_MAX_ELEMENTS elements, in place.

    Shape inference needs only their dims; dropping the bytes keeps the copies that
    ``infer_shapes`` makes small for large models. Returns the bytes-carrying tensors
    stripped.
    """
    n = 0
    for g in iter_graphs(model.graph):
        tensors = list(g.initializer) + [a.t for node in g.node if node.op_type == "Constant"
                                         for a in node.attribute if a.HasField("t")]
        for t in tensors:
            if _numel(t.dims) > FOLD_MAX_ELEMENTS:
                for f in _DATA_FIELDS:
                    t.ClearField(f)
                n += 1
    return n


def estimate_compute(model: onnx.ModelProto, input_shapes: dict[str, list[int]],
                     how: str) -> tuple[ComputeEstimate | None, str | None]:
    """Count the MACs of Conv, ConvTranspose, Gemm and MatMul at fixed input shapes.

    Method: the graph inputs are set to ``input_shapes``, then
    ``onnx.shape_inference.infer_shapes(strict_mode=False, data_prop=True)`` propagates
    shapes (data propagation resolves Shape->Gather->Reshape chains); while counted nodes
    still have unknown shapes, small shape-computing nodes are constant-folded
    (:func:`_fold_shape_values`) and inference runs again (at most
    :data:`MAX_FOLD_ROUNDS` times). Each counted node's
    MACs come from the inferred shapes with the formulas of :func:`_node_macs`. Nodes of
    the main graph only (If/Loop/Scan bodies are listed as uncounted op types).
    ``flops = 2 * macs``. Modifies ``model`` (input shapes, folded nodes); pass a model
    you own.

    Args:
        model: the model (external data need not be loaded).
        input_shapes: ``{input name: dims}`` for every graph input, dims >= 1.
        how: how the shapes were chosen, for ``method``.

    Returns:
        ``(estimate, None)`` or ``(None, reason)`` when shape inference raised.
    """
    import onnx

    for vi in graph_inputs(model):
        dims = input_shapes.get(vi.name)
        if dims is None or vi.type.WhichOneof("value") != "tensor_type":
            continue
        shp = vi.type.tensor_type.shape
        shp.ClearField("dim")
        for d in dims:
            shp.dim.add().dim_value = int(d)
    uncounted = sorted({_op_key(n) for n in model.graph.node
                        if not (n.domain in trt.DEFAULT_DOMAINS and n.op_type in COUNTED_OPS)})
    folded_total = 0
    for _round in range(MAX_FOLD_ROUNDS + 1):
        try:
            inferred = onnx.shape_inference.infer_shapes(model, check_type=False,
                                                         strict_mode=False, data_prop=True)
        except Exception as exc:  # noqa: BLE001 - onnx raises InferenceError, RuntimeError...
            return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        shape = _shape_table(inferred.graph)
        counted_nodes = [n for n in inferred.graph.node
                         if n.domain in trt.DEFAULT_DOMAINS and n.op_type in COUNTED_OPS]
        if _round == MAX_FOLD_ROUNDS or all(_node_macs(n, shape) is not None
                                            for n in counted_nodes):
            break
        n_folded = _fold_shape_values(model, shape)
        if n_folded == 0:
            break
        folded_total += n_folded
    by_op: Counter[str] = Counter()
    counted = 0
    unresolved: Counter[str] = Counter()
    for node in counted_nodes:
        macs = _node_macs(node, shape)
        if macs is None:
            unresolved[node.op_type] += 1
        else:
            by_op[node.op_type] += macs
            counted += 1
    total = int(sum(by_op.values()))
    shapes_txt = ", ".join(f"{n}:{_fmt_shape(d)}" for n, d in input_shapes.items())
    method = (f"MACs of Conv, ConvTranspose, Gemm and MatMul nodes of the main graph, from "
              f"ONNX shape inference (onnx {onnx.__version__}, data propagation on) at "
              f"{shapes_txt} ({how}). Conv: N*Cout*Hout*Wout*(Cin/group)*kh*kw; "
              f"ConvTranspose: N*Cin*Hin*Win*(Cout/group)*kh*kw; Gemm: M*N*K; "
              f"MatMul: prod(batch)*M*N*K. Bias adds, normalisation, pooling, activations "
              f"and elementwise ops are not counted; FLOPs = 2 x MACs.")
    if folded_total:
        method += (f" {folded_total} small shape-computing node(s) were constant-folded with "
                   "onnx.reference so that shape inference could resolve Reshape/Resize "
                   "targets.")
    if unresolved:
        method += (" Not counted because their shapes stayed unknown: "
                   + ", ".join(f"{n} {op}" for op, n in sorted(unresolved.items())) + ".")
    return ComputeEstimate(
        input_shapes={k: list(v) for k, v in input_shapes.items()},
        macs=total, flops=2 * total,
        macs_by_op_type=dict(sorted(by_op.items(), key=lambda kv: -kv[1])),
        counted_nodes=counted,
        uncounted_op_types=uncounted,
        unresolved_nodes=int(sum(unresolved.values())),
        method=method,
    ), None


# --------------------------------------------------------------------------- lints


def _distinct_dims(t: TensorInfo) -> list[int | str]:
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
        ins = {t.name: _distinct_dims(t) for t in inputs}
        outs = {t.name: _distinct_dims(t) for t in outputs}
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
                msg += (f" The given shape {t.name}:{_fmt_shape(given)} has different sizes "
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
        axes = _dynamic_axes(t)
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
            remedy=f"give concrete sizes, e.g. {_example_shapes(inputs)}",
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


def _pb_text(value: str | bytes) -> str:
    """A protobuf string field as text: protobuf hands over ``bytes`` when the field is
    not valid UTF-8; each bad byte is then shown as ``\\xNN``."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return value


def _lint_integer_scalars(inputs: list[TensorInfo]) -> list[Finding]:
    """Integer inputs of one element (a scalar, ``[1]``): a sample rate, a length, a
    count or a flag. Generated data fills integers with 0 or 1
    (:func:`trtcheck.load.inputs.make_feed`), which for a sample rate or a length is a
    degenerate run (a 0-length sequence, a 1 Hz signal), so the user is told to give the
    real value."""
    out: list[Finding] = []
    for t in inputs:
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
        value = _small_value(t)
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


def _lint_checker(model: onnx.ModelProto, path: Path) -> list[Finding]:
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


# --------------------------------------------------------------------------- entry point


def inspect_onnx(path: str | os.PathLike[str],
                 shapes: dict[str, list[int]] | None = None) -> ModelInspection:
    """Inspect an ONNX model file.

    Args:
        path: the ``.onnx`` file. External-data files must sit where the model says
            (they are checked, not read).
        shapes: optional ``{input name: dims}`` (each dim >= 1) for dynamic inputs, as
            parsed from ``--shapes``; used by the compute estimate and the lints.

    Returns:
        a :class:`ModelInspection`: I/O with dtypes and shapes (named dynamic dims as
        ``str``, unnamed as ``None``), opsets by domain (the default domain as
        ``"ai.onnx"``), op histogram (non-default domains as ``"domain:Op"``; nodes in
        subgraphs included), parameter count and bytes (initializers, sparse initializers'
        stored values, Constant nodes), stored weight tensors per dtype, external-data
        files, a :class:`ComputeEstimate` (``None`` when dynamic dims other than the
        batch axis have no size) and lints (see the module docstring).

    Raises:
        InputError: a file that is not a loadable ONNX model (see
            :func:`trtcheck.load.onnx_model.load_onnx`), or ``shapes`` that do not fit
            the model's inputs.
    """
    p = Path(path)
    model = load_onnx(p, load_external_data=False)
    shapes = {k: [int(d) for d in v] for k, v in (shapes or {}).items()}
    inputs = [tensor_info(v) for v in graph_inputs(model)]
    outputs = [tensor_info(v) for v in model.graph.output]
    validate_shapes(inputs, shapes)

    opset: dict[str, int] = {}
    for o in model.opset_import:
        opset["ai.onnx" if o.domain in trt.DEFAULT_DOMAINS else o.domain] = int(o.version)
    hist: Counter[str] = Counter()
    nodes = 0
    for g in iter_graphs(model.graph):
        for node in g.node:
            nodes += 1
            hist[node.op_type if node.domain in trt.DEFAULT_DOMAINS
                 else f"{node.domain}:{node.op_type}"] += 1
    params = _parameter_stats(model)
    ext = sorted(external_data_refs(model))

    lints = lint_model(model, inputs, outputs, opset, shapes)
    lints += _lint_integer_scalars(inputs)
    lints += _lint_checker(model, p)

    fixed, how = concrete_shapes(inputs, shapes)
    compute: ComputeEstimate | None = None
    if fixed is not None:
        _strip_large_tensors(model)  # values no longer needed: params and lints are done
        compute, failure = estimate_compute(model, fixed, how)
        if failure is not None:
            lints.append(Finding(code="onnx-shape-inference-failed", severity="info",
                                 message=f"no MACs estimate: ONNX shape inference failed ({failure})",
                                 remedy="check the model with onnx.checker; give --shapes "
                                        "if dynamic dims are involved"))
        elif compute is not None and compute.unresolved_nodes:
            lints.append(Finding(
                code="onnx-compute-unresolved", severity="info",
                message=(f"{compute.unresolved_nodes} Conv/Gemm/MatMul node(s) have shapes "
                         "that shape inference could not resolve; the MACs estimate leaves "
                         "them out"),
                remedy="give all input sizes with --shapes; custom ops block shape inference"))
    elif not any(f.code == "onnx-dynamic-input-no-shape" for f in lints):
        lints.append(Finding(code="onnx-dynamic-input-no-shape", severity="warning",
                             message=f"no MACs estimate: {how}",
                             remedy=f"give sizes with {_example_shapes(inputs)}"))

    return ModelInspection(
        format="onnx",
        path=str(p),
        file_size_bytes=p.stat().st_size,
        sha256=sha256_file(p),
        ir_version=int(model.ir_version),
        opset=opset,
        producer=(f"{_pb_text(model.producer_name)} "
                  f"{_pb_text(model.producer_version)}".strip() or None),
        graph_name=_pb_text(model.graph.name) or None,
        inputs=inputs,
        outputs=outputs,
        node_count=nodes,
        op_histogram=dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))),
        parameter_count=int(sum(params["count_by_source"].values())),
        parameter_bytes=int(params["bytes"]),
        parameter_count_by_source=params["count_by_source"],
        initializer_dtypes=params["dtypes"],
        external_data_files=ext,
        compute=compute,
        lints=lints,
    )
