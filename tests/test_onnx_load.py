"""load_onnx: real models load; every kind of bad input gives one InputError (exit 2)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtcheck.errors import EXIT_BAD_INPUT, InputError
from trtcheck.load.onnx_model import load_onnx, plan_magic, sha256_file


def _tiny_model(n_weights: int = 64) -> onnx.ModelProto:
    w = numpy_helper.from_array(np.arange(n_weights * 4, dtype=np.float32).reshape(n_weights, 4),
                                "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n_weights])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                          initializer=[w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _err(path: Path, **kw) -> InputError:
    with pytest.raises(InputError) as ei:
        load_onnx(path, **kw)
    assert ei.value.exit_code == EXIT_BAD_INPUT
    assert "\n" not in ei.value.message
    return ei.value


@pytest.mark.ppocr
def test_real_ppocr_models_load(ppocr):
    for key, path in ppocr.items():
        m = load_onnx(path)
        assert len(m.graph.node) > 100, key
        assert m.graph.input[0].name == "x"


def test_missing_file(tmp_path):
    e = _err(tmp_path / "nope.onnx")
    assert "not found" in e.message and "nope.onnx" in e.message


def test_directory(tmp_path):
    assert "is a directory" in _err(tmp_path).message
    onnx.save(_tiny_model(), tmp_path / "inside.onnx")
    assert "inside.onnx" in (_err(tmp_path).hint or "")


def test_empty_file(tmp_path):
    p = tmp_path / "empty.onnx"
    p.write_bytes(b"")
    assert "empty" in _err(p).message


def test_text_file_named_onnx(tmp_path):
    p = tmp_path / "notes.onnx"
    p.write_text("this is not a model\nat all\n")
    e = _err(p)
    assert "text file" in e.message and "this is not a model" in e.message


def test_git_lfs_pointer(tmp_path):
    p = tmp_path / "lfs.onnx"
    p.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n")
    e = _err(p)
    assert "Git LFS pointer" in e.message and "git lfs pull" in (e.hint or "")


@pytest.mark.parametrize("head", [b"ftrt\x00\x00\x00\x00", b"vtrt\x01\x00\x00\x00",
                                  b"\x00\x00\x00\x00ftrt"])
def test_tensorrt_plan_named_onnx(tmp_path, head):
    p = tmp_path / "engine.onnx"
    p.write_bytes(head + bytes(range(256)) * 4)
    e = _err(p)
    assert "TensorRT plan" in e.message
    assert "trtcheck inspect" in (e.hint or "")
    assert plan_magic(head) in ("ftrt", "vtrt")


def test_plan_magic_negative():
    assert plan_magic(b"\x08\x07\x12\x0bpytorch") is None


@pytest.mark.ppocr
def test_truncated_real_model_every_cut_is_rejected(tmp_path, ppocr):
    data = Path(ppocr["cls"]).read_bytes()
    m = onnx.load_from_string(data)
    # the boundary between the graph and opset_import: decodes, but is not a model
    m.ClearField("opset_import")
    m.ClearField("metadata_props")
    boundary = len(m.SerializeToString())
    assert data[:boundary] == m.SerializeToString()
    rng = np.random.default_rng(0)
    cuts = sorted({1, 2, 3, 16, 100, boundary, boundary + 1, len(data) - 1,
                   *rng.integers(1, len(data), 40).tolist()})
    p = tmp_path / "trunc.onnx"
    for cut in cuts:
        p.write_bytes(data[:cut])
        e = _err(p)
        assert "not a valid ONNX model" in e.message or "text file" in e.message, (cut, e.message)


def test_random_binary_garbage(tmp_path):
    p = tmp_path / "garbage.onnx"
    p.write_bytes(np.random.default_rng(1).integers(0, 256, 5000, dtype=np.uint8).tobytes())
    _err(p)


def test_sha256_file(tmp_path):
    p = tmp_path / "f.bin"
    payload = b"abc" * 1_000_000
    p.write_bytes(payload)
    assert sha256_file(p, chunk_bytes=4096) == hashlib.sha256(payload).hexdigest()


def _save_external(tmp_path: Path) -> Path:
    m = _tiny_model(4096)
    p = tmp_path / "big.onnx"
    onnx.save_model(m, p, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="big.weights", size_threshold=16)
    assert (tmp_path / "big.weights").is_file()
    return p


def test_external_data_loads(tmp_path):
    p = _save_external(tmp_path)
    m = load_onnx(p)
    arr = numpy_helper.to_array(m.graph.initializer[0])
    assert arr.shape == (4096, 4) and arr[-1, -1] == 4096 * 4 - 1
    m2 = load_onnx(p, load_external_data=False)
    assert m2.graph.initializer[0].data_location == TensorProto.EXTERNAL


def test_external_data_missing_is_named(tmp_path):
    p = _save_external(tmp_path)
    (tmp_path / "big.weights").unlink()
    e = _err(p)
    assert "big.weights" in e.message and "missing" in e.message


def test_external_data_truncated(tmp_path):
    p = _save_external(tmp_path)
    w = tmp_path / "big.weights"
    w.write_bytes(w.read_bytes()[:1000])
    e = _err(p)
    assert "big.weights" in e.message and "shorter" in e.message


def test_external_data_unsafe_location(tmp_path):
    m = _tiny_model(8)
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="../../etc/passwd")
    p = tmp_path / "evil.onnx"
    p.write_bytes(m.SerializeToString())
    assert "unsafe" in _err(p).message


def _passthrough_model() -> onnx.ModelProto:
    """A graph of no nodes whose output is its input."""
    g = helper.make_graph([], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                  [1, 4])],
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _zero_dim_model() -> onnx.ModelProto:
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 0, 80])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [0, 0, 80])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_zero_node_model_is_refused(tmp_path: Path):
    p = tmp_path / "empty.onnx"
    onnx.save(_passthrough_model(), str(p))
    err = _err(p)
    assert "no nodes" in err.message and "nothing to measure" in err.message


def test_zero_sized_input_axis_is_refused(tmp_path: Path):
    """ONNX dim_value 0 is a fixed empty axis, not a dynamic one: refused at load, so
    inspect, bench and build agree (none treats it as dynamic, none builds for it)."""
    p = tmp_path / "zero.onnx"
    onnx.save(_zero_dim_model(), str(p))
    err = _err(p)
    assert "'x' declares axis 0 with size 0 ([0, 0, 80])" in err.message
    assert "dim_param" in (err.hint or "")


@pytest.mark.parametrize("command", [["inspect"], ["bench", "--batch", "1"], ["build"]])
@pytest.mark.parametrize("which", ["empty", "zero"])
def test_unmeasurable_models_exit_2_in_every_command(tmp_path: Path, cli, command, which):
    from conftest import assert_one_line_error

    p = tmp_path / f"{which}.onnx"
    onnx.save(_passthrough_model() if which == "empty" else _zero_dim_model(), str(p))
    args = [command[0], str(p), *command[1:]]
    if command[0] == "build":
        args += ["-o", str(tmp_path / "out.plan")]
    res = cli(*args)
    assert_one_line_error(res, 2, "no nodes" if which == "empty" else "size 0")
    assert not (tmp_path / "out.plan").exists()


def test_non_utf8_model_file_name_is_measured_and_written(tmp_path: Path):
    """A model whose file name holds a byte that is not UTF-8: ONNX Runtime gets the
    model's bytes, and the report and results are written with the name escaped."""
    import json
    import os

    from cli_helper import invoke as run_main

    folder = os.fsencode(tmp_path)
    name = os.path.join(folder, b"m\xff.onnx")
    onnx.save(_tiny_model(), os.fsdecode(name))
    out = os.fsdecode(os.path.join(folder, b"rep"))
    res = run_main("report", os.fsdecode(name), "--batch", "1", "--min-duration", "0.05",
                   "--warmup", "0.01", "-o", out)
    # ascii(): a message holding the undecodable name cannot cross to a pytest-xdist
    # controller (execnet sends UTF-8), which would end the whole run
    assert res.returncode == 0, ascii(res.stderr)
    doc = json.loads(Path(out, "results.json").read_text(encoding="utf-8"))
    assert doc["bench"][0]["model_path"].endswith("m\\udcff.onnx"), ascii(doc["bench"][0])
    assert sorted(os.listdir(out)) == ["charts", "report.html", "report.md", "results.json"]
