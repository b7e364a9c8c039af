"""`trtcheck build` writes each plan through a temporary file and a rename: a write that
fails part-way (disk full, an interrupt) never leaves a truncated plan under the final
name, and never damages the plan that was there. Real builds with TensorRT-RTX on CPU;
FAILS (never skips) without the ``rtx`` extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, CliResult, assert_one_line_error

pytestmark = pytest.mark.rtx

BUILD = ["--runtime", "tensorrt_rtx", "--min-shapes", "x:1x3x16x16",
         "--max-shapes", "x:4x3x16x16"]

#: runs `trtcheck ARGS` with a file-size limit (a disk that fills up during the write):
#: writes past LIMIT bytes fail with EFBIG (SIGXFSZ ignored, as a full disk gives ENOSPC)
LIMITED = (
    "import resource, signal, sys\n"
    "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
    "limit = int(sys.argv[1])\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))\n"
    "from trtcheck.cli import main\n"
    "main(sys.argv[2:])\n")


@pytest.fixture(scope="module")
def conv_onnx(tmp_path_factory) -> Path:
    """Conv(3->8, 3x3) + Relu, input x [N,3,16,16] float32."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "conv",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8, 16, 16])],
                          [w])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    p = tmp_path_factory.mktemp("atomic-onnx") / "conv.onnx"
    onnx.save(model, str(p))
    return p


def _limited_cli(limit_bytes: int, *args: str):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("TRTCHECK_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", LIMITED, str(limit_bytes), *args],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def test_failed_plan_write_leaves_no_truncated_plan(trt_rtx, conv_onnx, tmp_path, cli):
    good = tmp_path / "good"
    res = cli("build", str(conv_onnx), *BUILD, "-o", str(good))
    assert res.returncode == 0, res.stderr
    plan = good / "conv.fp32.plan"
    size = plan.stat().st_size
    assert size > 4096, size  # the limit below must cut the plan part-way
    original = plan.read_bytes()

    # a fresh build whose write fails half-way: one clear line, no plan, no temp file
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    res = _limited_cli(size // 2, "build", str(conv_onnx), *BUILD, "-o", str(fresh))
    assert_one_line_error(res, 2, "cannot write", "conv.fp32.plan")
    assert os.listdir(fresh) == [], os.listdir(fresh)

    # replacing an existing plan (--overwrite) when the write fails: the old plan is intact
    res = _limited_cli(size // 2, "build", str(conv_onnx), *BUILD, "-o", str(good),
                       "--overwrite")
    assert_one_line_error(res, 2, "cannot write")
    assert plan.read_bytes() == original
    assert os.listdir(good) == ["conv.fp32.plan"]


def test_write_plan_atomic_interrupted(tmp_path, monkeypatch):
    from trtcheck.measure.bench import build
    target = tmp_path / "sub" / "m.plan"
    build.write_plan_atomic(target, b"vtrt" + b"\x01" * 100)
    assert target.read_bytes() == b"vtrt" + b"\x01" * 100

    def interrupted(fd: int) -> None:  # Ctrl-C after the bytes, before the rename
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build.write_plan_atomic(target, b"vtrt" + b"\x02" * 100)
    assert target.read_bytes() == b"vtrt" + b"\x01" * 100
    assert os.listdir(target.parent) == ["m.plan"]
