"""Two small ONNX models for precision checks: one whose FP16 conversion overflows, one safe.

Both compute the same LayerNorm-like block (the pattern behind most real FP16 overflows,
e.g. in transformer LayerNorm / RMSNorm written as ``Pow`` + ``ReduceMean``)::

    x [N, 64] float32 --MatMul "proj" (W [64, 64])--> h
    h --ReduceMean "mean" (axis -1)--> mu
    h - mu            ("center", Sub)    -> c
    c ^ 2             ("square", Pow)    -> c2        <- overflows FP16 in the unsafe model
    mean(c2)          ("variance", ReduceMean) -> var
    var + 1e-5        ("add_eps", Add)   -> ve
    sqrt(ve)          ("std", Sqrt)      -> sd
    c / sd            ("normalize", Div) -> y        [N, 64] float32 (graph output ``y``)

Weights come from ``numpy.random.default_rng(seed)``; the only difference between the two
models is the scale of ``W``:

* :func:`build_overflow_model` (``scale=250``): with inputs uniform in ``[0, 1)`` (trtcheck's
  random data) the projection ``h`` reaches a few hundred, well inside FP16's range
  (max finite 65504), but its square ``c2`` reaches ~1e5, beyond 65504: FP16 gives
  ``inf`` there, ``var = inf``, and ``y = c / inf = 0``; FP32 gives normalised values of
  order 1. The first node whose output breaks tolerance, and the first whose FP32
  activations leave the FP16 range, are both ``square``.
* :func:`build_safe_model` (``scale=0.5``): every activation stays below ~10; the FP16
  conversion agrees with FP32 to about 1e-3.

Both use opset 17 and pass ``onnx.checker.check_model``.
"""

from __future__ import annotations

import numpy as np

#: features of the test models' input and output
FEATURES = 64
#: node names in graph order (the ONNX graph is topologically sorted)
NODE_NAMES = ("proj", "mean", "center", "square", "variance", "add_eps", "std", "normalize")
#: the node whose output overflows FP16 first in the unsafe model
OVERFLOW_NODE = "square"


def _build(scale: float, seed: int, name: str):  # -> onnx.ModelProto
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((FEATURES, FEATURES)) * scale / np.sqrt(FEATURES)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "proj.weight"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps")]
    nodes = [
        helper.make_node("MatMul", ["x", "proj.weight"], ["h"], name="proj"),
        helper.make_node("ReduceMean", ["h"], ["mu"], name="mean", axes=[-1], keepdims=1),
        helper.make_node("Sub", ["h", "mu"], ["c"], name="center"),
        helper.make_node("Pow", ["c", "two"], ["c2"], name="square"),
        helper.make_node("ReduceMean", ["c2"], ["var"], name="variance", axes=[-1], keepdims=1),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="add_eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="std"),
        helper.make_node("Div", ["c", "sd"], ["y"], name="normalize"),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", FEATURES])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="trtcheck-precision-test",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def build_overflow_model(seed: int = 7):  # -> onnx.ModelProto
    """The LayerNorm-like block with large projection weights: FP16 overflows at ``square``.

    Returns:
        an ``onnx.ModelProto``; input ``x`` float32 ``[batch, 64]``, output ``y`` float32
        ``[batch, 64]``.
    """
    return _build(250.0, seed, "fp16_overflow_layernorm")


def build_safe_model(seed: int = 7):  # -> onnx.ModelProto
    """The same block with small projection weights: FP16-safe (all activations < ~10).

    Returns:
        an ``onnx.ModelProto`` with the same I/O as :func:`build_overflow_model`.
    """
    return _build(0.5, seed, "fp16_safe_layernorm")
