"""Progress lines of long measurements, passed to a callback (the commands log them)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

PROGRESS_INTERVAL_S = 5.0
"""At most one throttled progress line per this many seconds (:func:`throttled`)."""


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
