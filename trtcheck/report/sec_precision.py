"""Report section: precision variants against FP32, accuracy beside latency and throughput.

Reads only ``results.precision`` (:class:`~trtcheck.results.precision.PrecisionResult`).
One summary table (a row per precision: latency, throughput, speed-up vs FP32, and what
it costs in accuracy: worst cosine similarity, max abs error, share outside tolerance,
NaN/Inf, top-1 agreement, verdict), per-output tables, tolerances with their source,
findings, localisation, and one chart (speed-up beside accuracy cost).
"""

from __future__ import annotations

from typing import Any

from trtcheck.report.charts import ChartSink, new_figure
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.views import (
    PrecisionOutputRow,
    PrecisionRow,
    PrecisionVariantView,
    PrecisionView,
)
from trtcheck.results import Results
from trtcheck.results.precision import PrecisionResult


def _cost_sentence(label: str, v: Any) -> str:
    cos = v.min_cosine_similarity
    acc = (f"worst cosine similarity {cos:.6f}, " if cos is not None else "") + \
        f"max abs error {v.max_abs_error:.3g}"
    if v.min_top1_agreement is not None:
        acc += f", top-1 agreement {v.min_top1_agreement:.0%}"
    verdict = "within tolerance" if v.passed else "NOT within tolerance"
    lat = v.latency
    if lat is not None and lat.speedup_not_measurable:
        return (f"{label}: speed-up {lat.speedup_not_measurable} ({lat.median_ms:.3f} ms "
                f"median as run here); {acc}; {verdict}.")
    if lat is not None and lat.speedup_vs_reference is not None:
        ci = lat.speedup_interval
        span = f", 95% interval {ci[0]:.2f}-{ci[1]:.2f}x" if ci else ""
        return (f"{label}: {lat.speedup_vs_reference:.2f}x the FP32 speed{span} "
                f"({lat.median_ms:.3f} ms median) for {acc}; {verdict}.")
    return f"{label}: {acc}; {verdict} (latency not measured)."


_METRIC_WORDS = {"cosine_similarity": ("cosine", "{:.6f}"), "rel_l2_error": ("rel L2", "{:.3g}")}


def _not_judged(o: Any) -> list[str]:
    out = []
    for key, why in o.not_judged.items():
        word, fmt = _METRIC_WORDS.get(key, (key, "{}"))
        value = getattr(o, key, None)
        out.append(f"{word} {fmt.format(value) if value is not None else '-'}: {why}")
    return out


def _row_verdict(v: Any) -> str:
    """``pass``/``FAIL``, with the metrics shown in the row that did not judge it."""
    word = "pass" if v.passed else "FAIL"
    skipped = sorted({_METRIC_WORDS.get(k, (k, ""))[0] for o in v.outputs.values()
                      for k in o.not_judged})
    if skipped:
        word += f" ({', '.join(skipped)} not judged: every |ref| <= atol)"
    return word


def speedup_text(lat: Any) -> str:
    """A variant's speed-up as the report shows it: ``1.30 (1.21-1.40)`` with its 95%
    interval, ``not measurable on this backend``, or ``-`` (``lat``: its
    :class:`~trtcheck.results.precision.PrecisionLatency` or ``None``)."""
    if lat is None:
        return "-"
    if lat.speedup_not_measurable:
        return "not measurable on this backend"
    if lat.speedup_vs_reference is None:
        return "-"
    ci = lat.speedup_interval
    return (f"{lat.speedup_vs_reference:.2f}"
            + (f" ({ci[0]:.2f}-{ci[1]:.2f})" if ci else ""))


def precision_view(p: PrecisionResult) -> PrecisionView:
    """The view of the precision section: the summary table (FP32 reference first) and
    each variant in detail."""
    rl = p.reference_latency
    rows = [PrecisionRow(
        label="fp32 (reference)", backend=f"{p.reference.name} {p.reference.version}",
        median_ms=rl.median_ms if rl else None, p99_ms=rl.p99_ms if rl else None,
        samples_per_s=rl.throughput_samples_per_s if rl else None,
        speedup_vs_fp32=1.0 if rl else None, min_cosine_similarity=None,
        max_rel_l2_error=None, max_abs_error=None, outside_pct=None, nonfinite_count=None,
        min_top1_agreement=None, verdict="reference",
        speedup_text="1.00" if rl else "-")]
    variants = []
    for label, v in p.variants.items():
        lat = v.latency
        rows.append(PrecisionRow(
            label=label, backend=f"{v.backend.name} {v.backend.version}",
            median_ms=lat.median_ms if lat else None, p99_ms=lat.p99_ms if lat else None,
            samples_per_s=lat.throughput_samples_per_s if lat else None,
            speedup_vs_fp32=lat.speedup_vs_reference if lat else None,
            min_cosine_similarity=v.min_cosine_similarity,
            max_rel_l2_error=v.max_rel_l2_error, max_abs_error=v.max_abs_error,
            outside_pct=v.max_outside_tolerance_fraction * 100.0,
            nonfinite_count=v.nonfinite_count, min_top1_agreement=v.min_top1_agreement,
            verdict=_row_verdict(v), speedup_text=speedup_text(lat)))
        variants.append(PrecisionVariantView(
            label=label, built_by=v.built_by, model_path=v.model_path,
            passed=v.passed, tolerance=v.tolerance,
            kept=", ".join(v.kept_fp32_nodes[:20])
            + (" ..." if len(v.kept_fp32_nodes) > 20 else ""),
            outputs=[PrecisionOutputRow(
                name=o.name, shape="x".join(map(str, o.shape)),
                reference_max_abs=o.reference_max_abs, max_abs_error=o.max_abs_error,
                rounding_floor=o.rounding_floor_max_abs_error,
                mean_abs_error=o.mean_abs_error, p99_abs_error=o.p99_abs_error,
                max_rel_error=o.max_rel_error, mean_rel_error=o.mean_rel_error,
                rel_l2_error=o.rel_l2_error, cosine_similarity=o.cosine_similarity,
                outside_pct=o.outside_tolerance_fraction * 100.0,
                nan_count=o.candidate_nan_count, inf_count=o.candidate_inf_count,
                top1_pct=None if o.top1_agreement is None else o.top1_agreement * 100.0,
                top5_pct=None if o.top5_agreement is None else o.top5_agreement * 100.0,
                polygraphy="-" if o.polygraphy_elemwise_passed is None else
                ("pass" if o.polygraphy_elemwise_passed else "fail"),
                passed=o.passed, not_judged=_not_judged(o),
            ) for o in v.outputs.values()],
            findings=[f for f in v.findings if f.severity != "info"],
            infos=[f for f in v.findings if f.severity == "info"],
            localization=v.localization,
            cost=_cost_sentence(label, v),
        ))
    inp = p.inputs
    inputs = (f"{inp.source}, {inp.sample_count} sample(s)"
              + (f", seed {inp.seed} (sample i uses seed + i)" if inp.seed is not None else "")
              + "; shapes " + ", ".join(f"{k}: {'x'.join(map(str, s))}" for k, s in inp.shapes.items()))
    return PrecisionView(model_path=p.model_path, reference=p.reference, inputs=inputs,
                         files=inp.files[:10], more_files=max(0, len(inp.files) - 10),
                         passed=p.passed, rows=rows, variants=variants, notes=list(p.notes),
                         reference_noise_max_abs=p.reference_repeat_max_abs_error)


def precision_chart(p: PrecisionResult, charts: ChartSink) -> list[Any]:
    """The precision chart (speed-up vs FP32 and 1 - worst cosine similarity per variant)
    added to ``charts``; returns the chart entries of the section (empty without variants)."""
    labels = list(p.variants)
    if not labels:
        return []
    fig, ax = new_figure(8.0, 3.4)
    ax.remove()
    ax1, ax2 = fig.subplots(1, 2)
    speed = [(v.latency.speedup_vs_reference or 0.0) if v.latency else 0.0
             for v in p.variants.values()]
    colors = ["tab:green" if v.passed else "tab:red" for v in p.variants.values()]
    bars = ax1.bar(["fp32"] + labels, [1.0 if p.reference_latency else 0.0] + speed,
                   color=["tab:gray"] + colors)
    for bar, v in zip(bars[1:], p.variants.values()):
        ci = v.latency.speedup_interval if v.latency else None
        if ci and v.latency and v.latency.speedup_vs_reference:
            x = bar.get_x() + bar.get_width() / 2
            ax1.errorbar([x], [v.latency.speedup_vs_reference],
                         yerr=[[v.latency.speedup_vs_reference - ci[0]],
                               [ci[1] - v.latency.speedup_vs_reference]],
                         color="black", capsize=4)
        elif v.latency is not None and v.latency.speedup_not_measurable:
            ax1.text(bar.get_x() + bar.get_width() / 2, 0.05, "not measurable\non this backend",
                     ha="center", va="bottom", fontsize="small")
    ax1.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax1.set_ylabel("speed-up vs FP32 (median latency)")
    ax1.set_title("What it buys" + ("" if p.reference_latency else " (not measured)"))
    ax1.grid(True, alpha=0.3)
    cost = [max(1e-12, 1.0 - (v.min_cosine_similarity if v.min_cosine_similarity is not None
                              else 1.0)) for v in p.variants.values()]
    limits = [max(1e-12, 1.0 - v.tolerance.min_cosine_similarity) for v in p.variants.values()]
    ax2.bar(labels, cost, color=colors)
    ax2.scatter(labels, limits, marker="_", s=600, color="black", label="allowed (1 - min cosine)")
    ax2.set_yscale("log")
    ax2.set_ylabel("1 - worst cosine similarity")
    ax2.set_title("What it costs (lower is better)")
    ax2.legend(fontsize="small")
    ax2.grid(True, alpha=0.3)
    return [charts.add("precision", "Speed-up vs FP32 and accuracy cost per precision", fig)]


def build(results: Results, charts: ChartSink) -> Section | None:
    """The precision section, or ``None`` when the results hold no precision comparison."""
    p = results.precision
    if p is None:
        return None
    return render_partial("precision", "Precision: accuracy vs speed", precision_view(p), precision_chart(p, charts))


def precision_markdown(results: Results) -> str:
    """Markdown of the precision section without charts (``trtcheck precision --format md``)."""
    from trtcheck.report.sections import render_markdown_partial

    if results.precision is None:
        return ""
    return render_markdown_partial("precision", "Precision: accuracy vs speed",
                                   precision_view(results.precision))
