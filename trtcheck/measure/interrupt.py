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
from collections.abc import Callable, Iterator

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


class HeldInterrupts:
    """What :func:`interrupts_held` caught: ``names`` of the signals that arrived
    (``"SIGINT"``, ``"SIGTERM"``), in order."""

    def __init__(self) -> None:
        self.names: list[str] = []

    @property
    def first(self) -> str | None:
        """The first signal held, or ``None``."""
        return self.names[0] if self.names else None


@contextlib.contextmanager
def interrupts_held(on_signal: Callable[[str], None] | None = None
                    ) -> Iterator[HeldInterrupts]:
    """Within the block, SIGINT and SIGTERM do not interrupt: they are recorded
    (:class:`HeldInterrupts`) and ``on_signal(name)`` is called for the first one. For a
    bounded step that puts something of the user's back (the model's original
    configuration on their server) after an interrupt: a second Ctrl-C would otherwise
    leave the server on a configuration the user never chose. The caller bounds the
    step's time and decides what a held signal means afterwards (nothing is re-raised).

    Only in the main thread (where Python runs signal handlers); elsewhere a no-op. The
    previous handlers are restored on exit.
    """
    held = HeldInterrupts()
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def handler(signum: int, _frame: object) -> None:
        name = signal.Signals(signum).name
        held.names.append(name)
        if len(held.names) == 1 and on_signal is not None:
            on_signal(name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield held
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM wait: the first one that arrived is raised
    again (``signal.raise_signal``) once the block is done, to the handlers in place
    before it, so it interrupts as it would have, just after the block. For a step an
    interrupt must not cut in half: starting a spawned process, whose parent writes the
    child's pickled start data through a pipe (cut short, the child prints an
    ``UnpicklingError`` traceback on the user's terminal). Keep the block short.

    Only in the main thread; elsewhere a no-op (:func:`interrupts_held`)."""
    with interrupts_held() as held:
        yield
    if held.first is not None:
        signal.raise_signal(signal.Signals[held.first])


@contextlib.contextmanager
def ctrl_c_blocked_for_children() -> Iterator[None]:
    """Within the block, SIGINT is blocked in the calling thread's signal mask: a Ctrl-C
    that arrives stays pending and reaches this process when the block ends, and every
    process started within it inherits the blocked mask (across fork and exec) and never
    sees a Ctrl-C. For starting helper processes that a terminal's Ctrl-C, sent to the
    whole foreground process group, would otherwise hit while Python is still importing
    in them (a ``KeyboardInterrupt`` traceback on the user's terminal); the process
    that started them stops them itself. A no-op where the platform has no signal mask."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    # multiprocessing starts its resource tracker with the first spawned process and
    # unblocks SIGINT and SIGTERM after it (resource_tracker.ensure_running): started
    # here first, it cannot unblock them inside the block
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
