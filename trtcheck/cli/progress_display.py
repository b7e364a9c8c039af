"""The command line's progress display: a bar with an estimated time left on a terminal,
plain low-rate lines elsewhere (CI logs, pipes), nothing with ``-q``.

:class:`CliProgress` is a progress callback as :mod:`trtcheck.measure.progress` defines it.
Everything goes to stderr, never to stdout (machine formats stay clean there).

* stderr is a terminal: :meth:`~CliProgress.begin` opens a ``tqdm`` bar (steps done of
  the total, elapsed time, time left); :meth:`~CliProgress.step` advances it, prints the
  step's line above the bar and shows it, shortened, after the bar; status lines print
  above the bar.
* stderr is not a terminal: each line is one ``trtcheck`` log line; finished steps are
  throttled to one line per :data:`~trtcheck.measure.progress.PROGRESS_INTERVAL_S`
  seconds (the first and the last always), each followed by the time left estimated from
  the steps so far (``(about 40 s left)``).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from trtcheck.cli.common import log, progress_enabled
from trtcheck.measure.progress import PROGRESS_INTERVAL_S


def stderr_is_terminal() -> bool:
    """Whether stderr is an interactive terminal (and not ``TERM=dumb``)."""
    import os

    try:
        return sys.stderr.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):  # closed or replaced stderr
        return False


def format_seconds(seconds: float) -> str:
    """``seconds`` (>= 0) as ``"42 s"``, ``"3 min 05 s"`` or ``"1 h 02 min"``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class CliProgress:
    """Progress of one command on stderr.

    Args:
        terminal: draw a bar (default: :func:`stderr_is_terminal`).
        stream: where the bar goes (default: ``sys.stderr``); plain lines always go
            through :func:`trtcheck.cli.common.log`.
        min_interval_s: off a terminal, at most one step line per this many seconds.
        clock: seconds, monotonic (for the time left).
    """

    def __init__(self, terminal: bool | None = None, stream: IO[str] | None = None,
                 min_interval_s: float = PROGRESS_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.terminal = stderr_is_terminal() if terminal is None else terminal
        self.stream = stream
        self.min_interval_s = min_interval_s
        self.clock = clock
        self._bar: Any = None
        self._total = 0
        self._done = 0
        self._what = ""
        self._started = 0.0
        self._last_line = -math.inf

    # a plain status line
    def __call__(self, line: str) -> None:
        if not progress_enabled():
            return
        log(line)  # above the bar when one is open (write_above_bar)

    def begin(self, total: int, unit: str, what: str) -> None:
        """Start counting ``total`` steps of ``unit`` for ``what`` (ends a previous bar)."""
        self.close()
        self._total, self._done, self._what = max(0, int(total)), 0, what
        self._started = self.clock()
        self._last_line = -math.inf
        if self.terminal and progress_enabled() and self._total > 0:
            from tqdm import tqdm

            self._bar = tqdm(total=self._total, desc=what, unit=f" {unit}",
                             file=self._stream(), dynamic_ncols=True, leave=True,
                             bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}"
                                        " [{elapsed} elapsed, {remaining} left] {postfix}")
            _OPEN_BARS.append(self._bar)

    def step(self, line: str, steps: int = 1) -> None:
        """``steps`` steps done (or skipped), summarised by ``line``."""
        self._done += steps
        if not progress_enabled():
            return
        if self._bar is not None:
            log(line)  # above the bar (write_above_bar)
            self._bar.set_postfix_str(_short(line), refresh=False)
            self._bar.update(steps)
            if self._done >= self._total:
                self.close()
            return
        now = self.clock()
        last = self._total > 0 and self._done >= self._total
        if now - self._last_line < self.min_interval_s and not last:
            return
        self._last_line = now
        log(f"{line}{self._time_left()}")

    def close(self) -> None:
        """End the current bar (if any)."""
        if self._bar is not None:
            if self._bar in _OPEN_BARS:
                _OPEN_BARS.remove(self._bar)
            self._bar.close()
            self._bar = None

    def _time_left(self) -> str:
        if not 0 < self._done < self._total:
            return ""
        per_step = (self.clock() - self._started) / self._done
        return f" (about {format_seconds(per_step * (self._total - self._done))} left)"

    def _stream(self) -> IO[str]:
        return self.stream if self.stream is not None else sys.stderr


#: the bar on screen now, if any (one at a time: a new one ends the previous)
_OPEN_BARS: list[Any] = []


def write_above_bar(text: str) -> bool:
    """Print ``text`` above the progress bar on screen, if one is (the bar is redrawn
    below it); ``False`` when no bar is open (the caller prints it)."""
    if not _OPEN_BARS:
        return False
    bar = _OPEN_BARS[-1]
    bar.write(text, file=bar.fp)
    return True


def _short(line: str, width: int = 60) -> str:
    line = " ".join(line.split())
    return line if len(line) <= width else line[: width - 3] + "..."


def cli_progress() -> CliProgress | None:
    """The command's progress display, or ``None`` with ``-q`` (no progress)."""
    return CliProgress() if progress_enabled() else None
