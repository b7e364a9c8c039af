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


def build(results: Results, charts: ChartSink) -> Section | None:
    """Always present: environment fingerprint and headline numbers."""
    env = results.environment
    findings: list[Any] = []
    if results.inspection is not None:
        findings += [f for f in results.inspection.lints if f.severity != "info"]
    for run in results.bench:
        findings += [w for b in run.batches for w in b.warnings if w.severity != "info"]
    engine = getattr(results, "engine", None)
    if engine is not None:
        findings += [f for f in engine.lints if f.severity != "info"]
    view = {
        "env": env,
        "gpus": ", ".join(f"{g.name} (driver {g.driver_version or '?'})" for g in env.gpus)
        or "none visible",
        "packages": sorted(env.packages.items()),
        "headlines": _headlines(results),
        "finding_count": len(findings),
        "command": " ".join(results.tool.command),
    }
    return render_partial("summary", "Summary", view)
