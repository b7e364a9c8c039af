"""Small ONNX graphs built with onnx.helper for the inspection tests."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class GraphBuilder:
    """Accumulates nodes and zero-filled initializers; counts expected MACs by hand."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.n = 0

    def name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def weight(self, shape: list[int], dtype=np.float32) -> str:
        nm = self.name("w")
        self.inits.append(numpy_helper.from_array(np.zeros(shape, dtype=dtype), nm))
        return nm

    def node(self, op: str, inputs: list[str], n_out: int = 1, **attrs) -> str:
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, **attrs))
        return outs[0]

    def conv_bn_relu(self, x: str, cin: int, cout: int, k: int, stride: int,
                     relu: bool = True) -> str:
        w = self.weight([cout, cin, k, k])
        y = self.node("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
                      pads=[k // 2] * 4)
        y = self.node("BatchNormalization", [y, self.weight([cout]), self.weight([cout]),
                                             self.weight([cout]), self.weight([cout])])
        return self.node("Relu", [y]) if relu else y

    def model(self, inputs, outputs, opset: int = 17) -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, "g", inputs, outputs, initializer=self.inits)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def resnet18(batch: int | str = "batch", classes: int = 1000) -> onnx.ModelProto:
    """torchvision's ResNet-18 layout (BasicBlock x [2, 2, 2, 2]) at 3x224x224."""
    b = GraphBuilder()
    x = b.conv_bn_relu("input", 3, 64, 7, 2)
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for block in range(2):
            s = stride if block == 0 else 1
            y = b.conv_bn_relu(x, cin, cout, 3, s)
            y = b.conv_bn_relu(y, cout, cout, 3, 1, relu=False)
            if s != 1 or cin != cout:
                x = b.conv_bn_relu(x, cin, cout, 1, s, relu=False)
            x = b.node("Relu", [b.node("Add", [x, y])])
            cin = cout
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    w = b.weight([classes, 512])
    bias = b.weight([classes])
    b.nodes.append(helper.make_node("Gemm", [x, w, bias], ["logits"], transB=1))
    return b.model([helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, 224, 224])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])])


#: conv + fc MACs of torchvision ResNet-18 at 1x3x224x224, summed layer by layer:
#: conv1 64*112*112*3*49 = 118,013,952; layer1 4 * 56*56*64*64*9 = 462,422,016;
#: layer2..4 each 411,041,792 (3x3 s2 + 3 more 3x3 + 1x1 downsample); fc 512*1000.
RESNET18_MACS = 118_013_952 + 462_422_016 + 3 * 411_041_792 + 512_000


def small_classifier(seed: int | None = None, classes: int = 10) -> onnx.ModelProto:
    """A small image classifier: Conv-BN-Relu 3->8 (3x3), Conv-BN-Relu 8->16 (3x3, stride 2),
    GlobalAveragePool, Flatten, Gemm -> ``logits`` ``[batch, classes]``; input ``x``
    ``[batch, 3, 32, 32]`` float32, batch dynamic; opset 17, IR version 8 (fixed, so the
    file does not change with the installed onnx). Weights are zeros, or seeded normal
    draws (``numpy.random.default_rng(seed)``, BatchNorm variances made positive) when
    ``seed`` is given."""
    b = GraphBuilder()
    x = b.conv_bn_relu("x", 3, 8, 3, 1)
    x = b.conv_bn_relu(x, 8, 16, 3, 2)
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    w = b.weight([classes, 16])
    bias = b.weight([classes])
    b.nodes.append(helper.make_node("Gemm", [x, w, bias], ["logits"], transB=1))
    m = b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, 32])],
                [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", classes])])
    m.ir_version = 8
    if seed is not None:
        rng = np.random.default_rng(seed)
        for init in m.graph.initializer:
            arr = numpy_helper.to_array(init)
            vals = rng.normal(0.0, 0.5, arr.shape).astype(np.float32)
            if arr.ndim == 1:  # BatchNorm scale/bias/mean/var and Gemm bias: keep var > 0
                vals = np.abs(vals) + 0.5
            init.CopyFrom(numpy_helper.from_array(vals, init.name))
    return m


def save_graph(graph: onnx.GraphProto, path) -> str:
    """Wrap ``graph`` in an opset-17, IR-version-8 model, check it with
    ``onnx.checker`` and save it to ``path``; returns the path as text."""
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return str(path)


def multi_input_graph() -> onnx.GraphProto:
    """Inputs ``ids`` int64, ``mask`` bool and ``x16`` float16, each ``[N, 8]`` with a
    dynamic batch ``N``; output ``out`` float16 ``[N, 8]`` = ids * mask + x16."""
    T = TensorProto
    ins = [helper.make_tensor_value_info("ids", T.INT64, ["N", 8]),
           helper.make_tensor_value_info("mask", T.BOOL, ["N", 8]),
           helper.make_tensor_value_info("x16", T.FLOAT16, ["N", 8])]
    out = helper.make_tensor_value_info("out", T.FLOAT16, ["N", 8])
    nodes = [helper.make_node("Cast", ["ids"], ["idsf"], to=T.FLOAT16),
             helper.make_node("Cast", ["mask"], ["maskf"], to=T.FLOAT16),
             helper.make_node("Mul", ["idsf", "maskf"], ["t"]),
             helper.make_node("Add", ["t", "x16"], ["out"])]
    return helper.make_graph(nodes, "multi", ins, [out])


def scalar_input_graph() -> onnx.GraphProto:
    """A rank-0 float32 input ``s`` and a 1-D float32 ``v`` of dynamic length ``L``;
    output ``o`` ``[L]`` = v * s."""
    ins = [helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
           helper.make_tensor_value_info("v", TensorProto.FLOAT, ["L"])]
    out = helper.make_tensor_value_info("o", TensorProto.FLOAT, ["L"])
    return helper.make_graph([helper.make_node("Mul", ["v", "s"], ["o"])], "scal", ins, [out])


def matmul_model(scale: float = 1.0) -> onnx.ModelProto:
    """``y = x @ (scale * I4)``: input ``x`` float32 ``[n, 4]`` (``n`` dynamic), output ``y``
    float32 ``[n, 4]``; opset 17, IR version 8."""
    w = numpy_helper.from_array(np.eye(4, dtype=np.float32) * scale, "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])],
                          initializer=[w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m
