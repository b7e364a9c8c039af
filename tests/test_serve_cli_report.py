"""`trtcheck serve` command and the serving report section."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from trtcheck.cli import cli, main
from trtcheck.report.charts import ChartSink
from trtcheck.results import load_results

SYN = ["serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0,5", "--max-batch", "1,8",
       "--load", "burst:16,open:400:40", "--repeats", "2", "--warmup-requests", "2"]


def test_serve_cli_writes_results_and_refuses_overwrite(tmp_path):
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, SYN + ["-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "load burst:16" in r.stdout and "window_ms" in r.stdout
    res = load_results(out)
    assert res.serve is not None and len(res.serve.configs) == 8
    assert all(len(c.repeats) == 2 for c in res.serve.configs)
    # refuse to overwrite: exit 2 with one clear line, file kept
    before = out.read_bytes()
    with pytest.raises(SystemExit) as e:
        main(SYN + ["-o", str(out)])
    assert e.value.code == 2 and out.read_bytes() == before


def test_serve_cli_json_and_md_formats():
    r = CliRunner().invoke(cli, SYN[:7] + ["--load", "burst:8", "--repeats", "1",
                                             "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["serve"]["configs"][0]["load"]["label"] == "burst:8"
    r = CliRunner().invoke(cli, SYN[:7] + ["--load", "burst:8", "--repeats", "1",
                                             "--format", "md"])
    assert r.exit_code == 0 and "| window ms | max batch |" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["serve"], "exactly one"),
    (["serve", "--synthetic-curve", "1:x"], "bad synthetic curve"),
    (["serve", "--synthetic-curve", "1:1", "--load", "poisson:5"], "cannot read load spec"),
    (["serve", "/nonexistent.onnx"], "not found"),
])
def test_serve_cli_bad_input_is_one_line_exit_2(args, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    assert e.value.code == 2 and needle in err and "Traceback" not in err


def test_serve_cli_onnx_model(tmp_path):
    """A real ONNX model through ONNX Runtime behind the batcher."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 2], np.ones(8, np.float32).tolist())
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 2])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "mm.onnx"
    onnx.save(m, str(path))
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["serve", str(path), "--window-ms", "0,2", "--max-batch", "8",
                                 "--load", "burst:32,closed:4:40", "--repeats", "1",
                                 "-o", str(out)])
    assert r.exit_code == 0, r.output
    run = load_results(out).serve
    assert run.backend.name == "onnxruntime"
    for c in run.configs:
        assert c.ok_share == 1.0
        names = {w.name for w in c.repeats[0].waterfall}
        assert {"executor_hop_ms", "compute_ms", "assembly_ms"} <= names
    assert run.config("burst:32", 0, 8).mean_batch_size > 1.0  # backlog batched at window 0


def test_serve_report_section_renders_table_and_charts(tmp_path):
    from trtcheck.backends.synthetic import SyntheticBackend
    from trtcheck.measure.bench.runner import new_results
    from trtcheck.measure.serving.serve import measure_serving
    from trtcheck.report import sec_serve

    res = new_results()
    res.serve = measure_serving(SyntheticBackend("1:0.3", per_request_overhead_ms=1),
                                windows_us=[0, 5000], max_batch_sizes=[4],
                                loads=["burst:8", "open:300:20"], repeats=1,
                                model_path="x<b>y")
    sink = ChartSink()
    sec = sec_serve.build(res, sink)
    assert sec is not None
    assert "x&lt;b&gt;y" in sec.html and "x<b>y" not in sec.html  # escaped
    assert "QPS" in sec.html and "Load burst:8" in sec.html
    assert "| window ms | max batch | mean batch |" in sec.markdown
    names = [c.name for c in sink.charts]
    assert names == ["serve-window-0", "serve-window-1", "serve-waterfall"]
    assert sec_serve.build(new_results(), ChartSink()) is None
    assert "sec_serve" in __import__("trtcheck.report.sections",
                                     fromlist=["SECTION_MODULES"]).SECTION_MODULES


def test_default_report_sweep_is_small():
    from trtcheck.backends.synthetic import SyntheticBackend
    from trtcheck.measure.serving.serve import default_report_sweep

    run = default_report_sweep(SyntheticBackend("1:2,8:4"))
    assert len(run.configs) == 9 and all(c.ok_share > 0.9 for c in run.configs)
    # open loops below one instance's batch-1 capacity (T(1) = 2 ms: 500 req/s), so the
    # runs can calibrate the advice's serving overheads
    rates = sorted({c.load.rate_per_s for c in run.configs if c.load.kind == "open"})
    assert len(rates) == 2 and all(0 < r < 500 for r in rates), rates


def test_serve_help_imports_no_heavy_module():
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    code = ("import sys, runpy; sys.argv = ['trtcheck', 'serve', '--help']\n"
            "try:\n    runpy.run_module('trtcheck', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(repo)), check=False)
    assert "--window-ms" in proc.stdout
    mods = set(proc.stderr.split())
    heavy = ("onnxruntime", "tensorrt", "torch", "matplotlib", "scipy", "aiohttp", "uvloop")
    assert "trtcheck.cli.serve_cmd" in mods
    assert not [m for m in mods if m.split(".")[0] in heavy]


def test_the_report_sweep_sends_every_request_of_its_own_counts():
    """A model of T(1) 30 ms: open loops of 16 requests at about 10 req/s, whose Poisson
    schedules can run past 2 s; the sweep's bound lets each schedule run out by its count
    (the demo's sweep sent 14 of 16 with a bound of 1.25x the mean span)."""
    from trtcheck.backends.synthetic import SyntheticBackend
    from trtcheck.measure.serving.serve import default_report_sweep

    run = default_report_sweep(SyntheticBackend("1:30,8:60"))
    opens = [c for c in run.configs if c.load.kind == "open"]
    assert opens
    for c in opens:
        assert all(not r.outcomes.get("not_sent") for r in c.repeats), c.load.label
        assert not [w for w in c.warnings if w.code == "requests-not-sent"]
