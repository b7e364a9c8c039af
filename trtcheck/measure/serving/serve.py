"""Serving measurement: the embedded dynamic batcher under generated load (public API).

:func:`measure_serving` sweeps windows x max batch sizes x load shapes with repeats and
returns a :class:`trtcheck.results.serve.ServeRun`. It accepts a
:class:`~trtcheck.backends.base.Backend` (ONNX Runtime, synthetic, ...) or any sync or
async Python function ``fn(batch) -> outputs``::

    from trtcheck.measure.serving.serve import measure_serving

    async def model(batch):          # batch: list of payloads (or dict of stacked arrays)
        ...
        return [answer for _ in batch]

    run = measure_serving(model, windows_us=[0, 5000], max_batch_sizes=[8],
                          loads=["burst:64", "open:500"], repeats=3)
    for c in run.configs:
        print(c.load.label, c.window_us, c.throughput_queries_per_s, c.p99_ms)

Inside a running event loop use ``await ameasure_serving(...)`` instead.
"""

from __future__ import annotations

import asyncio
import functools
import math
import concurrent.futures
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from trtcheck import stats as tstats
from trtcheck.backends.base import Backend
from trtcheck.errors import InputError, UsageError
from trtcheck.measure.serving.batcher import (
    BatcherCounters, DaemonThreadPool, DynamicBatcher, QueueFull, Ticket, is_async_callable,
)
from trtcheck.measure.progress import begin_steps, step_done
from trtcheck.measure.serving.loadgen import OK, LoadRecord, LoadShape, parse_load, run_load
from trtcheck.policy import BatchingPolicy
from trtcheck.results.serve import (
    WATERFALL_PARTS, LoadSpec, ServeConfigResult, ServeCounters, ServeRepeat, ServeRun,
    ServeSettings, WaterfallPart,
)
from trtcheck.results.stats import Finding
from trtcheck.units import us_to_ms, us_to_s

_clock = time.perf_counter
_SPIN_S = 0.0015

#: Per-request raw lists kept per repeat (latencies, waterfall parts, batch sizes, enqueue
#: offsets, send lags; ~12 numbers, ~150 bytes of JSON per request): beyond this the lists
#: are thinned evenly (``ServeRepeat.raw_stride``), so a long run stays ~15 MB per repeat.
MAX_RAW_REQUESTS = 100_000
#: Open loop: more than this share of late sends marks a configuration generator-limited
#: (the arrival process the server saw is the sender's catch-up, not the schedule).
GENERATOR_LIMITED_LATE_SHARE = 0.10
#: ... when those late sends matter: their p99 lag is over this share of the p99 latency
#: measured (latencies count from the scheduled time, so a lag moves a claimed
#: percentile by at most itself: a lag under 10% of the p99 leaves it within 10%).
GENERATOR_LIMITED_LAG_SHARE = 0.10
#: ... as does an achieved send rate below this share of the target rate.
GENERATOR_LIMITED_RATE_SHARE = 0.90
#: ``trtcheck report --serve``: open-loop rates as shares of one instance's batch-1
#: capacity ``1 / T(1)``: a light and a busy load, both below capacity, so the runs measure
#: the serving overheads at sustainable rates (what the advice calibrates on).
REPORT_SWEEP_LOAD_SHARES = (0.3, 0.7)
#: ... and the fewest requests an open-loop run of that sweep sends.
REPORT_SWEEP_MIN_REQUESTS = 16
REPORT_SWEEP_SPAN_MARGIN = 2.5
"""The report's serving sweep bounds each open-loop run at this multiple of its
schedule's mean span (COUNT / RATE): a Poisson schedule of 16 arrivals runs past 2.5
times its mean about 5 times in 10^6, so the sweep's own COUNT is sent whole (1.25x
cut 2 of 16 requests at 9 req/s)."""
#: A batching window whose mean batch stays at or below this formed no batches.
NO_BATCHING_MEAN_BATCH = 1.1

__all__ = ["SAMPLES_PER_REQUEST", "SerialFront", "ameasure_serving", "batch_function",
           "default_report_sweep", "measure_serving", "request_shapes", "sleep_precise"]


async def sleep_precise(seconds: float) -> None:
    """Sleep ``seconds`` on the loop to within ~0.1 ms: a timer for all but the last
    1.5 ms (the loop's timers round up to whole ms), then yield until due."""
    deadline = _clock() + seconds
    if seconds > _SPIN_S:
        await asyncio.sleep(seconds - _SPIN_S)
    while _clock() < deadline:
        await asyncio.sleep(0)


class SerialFront:
    """A per-request overhead stage in front of the batcher queue.

    Stands for the fixed per-request work of a Python serving layer (HTTP parsing,
    scheduling, copies), which one event-loop thread does for one request at a time:
    the stage has ``concurrency`` servers (default 1: serial), each busy ``cost_ms`` per
    request, first come first served. Requests therefore reach the batcher at most
    ``concurrency / cost`` per second, as behind a Python HTTP serving layer.

    Timing is kept on an ideal schedule: a request that arrives at ``a`` leaves at
    ``max(a, server free) + cost``, and the server becomes free at that *scheduled*
    time, so a late wake-up on a loaded machine delays that one request but does not
    accumulate over the following ones. The stage sleeps without blocking the loop.

    Raises:
        UsageError: negative cost or concurrency < 1.
    """

    def __init__(self, cost_ms: float, concurrency: int = 1) -> None:
        if not cost_ms >= 0 or concurrency < 1:
            raise UsageError("per-request overhead must be >= 0 ms with concurrency >= 1")
        self.cost_s = cost_ms * 1e-3
        self._free_at = [0.0] * concurrency

    def reset(self) -> None:
        """Forget earlier requests (all servers free now); called before every run."""
        self._free_at = [0.0] * len(self._free_at)

    async def pass_through(self) -> None:
        """Wait for a server of the stage, then spend ``cost_ms`` in it.

        A request cancelled while it waits keeps its place in the schedule (the server
        would still have worked on it); :meth:`reset` clears the schedule between runs.
        """
        now = _clock()
        free = self._free_at
        k = min(range(len(free)), key=free.__getitem__)
        done = max(now, free[k]) + self.cost_s
        free[k] = done
        await sleep_precise(done - now)


def batch_function(target: Backend | Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The batch function the batcher calls for ``target``.

    * a Backend with ``prefers_async`` true (synthetic async mode, async callables):
      its ``infer_async``;
    * a :class:`~trtcheck.backends.callable.CallableBackend`: the user function itself
      (sync ones run in the batcher's executor threads);
    * any other Backend: ``backend.infer(feed).outputs`` (sync, in executor threads);
    * a plain callable: itself.
    """
    from trtcheck.backends.callable import CallableBackend

    if isinstance(target, Backend):
        if getattr(target, "prefers_async", False):
            return target.infer_async  # type: ignore[attr-defined]
        if isinstance(target, CallableBackend):
            return target.fn
        be = target

        def run_backend(feed: Any) -> Any:
            return be.infer(feed).outputs

        return run_backend
    if callable(target):
        return target
    raise UsageError(f"cannot serve a {type(target).__name__}: give a Backend or a function")


#: What one serving request carries; the batcher's batch sizes, ``max_batch_size`` and
#: ``throughput_queries_per_s`` count requests, which are samples because of this.
SAMPLES_PER_REQUEST = 1


def _one_sample_hint(name: str, dims: list[int], rows: int) -> str:
    from trtcheck.load.shapes import format_shape

    return (f"give axis 0 as 1 (--shapes {name}:{format_shape([1, *dims[1:]])}); the batcher "
            f"forms batches of up to --max-batch requests of one sample each (Triton counts "
            f"max_batch_size in samples; here requests = samples); to time executions of "
            f"{rows} samples use trtcheck bench MODEL --batch {rows}")


def request_shapes(backend: Backend, shapes: dict[str, list[int]] | None) -> dict[str, list[int]]:
    """Concrete input shapes of one serving request: one sample, axis 0 = 1.

    ``trtcheck serve`` sends one sample per request (:data:`SAMPLES_PER_REQUEST`), so
    batch sizes, ``max_batch_size`` and ``throughput_queries_per_s`` count requests and
    samples alike. A ``--shapes`` axis 0 other than 1 on a batched input used to be
    replaced by 1 without a word; it is refused.

    Args:
        backend: an active backend (its ``input_specs()``).
        shapes: ``--shapes`` from :func:`trtcheck.load.shapes.parse_shapes`, or ``None``.

    Returns:
        ``{input name: dims}`` with axis 0 = 1 on batched inputs.

    Raises:
        InputError: (exit 2) a per-request batch other than 1 (axis 0 of a batched
            input), or any :func:`~trtcheck.load.shapes.resolve_shapes` mistake.
    """
    from trtcheck.load.shapes import format_shape, resolve_shapes

    specs = backend.input_specs()
    resolved = resolve_shapes(specs, shapes, batch_size=SAMPLES_PER_REQUEST)
    for name, dims in (shapes or {}).items():
        got = resolved.get(name)
        if dims and got and dims[0] != got[0]:
            raise InputError(
                f"--shapes gives {name!r} {format_shape(dims)}, a batch of {dims[0]} per "
                f"request, but trtcheck serve sends one sample per request (it would run "
                f"{format_shape(got)})", _one_sample_hint(name, dims, dims[0]))
    return resolved


def _check_payload_rows(backend: Backend, payload: Any) -> None:
    """A Backend's payload must be one sample (see :func:`request_shapes`): axis 0 of
    each array is 1, except for inputs whose axis 0 the model fixes (parameter inputs)."""
    arrays = (list(payload.items()) if isinstance(payload, dict)
              else [("payload", payload)] if isinstance(payload, np.ndarray) else [])
    fixed = {t.name for t in backend.input_specs()
             if t.shape and isinstance(t.shape[0], int) and t.shape[0] > 0}
    for name, arr in arrays:
        shape = list(getattr(arr, "shape", []) or [])
        if shape and name not in fixed and int(shape[0]) != SAMPLES_PER_REQUEST:
            raise InputError(f"the payload's {name!r} has {shape[0]} rows on axis 0, but "
                             "each serving request is one sample (batch sizes and "
                             "max_batch_size count requests)",
                             _one_sample_hint(str(name), [int(d) for d in shape],
                                              int(shape[0])))


def _default_payload(backend: Backend, shapes: dict[str, list[int]] | None, seed: int,
                     one_sample: bool = True) -> Any:
    """A generated one-sample feed; ``one_sample=False`` sets axis 0 to 1 without
    refusing another one (``trtcheck report``: --shapes axis 0 belongs to --batch)."""
    specs = backend.input_specs()
    if not specs:
        return None
    from trtcheck.load.inputs import make_feed
    from trtcheck.load.shapes import resolve_shapes

    dims = (request_shapes(backend, shapes) if one_sample
            else resolve_shapes(specs, shapes, batch_size=SAMPLES_PER_REQUEST))
    return make_feed(specs, dims, seed=seed)


def _describe_payload(p: Any) -> str:
    if isinstance(p, dict):
        return ", ".join(f"{k} {getattr(v, 'dtype', type(v).__name__)} "
                         f"{list(getattr(v, 'shape', []))}" for k, v in p.items())
    if isinstance(p, np.ndarray):
        return f"array {p.dtype} {list(p.shape)}"
    return "none" if p is None else type(p).__name__


class _InProcessTarget:
    """Starts requests on the batcher directly (optionally through a SerialFront)."""

    def __init__(self, payload_for: Callable[[int], Any], front: SerialFront | None) -> None:
        self.payload_for = payload_for
        self.front = front
        self.batcher: DynamicBatcher | None = None
        self.tickets: dict[int, Ticket] = {}
        self.handler_times: dict[int, tuple[float, float]] = {}
        self._loop = asyncio.get_running_loop()

    def reset(self, batcher: DynamicBatcher) -> None:
        self.batcher = batcher
        self.tickets = {}

    def start(self, i: int) -> asyncio.Future[Any]:
        b = self.batcher
        assert b is not None
        if self.front is None and b.on_full == "reject":
            t = b.enqueue(self.payload_for(i))
            self.tickets[i] = t
            t.future.add_done_callback(functools.partial(_release_when_done, t))
            return t.future
        return self._loop.create_task(self._go(i))

    async def _go(self, i: int) -> Any:
        b = self.batcher
        assert b is not None
        if self.front is not None:
            await self.front.pass_through()
        t = await b.submit_ticket(self.payload_for(i))
        self.tickets[i] = t
        fut = t.future
        fut.add_done_callback(functools.partial(_release_when_done, t))
        return await fut


class _SigtermCancel:
    """SIGTERM cancels the measuring task, as Ctrl-C does under :func:`asyncio.run`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any] | None) -> None:
        import signal

        self.fired = False
        self._loop = loop
        self._installed = False
        self._previous: Any = None
        if task is None:
            return

        def on_term() -> None:
            self.fired = True
            task.cancel()

        try:
            self._previous = signal.getsignal(signal.SIGTERM)
            loop.add_signal_handler(signal.SIGTERM, on_term)
            self._installed = True
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, Windows
            pass

    def remove(self) -> None:
        """Give SIGTERM back to the handler it had before (e.g. a command's own)."""
        import signal

        if self._installed:
            self._loop.remove_signal_handler(signal.SIGTERM)
            if self._previous is not None:
                signal.signal(signal.SIGTERM, self._previous)
            self._installed = False


def _cancel_on_sigterm(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any] | None
                       ) -> _SigtermCancel:
    return _SigtermCancel(loop, task)


def _quiet_aiohttp() -> Callable[[], None]:
    """Silence aiohttp's own loggers for the run (a request cut off by Ctrl-C would print
    its traceback); returns the function that restores them."""
    import logging

    saved = []
    for name in ("aiohttp", "aiohttp.server", "aiohttp.web", "aiohttp.access",
                 "aiohttp.client"):
        lg = logging.getLogger(name)
        saved.append((lg, lg.level))
        lg.setLevel(logging.CRITICAL + 1)

    def restore() -> None:
        for lg, level in saved:
            lg.setLevel(level)

    return restore


def _release_when_done(t: Ticket, _future: asyncio.Future[Any]) -> None:
    """A done-callback: :func:`_release` ``t``."""
    _release(t)


def _release(t: Ticket) -> None:
    """Drop what a finished ticket holds beyond its timestamps: its payload and its future
    (whose result is a view that keeps the whole batch output alive). The load generator
    has its own reference to the future; only the times are read afterwards. A cancelled
    ticket may still sit in the batcher's queue (which checks its future): kept as is."""
    if t.t_delivered:
        t.payload = None
        t.future = None  # type: ignore[assignment]


class _HttpTarget:
    def __init__(self, front: Any, payload_for: Callable[[int], Any]) -> None:
        self.front = front
        self.payload_for = payload_for
        self._loop = asyncio.get_running_loop()
        self._bodies: dict[int, bytes] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def tickets(self) -> dict[int, Ticket]:
        return self.front.tickets

    @property
    def handler_times(self) -> dict[int, tuple[float, float]]:
        return self.front.handler_times

    def reset(self, batcher: DynamicBatcher) -> None:
        self.front.batcher = batcher
        self.front.tickets = {}
        self.front.handler_times = {}

    def start(self, i: int) -> asyncio.Future[Any]:
        task = self._loop.create_task(self.front.send(i, self.front.encode(self.payload_for(i))))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def cancel_all(self) -> None:
        """Cancel the client requests still open (before the server and session close,
        so that none of them fails later with nobody to read its error)."""
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _counters_record(c: BatcherCounters) -> ServeCounters:
    return ServeCounters(
        submitted=c.submitted, accepted=c.accepted, rejected=c.rejected,
        execution_count=c.execution_count, inference_count=c.inference_count,
        avg_batch_size=c.avg_batch_size,
        batch_size_histogram={str(k): v for k, v in sorted(c.batch_size_histogram.items())},
        completed=c.completed, failed=c.failed, cancelled_queued=c.cancelled_queued,
        cancelled_in_flight=c.cancelled_in_flight, batch_errors=c.batch_errors,
        decision_reasons=dict(sorted(c.decision_reasons.items())))


def _r(x: float) -> float:
    return round(x, 4)


class RepeatAccumulator:
    """One load run's per-request values, folded in as each request ends (bounded
    memory: :class:`trtcheck.measure.serving.request_record.RequestReservoir`), then one
    :class:`ServeRepeat` (:meth:`repeat`).

    Give :meth:`on_end` to :func:`trtcheck.measure.serving.loadgen.run_load` as ``on_end``: an
    ``ok`` request's ticket (and HTTP handler times) are taken out of ``tickets`` /
    ``handler_times`` and turned into its latency and waterfall parts at once; any other
    request's are dropped. Accounting is exact whatever the run's length: every sent
    request is counted once under its outcome.

    Args:
        open_loop: latencies from the scheduled send (else from the actual send).
        http: the waterfall has ``http_ms``.
        tickets, handler_times: the target's (filled by it as requests start).
        late_threshold_ms: open loop: a send later than this counts as late.
        capacity: requests whose values the results keep (every stride-th beyond;
            default :data:`MAX_RAW_REQUESTS`).
    """

    def __init__(self, open_loop: bool, http: bool, tickets: dict[int, Ticket],
                 handler_times: dict[int, tuple[float, float]], late_threshold_ms: float,
                 capacity: int | None = None) -> None:
        from trtcheck.measure.serving.request_record import RequestReservoir

        capacity = MAX_RAW_REQUESTS if capacity is None else capacity
        self.open_loop = open_loop
        self.http = http
        self.tickets = tickets
        self.handler_times = handler_times
        self.late_threshold_ms = late_threshold_ms
        parts = [k for k in WATERFALL_PARTS if (open_loop or k != "send_lag_ms")
                 and (http or k != "http_ms")]
        self.parts = parts
        # per ok request: index, latency, parts, residual, batch size, enqueue time (s)
        self.ok = RequestReservoir(["index", "latency_ms", *parts, "residual_ms",
                                    "batch_size", "t_enqueue_s"], capacity)
        self.lags = RequestReservoir(["index", "send_lag_ms"], capacity)
        self.sent = 0
        self.late = 0
        self.first = math.inf  # earliest (scheduled, for open loop) send
        self.send_lo = math.inf
        self.send_hi = -math.inf
        self.last_ok_end = -math.inf
        self.errors: dict[str, int] = {}

    def on_end(self, i: int, t_sched: float, t_send: float, t_end: float, outcome: str,
               error: str) -> None:
        """One request ended (the signature of ``run_load``'s ``on_end``)."""
        ticket = self.tickets.pop(i, None)
        handler = self.handler_times.pop(i, None)
        if outcome == "not_sent":
            return
        self.sent += 1
        start = t_sched if self.open_loop else t_send
        self.first = min(self.first, start)
        self.send_lo = min(self.send_lo, t_send)
        self.send_hi = max(self.send_hi, t_send)
        if error:
            self.errors[error] = self.errors.get(error, 0) + 1
        if self.open_loop:
            lag = (t_send - t_sched) * 1e3
            self.lags.add((float(i), lag))
            self.late += lag > self.late_threshold_ms
        if outcome != OK or ticket is None or ticket.t_delivered == 0.0:
            return
        self.last_ok_end = max(self.last_ok_end, t_end)
        e2e = (t_end - start) * 1e3
        p = ticket.parts_s()
        vals: list[float] = []
        if self.open_loop:
            vals.append((t_send - t_sched) * 1e3)
        if self.http:
            h0, h1 = handler or (t_send, t_end)
            vals.append(((h0 - t_send) + (t_end - h1)) * 1e3)
            vals.append((ticket.t_enqueue - h0) * 1e3)
        else:
            vals.append((ticket.t_enqueue - t_send) * 1e3)
        vals += [p["queue_wait"] * 1e3, p["window_wait"] * 1e3, p["assembly"] * 1e3,
                 p["executor_hop"] * 1e3, p["compute"] * 1e3, p["result_dispatch"] * 1e3]
        self.ok.add((float(i), e2e, *vals, e2e - sum(vals), float(ticket.batch_size),
                     ticket.t_enqueue))

    def repeat(self, repeat: int, rec: LoadRecord, counters: BatcherCounters) -> ServeRepeat:
        """The :class:`ServeRepeat` of the run (``rec``: its record, for the outcome
        counts)."""
        counts = rec.outcome_counts()
        ok_count = self.ok.count
        first = self.first if self.sent else 0.0
        last = max(self.last_ok_end, first) if ok_count else first
        duration = max(last - first, 1e-9)
        rows = self.ok.kept_rows(order_by="index")  # request order
        col = {n: rows[:, j] for j, n in enumerate(self.ok.names)}

        def ms(name: str) -> list[float]:  # rounded as every per-request value (0.1 us)
            return np.round(col[name], 4).tolist()

        rep = ServeRepeat(
            repeat=repeat, latencies_ms=ms("latency_ms"),
            parts_ms={k: ms(k) for k in self.parts},
            batch_sizes=col["batch_size"].astype(np.int64).tolist(),
            enqueue_offsets_ms=np.round((col["t_enqueue_s"] - first) * 1e3, 4).tolist(),
            ok_count=ok_count, raw_stride=self.ok.stride,
            outcomes=counts, errors=dict(self.errors),
            latency=self.ok.summarize("latency_ms") if ok_count else None,
            duration_s=duration,
            throughput_queries_per_s=counts[OK] / duration if counts[OK] else 0.0,
            mean_batch_size=counters.avg_batch_size,
            max_batch_size=counters.max_batch_size_seen,
            counters=_counters_record(counters))
        if ok_count:
            rep.waterfall = [WaterfallPart(name=k, median_ms=self.ok.percentile(k, 0.5),
                                           p99_ms=self.ok.percentile(k, 0.99),
                                           mean_ms=self.ok.mean(k)) for k in self.parts]
            rep.residual_median_ms = self.ok.percentile("residual_ms", 0.5)
            rep.residual_p99_ms = self.ok.percentile("residual_ms", 0.99)
        del rows, col
        if self.open_loop and self.sent:
            rep.send_lag_ms = np.round(self.lags.kept_rows(order_by="index")[:, 1],
                                       4).tolist()
            rep.send_lag_p50_ms = self.lags.percentile("send_lag_ms", 0.5)
            rep.send_lag_p99_ms = self.lags.percentile("send_lag_ms", 0.99)
            rep.late_send_share = self.late / self.sent
            if self.sent > 1:
                span = self.send_hi - self.send_lo
                rep.achieved_send_rate_per_s = (self.sent - 1) / span if span > 0 else None
        return rep


def build_repeat(repeat: int, rec: LoadRecord, tickets: dict[int, Ticket],
                 handler_times: dict[int, tuple[float, float]], http: bool,
                 counters: BatcherCounters, late_threshold_ms: float) -> ServeRepeat:
    """Turn one recorded load run into a :class:`ServeRepeat` (waterfall included): its
    requests go through :class:`RepeatAccumulator` in request order, as a streamed run's
    do as they end.

    ``handler_times`` are the HTTP server's ``(start, end)`` per request (``http=True``).
    """
    acc = RepeatAccumulator(rec.shape.kind == "open", http, dict(tickets),
                            dict(handler_times), late_threshold_ms)
    for i, o in enumerate(rec.outcome):
        acc.on_end(i, rec.t_sched[i], rec.t_send[i], rec.t_end[i], o, rec.error[i])
    return acc.repeat(repeat, rec, counters)


def _med(vals: Sequence[float]) -> float:
    """Median over repeats (``trtcheck.stats``: linear interpolation, as everywhere)."""
    return tstats.percentile(list(vals), 0.5)


def _median(vals: Sequence[float | None]) -> float | None:
    v = [x for x in vals if x is not None]
    return float(_med(v)) if v else None


UNSTABLE_REPEATS_SPREAD = 0.2
"""Spread of the repeats' throughput, ``(max - min) / median``, above which a
configuration is ``unstable`` (``unstable-repeats``)."""


def per_request_sent(kind: str, reps: Sequence[ServeRepeat]) -> bool:
    """Whether :func:`repeat_throughput_spread` judges these repeats per request sent: an
    open load whose every repeat has an achieved send rate."""
    return kind == "open" and all(r.achieved_send_rate_per_s is not None
                                  and r.achieved_send_rate_per_s > 0 for r in reps)


def repeat_throughput_spread(kind: str, reps: Sequence[ServeRepeat]) -> float | None:
    """``(max - min) / median`` over the repeats of what the server's throughput varied by
    (``None`` with fewer than two repeats that measured it). A closed or burst load: the
    throughput (queries/s) itself. An open load: the throughput over each repeat's own
    achieved send rate, since a Poisson schedule of a fixed duration holds a random count
    (30 arrivals in 3 s vary by 26% between two schedules, one standard deviation) and
    the server's throughput follows what was sent; where a repeat has no send rate, the
    throughput."""
    vals = [r.throughput_queries_per_s for r in reps]
    if per_request_sent(kind, reps):
        vals = [v / float(r.achieved_send_rate_per_s)  # type: ignore[arg-type]
                for v, r in zip(vals, reps)]
    if len(vals) < 2 or min(vals) <= 0:
        return None
    return (max(vals) - min(vals)) / _med(vals)


def config_result(window_us: float, mb: int, shape: LoadShape,
                   reps: list[ServeRepeat], instances: int | None = None
                   ) -> ServeConfigResult:
    """One serving configuration from its repeats: medians over the repeats (throughput in
    queries/s, batch sizes, P50/P99 in ms, ok share, late sends), the repeat of median
    throughput, and warnings for requests that did not succeed or sends that were late
    (placed at ``LOAD window W ms max batch B``, ``... instances N`` when ``instances`` is
    given: a sweep over instance counts)."""
    qps = [r.throughput_queries_per_s for r in reps]
    order = sorted(range(len(reps)), key=lambda k: qps[k])
    med_idx = order[(len(order) - 1) // 2]
    total = [sum(v for k, v in r.outcomes.items() if k != "not_sent") for r in reps]
    ok_share = _med([r.outcomes.get(OK, 0) / t if t else 0.0
                                  for r, t in zip(reps, total)])
    cfg = ServeConfigResult(
        window_us=float(window_us), max_batch_size=mb,
        load=LoadSpec(label=shape.label, kind=shape.kind,
                      count=shape.count if shape.count < 10**9 else 0,
                      concurrency=shape.concurrency, rate_per_s=shape.rate_per_s,
                      arrival=shape.arrival),
        repeats=reps, median_repeat=med_idx,
        throughput_queries_per_s=float(_med(qps)),
        mean_batch_size=float(_med([r.mean_batch_size for r in reps])),
        max_batch_size_seen=int(round(_med([r.max_batch_size for r in reps]))),
        p50_ms=_median([r.latency.median_ms if r.latency else None for r in reps]),
        p99_ms=_median([r.latency.p99_ms if r.latency else None for r in reps]),
        ok_share=ok_share,
        late_send_share=_median([r.late_send_share for r in reps]),
        send_lag_p99_ms=_median([r.send_lag_p99_ms for r in reps]))
    where = (f"{shape.label} window {us_to_ms(window_us):g} ms max batch {mb}"
             + (f" instances {instances}" if instances is not None else ""))
    bad = {k: sum(r.outcomes.get(k, 0) for r in reps) for k in ("error", "rejected", "timeout")}
    if any(bad.values()):
        cfg.warnings.append(Finding(
            code="requests-not-ok", where=where,
            message="requests did not succeed: " + ", ".join(
                f"{v} {k}" for k, v in bad.items() if v) + f" over {len(reps)} repeat(s)",
            remedy="lower the load, raise --max-queue or --drain-timeout-s, or add --instances"))
    not_sent = [r.outcomes.get("not_sent", 0) for r in reps]
    if any(not_sent) and shape.count < 10**9:
        # a COUNT the sending bound cut short: the run is shorter than asked
        need = (f"; {shape.label} needs about {shape.count / shape.rate_per_s:.3g} s to "
                "send" if shape.kind == "open" and shape.rate_per_s > 0 else "")
        cfg.warnings.append(Finding(
            code="requests-not-sent", where=where,
            message=f"{max(not_sent)} of {shape.count} requests were not sent in the "
                    f"repeat that sent fewest ({', '.join(map(str, not_sent))} over "
                    f"{len(reps)} repeat(s)): the sending bound (--duration-s) ended the "
                    f"run first{need}",
            remedy="raise --duration-s, or lower COUNT"))
    if cfg.late_send_share is not None and cfg.late_send_share > 0.01:
        cfg.warnings.append(Finding(
            code="late-sends", where=where,
            message=f"{cfg.late_send_share:.1%} of sends were late (p99 send lag "
                    f"{cfg.send_lag_p99_ms:.2f} ms): the load generator could not keep the "
                    "schedule; latencies still count from the scheduled time",
            remedy="lower the rate, use --uvloop, or run on a less loaded machine"))
    spread = repeat_throughput_spread(shape.kind, reps)
    if spread is not None and spread > UNSTABLE_REPEATS_SPREAD:
        per_sent = " per request sent" if per_request_sent(shape.kind, reps) else ""
        cfg.warnings.append(Finding(
            code="unstable-repeats", where=where,
            message=f"throughput varied {min(qps):.1f}..{max(qps):.1f} queries/s across "
                    f"repeats ({spread:.0%}{per_sent})",
            remedy="raise --repeats and close other programs"))
        cfg.validity.append(Finding(
            code="unstable", severity="warning", where=where,
            message=f"throughput varied {min(qps):.1f}..{max(qps):.1f} queries/s across "
                    f"repeats ({spread:.0%}{per_sent}, more than "
                    f"{UNSTABLE_REPEATS_SPREAD:.0%} of the median)",
            remedy="raise --repeats and close other programs"))
    cfg.validity.extend(generator_validity(shape, reps, where))
    cfg.warnings.extend(no_batching_findings(window_us, mb, shape, cfg.mean_batch_size, where))
    return cfg


def _rate_floor(shape: LoadShape, reps: Sequence[ServeRepeat]) -> float:
    """The achieved send rate below which the sender, not the schedule, is to blame:
    :data:`GENERATOR_LIMITED_RATE_SHARE` of the target rate, less three standard errors
    of a Poisson schedule's own rate over the ``n`` sends of the run (a rate estimated
    from ``n`` exponential gaps has a relative standard error of ``1 / sqrt(n)``; a
    1-s schedule at 150 requests/s holds 134 arrivals about one time in ten). A constant
    schedule has no such error."""
    share = GENERATOR_LIMITED_RATE_SHARE
    if shape.arrival == "poisson":
        sent = [sum(v for k, v in r.outcomes.items() if k != "not_sent") for r in reps]
        n = min(sent) if sent else 0
        share -= 3.0 / math.sqrt(n) if n > 0 else share
    return max(0.0, share) * shape.rate_per_s


def generator_validity(shape: LoadShape, reps: Sequence[ServeRepeat], where: str
                       ) -> list[Finding]:
    """``generator-limited`` marks of an open-loop configuration: in the median repeat,
    more than :data:`GENERATOR_LIMITED_LATE_SHARE` of the sends were late with a p99 send
    lag over :data:`GENERATOR_LIMITED_LAG_SHARE` of the p99 latency (a smaller lag moves
    the claimed latencies by less than that share: a ``late-sends`` warning only), or the sender
    achieved less than :data:`GENERATOR_LIMITED_RATE_SHARE` of the target rate (less the
    schedule's own sampling error, :func:`_rate_floor`). Then the
    arrivals the server saw were the sender's catch-up bursts, not the schedule, and the
    latencies describe the load generator as much as the server."""
    if shape.kind != "open":
        return []
    late = _median([r.late_send_share for r in reps])
    rate = _median([r.achieved_send_rate_per_s for r in reps])
    lag = _median([r.send_lag_p99_ms for r in reps])
    p99 = _median([r.latency.p99_ms for r in reps if r.latency is not None])
    why: list[str] = []
    material = lag is None or p99 is None or p99 <= 0 or lag > GENERATOR_LIMITED_LAG_SHARE * p99
    if late is not None and late > GENERATOR_LIMITED_LATE_SHARE and material:
        why.append(f"{late:.1%} of sends were late"
                   + (f" (p99 send lag {lag:.3g} ms against a p99 latency of {p99:.3g} ms)"
                      if lag is not None and p99 is not None else ""))
    if rate is not None and shape.rate_per_s > 0 and shape.arrival != "trace" \
            and rate < _rate_floor(shape, reps):
        why.append(f"the sender reached {rate:.1f} of {shape.rate_per_s:g} requests/s")
    if not why:
        return []
    return [Finding(code="generator-limited", severity="error", where=where,
                    message="the load generator limited this run: " + " and ".join(why)
                            + "; its latencies cannot certify a budget",
                    remedy="lower the rate, use --uvloop, or run the load generator on a "
                           "less loaded machine")]


def no_batching_findings(window_us: float, max_batch_size: int, shape: LoadShape,
                         mean_batch_size: float, where: str) -> list[Finding]:
    """``window-without-batches``: a window > 0 with max batch > 1 whose mean batch
    stayed <= :data:`NO_BATCHING_MEAN_BATCH` only added latency. Why, in order: a closed
    loop of one client never has two requests waiting; an open loop whose rate puts fewer
    than one arrival in a window (``rate * window < 1``) rarely fills one; otherwise the
    requests reached the batcher one at a time (a saturated or serial stage in front of
    it, or an instance that takes each request as it comes). ``window_us``: the window,
    microseconds."""
    if window_us <= 0 or max_batch_size <= 1 or mean_batch_size <= 0 \
            or mean_batch_size > NO_BATCHING_MEAN_BATCH:
        return []
    if shape.kind == "closed" and shape.concurrency <= 1:
        why = ("the closed loop has 1 client: only one request is ever waiting, so no batch "
               "can form")
    elif shape.kind == "open" and shape.rate_per_s * us_to_s(window_us) < 1.0:
        why = (f"at {shape.rate_per_s:g} requests/s a {us_to_ms(window_us):g} ms window sees "
               f"{shape.rate_per_s * us_to_s(window_us):.2f} arrivals on average: the window is "
               "too short for the rate")
    else:
        why = ("requests reached the batcher one at a time: the instance (or a serial stage "
               "in front of it) was already saturated, so waiting collected nothing")
    return [Finding(code="window-without-batches", where=where,
                    message=f"window {us_to_ms(window_us):g} ms formed no batches (mean batch "
                            f"{mean_batch_size:.2f}): it only adds latency; {why}",
                    remedy="use window 0 for this load, or raise the concurrency / rate the "
                           "window is meant for")]


async def ameasure_serving(target: Backend | Callable[[Any], Any], *,
                           windows_us: Sequence[float] = (0, 20_000, 50_000, 100_000),
                           max_batch_sizes: Sequence[int] = (1, 8, 32),
                           loads: Sequence[str | LoadShape] = ("burst:64", "closed:32",
                                                               "open:3000"),
                           repeats: int = 3, preferred_batch_sizes: Sequence[int] = (),
                           instances: int = 1, max_queue_size: int = 65536,
                           on_full: str = "reject",
                           per_request_overhead_ms: float | None = None,
                           http: bool = False, max_duration_s: float = 2.0,
                           drain_timeout_s: float = 5.0, late_threshold_ms: float = 1.0,
                           warmup_requests: int = 8, seed: int = 0,
                           payload: Any = None, shapes: dict[str, list[int]] | None = None,
                           label: str | None = None, model_path: str | None = None,
                           executor: concurrent.futures.Executor | None = None,
                           progress: Callable[[str], None] | None = None) -> ServeRun:
    """Async form of :func:`measure_serving` (call it inside a running event loop)."""
    from trtcheck.backends.callable import CallableBackend

    if repeats < 1:
        raise UsageError(f"repeats must be >= 1, got {repeats}")
    if not windows_us or not max_batch_sizes or not loads:
        raise UsageError("windows, max batch sizes and loads must each have a value")
    for w in windows_us:
        if not w >= 0:
            raise UsageError(f"window must be >= 0 us, got {w!r}")
    backend = target if isinstance(target, Backend) else CallableBackend(target)
    shapes_ = [ld if isinstance(ld, LoadShape) else parse_load(ld, max_duration_s)
               for ld in loads]
    activated = False
    if not backend.is_active:
        backend.activate()
        activated = True
    front_srv = None
    tgt: Any = None
    own_pool: DaemonThreadPool | None = None
    incomplete: str | None = None
    configs: list[ServeConfigResult] = []
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    sigterm = _cancel_on_sigterm(loop, me)
    quiet = _quiet_aiohttp() if http else None
    try:
        fn = batch_function(backend)
        if executor is None and not is_async_callable(fn):
            # one long-lived pool for the whole sweep, as a server has: per-thread state
            # (e.g. cuDNN autotuning caches) warmed in one run stays warm in the next
            own_pool = DaemonThreadPool(instances, thread_name_prefix="trtcheck-serve")
            executor = own_pool
        if payload is None and not isinstance(backend, CallableBackend):
            payload = _default_payload(backend, shapes, seed)
        elif not isinstance(backend, CallableBackend) and not callable(payload):
            _check_payload_rows(backend, payload)
        payload_for: Callable[[int], Any] = payload if callable(payload) else (lambda i: payload)
        overhead = (per_request_overhead_ms if per_request_overhead_ms is not None
                    else float(getattr(backend, "per_request_overhead_ms", 0.0)))
        front = SerialFront(overhead) if overhead > 0 else None
        loop_name = type(asyncio.get_running_loop()).__module__.split(".")[0]
        settings = ServeSettings(
            windows_us=[float(w) for w in windows_us],
            max_batch_sizes=[int(m) for m in max_batch_sizes],
            loads=[s.label for s in shapes_], repeats=repeats,
            preferred_batch_sizes=sorted(set(int(p) for p in preferred_batch_sizes)),
            instances=instances, max_queue_size=max_queue_size, on_full=on_full,
            per_request_overhead_ms=overhead, http=http, max_duration_s=max_duration_s,
            drain_timeout_s=drain_timeout_s, late_threshold_ms=late_threshold_ms,
            warmup_requests=warmup_requests, seed=seed,
            event_loop="uvloop" if loop_name == "uvloop" else "asyncio",
            payload=_describe_payload(payload_for(0)))
        if http:
            from trtcheck.measure.serving.http_front import HttpFront

            front_srv = HttpFront(payload_for(0))
            front_srv.front_stage = front
            need = max([s.count if s.kind == "burst" else s.concurrency if s.kind == "closed"
                        else 64 for s in shapes_] + [1])
            await front_srv.start(prewarm=need)
            tgt = _HttpTarget(front_srv, payload_for)
        else:
            tgt = _InProcessTarget(payload_for, front)
        total = len(shapes_) * len(windows_us) * len(max_batch_sizes)
        k = 0
        begin_steps(progress, total * repeats, "run", "serve")

        async def _sweep() -> None:
            nonlocal own_pool, executor, k
            for shape in shapes_:
                for w in windows_us:
                    for mb in max_batch_sizes:
                        k += 1
                        pref = tuple(p for p in preferred_batch_sizes if p <= mb)
                        policy = BatchingPolicy(int(mb), float(w), pref)
                        reps: list[ServeRepeat] = []
                        for r in range(repeats):
                            b = DynamicBatcher(fn, policy, instances=instances,
                                               max_queue_size=max_queue_size, on_full=on_full,
                                               executor=executor)
                            try:
                                tgt.reset(b)
                                if front is not None:
                                    front.reset()
                                if warmup_requests > 0:
                                    warm = LoadShape("burst", warmup_requests, label="warmup")
                                    await run_load(warm, tgt.start, max_duration_s=max_duration_s,
                                                   drain_timeout_s=drain_timeout_s,
                                                   rejected_types=(QueueFull,))
                                    b.counters = BatcherCounters()
                                    tgt.reset(b)
                                    if front is not None:
                                        front.reset()
                                # streamed: each request is folded in as it ends
                                acc = RepeatAccumulator(shape.kind == "open", http,
                                                        tgt.tickets, tgt.handler_times,
                                                        late_threshold_ms)
                                rec = await run_load(shape, tgt.start, max_duration_s=max_duration_s,
                                                     drain_timeout_s=drain_timeout_s, seed=seed + r,
                                                     rejected_types=(QueueFull,),
                                                     on_end=acc.on_end)
                            finally:
                                await b.aclose(drain=False, timeout_s=drain_timeout_s)
                                if b.abandoned_batches and own_pool is not None:
                                    # a batch call that never returned keeps a pool thread:
                                    # the next run gets fresh threads, the hung one is abandoned
                                    own_pool.shutdown(wait=False)
                                    own_pool = DaemonThreadPool(
                                        instances, thread_name_prefix="trtcheck-serve")
                                    executor = own_pool
                            rep = acc.repeat(r, rec, b.counters)
                            reps.append(rep)
                            if progress:
                                lat = rep.latency
                                step_done(progress, f"[{k}/{total}] {shape.label} window "
                                          f"{us_to_ms(w):g} ms max batch "
                                          f"{mb} repeat {r + 1}/{repeats}: "
                                          f"{rep.throughput_queries_per_s:.1f} q/s, mean batch "
                                          f"{rep.mean_batch_size:.2f}, p50 "
                                          f"{lat.median_ms if lat else float('nan'):.2f} ms")
                        configs.append(config_result(w, int(mb), shape, reps))
        try:
            await _sweep()
        except asyncio.CancelledError:
            # Ctrl-C (asyncio.run cancels the main task) or SIGTERM: keep what finished
            if me is None or not me.cancelling():
                raise
            while me.uncancel():
                pass
            incomplete = (f"interrupted by {'SIGTERM' if sigterm.fired else 'SIGINT'}: "
                          f"{len(configs)} of {total} configuration(s) measured")
            if isinstance(tgt, _HttpTarget):
                await tgt.cancel_all()
        info = backend.info
        return ServeRun(label=label or info.name,
                        model_path=model_path or str(getattr(backend, "model_path", "")
                                                     or info.options.get("function", "")
                                                     or info.name),
                        backend=info, settings=settings, configs=configs,
                        incomplete=incomplete)
    finally:
        sigterm.remove()
        if own_pool is not None:
            own_pool.shutdown(wait=False)  # never join a thread stuck in a hung batch
        if front_srv is not None:
            if isinstance(tgt, _HttpTarget):
                await tgt.cancel_all()
            await front_srv.close()
        if quiet is not None:
            quiet()
        if activated:
            backend.deactivate()


def measure_serving(target: Backend | Callable[[Any], Any], *, use_uvloop: bool = False,
                    **kwargs: Any) -> ServeRun:
    """Measure a backend or function behind the embedded dynamic batcher.

    Args:
        target: a :class:`~trtcheck.backends.base.Backend` (activated here if it is not
            yet, and deactivated after) or a function ``fn(batch) -> outputs``, sync or
            ``async``. The batch is what the default assembler builds from the payloads
            (dict of arrays stacked on axis 0, an array, or a list of payloads); outputs
            must be a list of one result per request, an array or a dict of arrays with
            one row per request.
        use_uvloop: run on uvloop (``pip install uvloop``, the ``fast`` extra).
        windows_us: batching windows, microseconds, each >= 0 (Triton
            ``max_queue_delay_microseconds``).
        max_batch_sizes: Triton ``max_batch_size`` values, each >= 1.
        loads: load specs (``burst:N``, ``closed:C[:COUNT]``,
            ``open:RATE[:poisson|constant][:COUNT]``, ``trace:PATH``) or
            :class:`~trtcheck.measure.serving.loadgen.LoadShape` objects.
        repeats: runs per configuration (headline = median), >= 1.
        preferred_batch_sizes: Triton preferred sizes (those <= max batch are used).
        instances: concurrent execution instances; max_queue_size / on_full: queue bound
            and back-pressure mode (``"reject"`` or ``"wait"``).
        per_request_overhead_ms: serial front-stage cost per request (default: the
            backend's ``per_request_overhead_ms`` attribute, else 0).
        http: put the loopback aiohttp front between load generator and batcher.
        max_duration_s, drain_timeout_s: bounds per run (sending; finishing after it).
        late_threshold_ms: open loop: a send later than this is counted late.
        warmup_requests: burst of this many sent and discarded before each run.
        seed: Poisson seed (repeat r uses ``seed + r``), also for generated inputs.
        payload: one request's payload, or ``payload(i) -> payload``; default: a
            generated batch-1 feed from the backend's inputs (``None`` for functions).
            For a Backend target an array payload must hold one sample (axis 0 = 1):
            batch sizes count requests. A plain function decides what a request is.
        shapes: concrete input shapes for dynamic dims (as ``--shapes``); axis 0 of a
            batched input must be 1 (one sample per request, :func:`request_shapes`).
        label, model_path: recorded in the result.
        executor: thread pool for a sync batch function (default: one pool of
            ``instances`` threads kept for the whole sweep). Pass your own to warm
            per-thread state first (e.g. cuDNN autotuning, which PyTorch caches per
            thread: a fresh thread re-tunes every new batch shape, measured at 160-360 ms
            per first batch of 32 on an H200).
        progress: a progress callback (:mod:`trtcheck.measure.progress`): one step
            and one line per run.

    Returns:
        a :class:`~trtcheck.results.serve.ServeRun` (put it in ``Results.serve``).

    Raises:
        UsageError: bad settings, or called from inside a running loop.
        InputError / EnvironmentProblem: from the backend.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise UsageError("measure_serving() was called inside a running event loop",
                         "use `await ameasure_serving(...)` there")
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            from trtcheck.errors import EnvironmentProblem

            raise EnvironmentProblem("uvloop is not installed",
                                     "pip install uvloop or drop --uvloop") from None
        # the coroutine is made only once it will be run: none is left never awaited
        return uvloop.run(ameasure_serving(target, **kwargs))
    return asyncio.run(ameasure_serving(target, **kwargs))


def default_report_sweep(backend: Backend, *, progress: Callable[[str], None] | None = None,
                         time_budget_s: float = 25.0,
                         shapes: dict[str, list[int]] | None = None,
                         seed: int = 0) -> ServeRun:
    """A small serving sweep for ``trtcheck report --serve`` (well under 30 s).

    Measures the batch-1 time ``t1`` of ``backend`` first (median of 5 runs), then sweeps
    windows 0, 2 and 10 ms (2-10 ms windows rarely collect a batch in a Python service)
    at max batch 8, for a burst of 64 (batching's best case) and open loops at
    :data:`REPORT_SWEEP_LOAD_SHARES` of one instance's batch-1 capacity ``1 / t1``
    (capped at 2,000/s), one repeat each, about 1 s of arrivals and at least
    :data:`REPORT_SWEEP_MIN_REQUESTS` requests per run. Rates below capacity keep the
    open-loop runs valid for calibrating the advice's serving overheads (a run above
    capacity measures a growing queue and, on a CPU host, a model competing with the load
    generator). The burst size and
    durations scale down when ``t1`` is large so the whole sweep stays inside
    ``time_budget_s`` (measured: 11.5 s for the demo ResNet-18 on ONNX Runtime CPU,
    t1 ~ 70 ms, on a loaded 2-core machine). ``shapes`` gives dynamic dims (as
    ``--shapes``; axis 0 is the per-request batch of 1) and ``seed`` the input data.
    """
    was_active = backend.is_active
    if not was_active:
        backend.activate()
    try:
        fn = batch_function(backend)
        payload = _default_payload(backend, shapes, seed, one_sample=False)
        samples = []
        for _ in range(6):
            t0 = _clock()
            if is_async_callable(fn):
                asyncio.run(fn(payload))
            else:
                fn(payload)
            samples.append(_clock() - t0)
        t1 = max(tstats.percentile(samples[1:], 0.5), 1e-5)
        burst = int(max(8, min(64, time_budget_s / 12 / max(t1, 1e-4))))
        dur = max(0.2, min(1.0, time_budget_s / 12))
        loads = [f"burst:{burst}"]
        spans = []
        for share in REPORT_SWEEP_LOAD_SHARES:
            rate = min(2000.0, share / t1)
            rate = round(rate) if rate >= 10 else round(rate, 1)
            count = max(REPORT_SWEEP_MIN_REQUESTS, int(rate * dur))
            spans.append(count / max(rate, 1e-3))
            loads.append(f"open:{rate:g}:poisson:{count}")
        # the time bound lets every Poisson schedule run out by its count (COUNT arrivals
        # take a Gamma(COUNT)-distributed span)
        bound_s = max(2 * dur, REPORT_SWEEP_SPAN_MARGIN * max(spans))
        return measure_serving(backend, windows_us=(0, 2000, 10_000), max_batch_sizes=(8,),
                               payload=payload,
                               loads=loads, repeats=1,
                               max_duration_s=min(bound_s, max(2 * dur, time_budget_s / 3)),
                               drain_timeout_s=min(5.0, time_budget_s / 6),
                               warmup_requests=4, progress=progress)
    finally:
        if not was_active:
            backend.deactivate()
