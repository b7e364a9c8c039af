"""Real engine builds with TensorRT-RTX on CPU (ahead-of-time), their plan headers, and the
CLI on real plans. Needs the ``rtx`` extra; FAILS (never skips) without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from trtcheck.errors import InputError
from trtcheck.inspection.engine.engine import inspect_engine_path, is_engine_input
from trtcheck.load.plan_header import read_plan_info
from trtcheck.measure.bench.build import build_engine

pytestmark = pytest.mark.rtx

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tiny_onnx(tmp_path_factory) -> Path:
    """Conv(3->8, 3x3) + Relu + GlobalAveragePool, input x [N,3,16,16] float32."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(np.zeros(8, np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["y"], name="gap")]
    g = helper.make_graph(nodes, "tiny",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8, 1, 1])],
                          [w, b])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    p = tmp_path_factory.mktemp("onnx") / "tiny.onnx"
    onnx.save(model, str(p))
    return p


PROFILE = {"x": ([1, 3, 16, 16], [4, 3, 16, 16], [8, 3, 16, 16])}


def test_tiny_fp32_and_fp16(trt_rtx, tiny_onnx, tmp_path):
    r32 = build_engine(tiny_onnx, tmp_path / "t.fp32.plan", runtime="tensorrt_rtx",
                       shapes=PROFILE)
    data = r32.plan_path.read_bytes()
    assert data[:4] == b"vtrt"
    assert r32.plan.built_with_version == trt_rtx.__version__ == r32.runtime_version
    assert r32.plan.header_size_bytes == len(data) == r32.plan_size_bytes
    assert r32.plan.can_load is True
    assert [la.layer_type for la in r32.network_layers][:2] == ["CONVOLUTION", "ACTIVATION"]
    assert r32.network_layers[0].name == "conv" and r32.network_layers[0].precision == "fp32"
    assert r32.inputs[0].dims == [-1, 3, 16, 16] and r32.outputs[0].name == "y"
    r16 = build_engine(tiny_onnx, tmp_path / "t.fp16.plan", runtime="tensorrt_rtx",
                       precision="fp16", shapes=PROFILE)
    assert r16.onnx_path.name == "t.fp16.converted-fp16.onnx" and r16.onnx_path.is_file()
    assert "ONNX Runtime's converter" in r16.notes[0]
    conv = next(la for la in r16.network_layers if la.layer_type == "CONVOLUTION")
    assert conv.precision == "fp16"                       # strongly typed: FP16 from the graph
    assert r16.inputs[0].dtype == "fp32"                  # keep_io_types=True
    assert r16.plan.can_load is True


def test_build_refusals(trt_rtx, tiny_onnx, tmp_path):
    with pytest.raises(InputError, match="dynamic shape"):
        build_engine(tiny_onnx, tmp_path / "a.plan", runtime="tensorrt_rtx")
    with pytest.raises(InputError, match="unknown input"):
        build_engine(tiny_onnx, tmp_path / "b.plan", runtime="tensorrt_rtx",
                     shapes={**PROFILE, "nope": ([1], [1], [1])})
    with pytest.raises(InputError, match="QuantizeLinear/DequantizeLinear"):
        build_engine(tiny_onnx, tmp_path / "c.plan", runtime="tensorrt_rtx", precision="int8",
                     shapes=PROFILE)
    with pytest.raises(InputError, match="unknown precision"):
        build_engine(tiny_onnx, tmp_path / "d.plan", runtime="tensorrt_rtx", precision="fp64")
    out = tmp_path / "e.plan"
    out.write_bytes(b"keep me")
    with pytest.raises(InputError, match="not overwriting"):
        build_engine(tiny_onnx, out, runtime="tensorrt_rtx", shapes=PROFILE)
    assert out.read_bytes() == b"keep me"


def test_demo_resnet18(trt_rtx, demo_model, tmp_path):
    r = build_engine(demo_model, tmp_path / "r18.plan", runtime="tensorrt_rtx",
                     shapes={"input": ([1, 3, 224, 224], [4, 3, 224, 224], [8, 3, 224, 224])})
    types = [la.layer_type for la in r.network_layers]
    assert types.count("CONVOLUTION") == 20
    assert r.plan.kind == "tensorrt_rtx" and r.plan.can_load is True
    # FP32 weights (11.69 M parameters, 46.8 MB) live in the plan
    assert r.plan_size_bytes == pytest.approx(46.8e6, rel=0.03)
    assert r.plan.header_size_bytes == r.plan_size_bytes


def test_ppocr_det_square_profile(trt_rtx, ppocr, tmp_path):
    r = build_engine(ppocr["det"], tmp_path / "det.plan", runtime="tensorrt_rtx",
                     shapes={"x": ([1, 3, 320, 320], [1, 3, 640, 640], [1, 3, 960, 960])})
    assert r.plan.can_load is True and r.plan.header_size_bytes == r.plan_size_bytes
    assert len(r.network_layers) > 100
    assert r.build_s < 120  # about 0.6 s here; a loose bound for a loaded 2-core box


def test_ppocr_cls_contradictory_profile_is_input_error(trt_rtx, ppocr, tmp_path):
    """The cls model names both spatial dims '?': a 48x192 profile contradicts it."""
    with pytest.raises(InputError) as ei:
        build_engine(ppocr["cls"], tmp_path / "cls.plan", runtime="tensorrt_rtx",
                     shapes={"x": ([1, 3, 48, 192], [4, 3, 48, 192], [8, 3, 48, 192])})
    assert "failed to build" in ei.value.message
    assert "contradictory" in ei.value.message and "share one name" in ei.value.hint


def test_polygraphy_rtx_plan_has_same_header(trt_rtx, tiny_onnx, tmp_path):
    """A plan built through Polygraphy with POLYGRAPHY_USE_TENSORRT_RTX=1 (a fresh process:
    Polygraphy picks its runtime at import) carries the same header layout."""
    out = tmp_path / "poly.plan"
    code = (
        "import sys\n"
        "from polygraphy.backend.trt import CreateConfig, Profile, engine_bytes_from_network,"
        " network_from_onnx_path\n"
        "net = network_from_onnx_path(sys.argv[1])\n"
        "prof = Profile().add('x', min=(1,3,16,16), opt=(4,3,16,16), max=(8,3,16,16))\n"
        "data = engine_bytes_from_network(net, config=CreateConfig(profiles=[prof]))\n"
        "open(sys.argv[2], 'wb').write(bytes(memoryview(data)))\n")
    env = dict(os.environ, POLYGRAPHY_USE_TENSORRT_RTX="1")
    proc = subprocess.run([sys.executable, "-c", code, str(tiny_onnx), str(out)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    info = read_plan_info(out)
    assert info.kind == "tensorrt_rtx" and info.built_with_version == trt_rtx.__version__
    assert info.header_size_bytes == out.stat().st_size


def test_inspect_real_plan_without_gpu(trt_rtx, tiny_onnx, tmp_path):
    r = build_engine(tiny_onnx, tmp_path / "t.plan", runtime="tensorrt_rtx", shapes=PROFILE)
    assert is_engine_input(r.plan_path) and not is_engine_input(tiny_onnx)
    header_only = inspect_engine_path(r.plan_path)
    assert "header only" in header_only.lints[-1].message
    # with the GPU loader: TensorRT-RTX imports, then finds no GPU -> still a clean finding
    from trtcheck.backends.tensorrt import inspect_plan_on_gpu

    insp = inspect_engine_path(r.plan_path, load_engine=inspect_plan_on_gpu)
    assert insp.source == "plan" and insp.plan.can_load is True
    assert insp.memory.plan_size_bytes == r.plan_size_bytes
    notes = [f for f in insp.lints if f.code == "engine-not-loaded"]
    assert notes and "--exportLayerInfo" in notes[0].remedy
    with pytest.raises(InputError, match="ONNX model"):
        inspect_engine_path(tiny_onnx)


def test_cli_build_preflight_inspect(trt_rtx, tiny_onnx, tmp_path, cli):
    res = cli("build", str(tiny_onnx), "--runtime", "tensorrt_rtx", "--precision", "fp32,fp16",
              "-o", str(tmp_path), "--min-shapes", "x:1x3x16x16", "--max-shapes", "x:8x3x16x16",
              "--format", "json")
    assert res.returncode == 0, res.stderr
    built = json.loads(res.stdout)["engines"]
    assert [b["precision"] for b in built] == ["fp32", "fp16"]
    plan = tmp_path / "tiny.fp32.plan"
    pre = cli("preflight", str(plan), "--format", "json")
    assert pre.returncode == 0 and json.loads(pre.stdout)["can_load"] is True
    wrong = cli("preflight", str(plan), "--runtime", "tensorrt")
    assert wrong.returncode == 3 and "not interchangeable" in wrong.stderr
    onnx_as_plan = cli("preflight", str(tiny_onnx))
    assert onnx_as_plan.returncode == 2 and "ONNX model" in onnx_as_plan.stderr
    again = cli("build", str(tiny_onnx), "--runtime", "tensorrt_rtx", "-o", str(tmp_path),
                "--min-shapes", "x:1x3x16x16", "--max-shapes", "x:8x3x16x16")
    assert again.returncode == 2 and "not overwriting" in again.stderr
    bench = cli("bench", str(plan), "--batch", "1")  # a vtrt plan picks tensorrt_rtx
    assert bench.returncode == 3
    assert "no CUDA GPU" in bench.stderr or "cuda-python" in bench.stderr
    assert "Traceback" not in again.stderr + wrong.stderr + onnx_as_plan.stderr + bench.stderr


def test_every_parser_error_is_reported_with_its_op_domain(trt_rtx, tmp_path):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"], name="relu"),
         helper.make_node("FooOp", ["a"], ["b"], name="foo", domain="com.example"),
         helper.make_node("BarOp", ["b"], ["y"], name="bar", domain="com.example")],
        "g", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("com.example", 1)])
    onnx.save(m, str(tmp_path / "custom.onnx"))
    with pytest.raises(InputError) as exc:
        build_engine(tmp_path / "custom.onnx", tmp_path / "c.plan", runtime="tensorrt_rtx")
    msg = exc.value.message
    assert "(2 error(s))" in msg  # both, not only the first
    assert "node 1 'foo' (com.example::FooOp)" in msg and "node 2 'bar' (com.example::BarOp)" in msg


def test_the_built_optimization_profile_is_recorded(trt_rtx, tiny_onnx, tmp_path, cli):
    r = build_engine(tiny_onnx, tmp_path / "p.plan", runtime="tensorrt_rtx", shapes=PROFILE)
    (prof,) = r.profiles
    sh = prof.shapes["x"]
    assert (sh.min, sh.opt, sh.max) == ([1, 3, 16, 16], [4, 3, 16, 16], [8, 3, 16, 16])
    res = cli("build", str(tiny_onnx), "--runtime", "tensorrt_rtx", "-o", str(tmp_path / "o"),
              "--min-shapes", "x:1x3x16x16", "--opt-shapes", "x:2x3x16x16",
              "--max-shapes", "x:8x3x16x16", "--format", "json")
    assert res.returncode == 0, res.stderr
    (eng,) = json.loads(res.stdout)["engines"]
    assert eng["profiles"][0]["shapes"]["x"]["opt"] == [2, 3, 16, 16]
