"""Jinja2 environments for the report templates.

Templates live in the top-level ``templates/`` folder of a source checkout and are
shipped inside the wheel as ``trtcheck/templates`` (hatchling ``force-include``);
:func:`templates_dir` finds either.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from trtcheck.errors import TrtcheckError
from trtcheck.units import human_bytes, sig, terminal_safe

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|<>#&])")


def md_escape(value: Any) -> str:
    """Escape a value for a Markdown table cell or paragraph.

    Backslash-escapes Markdown punctuation, turns ``<``/``>``/``&`` into entities so no raw
    HTML reaches the renderer and names holding entities show literally, and folds
    newlines into spaces; other control characters show as escapes (``\\x1b``,
    :func:`trtcheck.units.terminal_safe`).
    """
    text = "" if value is None else str(value)
    text = terminal_safe(text.replace("\r", " ").replace("\n", " "))
    text = _MD_SPECIAL.sub(lambda m: {"<": "&lt;", ">": "&gt;", "&": "&amp;"}.get(m.group(1),
                                                                    "\\" + m.group(1)), text)
    return text


_CODE_SPAN = re.compile(r"`([^`\r\n]+)`")


def md_prose(value: Any) -> str:
    """Escape prose written by trtcheck (a message, a remedy) for Markdown, keeping its
    code spans: each balanced `` `...` `` on one line stays a code span (Markdown shows
    its content literally; ``|`` becomes ``\\|`` so a table cell stays one cell), and
    the text between spans passes :func:`md_escape`. Untrusted names inside a span cannot
    form markup or HTML there; an unbalanced backtick is escaped like any other."""
    text = "" if value is None else str(value)
    out, last = [], 0
    for m in _CODE_SPAN.finditer(text):
        out.append(md_escape(text[last:m.start()]))
        code = terminal_safe(m.group(1)).replace("|", "\\|")
        out.append(f"`{code}`")
        last = m.end()
    out.append(md_escape(text[last:]))
    return "".join(out)


def templates_dir() -> Path:
    """Folder holding ``report.html.j2`` and ``sections/``.

    Raises:
        TrtcheckError: (exit 4) neither the installed nor the source-checkout folder exists.
    """
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "templates", here.parent / "templates"):
        if (cand / "report.html.j2").is_file():
            return cand
    raise TrtcheckError("report templates not found (broken installation)",
                        "reinstall trtcheck from its checkout or wheel")


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value != value:  # NaN
            return "nan"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}" if abs(value) < 1e-3 and value != 0 else f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


@functools.lru_cache(maxsize=2)
def environment(markdown: bool) -> Any:
    """The Jinja2 environment (autoescape on for HTML, the ``md`` filter for Markdown)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=not markdown,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md_escape
    env.filters["md_prose"] = md_prose
    env.filters["num"] = _fmt
    env.filters["sig"] = sig
    env.filters["bytes"] = human_bytes
    return env


def render_template(name: str, context: dict[str, Any], markdown: bool) -> str:
    """Render template ``name`` (relative to :func:`templates_dir`)."""
    return environment(markdown).get_template(name).render(**context)
