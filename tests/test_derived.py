"""Derived analyses are computed once, stored in the results and gateable: the
enqueue-bound warning and the predicted-vs-measured serving table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_engine_timing import batch
from tests.factories import make_results
from trtcheck.analyze.advice.advise import AdviseRequest, advise
from trtcheck.analyze.derived.derived import add_enqueue_bound_findings, add_serve_predictions, complete
from trtcheck.analyze.gate.gate_evaluate import evaluate
from trtcheck.analyze.gate.gate_policy import parse_policy
from trtcheck.analyze.advice.inputs import inputs_from_results
from trtcheck.report import build_report
from trtcheck.results import load_results, results_from_json, results_to_json


def _enqueue_bound_results():
    r = make_results()
    r.bench[0].batches = [batch(0.094, 0.1045)]  # the H200 numbers at batch 1
    return r


def test_enqueue_bound_is_stored_once_and_gateable():
    r = _enqueue_bound_results()
    assert add_enqueue_bound_findings(r) == 1
    assert add_enqueue_bound_findings(r) == 0  # not added twice
    r = results_from_json(results_to_json(r))
    assert [w.code for w in r.bench[0].batches[0].warnings] == ["enqueue-bound"]
    rep = evaluate(parse_policy("version: 1\nbudgets:\n"
                                "  - len(bench.batch[*].warnings[code=enqueue-bound]) == 0\n"), r)
    assert not rep.passed


def test_report_shows_the_stored_finding_and_does_not_judge_it_while_rendering():
    r = _enqueue_bound_results()
    html, _, _, _ = build_report(r)  # rendering alone computes nothing
    assert "enqueue-bound" not in html
    done = complete(r)
    assert r.bench[0].batches[0].warnings == []  # the input is not changed
    html, _, _, _ = build_report(done)
    assert "<code>enqueue-bound</code>" in html
    assert done.verdict is not None and done.verdict.status == "ready_with_warnings"
    assert "CUDA graph" in done.verdict.reasons[0].remedy


def _served(tmp_path: Path):
    """A real `trtcheck serve` run of the synthetic backend under an open loop."""
    from trtcheck.cli import main

    out = tmp_path / "serve.json"
    with pytest.raises(SystemExit) as e:
        main(["serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0,2",
              "--max-batch", "8", "--load", "open:300:poisson:150", "--repeats", "1",
              "--warmup-requests", "0", "-o", str(out)])
    assert e.value.code in (0, None)
    served = load_results(out)
    curve, measured = inputs_from_results(served)
    # on a loaded machine the open loops may be marked generator-limited and give no
    # calibration: the stored predictions do not depend on it
    served.advice = advise(AdviseRequest(
        curve, 300.0, batch_excess_ms=tuple(measured.get("batch_excess_ms", ())),
        request_delay_ms=tuple(measured.get("request_delay_ms", ()))))
    return served


def test_serve_predictions_are_stored_and_gateable(tmp_path):
    served = _served(tmp_path)
    assert served.advice.serve_predictions == []
    assert add_serve_predictions(served)
    rows = served.advice.serve_predictions
    opens = [c for c in served.serve.configs if c.load.kind == "open"]
    assert len(rows) == len(opens) > 0
    assert not add_serve_predictions(served)  # stored: not computed again
    back = results_from_json(results_to_json(served))
    assert back.advice.serve_predictions == rows
    w0 = [p for p in rows if p.window_us == 0][0]
    policy = parse_policy("version: 1\nbudgets:\n  - advice.serve_predictions"
                          f"[window_us=0,max_batch_size={w0.max_batch_size}]"
                          ".predicted_throughput_queries_per_s >= 1 qps\n")
    assert evaluate(policy, back).passed


def test_report_renders_the_stored_table(tmp_path):
    served = _served(tmp_path)
    html, _, _, _ = build_report(served)
    assert "Predicted vs measured" not in html  # nothing stored, nothing computed
    html, md, _, _ = build_report(complete(served))
    assert "Predicted vs measured" in html and "predicted req/s" in md
