"""bench and report through the real CLI boundary (subprocess, exit codes, stderr)."""

import json
import shutil
import os

import pytest

from tests.conftest import assert_one_line_error

FAST = ["--warmup", "0", "--min-duration", "0.1", "--min-samples", "5"]


def test_version_and_help(cli):
    res = cli("--version")
    assert res.returncode == 0 and "trtcheck, version" in res.stdout
    res = cli("--help")
    assert res.returncode == 0
    for word in ("inspect", "bench", "report", "Exit codes", "3  environment",
                 "1:20,8:40,32:110 --arrival-rate 3000  # batch:ms", "(debug lines)"):
        assert word in res.stdout


def test_bench_det_without_shapes_names_dims(cli, ppocr):
    res = cli("bench", str(ppocr["det"]))
    line = assert_one_line_error(res, 2, "x axis 2", "x axis 3", "--shapes x:")
    assert "dynamic" in line


def test_report_demo_writes_everything(cli, tmp_path, demo_report):
    out = tmp_path / "demo"
    shutil.copytree(demo_report, out)  # the session's demo folder, written by the command
    html = (out / "report.html").read_text()
    assert html.count("data:image/svg+xml;base64,") >= 3  # ops + latency + throughput
    data = json.loads((out / "results.json").read_text())
    assert data["inspection"]["parameter_count"] == 11_684_712
    assert [b["batch_size"] for b in data["bench"][0]["batches"]] == [1, 2]
    assert len(data["bench"][0]["batches"][0]["samples_ms"]) >= 5
    assert (out / "report.md").read_text().count("](charts/") >= 3
    # running again without --overwrite refuses and keeps the report
    before = (out / "report.html").read_bytes()
    res = cli("report", "--demo", "-o", str(out), "--batch", "1", *FAST)
    assert_one_line_error(res, 2, "already holds a report")
    assert (out / "report.html").read_bytes() == before


@pytest.mark.parametrize("model,shapes", [("det", "x:1x3x320x320"), ("cls", "x:1x3x48x192")])
def test_report_on_ppocr(cli, ppocr, tmp_path, model, shapes):
    out = tmp_path / model
    res = cli("report", str(ppocr[model]), "--shapes", shapes, "--batch", "1,2", "-o", str(out),
              *FAST)
    assert res.returncode == 0, res.stderr
    data = json.loads((out / "results.json").read_text())
    b = data["bench"][0]["batches"]
    dims = [int(d) for d in shapes.split(":")[1].split("x")]
    assert b[1]["input_shapes"]["x"] == [2, *dims[1:]]
    assert data["inspection"]["compute"]["macs"] > 0
    codes = {f["code"] for f in data["inspection"]["lints"]}
    if model == "cls":
        assert "onnx-shared-dim-name" in codes


def _bad_inputs(tmp_path, ppocr):
    trunc = tmp_path / "trunc.onnx"
    trunc.write_bytes(ppocr["cls"].read_bytes()[:1000])
    text = tmp_path / "text.onnx"
    text.write_text("this is not a model\n")
    return {"truncated": [str(trunc)], "text": [str(text)],
            "missing": [str(tmp_path / "missing.onnx")], "directory": [str(tmp_path)],
            "unknown-shape-name": [str(ppocr["cls"]), "--shapes", "nope:1x3x48x192"]}


@pytest.mark.parametrize("case", ["truncated", "text", "missing", "directory",
                                  "unknown-shape-name"])
@pytest.mark.parametrize("command", ["report", "bench", "inspect"])
def test_bad_input_one_line_exit_2(cli, ppocr, tmp_path, case, command):
    args = _bad_inputs(tmp_path, ppocr)[case]
    out = tmp_path / "out-report"
    extra = ["-o", str(out)] if command == "report" else []
    res = cli(command, *args, *extra)
    assert_one_line_error(res, 2)
    assert not out.exists() or os.listdir(out) == []


def test_unwritable_output_dir(cli, tmp_path, demo_model):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = cli("report", str(demo_model), "-o", str(blocker / "sub"), *FAST)
    assert_one_line_error(res, 2, "cannot write")


# --- number options have upper bounds; paths are checked before any work ---------------

@pytest.mark.parametrize("args,needle", [
    (["bench", "m.onnx", "--max-duration", "1e308"], "--max-duration"),
    (["bench", "m.onnx", "--warmup", "1e308"], "--warmup"),
    (["bench", "m.onnx", "--min-samples", "10000000000"], "--min-samples"),
    (["bench", "m.onnx", "--batch", "100000000000000000000"], "batch sizes must be integers"),
    (["serve", "--synthetic-curve", "1:1", "--load", "open:1e308"], "at most 1e+09"),
    (["serve", "--synthetic-curve", "1:1", "--load", "closed:100000000"],
     "closed-loop clients"),
    (["serve", "--synthetic-curve", "1:1", "--instances", "100000000"], "--instances"),
    (["serve", "--synthetic-curve", "1:1", "--duration-s", "1e308"], "--duration-s"),
    (["serve", "--synthetic-curve", "100000000000000000000:1"], "bad synthetic curve point"),
    (["advise", "--latency-curve", "1:1,100000000000000000000:5", "--arrival-rate", "100"],
     "must be an integer >= 1 and <= 2147483647"),
    (["advise", "--latency-curve", "1:1e308", "--arrival-rate", "100"],
     "positive number of milliseconds <= 1e+07"),
    (["precision", "m.onnx", "--samples", "10000000000"], "--samples"),
])
def test_number_options_are_bounded(args, needle, tiny_relu_model):
    from cli_helper import invoke as run_main

    res = run_main(*[str(tiny_relu_model) if a == "m.onnx" else a for a in args])
    assert_one_line_error(res, 2, needle)


@pytest.mark.parametrize("args", [
    ["inspect", "x" * 300 + ".onnx"],
    ["bench", "m.onnx", "-o", "d/" + "y" * 256 + ".json"],
    ["gate", "r.json", "--policy", "p" * 300 + ".yaml"],
    ["report", "--from", "z" * 300, "-o", "out"],
])
def test_path_component_over_255_bytes_is_one_line_error(args, tmp_path, monkeypatch):
    from cli_helper import invoke as run_main

    monkeypatch.chdir(tmp_path)
    res = run_main(*args)
    assert_one_line_error(res, 2, "file systems allow 255")
    assert not any(tmp_path.iterdir())  # nothing created
