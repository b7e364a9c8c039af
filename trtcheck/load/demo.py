"""The built-in demo model: ResNet-18 (He et al. 2016).

Generated with ``onnx.helper`` and seeded random weights (compute cost, not accuracy,
is what a timing demo needs), built on first use and cached as
``<cache>/models/resnet18-demo-v1.onnx`` (about 45 MiB). The graph is what an inference
export of torchvision's ``resnet18`` looks like after BatchNorm folding: 20 Conv (with
bias), 17 Relu, 8 Add, MaxPool, GlobalAveragePool, Flatten, Gemm; input ``input``
``[batch, 3, 224, 224]`` float32, output ``output`` ``[batch, 1000]``; 11.69 M parameters,
1.82 GMACs per sample at 224x224.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

DEMO_VERSION = 1
DEMO_SEED = 20161210  # arXiv:1512.03385 v1 date, for the record


def build_resnet18(seed: int = DEMO_SEED, opset: int = 17):  # -> onnx.ModelProto
    """Build the ResNet-18 graph with He-normal weights from ``numpy.random.default_rng(seed)``.

    Returns:
        an ``onnx.ModelProto`` that passes ``onnx.checker.check_model``.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    counter = {"n": 0}

    def name(prefix: str) -> str:
        counter["n"] += 1
        return f"{prefix}_{counter['n']}"

    def conv(x: str, cin: int, cout: int, k: int, stride: int, relu: bool,
             scale: float = 1.0) -> str:
        n = name("conv")
        w = (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)) * scale)
        b = rng.standard_normal(cout) * 0.01
        inits.append(numpy_helper.from_array(w.astype(np.float32), f"{n}.weight"))
        inits.append(numpy_helper.from_array(b.astype(np.float32), f"{n}.bias"))
        out = f"{n}_out"
        nodes.append(helper.make_node("Conv", [x, f"{n}.weight", f"{n}.bias"], [out], name=n,
                                      kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4))
        if relu:
            r = f"{n}_relu"
            nodes.append(helper.make_node("Relu", [out], [r], name=name("relu")))
            return r
        return out

    def block(x: str, cin: int, cout: int, stride: int) -> str:
        y = conv(x, cin, cout, 3, stride, relu=True)
        # residual branch scaled by 1/sqrt(2) so activations stay O(1) without BatchNorm
        y = conv(y, cout, cout, 3, 1, relu=False, scale=float(np.sqrt(0.5)))
        sc = conv(x, cin, cout, 1, stride, relu=False) if (stride != 1 or cin != cout) else x
        s = name("add")
        nodes.append(helper.make_node("Add", [y, sc], [s], name=s))
        r = name("relu")
        nodes.append(helper.make_node("Relu", [s], [r], name=r))
        return r

    x = conv("input", 3, 64, 7, 2, relu=True)
    nodes.append(helper.make_node("MaxPool", [x], ["pool1"], name="maxpool", kernel_shape=[3, 3],
                                  strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "pool1", 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        x = block(x, cin, cout, stride)
        x = block(x, cout, cout, 1)
        cin = cout
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="avgpool"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1))
    fc_w = rng.standard_normal((1000, 512)) * np.sqrt(1.0 / 512)
    inits.append(numpy_helper.from_array(fc_w.astype(np.float32), "fc.weight"))
    inits.append(numpy_helper.from_array(np.zeros(1000, np.float32), "fc.bias"))
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["output"], name="fc",
                                  transB=1))
    graph = helper.make_graph(
        nodes, "resnet18_demo",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 1000])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="trtcheck-demo",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def demo_model_path(rebuild: bool = False) -> Path:
    """Path of the cached demo model, building it first when missing (about 2 s).

    Raises:
        EnvironmentProblem: the cache folder cannot be created or written.
    """
    from trtcheck.errors import EnvironmentProblem

    import onnx

    from trtcheck.files import replace_atomically
    from trtcheck.load.cache import cache_dir

    folder = cache_dir("models")
    path = folder / f"resnet18-demo-v{DEMO_VERSION}.onnx"
    if path.is_file() and path.stat().st_size > 0 and not rebuild:
        return path
    model = build_resnet18()
    try:
        replace_atomically(path, lambda tmp: onnx.save_model(model, tmp))
    except OSError as exc:
        raise EnvironmentProblem(f"cannot write the demo model into {folder}: "
                                 f"{exc.strerror or exc}", "set TRTCHECK_CACHE_DIR to a "
                                 "writable folder") from None
    return path
