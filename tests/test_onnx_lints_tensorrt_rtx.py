"""The TensorRT lints of `trtcheck inspect` checked against a real TensorRT ONNX parser.

TensorRT-RTX (the `rtx` extra, module `tensorrt_rtx`) parses ONNX and builds engines on a
CPU-only machine, so the claims the lints make can be confirmed here: a shared dynamic
dim name really makes a 48x192 profile fail to build, the rename the lint suggests
really fixes it, and ops our table marks unsupported really fail to parse.
"""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper
from onnx.tools.update_model_dims import update_inputs_outputs_dims

from trtcheck.inspection.onnx.onnx_inspect import inspect_onnx
from trtcheck.inspection.onnx.onnx_lints import distinct_dims


@pytest.fixture(scope="module")
def trt():
    try:
        import tensorrt_rtx
    except ImportError as exc:  # the README's test install includes the rtx extra
        pytest.fail(f"tensorrt_rtx not importable ({exc}); install with pip install -e '.[test,rtx]'")
    return tensorrt_rtx


def _capture_logger(trt):
    class Capture(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.messages: list[str] = []

        def log(self, severity, msg):
            self.messages.append(str(msg))

    return Capture()


def _parse(trt, model: onnx.ModelProto):
    logger = _capture_logger(trt)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    ok = parser.parse(model.SerializeToString())
    errors = [parser.get_error(i).desc() for i in range(parser.num_errors)]
    return ok, errors, builder, network, logger


def _build_48x192(trt, model: onnx.ModelProto):
    ok, errors, builder, network, logger = _parse(trt, model)
    assert ok, errors
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 3, 48, 192), (1, 3, 48, 192), (1, 3, 48, 192))
    config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(network, config)
    return plan, "\n".join(logger.messages)


@pytest.mark.ppocr
def test_shared_dim_name_lint_agrees_with_tensorrt_rtx(trt, ppocr, tmp_path):
    insp = inspect_onnx(ppocr["cls"], {"x": [1, 3, 48, 192]})
    lint = next(f for f in insp.lints if f.code == "onnx-shared-dim-name")
    assert "contradictory IOptimizationProfile kMIN/kMAX" in lint.message
    plan, log = _build_48x192(trt, onnx.load(ppocr["cls"]))
    assert plan is None
    assert "contradictory IOptimizationProfile kMIN/kMAX" in log
    # the rename the lint's remedy suggests makes the same profile build
    renamed = update_inputs_outputs_dims(onnx.load(ppocr["cls"]),
                                         {t.name: distinct_dims(t) for t in insp.inputs},
                                         {t.name: distinct_dims(t) for t in insp.outputs})
    plan, log = _build_48x192(trt, renamed)
    assert plan is not None, log


@pytest.mark.parametrize("op,dtype,n_inputs", [
    ("Unique", TensorProto.FLOAT, 1), ("Det", TensorProto.FLOAT, 1),
    ("MatMulInteger", TensorProto.UINT8, 2),
])
def test_unsupported_op_lint_agrees_with_tensorrt_rtx(trt, tmp_path, op, dtype, n_inputs):
    names = [f"i{k}" for k in range(n_inputs)]
    g = helper.make_graph([helper.make_node(op, names, ["y"])], "g",
                          [helper.make_tensor_value_info(n, dtype, [4, 4]) for n in names],
                          [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    p = tmp_path / f"{op}.onnx"
    onnx.save(m, p)
    lint = next(f for f in inspect_onnx(p).lints if f.code == "onnx-trt-unsupported-op")
    assert f"{op} (1)" in lint.message
    ok, errors, _builder, _network, logger = _parse(trt, m)
    assert not ok, f"TensorRT-RTX imported {op}: update trt_onnx_support"
    # the parser's own op checker for this op rejected it (not a type or arity problem)
    assert f"check{op}" in "\n".join(logger.messages), (errors, logger.messages)


def test_supported_ops_parse_without_lints(trt, tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Sigmoid", ["a"], ["b"]),
             helper.make_node("Transpose", ["b"], ["y"], perm=[1, 0])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [4, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    p = tmp_path / "ok.onnx"
    onnx.save(m, p)
    assert inspect_onnx(p).lints == [] or all(
        f.code == "onnx-fixed-batch" for f in inspect_onnx(p).lints)
    ok, errors, *_ = _parse(trt, m)
    assert ok, errors


def test_shared_name_across_inputs_agrees_with_tensorrt_rtx(trt, tmp_path):
    m = helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])]),
        opset_imports=[helper.make_opsetid("", 17)])
    p = tmp_path / "shared.onnx"
    onnx.save(m, p)
    for (sa, sb), builds in ((((1, 4), (4, 4)), False), (((2, 4), (2, 4)), True)):
        lints = [f for f in inspect_onnx(p, {"a": list(sa), "b": list(sb)}).lints
                 if f.code == "onnx-shared-dim-name"]
        assert bool(lints) is not builds
        ok, errors, builder, network, logger = _parse(trt, m)
        assert ok, errors
        config = builder.create_builder_config()
        profile = builder.create_optimization_profile()
        profile.set_shape("a", sa, sa, sa)
        profile.set_shape("b", sb, sb, sb)
        config.add_optimization_profile(profile)
        plan = builder.build_serialized_network(network, config)
        assert (plan is not None) is builds, logger.messages
        if not builds:
            assert "contradictory IOptimizationProfile" in "\n".join(logger.messages)
