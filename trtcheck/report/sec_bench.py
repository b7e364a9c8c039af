"""Report section: latency and throughput across batch sizes (one table + charts per run)."""

from __future__ import annotations

from typing import Any

from trtcheck.report.charts import ChartSink, new_figure
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.views import BenchRow, BenchRunView, BenchView, ComponentRow
from trtcheck.results import Results
from trtcheck.results.bench import BenchRun

_COMPONENT_ORDER = ("host_enqueue_ms", "h2d_ms", "gpu_compute_ms", "d2h_ms")


def _pm_pct(samples_ms: list[float]) -> float | None:
    from trtcheck.stats import median_relative_halfwidth

    hw = median_relative_halfwidth(samples_ms) if samples_ms else None
    return None if hw is None else hw * 100.0


def _stopping_rule(st: Any) -> str:
    text = (f"warm-up {st.warmup_s:g} s (>= {st.warmup_min_iterations} runs), "
            f"then until >= {st.min_duration_s:g} s and >= {st.min_samples} "
            f"samples (max {st.max_duration_s:g} s / {st.max_samples} samples)")
    if st.median_precision:
        text += (f", then until the median is known to +-{st.median_precision:.0%} (95% "
                 f"interval) or {min(st.precision_bound_s or 0.0, st.max_duration_s):g} s "
                 "in all")
    return text + f"; inputs: {st.input_source}, seed {st.seed}"


def _failed_rows(run: BenchRun) -> list[str]:
    return [f"batch {f.batch_size} ({' '.join(k + ':' + 'x'.join(map(str, v)) for k, v in f.input_shapes.items())}): "
            f"{'out of memory' if f.reason == 'out-of-memory' else 'failed'}: {f.message}"
            for f in run.failed_batches]


def _run_view(run: BenchRun) -> BenchRunView:
    from trtcheck.analyze.derived import bench_findings
    from trtcheck.report.findings_view import device_is_gpu, group_findings

    rows = []
    for b in run.batches:
        s = b.stats
        rows.append(BenchRow(
            batch_size=b.batch_size, median_ms=s.median_ms, mean_ms=s.mean_ms,
            p90_ms=s.p90_ms, p95_ms=s.p95_ms, p99_ms=s.p99_ms, min_ms=s.min_ms,
            max_ms=s.max_ms, mad_ms=s.mad_ms, iqr_ms=s.iqr_ms, cv_pct=s.cv * 100.0,
            queries_per_s=b.throughput_queries_per_s,
            samples_per_s=b.throughput_samples_per_s,
            gain_vs_batch1=b.throughput_gain_vs_batch1,
            scaling_efficiency=b.scaling_efficiency, sample_count=s.count,
            median_pm_pct=_pm_pct(b.samples_ms)))
    comp_rows = []
    for b in run.batches:
        for key in _COMPONENT_ORDER + tuple(k for k in b.component_stats
                                            if k not in _COMPONENT_ORDER):
            cs = b.component_stats.get(key)
            if cs is not None:
                comp_rows.append(ComponentRow(batch_size=b.batch_size, part=key,
                                              median_ms=cs.median_ms, p99_ms=cs.p99_ms,
                                              sample_count=cs.count))
    findings = bench_findings(run)
    gpu = device_is_gpu(run.backend.device)
    st = run.settings
    return BenchRunView(
        label=run.label,
        model_path=run.model_path,
        backend=run.backend,
        providers=", ".join(run.backend.providers) or "-",
        stopping_rule=_stopping_rule(st),
        rows=rows,
        components=comp_rows,
        warnings=group_findings([w for w in findings if w.severity != "info"], gpu),
        infos=group_findings([w for w in findings if w.severity == "info"], gpu),
        failed=_failed_rows(run),
    )


def bench_view(results: Results) -> BenchView:
    """The view of the bench section: one entry per run."""
    return BenchView(runs=[_run_view(r) for r in results.bench])


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
    top = 0.0
    for run in results.bench:
        bs = [b.batch_size for b in run.batches]
        sps = [b.throughput_samples_per_s for b in run.batches]
        top = max([top, *sps])
        ax.plot(bs, sps, marker="o", label=f"{run.label} measured")
    # the y axis scales to the measured data: the ideal-scaling reference is clipped
    # at 1.3x the highest measured throughput (it would otherwise flatten the data)
    ceiling = 1.3 * top if top > 0 else None
    for run in results.bench:
        base = run.batch(1)
        if base is None:
            continue
        bs = [b.batch_size for b in run.batches]
        ideal = [base.throughput_samples_per_s * b for b in bs]
        clipped = ceiling is not None and max(ideal) > ceiling
        ax.plot(bs, ideal, linestyle=":", color="gray",
                label=f"{run.label} linear scaling from batch 1"
                      + (" (clipped: off the chart)" if clipped else ""))
    _batch_axis(ax, results)
    ax.set_ylim(bottom=0, top=ceiling)
    ax.set_ylabel("throughput (samples/s)")
    ax.set_title("Throughput vs batch size")
    ax.legend(fontsize="small")
    out.append(charts.add("bench-throughput", "Throughput (samples/s) vs batch size", fig))
    return out


def build(results: Results, charts: ChartSink) -> Section | None:
    """The bench section, or ``None`` when the results hold no bench run."""
    if not results.bench:
        return None
    return render_partial("bench", "Latency and throughput", bench_view(results),
                          _charts(results, charts))


def bench_markdown(results: Results) -> str:
    """Markdown of the bench tables alone (no charts), for ``trtcheck bench --format md``."""
    from trtcheck.report.sections import render_markdown_partial

    return render_markdown_partial("bench", "Latency and throughput", bench_view(results))
