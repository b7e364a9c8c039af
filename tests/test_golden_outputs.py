"""Golden outputs of every command on fixed, GPU-free inputs (text, JSON, Markdown, HTML).

Inputs: ``tests/gold/inputs/`` (results documents, see make_inputs.py there), the small
classifier built by ``onnx_builders.small_classifier`` (zero weights), the vendored
trtexec exports (``tests/data/trtexec-exports``) and a plan header laid out like a
TensorRT 10.8 plan. Each test copies its inputs into a temporary folder and runs there,
so outputs name files relatively. Rewrite the golden files after an intended change with
``python -m pytest tests/test_golden_outputs.py --update-gold`` (tests/README.md).
"""

from __future__ import annotations

import json
import re
import shutil
import struct
from pathlib import Path

import pytest

from trtcheck.cli import COMMANDS as REGISTERED_COMMANDS
from trtcheck.results.migrate import migrate
from trtcheck.results.model import SCHEMA_VERSION, Results, parse_schema_version

from cli_helper import invoke
from goldtest import GOLD, REPO, check_gold

INPUTS = REPO / "tests" / "gold" / "inputs"
EXPORTS = REPO / "tests" / "data" / "trtexec-exports"
FORMATS = {"text": "txt", "json": "json", "md": "md"}

#: every registered command, for the help goldens (a new command needs its golden file)
COMMANDS = sorted(REGISTERED_COMMANDS)

GATE_POLICY = """\
version: 1
budgets:
  - bench.batch[8].p99_ms <= 12 ms
  - bench.batch[*].throughput_samples_per_s >= 600 samples/s
  - len(inspection.lints[severity=error]) == 0
  - metric: inspection.parameter_bytes
    max: 100 MiB
baseline:
  - bench.batch[*].median_ms: 5%
  - metric: bench.batch[*].p99_ms
    max_regression: 10%
"""


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary working folder holding copies of the fixed inputs."""
    for name in ("bench_a.json", "bench_b.json", "full.json", "live.json"):
        shutil.copyfile(INPUTS / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _ok(res, code: int = 0):
    assert res.returncode == code, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr
    return res


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help(command):
    args = [command, "--help"] if command else ["--help"]
    res = _ok(invoke(*args))
    # an example continued on the next line keeps its line break (no run of spaces inside)
    assert not re.search(r"\S {3,}--", res.stdout), res.stdout
    check_gold(f"help/{command or 'trtcheck'}.txt", res.stdout)


def test_every_help_golden_is_a_command():
    """A removed or renamed command leaves no stale help golden behind."""
    stale = sorted(p.stem for p in (GOLD / "help").glob("*.txt")
                   if p.stem != "trtcheck" and p.stem not in REGISTERED_COMMANDS)
    assert stale == [], f"help goldens of no command: {stale}"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_inspect_onnx(work, fmt):
    import onnx

    from onnx_builders import small_classifier

    onnx.save(small_classifier(), "small_classifier.onnx")
    res = _ok(invoke("inspect", "small_classifier.onnx", "--format", fmt))
    check_gold(f"inspect/onnx.{FORMATS[fmt]}", res.stdout)


def test_inspect_onnx_with_shapes(work):
    import onnx

    from onnx_builders import small_classifier

    onnx.save(small_classifier(), "small_classifier.onnx")
    res = _ok(invoke("inspect", "small_classifier.onnx", "--shapes", "x:4x3x32x32"))
    check_gold("inspect/onnx-shapes.txt", res.stdout)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_inspect_trtexec_export(work, fmt):
    folder = EXPORTS / "resnet18-a100-fp16"
    files = sorted(p.relative_to(REPO) for p in folder.glob("*.json"))
    res = _ok(invoke("inspect", *[REPO / f for f in files], "--format", fmt))
    check_gold(f"inspect/trtexec-resnet18-a100-fp16.{FORMATS[fmt]}", res.stdout)


@pytest.mark.parametrize("export", ["mobilenet-qat-titanrtx", "resnet18-a100-qat"])
def test_inspect_trtexec_export_sets(work, export):
    files = sorted((EXPORTS / export).glob("*.json"))
    res = _ok(invoke("inspect", *files))
    check_gold(f"inspect/trtexec-{export}.txt", res.stdout)


def test_report_from_results(work):
    res = _ok(invoke("report", "--from", "full.json", "-o", "rep"))
    check_gold("report/from-full.output.txt", res.stdout + res.stderr)
    check_gold("report/from-full.md", (work / "rep" / "report.md").read_text(encoding="utf-8"))
    check_gold("report/from-full.html",
               (work / "rep" / "report.html").read_text(encoding="utf-8"))
    assert sorted(p.name for p in (work / "rep" / "charts").iterdir())
    written = json.loads((work / "rep" / "results.json").read_text(encoding="utf-8"))
    given = json.loads((work / "full.json").read_text(encoding="utf-8"))
    # an input of an earlier schema (full.json is 1.4) is written as the current one:
    # migrated (windows in us), with the current version
    ours = parse_schema_version(SCHEMA_VERSION)[0]
    given = migrate(given, parse_schema_version(given["schema_version"])[0], ours)
    given["schema_version"] = SCHEMA_VERSION
    # fields added by later minor versions are written with their defaults
    given = json.loads(Results.model_validate(given).model_dump_json())
    # the report stores its verdict (judged anew, replacing any recorded one) and the
    # derived predicted-vs-measured table beside the recorded numbers, which it keeps as
    # they are
    assert written.pop("verdict")["status"] == "ready_with_warnings"
    given.pop("verdict", None)
    assert written["advice"].pop("serve_predictions")
    given["advice"].pop("serve_predictions", None)
    given.pop("verdict", None)  # an input written by an earlier report carries one
    assert _without_new_nulls(written, given) == given


def _without_new_nulls(written: object, given: object) -> object:
    """``written`` less the optional fields (``null``) that the current schema added and
    ``given`` (an earlier schema's file) lacks."""
    if isinstance(written, dict) and isinstance(given, dict):
        return {k: _without_new_nulls(v, given.get(k)) for k, v in written.items()
                if not (v is None and k not in given)}
    if isinstance(written, list) and isinstance(given, list) and len(written) == len(given):
        return [_without_new_nulls(w, g) for w, g in zip(written, given)]
    return written


def test_live_serve_text_table(work):
    """``trtcheck serve --url``'s text table, rendered from a recorded live run."""
    from trtcheck.report.text_tables import serve_table_text
    from trtcheck.results import load_results

    check_gold("serve/live.txt", serve_table_text(load_results(work / "live.json").serve))


def test_report_from_live_results(work):
    res = _ok(invoke("report", "--from", "live.json", "-o", "rep"))
    check_gold("report/from-live.output.txt", res.stdout + res.stderr)
    check_gold("report/from-live.md", (work / "rep" / "report.md").read_text(encoding="utf-8"))
    html = (work / "rep" / "report.html").read_text(encoding="utf-8")
    title = "trtcheck report: tb_linear on triton at http://127.0.0.1:34283"
    assert f"<title>{title}</title>" in html and f"<h1>{title}</h1>" in html
    assert sorted(p.name for p in (work / "rep" / "charts").iterdir()) == [
        "serve-live-split.png", "serve-window-0.png", "serve-window-1.png"]


def test_report_of_trtexec_export_folder(work):
    shutil.copytree(EXPORTS / "resnet18-a100-fp16", work / "resnet18-a100-fp16")
    res = _ok(invoke("report", "resnet18-a100-fp16", "-o", "rep"))
    doc = json.loads((work / "rep" / "results.json").read_text(encoding="utf-8"))
    # the machine-dependent parts: when, where and with which versions it ran
    for key in ("created_utc", "environment", "tool"):
        assert key in doc, key
        doc[key] = key.upper()
    check_gold("report/trtexec-folder.results.json", json.dumps(doc, indent=2) + "\n")
    check_gold("report/trtexec-folder.output.txt", res.stdout + res.stderr)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_gate(work, fmt):
    (work / "gate.yaml").write_text(GATE_POLICY, encoding="utf-8")
    res = _ok(invoke("gate", "bench_b.json", "-p", "gate.yaml", "-b", "bench_a.json",
                     "--format", fmt), code=1)
    check_gold(f"gate/budgets-baseline.{FORMATS[fmt]}", res.stdout)


def test_gate_junit_and_markdown_files(work):
    (work / "gate.yaml").write_text(GATE_POLICY, encoding="utf-8")
    res = _ok(invoke("gate", "bench_b.json", "-p", "gate.yaml", "-b", "bench_a.json",
                     "--junit-xml", "gate.xml", "--markdown", "gate.md"), code=1)
    check_gold("gate/budgets-baseline.junit.xml",
               (work / "gate.xml").read_text(encoding="utf-8"),
               scrubs=[(r'time="[0-9.]+"', 'time="TIME"'),
                       (r'timestamp="[^"]*"', 'timestamp="TIMESTAMP"')])
    check_gold("gate/budgets-baseline.summary.md",
               (work / "gate.md").read_text(encoding="utf-8"))
    assert res.stdout


def test_gate_list_metrics(work):
    res = _ok(invoke("gate", "full.json", "--list-metrics"))
    check_gold("gate/list-metrics-full.txt", res.stdout)


@pytest.mark.parametrize("fmt", ["text", "json", "md", "html"])
def test_compare(work, fmt):
    ext = {"text": "txt", "json": "json", "md": "md", "html": "html"}[fmt]
    if fmt == "html":
        _ok(invoke("compare", "bench_a.json", "bench_b.json", "--format", fmt, "-o", "c.html"))
        out = (work / "c.html").read_text(encoding="utf-8")
    else:
        out = _ok(invoke("compare", "bench_a.json", "bench_b.json", "--format", fmt)).stdout
    check_gold(f"compare/a-b.{ext}", out)


def test_compare_full_with_itself(work):
    res = _ok(invoke("compare", "full.json", "full.json"))
    check_gold("compare/full-full.txt", res.stdout)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_advise_latency_curve(work, fmt):
    res = _ok(invoke("advise", "--latency-curve", "1:20,8:40,32:110", "--arrival-rate", "3000",
                     "--format", fmt))
    # how long the simulation took on this machine
    check_gold(f"advise/curve-3000.{FORMATS[fmt]}", res.stdout,
               scrubs=[(r'("sweep_seconds": )[0-9.e+-]+', r"\1SECONDS")])


def test_advise_thin_http(work):
    res = _ok(invoke("advise", "--latency-curve", "1:0.29", "--per-request-overhead-ms", "12",
                     "--arrival-rate", "200"))
    check_gold("advise/thin-http.txt", res.stdout)


def test_advise_from_results(work):
    res = _ok(invoke("advise", "--from", "full.json", "--arrival-rate", "500",
                     "--slo-p99-ms", "20"))
    check_gold("advise/from-full-500.txt", res.stdout)


def test_advise_from_a_live_run(work):
    res = _ok(invoke("advise", "--from", "live.json", "--arrival-rate", "300"))
    check_gold("advise/from-live-300.txt", res.stdout)


def _plan_header(version=(10, 8, 0, 43)) -> bytes:
    """Bytes laid out like a TensorRT 8.6+ plan (magic, length at 16, version at 24)."""
    body = b"\x00\n" * 200
    return (b"ftrt" + b"\0" * 12 + struct.pack("<Q", 32 + len(body)) + bytes(version)
            + b"ftrt" + body)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_preflight(work, monkeypatch, fmt):
    from trtcheck.load import plan_header as PH

    monkeypatch.setattr(PH, "installed_runtimes", lambda: {
        "tensorrt": PH.Runtime("tensorrt", "10.9.0.34", "tensorrt-cu12")})
    (work / "model.plan").write_bytes(_plan_header())
    res = invoke("preflight", "model.plan", "--format", fmt)
    assert "Traceback" not in res.stderr
    check_gold(f"preflight/trt-10.8-on-10.9.{FORMATS[fmt]}",
               f"exit {res.returncode}\n{res.stdout}{res.stderr}")


@pytest.mark.parametrize("case,args", [
    ("inspect-missing", ["inspect", "missing.onnx"]),
    ("report-from-missing", ["report", "--from", "missing.json", "-o", "rep"]),
    ("gate-no-policy", ["gate", "full.json"]),
    ("advise-bad-curve", ["advise", "--latency-curve", "1:20,8:x", "--arrival-rate", "10"]),
    ("compare-bad-run", ["compare", "full.json", "full.json", "--run-b", "nope"]),
])
def test_error_lines(work, case, args):
    res = invoke(*args)
    assert res.returncode == 2, (res.returncode, res.stderr)
    check_gold(f"errors/{case}.txt", res.stderr)
