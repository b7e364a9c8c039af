"""inspect_onnx: facts, MACs check values on hand-built graphs, lints, real PP-OCR models."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_builders import RESNET18_MACS, GraphBuilder, resnet18

from trtcheck.errors import InputError
from trtcheck.inspection.onnx.onnx_inspect import inspect_onnx
from trtcheck.results import ModelInspection


def _save(model: onnx.ModelProto, tmp_path: Path, name: str = "m.onnx") -> Path:
    p = tmp_path / name
    onnx.save(model, p)
    return p


def _codes(insp: ModelInspection) -> dict[str, str]:
    return {f.code: f.severity for f in insp.lints}


def _vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(nodes, inputs, outputs, inits=(), opset=17, functions=(), extra_opsets=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), *extra_opsets],
                             functions=list(functions))


def _w(name, shape, dtype=np.float32):
    return numpy_helper.from_array(np.zeros(shape, dtype=dtype), name)


@pytest.fixture(scope="module")
def resnet_path(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("resnet") / "resnet18.onnx"
    onnx.save(resnet18(), p)
    return p


def test_resnet18_macs_at_batch_1(resnet_path):
    insp = inspect_onnx(resnet_path)
    c = insp.compute
    assert c is not None
    assert c.macs == RESNET18_MACS  # 1,814,073,344 ~ the usual "1.82 GMACs"
    assert abs(c.macs - 1.82e9) / 1.82e9 < 0.005
    assert c.flops == 2 * c.macs
    assert c.macs_by_op_type == {"Conv": RESNET18_MACS - 512_000, "Gemm": 512_000}
    assert c.counted_nodes == 21 and c.unresolved_nodes == 0
    assert c.input_shapes == {"input": [1, 3, 224, 224]}
    assert "batch axis (axis 0) set to 1" in c.method and "Conv: N*Cout" in c.method
    assert "Relu" in c.uncounted_op_types
    # only the batch axis is dynamic: an info lint, not a warning
    assert _codes(insp) == {"onnx-dynamic-input-no-shape": "info"}


def test_resnet18_macs_scale_with_given_batch(resnet_path):
    insp = inspect_onnx(resnet_path, {"input": [8, 3, 224, 224]})
    assert insp.compute is not None and insp.compute.macs == 8 * RESNET18_MACS
    assert "given with --shapes" in insp.compute.method
    assert insp.lints == []


def test_resnet18_facts(resnet_path):
    m = onnx.load(resnet_path)
    insp = inspect_onnx(resnet_path)
    expected_params = sum(math.prod(t.dims) for t in m.graph.initializer)
    assert insp.parameter_count == expected_params == 11_699_112
    assert insp.parameter_bytes == 4 * expected_params
    assert insp.parameter_count_by_source == {"initializer": expected_params}
    assert insp.initializer_dtypes == {"float32": len(m.graph.initializer)}
    assert insp.node_count == len(m.graph.node)
    assert insp.op_histogram["Conv"] == 20 and insp.op_histogram["Gemm"] == 1
    assert next(iter(insp.op_histogram)) == "BatchNormalization"  # sorted by count
    assert insp.opset == {"ai.onnx": 17}
    assert insp.inputs[0].shape == ["batch", 3, 224, 224]
    assert insp.outputs[0].shape == ["batch", 1000]
    assert len(insp.sha256) == 64 and insp.file_size_bytes == resnet_path.stat().st_size
    assert ModelInspection.model_validate_json(insp.model_dump_json()) == insp


def test_grouped_conv_convtranspose_gemm_matmul(tmp_path):
    nodes = [
        # depthwise 3x3, 32 channels, 1x32x16x16 -> same: 16*16*32*(32/32)*9
        helper.make_node("Conv", ["x", "wd"], ["d"], group=32, kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        # ConvTranspose 32->8, k 2, stride 2: N*Cin*Hin*Win*(Cout/g)*k*k = 16*16*32*8*4
        helper.make_node("ConvTranspose", ["d", "wt"], ["u"], kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["u"], ["f"], axis=1),              # 1 x 8192
        helper.make_node("Gemm", ["f", "wg"], ["g"], transB=1),         # M1 N10 K8192
        helper.make_node("Gemm", ["at", "wg2"], ["g2"], transA=1),      # A^T: M5 K7 N3
        helper.make_node("MatMul", ["a", "b"], ["mm"]),                 # [2,3,4,5]x[5,6]
        helper.make_node("MatMul", ["v", "b"], ["mv"]),                 # [5] x [5,6] -> [6]
    ]
    inits = [_w("wd", [32, 1, 3, 3]), _w("wt", [32, 8, 2, 2]), _w("wg", [10, 8192]),
             _w("wg2", [7, 3]), _w("b", [5, 6])]
    m = _model(nodes, [_vi("x", [1, 32, 16, 16]), _vi("at", [7, 5]), _vi("a", [2, 3, 4, 5]),
                       _vi("v", [5])],
               [_vi("g", None), _vi("g2", None), _vi("mm", None), _vi("mv", None)], inits)
    insp = inspect_onnx(_save(m, tmp_path))
    c = insp.compute
    assert c is not None and c.unresolved_nodes == 0
    assert c.macs_by_op_type == {
        "Conv": 16 * 16 * 32 * 9,
        "ConvTranspose": 16 * 16 * 32 * 8 * 4,
        "Gemm": 10 * 8192 + 5 * 3 * 7,
        "MatMul": 2 * 3 * 4 * 6 * 5 + 6 * 5,
    }
    assert c.macs == sum(c.macs_by_op_type.values())
    assert "static shapes" in c.method


def test_shape_chain_through_cast_is_folded(tmp_path):
    """Shape -> Slice -> Cast(int32) -> Concat -> Cast(int64) -> Reshape -> MatMul, as
    PaddlePaddle exports write it: ONNX data propagation alone leaves MatMul unknown."""
    c = [numpy_helper.from_array(np.array(v, dtype=np.int64)) for v in ([0], [1], [-1])]
    nodes = [
        helper.make_node("Constant", [], ["s0"], value=c[0]),
        helper.make_node("Constant", [], ["s1"], value=c[1]),
        helper.make_node("Constant", [], ["neg"], value=numpy_helper.from_array(
            np.array([-1], dtype=np.int32))),
        helper.make_node("Shape", ["x"], ["shp"]),
        helper.make_node("Slice", ["shp", "s0", "s1"], ["n"]),
        helper.make_node("Cast", ["n"], ["n32"], to=TensorProto.INT32),
        helper.make_node("Concat", ["n32", "neg"], ["t32"], axis=0),
        helper.make_node("Cast", ["t32"], ["t64"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["x", "t64"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w"], ["y"]),
    ]
    m = _model(nodes, [_vi("x", ["n", 4, 8, 8])], [_vi("y", None)], [_w("w", [256, 10])],
               opset=11)
    insp = inspect_onnx(_save(m, tmp_path), {"x": [3, 4, 8, 8]})
    assert insp.compute is not None
    assert insp.compute.macs_by_op_type == {"MatMul": 3 * 256 * 10}
    assert insp.compute.unresolved_nodes == 0
    assert "constant-folded" in insp.compute.method
    # the Constant weights are still counted as parameters
    assert insp.parameter_count_by_source == {"initializer": 2560, "constant_node": 3}


def test_dynamic_spatial_dims_need_shapes(tmp_path):
    m = _model([helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3])],
               [_vi("x", ["N", 3, "H", "W"])], [_vi("y", None)], [_w("w", [8, 3, 3, 3])])
    p = _save(m, tmp_path)
    insp = inspect_onnx(p)
    assert insp.compute is None
    (f,) = [f for f in insp.lints if f.code == "onnx-dynamic-input-no-shape"]
    assert f.severity == "warning"
    assert "axis 2 (H)" in f.message and "axis 3 (W)" in f.message
    assert "--shapes x:1x3xHxW" in (f.remedy or "")
    insp = inspect_onnx(p, {"x": [2, 3, 10, 12]})
    assert insp.compute is not None and insp.compute.macs == 2 * 8 * 8 * 10 * 3 * 9


def test_shared_dim_name_lint(tmp_path):
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [1, 3, "?", "?"])],
               [_vi("y", [1, 3, "?", "?"])])
    p = _save(m, tmp_path)
    f = [f for f in inspect_onnx(p).lints if f.code == "onnx-shared-dim-name"]
    assert [x.where for x in f] == ["x", "y"] and f[0].severity == "warning"
    assert "axes 2 and 3" in f[0].message and "contradictory IOptimizationProfile" in f[0].message
    f = [f for f in inspect_onnx(p, {"x": [1, 3, 48, 192]}).lints
         if f.code == "onnx-shared-dim-name" and f.where == "x"]
    assert f[0].severity == "error" and "x:1x3x48x192" in f[0].message
    f = [f for f in inspect_onnx(p, {"x": [1, 3, 64, 64]}).lints
         if f.code == "onnx-shared-dim-name" and f.where == "x"]
    assert f[0].severity == "warning"


def test_fp64_int64_and_string_lints(tmp_path):
    nodes = [helper.make_node("Cast", ["x"], ["xd"], to=TensorProto.DOUBLE),
             helper.make_node("Add", ["xd", "c"], ["y"]),
             helper.make_node("Identity", ["ids"], ["ids_out"])]
    m = _model(nodes, [_vi("x", [1, 4]), _vi("ids", [1, 4], TensorProto.INT64)],
               [_vi("y", [1, 4], TensorProto.DOUBLE), _vi("ids_out", [1, 4], TensorProto.INT64)],
               [_w("c", [4], np.float64)])
    insp = inspect_onnx(_save(m, tmp_path))
    codes = _codes(insp)
    assert codes["onnx-fp64"] == "warning" and codes["onnx-int64-io"] == "info"
    (f,) = [f for f in insp.lints if f.code == "onnx-fp64"]
    assert "'y'" in f.message and "1 weight tensor" in f.message and "1 Cast" in f.message
    assert "FLT_MAX" in f.message
    assert insp.initializer_dtypes == {"float64": 1}
    assert insp.parameter_bytes == 32


def test_unsupported_custom_and_function_ops(tmp_path):
    fn = helper.make_function("my.fn", "Twice", ["a"], ["b"],
                              [helper.make_node("Add", ["a", "a"], ["b"])],
                              [helper.make_opsetid("", 17)])
    nodes = [helper.make_node("Unique", ["x"], ["u"]),
             helper.make_node("Twice", ["u"], ["t"], domain="my.fn"),
             helper.make_node("FusedThing", ["t"], ["y"], domain="com.microsoft")]
    m = _model(nodes, [_vi("x", [4])], [_vi("y", None)], functions=[fn],
               extra_opsets=[helper.make_opsetid("my.fn", 1),
                             helper.make_opsetid("com.microsoft", 1)])
    insp = inspect_onnx(_save(m, tmp_path))
    by = {f.code: f for f in insp.lints}
    assert by["onnx-trt-unsupported-op"].severity == "error"
    assert "Unique (1)" in by["onnx-trt-unsupported-op"].message
    assert "onnx/onnx-tensorrt docs/operators.md, TensorRT 10.15" in \
        by["onnx-trt-unsupported-op"].message
    custom = by["onnx-custom-domain-op"]
    assert "com.microsoft:FusedThing" in custom.message and "my.fn" not in custom.message
    assert "contrib" in custom.message
    assert insp.opset == {"ai.onnx": 17, "my.fn": 1, "com.microsoft": 1}
    assert insp.op_histogram == {"Unique": 1, "com.microsoft:FusedThing": 1, "my.fn:Twice": 1}


def test_opset_range_and_checker_lints(tmp_path):
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [2])], [_vi("y", [2])],
               opset=7)
    assert _codes(inspect_onnx(_save(m, tmp_path, "old.onnx")))["onnx-opset-range"] == "warning"
    # not topologically sorted: onnx.checker rejects it, but it is still a model
    nodes = [helper.make_node("Relu", ["h"], ["y"]), helper.make_node("Relu", ["x"], ["h"])]
    m = _model(nodes, [_vi("x", [2])], [_vi("y", [2])])
    insp = inspect_onnx(_save(m, tmp_path, "unsorted.onnx"))
    assert _codes(insp)["onnx-checker"] == "warning"


def test_fixed_batch_lint(tmp_path):
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [1, 3])], [_vi("y", [1, 3])])
    insp = inspect_onnx(_save(m, tmp_path))
    assert _codes(insp) == {"onnx-fixed-batch": "info"}


def test_sparse_initializer_counted(tmp_path):
    values = numpy_helper.from_array(np.ones(3, dtype=np.float32), "sw")
    indices = numpy_helper.from_array(np.array([0, 5, 9], dtype=np.int64), "sw_idx")
    sp = helper.make_sparse_tensor(values, indices, [10])
    g = helper.make_graph([helper.make_node("Add", ["x", "sw"], ["y"])], "g", [_vi("x", [10])],
                          [_vi("y", [10])], sparse_initializer=[sp])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    insp = inspect_onnx(_save(m, tmp_path))
    assert insp.parameter_count_by_source == {"sparse_initializer": 3}
    assert insp.parameter_bytes == 3 * 4 + 3 * 8


def test_external_data_model(tmp_path):
    b = GraphBuilder()
    b.nodes.append(helper.make_node("MatMul", ["x", b.weight([512, 256])], ["y"]))
    m = b.model([_vi("x", ["n", 512])], [_vi("y", ["n", 256])])
    p = tmp_path / "ext.onnx"
    onnx.save_model(m, p, save_as_external_data=True, location="ext.data", size_threshold=0)
    insp = inspect_onnx(p)
    assert insp.external_data_files == ["ext.data"]
    assert _codes(insp) == {"onnx-dynamic-input-no-shape": "info"}  # no false checker lint
    assert insp.parameter_count == 512 * 256 and insp.parameter_bytes == 512 * 256 * 4
    assert insp.compute is not None and insp.compute.macs == 512 * 256


def test_bad_shapes_are_input_errors(resnet_path):
    with pytest.raises(InputError, match="unknown input"):
        inspect_onnx(resnet_path, {"images": [1, 3, 224, 224]})
    with pytest.raises(InputError, match="3 dims"):
        inspect_onnx(resnet_path, {"input": [1, 3, 224]})
    with pytest.raises(InputError, match="fixes it to 3"):
        inspect_onnx(resnet_path, {"input": [1, 4, 224, 224]})


@pytest.mark.ppocr
def test_ppocr_cls(ppocr):
    insp = inspect_onnx(ppocr["cls"])
    x = insp.inputs[0]
    assert x.name == "x" and x.dtype == "float32" and x.shape == [None, 3, "?", "?"]
    assert insp.opset == {"ai.onnx": 11} and insp.producer == "PaddlePaddle"
    assert insp.compute is None
    codes = _codes(insp)
    assert codes["onnx-shared-dim-name"] == "warning"
    assert codes["onnx-dynamic-input-no-shape"] == "warning"
    # every weight is a Constant node: count them independently
    m = onnx.load(ppocr["cls"])
    n = sum(numpy_helper.to_array(a.t).size for nd in m.graph.node if nd.op_type == "Constant"
            for a in nd.attribute if a.name == "value")
    assert insp.parameter_count == n and insp.parameter_count_by_source == {"constant_node": n}
    insp = inspect_onnx(ppocr["cls"], {"x": [1, 3, 48, 192]})
    assert _codes(insp)["onnx-shared-dim-name"] == "error"
    c = insp.compute
    assert c is not None and c.unresolved_nodes == 0
    assert c.macs_by_op_type["MatMul"] == 200 * 2  # the final fc layer


@pytest.mark.ppocr
def test_ppocr_det_and_rec_macs(ppocr):
    det = inspect_onnx(ppocr["det"], {"x": [1, 3, 320, 320]})
    assert det.compute is not None and det.compute.unresolved_nodes == 0
    det_b2 = inspect_onnx(ppocr["det"], {"x": [2, 3, 320, 320]})
    assert det_b2.compute is not None and det_b2.compute.macs == 2 * det.compute.macs
    det_big = inspect_onnx(ppocr["det"], {"x": [1, 3, 640, 640]})
    assert det_big.compute is not None
    # fully convolutional: MACs scale with the area (not exactly: unpadded convs)
    assert det_big.compute.macs / det.compute.macs == pytest.approx(4.0, rel=2e-3)
    assert set(det.compute.macs_by_op_type) == {"Conv", "ConvTranspose"}
    rec = inspect_onnx(ppocr["rec"], {"x": [1, 3, 48, 320]})
    assert rec.compute is not None and rec.compute.unresolved_nodes == 0
    assert rec.compute.macs_by_op_type["MatMul"] > 0
    assert not [f for f in rec.lints if f.severity in ("warning", "error")]


def test_demo_resnet18_check_value(demo_model):
    """The lead's demo ResNet-18 (trtcheck.load.demo): ~1.82 GMACs at 1x3x224x224."""
    insp = inspect_onnx(demo_model)
    assert insp.compute is not None
    assert insp.compute.macs == RESNET18_MACS
    assert insp.compute.input_shapes == {"input": [1, 3, 224, 224]}


@pytest.mark.ppocr
def test_shared_name_remedy_fixes_cls(ppocr, tmp_path):
    """Applying the rename the lint suggests removes the lint (and keeps the MACs)."""
    from onnx.tools.update_model_dims import update_inputs_outputs_dims

    from trtcheck.inspection.onnx.onnx_lints import distinct_dims

    before = inspect_onnx(ppocr["cls"], {"x": [1, 3, 48, 192]})
    (lint,) = [f for f in before.lints if f.code == "onnx-shared-dim-name"]
    assert "{'x': [-1, 3, 'x_axis2', 'x_axis3']}" in (lint.remedy or "")
    m = update_inputs_outputs_dims(onnx.load(ppocr["cls"]),
                                   {t.name: distinct_dims(t) for t in before.inputs},
                                   {t.name: distinct_dims(t) for t in before.outputs})
    p = tmp_path / "cls_renamed.onnx"
    onnx.save(m, p)
    after = inspect_onnx(p, {"x": [1, 3, 48, 192]})
    assert after.inputs[0].shape[2:] == ["x_axis2", "x_axis3"]
    assert not [f for f in after.lints if f.code == "onnx-shared-dim-name"]
    assert after.compute is not None and before.compute is not None
    assert after.compute.macs == before.compute.macs


def test_op_restriction_lint(tmp_path):
    zp = numpy_helper.from_array(np.array(3, dtype=np.int8), "zp")
    zero = numpy_helper.from_array(np.array(0, dtype=np.int8), "zero")
    sc = numpy_helper.from_array(np.array(0.1, dtype=np.float32), "sc")
    roi = numpy_helper.from_array(np.array([], dtype=np.float32), "roi")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales")
    nodes = [
        helper.make_node("Resize", ["x", "roi", "scales"], ["r"], mode="cubic"),
        helper.make_node("MaxPool", ["r"], ["p", "idx"], kernel_shape=[2, 2]),
        helper.make_node("QuantizeLinear", ["p", "sc", "zp"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "sc", "zero"], ["y"]),
    ]
    m = _model(nodes, [_vi("x", [1, 1, 4, 4])], [_vi("y", None), _vi("idx", None)],
               [zp, zero, sc, roi, scales])
    insp = inspect_onnx(_save(m, tmp_path))
    (f,) = [f for f in insp.lints if f.code == "onnx-trt-op-restriction"]
    assert f.severity == "error"
    assert "Resize mode 'cubic'" in f.message and "MaxPool Indices" in f.message
    assert "QuantizeLinear with a non-zero zero point" in f.message
    assert "DequantizeLinear" not in f.message  # its zero point is 0
    # a linear Resize and a one-output MaxPool are fine
    nodes = [helper.make_node("Resize", ["x", "roi", "scales"], ["r"], mode="linear"),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2])]
    m = _model(nodes, [_vi("x", [1, 1, 4, 4])], [_vi("y", None)], [roi, scales])
    assert "onnx-trt-op-restriction" not in _codes(inspect_onnx(_save(m, tmp_path, "ok.onnx")))


def test_subgraphs_in_histogram_and_parameters(tmp_path):
    def branch(name: str, op: str) -> onnx.GraphProto:
        w = _w(f"{name}_w", [4, 4])
        return helper.make_graph([helper.make_node(op, ["x", f"{name}_w"], [f"{name}_y"])],
                                 name, [], [_vi(f"{name}_y", [2, 4])], initializer=[w])

    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("If", ["cond"], ["y"], then_branch=branch("then", "MatMul"),
                              else_branch=branch("else", "Add"))]
    m = _model(nodes, [_vi("x", [2, 4]), _vi("cond", [], TensorProto.BOOL)],
               [_vi("y", [2, 4]), _vi("h", [2, 4])], [_w("w", [4, 4])])
    insp = inspect_onnx(_save(m, tmp_path))
    assert insp.op_histogram == {"MatMul": 2, "Add": 1, "If": 1}
    assert insp.node_count == 4
    assert insp.parameter_count == 3 * 16
    c = insp.compute
    assert c is not None and c.macs == 2 * 4 * 4  # main graph only
    assert "If" in c.uncounted_op_types


def test_shared_name_across_inputs_with_different_given_sizes(tmp_path):
    m = _model([helper.make_node("Add", ["a", "b"], ["y"])],
               [_vi("a", ["batch", 4]), _vi("b", ["batch", 4])], [_vi("y", ["batch", 4])])
    p = _save(m, tmp_path)
    assert not [f for f in inspect_onnx(p, {"a": [2, 4], "b": [2, 4]}).lints
                if f.code == "onnx-shared-dim-name"]
    (f,) = [f for f in inspect_onnx(p, {"a": [1, 4], "b": [4, 4]}).lints
            if f.code == "onnx-shared-dim-name"]
    assert f.severity == "error" and f.where == "a, b"
    assert "a axis 0 = 1" in f.message and "b axis 0 = 4" in f.message


def test_integer_scalar_input_gets_an_input_value_hint(tmp_path: Path):
    """A sample-rate input (int64 scalar) would be filled with 0 or 1 by generated data:
    a warning names it and shows --input-value."""
    g = helper.make_graph(
        [helper.make_node("Cast", ["sr"], ["srf"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "srf"], ["y"])], "g",
        [_vi("x", ["batch", 80]), _vi("sr", [], TensorProto.INT64)], [_vi("y", ["batch", 80])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    insp = inspect_onnx(_save(m, tmp_path))
    [f] = [f for f in insp.lints if f.code == "onnx-integer-scalar-input"]
    assert f.severity == "warning" and f.where == "sr"
    assert "int64 scalar" in f.message and "--input-value sr=" in (f.remedy or "")
    # given its value (--input-value sr=16000), it is fed that value: no warning
    given = inspect_onnx(_save(m, tmp_path), given_inputs={"sr"})
    assert not [f for f in given.lints if f.code == "onnx-integer-scalar-input"]


def test_string_fields_that_are_not_utf8_are_shown_escaped(tmp_path: Path):
    """protobuf hands over bytes for an ONNX string field that is not UTF-8 (producer,
    graph and node names): inspection shows them escaped and the results serialise."""
    import json

    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="RELU_NODE")],
                          "GRAPHNAME", [_vi("x", ["b", 8])], [_vi("y", ["b", 8])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="PRODUCER")
    data = (m.SerializeToString().replace(b"PRODUCER", b"P\xffODUCER")
            .replace(b"GRAPHNAME", b"GRAP\x80NAME").replace(b"RELU_NODE", b"RELU\xfe\xffODE"))
    p = tmp_path / "m.onnx"
    p.write_bytes(data)
    insp = inspect_onnx(p)
    assert insp.producer == "P\\xffODUCER" and insp.graph_name == "GRAP\\x80NAME"
    assert json.loads(insp.model_dump_json())["graph_name"] == "GRAP\\x80NAME"


def test_op_type_that_is_not_utf8_is_counted_escaped():
    """estimate_compute sorts op types: an op type protobuf hands over as bytes (not
    UTF-8) is shown escaped, never compared with text."""
    from trtcheck.inspection.onnx.onnx_compute import estimate_compute

    g = helper.make_graph([helper.make_node("Relu", ["x"], ["h"]),
                           helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [_vi("x", [1, 8])], [_vi("y", [1, 4]), _vi("h", [1, 8])],
                          [numpy_helper.from_array(np.ones((8, 4), np.float32), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    raw = onnx.load_from_string(m.SerializeToString().replace(b"Relu", b"R\xffl\xfe"))
    assert isinstance(raw.graph.node[0].op_type, bytes)
    est, why = estimate_compute(raw, {"x": [1, 8]}, "given")
    assert why is None and est.macs == 32
    assert "R\\xffl\\xfe" in est.uncounted_op_types
