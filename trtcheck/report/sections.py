"""Report sections: one module per section, each building a view-model and its HTML/MD.

A section module (listed in :data:`SECTION_MODULES`, in display order) defines::

    def build(results: Results, charts: ChartSink) -> Section | None

returning ``None`` when the results hold nothing for it. It reads only the results
model, builds its typed view model (a frozen dataclass of :mod:`trtcheck.report.views`)
and renders its two partial templates ``templates/sections/<id>.html.j2`` and
``<id>.md.j2`` with :func:`render_partial`, which hand the view to the template as ``v``.
HTML partials are autoescaped; Markdown partials must pass every untrusted string through
the ``md`` filter (escapes ``|``, ``<``, ``>``, backticks, ``*``, ``_``, brackets and
newlines). Findings are shown with the shared macros of ``templates/macros/``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from trtcheck.report.charts import Chart, ChartSink
from trtcheck.report.templating import render_template
from trtcheck.results import Results

#: section modules under trtcheck.report, in display order
SECTION_MODULES: list[str] = [
    "sec_summary",
    "sec_inspection",
    "sec_bench",
    "sec_engine",
    "sec_precision",
    "sec_serve",
    "sec_advice",
    "sec_tune",
    "sec_imported",
]


@dataclass
class Section:
    """A rendered report section.

    Attributes:
        id: anchor id (letters, digits, ``-``).
        title: heading text.
        html: HTML fragment (already escaped).
        markdown: Markdown fragment (already escaped).
        charts: charts this section shows.
    """

    id: str
    title: str
    html: str
    markdown: str
    charts: list[Chart] = field(default_factory=list)


def render_partial(section_id: str, title: str, view: object,
                   charts: list[Chart] | None = None) -> Section:
    """Render ``sections/<section_id>.html.j2`` and ``.md.j2`` with ``view`` (the
    section's view model, :mod:`trtcheck.report.views`) into a Section.

    Raises:
        jinja2.UndefinedError: a template reads an attribute ``view`` lacks.
    """
    ctx = {"v": view, "charts": charts or [], "title": title, "id": section_id}
    html = render_template(f"sections/{section_id}.html.j2", ctx, markdown=False)
    md = render_template(f"sections/{section_id}.md.j2", ctx, markdown=True)
    return Section(id=section_id, title=title, html=html, markdown=md, charts=charts or [])


def render_markdown_partial(section_id: str, title: str, view: object) -> str:
    """Only the Markdown partial of a section, without charts: what a command prints for
    ``--format md`` (``trtcheck bench``, ``serve``, ``precision``, ``advise``, ``inspect``)."""
    ctx = {"v": view, "charts": [], "title": title, "id": section_id}
    return render_template(f"sections/{section_id}.md.j2", ctx, markdown=True)


def build_sections(results: Results, charts: ChartSink) -> list[Section]:
    """Build every section that has data, in :data:`SECTION_MODULES` order."""
    out: list[Section] = []
    for name in SECTION_MODULES:
        mod = importlib.import_module(f"trtcheck.report.{name}")
        sec = mod.build(results, charts)
        if sec is not None:
            out.append(sec)
    return out
