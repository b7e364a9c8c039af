"""`trtcheck inspect` through the real process boundary, and the report section."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper
from onnx_builders import RESNET18_MACS, resnet18

from trtcheck.report.charts import ChartSink
from trtcheck.report.sec_inspection import render_inspection
from trtcheck.results import ModelInspection

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TRTCHECK_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "trtcheck", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines and lines[0].startswith("error: "), proc.stderr
    assert len(lines) <= 2 and all(l.startswith(("error: ", "hint: ")) for l in lines), lines
    assert proc.stdout == ""
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.mark.ppocr
def test_inspect_cls_prints_dynamic_dims_and_shared_name_lint(ppocr):
    proc = run_cli("inspect", str(ppocr["cls"]))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "dynamic dims" in out
    assert "input x axis 0: unnamed" in out
    assert "input x axis 2: named '?'" in out and "input x axis 3: named '?'" in out
    assert "[onnx-shared-dim-name]" in out and "forces them equal" in out
    assert "--shapes x:1x3xHxW" in out


@pytest.mark.ppocr
def test_inspect_det_with_shapes_json(ppocr):
    proc = run_cli("inspect", str(ppocr["det"]), "--shapes", "x:1x3x320x320", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc.pop("kind") == "inspect" and doc.pop("schema_version")
    insp = ModelInspection.model_validate(doc)
    assert insp.compute is not None and insp.compute.input_shapes == {"x": [1, 3, 320, 320]}
    assert insp.compute.macs > 0


def test_inspect_resnet_text_and_md(tmp_path):
    p = tmp_path / "resnet18.onnx"
    onnx.save(resnet18(), p)
    proc = run_cli("inspect", str(p))
    assert proc.returncode == 0, proc.stderr
    assert "compute    1.81 GMACs (3.63 GFLOPs) at input:1x3x224x224" in proc.stdout
    assert "11,699,112 parameters" in proc.stdout
    proc = run_cli("inspect", str(p), "--format", "md")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# trtcheck inspect: resnet18.onnx")
    assert "| input | input | float32 | \\[batch, 3, 224, 224\\] |" in proc.stdout
    assert f"{RESNET18_MACS:,}" in proc.stdout


@pytest.fixture()
def bad_inputs(tmp_path) -> dict[str, Path]:
    good = tmp_path / "good.onnx"
    onnx.save(resnet18(), good)
    data = good.read_bytes()
    out = {"good": good}
    out["truncated"] = tmp_path / "truncated.onnx"
    out["truncated"].write_bytes(data[: len(data) // 2])
    out["text"] = tmp_path / "text.onnx"
    out["text"].write_text("hello, I am a text file\n")
    out["missing"] = tmp_path / "missing.onnx"
    out["directory"] = tmp_path / "adir"
    out["directory"].mkdir()
    out["empty"] = tmp_path / "empty.onnx"
    out["empty"].write_bytes(b"")
    out["plan"] = tmp_path / "engine.onnx"
    out["plan"].write_bytes(b"ftrt" + b"\x00" * 60)
    return out


@pytest.mark.parametrize("kind,needle", [
    ("truncated", "not a valid ONNX model"), ("text", "text file"), ("missing", "not found"),
    ("directory", "is a directory"), ("empty", "empty"), ("plan", "TensorRT plan"),
])
def test_bad_inputs_exit_2_one_line(bad_inputs, kind, needle):
    assert_one_line_error(run_cli("inspect", str(bad_inputs[kind])), needle)


def test_bad_shapes_exit_2(bad_inputs):
    good = str(bad_inputs["good"])
    assert_one_line_error(run_cli("inspect", good, "--shapes", "images:1x3x224x224"),
                          "unknown input", "'images'")
    assert_one_line_error(run_cli("inspect", good, "--shapes", "input:1x3x224"), "3 dims")
    assert_one_line_error(run_cli("inspect", good, "--shapes", "input:1xAx224x224"),
                          "bad --shapes entry")


def _hostile_model() -> onnx.ModelProto:
    evil_in = "<script>alert(1)</script>|`x`"
    evil_op = "Evil<b>|`op`$x$"
    nodes = [helper.make_node(evil_op, [evil_in], ["out|<i>"], domain="evil.<dom>")]
    g = helper.make_graph(nodes, "<g>", [helper.make_tensor_value_info(
        evil_in, TensorProto.FLOAT, ["<n>|", 3])],
        [helper.make_tensor_value_info("out|<i>", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                               helper.make_opsetid("evil.<dom>", 1)],
                             producer_name="<img src=x onerror=alert(1)>")


def test_report_section_escapes_hostile_names(tmp_path):
    from trtcheck.inspection.onnx.onnx_inspect import inspect_onnx

    p = tmp_path / "evil.onnx"
    onnx.save(_hostile_model(), p)
    insp = inspect_onnx(p)
    charts = ChartSink()
    sec = render_inspection(insp, charts)
    assert len(charts.charts) == 1 and charts.charts[0].png_bytes.startswith(b"\x89PNG")
    assert "<script>" not in sec.html and "&lt;script&gt;" in sec.html
    assert "<img src=x" not in sec.html and "<b>" not in sec.html and "<i>" not in sec.html
    md = sec.markdown
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "\\|" in md and "\\`x\\`" in md
    for line in md.splitlines():
        if line.startswith("| input |"):
            # 4 cells: escaped pipes do not split the row
            assert line.replace("\\|", "").count("|") == 5, line
    proc = run_cli("inspect", str(p), "--format", "md")
    assert proc.returncode == 0, proc.stderr
    assert "<script>" not in proc.stdout


def test_inspect_help_lists_shapes_syntax():
    proc = run_cli("inspect", "--help")
    assert proc.returncode == 0
    assert "--shapes" in proc.stdout and "x:1x3x224x224" in proc.stdout
