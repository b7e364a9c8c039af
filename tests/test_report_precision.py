"""`trtcheck report --precision`: the precision section inside the main report."""

import json

import pytest

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


def test_report_with_serving_section(cli, ppocr, tmp_path):
    out = tmp_path / "s"
    res = cli("report", str(ppocr["cls"]), "--shapes", "x:1x3x48x192", "--batch", "1",
              "--serve", "-o", str(out), *FAST)
    assert res.returncode == 0, res.stderr
    data = json.loads((out / "results.json").read_text())
    assert data["serve"] is not None
    md = (out / "report.md").read_text()
    assert "## Serving with dynamic batching" in md and "window ms" in md


def test_demo_has_every_section(demo_report):
    data = json.loads((demo_report / "results.json").read_text())
    for key in ("inspection", "serve", "precision", "advice"):
        assert data[key] is not None, key
    assert data["bench"]
    # the demo's rate is 10% of one instance's measured batch-1 capacity, 1 / S(1), to two
    # significant figures: the sparse-arrival case on any machine
    # (the rate is set from S(1) without contention; formulas.s1_ms includes the contention
    # measured at that rate, so the two may round to neighbouring values)
    rate = data["advice"]["inputs"]["arrival_rate_per_s"]
    s1_ms = data["advice"]["formulas"]["s1_ms"]
    assert rate > 0 and rate == float(f"{rate:.2g}")
    assert rate == pytest.approx(0.1 * 1000.0 / s1_ms, rel=0.08)
    assert 0.095 <= data["advice"]["formulas"]["queue_formation_ratio"] <= 0.105
    codes = {f["code"] for f in data["inspection"]["lints"]}
    assert "onnx-dynamic-input-no-shape" not in codes  # the sweep gave the sizes
    md = (demo_report / "report.md").read_text()
    for title in ("## Model inspection", "## Latency and throughput", "## Precision",
                  "## Serving with dynamic batching", "## Batching advice"):
        assert title in md


def test_advice_from_json_without_measuring(cli, tmp_path, demo_model):
    a = tmp_path / "a"
    res = cli("report", str(demo_model), "-o", str(a), "--batch", "1,2", *FAST)
    assert res.returncode == 0, res.stderr
    assert json.loads((a / "results.json").read_text())["advice"] is None
    b = tmp_path / "b"
    res = cli("report", "--from", str(a / "results.json"), "-o", str(b),
              "--arrival-rate", "3000")
    assert res.returncode == 0, res.stderr
    adv = json.loads((b / "results.json").read_text())["advice"]
    assert adv["inputs"]["arrival_rate_per_s"] == 3000.0
    res = cli("report", "--from", str(a / "results.json"), "-o", str(tmp_path / "c"), "--serve")
    assert_one_line_error(res, 2, "--from only")
    res = cli("report", str(demo_model), "--no-bench", "--arrival-rate", "5",
              "-o", str(tmp_path / "d"))
    assert_one_line_error(res, 2, "--no-bench")


def _main_exit(args, capsys):
    import pytest

    from trtcheck.cli import main

    with pytest.raises(SystemExit) as exc:
        main(list(args))
    return exc.value.code, capsys.readouterr()


def test_noisy_curve_keeps_the_report(ppocr, tmp_path, monkeypatch, capsys):
    """A disturbed bench (non-monotone T(b)) must not throw away the measurements."""
    import trtcheck.analyze.advice.inputs as inputs
    from trtcheck.errors import InputError

    def noisy(*a, **k):
        raise InputError("the latency curve from bench run 'x' is not monotone: T(2) = 1 ms "
                         "is below T(1) = 3 ms", "re-measure")

    monkeypatch.setattr(inputs, "inputs_from_results", noisy)
    out = tmp_path / "r"
    code, cap = _main_exit(["report", str(ppocr["cls"]), "--shapes", "x:1x3x48x192",
                            "--batch", "1,2", "--arrival-rate", "100", "-o", str(out), *FAST],
                           capsys)
    assert code == 2 and "written without batching advice" in cap.err
    assert "--from" in cap.err and (out / "report.html").exists()
    assert json.loads((out / "results.json").read_text())["advice"] is None
    # the demo advises on any machine: a curve too disturbed to be monotone is flattened
    # and the advice says so, instead of leaving the demo without advice
    out2 = tmp_path / "demo"
    code, cap = _main_exit(["report", "--demo", "--batch", "1,2", "--no-serve", "--precision",
                            "none", "-o", str(out2), *FAST], capsys)
    assert code == 0 and (out2 / "report.html").exists(), cap.err
    advice = json.loads((out2 / "results.json").read_text())["advice"]
    assert advice is not None
    assert any("too disturbed to trust" in n for n in advice["curve"]["notes"]), advice["curve"]
