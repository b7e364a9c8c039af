"""FP16 copies of FP32 ONNX models, with ONNX Runtime's converter.

:func:`convert_to_fp16` calls ``onnxruntime.transformers.float16.convert_float_to_float16``
(shipped in both ``onnxruntime`` and ``onnxruntime-gpu``) with ``keep_io_types=True``:
inputs and outputs stay float32 (Casts inside), so the FP16 model takes the same feeds as
the FP32 one. The converter keeps tensor names; the tensors it adds are Casts named
``<x>_cast_to_<node>`` / ``<node>_input_cast_<i>`` / ``<node>_output_cast_<i>``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from trtcheck.errors import InputError

FP16_WEIGHT_MAX = 1e4
"""Constants of larger magnitude are clamped to +-1e4 by the conversion. FP16's largest
finite value is 65504; the 1e4 bound (the default of onnxconverter-common's converter, from
which ONNX Runtime's is derived) leaves headroom so that a product of a clamped weight and
an activation of order 1-6 stays finite in FP16."""

FP16_WEIGHT_MIN = 1e-7
"""Non-zero constants of smaller magnitude are raised to +-1e-7 (FP16's smallest
subnormal is about 5.96e-8; same source as :data:`FP16_WEIGHT_MAX`)."""

EXTRA_BLOCKED_OPS = ("Resize",)
"""Ops kept in FP32 beside the converter's ``DEFAULT_OP_BLOCK_LIST``: Resize computes
sampling coordinates from its scales, which FP16 rounds (onnxconverter-common blocks it
by default; ONNX Runtime's list does not)."""


def fp16_op_block_list(extra: Sequence[str] = ()) -> list[str]:
    """Op types the conversion keeps in FP32: the converter's ``DEFAULT_OP_BLOCK_LIST``
    (NonMaxSuppression, TopK, RoiAlign, Range, CumSum, Min, Max, Upsample and the ML ops:
    range- or index-sensitive, or without an FP16 kernel), :data:`EXTRA_BLOCKED_OPS`, and
    ``extra`` (in that order, without repeats).

    Raises:
        EnvironmentProblem: neither onnxruntime nor onnxruntime-gpu is installed.
    """
    float16 = _float16_module()
    out: list[str] = []
    for op in [*float16.DEFAULT_OP_BLOCK_LIST, *EXTRA_BLOCKED_OPS, *extra]:
        if op not in out:
            out.append(op)
    return out


def _float16_module() -> Any:
    from trtcheck.backends.onnxruntime import import_onnxruntime

    import_onnxruntime()  # one clear error when ONNX Runtime is missing
    from onnxruntime.transformers import float16

    return float16


def holds_fp16(model: Any) -> bool:
    """Whether an ``onnx.ModelProto`` already has FP16 inputs, outputs or initializers."""
    from onnx import TensorProto

    half = TensorProto.FLOAT16
    if any(t.data_type == half for t in model.graph.initializer):
        return True
    return any(v.type.tensor_type.elem_type == half
               for v in [*model.graph.input, *model.graph.output])


def convert_to_fp16(model: Any, name: str, op_block_list: Sequence[str] | None = None,
                    node_block_list: Sequence[str] = ()) -> Any:
    """FP16 copy of an FP32 ``onnx.ModelProto`` with float32 inputs and outputs.

    Args:
        model: the FP32 model (not modified).
        name: the model's file name, for error messages.
        op_block_list: op types kept in FP32 (default :func:`fp16_op_block_list`).
        node_block_list: node names kept in FP32.

    Returns:
        The converted ``onnx.ModelProto``. Constants beyond :data:`FP16_WEIGHT_MAX` or
        below :data:`FP16_WEIGHT_MIN` in magnitude are clamped (silently; callers report
        the large ones, see :func:`trtcheck.measure.precision.precision.clamped_weights`).

    Raises:
        EnvironmentProblem: neither onnxruntime nor onnxruntime-gpu is installed.
        InputError: the model already holds FP16 tensors, or the converter fails on it.
    """
    float16 = _float16_module()
    if holds_fp16(model):
        raise InputError(f"FP16 conversion of {name} failed: the model already holds FP16 "
                         "tensors", "use the model as it is (it is already converted)")
    blocked = list(op_block_list) if op_block_list is not None else fp16_op_block_list()
    original_nodes = {n.name for n in model.graph.node}
    try:
        with warnings.catch_warnings():  # per-value "truncated" notices
            warnings.simplefilter("ignore")
            converted = float16.convert_float_to_float16(
                model, min_positive_val=FP16_WEIGHT_MIN, max_finite_val=FP16_WEIGHT_MAX,
                keep_io_types=True, op_block_list=blocked,
                node_block_list=list(node_block_list))
        drop_cast_round_trips(converted, original_nodes)
        sort_nodes_topologically(converted)
        return converted
    except Exception as exc:  # the converter raises ValueError / AssertionError / KeyError
        raise InputError(f"FP16 conversion of {name} failed: {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]}",
                         "the model may use ops the converter cannot handle; convert it "
                         "yourself and pass the FP16 model") from None


def drop_cast_round_trips(model: Any, keep: set[str]) -> int:
    """Remove the FP32 -> FP16 -> FP32 Cast pairs the converter puts between two nodes
    kept in FP32, in place.

    ONNX Runtime's converter casts every kept node's FP32 output to FP16 and, for a kept
    consumer, back to FP32, so a value flowing between two kept nodes (a Pow feeding a
    ReduceMean whose sum overflows FP16) is still rounded to FP16 and can overflow. A
    Cast(to=FLOAT) that reads the output of a Cast(to=FLOAT16) is bypassed: its readers
    read the FP16 Cast's FP32 input instead. Only Casts the converter added (names not in
    ``keep``) are touched, and none that produces a graph output.

    Args:
        model: converted ``onnx.ModelProto`` (modified).
        keep: node names of the original model.

    Returns:
        The number of Cast nodes removed.
    """
    from onnx import TensorProto

    graph = model.graph
    graph_outputs = {o.name for o in graph.output}

    def cast_to(node: Any) -> int | None:
        if node.op_type != "Cast" or node.name in keep:
            return None
        return next((a.i for a in node.attribute if a.name == "to"), None)

    to_fp16 = {n.output[0]: n.input[0] for n in graph.node
               if cast_to(n) == TensorProto.FLOAT16}
    rename: dict[str, str] = {}
    drop: list[Any] = []
    for n in graph.node:
        if (cast_to(n) == TensorProto.FLOAT and n.input[0] in to_fp16
                and n.output[0] not in graph_outputs):
            rename[n.output[0]] = to_fp16[n.input[0]]
            drop.append(n)
    if not drop:
        return 0
    for n in drop:
        graph.node.remove(n)
    for n in graph.node:
        for i, name in enumerate(n.input):
            if name in rename:
                n.input[i] = rename[name]
    read = {name for n in graph.node for name in n.input} | graph_outputs
    unread = [n for n in graph.node if cast_to(n) == TensorProto.FLOAT16
              and n.output[0] not in read]
    for n in unread:
        graph.node.remove(n)
    gone = set(rename) | {n.output[0] for n in unread}
    stale = [v for v in graph.value_info if v.name in gone]
    for v in stale:
        graph.value_info.remove(v)
    return len(drop) + len(unread)


def sort_nodes_topologically(model: Any) -> bool:
    """Reorder ``model.graph.node`` so that every node comes after the producers of its
    inputs, in place (the ONNX IR requires it; the converter appends its Casts at the
    end). Kahn's algorithm, stable: among ready nodes the earlier one goes first.

    Returns:
        ``True`` when reordered (or already in order); ``False`` when some input has no
        producer (a missing tensor) or a node holds a subgraph (If, Loop, Scan: its
        outer-scope reads are not node inputs), in which case nothing changes.
    """
    from onnx import AttributeProto

    graph = model.graph
    if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS)
           for n in graph.node for a in n.attribute):
        return False
    nodes = list(graph.node)
    available = ({i.name for i in graph.input} | {t.name for t in graph.initializer}
                 | {t.name for t in getattr(graph, "sparse_initializer", [])} | {""})
    placed: list[Any] = []
    pending = nodes
    while pending:
        rest = []
        for n in pending:
            if all(name in available for name in n.input):
                placed.append(n)
                available.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            return False
        pending = rest
    if [id(n) for n in placed] != [id(n) for n in nodes]:
        del graph.node[:]
        graph.node.extend(placed)
    return True
