"""Progress of long measurements, passed to a callback (the commands display it).

A progress callback is any ``callback(line: str)``: it gets one human-readable line per
event. A callback may also count steps, for a progress bar with an estimated time left:
:func:`begin_steps` announces how many steps a measurement has (batch sizes of a bench
sweep, runs of a serving sweep, variants of a precision check) and :func:`step_done` marks
one finished. On a plain callable (no ``begin``/``step`` methods) :func:`begin_steps` does
nothing and :func:`step_done` passes the line on, so a function such as ``print`` or a
logger's ``info`` works as a callback. The command line's display is
:class:`trtcheck.cli.progress_display.CliProgress`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

PROGRESS_INTERVAL_S = 5.0
"""At most one throttled progress line per this many seconds (:func:`throttled`)."""

ProgressCallback = Callable[[str], None]
"""``callback(line)``; optionally with ``begin(total, unit, what)`` and ``step(line)``."""


def throttled(emit: Callable[[str], None], min_interval_s: float = PROGRESS_INTERVAL_S,
              clock: Callable[[], float] = time.monotonic) -> Callable[[str], None]:
    """A progress callback that passes at most one line per ``min_interval_s`` seconds to
    ``emit`` (the first line always; lines in between are dropped)."""
    last = [-math.inf]

    def call(line: str) -> None:
        now = clock()
        if now - last[0] >= min_interval_s:
            last[0] = now
            emit(line)

    return call


def begin_steps(progress: ProgressCallback | None, total: int, unit: str, what: str) -> None:
    """Announce ``total`` (>= 0) steps of ``unit`` (e.g. ``"batch size"``) for the
    measurement ``what`` (e.g. ``"bench"``) to a step-counting callback; nothing for a
    plain callable or ``None``."""
    begin = getattr(progress, "begin", None)
    if begin is not None:
        begin(int(total), unit, what)


def step_done(progress: ProgressCallback | None, line: str, steps: int = 1) -> None:
    """``steps`` steps finished (or skipped), summarised by ``line``: a step-counting
    callback advances by ``steps``, a plain callable gets ``line``; ``None`` is ignored."""
    if progress is None:
        return
    step = getattr(progress, "step", None)
    if step is None:
        progress(line)
    else:
        step(line, steps)
