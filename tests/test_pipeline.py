"""The report and advice pipelines called from Python (trtcheck.pipeline): the same
results as the commands, which only parse options, call them and print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trtcheck.analyze.advice.curve import parse_curve_text
from trtcheck.errors import InputError, UsageError
from trtcheck.pipeline import (
    AdviseSettings,
    advice_from_results,
    advise_from_source,
    load_report_policy,
    report_from_results,
)
from trtcheck.results import load_results

from cli_helper import invoke
from goldtest import REPO

FULL = REPO / "tests" / "gold" / "inputs" / "full.json"


def _json_stdout(*args: str) -> dict:
    res = invoke(*args)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _advice(doc: dict) -> dict:
    """An advice document without what the command adds (the JSON envelope, the exports)
    and how long the simulation took here."""
    return {k: v for k, v in doc.items()
            if k not in ("schema_version", "kind", "export", "sweep_seconds")}


def test_settings_default_to_the_advise_request_defaults():
    from dataclasses import fields

    from trtcheck.analyze.advice.advise import AdviseRequest

    request = AdviseRequest(curve=parse_curve_text("1:2"), rate_per_s=1.0)
    for f in fields(AdviseSettings):
        name = {"device_kind": "device", "notes": "notes"}.get(f.name, f.name)
        if name in ("per_request_overhead_ms", "serial_overhead", "per_batch_overhead_ms",
                    "per_item_overhead_ms", "timer_slack_us", "rate_per_s"):
            continue  # None: as measured (build_request), else the request's 0
        assert getattr(AdviseSettings(), f.name) == getattr(request, name), f.name


def test_advice_from_a_curve_is_what_advise_prints():
    outcome = advise_from_source(AdviseSettings(rate_per_s=3000.0),
                                 curve=parse_curve_text("1:20,8:40,32:110"))
    assert outcome.results is None and outcome.model_name == "model"
    cli = _json_stdout("advise", "--latency-curve", "1:20,8:40,32:110", "--arrival-rate",
                       "3000", "--format", "json")
    assert _advice(json.loads(outcome.advice.model_dump_json())) == _advice(cli)


def test_advice_from_results_is_what_advise_from_prints():
    outcome = advise_from_source(AdviseSettings(rate_per_s=500.0, slo_p99_ms=20.0),
                                 results=load_results(FULL), results_source="full.json")
    cli = _json_stdout("advise", "--from", str(FULL), "--arrival-rate", "500",
                       "--slo-p99-ms", "20", "--format", "json")
    assert _advice(json.loads(outcome.advice.model_dump_json())) == _advice(cli)
    assert outcome.results is not None


@pytest.mark.parametrize("sources", [{}, {"curve": "1:2", "model": "m.onnx"}])
def test_advise_takes_exactly_one_source(sources):
    if "curve" in sources:
        sources["curve"] = parse_curve_text(sources["curve"])
    with pytest.raises(UsageError, match="exactly one source"):
        advise_from_source(AdviseSettings(rate_per_s=10.0), **sources)


def test_report_from_results_writes_what_report_from_writes(tmp_path: Path):
    results = load_results(FULL)
    lines: list[str] = []
    written = report_from_results(results, str(tmp_path / "lib"), log=lines.append)
    assert sorted(p.name for p in written if p.suffix != ".png") == \
        ["report.html", "report.md", "results.json"]
    assert results.verdict is not None and results.verdict.status == "ready_with_warnings"
    res = invoke("report", "--from", str(FULL), "-o", str(tmp_path / "cli"))
    assert res.returncode == 0, res.stderr
    for name in ("results.json", "report.md"):
        assert (tmp_path / "lib" / name).read_text() == (tmp_path / "cli" / name).read_text()
    assert lines == []  # nothing measured or advised: no progress lines


def test_report_from_results_with_advice_logs_and_stores_it(tmp_path: Path):
    results = load_results(FULL)
    lines: list[str] = []
    report_from_results(results, str(tmp_path / "r"), arrival_rate_per_s=200.0,
                        log=lines.append)
    assert lines == ["advising for 200 req/s ..."]
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert doc["advice"]["inputs"]["arrival_rate_per_s"] == 200.0


def test_report_from_results_keeps_an_existing_report_and_removes_a_new_folder(
        tmp_path: Path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "report.html").write_text("keep me")
    with pytest.raises(InputError, match="already holds a report"):
        report_from_results(load_results(FULL), str(out))
    assert (out / "report.html").read_text() == "keep me"
    new = tmp_path / "new" / "deeper"
    with pytest.raises(InputError):  # no configuration meets a 1 us P99 objective
        report_from_results(load_results(FULL), str(new), arrival_rate_per_s=200.0,
                            slo_p99_ms=0.001)
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("rate,needle", [(-1.0, "must be > 0"), (None, "rate is needed")])
def test_advice_from_results_refuses_a_missing_or_bad_rate(rate, needle):
    with pytest.raises(InputError, match=needle):
        advice_from_results(load_results(FULL), rate)


def test_advice_from_results_needs_a_curve():
    from trtcheck.measure.bench.runner import new_results

    with pytest.raises(InputError, match="needs T\\(b\\)"):
        advice_from_results(new_results(), 100.0)


def test_report_policy_of_budgets_only(tmp_path: Path):
    assert load_report_policy(None) is None
    budgets = tmp_path / "budgets.yaml"
    budgets.write_text("version: 1\nbudgets:\n  - bench.batch[1].p99_ms <= 50 ms\n")
    assert load_report_policy(str(budgets)).rules
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("version: 1\nbaseline:\n  - bench.batch[*].median_ms: 5%\n")
    with pytest.raises(UsageError, match="budgets only"):
        load_report_policy(str(baseline))


def test_measure_report_on_a_real_model(tmp_path: Path, tiny_relu_model):
    """The whole pipeline on a small ONNX model: inspection, a short sweep, the verdict and
    the report files; the sweep's batch sizes are filled in for a dynamic batch axis."""
    from trtcheck.measure.bench.bench import StopRule
    from trtcheck.measure.bench.runner import RunOptions
    from trtcheck.pipeline import measure_report

    opts = RunOptions(shapes={"x": [1, 3, 4, 4]},
                      rule=StopRule(warmup_s=0.0, warmup_min_iterations=1, min_duration_s=0.0,
                                    min_samples=3, max_duration_s=1.0))
    lines: list[str] = []
    run = measure_report(str(tiny_relu_model), opts, str(tmp_path / "rep"), log=lines.append)
    assert run.stopped is None and run.precision_error is None and run.advice_error is None
    assert run.results.inspection is not None and len(run.results.bench) == 1
    assert run.results.verdict is not None
    assert (tmp_path / "rep" / "report.html").is_file()
    assert run.results.bench[0].settings.batch_sizes == [1, 2, 4, 8]
    assert any(line.startswith("benchmarking ") for line in lines)
