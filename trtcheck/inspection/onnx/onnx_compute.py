"""Compute estimate of an ONNX model: MACs of Conv, ConvTranspose, Gemm and MatMul from
ONNX shape inference at fixed input shapes (:func:`estimate_compute`).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from trtcheck.inspection.onnx import trt_onnx_support as trt
from trtcheck.inspection.onnx.onnx_shapes import dims_of, fmt_shape, numel, graph_inputs
from trtcheck.load.onnx_model import iter_graphs
from trtcheck.results.inspection import ComputeEstimate

if TYPE_CHECKING:  # pragma: no cover
    import onnx


#: op types whose MACs :func:`estimate_compute` counts
COUNTED_OPS = ("Conv", "ConvTranspose", "Gemm", "MatMul")


def _op_key(node: Any) -> str:
    """Op type, prefixed with its domain when not the default ONNX domain (bytes that are
    not UTF-8 shown escaped)."""
    from trtcheck.load.onnx_model import pb_text

    op, domain = pb_text(node.op_type), pb_text(node.domain)
    return op if domain in trt.DEFAULT_DOMAINS else f"{domain}:{op}"


# --------------------------------------------------------------------------- compute


def _static(dims: list[Any] | None) -> list[int] | None:
    if dims is None or any(not isinstance(d, int) or d < 0 for d in dims):
        return None
    return [int(d) for d in dims]


def _shape_table(graph: Any) -> dict[str, list[Any] | None]:
    table: dict[str, list[Any] | None] = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        if vi.type.WhichOneof("value") == "tensor_type":
            table[vi.name] = dims_of(vi.type)
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
        return numel(y) * numel(w[1:])
    if op == "ConvTranspose":
        x, w = get(0), get(1)
        if x is None or w is None or len(w) < 2:
            return None
        return numel(x) * numel(w[1:])
    if op == "Gemm":
        a, y = get(0), get(0, out=True)
        if a is None or y is None or len(a) != 2:
            return None
        trans_a = next((int(at.i) for at in node.attribute if at.name == "transA"), 0)
        k = a[0] if trans_a else a[1]
        return numel(y) * k
    if op == "MatMul":
        a, y = get(0), get(0, out=True)
        if a is None or y is None or not a:
            return None
        return numel(y) * a[-1]
    return None


#: shape-inference passes after constant folding, at most
MAX_FOLD_ROUNDS = 4

#: largest tensor (elements) that :func:`_fold_shape_values` evaluates or keeps
FOLD_MAX_ELEMENTS = 4096
_NO_FOLD = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                      "Multinomial", "Bernoulli", "If", "Loop", "Scan"})


def small_value(t: Any) -> Any:
    """``t``'s value as a numpy array when it is inline and has <= FOLD_MAX_ELEMENTS
    elements, else ``None`` (also for dtypes numpy_helper cannot convert)."""
    import onnx
    from onnx import numpy_helper

    if numel(t.dims) > FOLD_MAX_ELEMENTS or t.data_location == onnx.TensorProto.EXTERNAL:
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
        value = small_value(t)
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
                if attr is not None and numel(attr.t.dims) <= FOLD_MAX_ELEMENTS:
                    vals = [numpy_helper.to_array(attr.t)]
            elif node.op_type in ("Shape", "Size"):
                dims = _static(shape.get(node.input[0]))
                if dims is not None:
                    if node.op_type == "Size":
                        vals = [np.array(numel(dims), dtype=np.int64)]
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


def strip_large_tensors(model: onnx.ModelProto) -> int:
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
            if numel(t.dims) > FOLD_MAX_ELEMENTS:
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
    # A negative dim_value (PaddlePaddle's exports write -1 for "dynamic" on their outputs)
    # is not a valid ONNX dim; onnx 1.15's shape inference raises on it ("Inferred shape
    # and existing shape differ ... (1) vs (-1)") even in non-strict mode. It means unknown.
    for vi in [*model.graph.output, *model.graph.value_info]:
        if vi.type.WhichOneof("value") == "tensor_type":
            for dim in vi.type.tensor_type.shape.dim:
                if dim.HasField("dim_value") and dim.dim_value < 0:
                    dim.ClearField("dim_value")
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
            unresolved[_op_key(node)] += 1
        else:
            by_op[_op_key(node)] += macs
            counted += 1
    total = int(sum(by_op.values()))
    shapes_txt = ", ".join(f"{n}:{fmt_shape(d)}" for n, d in input_shapes.items())
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
