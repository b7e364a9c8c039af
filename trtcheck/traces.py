"""Arrival-time traces: one reader for ``serve --load trace:FILE`` and
``advise --arrival trace:FILE``, so a trace means the same thing to both.

Format: a text file with one arrival time in seconds per line (the first comma- or
whitespace-separated field; ``#`` starts a comment), or a JSON list of numbers. Times are
sorted and shifted so the first arrival is at 0.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from trtcheck.errors import InputError
from trtcheck.units import sig

MAX_TRACE_BYTES = 1 << 30
"""Largest trace file read (1 GiB: about 60 million arrival times as text)."""
MAX_TRACE_SPAN_S = 1e6
"""Longest trace accepted, first to last arrival (about 11.6 days): longer is a unit
mistake (milliseconds or epoch times given as seconds) and no run replays it."""

_HINT = "one arrival time in seconds per line (or a JSON list of numbers)"


def read_arrival_times(path: str | Path, min_arrivals: int = 1) -> np.ndarray:
    """Arrival offsets in seconds, sorted, starting at 0; shape ``[n]``, float64.

    Args:
        path: the trace file.
        min_arrivals: fewer arrivals than this is an error (>= 1).

    Raises:
        InputError: missing, not a regular file, larger than :data:`MAX_TRACE_BYTES`,
            binary or unreadable; a non-number (with its line); a non-finite time; a
            span over :data:`MAX_TRACE_SPAN_S`; fewer than ``min_arrivals`` arrivals.
    """
    from trtcheck.safe_io import read_input_text

    p = Path(path)
    text = read_input_text(p, "trace file", MAX_TRACE_BYTES,
                           "give a file of arrival times in seconds")
    return arrival_times_from_text(text, str(p), min_arrivals)


def arrival_times_from_text(text: str, where: str = "<trace>",
                            min_arrivals: int = 1) -> np.ndarray:
    """:func:`read_arrival_times` for a trace already read (``where`` names it in
    messages); same result and errors, no file access."""
    from trtcheck.safe_io import parse_json_text

    p = where
    vals: list[float] = []
    if text.lstrip().startswith("["):
        doc = parse_json_text(text, str(p), _HINT)
        if not isinstance(doc, list) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in doc):
            raise InputError(f"{p} is not a JSON list of numbers", _HINT)
        try:
            vals = [float(v) for v in doc]
        except OverflowError:  # an integer beyond the float range
            raise InputError(f"{p} holds an arrival time beyond the float range", _HINT) \
                from None
    else:
        for ln, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.replace(",", " ").split()
            if not fields:  # separators only
                continue
            field = fields[0]
            try:
                vals.append(float(field))
            except (ValueError, OverflowError):
                raise InputError(f"{p}:{ln}: {field!r} is not a time in seconds",
                                 _HINT) from None
    if any(not math.isfinite(v) for v in vals):
        raise InputError(f"{p} holds a non-finite arrival time", _HINT)
    if vals and max(vals) - min(vals) > MAX_TRACE_SPAN_S:
        raise InputError(f"the trace {p} spans {sig(max(vals) - min(vals))} s, more than "
                         f"{MAX_TRACE_SPAN_S:.0e} s (times are in seconds)", _HINT)
    if len(vals) < max(1, min_arrivals):
        raise InputError(f"the trace {p} has {len(vals)} arrival(s); need at least "
                         f"{max(1, min_arrivals)}", _HINT)
    arr = np.sort(np.asarray(vals, dtype=np.float64))
    return arr - arr[0]
