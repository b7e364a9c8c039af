"""Inspect an ONNX model without running it: I/O, opsets, ops, parameters, MACs, lints.

:func:`inspect_onnx` is the entry point; it returns a
:class:`trtcheck.results.ModelInspection`. Everything is read from the model file; no
runtime is needed. Weights stored in external-data files are checked (exist, long
enough) but never read: their sizes come from the tensor dims.

The work is done in three modules: :mod:`trtcheck.inspection.onnx.onnx_shapes` (graph I/O
types and shapes, ``--shapes`` checks), :mod:`trtcheck.inspection.onnx.onnx_compute` (the MACs
estimate) and :mod:`trtcheck.inspection.onnx.onnx_lints` (the lints and their codes).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trtcheck.inspection.onnx import trt_onnx_support as trt
from trtcheck.inspection.onnx.onnx_compute import strip_large_tensors, estimate_compute
from trtcheck.inspection.onnx.onnx_lints import (
    lint_checker,
    lint_integer_scalars,
    pb_text,
    lint_model,
)
from trtcheck.inspection.onnx.onnx_shapes import (
    elem_type_bits,
    example_shapes,
    numel,
    concrete_shapes,
    dtype_name,
    graph_inputs,
    tensor_info,
    validate_shapes,
)
from trtcheck.load.onnx_model import (
    external_data_refs,
    iter_graphs,
    load_onnx,
    sha256_file,
)
from trtcheck.results.inspection import ComputeEstimate, ModelInspection
from trtcheck.results.stats import Finding

if TYPE_CHECKING:  # pragma: no cover
    import onnx


def _tensor_bytes(t: Any) -> int:
    bits = elem_type_bits(t.data_type)
    if bits:
        return (numel(t.dims) * bits + 7) // 8
    return sum(len(s) for s in t.string_data)


# --------------------------------------------------------------------------- parameters


def _parameter_stats(model: onnx.ModelProto) -> dict[str, Any]:
    """Parameter counts/bytes by source and stored-tensor counts by dtype."""
    count_by_source: Counter[str] = Counter()
    bytes_total = 0
    dtypes: Counter[str] = Counter()

    def add(t: Any, source: str) -> None:
        nonlocal bytes_total
        count_by_source[source] += numel(t.dims)
        bytes_total += _tensor_bytes(t)
        dtypes[dtype_name(t.data_type)] += 1

    for g in iter_graphs(model.graph):
        for t in g.initializer:
            add(t, "initializer")
        for sp in g.sparse_initializer:
            # a sparse tensor stores nnz values (+ indices); parameters = stored values
            count_by_source["sparse_initializer"] += numel(sp.values.dims)
            bytes_total += _tensor_bytes(sp.values) + _tensor_bytes(sp.indices)
            dtypes[dtype_name(sp.values.data_type)] += 1
        for node in g.node:
            if node.op_type != "Constant" or node.domain not in trt.DEFAULT_DOMAINS:
                continue
            for attr in node.attribute:
                if attr.name == "value" and attr.HasField("t"):
                    add(attr.t, "constant_node")
                elif attr.name == "sparse_value":
                    count_by_source["constant_node"] += numel(attr.sparse_tensor.values.dims)
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


# --------------------------------------------------------------------------- entry point


def inspect_onnx(path: str | os.PathLike[str],
                 shapes: dict[str, list[int]] | None = None,
                 given_inputs: set[str] | frozenset[str] = frozenset()) -> ModelInspection:
    """Inspect an ONNX model file.

    Args:
        path: the ``.onnx`` file. External-data files must sit where the model says
            (they are checked, not read).
        shapes: optional ``{input name: dims}`` (each dim >= 1) for dynamic inputs, as
            parsed from ``--shapes``; used by the compute estimate and the lints.
        given_inputs: inputs whose values the run is given (``--input-value``,
            ``--inputs``): the lints that warn about generated data skip them.

    Returns:
        a :class:`ModelInspection`: I/O with dtypes and shapes (named dynamic dims as
        ``str``, unnamed as ``None``), opsets by domain (the default domain as
        ``"ai.onnx"``), op histogram (non-default domains as ``"domain:Op"``; nodes in
        subgraphs included), parameter count and bytes (initializers, sparse initializers'
        stored values, Constant nodes), stored weight tensors per dtype, external-data
        files, a :class:`ComputeEstimate` (``None`` when dynamic dims other than the
        batch axis have no size) and lints (see :mod:`trtcheck.inspection.onnx.onnx_lints`).

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
    lints += lint_integer_scalars(inputs, given_inputs)
    lints += lint_checker(model, p)

    fixed, how = concrete_shapes(inputs, shapes)
    compute: ComputeEstimate | None = None
    if fixed is not None:
        strip_large_tensors(model)  # values no longer needed: params and lints are done
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
                             remedy=f"give sizes with {example_shapes(inputs)}"))

    return ModelInspection(
        format="onnx",
        path=str(p),
        file_size_bytes=p.stat().st_size,
        sha256=sha256_file(p),
        ir_version=int(model.ir_version),
        opset=opset,
        producer=(f"{pb_text(model.producer_name)} "
                  f"{pb_text(model.producer_version)}".strip() or None),
        graph_name=pb_text(model.graph.name) or None,
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
