"""Report section: summary (headline numbers, findings count) and where it was measured."""

from __future__ import annotations

from typing import Any

from trtcheck.report.charts import ChartSink
from trtcheck.report.sections import Section, render_partial
from trtcheck.results import Results


def _headlines(results: Results) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for run in results.bench:
        if not run.batches:
            continue
        first = run.batches[0]
        best = max(run.batches, key=lambda b: b.throughput_samples_per_s)
        rows.append({
            "label": run.label,
            "where": f"{run.backend.name} {run.backend.version} on {run.backend.device}",
            "first_batch": first.batch_size, "first_median": first.stats.median_ms,
            "first_p99": first.stats.p99_ms,
            "best_batch": best.batch_size, "best_sps": best.throughput_samples_per_s,
            "gain": best.throughput_gain_vs_batch1,
        })
    return rows


def shown_findings(results: Results) -> list[Any]:
    """Every finding the report's sections show, as they show them: inspection and engine
    lints, bench warnings (with the enqueue-bound finding judged at report time; notes
    deduplicated per run as the bench section lists them), precision findings per variant,
    serving warnings (per configuration and run-level) and advice pitfalls.

    Returns:
        the findings (``trtcheck.results.Finding``), any severity.
    """
    from trtcheck.analyze.engine_timing import enqueue_bound_finding

    out: list[Any] = []
    if results.inspection is not None:
        out += list(results.inspection.lints)
    for run in results.bench:
        found = [w for b in run.batches for w in b.warnings]
        for b in run.batches:
            extra = enqueue_bound_finding(b)
            if extra is not None and all(w.code != extra.code for w in b.warnings):
                found.append(extra)
        out += [w for w in found if w.severity != "info"]
        seen: set[tuple[str, str, str]] = set()
        for w in found:  # the bench section lists each note once
            key = (w.code, w.message.split(" samples")[0] if w.code == "p99-not-certified"
                   else w.message, w.remedy or "")
            if w.severity == "info" and key not in seen:
                seen.add(key)
                out.append(w)
    engine = getattr(results, "engine", None)
    if engine is not None:
        out += list(engine.lints)
    precision = getattr(results, "precision", None)
    if precision is not None:
        for v in precision.variants.values():
            out += list(v.findings)
    serve = getattr(results, "serve", None)
    if serve is not None:
        out += [w for c in serve.configs for w in c.warnings] + list(serve.warnings)
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


def build(results: Results, charts: ChartSink) -> Section | None:
    """Always present: environment fingerprint and headline numbers."""
    env = results.environment
    findings = shown_findings(results)
    view = {
        "env": env,
        "gpus": ", ".join(f"{g.name} (driver {g.driver_version or '?'})" for g in env.gpus)
        or "none visible",
        "packages": sorted(env.packages.items()),
        "headlines": _headlines(results),
        "finding_count": len(findings),
        "finding_sentence": count_sentence(findings),
        "command": " ".join(results.tool.command),
    }
    return render_partial("summary", "Summary", view)
