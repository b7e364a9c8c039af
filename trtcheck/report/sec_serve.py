"""Report section: serving behind the embedded dynamic batcher.

Per load shape, a table (window, mean batch, max batch, QPS, P50,
P99; medians over repeats) plus ok share and late sends; charts of QPS and P99 against
the window (one line per max batch size, one chart pair per load shape) and stacked
waterfall bars (median of each part) per configuration.

A live target's run (``trtcheck serve --url``, ``ServeRun.live`` set) shows instead of the
embedded waterfall: the server and model, the model configuration each run used
(window, max batch, instances, kind, preferred sizes), the server's own statistics
(the mean batch it formed, executions per batch size, queue and compute times) and the
split of the mean request latency into client + network, server queue, server compute
and the server's other time, with a stacked bar chart of that split per configuration.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from trtcheck.report.charts import ChartSink, new_figure, zero_based_with_headroom
from trtcheck.report.findings_view import device_is_gpu, group_findings
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.views import (
    LiveBatchRow,
    LiveCommandView,
    LiveConfigRow,
    LiveServeView,
    LiveSplitRow,
    LiveStatsRow,
    LiveTargetView,
    ServeLoadView,
    ServeRow,
    ServeView,
    WaterfallPartRow,
)
from trtcheck.results import Results
from trtcheck.results.serve import WATERFALL_PARTS, ServeConfigResult, ServeRun
from trtcheck.units import us_to_ms

_PART_LABELS = {
    "send_lag_ms": "send lag", "http_ms": "HTTP", "front_ms": "front (per-request)",
    "queue_wait_ms": "queue wait", "window_wait_ms": "window wait", "assembly_ms": "assembly",
    "executor_hop_ms": "executor hop", "compute_ms": "compute",
    "result_dispatch_ms": "result dispatch",
}


#: the parts of a live request's mean latency, in the order a request meets them:
#: (LiveSplit field, label)
LIVE_SPLIT_PARTS: tuple[tuple[str, str], ...] = (
    ("client_network_mean_ms", "client + network"),
    ("server_queue_mean_ms", "server queue"),
    ("server_compute_mean_ms", "server compute"),
    ("server_other_mean_ms", "server other"),
)


def _config_label(c: ServeConfigResult) -> str:
    """Short label of a live configuration: load, window, max batch, instances."""
    return (f"{c.load.label} w{us_to_ms(c.window_us):g} b{c.max_batch_size}"
            + (f" i{c.instances}" if c.instances is not None else ""))


def _instance_kinds(config: dict[str, Any]) -> str:
    """The ``instance_group`` kinds of a Triton model config (``KIND_AUTO`` when none)."""
    groups = config.get("instance_group") or []
    kinds = sorted({str(g.get("kind", "KIND_AUTO")) for g in groups if isinstance(g, dict)})
    return ", ".join(kinds) or "KIND_AUTO"


def live_view(run: ServeRun) -> LiveServeView:
    """The live-target part of the serving view: target, per-configuration model config,
    server statistics (median repeat), latency split and executions per batch size.

    Raises:
        ValueError: ``run`` is not a live target's run (``run.live`` is ``None``).
    """
    lv = run.live
    if lv is None:
        raise ValueError("not a live target's run")
    cmd = lv.command_stats
    target = LiveTargetView(
        server=f"{lv.server_name or 'KServe v2 server'} {lv.server_version}".strip(),
        protocol=lv.protocol.upper(), url=lv.url, model=lv.model_name,
        version=lv.model_version or "the server's choice", backend=lv.model_platform or "-",
        client_processes=lv.client_processes,
        model_control=("each configuration loaded through the model-repository API, the "
                       "original loaded again afterwards" if lv.explicit_model_control
                       else "measured as loaded"),
        command=None if cmd is None else LiveCommandView(
            mean_batch_size=cmd.avg_batch_size, inference_count=cmd.inference_count,
            execution_count=cmd.execution_count))
    configs: list[LiveConfigRow] = []
    stats: list[LiveStatsRow] = []
    split: list[LiveSplitRow] = []
    batches: list[LiveBatchRow] = []
    for c in run.configs:
        cfg = c.server_model_config if c.server_model_config is not None \
            else lv.model_config_json
        db = cfg.get("dynamic_batching") if isinstance(cfg.get("dynamic_batching"),
                                                       dict) else None
        window_ms = us_to_ms(c.window_us)
        key: dict[str, Any] = {"load": c.load.label, "window_ms": window_ms,
               "max_batch_size": c.max_batch_size, "instances": c.instances}
        pref = c.preferred_batch_sizes if c.preferred_batch_sizes is not None else [
            int(p) for p in (db or {}).get("preferred_batch_size", [])]
        row = LiveConfigRow(
            window_ms=window_ms, max_batch_size=int(cfg.get("max_batch_size", 0) or 0),
            instances=c.instances, kind=_instance_kinds(cfg),
            dynamic_batching="on" if db is not None else "off",
            preferred_batch_sizes=", ".join(map(str, pref)) or "-",
            max_queue_size=int(((db or {}).get("default_queue_policy") or {}).get(
                "max_queue_size", 0) or 0))
        if row not in configs:  # one row per configuration, not per load shape
            configs.append(row)
        rep = c.repeats[c.median_repeat]
        st = rep.server_stats
        if st is not None:
            stats.append(LiveStatsRow(
                **key, mean_batch_size=st.avg_batch_size, inference_count=st.inference_count,
                execution_count=st.execution_count,
                executions_per_batch_size=", ".join(
                    f"{b.batch_size}\u00d7{b.execution_count}" for b in st.batch_stats) or "-",
                queue_ms=st.queue.mean_ms, compute_input_ms=st.compute_input.mean_ms,
                compute_infer_ms=st.compute_infer.mean_ms,
                compute_output_ms=st.compute_output.mean_ms))
            for b in st.batch_stats:
                n = b.execution_count
                batches.append(LiveBatchRow(
                    **key, batch_size=b.batch_size, execution_count=n,
                    share_pct=100.0 * n / st.execution_count if st.execution_count else None,
                    compute_input_ms=b.compute_input_ms / n if n else None,
                    compute_infer_ms=b.compute_infer_ms / n if n else None,
                    compute_output_ms=b.compute_output_ms / n if n else None))
        sp = rep.live_split
        if sp is not None:
            split.append(LiveSplitRow(
                **key, client_mean_ms=sp.client_mean_ms,
                parts_ms=[float(getattr(sp, f)) for f, _ in LIVE_SPLIT_PARTS],
                server_pct=100.0 * sp.server_request_mean_ms / sp.client_mean_ms
                if sp.client_mean_ms > 0 else None,
                send_lag_mean_ms=sp.send_lag_mean_ms))
    from trtcheck.report.load_nodes_view import node_rows

    return LiveServeView(target=target, configs=configs, stats=stats, split=split,
                         batches=batches,
                         part_labels=[label for _, label in LIVE_SPLIT_PARTS],
                         nodes=node_rows(run), ray_address=lv.ray_address)


def _live_settings(run: ServeRun) -> str:
    s = run.settings
    return (f"{s.repeats} repeat{'s' if s.repeats != 1 else ''} per configuration "
            "(medians shown; server statistics and split of the median repeat); "
            f"{s.warmup_requests} warm-up requests per run; a send over "
            f"{s.late_threshold_ms:g} ms late counts as late; payload {s.payload}")


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
                instances=int(c.instances if c.instances is not None else s.instances),
            ))
        loads.append(ServeLoadView(label=load, rows=rows))
    live = run.live is not None
    return ServeView(
        model_path=run.model_path, backend=run.backend,
        live=live_view(run) if live else None,
        settings=_live_settings(run) if live else (f"{s.repeats} repeat{'s' if s.repeats != 1 else ''} per configuration "
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
    # one line per max batch size (and per instance count, when a live sweep varied it)
    insts = sorted({c.instances for c in run.configs if c.instances is not None})
    lines = [(mb, n) for mb in run.settings.max_batch_sizes
             for n in (insts if len(insts) > 1 else [None])]
    for li, load in enumerate(run.settings.loads):
        cfgs = [c for c in run.configs if c.load.label == load]
        if len({c.window_us for c in cfgs}) < 2:
            continue  # one window: no curve to draw; the table holds the numbers
        fig, (ax1, ax2) = _pair()
        for mb, n in lines:
            pts = sorted((us_to_ms(c.window_us), c.throughput_queries_per_s, c.p99_ms)
                         for c in cfgs if c.max_batch_size == mb
                         and (n is None or c.instances == n))
            if not pts:
                continue
            label = f"max batch {mb}" + (f", {n} instance{'s' if n != 1 else ''}"
                                         if n is not None else "")
            ax1.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
            ax2.plot([p[0] for p in pts], [p[2] if p[2] is not None else float("nan")
                                           for p in pts], marker="^", label=label)
        ax1.set_xlabel("window (ms)")
        ax1.set_ylabel("QPS (requests/s)")
        ax1.set_title(f"QPS vs window, {load}")
        ax2.set_xlabel("window (ms)")
        ax2.set_ylabel("P99 latency (ms)")
        ax2.set_title(f"P99 vs window, {load}")
        for ax in (ax1, ax2):
            # levels compared on a zero-based axis, with headroom above the highest
            # point (nearly equal values would otherwise sit on the frame)
            zero_based_with_headroom(ax)
            ax.legend(fontsize="small")
        out.append(charts.add(f"serve-window-{li}", f"QPS and P99 vs window ({load})", fig))
    if run.live is not None:
        chart = _live_split_chart(run, charts)
        return out + ([chart] if chart is not None else [])
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


def _live_split_chart(run: ServeRun, charts: ChartSink) -> Any:
    """Stacked horizontal bars, one per live configuration: the mean request latency split
    into client + network, server queue, server compute and server other (ms, from 0);
    ``None`` when no configuration has a split."""
    rows = [(c, c.repeats[c.median_repeat].live_split) for c in run.configs]
    rows = [(c, sp) for c, sp in rows if sp is not None]
    if not rows:
        return None
    fig, ax = new_figure(8.0, max(2.5, 0.32 * len(rows) + 1.4))
    lefts = [0.0] * len(rows)
    for field_name, label in LIVE_SPLIT_PARTS:
        vals = [max(0.0, getattr(sp, field_name)) for _, sp in rows]
        ax.barh(range(len(rows)), vals, left=lefts, label=label)
        lefts = [a + b for a, b in zip(lefts, vals)]
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([_config_label(c) for c, _ in rows], fontsize="x-small")
    ax.invert_yaxis()
    ax.set_xlim(left=0)  # parts of one whole, on a zero-based axis
    ax.set_xlabel("mean per request (ms), from the send")
    ax.set_title("Where each request's time went (means)")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return charts.add("serve-live-split", "Mean request latency: client + network, server "
                      "queue, server compute", fig)


def _pair() -> tuple[Any, tuple[Any, Any]]:
    from trtcheck.report.charts import pyplot

    plt = pyplot()
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
                   split_chart=by_name.get("serve-live-split"),
                   loads=[replace(load, chart=by_name.get(f"serve-window-{i}"))  # under its table
                          for i, load in enumerate(view.loads)])
    return render_partial("serve", serve_title(run), view, drawn)


def serve_title(run: ServeRun) -> str:
    """The section's heading: the embedded batcher, or the live server's name."""
    if run.live is None:
        return "Serving with dynamic batching"
    return f"Serving on a live server ({run.live.server_name or 'KServe v2'})"


def serve_markdown(results: Results) -> str:
    """Markdown of the serving tables alone (no charts), for ``trtcheck serve --format md``."""
    from trtcheck.report.sections import render_markdown_partial

    if results.serve is None:
        return ""
    return render_markdown_partial("serve", serve_title(results.serve),
                                   serve_view(results.serve))
