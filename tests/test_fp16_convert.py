"""FP16 copies of ONNX models through ONNX Runtime's converter (trtcheck.measure.bench.fp16)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtcheck.errors import InputError
from trtcheck.load.precision_models import build_overflow_model
from trtcheck.measure.bench.fp16 import (
    FP16_WEIGHT_MAX,
    convert_to_fp16,
    fp16_op_block_list,
    holds_fp16,
)


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def test_io_stays_fp32_and_the_graph_is_valid_and_sorted():
    m16 = convert_to_fp16(build_overflow_model(), "overflow.onnx")
    onnx.checker.check_model(m16)  # also checks the topological order
    assert m16.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert m16.graph.output[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert any(t.data_type == TensorProto.FLOAT16 for t in m16.graph.initializer)


def test_values_between_two_kept_nodes_stay_fp32():
    """The converter casts a kept node's output to FP16 and back for the next kept node;
    the round trip is removed, so the Pow -> ReduceMean sum (over 65504) stays finite."""
    model = build_overflow_model()
    m16 = convert_to_fp16(model, "overflow.onnx", node_block_list=["square", "variance"])
    pow_node = next(n for n in m16.graph.node if n.name == "square")
    mean_node = next(n for n in m16.graph.node if n.name == "variance")
    assert mean_node.input[0] == pow_node.output[0]  # no Cast between them
    x = np.random.default_rng(0).random((2, 64), dtype=np.float32)
    ref, got = _run(model, x), _run(m16, x)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, ref, rtol=1e-2, atol=1e-2)


def test_block_list_keeps_resize_and_adds_the_users():
    ops = fp16_op_block_list(["Softmax", "TopK"])
    assert "Resize" in ops and "NonMaxSuppression" in ops and ops[-1] == "Softmax"
    assert len(ops) == len(set(ops))


def test_an_fp16_model_is_refused_with_a_clear_error():
    m16 = convert_to_fp16(build_overflow_model(), "overflow.onnx")
    assert holds_fp16(m16)
    with pytest.raises(InputError, match="already holds FP16"):
        convert_to_fp16(m16, "m16.onnx")


def test_large_weights_are_clamped_to_the_documented_bound():
    w = np.array([[3e5, -3e5], [1.0, 2.0]], dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m16 = convert_to_fp16(model, "w.onnx")
    w16 = numpy_helper.to_array(next(t for t in m16.graph.initializer if t.name == "w"))
    assert w16.dtype == np.float16 and float(abs(w16).max()) == FP16_WEIGHT_MAX
