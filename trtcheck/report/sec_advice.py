"""Report section: batching advice (decision path, recommendation, predictions, settings)
and, where the results also hold a serving measurement, predicted vs measured charts."""

from __future__ import annotations

from typing import Any

from trtcheck.report.advise_text import RUN_QPS_NOTE, config_label, prediction_rows
from trtcheck.report.charts import ChartSink
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.views import AdviceView, ComparisonRow, DecisionStep, PredictionRow
from trtcheck.results import Results
from trtcheck.results.advice import Advice


def advice_view(adv: Advice, comparison: list[ComparisonRow]) -> AdviceView:
    """The view of the advice section.

    Args:
        adv: the advice record.
        comparison: predicted vs measured rows (:func:`serve_comparison`; empty for
            ``advise``'s own output, which shows no measurement).
    """
    rows = [PredictionRow(label=label, config=config_label(p), stable=p.stable,
                          p50_ms=p.p50_ms, p95_ms=p.p95_ms, p99_ms=p.p99_ms,
                          queries_per_s=p.throughput_queries_per_s, mean_batch=p.mean_batch,
                          max_batch=p.max_batch, mean_queue_len=p.mean_queue_len,
                          utilisation=p.utilisation,
                          p50_interval_ms=_pair(p.p50_interval_ms),
                          p99_interval_ms=_pair(p.p99_interval_ms),
                          contention=(f"T(b) x {p.contention_factor:g} "
                                      f"({p.contention_source} contention)"
                                      if p.contention_factor else ""))
            for label, p in prediction_rows(adv)]
    path = [DecisionStep(n=k, step=n.step, question=n.question, answer=n.answer,
                         value=n.value, threshold=n.threshold, conclusion=n.conclusion)
            for k, n in enumerate(adv.path, 1)]
    # the note on a predicted "-" only where one is shown (an unstable prediction)
    predicted_dash = any(None in (c.predicted_queries_per_s, c.predicted_mean_batch,
                                  c.predicted_p50_ms, c.predicted_p99_ms) for c in comparison)
    return AdviceView(adv=adv, rows=rows, path=path, run_qps_note=RUN_QPS_NOTE,
                      points=sorted(adv.curve.points_ms.items()),
                      comparison=comparison, predicted_dash=predicted_dash,
                      interval_rows=[r for r in rows if r.p50_interval_ms is not None
                                     and r.p99_interval_ms is not None])


def _pair(iv: list[float] | None) -> tuple[float, float] | None:
    """``[lo, hi]`` as a pair; ``None`` stays."""
    return (float(iv[0]), float(iv[1])) if iv else None


def serve_comparison(adv: Advice) -> list[ComparisonRow]:
    """The stored predicted-vs-measured rows (``advice.serve_predictions``)."""
    return [ComparisonRow(
        config=p.config, load=p.load,
        measured_queries_per_s=p.measured_throughput_queries_per_s,
        predicted_queries_per_s=p.predicted_throughput_queries_per_s,
        measured_mean_batch=p.measured_mean_batch, predicted_mean_batch=p.predicted_mean_batch,
        measured_p50_ms=p.measured_p50_ms, predicted_p50_ms=p.predicted_p50_ms,
        measured_p99_ms=p.measured_p99_ms, predicted_p99_ms=p.predicted_p99_ms)
        for p in adv.serve_predictions]


def predictions_chart(rows: list[ComparisonRow], charts: ChartSink) -> list[Any]:
    """The predicted-vs-measured P99 chart of the serving configurations added to ``charts``;
    returns the chart entries of the section (empty without rows)."""
    from trtcheck.report.charts import new_figure, zero_based_with_headroom

    if not rows:
        return []
    out = []
    fig, axes = new_figure(7.0, 3.4)
    xs = list(range(len(rows)))
    axes.plot(xs, [r.measured_p99_ms for r in rows], "o", label="measured P99")
    axes.plot(xs, [r.predicted_p99_ms for r in rows], "x", label="predicted P99")
    axes.plot(xs, [r.measured_p50_ms for r in rows], "s", label="measured P50", alpha=0.6)
    axes.plot(xs, [r.predicted_p50_ms for r in rows], "+", label="predicted P50")
    axes.set_xticks(xs)
    several_loads = len({r.load for r in rows}) > 1  # name the load where it tells rows apart
    axes.set_xticklabels([f"{r.load} {r.config}" if several_loads else r.config for r in rows],
                         rotation=60, ha="right", fontsize=7)
    zero_based_with_headroom(axes)  # the highest P99 marker stays inside the frame
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
    view = advice_view(adv, serve_comparison(adv))
    return render_partial("advice", "Batching advice", view, predictions_chart(view.comparison, charts))


def advice_markdown(adv: Advice) -> str:
    """The advice as Markdown (the ``advise --format md`` output); no charts."""
    from trtcheck.report.sections import render_markdown_partial

    return render_markdown_partial("advice", "Batching advice", advice_view(adv, []))
