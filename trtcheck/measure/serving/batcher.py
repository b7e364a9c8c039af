"""An embedded asyncio dynamic batcher (Triton semantics) with per-request timestamps.

The batcher sits between request handlers and one batch-executing function. Requests
are queued; each of ``instances`` execution workers, when free, asks the shared
:class:`trtcheck.policy.BatchingPolicy` what to do (dispatch ``k`` requests now, or wait
until the oldest request's window expires, or wait for an arrival). Every dispatch
decision comes from :meth:`BatchingPolicy.decide`; this module only carries it out, so
the simulator (``trtcheck.analyze``) simulates exactly what is measured here.

Semantics (documented contract, kept stable for the simulator and for users):

* **Creation**: only inside a running event loop (a queue bound to the wrong loop
  hangs every request). Creating it elsewhere raises :class:`BatcherLoopError`.
* **Window timer**: starts at the enqueue time of the **oldest queued request** (Triton's
  ``max_queue_delay_microseconds``), not when an instance becomes free. Window 0 takes
  everything already queued (up to ``max_batch_size``) without waiting, so a backlog is
  always batched (``asyncio.wait_for(queue.get(), 0)`` would give up and never batch).
* **Batch size** counts requests: each request is one item of the batch. With the
  default assembler, requests that are dicts of NumPy arrays (or arrays) are
  concatenated along axis 0 and outputs are sliced back by each request's row count.
* **Back-pressure**: the queue holds at most ``max_queue_size`` waiting requests
  (dispatched ones do not count). :meth:`DynamicBatcher.enqueue` always rejects a
  request that does not fit with :class:`QueueFull`; :meth:`DynamicBatcher.submit`
  rejects too (``on_full="reject"``) or waits for room (``on_full="wait"``).
* **Instances**: ``instances`` workers execute batches concurrently (Triton instance
  groups). A synchronous batch function runs in a thread pool of ``instances`` threads
  (what Python services do with ``run_in_executor``); the thread hop is measured apart
  from compute. An async batch function is awaited on the loop.
* **Errors**: an exception while assembling, executing or splitting a batch is
  delivered to every request of that batch; other batches are unaffected.
* **Cancellation**: cancelling one request (its future, or the task awaiting
  :meth:`submit`) never loses or hangs another. A request cancelled while queued is
  dropped when a worker reaches it and does not take a batch slot; one cancelled in
  flight is computed with its batch and its result discarded.
* **Counters** (server side, not counted from responses): executions (batches), inference count
  (requests executed), a histogram of batch sizes, and the average batch size
  ``inference_count / execution_count`` (Triton's definition), plus rejected, cancelled,
  failed and completed request counts and the policy's decision reasons.

Clock: every timestamp is :func:`time.perf_counter` seconds (monotonic, same clock in all
threads), so client-side and server-side times of one process can be subtracted.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from trtcheck.errors import TrtcheckError, UsageError
from trtcheck.policy import BatchingPolicy

__all__ = [
    "BatchCancelled", "BatcherClosed", "BatcherCounters", "DaemonThreadPool", "BatcherLoopError", "DynamicBatcher", "QueueFull",
    "Ticket", "default_assemble", "default_split",
]

_clock = time.perf_counter


class BatcherLoopError(UsageError):
    """The batcher was created outside a running asyncio event loop."""


class QueueFull(TrtcheckError):
    """A request was rejected because the batcher's queue is full (back-pressure)."""


class BatchCancelled(TrtcheckError):
    """The batch function raised :class:`asyncio.CancelledError` on its own (delivered to
    the requests of that batch; the batcher goes on)."""


class BatcherClosed(TrtcheckError):
    """A request was submitted to, or still queued in, a closed batcher."""


class Ticket:
    """One request inside the batcher: its future and its timestamps.

    All times are :func:`time.perf_counter` seconds; ``0.0`` means "not reached".

    Attributes:
        payload: what the caller submitted.
        future: resolves to this request's slice of the batch output, or raises the
            batch's error, :class:`BatcherClosed`, or ``CancelledError``.
        t_enqueue: accepted into the queue.
        t_free: when the worker that dispatched it became free to look at the queue
            (start of its batch's window wait when the request was already queued).
        t_dispatch: taken from the queue by the worker (policy said dispatch).
        t_assembled: batch input assembled (stack/copy done).
        t_compute_start, t_compute_end: the batch function's own start and end (inside
            the thread for a sync function; equal to ``t_assembled``/``t_computed`` for
            an async one).
        t_computed: the worker has the batch output back on the event loop.
        t_delivered: this request's future was resolved.
        batch_size: size of the batch it ran in (0 until dispatched).
        batch_id: sequence number of that batch (-1 until dispatched).
    """

    __slots__ = ("payload", "future", "t_enqueue", "t_free", "t_dispatch", "t_assembled",
                 "t_compute_start", "t_compute_end", "t_computed", "t_delivered",
                 "batch_size", "batch_id")

    def __init__(self, payload: Any, future: asyncio.Future[Any], t_enqueue: float) -> None:
        self.payload = payload
        self.future = future
        self.t_enqueue = t_enqueue
        self.t_free = 0.0
        self.t_dispatch = 0.0
        self.t_assembled = 0.0
        self.t_compute_start = 0.0
        self.t_compute_end = 0.0
        self.t_computed = 0.0
        self.t_delivered = 0.0
        self.batch_size = 0
        self.batch_id = -1

    def parts_s(self) -> dict[str, float]:
        """Server-side waterfall parts of a delivered request, in seconds.

        ``queue_wait`` (queued while no instance was free), ``window_wait`` (an instance
        was free and the policy waited for the batch to fill), ``assembly``,
        ``executor_hop`` (thread hand-off there and back; 0 for async functions),
        ``compute``, ``result_dispatch`` (batch output on the loop -> future resolved).
        They add up exactly to ``t_delivered - t_enqueue``.
        """
        window_start = max(self.t_enqueue, self.t_free)
        return {
            "queue_wait": window_start - self.t_enqueue,
            "window_wait": self.t_dispatch - window_start,
            "assembly": self.t_assembled - self.t_dispatch,
            "executor_hop": (self.t_compute_start - self.t_assembled)
            + (self.t_computed - self.t_compute_end),
            "compute": self.t_compute_end - self.t_compute_start,
            "result_dispatch": self.t_delivered - self.t_computed,
        }


@dataclass
class BatcherCounters:
    """Server-side counters (batches are counted on the server, not from responses).

    Attributes:
        submitted: requests offered (accepted + rejected).
        accepted: requests put in the queue.
        rejected: requests refused with :class:`QueueFull`.
        execution_count: batches executed (Triton ``execution_count``).
        inference_count: requests carried by those batches (Triton ``inference_count``).
        batch_size_histogram: batch size -> number of batches.
        completed: requests whose future got a result.
        failed: requests whose future got an error (batch error or closed batcher).
        cancelled_queued: requests cancelled before dispatch (dropped, no batch slot).
        cancelled_in_flight: requests cancelled after dispatch (result discarded).
        batch_errors: batches that raised.
        decision_reasons: policy reason -> count of dispatch decisions.
    """

    submitted: int = 0
    accepted: int = 0
    rejected: int = 0
    execution_count: int = 0
    inference_count: int = 0
    batch_size_histogram: dict[int, int] = field(default_factory=dict)
    completed: int = 0
    failed: int = 0
    cancelled_queued: int = 0
    cancelled_in_flight: int = 0
    batch_errors: int = 0
    decision_reasons: dict[str, int] = field(default_factory=dict)

    @property
    def avg_batch_size(self) -> float:
        """``inference_count / execution_count`` (Triton's server-side average), 0 if none."""
        return self.inference_count / self.execution_count if self.execution_count else 0.0

    @property
    def max_batch_size_seen(self) -> int:
        """Largest batch executed (0 if none)."""
        return max(self.batch_size_histogram, default=0)

    def settled(self) -> int:
        """Requests with a final outcome: completed + failed + cancelled (both kinds)."""
        return self.completed + self.failed + self.cancelled_queued + self.cancelled_in_flight


def _rows(payload: Any) -> int:
    """Rows a payload contributes to the assembled batch (dim 0 of its first array)."""
    if isinstance(payload, dict):
        first = next(iter(payload.values()))
        return int(first.shape[0]) if getattr(first, "ndim", 0) else 1
    shape = getattr(payload, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    return 1


def default_assemble(payloads: Sequence[Any]) -> tuple[Any, list[int]]:
    """Assemble request payloads into one batch input.

    * dicts of NumPy arrays (same keys): ``{name: np.concatenate(rows, axis=0)}``;
    * NumPy arrays: ``np.concatenate(payloads, axis=0)``;
    * anything else: the list of payloads unchanged.

    Returns:
        ``(batch, rows)`` where ``rows[i]`` is the number of axis-0 rows request ``i``
        contributed (1 for non-array payloads), used by :func:`default_split`.

    Raises:
        ValueError: arrays whose trailing shapes or keys differ (from NumPy).
    """
    first = payloads[0]
    if isinstance(first, dict) and first and all(hasattr(v, "shape") for v in first.values()):
        import numpy as np

        rows = [_rows(p) for p in payloads]
        if len(payloads) == 1:
            return first, rows
        return {k: np.concatenate([p[k] for p in payloads], axis=0) for k in first}, rows
    if hasattr(first, "shape") and getattr(first, "ndim", 0) >= 1:
        import numpy as np

        rows = [int(p.shape[0]) for p in payloads]
        if len(payloads) == 1:
            return first, rows
        return np.concatenate(list(payloads), axis=0), rows
    return list(payloads), [1] * len(payloads)


def _slice(out: Any, rows: Sequence[int], n: int) -> list[Any]:
    if isinstance(out, (list, tuple)):
        if len(out) != n:
            raise ValueError(f"batch function returned {len(out)} results for {n} requests")
        return list(out)
    if isinstance(out, dict):
        per = {k: _slice(v, rows, n) for k, v in out.items()}
        return [{k: per[k][i] for k in per} for i in range(n)]
    if hasattr(out, "shape") and getattr(out, "ndim", 0) >= 1:
        total = sum(rows)
        if int(out.shape[0]) != total:
            raise ValueError(f"batch output has {out.shape[0]} rows, expected {total}")
        res, start = [], 0
        for r in rows:
            res.append(out[start:start + r])
            start += r
        return res
    raise ValueError(f"cannot split a batch output of type {type(out).__name__} "
                     f"among {n} requests; return a list, an array or a dict of arrays")


def default_split(output: Any, rows: Sequence[int]) -> list[Any]:
    """Split a batch output back into one result per request.

    * list/tuple of length ``n``: element ``i`` goes to request ``i``;
    * array: rows ``[sum(rows[:i]), sum(rows[:i+1]))`` go to request ``i``;
    * dict: applied per value, giving one dict per request;
    * an object with an ``outputs`` dict (``trtcheck.backends.base.InferOutput``): its
      ``outputs``.

    Raises:
        ValueError: the output cannot be split into ``len(rows)`` results.
    """
    outputs = getattr(output, "outputs", None)
    if isinstance(outputs, dict):
        output = outputs
    return _slice(output, rows, len(rows))


class DynamicBatcher:
    """Asyncio dynamic batcher driven by :class:`trtcheck.policy.BatchingPolicy`.

    Args:
        fn: the batch function, ``fn(batch) -> output``, sync or ``async``. ``batch`` is
            what ``assemble`` built (by default a dict of arrays, an array, or a list of
            payloads); ``output`` must be splittable by ``split``. A sync ``fn`` runs in
            a thread pool of ``instances`` threads.
        policy: the dispatch policy (window, max batch size, preferred sizes).
        instances: concurrent execution workers, >= 1 (Triton instance count).
        max_queue_size: most requests waiting for dispatch, >= 1.
        on_full: ``"reject"`` (raise :class:`QueueFull`) or ``"wait"`` (``submit`` waits
            for room; ``enqueue`` still rejects).
        assemble: ``assemble(payloads) -> (batch, rows)``; default
            :func:`default_assemble`.
        split: ``split(output, rows) -> list`` of per-request results; default
            :func:`default_split`.
        executor: a ``concurrent.futures.Executor`` for a sync ``fn`` (default: an own
            ``ThreadPoolExecutor(instances)``, shut down by :meth:`aclose`).

    Raises:
        BatcherLoopError: no running event loop (create it inside ``async`` code).
        UsageError: ``instances``, ``max_queue_size`` or ``on_full`` out of range.

    Use::

        async with DynamicBatcher(model_fn, BatchingPolicy(32, 2000)) as b:
            y = await b.submit(x)
    """

    def __init__(self, fn: Callable[[Any], Any], policy: BatchingPolicy, *,
                 instances: int = 1, max_queue_size: int = 65536, on_full: str = "reject",
                 assemble: Callable[[Sequence[Any]], tuple[Any, list[int]]] | None = None,
                 split: Callable[[Any, Sequence[int]], list[Any]] | None = None,
                 executor: concurrent.futures.Executor | None = None) -> None:
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            raise BatcherLoopError(
                "DynamicBatcher must be created inside a running asyncio event loop",
                "create it in async code (e.g. inside the coroutine given to asyncio.run, "
                "or an app startup hook), not in __init__ or main() before the loop runs"
            ) from None
        if not isinstance(instances, int) or instances < 1:
            raise UsageError(f"instances must be an integer >= 1, got {instances!r}")
        if not isinstance(max_queue_size, int) or max_queue_size < 1:
            raise UsageError(f"max_queue_size must be an integer >= 1, got {max_queue_size!r}")
        if on_full not in ("reject", "wait"):
            raise UsageError(f"on_full must be 'reject' or 'wait', got {on_full!r}")
        self.policy = policy
        self.instances = instances
        self.max_queue_size = max_queue_size
        self.on_full = on_full
        self.counters = BatcherCounters()
        self._fn = fn
        self._is_async = is_async_callable(fn)
        self._assemble = assemble or default_assemble
        self._split = split or default_split
        self._own_executor = False
        self._executor = executor
        if not self._is_async and executor is None:
            self._executor = DaemonThreadPool(instances, thread_name_prefix="trtcheck-batcher")
            self._own_executor = True
        self._queue: collections.deque[Ticket] = collections.deque()
        self._idle: collections.deque[asyncio.Future[None]] = collections.deque()
        self._space_waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._closed = False
        self._batch_seq = 0
        self._in_flight = 0
        #: batches still running when :meth:`aclose` gave up on them (a sync function's
        #: thread stays busy: give the next batcher a fresh executor)
        self.abandoned_batches = 0
        self._workers = [self._loop.create_task(self._worker(), name=f"trtcheck-batcher-{i}")
                         for i in range(instances)]

    # -- public API ---------------------------------------------------------------------

    @property
    def queued(self) -> int:
        """Requests currently waiting in the queue (cancelled ones not yet purged count)."""
        return len(self._queue)

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called."""
        return self._closed

    def enqueue(self, payload: Any) -> Ticket:
        """Queue one request without waiting; returns its :class:`Ticket`.

        Await ``ticket.future`` for the result. Must be called on the batcher's loop.

        Raises:
            QueueFull: ``max_queue_size`` requests are already waiting.
            BatcherClosed: the batcher was closed.
        """
        c = self.counters
        c.submitted += 1
        if self._closed:
            c.rejected += 1
            raise BatcherClosed("the batcher is closed", "submit before aclose()")
        if len(self._queue) >= self.max_queue_size:
            c.rejected += 1
            raise QueueFull(f"batcher queue is full ({self.max_queue_size} requests waiting)",
                            "raise max_queue_size, add instances, or lower the load")
        return self._accept(payload)

    def _accept(self, payload: Any) -> Ticket:
        t = Ticket(payload, self._loop.create_future(), _clock())
        self._queue.append(t)
        self.counters.accepted += 1
        idle = self._idle
        while idle:
            w = idle.popleft()
            if not w.done():
                w.set_result(None)
                break
        return t

    async def submit_ticket(self, payload: Any) -> Ticket:
        """Queue one request honouring ``on_full`` and return its :class:`Ticket`.

        With ``on_full="wait"`` this waits (FIFO) until the queue has room.

        Raises:
            QueueFull: the queue is full and ``on_full="reject"``.
            BatcherClosed: the batcher was closed (also while waiting for room).
        """
        if self.on_full == "reject" or (len(self._queue) < self.max_queue_size
                                        and not self._space_waiters):
            return self.enqueue(payload)
        self.counters.submitted += 1
        queue_behind = bool(self._space_waiters)  # others wait already: line up behind them
        while queue_behind or len(self._queue) >= self.max_queue_size or self._closed:
            queue_behind = False
            if self._closed:
                self.counters.rejected += 1
                raise BatcherClosed("the batcher is closed", "submit before aclose()")
            w = self._loop.create_future()
            self._space_waiters.append(w)
            try:
                await w
            except asyncio.CancelledError:
                if w.done() and not w.cancelled():
                    self._wake_space()  # pass the room on to the next waiter
                raise
        return self._accept(payload)

    async def submit(self, payload: Any) -> Any:
        """Queue one request and wait for its result (its slice of the batch output).

        Raises:
            QueueFull: queue full and ``on_full="reject"``.
            BatcherClosed: closed before the request was dispatched.
            Exception: whatever the batch function (or assemble/split) raised for the
                batch this request ran in.
        """
        ticket = await self.submit_ticket(payload)
        return await ticket.future

    async def aclose(self, drain: bool = True, timeout_s: float | None = None) -> None:
        """Stop accepting requests and stop the workers.

        Args:
            drain: ``True`` executes everything already queued first; ``False`` fails
                queued requests with :class:`BatcherClosed` at once. Batches in flight
                finish, unless ``timeout_s`` runs out first.
            timeout_s: longest wait (s) for the workers; then they are cancelled and every
                request still open fails with :class:`BatcherClosed`. An async backend is
                cancelled with them; a sync function keeps its executor thread until it
                returns (Python cannot stop a thread), but nobody waits for it.
                ``None``: wait as long as batches run.
        """
        if self._closed and not self._workers:
            return
        self._closed = True
        while self._space_waiters:
            w = self._space_waiters.popleft()
            if not w.done():
                w.set_result(None)
        if not drain:
            self._fail_queued()
        self._wake_all()
        if timeout_s is not None and self._workers:
            _, hung = await asyncio.wait(self._workers, timeout=max(0.0, timeout_s))
            if hung and self._in_flight:
                self.abandoned_batches += 1
            for w in hung:  # a batch that never ends must not hang the measurement
                w.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []
        self._fail_queued()
        if self._own_executor and self._executor is not None:
            self._executor.shutdown(wait=False)

    async def __aenter__(self) -> DynamicBatcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose(drain=True)

    # -- internals ----------------------------------------------------------------------

    def _fail_queued(self) -> None:
        while self._queue:
            t = self._queue.popleft()
            if t.future.cancelled():
                self.counters.cancelled_queued += 1
            elif not t.future.done():
                t.future.set_exception(BatcherClosed("the batcher was closed before this "
                                                     "request was dispatched"))
                t.t_delivered = _clock()
                self.counters.failed += 1

    def _wake_all(self) -> None:
        while self._idle:
            w = self._idle.popleft()
            if not w.done():
                w.set_result(None)

    def _wake_space(self) -> None:
        while self._space_waiters:
            w = self._space_waiters.popleft()
            if not w.done():
                w.set_result(None)
                return

    def _purge_head(self) -> None:
        q = self._queue
        while q and q[0].future.done():  # cancelled while queued
            q.popleft()
            self.counters.cancelled_queued += 1

    async def _wait(self, deadline_s: float | None) -> None:
        """Sleep until an arrival (or close), or until ``deadline_s`` (perf_counter s)."""
        w = self._loop.create_future()
        self._idle.append(w)
        handle = None
        if deadline_s is not None:
            handle = self._loop.call_later(max(0.0, deadline_s - _clock()), _wake, w)
        try:
            await w
        finally:
            if handle is not None:
                handle.cancel()

    async def _worker(self) -> None:
        try:
            await self._worker_loop()
        except asyncio.CancelledError:
            self._closed = True
            self._fail_queued()
            raise
        except Exception as exc:  # a bug (e.g. in a custom policy): never leave requests hanging
            self._closed = True
            while self._queue:
                t = self._queue.popleft()
                if not t.future.done():
                    t.future.set_exception(exc)
                    t.t_delivered = _clock()
                    self.counters.failed += 1
                else:
                    self.counters.cancelled_queued += 1
            raise

    async def _worker_loop(self) -> None:
        policy = self.policy
        q = self._queue
        while True:
            self._purge_head()
            if not q:
                if self._closed:
                    return
                await self._wait(None)
                continue
            t_free = _clock()
            while True:
                self._purge_head()
                if not q:
                    break
                now = _clock()
                d = policy.decide(len(q), q[0].t_enqueue, now)
                if d.dispatch > 0 or self._closed:
                    k = d.dispatch if d.dispatch > 0 else min(len(q), policy.max_batch_size)
                    # looked up per decision: the counters may be replaced (reset after a
                    # warm-up) while the worker runs
                    reasons = self.counters.decision_reasons
                    reasons[d.reason if d.dispatch > 0 else "closing"] = reasons.get(
                        d.reason if d.dispatch > 0 else "closing", 0) + 1
                    batch = self._take(k, t_free, now)
                    if batch:
                        if q and self._idle:  # let another free instance look at the rest
                            w = self._idle.popleft()
                            if not w.done():
                                w.set_result(None)
                        await self._run_batch(batch)
                    break
                await self._wait(d.wait_until_s)

    def _take(self, k: int, t_free: float, now: float) -> list[Ticket]:
        q = self._queue
        batch: list[Ticket] = []
        while q and len(batch) < k:
            t = q.popleft()
            if t.future.done():
                self.counters.cancelled_queued += 1
                continue
            t.t_free = t_free
            t.t_dispatch = now
            batch.append(t)
        if self._space_waiters:
            for _ in range(len(batch)):
                self._wake_space()
        return batch

    def _timed_call(self, batch_input: Any) -> tuple[Any, float, float]:
        t0 = _clock()
        out = self._fn(batch_input)
        return out, t0, _clock()

    async def _run_batch(self, batch: list[Ticket]) -> None:
        c = self.counters
        n = len(batch)
        bid = self._batch_seq
        self._batch_seq += 1
        c.execution_count += 1
        c.inference_count += n
        hist = c.batch_size_histogram
        hist[n] = hist.get(n, 0) + 1
        self._in_flight += n
        try:
            try:
                batch_input, rows = self._assemble([t.payload for t in batch])
                t_asm = _clock()
                if self._is_async:
                    out = await self._fn(batch_input)
                    t_end = _clock()
                    t_cs, t_ce = t_asm, t_end
                else:
                    out, t_cs, t_ce = await self._loop.run_in_executor(
                        self._executor, self._timed_call, batch_input)
                    t_end = _clock()
                results = self._split(out, rows)
                if len(results) != n:
                    raise ValueError(f"split returned {len(results)} results for {n} requests")
            except asyncio.CancelledError as exc:
                task = asyncio.current_task()
                if task is not None and not task.cancelling():
                    # the batch function raised CancelledError itself (e.g. an async client
                    # whose call was cancelled): a failed batch, not a stop of this worker
                    self._fail_batch(batch, n, bid, BatchCancelled(
                        "the batch function raised asyncio.CancelledError", None), exc)
                    return
                # the worker itself was cancelled (event loop shutting down): nobody may hang
                for t in batch:
                    if not t.future.done():
                        t.future.set_exception(BatcherClosed(
                            "the batcher's worker was cancelled while running this batch"))
                        c.failed += 1
                    else:
                        c.cancelled_in_flight += 1
                raise
            except Exception as exc:  # noqa: BLE001 - delivered to every request
                self._fail_batch(batch, n, bid, exc)
                return
            for t, r in zip(batch, results):
                t.batch_size, t.batch_id = n, bid
                t.t_assembled, t.t_compute_start, t.t_compute_end, t.t_computed = (
                    t_asm, t_cs, t_ce, t_end)
                if t.future.done():
                    c.cancelled_in_flight += 1
                else:
                    t.future.set_result(r)
                    t.t_delivered = _clock()
                    c.completed += 1
        finally:
            self._in_flight -= n


    def _fail_batch(self, batch: list[Ticket], n: int, bid: int, exc: BaseException,
                    cause: BaseException | None = None) -> None:
        """Deliver ``exc`` to every open request of a failed batch."""
        c = self.counters
        c.batch_errors += 1
        if cause is not None:
            exc.__cause__ = cause
        now = _clock()
        for t in batch:
            t.batch_size, t.batch_id = n, bid
            if t.future.done():
                c.cancelled_in_flight += 1
            else:
                t.future.set_exception(exc)
                t.t_delivered = now
                c.failed += 1


class DaemonThreadPool(concurrent.futures.Executor):
    """A fixed pool of daemon threads for synchronous batch functions.

    :class:`concurrent.futures.ThreadPoolExecutor` joins its threads at interpreter exit,
    so one batch function that never returns (a hung driver call) would hang the whole
    process after the measurement is over. These threads are daemons: a hung call is
    abandoned, and :meth:`shutdown` never waits for it. Python cannot stop a running
    thread; a batcher gives up on such a batch after its timeout.

    Args:
        max_workers: threads (>= 1), started lazily on the first submits.
        thread_name_prefix: thread names are ``PREFIX-N``.
    """

    def __init__(self, max_workers: int, thread_name_prefix: str = "trtcheck-pool") -> None:
        import queue

        if max_workers < 1:
            raise UsageError(f"max_workers must be >= 1, got {max_workers}")
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[Any] = []
        self._idle = 0
        self._shutdown = False
        import threading

        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
               ) -> concurrent.futures.Future[Any]:
        """Run ``fn(*args, **kwargs)`` on a pool thread; returns its future."""
        import threading

        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot submit after shutdown")
            fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
            self._jobs.put((fut, fn, args, kwargs))
            if self._idle == 0 and len(self._threads) < self._max:
                t = threading.Thread(target=self._run, daemon=True,
                                     name=f"{self._prefix}-{len(self._threads)}")
                self._threads.append(t)
                t.start()
            else:
                self._idle -= 1 if self._idle else 0
        return fut

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fut, fn, args, kwargs = job
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # noqa: BLE001 - delivered to the caller
                    fut.set_exception(exc)
            with self._lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the threads once their current job ends; ``wait`` joins only threads that
        are idle or finish within 1 s each (a hung call is never waited for)."""
        with self._lock:
            self._shutdown = True
            for _ in self._threads:
                self._jobs.put(None)
        if wait:
            for t in self._threads:
                t.join(timeout=1.0)


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def is_async_callable(fn: Callable[..., Any] | Callable[..., Awaitable[Any]]) -> bool:
    """Whether ``fn`` (a function or an object with ``__call__``) is a coroutine function."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None))
