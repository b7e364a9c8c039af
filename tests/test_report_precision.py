"""`trtcheck report --precision`: the precision section inside the main report."""

import json

from tests.conftest import assert_one_line_error

FAST = ["--warmup", "0", "--min-duration", "0.1", "--min-samples", "5"]


def test_report_with_fp16_on_cls(cli, ppocr, tmp_path):
    out = tmp_path / "r"
    res = cli("report", str(ppocr["cls"]), "--shapes", "x:1x3x48x192", "--batch", "1",
              "--precision", "fp16", "-o", str(out), *FAST)
    assert res.returncode == 0, res.stderr
    data = json.loads((out / "results.json").read_text())
    fp16 = data["precision"]["variants"]["fp16"]
    assert fp16["passed"] is True
    assert fp16["min_cosine_similarity"] > 0.999
    assert "Precision" in (out / "report.md").read_text()


def test_precision_needs_an_onnx_model(cli, rtx_conv_plan, tmp_path):
    res = cli("report", str(rtx_conv_plan), "--no-bench", "--precision", "fp16",
              "-o", str(tmp_path / "r"))
    assert_one_line_error(res, 2, "ONNX model")
    assert not (tmp_path / "r").exists()
