"""Where does a precision variant's error start? Layer-wise comparison and range checks.

For ONNX models run by ONNX Runtime: every node output is marked as a graph output with
Polygraphy's ``ModifyOutputs(outputs=MARK_ALL)`` (the same as ``polygraphy run
--onnx-outputs mark all``), in the FP32 model and in the FP16 model. The FP16 converter
(ONNX Runtime's, :mod:`trtcheck.measure.bench.fp16`) keeps tensor names: the tensors it adds are Casts named
``<x>_cast_to_<node>`` / ``<node>_input_cast_<i>`` / ``<node>_output_cast_<i>``, and a
renamed graph output is restored by a Cast that produces the original name. So tensors
are matched by name; tensors only one graph has (the casts) are skipped, and nodes are
reported in the reference graph's order, which ONNX requires to be topological.

Two findings:

* :func:`compare_layers`: the first tensors whose candidate values break the variant's
  tolerance (same rule as outputs) or turn NaN/Inf where FP32 is finite;
* :func:`range_overflows`: the first FP32 activations whose ``|x|`` exceeds a
  precision's largest finite value (65504 for FP16). This needs only the FP32 run, so
  it also speaks for engines whose layers cannot be marked on this machine.

TensorRT engines can mark layer outputs too (Polygraphy ``--trt-outputs mark all``), but
only at build time and with a GPU runtime; that path is not run here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtcheck.errors import InputError
from trtcheck.measure.precision.output_compare import compare_output
from trtcheck.results.precision import LayerError, PrecisionTolerance, RangeOverflow

MAX_LISTED = 5
MAX_RANGE_LISTED = 10


@dataclass
class NodeTensor:
    """A node output of the reference graph: ``index`` is the node's topological position."""

    index: int
    node: str
    op_type: str
    tensor: str


@dataclass
class Activations:
    """Intermediate tensors of one ONNX model over some samples.

    Attributes:
        order: node outputs of the graph, in topological order.
        first: every marked tensor of the first sample, by name.
        max_abs: largest finite ``|x|`` per tensor over all samples.
        over_counts: per tensor, elements with ``|x| > limit`` over all samples
            (``limit`` given to :func:`collect_activations`).
        element_counts: per tensor, elements seen over all samples.
    """

    order: list[NodeTensor]
    first: dict[str, np.ndarray]
    max_abs: dict[str, float] = field(default_factory=dict)
    over_counts: dict[str, int] = field(default_factory=dict)
    element_counts: dict[str, int] = field(default_factory=dict)
    consumers: dict[str, list[str]] = field(default_factory=dict)


def consumers_of(model: Any) -> dict[str, list[str]]:
    """Tensor name -> names of the nodes that read it (graph order)."""
    out: dict[str, list[str]] = {}
    for i, node in enumerate(model.graph.node):
        for t in node.input:
            if t:
                out.setdefault(t, []).append(node.name or f"node_{i}")
    return out


def node_order(model: Any) -> list[NodeTensor]:
    """Node outputs of ``model`` (an ``onnx.ModelProto``) in graph (topological) order."""
    out: list[NodeTensor] = []
    for i, node in enumerate(model.graph.node):
        for t in node.output:
            if t:
                out.append(NodeTensor(i, node.name or f"node_{i}", node.op_type, t))
    return out


def mark_all_outputs(model: Any) -> Any:
    """A copy of ``model`` with every tensor marked as a graph output (Polygraphy MARK_ALL).

    Raises:
        EnvironmentProblem: Polygraphy is missing.
    """
    import glob

    from polygraphy.backend.onnx import ModifyOutputs
    from polygraphy.backend.onnx.util import all_tensor_names
    from polygraphy.logger import G_LOGGER

    # Polygraphy reads output names as fnmatch patterns (MARK_ALL included): a tensor
    # named "h[0]*" would match nothing and silently drop out. Each name is escaped
    # ("[" -> "[[]", "*" -> "[*]", "?" -> "[?]") so it matches exactly itself.
    names = [glob.escape(n) for n in all_tensor_names(model)]
    with G_LOGGER.verbosity(G_LOGGER.CRITICAL):
        return ModifyOutputs(model, outputs=names, copy=True)()


def collect_activations(model_path: str | os.PathLike[str], feeds: Sequence[dict[str, np.ndarray]],
                        workdir: str | os.PathLike[str], limit: float | None = None,
                        providers: list[str] | None = None, threads: int | None = None
                        ) -> Activations:
    """Run ``model_path`` with every node output marked on each feed (ONNX Runtime).

    Args:
        model_path: an ONNX model.
        feeds: input feeds (the same ones the comparison used).
        workdir: folder for the marked copy of the model.
        limit: count elements with ``|x| > limit`` per tensor (``None``: skip).
        providers, threads: passed to :class:`~trtcheck.backends.onnxruntime.OnnxRuntimeBackend`.

    Returns:
        :class:`Activations` (full tensors of the first feed only, to bound memory).

    Raises:
        InputError: the model cannot be loaded or run.
    """
    import onnx

    from trtcheck.backends.onnxruntime import OnnxRuntimeBackend

    try:
        model = onnx.load(str(model_path))
    except Exception as exc:  # onnx raises DecodeError, OSError ...
        raise InputError(f"cannot load {model_path} for layer-wise comparison: {exc}") from None
    order = node_order(model)
    marked = mark_all_outputs(model)
    path = Path(workdir) / (Path(model_path).stem + ".all-outputs.onnx")
    onnx.save_model(marked, str(path))
    acts = Activations(order=order, first={}, consumers=consumers_of(model))
    kwargs: dict[str, Any] = {"intra_op_threads": threads}
    if providers:
        kwargs["providers"] = providers
    with OnnxRuntimeBackend(path, **kwargs) as be:
        for i, feed in enumerate(feeds):
            outs = be.infer(feed).outputs
            for name, arr in outs.items():
                a = np.asarray(arr)
                if a.dtype.kind not in "fc":
                    continue
                if i == 0:
                    acts.first[name] = a
                a64 = np.abs(a.astype(np.float64))
                fin = a64[np.isfinite(a64)]
                m = float(fin.max()) if fin.size else 0.0
                acts.max_abs[name] = max(acts.max_abs.get(name, 0.0), m)
                acts.element_counts[name] = acts.element_counts.get(name, 0) + int(a.size)
                if limit is not None:
                    acts.over_counts[name] = acts.over_counts.get(name, 0) + int(
                        np.sum(a64 > limit))
    return acts


def range_overflows(acts: Activations, limit: float, exclude_nodes: Sequence[str] = ()
                    ) -> tuple[list[RangeOverflow], int]:
    """FP32 activations beyond ``limit`` (e.g. 65504 for FP16), first ones first.

    Args:
        acts: from :func:`collect_activations` with the same ``limit``.
        limit: largest finite value of the target precision.
        exclude_nodes: nodes that stay in FP32 in the variant (converter block lists). A
            tensor is skipped only when its producer **and** every consumer stay in FP32:
            the converter casts a kept node's output back to FP16 for FP16 consumers, so
            the tensor would still overflow there.

    Returns:
        ``(first up to 10 overflows in topological order, total count of tensors)``.
    """
    skip = set(exclude_nodes)
    found: list[RangeOverflow] = []
    for nt in acts.order:
        if nt.tensor not in acts.max_abs:
            continue
        if nt.node in skip and all(c in skip for c in acts.consumers.get(nt.tensor, [])):
            continue
        n = acts.over_counts.get(nt.tensor, 0)
        if n > 0:
            found.append(RangeOverflow(index=nt.index, node=nt.node, op_type=nt.op_type,
                                       tensor=nt.tensor, reference_max_abs=acts.max_abs[nt.tensor],
                                       limit_abs=float(limit), overflow_count=n,
                                       element_count=acts.element_counts.get(nt.tensor, 0)))
    return found[:MAX_RANGE_LISTED], len(found)


def compare_layers(ref: Activations, cand: Activations, tol: PrecisionTolerance
                   ) -> tuple[list[LayerError], list[LayerError], int]:
    """Compare the first sample's intermediate tensors, matched by name.

    Returns:
        ``(first failing, first with new NaN/Inf, tensors compared)``; each list holds at
        most 5 entries, in the reference graph's topological order. An intermediate
        tensor fails on new NaN/Inf, on cosine similarity below the variant's minimum or
        on relative L2 error above its maximum:
        where the computation *breaks*. Elementwise drift is recorded
        (``range_rel_error``, ``outside_tolerance_fraction``) but not judged, because
        intermediate tensors of deep networks legitimately drift by a few percent of
        their range (ReLU6/Clip boundaries, large sums whose elements near zero carry the
        rounding error of the whole sum).
    """
    failing: list[LayerError] = []
    nonfinite: list[LayerError] = []
    compared = 0
    for nt in ref.order:
        r = ref.first.get(nt.tensor)
        c = cand.first.get(nt.tensor)
        if r is None or c is None or r.shape != c.shape:
            continue
        compared += 1
        cmp = compare_output(nt.tensor, [r], [c], tol)
        new_bad = cmp.candidate_nan_count + cmp.candidate_inf_count - (
            cmp.reference_nan_count + cmp.reference_inf_count)
        scale = cmp.reference_max_abs
        range_rel = cmp.max_abs_error / scale if scale > 0 else (0.0 if cmp.max_abs_error == 0
                                                                 else float("inf"))
        err = LayerError(index=nt.index, node=nt.node, op_type=nt.op_type, tensor=nt.tensor,
                         element_count=cmp.element_count, rel_l2_error=cmp.rel_l2_error,
                         reference_max_abs=cmp.reference_max_abs,
                         max_abs_error=cmp.max_abs_error,
                         range_rel_error=range_rel if range_rel != float("inf") else 1.0,
                         outside_tolerance_fraction=cmp.outside_tolerance_fraction,
                         cosine_similarity=cmp.cosine_similarity,
                         candidate_nonfinite_count=max(0, int(new_bad)))
        bad = (new_bad > 0
               or (cmp.cosine_similarity is not None
                   and cmp.cosine_similarity < tol.min_cosine_similarity)
               or (cmp.rel_l2_error is not None and cmp.rel_l2_error > tol.max_rel_l2_error))
        if new_bad > 0 and len(nonfinite) < MAX_LISTED:
            nonfinite.append(err)
        if bad and len(failing) < MAX_LISTED:
            failing.append(err)
    return failing, nonfinite, compared
