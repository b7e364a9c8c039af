"""Reading results files of earlier major schema versions: each change that made a new
major version is undone on load, so a file written by an earlier trtcheck reads as the
current model (:func:`migrate`, called by :func:`trtcheck.results.model.results_from_json`).

Schema 1.x -> 2.0: the batching window moved from milliseconds to microseconds, the unit
of Triton's ``max_queue_delay_microseconds`` and of the dispatch policy
(:class:`trtcheck.policy.BatchingPolicy`):

* ``serve.settings.windows_ms`` -> ``serve.settings.windows_us``
* ``serve.configs[].window_ms`` -> ``serve.configs[].window_us``
* ``advice.formulas.break_even_window_ms_at_max_batch`` ->
  ``advice.formulas.break_even_window_us_at_max_batch``
* ``advice.serve_predictions[].window_ms`` -> ``advice.serve_predictions[].window_us``

A migration works on the parsed JSON (plain dicts and lists) before validation. It renames
a field only where the new one is absent and converts only numbers; anything else is left
for validation to report (a hand-edited file gets the same one-line error as today).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trtcheck.units import ms_to_us

#: ``(path of the record holding the field, old name, new name, conversion)``; a path part
#: ending in ``[]`` is a list of records. The window is a setting (rounded to the
#: nanosecond, as ``--window-ms`` is); the break-even window is computed (kept exact).
_WINDOW_FIELDS_1X: tuple[tuple[str, str, str, Callable[[float], float]], ...] = (
    ("serve.settings", "windows_ms", "windows_us", ms_to_us),
    ("serve.configs[]", "window_ms", "window_us", ms_to_us),
    ("advice.formulas", "break_even_window_ms_at_max_batch",
     "break_even_window_us_at_max_batch", lambda ms: ms_to_us(ms, None)),
    ("advice.serve_predictions[]", "window_ms", "window_us", ms_to_us),
)


def _records(node: Any, path: str) -> list[dict[str, Any]]:
    """The dicts that ``path`` (``"a.b[]"``) reaches from ``node`` (none where a part is
    missing or of another type)."""
    nodes = [node]
    for part in path.split("."):
        many = part.endswith("[]")
        name = part[:-2] if many else part
        nxt: list[Any] = []
        for n in nodes:
            child = n.get(name) if isinstance(n, dict) else None
            if many:
                nxt.extend(child if isinstance(child, list) else [])
            elif child is not None:
                nxt.append(child)
        nodes = nxt
    return [n for n in nodes if isinstance(n, dict)]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _convert(value: Any, convert: Callable[[float], float]) -> Any:
    """A number or a list of numbers converted; anything else as it is."""
    if _is_number(value):
        return convert(value)
    if isinstance(value, list) and all(_is_number(v) for v in value):
        return [convert(v) for v in value]
    return value


def _from_1(data: dict[str, Any]) -> None:
    """Schema 1.x -> 2.0 in place: the window fields from ms to us."""
    for path, old, new, convert in _WINDOW_FIELDS_1X:
        for rec in _records(data, path):
            if old in rec and new not in rec:
                rec[new] = _convert(rec.pop(old), convert)


def _from_2(data: dict[str, Any]) -> None:
    """Schema 2.x -> 3.0: 3.0 added the ``tune`` section and the ``kind`` value
    ``"tune"``; a 2.x document is a 3.0 one without a tune search (``tune: null``, as
    3.0 writes it)."""
    data.setdefault("tune", None)


#: major version -> the step that brings a document of it to the next major version
_STEPS: dict[int, Callable[[dict[str, Any]], None]] = {1: _from_1, 2: _from_2}


def migrate(data: dict[str, Any], major: int, current_major: int) -> dict[str, Any]:
    """Bring a parsed results document of schema ``major``.x to ``current_major``.x, in
    place (also returned).

    Args:
        data: the parsed JSON document (dicts and lists as :func:`json.loads` gives).
        major: the document's major schema version.
        current_major: the major version of this trtcheck's model.

    Raises:
        KeyError: no migration from ``major`` (an older major version than any this
            trtcheck can read; the caller turns it into a one-line error).
    """
    for m in range(major, current_major):
        _STEPS[m](data)
    return data


def can_migrate(major: int, current_major: int) -> bool:
    """Whether a document of schema ``major``.x can be brought to ``current_major``.x."""
    return major <= current_major and all(m in _STEPS for m in range(major, current_major))


def migrate_section(name: str, record: dict[str, Any], major: int,
                    current_major: int) -> dict[str, Any]:
    """Bring one section of a results document saved on its own (``"serve"``: a
    :class:`~trtcheck.results.serve.ServeRun` dumped by a benchmark) from schema
    ``major``.x to ``current_major``.x, in place (also returned). A record already in the
    current form is left as it is (a field is renamed only where the new one is absent).
    """
    migrated: dict[str, Any] = migrate({name: record}, major, current_major)[name]
    return migrated
