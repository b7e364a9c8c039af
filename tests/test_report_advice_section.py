"""The advice section of the report.

* the HTML has the "Pitfalls that apply" heading the text and Markdown have;
* in the Markdown a chart image line is followed by a blank line (else it runs into the
  next heading);
* the note on a predicted "-" appears only when a "-" is in the table.
"""

from __future__ import annotations

import pytest

from trtcheck.analyze.advice.advise import AdviseRequest, advise
from trtcheck.analyze.advice.curve import parse_curve_text
from trtcheck.report import sec_advice
from trtcheck.report.charts import ChartSink

NOTE = 'A predicted "-" means'


def _row(pred_p99):
    return {"config": "W=0 ms B=8", "load": "open:28", "meas_qps": 21.0, "pred_qps": 22.0,
            "meas_batch": 2.0, "pred_batch": 1.75, "meas_p50": 12.0,
            "pred_p50": None if pred_p99 is None else 10.0,
            "meas_p99": 26.0, "pred_p99": pred_p99}


@pytest.fixture
def results():
    from test_advise_cli import _results_with_bench

    r = _results_with_bench({1: 2.0, 4: 3.0, 16: 7.0})
    r.advice = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 1500.0))
    assert r.advice.pitfalls, "the scenario needs pitfalls"
    return r


def _section(results, rows, monkeypatch):
    from trtcheck.results.advice import ServePrediction

    # the predicted-vs-measured table is stored in the advice; the section renders it
    results.advice.serve_predictions = [ServePrediction(
        config=r["config"], load=r["load"], window_us=0.0, max_batch_size=8,
        measured_throughput_queries_per_s=r["meas_qps"],
        predicted_throughput_queries_per_s=r["pred_qps"], measured_mean_batch=r["meas_batch"],
        predicted_mean_batch=r["pred_batch"], measured_p50_ms=r["meas_p50"],
        predicted_p50_ms=r["pred_p50"], measured_p99_ms=r["meas_p99"],
        predicted_p99_ms=r["pred_p99"]) for r in rows]
    return sec_advice.build(results, ChartSink())


def test_html_has_the_pitfalls_heading(results, monkeypatch):
    sec = _section(results, [], monkeypatch)
    assert "<h4>Pitfalls that apply</h4>" in sec.html
    assert "**Pitfalls that apply**" in sec.markdown


def test_markdown_chart_line_is_followed_by_a_blank_line(results, monkeypatch):
    sec = _section(results, [_row(15.0), _row(16.0)], monkeypatch)
    lines = sec.markdown.splitlines()
    images = [i for i, ln in enumerate(lines) if ln.startswith("![")]
    assert images, sec.markdown
    for i in images:
        assert lines[i + 1] == "", lines[i:i + 3]


def test_dash_note_only_with_a_dash(results, monkeypatch):
    sec = _section(results, [_row(15.0), _row(16.0)], monkeypatch)
    assert NOTE not in sec.markdown and NOTE not in sec.html
    sec = _section(results, [_row(15.0), _row(None)], monkeypatch)
    assert NOTE in sec.markdown and NOTE in sec.html
    assert "| - |" in sec.markdown


def test_advice_notes_are_shown_in_html_and_markdown(results):
    """The advice's notes (the demo's lesson, calibration notes) reach the report, the
    Markdown export and the advise text."""
    from trtcheck.report.advise_text import advice_text

    lesson = "demo: at 9.1 req/s (lambda x S(1) = 1.1: a queue forms by itself) the advice would be: window 2 ms"
    results.advice.curve.notes.append(lesson)
    sec = sec_advice.build(results, ChartSink())
    assert "<h4>Notes</h4>" in sec.html and lesson in sec.html
    assert "**Notes**" in sec.markdown and f"- {lesson}" in sec.markdown
    assert lesson in sec_advice.advice_markdown(results.advice)
    assert lesson in advice_text(results.advice)
    results.advice.curve.notes.clear()
    sec = sec_advice.build(results, ChartSink())
    assert "Notes" not in sec.html and "**Notes**" not in sec.markdown
