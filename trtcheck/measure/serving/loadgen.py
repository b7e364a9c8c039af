"""Load generator: burst, closed loop, open loop (Poisson, constant or a replayed trace).

Load shapes (the shape decides the conclusion, so run several):

* ``burst:N`` - all ``N`` requests are sent at once (the upper
  bound of what a batcher can collect). Latency runs from each request's send.
* ``closed:C[:COUNT]`` - ``C`` clients, each sending its next request when the previous
  one is answered (fixed concurrency caps the arrival rate). Latency from each send.
* ``open:RATE[:poisson|constant][:COUNT]`` - requests are scheduled at ``RATE`` per
  second, independently of the answers (Poisson inter-arrivals by default). Latency is
  measured from the **scheduled** send time, so a slow send or a stalled loop cannot
  hide queueing (no coordinated omission; MLPerf LoadGen's server scenario does the
  same). The share of sends later than ``late_threshold_ms`` and send-lag percentiles are
  reported.
* ``trace:PATH`` - open loop replaying arrival times (seconds, one per line, or
  a JSON list; shifted so the first is 0).

Every run is bounded: by its request count and by ``max_duration_s`` of sending; after
sending stops, requests still running get ``drain_timeout_s`` to finish and are then
cancelled and counted as timed out. Every request ends in exactly one outcome:
``ok``, ``error``, ``rejected`` (back-pressure), ``timeout`` or ``not_sent``.

Sending schedule precision: the default event loop's timers round up to whole
milliseconds (epoll), so the open-loop scheduler sleeps on a timer only until ``spin_s``
(1.5 ms) before the next send and then yields to the loop (``asyncio.sleep(0)``) until it
is due; sends that are due are issued back to back (catch-up) rather than skipped, up
to the sending bound (checked after every send, so a sender far behind its schedule
stops at ``max_duration_s`` too; what it had not sent by then is ``not_sent``). A
loop made by :func:`precise_loop` waits in ``select()``, whose timeouts are microseconds,
so a load process that owns its loop spins only the last :data:`PRECISE_SPIN_S`: the
CPU it leaves free is the server's, when both share a small machine.
"""

from __future__ import annotations

import asyncio
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtcheck.arrivals import open_loop_offsets_s
from trtcheck.arrivals import read_trace as read_trace_s
from trtcheck.errors import InputError

_clock = time.perf_counter
_SPIN_S = 0.0015
#: Spin before a send on a :func:`precise_loop`. select() wakes within about 0.1 ms of
#: its timeout; measured on a 16-core host pinned to 2 cores (tritonserver, its python
#: stub, perf_analyzer and the load process sharing them) at 400 req/s against a model
#: of T(b) = 2 + 0.25 b ms: client P50 / perf_analyzer's P50 was 1.15 with the epoll
#: loop and a 1.5 ms spin, 1.01 with this loop and a 0.2 ms spin.
PRECISE_SPIN_S = 0.0002
#: Most requests one run may send: each holds a slot in the schedule and the
#: per-request record (about 130 B) plus the batcher's timestamps until the run ends
#: (about 400 B; payloads and results are released as each request finishes), so
#: 2 * 10^6 is ~1 GB at most. ``benchmarks/serve_soak.py`` measures the growth.
MAX_SCHEDULED_REQUESTS = 2_000_000

OK, ERROR, REJECTED, TIMEOUT, NOT_SENT = "ok", "error", "rejected", "timeout", "not_sent"
OUTCOMES = (OK, ERROR, REJECTED, TIMEOUT, NOT_SENT)


@dataclass(frozen=True)
class LoadShape:
    """One load shape.

    Attributes:
        kind: ``"burst"``, ``"closed"`` or ``"open"`` (a trace is open with ``arrival="trace"``).
        count: requests to send (burst size; total for closed/open), >= 1.
        concurrency: clients of a closed loop (>= 1; 0 otherwise).
        rate_per_s: target arrival rate of an open loop (> 0; 0 otherwise).
        arrival: ``"poisson"``, ``"constant"`` or ``"trace"`` (open loop only).
        trace_s: arrival offsets in seconds (trace only), non-decreasing, first 0.
        label: the spec text, e.g. ``"open:3000"``.
        count_from_duration: an open loop whose count is ``round(RATE x duration)``
            (no COUNT given): its sending bound stretches to the schedule's last send
            (:func:`sending_bound_s`).
    """

    kind: str
    count: int
    concurrency: int = 0
    rate_per_s: float = 0.0
    arrival: str = ""
    trace_s: tuple[float, ...] = ()
    label: str = ""
    count_from_duration: bool = False

    def schedule_s(self, seed: int) -> np.ndarray:
        """Send offsets (s from start) of an open loop, shape ``[count]``, float64
        (:func:`trtcheck.arrivals.open_loop_offsets_s`, the schedule ``advise`` simulates)."""
        if self.kind != "open":
            raise ValueError("only open-loop shapes have a schedule")
        return open_loop_offsets_s(self.arrival, self.rate_per_s, self.count, seed,
                                   self.trace_s)


OPEN_OVERRUN_MAX = 2.0
"""Most an open loop sized by its duration (``open:RATE`` without COUNT) may send past
that duration, as a multiple of it: its Poisson schedule of ``round(RATE x D)`` sends
ends after ``D`` about half the time (relative spread ``1 / sqrt(n)``; 2x is 3.2 spreads
at the fewest, 10 sends)."""


LAST_SEND_SLACK_S = 0.1
"""How long past its last scheduled send an open loop sized by its duration may still
send (s): a sender a few milliseconds behind on a loaded machine still sends its last
request (with 2 ms of slack, one of 20 was left unsent on a loaded CI machine); late
sends are marked late, not dropped."""


def sending_bound_s(shape: LoadShape, max_duration_s: float,
                    offsets_s: np.ndarray | None = None) -> float:
    """How long ``shape`` may send, s: ``max_duration_s``, or for an open loop sized by
    its duration the later of that and its last scheduled send plus
    :data:`LAST_SEND_SLACK_S` (``offsets_s``; ``None``:
    the largest it can be), at most :data:`OPEN_OVERRUN_MAX` x ``max_duration_s``.
    Cutting such a schedule at ``max_duration_s`` sent fewer requests than asked (on 20
    requests of ``open:10`` for 2 s, 14: 6.8 req/s), always the same ones."""
    if shape.kind != "open" or not shape.count_from_duration:
        return max_duration_s
    top = OPEN_OVERRUN_MAX * max_duration_s
    if offsets_s is None or not len(offsets_s):
        return top
    return min(max(max_duration_s, float(offsets_s[-1]) + LAST_SEND_SLACK_S), top)


MAX_CLOSED_CLIENTS = 100_000
"""Most closed-loop clients (each is a coroutine holding a request)."""
MAX_OPEN_RATE_PER_S = 1e9
"""Highest open-loop rate, requests/s (``MAX_ARRIVAL_RATE_PER_S`` of the CLI)."""


def parse_load(spec: str, default_duration_s: float = 2.0) -> LoadShape:
    """Parse a load spec (see the module docstring for the grammar).

    ``closed`` without COUNT sends until the duration bound; ``open`` without COUNT
    sends ``round(RATE * default_duration_s)`` requests.

    Raises:
        InputError: unknown kind, non-positive numbers, unreadable trace.
    """
    text = spec.strip()
    kind, _, rest = text.partition(":")
    parts = [p for p in rest.split(":")] if rest else []
    hint = "use burst:N, closed:C[:COUNT], open:RATE[:poisson|constant][:COUNT] or trace:PATH"

    def num(s: str, what: str, typ: Callable[[str], Any] = int) -> Any:
        try:
            v = typ(s)
        except ValueError:
            raise InputError(f"bad {what} {s!r} in load {spec!r}", hint) from None
        if not (v > 0 and math.isfinite(v)):
            raise InputError(f"{what} must be a finite number > 0 in load {spec!r}", hint)
        return v

    def bounded(n: int) -> int:
        if n > MAX_SCHEDULED_REQUESTS:
            raise InputError(f"load {spec!r} asks for {n:,} requests; a run sends at most "
                             f"{MAX_SCHEDULED_REQUESTS:,} (each is scheduled and recorded)",
                             "lower the rate, the count or --duration-s")
        return n

    if kind == "burst" and len(parts) == 1:
        n = bounded(num(parts[0], "burst size"))
        return LoadShape("burst", n, label=text)
    if kind == "closed" and len(parts) in (1, 2):
        c = num(parts[0], "concurrency")
        if c > MAX_CLOSED_CLIENTS:
            raise InputError(f"load {spec!r} asks for {c:,} closed-loop clients; at most "
                             f"{MAX_CLOSED_CLIENTS:,}", "lower the concurrency")
        count = bounded(num(parts[1], "request count")) if len(parts) == 2 else 10**9
        return LoadShape("closed", count, concurrency=c, label=text)
    if kind == "open" and 1 <= len(parts) <= 3:
        rate = num(parts[0], "rate", float)
        if rate > MAX_OPEN_RATE_PER_S:
            raise InputError(f"load {spec!r} asks for {rate:g} requests/s; at most "
                             f"{MAX_OPEN_RATE_PER_S:g}", "lower the rate")
        arrival, count = "poisson", None
        for p in parts[1:]:
            if p in ("poisson", "constant"):
                arrival = p
            else:
                count = num(p, "request count")
        from_duration = count is None
        if count is None:
            count = max(1, round(rate * default_duration_s))
        count = bounded(count)
        return LoadShape("open", count, rate_per_s=rate, arrival=arrival, label=text,
                         count_from_duration=from_duration)
    if kind == "trace" and rest:
        offs = read_trace(rest)
        span = offs[-1] - offs[0]
        rate = (len(offs) - 1) / span if span > 0 else float(len(offs))
        return LoadShape("open", len(offs), rate_per_s=rate, arrival="trace",
                         trace_s=tuple(offs), label=f"trace:{Path(rest).name}")
    raise InputError(f"cannot read load spec {spec!r}", hint)


def read_trace(path: str) -> list[float]:
    """Arrival offsets (s) from a trace file, sorted, from the first arrival: the shared
    reader :func:`trtcheck.arrivals.read_trace` (the same ``advise`` uses).

    Raises:
        InputError: missing or binary file, non-numbers, non-finite values, or empty.
    """
    return read_trace_s(path, min_arrivals=1).tolist()


@dataclass
class LoadRecord:
    """Raw per-request client-side record of one load run (index = request number).

    Times are :func:`time.perf_counter` seconds. For burst and closed loops
    ``t_sched == t_send``. ``outcome[i]`` is one of :data:`OUTCOMES`; ``error[i]`` the
    exception's type name for ``error``/``rejected``. ``t_start`` is the time the run's
    schedule is anchored to (an open loop's offsets count from ``t_start + 0.001``);
    ``t_began`` is when :func:`run_load` began: the same time unless it was given an
    explicit start (``t0_s``), so ``t_began - t_start`` is how late it began (s).
    """

    shape: LoadShape
    t_sched: list[float]
    t_send: list[float]
    t_end: list[float]
    outcome: list[str]
    error: list[str]
    results: list[Any]
    t_start: float = 0.0
    t_stop_sending: float = 0.0
    t_done: float = 0.0
    t_began: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def indices(self, outcome: str = OK) -> list[int]:
        """Request numbers with the given outcome."""
        return [i for i, o in enumerate(self.outcome) if o == outcome]

    def outcome_counts(self) -> dict[str, int]:
        """Outcome -> count (every outcome present, possibly 0); a streamed record (its
        per-request lists empty: :func:`run_load` with ``on_end``) keeps the counts in
        ``extra["outcomes"]``."""
        if "outcomes" in self.extra:
            return dict(self.extra["outcomes"])
        out = {o: 0 for o in OUTCOMES}
        for o in self.outcome:
            out[o] += 1
        return out


# A start function starts request i and returns an awaitable future of its result.
StartFn = Callable[[int], "asyncio.Future[Any]"]
# Called once per request as it ends: (i, t_sched, t_send, t_end, outcome, error type).
EndFn = Callable[[int, float, float, float, str, str], None]


def precise_loop() -> asyncio.AbstractEventLoop:
    """A new event loop whose timers wake within about 0.1 ms (a ``select()`` selector:
    microsecond timeouts; the default epoll selector rounds up to milliseconds).

    ``select()`` takes file descriptors below 1024 only: use it in a process of its own
    that keeps fewer connections than that (the live load processes cap theirs).
    """
    import selectors

    return asyncio.SelectorEventLoop(selectors.SelectSelector())


async def run_load(shape: LoadShape, start: StartFn, *, max_duration_s: float = 10.0,
                   drain_timeout_s: float = 10.0, seed: int = 0,
                   rejected_types: Sequence[type[BaseException]] = (),
                   keep_results: bool = False, spin_s: float = _SPIN_S,
                   on_end: EndFn | None = None, t0_s: float | None = None) -> LoadRecord:
    """Drive ``start`` with ``shape`` and record every request's times and outcome.

    Args:
        shape: the load shape.
        start: ``start(i) -> future`` starts request ``i`` at once (must not block) and
            returns an ``asyncio.Future``/``Task``; an exception raised by ``start`` itself
            or by the future is the request's error.
        max_duration_s: sending stops after this many seconds (> 0); an open loop
            checks it after every send, also while catching up on a backlog, so it sends
            past the bound by one request's send time at most (the rest: ``not_sent``).
        drain_timeout_s: seconds allowed after sending stops for requests to finish;
            the rest are cancelled and recorded as ``timeout``.
        seed: seed of Poisson arrivals.
        rejected_types: exception types recorded as ``rejected`` (back-pressure).
        keep_results: keep each result in ``record.results`` (``None`` otherwise).
        spin_s: open loop: seconds before a send during which the scheduler yields
            instead of sleeping on a timer (>= 0; :data:`PRECISE_SPIN_S` on a
            :func:`precise_loop`).
        on_end: stream the run instead of recording it: called once per sent request as
            it ends (``i, t_sched, t_send, t_end, outcome, error``; a request not sent
            is not reported), while the record keeps only the counts
            (``extra["outcomes"]``, per-request lists empty). Memory then stays flat
            however many requests the run sends (the requests in flight are held).
        t0_s: the run's start, :func:`time.perf_counter` seconds (``None``: now, when
            the call begins). An open loop's sends are scheduled at ``t0_s + 0.001 +``
            its offsets and the sending bound is ``t0_s + max_duration_s``: a start
            already past shows as late sends (caught up back to back), latencies still
            count from each scheduled time. A burst or closed loop waits until
            ``t0_s`` if it is ahead, else starts at once. Several senders given one
            ``t0_s`` run one schedule (the common epoch of a distributed run).

    Returns:
        the :class:`LoadRecord` (``t_start``: ``t0_s`` or the time the call began;
        ``t_began``: the time it began).

    Raises:
        ValueError: ``t0_s`` is not a finite number.
    """
    if t0_s is not None and not math.isfinite(t0_s):
        raise ValueError(f"t0_s must be a finite perf_counter time, got {t0_s!r}")
    if on_end is not None:
        return await _run_load_streamed(shape, start, on_end, max_duration_s=max_duration_s,
                                        drain_timeout_s=drain_timeout_s, seed=seed,
                                        rejected_types=tuple(rejected_types),
                                        spin_s=spin_s, t0_s=t0_s)
    n = shape.count if shape.kind != "closed" else min(shape.count, MAX_SCHEDULED_REQUESTS)
    if shape.kind == "closed" and shape.count >= 10**9:
        n = 0  # grows as sent
    t_sched: list[float] = [0.0] * n
    t_send: list[float] = [0.0] * n
    t_end: list[float] = [0.0] * n
    outcome: list[str] = [NOT_SENT] * n
    error: list[str] = [""] * n
    results: list[Any] = [None] * n
    rec = LoadRecord(shape, t_sched, t_send, t_end, outcome, error, results)
    pending: dict[int, asyncio.Future[Any]] = {}
    rejected_types = tuple(rejected_types)

    def on_done(i: int, fut: asyncio.Future[Any]) -> None:
        t_end[i] = _clock()
        pending.pop(i, None)
        if fut.cancelled():
            outcome[i] = TIMEOUT
            return
        exc = fut.exception()
        if exc is None:
            outcome[i] = OK
            if keep_results:
                results[i] = fut.result()
        else:
            outcome[i] = REJECTED if isinstance(exc, rejected_types) else ERROR
            error[i] = type(exc).__name__

    def fire(i: int, sched: float) -> asyncio.Future[Any] | None:
        t_sched[i] = sched
        t_send[i] = _clock()
        try:
            fut = start(i)
        except BaseException as exc:  # noqa: BLE001 - the request's outcome
            t_end[i] = _clock()
            outcome[i] = REJECTED if isinstance(exc, rejected_types) else ERROR
            error[i] = type(exc).__name__
            return None
        outcome[i] = TIMEOUT  # until done
        pending[i] = fut
        fut.add_done_callback(functools.partial(on_done, i))
        return fut

    t0 = await _start_at(rec, t0_s, shape.kind != "open", spin_s)
    stop_at = t0 + max_duration_s
    if shape.kind == "burst":
        for i in range(n):
            now = _clock()
            fire(i, now)
    elif shape.kind == "open":
        offs = shape.schedule_s(seed)
        stop_at = t0 + sending_bound_s(shape, max_duration_s, offs)
        base = t0 + 0.001
        i = 0
        while i < n:
            now = _clock()
            if now >= stop_at:
                break
            # a backlog (sends already due) goes out back to back, but never past the
            # bound: the stop time is checked after every send
            while i < n and base + offs[i] <= now < stop_at:
                fire(i, base + offs[i])
                i += 1
                now = _clock()
            if i >= n:
                break
            dt = base + offs[i] - _clock()
            if dt > spin_s:
                # never sleep past the end of sending: a slow rate or a trace with a long
                # gap must not hold the run beyond max_duration_s
                await asyncio.sleep(max(0.0, min(dt - spin_s, stop_at - _clock())))
            else:
                await asyncio.sleep(0)
    elif shape.kind == "closed":
        unbounded = n == 0
        counter = [0]

        async def client() -> None:
            while True:
                i = counter[0]
                if (not unbounded and i >= n) or i >= MAX_SCHEDULED_REQUESTS \
                        or _clock() >= stop_at:
                    return
                counter[0] += 1
                if unbounded:
                    t_sched.append(0.0)
                    t_send.append(0.0)
                    t_end.append(0.0)
                    outcome.append(NOT_SENT)
                    error.append("")
                    results.append(None)
                fut = fire(i, _clock())
                if fut is None:  # rejected or failed at once: let the server make progress
                    await asyncio.sleep(0)
                else:
                    try:
                        await asyncio.shield(fut)
                    except BaseException:  # noqa: BLE001 - recorded by on_done
                        pass
                    if not fut.done():  # pragma: no cover - shield cancelled from outside
                        return
                    # give on_done a chance to run before the next send
                    if i in pending:
                        await asyncio.sleep(0)

        await asyncio.gather(*[client() for _ in range(shape.concurrency)])
    else:  # pragma: no cover - LoadShape is built by parse_load
        raise InputError(f"unknown load kind {shape.kind!r}")
    rec.t_stop_sending = _clock()
    if pending:
        waiting = list(pending.values())
        _, not_done = await asyncio.wait(waiting, timeout=drain_timeout_s)
        for f in not_done:
            f.cancel()
        if not_done:
            await asyncio.wait(not_done, timeout=1.0)
    # callbacks run one loop turn after completion
    for _ in range(3):
        if not pending:
            break
        await asyncio.sleep(0)
    for i in list(pending):  # its callback has not run yet: classify by its state
        fut = pending[i]
        if fut.done():
            on_done(i, fut)
        else:  # a future that ignored cancel: a timeout, stop waiting
            pending.pop(i, None)
            outcome[i] = TIMEOUT
            t_end[i] = _clock()
    rec.t_done = _clock()
    return rec


async def _start_at(rec: LoadRecord, t0_s: float | None, wait: bool, spin_s: float) -> float:
    """Set ``rec.t_began`` (now) and ``rec.t_start`` (``t0_s``, or now) and return the
    start; with ``wait``, first wait until a ``t0_s`` still ahead (timer up to ``spin_s``
    before it, then yielding to the loop)."""
    began = _clock()
    t0 = began if t0_s is None else float(t0_s)
    rec.t_began, rec.t_start = began, t0
    if wait:
        while (left := t0 - _clock()) > 0:
            await asyncio.sleep(left - spin_s if left > spin_s else 0)
    return t0


async def _run_load_streamed(shape: LoadShape, start: StartFn, on_end: EndFn, *,
                             max_duration_s: float, drain_timeout_s: float, seed: int,
                             rejected_types: tuple[type[BaseException], ...],
                             spin_s: float, t0_s: float | None) -> LoadRecord:
    """:func:`run_load` reporting each request to ``on_end`` as it ends, keeping only
    the requests in flight and the counts (same schedule, bounds and outcomes)."""
    n = shape.count if shape.kind != "closed" else min(shape.count, MAX_SCHEDULED_REQUESTS)
    unbounded = shape.kind == "closed" and shape.count >= 10**9
    rec = LoadRecord(shape, [], [], [], [], [], [])
    counts = {o: 0 for o in OUTCOMES}
    pending: dict[int, tuple[asyncio.Future[Any], float, float]] = {}
    fired = [0]

    def end(i: int, sched: float, send: float, outcome: str, err: str) -> None:
        counts[outcome] += 1
        on_end(i, sched, send, _clock(), outcome, err)

    def on_done(i: int, fut: asyncio.Future[Any]) -> None:
        entry = pending.pop(i, None)
        if entry is None:  # already counted (a future that ignored its cancel)
            return
        _, sched, send = entry
        if fut.cancelled():
            end(i, sched, send, TIMEOUT, "")
            return
        exc = fut.exception()
        if exc is None:
            end(i, sched, send, OK, "")
        else:
            end(i, sched, send, REJECTED if isinstance(exc, rejected_types) else ERROR,
                type(exc).__name__)

    def fire(i: int, sched: float) -> asyncio.Future[Any] | None:
        fired[0] += 1
        send = _clock()
        try:
            fut = start(i)
        except BaseException as exc:  # noqa: BLE001 - the request's outcome
            end(i, sched, send, REJECTED if isinstance(exc, rejected_types) else ERROR,
                type(exc).__name__)
            return None
        pending[i] = (fut, sched, send)
        fut.add_done_callback(functools.partial(on_done, i))
        return fut

    t0 = await _start_at(rec, t0_s, shape.kind != "open", spin_s)
    stop_at = t0 + max_duration_s
    if shape.kind == "burst":
        for i in range(n):
            fire(i, _clock())
    elif shape.kind == "open":
        offs = shape.schedule_s(seed)
        stop_at = t0 + sending_bound_s(shape, max_duration_s, offs)
        base = t0 + 0.001
        i = 0
        while i < n:
            now = _clock()
            if now >= stop_at:
                break
            while i < n and base + offs[i] <= now < stop_at:  # the bound after each send
                fire(i, base + float(offs[i]))
                i += 1
                now = _clock()
            if i >= n:
                break
            dt = base + offs[i] - _clock()
            if dt > spin_s:
                await asyncio.sleep(max(0.0, min(dt - spin_s, stop_at - _clock())))
            else:
                await asyncio.sleep(0)
    elif shape.kind == "closed":
        counter = [0]

        async def client() -> None:
            while True:
                i = counter[0]
                if (not unbounded and i >= n) or i >= MAX_SCHEDULED_REQUESTS \
                        or _clock() >= stop_at:
                    return
                counter[0] += 1
                fut = fire(i, _clock())
                if fut is None:
                    await asyncio.sleep(0)
                else:
                    try:
                        await asyncio.shield(fut)
                    except BaseException:  # noqa: BLE001 - recorded by on_done
                        pass
                    if not fut.done():  # pragma: no cover - shield cancelled from outside
                        return
                    if i in pending:
                        await asyncio.sleep(0)

        await asyncio.gather(*[client() for _ in range(shape.concurrency)])
    else:  # pragma: no cover - LoadShape is built by parse_load
        raise InputError(f"unknown load kind {shape.kind!r}")
    rec.t_stop_sending = _clock()
    if pending:
        waiting = [f for f, _, _ in pending.values()]
        _, not_done = await asyncio.wait(waiting, timeout=drain_timeout_s)
        for f in not_done:
            f.cancel()
        if not_done:
            await asyncio.wait(not_done, timeout=1.0)
    for _ in range(3):
        if not pending:
            break
        await asyncio.sleep(0)
    for i in list(pending):  # its callback has not run yet: classify by its state
        fut, _, _ = pending[i]
        if fut.done():
            on_done(i, fut)
        if i in pending:  # a future that ignored cancel: a timeout, stop waiting
            _, sched, send = pending.pop(i)
            end(i, sched, send, TIMEOUT, "")
    counts[NOT_SENT] = 0 if unbounded else n - fired[0]
    rec.extra["outcomes"] = counts
    rec.t_done = _clock()
    return rec
