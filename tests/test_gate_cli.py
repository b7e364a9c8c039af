"""trtcheck gate end to end: exit codes, every output format and summary file (JUnit XML,
Markdown, JSON), baseline and environment handling, on recorded (synthetic, seeded) results
files and on real `trtcheck bench` output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtcheck.analyze.gate.gate_evaluate import evaluate
from trtcheck.analyze.gate.gate_policy import parse_policy
from trtcheck.cli import main

from trtcheck.testing import synthetic_results as g

REPO = Path(__file__).resolve().parent.parent

BASELINE_POLICY = """\
version: 1
budgets:
  - bench.batch[8].p99_ms <= 100 ms
  - bench.batch[*].throughput_samples_per_s >= 100 samples/s
  - metric: inspection.parameter_bytes
    max: 100 MiB
baseline:
  - metric: bench.batch[*].median_ms
    max_regression: 5%
  - bench.batch[*].throughput_samples_per_s: 5%
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("gate")
    med = {1: 2.0, 8: 9.0}
    out = {
        "base": g.write(g.results(med, n=1000, seed=1), d / "base.json"),
        "same": g.write(g.results(med, n=1000, seed=2), d / "same.json"),
        "slow": g.write(g.results({b: m * 1.2 for b, m in med.items()}, n=1000, seed=3),
                        d / "slow.json"),
        "fast": g.write(g.results({b: m * 0.8 for b, m in med.items()}, n=1000, seed=4),
                        d / "fast.json"),
        "few": g.write(g.results(med, n=200, seed=5), d / "few.json"),
        "other_gpu": g.write(g.results(med, n=1000, seed=6,
                                       env=g.environment(gpu="NVIDIA A100", driver="550.1")),
                             d / "other_gpu.json"),
    }
    pol = d / "policy.yaml"
    pol.write_text(BASELINE_POLICY)
    out["policy"] = pol
    out["dir"] = d
    return out


def gate(argv, capsys):
    with pytest.raises(SystemExit) as ei:
        main(["gate", *map(str, argv)])
    cap = capsys.readouterr()
    return ei.value.code, cap.out, cap.err


def test_clear_regression_fails_and_names_every_failure(files, capsys):
    code, out, err = gate([files["slow"], "-p", files["policy"], "-b", files["base"]], capsys)
    assert code == 1
    assert "gate FAILED" in out
    # median of both batch sizes and throughput of both batch sizes: all collected at once
    failing = [ln for ln in out.splitlines() if ln.strip().startswith("FAIL")]
    assert len(failing) == 4, out
    assert all("regressed" in ln for ln in failing)
    assert err.startswith("error: gate failed: 4 check(s) failed")


def test_clear_improvement_passes(files, capsys):
    code, out, err = gate([files["fast"], "-p", files["policy"], "-b", files["base"]], capsys)
    assert code == 0, out + err
    assert "gate PASSED" in out
    assert out.count("improved") == 4


def test_same_engine_twice_never_fails(files, capsys):
    code, out, err = gate([files["same"], "-p", files["policy"], "-b", files["base"]], capsys)
    assert code == 0, out + err
    assert "FAIL" not in out.replace("gate PASSED", "")


def test_directions_throughput_up_is_good_latency_down_is_good(files):
    pol = parse_policy("baseline:\n  - bench.batch[8].throughput_samples_per_s: 3%\n"
                       "  - bench.batch[8].median_ms: 3%\n")
    from trtcheck.results import load_results
    base, fast, slow = (load_results(files[k]) for k in ("base", "fast", "slow"))
    up = evaluate(pol, fast, base)
    assert [c.verdict for c in up.checks] == ["pass", "pass"]
    assert up.checks[0].ratio > 1.2 and up.checks[1].ratio < 0.85
    down = evaluate(pol, slow, base)
    assert [c.verdict for c in down.checks] == ["fail", "fail"]
    # explicit direction overrides the name: a policy may declare any metric's direction
    pol2 = parse_policy("baseline:\n  - metric: bench.batch[8].median_ms\n"
                        "    max_regression: 3%\n    direction: higher\n")
    assert evaluate(pol2, fast, base).checks[0].verdict == "fail"


def test_p99_budget_on_too_few_samples_is_refused(files, capsys):
    pol = files["dir"] / "p99.yaml"
    pol.write_text("budgets:\n  - bench.batch[8].p99_ms <= 100 ms\n")
    code, out, _err = gate([files["few"], "-p", pol], capsys)
    assert code == 1
    assert "cannot certify p99" in out and "459" in out
    code, out, _ = gate([files["base"], "-p", pol], capsys)
    assert code == 0 and "p99 certified" in out
    pol.write_text("settings:\n  on_uncertified: warn\nbudgets:\n"
                   "  - bench.batch[8].p99_ms <= 100 ms\n")
    code, out, _ = gate([files["few"], "-p", pol], capsys)
    assert code == 0 and "UNCERT" in out


def test_p99_budget_with_too_many_samples_over_bound(files):
    from trtcheck.results import load_results
    res = load_results(files["base"])
    b8 = res.bench[0].batch(8)
    import numpy as np
    s = np.sort(np.asarray(b8.samples_ms))
    # a bound just above the measured p99: point estimate passes, ~1% of samples are over
    bound = float(b8.stats.p99_ms) * 1.0001
    pol = parse_policy(f"budgets:\n  - bench.batch[8].p99_ms <= {bound}\n")
    c = evaluate(pol, res).checks[0]
    assert c.verdict == "not-certified"
    assert c.over_bound == int(np.sum(s > bound)) and c.over_bound > c.max_over_allowed >= 0
    # it names the tightest budget the samples do certify, and that budget passes
    assert c.certified_bound is not None and c.certified_bound > bound
    assert "these samples certify" in c.message
    pol2 = parse_policy(f"budgets:\n  - bench.batch[8].p99_ms <= {c.certified_bound}\n")
    assert evaluate(pol2, res).checks[0].verdict == "pass"


def test_environment_mismatch_warns_or_exits_3(files, capsys):
    # another GPU model: the baseline rules are not comparable unless the policy allows it
    code, out, err = gate([files["other_gpu"], "-p", files["policy"], "-b", files["base"]], capsys)
    assert code == 1
    assert "not comparable (GPUs: ['NVIDIA A100'] vs ['NVIDIA H200'])" in out
    allow = files["dir"] / "allow.yaml"
    allow.write_text("settings:\n  cross_device: allow\n" + BASELINE_POLICY.split("\n", 1)[1])
    code, out, err = gate([files["other_gpu"], "-p", allow, "-b", files["base"]], capsys)
    assert code == 0
    assert "environments differ" in out and "NVIDIA A100" in out
    pol = files["dir"] / "env.yaml"
    pol.write_text("settings:\n  environment_mismatch: fail\n  cross_device: allow\n"
                   + BASELINE_POLICY.split("\n", 1)[1])
    code, out, err = gate([files["other_gpu"], "-p", pol, "-b", files["base"]], capsys)
    assert code == 3
    assert err.startswith("error: the baseline was measured on another machine")
    assert "driver: 550.1 vs 580.65" in err


def test_missing_metric_fails_or_warns(files, capsys):
    pol = files["dir"] / "missing.yaml"
    pol.write_text("budgets:\n  - bench.batch[16].p99_ms <= 100 ms\n")
    code, out, _ = gate([files["base"], "-p", pol], capsys)
    assert code == 1 and "present: batch_size 1, 8" in out
    pol.write_text("settings:\n  on_missing: warn\nbudgets:\n  - bench.batch[16].p99_ms <= 100 ms\n")
    code, out, _ = gate([files["base"], "-p", pol], capsys)
    assert code == 0 and "MISSING" in out


def test_junit_markdown_and_json_outputs(files, capsys):
    junit = files["dir"] / "gate.xml"
    md = files["dir"] / "gate.md"
    code, out, _ = gate([files["slow"], "-p", files["policy"], "-b", files["base"],
                         "--junit-xml", junit, "--markdown", md, "--format", "json"], capsys)
    assert code == 1
    rep = json.loads(out)
    assert rep["exit_code"] == 1 and rep["passed"] is False
    n = len(rep["checks"])
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests")) == n
    cases = suite.findall("testcase")
    assert len(cases) == n
    assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases) == 4
    text = md.read_text()
    assert text.startswith("## ❌ trtcheck gate FAILED")
    assert text.count("\n| ") == n + 1  # header + one row per check


def test_refuses_to_write_over_inputs(files, capsys):
    before = files["base"].read_bytes()
    code, _, err = gate([files["base"], "-p", files["policy"], "-b", files["base"],
                         "--junit-xml", files["base"]], capsys)
    assert code == 2 and "refusing" in err
    assert files["base"].read_bytes() == before


def test_evaluate_is_pure_and_deterministic(files):
    from trtcheck.results import load_results
    pol = parse_policy(BASELINE_POLICY)
    a, b = load_results(files["same"]), load_results(files["base"])
    r1, r2 = evaluate(pol, a, b), evaluate(pol, a, b)
    assert r1 == r2


def test_real_process_exit_code_and_light_imports(files):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "trtcheck", "gate",
                           str(files["slow"]), "-p", str(files["policy"]), "-b",
                           str(files["base"])], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "gate FAILED" in proc.stdout
    imported = {ln.split("|")[-1].strip().split(".")[0] for ln in proc.stderr.splitlines()
                if ln.startswith("import time:")}
    assert "numpy" in imported and "yaml" in imported  # sanity: the parse works
    for heavy in ("onnxruntime", "matplotlib", "scipy", "tensorrt", "tensorrt_rtx", "torch",
                  "onnx", "polygraphy"):
        assert heavy not in imported, f"gate imported {heavy}"


def test_list_metrics_cli(files, capsys):
    code, out, _ = gate([files["base"], "--list-metrics"], capsys)
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("bench.batch[8].p99_ms "))
    assert line.rstrip().endswith(" ms")
    code, out, _ = gate([files["base"], "--list-metrics", "--format", "json"], capsys)
    items = json.loads(out)["metrics"]
    assert {"path": "inspection.parameter_bytes", "value": 46_800_000} in items
    code, _, err = gate([files["base"]], capsys)
    assert code == 2 and "missing --policy" in err


def test_untrusted_labels_are_escaped_in_markdown_and_junit(tmp_path, capsys):
    evil = "x</td><script>alert(1)</script>|&"
    res = g.write(g.results(n=500, seed=3, label=evil), tmp_path / "r.json")
    pol = tmp_path / "p.yaml"
    pol.write_text("budgets:\n  - bench[*].batch[1].median_ms <= 1 ms\n")
    junit, md = tmp_path / "j.xml", tmp_path / "m.md"
    code, _, _ = gate([res, "-p", pol, "--junit-xml", junit, "--markdown", md], capsys)
    assert code == 1
    text = md.read_text()
    assert "<script>" not in text and "&lt;script&gt;" in text
    row = next(ln for ln in text.splitlines() if "median" in ln)
    assert row.count(" | ") == 4  # the label's '|' cannot add a column
    case = ET.parse(junit).getroot().find("testcase")
    assert evil in case.get("name")  # XML-escaped on disk, intact when parsed


def test_many_checks_stay_on_one_screen(files):
    from trtcheck.report.gate_render import render_text
    from trtcheck.results import load_results
    pol = parse_policy("budgets:\n" + "".join(
        f"  - bench.batch[*].p{q}_ms <= 1 s\n" for q in (25, 50, 75, 90, 95, 99)))
    rep = evaluate(pol, load_results(files["base"]))
    assert len(rep.checks) == 12
    assert len(render_text(rep).splitlines()) == 1 + 12 + 1
    pol = parse_policy("budgets:\n" + "".join(
        f"  - bench.batch[*].p{q}_ms <= 1 s\n" for q in range(50, 99, 4)))
    rep = evaluate(pol, load_results(files["base"]))
    assert len(rep.checks) == 26 and rep.passed
    text = render_text(rep)
    assert len(text.splitlines()) == 1 + 13 + 1 and "(2 values)" in text


def test_gate_on_real_engine_sections(trtexec_exports, tmp_path, capsys):
    """Budgets and a baseline rule on engine sections from real trtexec exports."""
    from trtcheck.inspection.engine.trtexec import load_trtexec_export
    base = g.results(n=100, seed=1)
    e32 = g.write(base.model_copy(update={
        "engine": load_trtexec_export(trtexec_exports / "resnet18-a100-fp32")}),
        tmp_path / "fp32.json")
    e16 = g.write(base.model_copy(update={
        "engine": load_trtexec_export(trtexec_exports / "resnet18-a100-fp16")}),
        tmp_path / "fp16.json")
    pol = tmp_path / "engine.yaml"
    pol.write_text("budgets:\n  - len(engine.layers[precision=fp32]) <= 2\n"
                   "  - sum(engine.layers[*].avg_time_ms) <= 2 ms\n"
                   "baseline:\n  - sum(engine.layers[*].avg_time_ms): 5%\n")
    code, out, _ = gate([e16, "-p", pol, "-b", e32, "--format", "json"], capsys)
    assert code == 0
    checks = json.loads(out)["checks"]
    assert [c["verdict"] for c in checks] == ["pass", "pass", "pass"]
    assert checks[2]["ratio"] == pytest.approx(1.016832 / 2.123776, rel=1e-4)
    code, out, _ = gate([e32, "-p", pol, "-b", e16], capsys)
    assert code == 1 and "gate FAILED: 0 passed, 0 warning(s), 3 failed" in out


def test_report_folder_stands_for_its_results_json(files, tmp_path, capsys):
    import shutil
    d = tmp_path / "report"
    d.mkdir()
    shutil.copy(files["base"], d / "results.json")
    code, out, _ = gate([d, "-p", files["policy"], "-b", d], capsys)
    assert code == 0 and f"results {d / 'results.json'}" in out


def test_existing_summary_files_need_overwrite(files, tmp_path, capsys):
    junit = tmp_path / "gate.xml"
    junit.write_text("keep me")
    code, _, err = gate([files["base"], "-p", files["policy"], "-b", files["base"],
                         "--junit-xml", junit], capsys)
    assert code == 2 and "--overwrite" in err and junit.read_text() == "keep me"
    code, _, _ = gate([files["base"], "-p", files["policy"], "-b", files["base"],
                       "--junit-xml", junit, "--overwrite"], capsys)
    assert code == 0 and junit.read_text().startswith("<?xml")


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as ei:
        main([str(a) for a in argv])
    cap = capsys.readouterr()
    return ei.value.code, cap.out, cap.err


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("real-bench")
    w = numpy_helper.from_array(
        np.random.default_rng(0).standard_normal((128, 128)).astype(np.float32), "W")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 128])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 128])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["h"]),
                               helper.make_node("Relu", ["h"], ["y"])], "tiny", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, d / "tiny.onnx")
    out = []
    for name in ("a.json", "b.json"):
        with pytest.raises(SystemExit) as ei:
            main(["bench", str(d / "tiny.onnx"), "--batch", "1,4", "--min-duration", "0.2",
                  "--min-samples", "500", "--max-duration", "2", "--warmup", "0.05",
                  "--threads", "1", "-o", str(d / name), "--format", "json"])
        assert ei.value.code == 0
        out.append(d / name)
    return d, out[0], out[1]


def test_gate_reads_real_bench_output(two_runs, capsys):
    d, a, b = two_runs
    pol = d / "gate.yaml"
    pol.write_text("budgets:\n  - bench.batch[4].p99_ms <= 10 s\n"
                   "  - bench.batch[*].count >= 500\n"
                   "baseline:\n  - bench.batch[*].median_ms: 50%\n"
                   "  - bench.batch[*].throughput_samples_per_s: 50%\n")
    code, out, err = run_main(["gate", b, "-p", pol, "-b", a, "--format", "json"], capsys)
    rep = json.loads(out)
    # the budgets hold on any machine; the baseline comparison reads both runs' raw
    # samples, and its verdict is the machine's (a loaded CI machine moved a median by
    # more than 50% between two runs): only a baseline check may fail
    assert code in (0, 1), err
    assert all(c["kind"] == "baseline" for c in rep["checks"] if c["verdict"] == "fail"), err
    base = [c for c in rep["checks"] if c["kind"] == "baseline"]
    assert sorted(c["metric"] for c in base) == [
        "bench.batch[1].median_ms", "bench.batch[1].throughput_samples_per_s",
        "bench.batch[4].median_ms", "bench.batch[4].throughput_samples_per_s"]
    for c in base:  # intervals from the raw samples, not point comparisons
        assert c["confidence"] == 0.95 and c["ratio_low"] < c["ratio"] < c["ratio_high"]
    p99 = next(c for c in rep["checks"] if c["metric"] == "bench.batch[4].p99_ms")
    assert p99["certified"] is True and p99["samples"] >= 500 and p99["over_bound"] == 0


def test_compare_reads_real_bench_output(two_runs, capsys):
    _, a, b = two_runs
    code, out, _ = run_main(["compare", a, b, "--format", "json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["comparable"] is True
    assert [x["batch_size"] for x in data["runs"][0]["batches"]] == [1, 4]


def test_junit_and_markdown_to_the_same_file_is_refused(serve_results_json, tmp_path, capsys):
    pol = tmp_path / "policy.yaml"
    pol.write_text("version: 1\nbudgets:\n  - serve.configs[0].mean_batch_size >= 1\n")
    out = tmp_path / "gate.out"
    with pytest.raises(SystemExit) as e:
        main(["gate", str(serve_results_json), "--policy", str(pol), "--junit-xml", str(out),
              "--markdown", str(tmp_path / "." / "gate.out")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "same file" in err, err
    assert not out.exists()


def test_junit_xml_stays_well_formed_with_control_characters(tmp_path, capsys):
    """A run label is user text; a control character in it made --junit-xml unparsable."""
    import xml.etree.ElementTree as ET

    from trtcheck.results import load_results, save_results

    from trtcheck.testing import synthetic_results as g
    src = g.write(g.results({1: 2.0}, n=100, seed=1), tmp_path / "a.json")
    res = load_results(src)
    res.bench[0].label = "bad\x01label\x1b]]>"
    save_results(res, tmp_path / "b.json")
    pol = tmp_path / "p.yaml"
    pol.write_text("version: 1\nbudgets:\n  - bench[*].batch[1].median_ms <= 1 us\n")
    xml = tmp_path / "g.xml"
    with pytest.raises(SystemExit) as e:
        main(["gate", str(tmp_path / "b.json"), "--policy", str(pol), "--junit-xml", str(xml)])
    assert e.value.code == 1
    root = ET.parse(xml).getroot()
    assert root.find("testcase/failure") is not None


@pytest.mark.parametrize("opt,value", [("--markdown", ""), ("--junit-xml", " "),
                                       ("--junit-xml", "-"), ("--markdown", "-")])
def test_gate_summary_paths_empty_or_dash_are_refused(serve_results_json, tmp_path, capsys, opt, value,
                                                      monkeypatch):
    """`--markdown ''` was ignored silently; `--junit-xml -` wrote a file named '-'."""
    monkeypatch.chdir(tmp_path)
    pol = tmp_path / "policy.yaml"
    pol.write_text("version: 1\nbudgets:\n  - serve.configs[0].mean_batch_size >= 1\n")
    with pytest.raises(SystemExit) as e:
        main(["gate", str(serve_results_json), "--policy", str(pol), opt, value])
    err = capsys.readouterr().err
    assert e.value.code == 2 and opt in err, err
    assert not (tmp_path / "-").exists()
