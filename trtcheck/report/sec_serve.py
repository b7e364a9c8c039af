"""Report section: serving behind the embedded dynamic batcher.

Per load shape, a table (window, mean batch, max batch, QPS, P50,
P99; medians over repeats) plus ok share and late sends; charts of QPS and P99 against
the window (one line per max batch size, one chart pair per load shape) and stacked
waterfall bars (median of each part) per configuration.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from trtcheck.report.charts import ChartSink, new_figure
from trtcheck.report.findings_view import device_is_gpu, group_findings
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.views import ServeLoadView, ServeRow, ServeView, WaterfallPartRow
from trtcheck.results import Results
from trtcheck.results.serve import WATERFALL_PARTS, ServeRun
from trtcheck.units import us_to_ms

_PART_LABELS = {
    "send_lag_ms": "send lag", "http_ms": "HTTP", "front_ms": "front (per-request)",
    "queue_wait_ms": "queue wait", "window_wait_ms": "window wait", "assembly_ms": "assembly",
    "executor_hop_ms": "executor hop", "compute_ms": "compute",
    "result_dispatch_ms": "result dispatch",
}


def serve_view(run: ServeRun) -> ServeView:
    """The view of the serving section, one table per load shape (charts are attached
    by :func:`build`)."""
    s = run.settings
    loads = []
    for load in s.loads:
        rows = []
        for c in run.configs:
            if c.load.label != load:
                continue
            rep = c.repeats[c.median_repeat]
            wf = {w.name: w for w in rep.waterfall}
            rows.append(ServeRow(
                window_ms=us_to_ms(c.window_us), max_batch_size=c.max_batch_size,
                mean_batch_size=c.mean_batch_size, max_batch_size_seen=c.max_batch_size_seen,
                queries_per_s=c.throughput_queries_per_s, p50_ms=c.p50_ms, p99_ms=c.p99_ms,
                ok_pct=c.ok_share * 100.0,
                late_send_pct=None if c.late_send_share is None
                else c.late_send_share * 100.0,
                send_lag_p99_ms=c.send_lag_p99_ms,
                parts=[WaterfallPartRow(name=_PART_LABELS.get(k, k), median_ms=wf[k].median_ms,
                                        p99_ms=wf[k].p99_ms)
                       for k in WATERFALL_PARTS if k in wf],
                e2e_median_ms=rep.latency.median_ms if rep.latency else None,
                residual_median_ms=rep.residual_median_ms,
                residual_p99_ms=rep.residual_p99_ms,
            ))
        loads.append(ServeLoadView(label=load, rows=rows))
    return ServeView(
        model_path=run.model_path, backend=run.backend,
        settings=(f"{s.repeats} repeat{'s' if s.repeats != 1 else ''} per configuration "
                  "(medians shown); "
                  f"{s.instances} instance{'s' if s.instances != 1 else ''}; queue bound {s.max_queue_size} "
                  f"({s.on_full} when full); per-request overhead "
                  f"{s.per_request_overhead_ms:g} ms; HTTP front "
                  f"{'on' if s.http else 'off'}; {s.event_loop} loop; payload {s.payload}"),
        loads=loads,
        warnings=group_findings([w for c in run.configs for w in c.warnings]
                                + list(run.warnings), device_is_gpu(run.backend.device)),
    )


def _charts(run: ServeRun, charts: ChartSink) -> list[Any]:
    out = []
    mbs = run.settings.max_batch_sizes
    for li, load in enumerate(run.settings.loads):
        cfgs = [c for c in run.configs if c.load.label == load]
        fig, (ax1, ax2) = _pair()
        for mb in mbs:
            pts = sorted((us_to_ms(c.window_us), c.throughput_queries_per_s, c.p99_ms)
                         for c in cfgs if c.max_batch_size == mb)
            if not pts:
                continue
            ax1.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                     label=f"max batch {mb}")
            ax2.plot([p[0] for p in pts], [p[2] if p[2] is not None else float("nan")
                                           for p in pts], marker="^", label=f"max batch {mb}")
        ax1.set_xlabel("window (ms)")
        ax1.set_ylabel("QPS (requests/s)")
        ax1.set_title(f"QPS vs window, {load}")
        ax2.set_xlabel("window (ms)")
        ax2.set_ylabel("P99 latency (ms)")
        ax2.set_title(f"P99 vs window, {load}")
        for ax in (ax1, ax2):
            ax.set_ylim(bottom=0)  # levels compared on a zero-based axis
            ax.legend(fontsize="small")
        out.append(charts.add(f"serve-window-{li}", f"QPS and P99 vs window ({load})", fig))
    # waterfall: stacked medians per configuration
    fig, ax = new_figure(8.0, max(2.5, 0.28 * len(run.configs) + 1.2))
    labels, lefts = [], [0.0] * len(run.configs)
    for i, c in enumerate(run.configs):
        labels.append(f"{c.load.label} w{us_to_ms(c.window_us):g} b{c.max_batch_size}")
    for k in WATERFALL_PARTS:
        vals = []
        for c in run.configs:
            wf = {w.name: w.median_ms for w in c.repeats[c.median_repeat].waterfall}
            vals.append(max(0.0, wf.get(k, 0.0)))
        if not any(vals):
            continue
        ax.barh(range(len(vals)), vals, left=lefts, label=_PART_LABELS[k])
        lefts = [a + b for a, b in zip(lefts, vals)]
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize="x-small")
    ax.invert_yaxis()
    ax.set_xlabel("median per request (ms)")
    ax.set_title("Where a request's time goes (medians of each part)")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    out.append(charts.add("serve-waterfall", "Per-request waterfall (median of each part)", fig))
    return out


def _pair() -> tuple[Any, tuple[Any, Any]]:
    from trtcheck.report.charts import _pyplot

    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4), dpi=100)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    return fig, (axes[0], axes[1])


def build(results: Results, charts: ChartSink) -> Section | None:
    """The serving section, or ``None`` when the results hold no serving run."""
    run = results.serve
    if run is None or not run.configs:
        return None
    view = serve_view(run)
    drawn = _charts(run, charts)
    by_name = {c.name: c for c in drawn}
    view = replace(view, waterfall_chart=by_name.get("serve-waterfall"),
                   loads=[replace(load, chart=by_name.get(f"serve-window-{i}"))  # under its table
                          for i, load in enumerate(view.loads)])
    return render_partial("serve", "Serving with dynamic batching", view, drawn)


def serve_markdown(results: Results) -> str:
    """Markdown of the serving tables alone (no charts), for ``trtcheck serve --format md``."""
    from trtcheck.report.sections import render_markdown_partial

    if results.serve is None:
        return ""
    return render_markdown_partial("serve", "Serving with dynamic batching", serve_view(results.serve))
