"""Report section: latency and throughput across batch sizes (one table + charts per run)."""

from __future__ import annotations

from typing import Any

from trtcheck.report.charts import ChartSink, new_figure
from trtcheck.report.sections import Section, render_partial
from trtcheck.results import Results
from trtcheck.results.bench import BenchRun

_COMPONENT_ORDER = ("host_enqueue_ms", "h2d_ms", "gpu_compute_ms", "d2h_ms")


def _run_view(run: BenchRun) -> dict[str, Any]:
    rows = []
    for b in run.batches:
        s = b.stats
        rows.append({
            "batch": b.batch_size, "median": s.median_ms, "mean": s.mean_ms, "p90": s.p90_ms,
            "p95": s.p95_ms, "p99": s.p99_ms, "min": s.min_ms, "max": s.max_ms,
            "mad": s.mad_ms, "iqr": s.iqr_ms, "cv_pct": s.cv * 100.0,
            "qps": b.throughput_queries_per_s, "sps": b.throughput_samples_per_s,
            "gain": b.throughput_gain_vs_batch1, "eff": b.scaling_efficiency,
            "n": s.count, "stopped_by": b.stopped_by,
            "shapes": ", ".join(f"{k}: {'x'.join(map(str, v))}" for k, v in b.input_shapes.items()),
        })
    comp_rows = []
    for b in run.batches:
        for key in _COMPONENT_ORDER + tuple(k for k in b.component_stats
                                            if k not in _COMPONENT_ORDER):
            cs = b.component_stats.get(key)
            if cs is not None:
                comp_rows.append({"batch": b.batch_size, "part": key, "median": cs.median_ms,
                                  "p99": cs.p99_ms, "n": cs.count})
    from trtcheck.analyze.verdict import bench_findings
    from trtcheck.report.findings_view import device_is_gpu, group_findings

    findings = bench_findings(run)
    st = run.settings
    return {
        "label": run.label,
        "model": run.model_path,
        "backend": run.backend,
        "providers": ", ".join(run.backend.providers) or "-",
        "rule": (f"warm-up {st.warmup_s:g} s (>= {st.warmup_min_iterations} runs), then until "
                 f">= {st.min_duration_s:g} s and >= {st.min_samples} samples "
                 f"(max {st.max_duration_s:g} s / {st.max_samples} samples); inputs: "
                 f"{st.input_source}, seed {st.seed}"),
        "rows": rows,
        "components": comp_rows,
        "warnings": group_findings([w for w in findings if w.severity != "info"],
                                   device_is_gpu(run.backend.device)),
        "infos": group_findings([w for w in findings if w.severity == "info"],
                                device_is_gpu(run.backend.device)),
    }


def _batch_axis(ax: Any, results: Results) -> None:
    """Log2 x axis labelled with the measured batch sizes as plain numbers."""
    from matplotlib.ticker import FixedLocator, NullLocator

    sizes = sorted({b.batch_size for r in results.bench for b in r.batches})
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(s) for s in sizes])
    ax.set_xlabel("batch size")


def _charts(results: Results, charts: ChartSink) -> list[Any]:
    out = []
    fig, ax = new_figure()
    for run in results.bench:
        bs = [b.batch_size for b in run.batches]
        med = [b.stats.median_ms for b in run.batches]
        ax.fill_between(bs, [b.stats.p25_ms for b in run.batches],
                        [b.stats.p75_ms for b in run.batches], alpha=0.15)
        ax.plot(bs, med, marker="o", label=f"{run.label} median")
        ax.plot(bs, [b.stats.p90_ms for b in run.batches], marker=".", linestyle="--",
                label=f"{run.label} p90")
        ax.plot(bs, [b.stats.p99_ms for b in run.batches], marker="^", linestyle=":",
                label=f"{run.label} p99")
    _batch_axis(ax, results)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("latency per execution (ms)")
    ax.set_title("Latency percentiles vs batch size (band: p25-p75)")
    ax.legend(fontsize="small")
    out.append(charts.add("bench-latency", "Latency percentiles vs batch size", fig))

    fig, ax = new_figure()
    for run in results.bench:
        bs = [b.batch_size for b in run.batches]
        sps = [b.throughput_samples_per_s for b in run.batches]
        ax.plot(bs, sps, marker="o", label=f"{run.label} measured")
        base = run.batch(1)
        if base is not None:
            ax.plot(bs, [base.throughput_samples_per_s * b for b in bs], linestyle=":",
                    color="gray", label=f"{run.label} linear scaling from batch 1")
    _batch_axis(ax, results)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("throughput (samples/s)")
    ax.set_title("Throughput vs batch size")
    ax.legend(fontsize="small")
    out.append(charts.add("bench-throughput", "Throughput (samples/s) vs batch size", fig))
    return out


def build(results: Results, charts: ChartSink) -> Section | None:
    """The bench section, or ``None`` when the results hold no bench run."""
    if not results.bench:
        return None
    view = {"runs": [_run_view(r) for r in results.bench]}
    return render_partial("bench", "Latency and throughput", view, _charts(results, charts))


def bench_markdown(results: Results) -> str:
    """Markdown of the bench tables alone (no charts), for ``trtcheck bench --format md``."""
    from trtcheck.report.sections import render_markdown_partial

    return render_markdown_partial("bench", "Latency and throughput",
                                   {"runs": [_run_view(r) for r in results.bench]})
