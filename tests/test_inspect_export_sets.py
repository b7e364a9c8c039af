"""``trtcheck inspect`` refuses exports of two different engines
(an FP16 engine's graph.json beside an FP32 engine's profile.json was merged silently)
and accepts the documented ``inspect model.graph.json model.profile.json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trtcheck.cli import main


def _run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


def _mixed_folder(tmp_path: Path, exports: Path) -> Path:
    d = tmp_path / "mixed"
    d.mkdir()
    shutil.copy(exports / "resnet18-a100-fp16" / "resnet.onnx.engine.graph.json", d)
    shutil.copy(exports / "resnet18-a100-fp32" / "resnet.onnx.engine.profile.json", d)
    return d


def test_folder_mixing_two_engines_is_refused(tmp_path, capsys, trtexec_exports):
    d = _mixed_folder(tmp_path, trtexec_exports)
    code, out, err = _run(["inspect", str(d)], capsys)
    assert code == 2, out + err
    assert "precision mix" not in out
    line = err.strip()
    assert "\n" not in line and "exports of different engines" in line
    assert "resnet.onnx.engine.graph.json" in line and "resnet.onnx.engine.profile.json" in line


def test_report_refuses_the_mixed_folder_too(tmp_path, capsys, trtexec_exports):
    d = _mixed_folder(tmp_path, trtexec_exports)
    code, out, err = _run(["report", str(d), "-o", str(tmp_path / "rep")], capsys)
    assert code == 2 and "exports of different engines" in err, out + err


def test_two_files_of_one_engine_as_documented(capsys, trtexec_exports):
    d = trtexec_exports / "resnet18-a100-fp16"
    code, out, err = _run(["inspect", str(d / "resnet.onnx.engine.graph.json"),
                           str(d / "resnet.onnx.engine.profile.json"), "--format", "json"],
                          capsys)
    assert code in (0, None), err
    doc = json.loads(out)
    assert len(doc["layers"]) == 36
    assert all(la["avg_time_ms"] is not None for la in doc["layers"])


def test_two_files_of_two_engines_are_refused(capsys, trtexec_exports):
    code, out, err = _run(["inspect",
                           str(trtexec_exports / "resnet18-a100-fp16/resnet.onnx.engine.graph.json"),
                           str(trtexec_exports / "resnet18-a100-fp32/resnet.onnx.engine.profile.json")],
                          capsys)
    assert code == 2 and "exports of different engines" in err, out + err


def test_two_files_with_other_stems_form_one_set(tmp_path, capsys, trtexec_exports):
    d = trtexec_exports / "resnet18-a100-fp32"
    g = tmp_path / "x.graph.json"
    p = tmp_path / "y.profile.json"
    shutil.copy(d / "resnet.onnx.engine.graph.json", g)
    shutil.copy(d / "resnet.onnx.engine.profile.json", p)
    code, out, err = _run(["inspect", str(g), str(p)], capsys)
    assert code in (0, None) and "32 layers" in out, out + err


def test_non_export_among_several_paths_is_one_error(tmp_path, capsys, trtexec_exports):
    other = tmp_path / "m.onnx"
    other.write_bytes(b"\x08\x07")
    code, out, err = _run(["inspect", str(trtexec_exports / "resnet18-a100-fp16/"
                                          "resnet.onnx.engine.graph.json"), str(other)], capsys)
    assert code == 2 and "not a trtexec export file" in err, out + err


def test_graph_json_with_non_record_layers_is_bad_input(tmp_path, capsys):
    g = tmp_path / "x.graph.json"
    g.write_text("[1, 2, 3]")
    code, out, err = _run(["inspect", str(g)], capsys)
    assert code == 2 and "not TensorRT layer information" in err, out + err
