"""Arrival-time traces: one reader for ``serve --load trace:FILE`` and
``advise --arrival trace:FILE``, so a trace means the same thing to both.

Format: a text file with one arrival time in seconds per line (the first comma- or
whitespace-separated field; ``#`` starts a comment), or a JSON list of numbers. Times are
sorted and shifted so the first arrival is at 0.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from trtcheck.errors import InputError

_HINT = "one arrival time in seconds per line (or a JSON list of numbers)"


def read_arrival_times(path: str | Path, min_arrivals: int = 1) -> np.ndarray:
    """Arrival offsets in seconds, sorted, starting at 0; shape ``[n]``, float64.

    Args:
        path: the trace file.
        min_arrivals: fewer arrivals than this is an error (>= 1).

    Raises:
        InputError: missing, binary or unreadable file; a non-number (with its line);
            a non-finite time; fewer than ``min_arrivals`` arrivals.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"trace file not found: {p}", "give a file of arrival times in seconds")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = "not a text file" if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise InputError(f"cannot read the trace file {p}: {reason}", _HINT) from None
    vals: list[float] = []
    if text.lstrip().startswith("["):
        try:
            vals = [float(v) for v in json.loads(text)]
        except (ValueError, TypeError):
            raise InputError(f"{p} is not a JSON list of numbers", _HINT) from None
    else:
        for ln, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            field = line.replace(",", " ").split()[0]
            try:
                vals.append(float(field))
            except ValueError:
                raise InputError(f"{p}:{ln}: {field!r} is not a time in seconds",
                                 _HINT) from None
    if any(not math.isfinite(v) for v in vals):
        raise InputError(f"{p} holds a non-finite arrival time", _HINT)
    if len(vals) < max(1, min_arrivals):
        raise InputError(f"the trace {p} has {len(vals)} arrival(s); need at least "
                         f"{max(1, min_arrivals)}", _HINT)
    arr = np.sort(np.asarray(vals, dtype=np.float64))
    return arr - arr[0]
