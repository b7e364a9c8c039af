"""Report section: summary (headline numbers, findings count) and where it was measured."""

from __future__ import annotations

from typing import Any

from trtcheck.report.charts import ChartSink
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.views import HeadlineRow, SummaryView
from trtcheck.results import Results


def _headlines(results: Results) -> list[HeadlineRow]:
    rows: list[HeadlineRow] = []
    for run in results.bench:
        if not run.batches:
            continue
        first = run.batches[0]
        best = max(run.batches, key=lambda b: b.throughput_samples_per_s)
        rows.append(HeadlineRow(
            label=run.label,
            where=f"{run.backend.name} {run.backend.version} on {run.backend.device}",
            first_batch_size=first.batch_size, first_median_ms=first.stats.median_ms,
            first_p99_ms=first.stats.p99_ms,
            best_batch_size=best.batch_size, best_samples_per_s=best.throughput_samples_per_s,
            best_gain_vs_batch1=best.throughput_gain_vs_batch1,
        ))
    return rows


def shown_findings(results: Results) -> list[Any]:
    """Every finding box the report's sections show, as they show them: inspection and
    engine lints, bench findings grouped per code and run (warnings, then notes; with
    the enqueue-bound finding, :func:`trtcheck.analyze.derived.verdict.bench_findings`),
    precision findings per variant, serving warnings grouped per code, advice pitfalls.

    Returns:
        the findings (``trtcheck.results.Finding``; one per group where the report
        groups them), any severity.
    """
    from trtcheck.analyze.derived import bench_findings
    from trtcheck.report.findings_view import device_is_gpu, group_findings
    from trtcheck.results import Finding

    def boxes(found: list[Any], gpu: bool) -> list[Any]:
        return [Finding(code=g.code, severity=g.severity, message=g.message,
                        remedy=g.remedy, where=g.where or None)
                for g in group_findings(found, gpu)]

    out: list[Any] = []
    if results.inspection is not None:
        out += list(results.inspection.lints)
    for run in results.bench:
        found = bench_findings(run)
        gpu = device_is_gpu(run.backend.device)
        out += boxes([w for w in found if w.severity != "info"], gpu)
        out += boxes([w for w in found if w.severity == "info"], gpu)
    engine = getattr(results, "engine", None)
    if engine is not None:
        out += list(engine.lints)
    precision = getattr(results, "precision", None)
    if precision is not None:
        for v in precision.variants.values():
            out += list(v.findings)
    serve = getattr(results, "serve", None)
    if serve is not None:
        out += boxes([w for c in serve.configs for w in c.warnings] + list(serve.warnings),
                     device_is_gpu(serve.backend.device))
    advice = getattr(results, "advice", None)
    if advice is not None:
        out += list(advice.pitfalls)
    return out


def count_sentence(findings: list[Any]) -> str:
    """``"1 error, 9 warnings and 2 notes in this report."`` (``"No findings ..."``)."""
    counts = {"error": 0, "warning": 0, "info": 0}
    for f in findings:
        counts[f.severity if f.severity in counts else "warning"] += 1
    words = [("error", "errors"), ("warning", "warnings"), ("note", "notes")]
    parts = [f"{n} {one if n == 1 else many}" for n, (one, many) in
             zip(counts.values(), words) if n]
    if not parts:
        return "No findings in this report."
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return text + " in this report."


#: a verdict reason's effect in the summary sentence (singular, plural)
_EFFECT_WORDS = {"not_ready": ("reason it is not ready", "reasons it is not ready"),
                 "cannot_tell": ("reason it cannot tell", "reasons it cannot tell"),
                 "warning": ("warning", "warnings")}


def finding_sentence(results: Results) -> str:
    """The summary's count of findings (:func:`count_sentence` of the finding boxes the
    sections show). When the sections show none but the verdict lists reasons that
    decide something (not ready, cannot tell, warning: a tune pick measured outside its
    interval has no finding box), the sentence names those instead of "No findings"."""
    shown = shown_findings(results)
    verdict = results.verdict
    reasons = [r for r in (verdict.reasons if verdict is not None else [])
               if r.effect in _EFFECT_WORDS]
    if shown or not reasons:
        return count_sentence(shown)
    parts = []
    for effect, (one, many) in _EFFECT_WORDS.items():
        n = sum(1 for r in reasons if r.effect == effect)
        if n:
            parts.append(f"{n} {one if n == 1 else many}")
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    titles = "; ".join(r.title for r in reasons)
    return (f"The verdict above lists {text} ({titles}); the sections below show no other "
            "findings.")


def summary_view(results: Results) -> SummaryView:
    """The view of the summary section (always present)."""
    env = results.environment
    return SummaryView(
        env=env,
        gpus=", ".join(f"{g.name} (driver {g.driver_version or '?'})" for g in env.gpus)
        or "none visible",
        packages=sorted(env.packages.items()),
        headlines=_headlines(results),
        finding_sentence=finding_sentence(results),
        command=" ".join(results.tool.command),
    )


def build(results: Results, charts: ChartSink) -> Section | None:
    """Always present: environment fingerprint and headline numbers."""
    return render_partial("summary", "Summary", summary_view(results))
