"""Report section: measurements read from another tool's file (a perf_analyzer CSV, a
Triton statistics dump), shown as recorded, with the source and what it lacks."""

from __future__ import annotations

from trtcheck.report.charts import ChartSink
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.views import ImportedView
from trtcheck.results import Results
from trtcheck.results.imported import ImportedRun

SOURCE_LABELS = {"perf_analyzer-csv": "perf_analyzer CSV",
                 "triton-stats": "Triton statistics (GET /v2/models/NAME/stats)"}
"""The source of an :class:`ImportedRun` in words."""


def imported_view(run: ImportedRun) -> ImportedView:
    """The view of the imported-measurements section."""
    column = {"concurrency": "concurrency", "request-rate": "request rate req/s"}.get(
        run.mode or "", "")
    return ImportedView(run=run, source_label=SOURCE_LABELS[run.source], load_column=column)


def build(results: Results, charts: ChartSink) -> Section | None:
    """The section, or ``None`` when the results hold no imported measurements."""
    run = getattr(results, "imported", None)
    if run is None:
        return None
    return render_partial("imported", f"Imported: {SOURCE_LABELS[run.source]}",
                          imported_view(run))
