"""Charts for reports, drawn with matplotlib (Agg backend, no display needed).

Each chart is rendered twice: SVG embedded in the HTML as a ``data:`` URI inside an
``<img>`` (works offline; an ``<img>`` SVG cannot run script, so untrusted labels are
inert) and PNG written beside the Markdown report. Output is deterministic: SVG ids
are salted with a fixed value and date metadata is dropped, so re-rendering from the
same results gives byte-identical files.
"""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass, field
from typing import Any

CHART_NAME_PATTERN = re.compile(
    r"(bench-latency|bench-throughput|engine-precision-mix|engine-layer-times|inspection-ops"
    r"|advice-predicted-vs-measured|precision|serve-waterfall|serve-live-split"
    r"|serve-window-[0-9]+)")
"""Every chart name a report section draws (``charts/<name>.png``). ``report -o DIR
--overwrite`` removes from ``DIR/charts`` only stale PNGs named so, never other files;
:meth:`ChartSink.add` refuses any other name, so a new chart must be listed here."""


def is_trtcheck_chart(filename: str) -> bool:
    """``filename`` (a base name, e.g. ``"bench-latency.png"``) is a chart file trtcheck
    writes, by :data:`CHART_NAME_PATTERN`."""
    stem, dot, ext = filename.rpartition(".")
    return dot == "." and ext == "png" and CHART_NAME_PATTERN.fullmatch(stem) is not None


@dataclass
class Chart:
    """A rendered chart.

    Attributes:
        name: file stem, e.g. ``"bench-latency"`` (letters, digits, ``-``).
        title: caption shown under the chart.
        svg_data_uri: ``data:image/svg+xml;base64,...`` for the HTML ``<img>``.
        png_bytes: PNG for the Markdown report (written to ``charts/<name>.png``).
    """

    name: str
    title: str
    svg_data_uri: str
    png_bytes: bytes

    @property
    def png_relpath(self) -> str:
        """Path of the PNG relative to the report folder."""
        return f"charts/{self.name}.png"


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend with trtcheck's reproducible settings (SVG
    hash salt, text as paths); imported on first use."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "trtcheck"
    plt.rcParams["svg.fonttype"] = "path"
    # mathtext stays on for matplotlib's own number formatters (log axes draw
    # "$\mathdefault{10^{-3}}$"); user text is made literal in :func:`literal_user_text`
    plt.rcParams["text.parse_math"] = True
    plt.rcParams["text.usetex"] = False
    return plt


def _literal(text: str) -> str:
    r"""``text`` escaped so that matplotlib shows it as it is: every ``$`` becomes ``\$``,
    which mathtext never opens on and draws as ``$`` (matplotlib ``Text`` docs, "escape
    dollar signs")."""
    return text.replace("$", r"\$")


def _literal_formatter(inner: Any) -> Any:
    """A tick formatter that draws ``inner``'s labels literally (``inner`` is a
    ``matplotlib.ticker.Formatter``; the result is one as well)."""
    from matplotlib.ticker import Formatter

    class _Literal(Formatter):
        def __init__(self) -> None:
            self.inner = inner

        def set_axis(self, axis: Any) -> None:
            self.axis = axis
            self.inner.set_axis(axis)

        def __call__(self, x: float, pos: int | None = None) -> str:
            return _literal(str(self.inner(x, pos)))

        def format_ticks(self, values: Any) -> list[str]:
            return [_literal(str(t)) for t in self.inner.format_ticks(values)]

        def get_offset(self) -> str:
            return _literal(str(self.inner.get_offset()))

        def format_data(self, value: float) -> str:
            return _literal(str(self.inner.format_data(value)))

        def format_data_short(self, value: float) -> str:
            return _literal(str(self.inner.format_data_short(value)))

    return _Literal()


def literal_user_text(fig: Any) -> None:
    r"""Make every text in ``fig`` that can hold user text (model, layer, tensor, trace
    and load names) show literally: ``$\frac$`` is drawn as typed, never parsed as TeX math
    (which raises on bad math). Titles, axis labels, legend entries and annotations are
    escaped in place; tick formatters that draw given strings (fixed labels, category
    names, functions) are wrapped. matplotlib's numeric formatters (``ScalarFormatter``,
    the ``LogFormatter`` family) keep their mathtext, so log axes show powers of ten."""
    from matplotlib.text import Text
    from matplotlib.ticker import LogFormatter, ScalarFormatter

    for text in fig.findobj(Text):
        text.set_text(_literal(text.get_text()))
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for get, set_ in ((axis.get_major_formatter, axis.set_major_formatter),
                              (axis.get_minor_formatter, axis.set_minor_formatter)):
                fmt = get()
                if not isinstance(fmt, (LogFormatter, ScalarFormatter)):
                    set_(_literal_formatter(fmt))


def new_figure(width_in: float = 7.0, height_in: float = 3.6) -> tuple[Any, Any]:
    """A fresh ``(figure, axes)`` pair with the report's style."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(width_in, height_in), dpi=100)
    ax.grid(True, alpha=0.3)
    return fig, ax


#: free space above the highest point of a zero-based chart, as a fraction of that point
#: (a marker drawn at the top would otherwise touch or cross the frame)
HEADROOM_FRACTION = 0.10


def zero_based_with_headroom(ax: Any, fraction: float = HEADROOM_FRACTION) -> None:
    """Start ``ax``'s y axis at 0 and end it at least ``(1 + fraction)`` times above its
    highest finite data point (never lower than matplotlib's own top), so levels are
    compared on a zero-based axis and no marker sits on the top edge. Call it after
    plotting; NaN points (missing values) are ignored."""
    import math

    top = ax.dataLim.y1 if ax.has_data() and math.isfinite(ax.dataLim.y1) else 0.0
    ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], (1.0 + fraction) * top))


@dataclass
class ChartSink:
    """Collects charts while sections are built."""

    charts: list[Chart] = field(default_factory=list)

    def add(self, name: str, title: str, fig: Any) -> Chart:
        """Render ``fig`` (a matplotlib figure) to SVG and PNG, close it, and keep it.

        Raises:
            ValueError: ``name`` is not matched by :data:`CHART_NAME_PATTERN` (a
                programming error: list the new chart there).
        """
        plt = pyplot()
        if CHART_NAME_PATTERN.fullmatch(name) is None:
            plt.close(fig)
            raise ValueError(f"chart name {name!r} is not in CHART_NAME_PATTERN")
        literal_user_text(fig)
        fig.tight_layout()
        svg = io.BytesIO()
        fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
        png = io.BytesIO()
        fig.savefig(png, format="png", metadata={"Software": None})
        plt.close(fig)
        chart = Chart(name=name, title=title,
                      svg_data_uri="data:image/svg+xml;base64,"
                      + base64.b64encode(svg.getvalue()).decode("ascii"),
                      png_bytes=png.getvalue())
        self.charts.append(chart)
        return chart
