"""`trtcheck build` input checks made before any engine is built (the model file, shape
names, profile bounds, existing plans); a failed FP16 build leaves nothing behind."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from onnx_builders import save_graph as _save
from tests.conftest import assert_one_line_error
from tests.conftest import main_one_line_error as one_line_error


@pytest.fixture
def model(tiny_relu_model):
    return tiny_relu_model


def test_build_unknown_shape_name(model, tmp_path, capsys):
    out = tmp_path / "engines"
    line = one_line_error(["build", model, "--shapes", "foo:1x3x224x224", "-o", out],
                          capsys, "'foo'", "the model's inputs are 'x'", "--shapes")
    assert "dynamic shape" not in line and "profile is needed" not in line
    line = one_line_error(["build", model, "--min-shapes", "bar:1x3x4x4", "--max-shapes",
                           "bar:1x3x8x8", "-o", out], capsys, "'bar'", "'x'")
    assert "--min-shapes" in line and "--max-shapes" in line
    assert not out.exists()


@pytest.mark.parametrize("kind", ["text", "empty", "directory", "npz"])
def test_build_rejects_a_non_onnx_model_before_the_runtime(cli, tmp_path, kind):
    model = tmp_path / "model.onnx"
    if kind == "text":
        model.write_text("hello\n")
    elif kind == "empty":
        model.write_bytes(b"")
    elif kind == "directory":
        model.mkdir()
    else:
        np.savez(tmp_path / "model.npz", x=np.ones(3))
        model = tmp_path / "model.npz"
    out = tmp_path / "plans"
    for runtime in ("tensorrt", "tensorrt_rtx"):
        res = cli("build", str(model), "--runtime", runtime, "-o", str(out))
        line = assert_one_line_error(res, 2, model.name)
        assert "not importable" not in line and "profile" not in line, line
        assert "not found" not in line, line
    assert not out.exists()  # nothing left behind, not even an empty folder


def test_build_refuses_an_existing_plan_before_building_any(cli, tmp_path):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 4])
    model = _save(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                  tmp_path / "m.onnx")
    out = tmp_path / "plans"
    out.mkdir()
    (out / "m.fp16.plan").write_bytes(b"mine")
    res = cli("build", model, "--precision", "fp32,fp16", "--runtime", "tensorrt_rtx",
              "-o", str(out))
    assert_one_line_error(res, 2, "m.fp16.plan", "--overwrite")
    assert sorted(p.name for p in out.iterdir()) == ["m.fp16.plan"]
    assert (out / "m.fp16.plan").read_bytes() == b"mine"


def test_build_fp16_of_a_model_with_fp16_tensors_is_bad_input(cli, multi_input_model,
                                                               tmp_path):
    out = tmp_path / "plans"
    res = cli("build", multi_input_model, "--precision", "fp16", "--runtime", "tensorrt_rtx",
              "-o", str(out), "--shapes", "ids:1x8,mask:1x8,x16:1x8")
    line = assert_one_line_error(res, 2, "FP16", "multi.onnx")
    assert "internal error" not in line
    assert not out.exists() or not any(out.iterdir())


def test_build_profile_min_above_max_is_refused_up_front(cli, ppocr, tmp_path):
    out = tmp_path / "plans"
    res = cli("build", str(ppocr["det"]), "--precision", "fp16", "--runtime", "tensorrt_rtx",
              "-o", str(out), "--min-shapes", "x:1x3x960x960", "--max-shapes", "x:1x3x320x320")
    assert_one_line_error(res, 2, "min <= opt <= max", "'x'")
    assert not out.exists()


def test_failed_fp16_build_leaves_no_converted_model_to_block_a_rerun(trt_rtx, ppocr, tmp_path):
    from trtcheck.errors import InputError
    from trtcheck.measure.bench.build import build_engine

    out = tmp_path / "det.fp16.plan"
    bad_profile = {"x": ([1, 3, 960, 960], [1, 3, 640, 640], [1, 3, 320, 320])}
    with pytest.raises(InputError, match="failed to build"):
        build_engine(ppocr["det"], out, runtime="tensorrt_rtx", precision="fp16",
                     shapes=bad_profile)
    assert list(tmp_path.iterdir()) == []
