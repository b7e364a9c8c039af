"""Report section: batching advice (decision path, recommendation, predictions, settings)
and, where the results also hold a serving measurement, predicted vs measured charts."""

from __future__ import annotations

from typing import Any

from trtcheck.report.advise_text import RUN_QPS_NOTE, config_label, prediction_rows
from trtcheck.report.charts import ChartSink
from trtcheck.report.sections import Section, render_partial
from trtcheck.results import Results
from trtcheck.results.advice import Advice


PREDICTED_KEYS = ("pred_qps", "pred_batch", "pred_p50", "pred_p99")
"""Predicted columns of the predicted-vs-measured table (``None`` is shown as "-")."""


def _view(adv: Advice) -> dict[str, Any]:
    rows = []
    for label, p in prediction_rows(adv):
        rows.append({"label": label, "config": config_label(p), "stable": p.stable,
                     "p50": p.p50_ms, "p95": p.p95_ms, "p99": p.p99_ms,
                     "qps": p.throughput_queries_per_s, "batch": p.mean_batch,
                     "max_batch": p.max_batch, "queue": p.mean_queue_len,
                     "util": p.utilisation})
    path = []
    for k, n in enumerate(adv.path, 1):
        path.append({"n": k, "step": n.step, "question": n.question, "answer": n.answer,
                     "value": n.value, "threshold": n.threshold, "conclusion": n.conclusion})
    return {"adv": adv, "rows": rows, "path": path, "run_qps_note": RUN_QPS_NOTE,
            "points": sorted(adv.curve.points_ms.items()),
            "comparison": [], "predicted_dash": False}


def _serve_comparison(adv: Advice) -> list[dict[str, Any]]:
    """The stored predicted-vs-measured rows (``advice.serve_predictions``) as the
    template shows them."""
    return [{"config": p.config, "load": p.load,
             "meas_qps": p.measured_throughput_queries_per_s,
             "pred_qps": p.predicted_throughput_queries_per_s,
             "meas_batch": p.measured_mean_batch, "pred_batch": p.predicted_mean_batch,
             "meas_p50": p.measured_p50_ms, "pred_p50": p.predicted_p50_ms,
             "meas_p99": p.measured_p99_ms, "pred_p99": p.predicted_p99_ms}
            for p in adv.serve_predictions]


def _chart(rows: list[dict[str, Any]], charts: ChartSink) -> list[Any]:
    from trtcheck.report.charts import new_figure

    if not rows:
        return []
    out = []
    fig, axes = new_figure(7.0, 3.4)
    xs = list(range(len(rows)))
    axes.plot(xs, [r["meas_p99"] for r in rows], "o", label="measured P99")
    axes.plot(xs, [r["pred_p99"] for r in rows], "x", label="predicted P99")
    axes.plot(xs, [r["meas_p50"] for r in rows], "s", label="measured P50", alpha=0.6)
    axes.plot(xs, [r["pred_p50"] for r in rows], "+", label="predicted P50")
    axes.set_xticks(xs)
    axes.set_xticklabels([r["config"] for r in rows], rotation=60, ha="right", fontsize=7)
    axes.set_ylim(bottom=0)  # levels compared on a zero-based axis
    axes.set_ylabel("latency (ms)")
    axes.legend(fontsize=7)
    out.append(charts.add("advice-predicted-vs-measured", "Simulated vs measured latency per "
                          "serving configuration", fig))
    return out


def build(results: Results, charts: ChartSink) -> Section | None:
    """The advice section, or ``None`` when the results hold no advice."""
    adv = getattr(results, "advice", None)
    if adv is None:
        return None
    view = _view(adv)
    view["comparison"] = _serve_comparison(adv)
    # the note on a predicted "-" only where one is shown (an unstable prediction)
    view["predicted_dash"] = any(row[k] is None for row in view["comparison"]
                                 for k in PREDICTED_KEYS)
    section_charts = _chart(view["comparison"], charts)
    return render_partial("advice", "Batching advice", view, section_charts)


def advice_markdown(adv: Advice) -> str:
    """The advice as Markdown (the ``advise --format md`` output); no charts."""
    from trtcheck.report.sections import render_markdown_partial

    return render_markdown_partial("advice", "Batching advice", _view(adv))
