"""Stopping a measurement early without losing what was measured.

Ctrl-C raises :class:`KeyboardInterrupt` in the main thread; :func:`sigterm_as_interrupt`
makes SIGTERM (what ``kill``, ``timeout`` and CI runners send) do the same inside a block,
so one ``except KeyboardInterrupt`` keeps the finished part of a sweep, and the command
writes it as a results file marked incomplete (``Results.incomplete``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

_last_signal: list[str] = []


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`KeyboardInterrupt` as SIGINT does.

    Only in the main thread (Python delivers signals there); elsewhere a no-op. The
    previous handler is restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: object) -> None:
        _last_signal.append(signal.Signals(signum).name)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def interrupt_name(exc: BaseException) -> str:
    """``"SIGTERM"`` for an interrupt raised by :func:`sigterm_as_interrupt`, else
    ``"SIGINT"`` (Ctrl-C)."""
    return "SIGTERM" if exc.args and exc.args[0] == "SIGTERM" else "SIGINT"
