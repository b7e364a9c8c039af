"""Report section: a ``trtcheck tune`` search (``report --from tune.json``); its view is
:func:`trtcheck.report.tune_text.tune_view` (shared with ``tune --format md``)."""

from __future__ import annotations

from trtcheck.report.charts import ChartSink
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.tune_text import TITLE, tune_view
from trtcheck.results import Results

__all__ = ["TITLE", "build", "tune_view"]


def build(results: Results, charts: ChartSink) -> Section | None:
    """The tune section, or ``None`` when the results hold no tune search."""
    t = getattr(results, "tune", None)
    if t is None:
        return None
    return render_partial("tune", TITLE, tune_view(t))
