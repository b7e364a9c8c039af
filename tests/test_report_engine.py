"""`trtcheck report` on TensorRT inputs: trtexec exports and plans (no GPU here)."""

import json

from tests.conftest import assert_one_line_error


def test_report_on_trtexec_export_folder(cli, trtexec_exports, tmp_path):
    out = tmp_path / "r"
    res = cli("report", str(trtexec_exports / "resnet18-a100-fp16"), "-o", str(out))
    assert res.returncode == 0, res.stderr
    data = json.loads((out / "results.json").read_text())
    assert data["engine"]["source"] == "trtexec" and data["bench"] == []
    md = (out / "report.md").read_text()
    assert "## TensorRT engine" in md and "17.9%" in md  # profiling overhead check value


def test_report_on_plan_needs_a_gpu_or_no_bench(cli, rtx_conv_plan, tmp_path):
    res = cli("report", str(rtx_conv_plan), "-o", str(tmp_path / "a"))
    assert_one_line_error(res, 3)
    assert not (tmp_path / "a").exists()
    res = cli("report", str(rtx_conv_plan), "-o", str(tmp_path / "b"), "--no-bench")
    assert res.returncode == 0, res.stderr
    data = json.loads((tmp_path / "b" / "results.json").read_text())
    assert data["engine"]["plan"]["kind"] == "tensorrt_rtx"
    assert any(f["code"] == "engine-not-loaded" for f in data["engine"]["lints"])


def test_onnx_only_options_rejected_for_plans(cli, rtx_conv_plan, tmp_path):
    res = cli("bench", str(rtx_conv_plan), "--threads", "2")
    assert_one_line_error(res, 2, "ONNX Runtime only")


def test_inspect_refuses_damaged_plans(cli, rtx_conv_plan, tmp_path):
    data = rtx_conv_plan.read_bytes()
    cases = {"truncated.plan": data[: len(data) // 2],
             "prefixed.plan": b'{"meta": 1}' + data,
             "textmode.plan": data.replace(b"\n", b"\r\n")}
    for name, payload in cases.items():
        p = tmp_path / name
        p.write_bytes(payload)
        res = cli("inspect", str(p))
        assert_one_line_error(res, 2)
    res = cli("inspect", str(rtx_conv_plan))
    assert res.returncode == 0, res.stderr
