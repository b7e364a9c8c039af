"""Report section: a ``trtcheck tune`` search (``report --from tune.json``)."""

from __future__ import annotations

from trtcheck.report.charts import ChartSink
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.tune_text import tune_lines
from trtcheck.report.views import TuneView
from trtcheck.results import Results
from trtcheck.results.tune import TuneResult


def tune_view(t: TuneResult) -> TuneView:
    """The view of the tune section."""
    lines = tune_lines(t)
    return TuneView(headline=lines[0], lines=lines[1:])


def build(results: Results, charts: ChartSink) -> Section | None:
    """The tune section, or ``None`` when the results hold no tune search."""
    t = getattr(results, "tune", None)
    if t is None:
        return None
    return render_partial("tune", "Tune: calibrate, predict, confirm", tune_view(t))
