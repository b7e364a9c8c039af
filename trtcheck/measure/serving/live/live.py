"""Serving measurement of a live KServe v2 server (Triton): ``trtcheck serve --url``.

:func:`measure_live` drives a running server with the same load shapes and schedules as
the embedded batcher (:mod:`trtcheck.measure.serving.loadgen`: burst, closed loop, open loop
Poisson/constant/trace; open-loop latency from the **scheduled** send time, late sends
counted) and reads the server's own truth around every run:

* ``GET /v2/models/NAME/stats`` before and after the run (:class:`TritonStatsDelta`):
  inferences vs executions (the mean batch the server formed), per-batch-size executions
  and compute times, queue and compute times;
* ``GET /v2/models/NAME/config`` (Triton's model configuration) with the run.

The load generator runs in its own processes (``client_processes``, spawned), each with
its own event loop and pre-warmed connections, so nothing in the measuring process can
starve it; an open-loop schedule is dealt round-robin to the processes, and every
process anchors its share to one common start (:func:`signal_go`). Over HTTP each
process encodes the request once and sends it over keep-alive connections
(:mod:`trtcheck.measure.serving.live.kserve_http`); over gRPC it uses ``tritonclient.grpc.aio``. Every request
ends in one outcome (``ok``, ``error``, ``timeout``, ``not_sent``); a failed request is
counted, never dropped. A response whose output shapes do not match the model's metadata
is an ``error`` (``BadResponse``).

Sweeps (``windows_us``, ``max_batch_sizes``, ``instances``, ``preferred_batch_sizes``)
load the model once per configuration through Triton's model-repository API with a
configuration override (the server must run with ``--model-control-mode=explicit``);
the configuration the model had before is loaded again afterwards.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing as mp
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trtcheck import stats as tstats
from trtcheck.errors import EnvironmentProblem, InputError, UsageError
from trtcheck.measure.serving.live.kserve import (
    Endpoint, KServeClient, error_text, is_unreachable, make_client, parse_url,
)
from trtcheck.measure.interrupt import (
    ctrl_c_blocked_for_children,
    interrupt_name,
    interrupts_deferred,
    interrupts_held,
    sigterm_as_interrupt,
)
from trtcheck.measure.progress import begin_steps, step_done
from trtcheck.measure.serving.live.kserve_http import MAX_CONNECTIONS
from trtcheck.measure.serving.live.live_record import LiveRunRecord
from trtcheck.measure.serving.live.target import open_target, parse_endpoint, target_kind
from trtcheck.measure.serving.loadgen import (
    ERROR, NOT_SENT, OK, PRECISE_SPIN_S, LoadRecord, LoadShape, parse_load, precise_loop,
    run_load,
)
from trtcheck.results.bench import BackendInfo
from trtcheck.results.kserve_answers import (
    BadAnswer, BadResponse, check_model_config, check_model_metadata, check_model_stats,
    check_stats_pair,
)
from trtcheck.results.serve import (
    LiveSplit, LiveTarget, ServeConfigResult, ServeCounters, ServeRepeat, ServeRun,
    ServeSettings, TritonBatchStat, TritonDuration, TritonStatsDelta, WaterfallPart,
    cold_batch_sizes,
)
from trtcheck.results.stats import Finding
from trtcheck.units import us_to_ms

_clock = time.perf_counter

#: KServe v2 datatype -> NumPy dtype (``BYTES`` is an object array of ``bytes``).
KSERVE_DTYPES: dict[str, Any] = {
    "BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
    "UINT64": np.uint64, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32,
    "INT64": np.int64, "FP16": np.float16, "FP32": np.float32, "FP64": np.float64,
    "BYTES": np.object_,
}
#: Seconds the load processes may take to start, connect and warm up.
START_TIMEOUT_S = 120.0
#: Seconds after a run that the statistics may take to count its requests.
STATS_SETTLE_S = 2.0
#: Seconds an interrupted sweep may take to load the model's original configuration again.
RESTORE_TIMEOUT_S = 30.0
#: Seconds a stopped load process may take to exit before it is killed.
STOP_TIMEOUT_S = 2.0
#: Seconds between the go of several local load processes (after the measured time to
#: signal them all) and the common start their shares' schedules are anchored to.
LOCAL_START_LEAD_S = 0.005
#: Most bytes of one input tensor trtcheck generates for a request.
MAX_REQUEST_BYTES = 256 * 2**20


# --------------------------------------------------------------------------- payload


@dataclass(frozen=True)
class TensorSpec:
    """One model input or output as the server describes it.

    Attributes:
        name: tensor name; datatype: KServe v2 datatype (``"FP32"``...).
        shape: the request's shape (inputs: concrete; outputs: ``-1`` where any size is
            accepted).
    """

    name: str
    datatype: str
    shape: tuple[int, ...]


def request_tensors(metadata: dict[str, Any], config: dict[str, Any],
                    shapes: dict[str, list[int]] | None = None,
                    arrays: dict[str, np.ndarray] | None = None,
                    seed: int = 0) -> tuple[dict[str, np.ndarray], list[TensorSpec],
                                            list[TensorSpec]]:
    """One request's input arrays and the expected outputs, from the model's metadata.

    A model that batches (``max_batch_size`` > 0 in its configuration) takes one sample
    per request: axis 0 is 1 (batch sizes count requests, as in the embedded batcher).
    Other variable dimensions (``-1``) need ``shapes`` (``--shapes NAME:DIMS``) or an
    array in ``arrays`` (``--inputs FILE.npz``). Generated data is seeded: floats standard
    normal, integers in [0, 10), booleans random, BYTES ``b"trtcheck"``.

    Returns:
        ``(inputs by name, input specs, output specs)``; output specs have axis 0 = 1 on
        a batching model and ``-1`` where the metadata leaves a dimension open.

    Raises:
        InputError: an unknown ``--shapes``/``--inputs`` name, a variable dimension
            without a shape, a batch other than 1 on a batching model, an array of the
            wrong shape, an unsupported datatype, or an input over
            :data:`MAX_REQUEST_BYTES`.
        EnvironmentProblem: the metadata or configuration fails its check.
    """
    from trtcheck.load.shapes import format_shape

    metadata = _checked(check_model_metadata, metadata, "model metadata")
    config = _checked(check_model_config, config, "model configuration")
    batching = int(config.get("max_batch_size", 0) or 0) > 0
    shapes = dict(shapes or {})
    arrays = dict(arrays or {})
    ins = metadata.get("inputs", [])
    names = [t["name"] for t in ins]
    for what, given in (("--shapes", shapes), ("--inputs", arrays)):
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise InputError(f"{what} names {', '.join(unknown)}, which the model does not "
                             f"have", f"its inputs are: {', '.join(names) or 'none'}")
    rng = np.random.default_rng(seed)
    feed: dict[str, np.ndarray] = {}
    in_specs: list[TensorSpec] = []
    for t in ins:
        name, dt = t["name"], str(t["datatype"])
        if dt not in KSERVE_DTYPES:
            raise InputError(f"input {name!r} has datatype {dt}, which trtcheck cannot "
                             "generate", "give its data with --inputs FILE.npz")
        meta = [int(d) for d in t.get("shape", [])]
        want = list(meta)
        if batching and want:
            want[0] = 1
        if name in shapes:
            given_dims = list(shapes[name])
            if len(given_dims) != len(want) or any(
                    m >= 0 and g != m for m, g in zip(want, given_dims)):
                raise InputError(f"--shapes {name}:{format_shape(given_dims)} does not fit "
                                 f"the model's {format_shape(meta)}"
                                 + (" (axis 0 is one sample per request)" if batching
                                    else ""), f"e.g. --shapes {name}:"
                                 + format_shape([1 if d < 0 else d for d in want]))
            want = given_dims
        if name in arrays:
            arr = np.asarray(arrays[name])
            if batching and arr.ndim == len(want) - 1:
                arr = arr[None, ...]
            if arr.ndim != len(want) or any(w >= 0 and a != w
                                            for w, a in zip(want, arr.shape)):
                raise InputError(f"--inputs array {name!r} has shape "
                                 f"{format_shape(arr.shape)}; the model takes "
                                 f"{format_shape(want)} per request",
                                 "give one request's tensor (axis 0 = 1 on a batching "
                                 "model)")
            feed[name] = arr.astype(KSERVE_DTYPES[dt]) if dt != "BYTES" else arr
        else:
            if any(d < 0 for d in want):
                raise InputError(f"input {name!r} has variable dimensions "
                                 f"{format_shape(meta)}",
                                 f"give them with --shapes {name}:"
                                 + format_shape([1 if d < 0 else d for d in want]))
            np_dt = KSERVE_DTYPES[dt]
            nbytes = math.prod(want) * (8 if dt == "BYTES" else np.dtype(np_dt).itemsize)
            if nbytes > MAX_REQUEST_BYTES:
                raise InputError(f"input {name!r} of shape {format_shape(want)} would be "
                                 f"{nbytes:,} bytes per request; trtcheck sends at most "
                                 f"{MAX_REQUEST_BYTES:,}", "give smaller dimensions with "
                                 f"--shapes {name}:DIMS (or check the model's metadata)")
            if dt == "BYTES":
                feed[name] = np.full(want, b"trtcheck", dtype=np.object_)
            elif dt == "BOOL":
                feed[name] = rng.random(want) < 0.5
            elif np.issubdtype(np_dt, np.floating):
                feed[name] = rng.standard_normal(want).astype(np_dt)
            else:
                feed[name] = rng.integers(0, 10, size=want).astype(np_dt)
        in_specs.append(TensorSpec(name, dt, tuple(int(d) for d in feed[name].shape)))
    outs = []
    for t in metadata.get("outputs", []):
        dims = [int(d) for d in t.get("shape", [])]
        if batching and dims:
            dims[0] = 1
        outs.append(TensorSpec(t["name"], str(t["datatype"]), tuple(dims)))
    return feed, in_specs, outs


def _checked(check: Callable[[Any], dict[str, Any]], doc: Any, what: str) -> dict[str, Any]:
    """``check(doc)`` (:mod:`trtcheck.results.kserve_answers`); a bad answer is one
    :class:`EnvironmentProblem` naming the field."""
    try:
        return check(doc)
    except BadAnswer as exc:
        raise EnvironmentProblem(f"the server's {what} has a bad {exc.field or 'answer'}: "
                                 f"{exc.reason}", "check the server (trtcheck reads "
                                 "Triton 2.x answers)") from None


def describe_payload(feed: dict[str, np.ndarray]) -> str:
    """``"NAME dtype [dims], ..."`` of one request."""
    return ", ".join(f"{k} {v.dtype} {list(v.shape)}" for k, v in feed.items())


# --------------------------------------------------------------------------- load process


@dataclass
class LoadJob:
    """What one load process runs (picklable)."""

    url: str
    protocol: str
    address: str
    model: str
    version: str
    feed: dict[str, np.ndarray]
    outputs: list[TensorSpec]
    shape: LoadShape
    seed: int
    max_duration_s: float
    drain_timeout_s: float
    warmup_requests: int
    prewarm_connections: int
    late_threshold_ms: float = 1.0


@dataclass
class LoadResult:
    """What one load process sends back: its run's record, bounded whatever the count
    (:class:`trtcheck.measure.serving.live.live_record.LiveRunRecord`; perf_counter seconds, the
    system-wide monotonic clock) and the first message per error kind."""

    record: LiveRunRecord
    messages: dict[str, str]
    warmup_errors: dict[str, str] = field(default_factory=dict)


def _error_kind(exc: BaseException) -> str:
    if isinstance(exc, BadResponse):
        return "BadResponse"
    status_of = getattr(exc, "status", None)  # tritonclient's exceptions: a method
    status = status_of() if callable(status_of) else None
    if status:
        s = str(status)
        return f"HTTP {s}" if s.isdigit() else f"gRPC {s.replace('StatusCode.', '')}"
    if is_unreachable(exc):
        return "ConnectionError"
    return type(exc).__name__


def check_outputs(result: Any, outputs: list[TensorSpec]) -> None:
    """Check one inference answer (a tritonclient ``InferResult``) against the expected
    outputs: each present, readable, and of the metadata's shape (``-1``: any size).

    Raises:
        BadResponse: naming the output (an empty one says so: the numpy 2 trap of the
            python backend, :data:`NUMPY2_EMPTY_OUTPUT_HINT`).
    """
    for o in outputs:
        try:
            with warnings.catch_warnings():  # a value out of the dtype's range: inf
                warnings.simplefilter("ignore")
                arr = result.as_numpy(o.name)
        except Exception as exc:  # noqa: BLE001 - tritonclient decoding a bad answer
            text = error_text(exc)
            if "size 0" in text:
                raise BadResponse(f"output {o.name!r} arrived empty (0 elements) though "
                                  f"the model's metadata says {list(o.shape)}: {text}"
                                  ) from None
            raise BadResponse(f"output {o.name!r} is unreadable: {text}") from None
        if arr is None:
            raise BadResponse(f"the response has no output {o.name!r}")
        shp = tuple(int(d) for d in arr.shape)
        if len(shp) != len(o.shape) or any(w >= 0 and w != g for w, g in zip(o.shape, shp)):
            raise BadResponse(f"output {o.name!r} has shape {list(shp)}; the model's metadata "
                              f"says {list(o.shape)}")


async def run_job(job: LoadJob, ready: Callable[[dict[str, str]], None],
                  wait_go: Callable[[], bool],
                  start_at: Callable[[], float | None] | None = None
                  ) -> LoadResult | None:
    """The load process's work: open and warm the connections, send the warm-up burst,
    call ``ready(warm-up errors by kind)``, then ``wait_go()`` (blocking; ``False``:
    stop without running), then run ``job.shape`` on the running loop.

    ``start_at``, called once ``wait_go()`` said go, gives the run's start
    (:func:`time.perf_counter` seconds; ``None`` or no ``start_at``: when the run
    begins, as a lone local load process does): the run's schedule is anchored to it
    (:func:`~trtcheck.measure.serving.loadgen.run_load`'s ``t0_s``), so shares given one
    common start send one schedule; the record's ``t_began - t_start`` (also its
    ``start_late_s``) is how late the run began.

    Returns:
        the :class:`LoadResult`, or ``None`` when it stopped before the run (warm-up
        failed, connections could not open, or ``wait_go()`` said no).
    """
    ep = Endpoint(job.url, job.protocol, job.address)
    from trtcheck.measure.serving.live.kserve import import_client

    mod = import_client(job.protocol)
    inputs = []
    for name, arr in job.feed.items():
        t = mod.InferInput(name, list(arr.shape), _datatype(arr))
        t.set_data_from_numpy(arr)
        inputs.append(t)
    outs = [mod.InferRequestedOutput(o.name) for o in job.outputs]
    messages: dict[str, str] = {}
    kinds: dict[int, str] = {}
    current: dict[int, str] = kinds

    def failed(i: int, exc: BaseException) -> None:
        kind = _error_kind(exc)
        current[i] = kind
        messages.setdefault(kind, error_text(exc))

    if job.protocol == "http":
        # the load itself: one encoded request, keep-alive connections, a C parser
        from trtcheck.measure.serving.live.kserve_http import HttpInferPool, encode_infer_request

        host, _, port = job.address.rpartition(":")
        pool = HttpInferPool(host, int(port), encode_infer_request(
            job.address, job.model, job.version, inputs, outs),
            check=lambda r: check_outputs(r, job.outputs))
        client: Any = None

        http_pool = pool

        def send(i: int) -> asyncio.Future[Any]:
            fut = http_pool.start()

            def done(f: asyncio.Future[Any]) -> None:
                exc = None if f.cancelled() else f.exception()
                if exc is not None:
                    failed(i, exc)

            fut.add_done_callback(done)
            return fut
    else:
        pool = None
        client = make_client(ep)

        async def one(i: int) -> None:
            try:
                r = await client.infer(job.model, inputs, model_version=job.version,
                                       outputs=outs or None)
                check_outputs(r, job.outputs)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                failed(i, exc)
                raise

        def send(i: int) -> asyncio.Future[Any]:
            return loop.create_task(one(i))

    loop = asyncio.get_running_loop()
    start = send
    try:
        if job.prewarm_connections > 0:
            # open (and keep alive) the connections the run will need before it starts
            if pool is not None:
                try:
                    await pool.open(job.prewarm_connections)
                except (OSError, asyncio.TimeoutError) as exc:
                    ready({"ConnectionError": error_text(exc) or type(exc).__name__})
                    return None
        warm_errors: dict[str, str] = {}
        if job.warmup_requests > 0:
            current = {}
            warm = LoadShape("burst", job.warmup_requests, label="warmup")
            wrec = await run_load(warm, start, max_duration_s=job.max_duration_s,
                                  drain_timeout_s=job.drain_timeout_s)
            if not wrec.indices(OK):
                warm_errors = dict(messages) or {"timeout": "no warm-up request finished"}
            messages.clear()
            current = kinds
        ready(warm_errors)
        if warm_errors or not wait_go():
            return None
        record = LiveRunRecord(open_loop=job.shape.kind == "open",
                               late_threshold_ms=job.late_threshold_ms)

        def on_end(i: int, sched: float, send: float, end: float, outcome: str,
                   err: str) -> None:  # streamed: the error's kind as classified
            record.on_end(i, sched, send, end, outcome, kinds.pop(i, err))

        rec: LoadRecord = await run_load(job.shape, start, max_duration_s=job.max_duration_s,
                                         drain_timeout_s=job.drain_timeout_s, seed=job.seed,
                                         spin_s=PRECISE_SPIN_S, on_end=on_end,
                                         t0_s=None if start_at is None else start_at())
    finally:
        if pool is not None:
            pool.close()
        else:
            try:
                await asyncio.wait_for(client.close(), 5.0)
            except BaseException:  # noqa: BLE001 - closing is best effort
                pass
    record.outcomes[NOT_SENT] = rec.outcome_counts()[NOT_SENT]
    record.t_start, record.t_stop_sending, record.t_done = (rec.t_start, rec.t_stop_sending,
                                                            rec.t_done)
    record.t_began = rec.t_began
    record.start_late_s = [rec.t_began - rec.t_start]
    return LoadResult(record, messages)


def _datatype(arr: np.ndarray) -> str:
    if arr.dtype == np.object_:
        return "BYTES"
    for k, v in KSERVE_DTYPES.items():
        if v is not np.object_ and arr.dtype == np.dtype(v):
            return k
    raise InputError(f"cannot send an array of dtype {arr.dtype}")


def _exit_with_parent() -> None:
    """In a load process: exit at once when the process that started it is gone (killed
    hard, so it could not stop its load processes). A daemon thread waits on the
    parent's sentinel (a pipe whose write end only the parent holds: it reads as closed
    the moment the parent exits, however it exits)."""
    parent = mp.parent_process()
    if parent is None:
        return

    def watch() -> None:
        from multiprocessing.connection import wait

        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="trtcheck-parent-watch").start()


def _worker(conn: Any) -> None:
    """Entry point of one load process: receive its :class:`LoadJob` through ``conn``,
    connect, warm up, report ready, wait for go, run, send the :class:`LoadResult` (or
    ``("error", text)``) back.

    Ctrl-C at a terminal reaches the whole process group: a load process starts with
    SIGINT blocked (:func:`~trtcheck.measure.interrupt.ctrl_c_blocked_for_children`),
    ignores it besides, and the measuring process stops it (SIGTERM). It exits by
    itself when the measuring process is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()
    try:
        job: LoadJob = conn.recv()
    except (EOFError, OSError):  # the measuring process stopped before sending it
        conn.close()
        return

    def ready(warm_errors: dict[str, str]) -> None:
        conn.send(("ready", warm_errors))

    start: list[float | None] = [None]

    def wait_go() -> bool:
        msg = conn.recv()
        while msg == "sync":  # the measuring process timing its signal (run_processes)
            msg = conn.recv()
        if isinstance(msg, tuple) and msg[0] == "go":  # with the common start
            start[0] = float(msg[1])
            return True
        return msg == "go"

    try:
        send = target_kind(job.protocol).resolve("send")  # run_job for KServe v2
        loop = precise_loop()  # timers to 0.1 ms: the scheduler need not spin for long
        try:
            res = loop.run_until_complete(send(job, ready, wait_go,
                                               start_at=lambda: start[0]))
        finally:
            loop.close()
        conn.send(("done", res))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as one line
        try:
            conn.send(("error", f"{type(exc).__name__}: {error_text(exc)}"))
        except Exception:  # noqa: BLE001
            pass
    finally:
        conn.close()


def process_share(shape: LoadShape, seed: int, k: int, n: int) -> LoadShape | None:
    """Process ``k`` of ``n``'s share of ``shape`` (``None``: nothing to send)."""
    if n == 1:
        return shape
    if shape.kind == "burst":
        c = shape.count // n + (1 if k < shape.count % n else 0)
        return LoadShape("burst", c, label=shape.label) if c else None
    if shape.kind == "closed":
        c = shape.concurrency // n + (1 if k < shape.concurrency % n else 0)
        if not c:
            return None
        count = shape.count if shape.count >= 10**9 else max(1, shape.count * c //
                                                            shape.concurrency)
        return LoadShape("closed", count, concurrency=c, label=shape.label)
    offs = shape.schedule_s(seed)[k::n]
    if not len(offs):
        return None
    return LoadShape("open", len(offs), rate_per_s=shape.rate_per_s / n, arrival="trace",
                     trace_s=tuple(float(x) for x in offs), label=shape.label,
                     count_from_duration=shape.count_from_duration)


def run_processes(jobs: list[LoadJob], between: Callable[[], None],
                  timeout_s: float) -> list[LoadResult]:
    """Start one spawned process per job, wait until every one is connected and warmed
    up, call ``between()`` (e.g. read the server's statistics), then let them all run.
    Several processes run from one common start (:func:`signal_go`): each anchors its
    share of the schedule to it, so the shares send one schedule however late each
    process gets going (its record's ``start_late_s``); one process starts when its run
    begins. On any exception (Ctrl-C/SIGTERM included) every process is stopped at
    once (:func:`stop_processes`); none outlives the call.

    Raises:
        EnvironmentProblem: a process failed, warm-up requests all failed (the first
            error message included), or the processes did not finish in ``timeout_s``.
    """
    ctx = mp.get_context("spawn")
    procs, conns = [], []
    finished = False
    try:
        for job in jobs:
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker, args=(child,), daemon=True,
                            name="trtcheck-load")
            # an interrupt waits until the child is started whole, and the child never
            # sees a terminal's Ctrl-C (this process stops it)
            with interrupts_deferred(), ctrl_c_blocked_for_children():
                p.start()
                procs.append(p)
            child.close()
            conns.append(parent)
            # the job (request data, schedule: up to megabytes) goes through the
            # connection, not the start data: a child that dies while starting closes
            # its end and the send fails, where the start data's pipe, whose read end
            # the starting process keeps open while it writes, would block for good
            try:
                parent.send(job)
            except OSError:
                p.join(timeout=STOP_TIMEOUT_S)
                raise EnvironmentProblem(
                    "a load generator process ended while starting"
                    + (f" (exit code {p.exitcode})" if p.exitcode is not None else ""),
                    "check memory and the Python environment") from None
        deadline = time.monotonic() + START_TIMEOUT_S
        for c in conns:
            msg = _recv(c, deadline, "start and warm up")
            if msg[0] == "error":
                raise EnvironmentProblem(f"the load generator failed: {msg[1]}",
                                         "check the server and --url")
            if msg[1]:
                kind, text = next(iter(msg[1].items()))
                raise request_failure(kind, text, jobs[0], warmup=True)
        between()
        signal_go(conns)
        out: list[LoadResult] = []
        deadline = time.monotonic() + timeout_s
        for c in conns:
            msg = _recv(c, deadline, "finish")
            if msg[0] != "done" or msg[1] is None:
                raise EnvironmentProblem(f"the load generator failed: {msg[1]}",
                                         "check the server and --url")
            out.append(msg[1])
        finished = True
        return out
    finally:
        if finished:  # each has sent its result; one left waiting for "go" is told to stop
            for c in conns:
                try:
                    c.send("stop")
                except Exception:  # noqa: BLE001 - already gone
                    pass
        stop_processes(procs, graceful_s=5.0 if finished else 0.0)


def signal_go(conns: Sequence[Any]) -> float | None:
    """Tell the load processes at ``conns`` to run; returns their common start.

    One process is told ``"go"`` (``None``: its run starts when it begins). Several are
    told ``("go", start)``: ``start`` is a :func:`time.perf_counter` time (the clock every
    process of one host shares: ``CLOCK_MONOTONIC`` on Linux) :data:`LOCAL_START_LEAD_S`
    plus the measured time to signal them all (a ``"sync"`` to each first) ahead, and
    each process anchors its share's schedule to it (``run_load``'s ``t0_s``), as the
    actors of a distributed run anchor theirs to the common epoch."""
    if len(conns) == 1:
        conns[0].send("go")
        return None
    t = _clock()
    for c in conns:
        c.send("sync")
    now = _clock()
    start = now + LOCAL_START_LEAD_S + (now - t)
    for c in conns:
        c.send(("go", start))
    return start


def stop_processes(procs: Sequence[Any], graceful_s: float) -> None:
    """End load processes, bounded in time: wait up to ``graceful_s`` for them to exit,
    then SIGTERM every one still running at once, and SIGKILL any that has not exited
    :data:`STOP_TIMEOUT_S` later (e.g. on an interrupt: ``graceful_s`` 0)."""
    deadline = time.monotonic() + graceful_s
    for p in procs:
        p.join(timeout=max(0.0, deadline - time.monotonic()))
    for p in procs:  # every one first, so nothing waits on another's exit
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for p in procs:
        p.join(timeout=max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(timeout=STOP_TIMEOUT_S)


def _recv(conn: Any, deadline: float, what: str) -> Any:
    left = deadline - time.monotonic()
    if left <= 0 or not conn.poll(left):
        raise EnvironmentProblem(f"the load generator did not {what} in time",
                                 "check that the server answers; lower the load")
    try:
        return conn.recv()
    except EOFError:
        raise EnvironmentProblem(f"a load generator process died before it could {what}",
                                 "check memory and the server") from None


NUMPY2_TRAP_HINT = (
    "every answer came back empty: the numpy-2 python-backend trap (the stub's pybind11 "
    "numpy path miscounts numpy 2 arrays, so outputs built as pb_utils.Tensor(name, "
    "ndarray) are empty); build them with pb_utils.Tensor.from_dlpack(name, "
    "np.ascontiguousarray(a)) in model.py, or give the stub numpy < 2")
"""The remedy when every answer is empty (a python-backend model under numpy 2)."""


def request_failure(kind: str, text: str, job: LoadJob, *, warmup: bool) -> Exception:
    """One error for requests that all failed: the server's 4xx/INVALID_ARGUMENT answers
    are our input (exit 2), the rest the environment (exit 3)."""
    what = "every warm-up request" if warmup else "every request"
    msg = f"{what} to {job.model!r} at {job.url} failed: {kind}: {text}"
    if ("does not match size of output" in text or "array of size 0" in text
            or (kind == "BadResponse" and "has shape [" in text and ", 0]" in text)):
        return EnvironmentProblem(msg, NUMPY2_TRAP_HINT)
    if kind.startswith("HTTP 4") or kind in ("gRPC INVALID_ARGUMENT", "gRPC NOT_FOUND"):
        return InputError(msg, "check the request tensors (--shapes, --inputs) against the "
                               "model's metadata")
    if kind == "BadResponse" and "arrived empty" in text or \
            "does not match size of output" in text:
        return EnvironmentProblem(msg, NUMPY2_EMPTY_OUTPUT_HINT)
    if kind == "BadResponse":
        return EnvironmentProblem(msg, "the model answers outputs that do not match its "
                                       "own metadata; fix the model or its config.pbtxt")
    if kind == "ConnectionError":
        return EnvironmentProblem(msg, "check that the server is up and --url is right")
    return EnvironmentProblem(msg, "the server or the model failed; see the server log")


#: The hint for a python-backend model whose outputs arrive empty (or refused by the stub).
NUMPY2_EMPTY_OUTPUT_HINT = (
    "a python-backend model under numpy 2 that builds outputs with pb_utils.Tensor(name, "
    "numpy_array) answers empty tensors (the backend stub reads numpy 1 array descriptors "
    "and miscounts numpy 2 arrays); build them with pb_utils.Tensor.from_dlpack(name, "
    "numpy.ascontiguousarray(array)), or run the stub with numpy < 2")


def merge_results(shape: LoadShape, parts: list[LoadResult]) -> tuple[LiveRunRecord,
                                                                        dict[str, str]]:
    """One :class:`LiveRunRecord` of all processes' requests, and the first message per
    error kind."""
    msgs: dict[str, str] = {}
    whole = parts[0].record
    for k, v in parts[0].messages.items():
        msgs.setdefault(k, v)
    for p in parts[1:]:
        whole.merge(p.record)
        for k, v in p.messages.items():
            msgs.setdefault(k, v)
    return whole, msgs


# --------------------------------------------------------------------------- statistics


def _dur(d: dict[str, Any] | None) -> tuple[int, int]:
    d = d or {}
    return int(d.get("count", 0) or 0), int(d.get("ns", 0) or 0)


def stats_delta(before: dict[str, Any], after: dict[str, Any]) -> TritonStatsDelta:
    """The server's statistics of one run: ``after - before`` of one ``model_stats``
    entry (Triton's statistics extension; missing fields count 0).

    Raises:
        BadAnswer: either entry fails its check, a counter went backwards (the server
            restarted or the model was loaded again) or the run's executions do not add
            up (:func:`trtcheck.results.kserve_answers.check_stats_pair`).
    """
    before, after = check_model_stats({"model_stats": [before, after]})
    check_stats_pair(before, after)

    def d(key: str) -> TritonDuration:
        c1, n1 = _dur(after.get("inference_stats", {}).get(key))
        c0, n0 = _dur(before.get("inference_stats", {}).get(key))
        return TritonDuration(count=c1 - c0, total_ms=(n1 - n0) / 1e6)

    inf = int(after.get("inference_count", 0) or 0) - int(before.get("inference_count", 0) or 0)
    exe = int(after.get("execution_count", 0) or 0) - int(before.get("execution_count", 0) or 0)
    b0 = {int(b.get("batch_size", 0)): b for b in before.get("batch_stats", []) or []}
    batches = []
    for b in sorted(after.get("batch_stats", []) or [], key=lambda b: int(b.get("batch_size", 0))):
        bs = int(b.get("batch_size", 0))
        prev = b0.get(bs, {})
        cnt = _dur(b.get("compute_infer"))[0] - _dur(prev.get("compute_infer"))[0]
        if cnt <= 0:
            continue
        tot = {k: (_dur(b.get(k))[1] - _dur(prev.get(k))[1]) / 1e6
               for k in ("compute_input", "compute_infer", "compute_output")}
        batches.append(TritonBatchStat(batch_size=bs, execution_count=cnt,
                                       compute_input_ms=tot["compute_input"],
                                       compute_infer_ms=tot["compute_infer"],
                                       compute_output_ms=tot["compute_output"],
                                       first_since_load=_dur(prev.get("compute_infer"))[0]
                                       == 0))
    return TritonStatsDelta(
        model_name=str(after.get("name", "")), model_version=str(after.get("version", "")),
        inference_count=inf, execution_count=exe,
        avg_batch_size=inf / exe if exe else 0.0,
        success=d("success"), fail=d("fail"), queue=d("queue"),
        compute_input=d("compute_input"), compute_infer=d("compute_infer"),
        compute_output=d("compute_output"), batch_stats=batches)


def live_split(rec: LiveRunRecord, delta: TritonStatsDelta) -> LiveSplit | None:
    """The mean latency split of one run (see :class:`LiveSplit`); ``None`` without an
    ok request or a successful server request."""
    if not rec.ok.count or not delta.success.count:
        return None
    client = rec.ok.mean("client_ms")
    lag = rec.ok.mean("send_lag_ms") if rec.open_loop else 0.0
    server = delta.success.total_ms / delta.success.count
    queue = delta.queue.mean_ms or 0.0
    n = delta.compute_infer.count or 1
    compute = (delta.compute_input.total_ms + delta.compute_infer.total_ms
               + delta.compute_output.total_ms) / n
    return LiveSplit(client_mean_ms=client, send_lag_mean_ms=lag,
                     client_network_mean_ms=client - server, server_request_mean_ms=server,
                     server_queue_mean_ms=queue, server_compute_mean_ms=compute,
                     server_other_mean_ms=server - queue - compute)


def split_problem(split: LiveSplit) -> str | None:
    """Why a live run's latency split cannot be right, or ``None``: a part below zero
    (the server's mean request time above the client's mean latency, or its queue and
    compute means above its request mean) means the server's statistics do not describe
    the requests the client timed (a server that counts otherwise, or statistics that
    are not this run's)."""
    parts = {"client + network": split.client_network_mean_ms,
             "server other": split.server_other_mean_ms}
    neg = [f"{name} {v:.3g} ms" for name, v in parts.items() if v < 0]
    if not neg:
        return None
    return (f"the split of the mean latency has a negative part ({', '.join(neg)}): the "
            f"server says a request took {split.server_request_mean_ms:.3g} ms on average "
            f"(queue {split.server_queue_mean_ms:.3g} ms, compute "
            f"{split.server_compute_mean_ms:.3g} ms), the client measured "
            f"{split.client_mean_ms:.3g} ms")


def build_live_repeat(repeat: int, rec: LiveRunRecord, delta: TritonStatsDelta,
                      late_threshold_ms: float) -> ServeRepeat:
    """One live run's :class:`ServeRepeat`: client latencies and send lags (every
    request in the statistics; every ``raw_stride``-th kept in the lists, in request
    order), the server's statistics delta as counters, the mean latency split."""
    open_loop = rec.open_loop
    counts = dict(rec.outcomes)
    n_ok = rec.ok.count
    t_first = rec.first if rec.sent else 0.0
    last = max(rec.last_ok_end, t_first) if n_ok else t_first
    duration = max(last - t_first, 1e-9)
    rows = rec.ok.kept_rows(order_by="index")
    col = {name: rows[:, j] for j, name in enumerate(rec.ok.names)}
    lat = np.round(col["latency_ms"], 4).tolist()
    parts: dict[str, list[float]] = {}
    if open_loop:
        parts["send_lag_ms"] = np.round(col["send_lag_ms"], 4).tolist()
    hist = {str(b.batch_size): b.execution_count for b in delta.batch_stats}
    counters = ServeCounters(
        submitted=rec.sent, accepted=delta.success.count + delta.fail.count, rejected=0,
        execution_count=delta.execution_count, inference_count=delta.inference_count,
        avg_batch_size=delta.avg_batch_size, batch_size_histogram=hist,
        completed=counts[OK], failed=counts[ERROR], cancelled_queued=0,
        cancelled_in_flight=counts["timeout"], batch_errors=0)
    rep = ServeRepeat(
        repeat=repeat, latencies_ms=lat, parts_ms=parts, batch_sizes=[],
        enqueue_offsets_ms=np.round((col["t_send_s"] - t_first) * 1e3, 4).tolist(),
        outcomes=counts, errors=dict(rec.errors), ok_count=n_ok, raw_stride=rec.ok.stride,
        latency=rec.ok.summarize("latency_ms") if n_ok else None, duration_s=duration,
        throughput_queries_per_s=n_ok / duration if n_ok else 0.0,
        mean_batch_size=delta.avg_batch_size,
        max_batch_size=max((b.batch_size for b in delta.batch_stats), default=0),
        counters=counters, server_stats=delta, live_split=live_split(rec, delta))
    del rows, col
    if n_ok and open_loop:
        rep.waterfall = [WaterfallPart(name="send_lag_ms",
                                       median_ms=rec.ok.percentile("send_lag_ms", 0.5),
                                       p99_ms=rec.ok.percentile("send_lag_ms", 0.99),
                                       mean_ms=rec.ok.mean("send_lag_ms"))]
    if open_loop and rec.sent:
        rep.send_lag_ms = np.round(rec.lags.kept_rows(order_by="index")[:, 1], 4).tolist()
        rep.send_lag_p50_ms = rec.lags.percentile("send_lag_ms", 0.5)
        rep.send_lag_p99_ms = rec.lags.percentile("send_lag_ms", 0.99)
        rep.late_send_share = rec.late / rec.sent
        if rec.sent > 1:
            span = rec.send_hi - rec.send_lo
            rep.achieved_send_rate_per_s = (rec.sent - 1) / span if span > 0 else None
    return rep


# --------------------------------------------------------------------------- configs


def window_us_of(config: dict[str, Any]) -> float:
    """The dynamic batching window of a Triton config, microseconds (its
    ``max_queue_delay_microseconds``; 0 without dynamic batching).

    Raises:
        EnvironmentProblem: the configuration fails its check.
    """
    config = _checked(check_model_config, config, "model configuration")
    db = config.get("dynamic_batching")
    if not isinstance(db, dict):
        return 0.0
    return float(int(db.get("max_queue_delay_microseconds", 0) or 0))


def instances_of(config: dict[str, Any]) -> int:
    """Execution instances of a Triton config (sum of ``instance_group`` counts, each
    times its GPUs when it names several; 1 when none is given).

    Raises:
        EnvironmentProblem: the configuration fails its check.
    """
    config = _checked(check_model_config, config, "model configuration")
    groups = config.get("instance_group") or []
    n = 0
    for g in groups:
        c = int(g.get("count", 1) or 1)
        gpus = g.get("gpus") or []
        n += c * max(1, len(gpus)) if g.get("kind") == "KIND_GPU" else c
    return n or 1


def override_config(base: dict[str, Any], *, window_us: float | None, max_batch: int | None,
                    instances: int | None, preferred: Sequence[int] | None) -> dict[str, Any]:
    """A copy of Triton config ``base`` with these settings (``None``: unchanged).

    ``preferred`` sizes above the max batch are left out (Triton refuses them); with a
    new max batch and no ``preferred``, the old preferred sizes above it are dropped.
    ``instances`` sets the count of every instance group (one ``KIND_CPU`` group when the
    config has none... kept as the server chose otherwise).
    """
    import copy

    cfg = copy.deepcopy(_checked(check_model_config, base, "model configuration"))
    mb = int(cfg.get("max_batch_size", 0) or 0) if max_batch is None else int(max_batch)
    if max_batch is not None:
        cfg["max_batch_size"] = mb
    if window_us is not None or preferred is not None or max_batch is not None:
        db = cfg.get("dynamic_batching")
        if not isinstance(db, dict):
            db = {}
        if window_us is not None:  # Triton takes whole microseconds
            db["max_queue_delay_microseconds"] = int(round(window_us))
        if preferred is not None:
            db["preferred_batch_size"] = sorted(p for p in preferred if p <= mb)
        elif "preferred_batch_size" in db:
            db["preferred_batch_size"] = [p for p in db["preferred_batch_size"]
                                          if int(p) <= mb]
        cfg["dynamic_batching"] = db
    if instances is not None:
        groups = cfg.get("instance_group") or [{"kind": "KIND_CPU"}]
        for g in groups:
            g["count"] = int(instances)
            g.pop("name", None)
        cfg["instance_group"] = groups
    return cfg


#: Name prefix of the ``model_warmup`` entries :func:`with_batch_warmup` adds.
WARMUP_PREFIX = "trtcheck_warmup_b"


def with_batch_warmup(cfg: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A copy of Triton config ``cfg`` whose ``model_warmup`` runs one request of every
    batch size 1..``max_batch_size`` with random data on every instance when the model
    loads (Triton's model warm-up), so one-time costs of new shapes (eager frameworks,
    cuDNN algorithm searches) fall before a run. The model's own warm-up entries are
    kept; earlier ``trtcheck_warmup_b*`` entries are replaced.

    Returns:
        ``(config, None)``, or ``(cfg unchanged, why)`` when the inputs cannot be
        generated: no batching dimension, an input with a variable dimension, or a
        string input.
    """
    import copy

    mb = int(cfg.get("max_batch_size", 0) or 0)
    if mb < 1:
        return cfg, "the model has no batching dimension (max_batch_size 0)"
    inputs: dict[str, Any] = {}
    for inp in cfg.get("input") or []:
        dims = [int(d) for d in (inp.get("dims") or [])]
        name, dtype = str(inp.get("name", "")), str(inp.get("data_type", ""))
        if any(d < 0 for d in dims):
            return cfg, f"input {name!r} has a variable dimension ({dims})"
        if dtype in ("TYPE_STRING", "TYPE_BYTES", ""):
            return cfg, f"input {name!r} is {dtype or 'untyped'}"
        inputs[name] = {"data_type": dtype, "dims": dims, "random_data": True}
    if not inputs:
        return cfg, "the configuration lists no inputs"
    out = copy.deepcopy(without_batch_warmup(cfg)[0])
    out["model_warmup"] = (out.get("model_warmup") or []) + [
        {"name": f"{WARMUP_PREFIX}{b}", "batch_size": b, "count": 1, "inputs": inputs}
        for b in range(1, mb + 1)]
    return out, None


def without_batch_warmup(cfg: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """``(copy of Triton config cfg without the model_warmup entries that
    with_batch_warmup adds, how many there were)``: a configuration read from a server
    that an interrupted run left on its search's configuration holds them, and they are
    not the user's. ``cfg`` itself when there are none."""
    import copy

    warm = cfg.get("model_warmup") or []
    ours = [w for w in warm if str(w.get("name", "")).startswith(WARMUP_PREFIX)]
    if not ours:
        return cfg, 0
    out = copy.deepcopy(cfg)
    out["model_warmup"] = [w for w in warm
                           if not str(w.get("name", "")).startswith(WARMUP_PREFIX)]
    return out, len(ours)


def _device_of(config: dict[str, Any]) -> str:
    config = _checked(check_model_config, config, "model configuration")
    kinds = sorted({str(g.get("kind", "KIND_AUTO")) for g in config.get("instance_group", [])})
    return ", ".join(kinds) or "KIND_AUTO"


# --------------------------------------------------------------------------- measurement


@sigterm_as_interrupt()
def measure_live(url: str | Endpoint, model: str, *, model_version: str = "",
                 windows_us: Sequence[float] | None = None,
                 max_batch_sizes: Sequence[int] | None = None,
                 instances: int | Sequence[int] | None = None,
                 preferred_batch_sizes: Sequence[int] | None = None,
                 loads: Sequence[str | LoadShape] = ("open:100",), repeats: int = 1,
                 max_duration_s: float = 2.0, drain_timeout_s: float = 5.0,
                 late_threshold_ms: float = 1.0, warmup_requests: int = 8, seed: int = 0,
                 shapes: dict[str, list[int]] | None = None,
                 arrays: dict[str, np.ndarray] | None = None, client_processes: int = 1,
                 progress: Callable[[str], None] | None = None,
                 distributed: Any = None, warm_batch_sizes: bool = False) -> ServeRun:
    """Measure a model on a live KServe v2 server (Triton) under generated load.

    Args:
        url: the target's endpoint, parsed once (:func:`~trtcheck.measure.serving.live.
            target.parse_endpoint`), or a URL (``http://HOST:PORT``, ``grpc://HOST:PORT``)
            parsed here.
        model, model_version: the model (version ``""``: the server's choice).
        windows_us, max_batch_sizes, instances, preferred_batch_sizes: sweep values
            (windows in microseconds; ``None``: as the model is loaded); ``instances``
            is one count or a list of counts (instances per instance group). Any of
            them loads the model once per configuration (window x max batch x
            instances) through the model-repository API (explicit model control); the
            original configuration is loaded again at the end.
        loads: load specs (as ``trtcheck serve --load``) or LoadShapes.
        repeats: runs per configuration (headline = median), >= 1.
        max_duration_s, drain_timeout_s: bounds per run (sending; finishing after it).
        late_threshold_ms: open loop: a send later than this counts as late.
        warmup_requests: burst sent (and discarded) by each load process before a run.
        seed: Poisson seed (repeat r uses ``seed + r``) and generated inputs.
        shapes, arrays: one request's shapes (``--shapes``) / data (``--inputs``).
        client_processes: load generator processes (>= 1).
        progress: a progress callback (:mod:`trtcheck.measure.progress`): one step
            and one line per run, status lines between.
        distributed: a connected :class:`trtcheck.measure.serving.live.distributed.RayLoad`: every
            run's load is split across its Ray actors instead of local processes
            (``client_processes`` must then be 1); each repeat records every actor's
            share in ``distributed``.
        warm_batch_sizes: a sweep loads each configuration with Triton's model warm-up
            at every batch size up to its max batch (:func:`with_batch_warmup`; a
            ``warmup-not-possible`` note says why when it cannot).

    Ctrl-C or SIGTERM (in the main thread) stops the load processes at once, loads the
    original configuration again (at most :data:`RESTORE_TIMEOUT_S`; a second interrupt
    skips it), and returns the configurations that finished with ``incomplete`` set.
    An interrupt before the first run (while reading the model) raises
    :class:`KeyboardInterrupt`.

    Returns:
        a :class:`ServeRun` with ``live`` set (put it in ``Results.serve``).

    Raises:
        InputError: bad URL, unknown model, bad tensors, a refused sweep, requests all
            refused by the server as bad input (exit 2).
        EnvironmentProblem: unreachable server, model/server not ready, every request
            failed on the server, timeouts (exit 3).
    """
    if repeats < 1 or client_processes < 1:
        raise UsageError("repeats and client processes must be >= 1")
    if distributed is not None and client_processes != 1:
        raise UsageError("with a Ray load the actors are the senders: client_processes "
                         "must be 1", "give the number of actors to RayLoad instead")
    ep = url if isinstance(url, Endpoint) else parse_endpoint(url)
    shapes_ = [ld if isinstance(ld, LoadShape) else parse_load(ld, max_duration_s)
               for ld in loads]
    sweep = any(v is not None for v in (windows_us, max_batch_sizes, instances,
                                        preferred_batch_sizes))

    from trtcheck.measure.serving.live import live_faults as lf

    async def inspect() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any],
                                 dict[str, Any]]:
        async with open_target(ep) as c:
            smd = await c.server_metadata()
            if (missing := lf.missing_extension(smd, ep.url, sweep=sweep)) is not None:
                raise missing
            await c.model_ready(model, model_version)
            md = await c.model_metadata(model, model_version)
            cfg = await c.model_config(model, model_version)
            st = await c.statistics(model, model_version)  # the extension answers
            return smd, md, cfg, st

    smd, md, base_cfg, first_stats = asyncio.run(inspect())
    if sweep:  # the original to load again: never trtcheck's own leftover warm-up
        base_cfg, _ = without_batch_warmup(base_cfg)
    if windows_us is not None and any(w > 0 for w in windows_us) \
            and int(base_cfg.get("max_batch_size", 0) or 0) == 0 \
            and not any(m > 0 for m in (max_batch_sizes or [])):
        raise InputError(f"model {model!r} has max_batch_size 0 (no batch axis): Triton "
                         "does not batch it, so a batching window would change nothing",
                         "give --max-batch N for a model whose inputs take a batch axis, "
                         "or drop --window-ms")
    feed, _in_specs, out_specs = request_tensors(md, base_cfg, shapes, arrays, seed)
    live = LiveTarget(url=ep.url, protocol=ep.protocol, model_name=model,
                      model_version=model_version, server_name=str(smd.get("name", "")),
                      server_version=str(smd.get("version", "")),
                      server_extensions=[str(x) for x in smd.get("extensions", [])],
                      model_platform=str(md.get("platform", "") or base_cfg.get("backend", "")),
                      model_metadata=md, model_config_json=base_cfg,
                      explicit_model_control=sweep, client_processes=client_processes,
                      ray_address=None if distributed is None else distributed.address,
                      ray_actors=0 if distributed is None else distributed.actors)
    warmup_note: Finding | None = None
    wins = list(windows_us) if windows_us is not None else [None]
    mbs = list(max_batch_sizes) if max_batch_sizes is not None else [None]
    insts: list[int | None] = ([None] if instances is None else [int(instances)]
                               if isinstance(instances, int) else [int(n) for n in instances])
    pref = list(preferred_batch_sizes) if preferred_batch_sizes is not None else None
    base_mb = int(base_cfg.get("max_batch_size", 0) or 0)
    configs: list[ServeConfigResult] = []
    total = len(shapes_) * len(wins) * len(mbs) * len(insts)
    k = 0
    begin_steps(progress, total * repeats, "run", "serve")
    loaded: dict[str, Any] | None = None
    loading: dict[str, Any] | None = None  # a load in flight (an interrupt may cut it)
    skipped: list[tuple[dict[str, Any], InputError]] = []
    incomplete: str | None = None
    fault: lf.Fault | None = None
    invalid: str | None = None
    where = "before the first run"
    expected: dict[str, Any] = base_cfg
    try:
        try:
            # one configuration per window x max batch x instance count
            for w, mb, n_inst in ((w, mb, n) for w in wins for mb in mbs for n in insts):
                cfg = base_cfg
                where = (f"window {us_to_ms(window_us_of(base_cfg) if w is None else w):g} "
                         f"ms max batch {base_mb if mb is None else mb}")
                if sweep:
                    cfg = override_config(base_cfg, window_us=w, max_batch=mb,
                                          instances=n_inst, preferred=pref)
                    if warm_batch_sizes:
                        cfg, why = with_batch_warmup(cfg)
                        if why and warmup_note is None:
                            warmup_note = Finding(
                                code="warmup-not-possible", severity="info",
                                message=f"batch sizes were not warmed before the runs: "
                                        f"{why}",
                                remedy="add a model_warmup to the model's configuration "
                                       "yourself, or read cold-batch-sizes warnings")
                    if progress:
                        progress(f"loading {model} with window "
                                 f"{us_to_ms(window_us_of(cfg)):g} ms, max "
                                 f"batch {cfg.get('max_batch_size')}, "
                                 f"{instances_of(cfg)} instance(s) ...")
                    loaded = loading = cfg
                    try:
                        _load(ep, model, cfg)
                    except InputError as exc:
                        # no explicit model control: nothing can be swept; any other
                        # refusal skips this configuration and keeps the others
                        if "refuses to load models" in str(exc):
                            raise
                        skipped.append((cfg, exc))
                        loading = None  # refused: the server kept what it ran
                        step_done(progress, f"warning: {exc}; skipping this configuration",
                                  steps=len(shapes_) * repeats)
                        k += len(shapes_)
                        continue
                    loading = None
                    cfg = _current_config(ep, model, model_version) or cfg
                window_note = lf.window_not_applied(w, cfg)
                applied_note = (lf.settings_not_applied(mb, n_inst, cfg, instances_of(cfg))
                                if sweep else None)
                for note in (window_note, applied_note):
                    if note and progress:
                        progress(f"warning: {note.message}")
                expected = cfg
                for shape in shapes_:
                    k += 1
                    where = (f"{shape.label} window {us_to_ms(window_us_of(cfg)):g} ms max "
                             f"batch {cfg.get('max_batch_size', base_mb)} instances "
                             f"{instances_of(cfg)}")
                    reps = []
                    for r in range(repeats):
                        rep = _one_run(ep, model, model_version, feed, out_specs, shape,
                                       seed + r, r, max_duration_s, drain_timeout_s,
                                       late_threshold_ms, warmup_requests, client_processes,
                                       distributed)
                        now_cfg = _current_config(ep, model, model_version)
                        if now_cfg and (d := lf.config_difference(cfg, now_cfg)):
                            raise EnvironmentProblem(
                                f"model {model!r} was loaded again with another "
                                f"configuration during the run ({d})")
                        reps.append(rep)
                        if progress:
                            lat = rep.latency
                            step_done(progress, f"[{k}/{total}] {shape.label} window "
                                      f"{us_to_ms(window_us_of(cfg)):g} ms max batch "
                                      f"{cfg.get('max_batch_size', base_mb)} repeat "
                                      f"{r + 1}/{repeats}: {rep.throughput_queries_per_s:.1f} "
                                      f"q/s, server mean batch {rep.mean_batch_size:.2f}, p50 "
                                      f"{lat.median_ms if lat else float('nan'):.2f} ms")
                    from trtcheck.measure.serving.serve import config_result

                    # a sweep over instance counts names the count in every place
                    n_named = instances_of(cfg) if len(insts) > 1 else None
                    at = f" instances {n_named}" if n_named is not None else ""
                    split_notes = []
                    for rep in reps:  # a split with a negative part is not kept
                        if rep.live_split is not None and (
                                why := split_problem(rep.live_split)):
                            rep.live_split = None
                            split_notes.append(Finding(
                                code="live-split-inconsistent", severity="warning",
                                where=f"{shape.label}{at} repeat {rep.repeat + 1}",
                                message=f"{why}; the split is left out",
                                remedy="check that nothing else uses the model and that "
                                       "the server's statistics count this model's "
                                       "requests"))

                    # Triton's max_batch_size 0 (no batch axis: one request per
                    # execution) is max batch 1 for the batching quantities
                    c = config_result(window_us_of(cfg), max(1, int(cfg.get(
                        "max_batch_size", 0) or 0)), shape, reps, instances=n_named)
                    for w in [*c.warnings, *c.validity]:  # --uvloop is not for --url
                        if w.code in ("late-sends", "generator-limited"):
                            w.remedy = ("lower the rate, add --client-processes, or run the "
                                        "load on a less loaded machine" if distributed is None
                                        else "lower the rate, or add Ray nodes and "
                                        "--ray-actors (see each node's late sends and cpu)")
                    c.server_model_config = cfg
                    if window_note is not None:
                        c.warnings.append(window_note)
                    if applied_note is not None:
                        c.warnings.append(applied_note)
                    c.warnings += split_notes
                    c.instances = instances_of(cfg)
                    c.preferred_batch_sizes = [int(p) for p in (cfg.get("dynamic_batching")
                                                                or {}).get(
                        "preferred_batch_size", [])]
                    configs.append(c)
        except KeyboardInterrupt as exc:
            # Ctrl-C or SIGTERM: the load processes are already stopped; keep what
            # finished
            incomplete = (f"interrupted by {interrupt_name(exc)}: {len(configs)} of "
                          f"{total} configuration(s) measured")
        except (EnvironmentProblem, InputError, BadAnswer) as broke:
            # a run broke: find out what happened to the server, keep what finished
            if isinstance(broke, InputError) and "refuses to load models" in str(broke):
                raise
            fault = lf.diagnose_fault(ep, model, model_version, expected, broke)
            if not configs:  # nothing measured to keep: the one line now
                if fault.kind == "run-failed":
                    raise
                raise EnvironmentProblem(f"{where}: {fault.reason}",
                                         "check the server, then run again") from None
            invalid = f"{where}: {fault.reason}"
            incomplete = (f"invalid: {invalid} ({len(configs)} of {total} "
                          "configuration(s) measured)")
            if progress:
                progress(f"warning: {invalid}")
    finally:
        # a second Ctrl-C (or a SIGTERM) while the original configuration goes back
        # would leave the server on one the user never chose: held until it is back
        # (the restore after an interrupt is bounded by RESTORE_TIMEOUT_S)
        def on_signal(name: str) -> None:
            if progress:
                progress(f"{name}: loading {model} with its original configuration again "
                         "first")

        with interrupts_held(on_signal) as held:
            skip = None
            if loaded is not None:
                skip = (fault.reason if fault is not None and fault.kind in (
                    "server-gone", "model-unloaded", "config-changed")
                    else lf.restore_skip_reason(ep, model, model_version, expected))
                if skip and loading is not None:
                    # interrupted while a configuration loaded: the server runs either
                    # the one before or that one, both trtcheck's
                    skip = lf.restore_skip_reason(ep, model, model_version, loading)
                if skip and progress:
                    progress(f"warning: not loading {model} with its original "
                             f"configuration again: {skip}")
            late = None
            if loaded is not None and not skip:
                late = _restore(ep, model, base_cfg, progress,
                                interrupted=incomplete is not None)
        late = late or held.first
        if late and incomplete is None:  # every run finished; an interrupt came after
            incomplete = (f"interrupted by {late}: {len(configs)} of {total} "
                          "configuration(s) measured")
    if not configs and skipped and incomplete is None:
        raise skipped[0][1]
    dtypes = sorted({str(t.get("datatype", "")).lower() for t in md.get("inputs", [])})
    settings = ServeSettings(
        windows_us=sorted({c.window_us for c in configs}),
        max_batch_sizes=sorted({c.max_batch_size for c in configs}),
        loads=[s.label for s in shapes_], repeats=repeats,
        preferred_batch_sizes=sorted({p for c in configs
                                      for p in (c.preferred_batch_sizes or [])}),
        instances=max((c.instances or 1) for c in configs) if configs else 1,
        max_queue_size=int(((base_cfg.get("dynamic_batching") or {}).get(
            "default_queue_policy") or {}).get("max_queue_size", 0) or 0),
        on_full="reject", per_request_overhead_ms=0.0, http=False,
        max_duration_s=max_duration_s, drain_timeout_s=drain_timeout_s,
        late_threshold_ms=late_threshold_ms, warmup_requests=warmup_requests, seed=seed,
        event_loop="asyncio", payload=describe_payload(feed))
    backend = BackendInfo(
        name=str(smd.get("name", "") or "kserve"), version=str(smd.get("version", "")),
        device=f"{ep.url} ({_device_of(base_cfg)})",
        precision=dtypes[0].replace("fp", "fp") if len(dtypes) == 1 else "mixed",
        options={"protocol": ep.protocol, "model": model, "model_version": model_version,
                 "platform": live.model_platform, "client_processes": client_processes})
    run = ServeRun(label=f"{live.server_name or 'kserve'}:{model}",
                   model_path=f"{ep.url}/v2/models/{model}"
                   + (f"/versions/{model_version}" if model_version else ""),
                   backend=backend, settings=settings, configs=configs, live=live)
    if warmup_note is not None:
        run.warnings.append(warmup_note)
    for cfg, exc in skipped:
        run.warnings.append(Finding(
            code="config-not-loaded",
            where=f"window {us_to_ms(window_us_of(cfg)):g} ms max batch "
                  f"{cfg.get('max_batch_size')} "
                  f"instances {instances_of(cfg)}",
            message=f"the server did not load this configuration: {exc.message}",
            remedy=exc.hint or "check the swept values against the model"))
    if not smd.get("ready", True):
        run.warnings.append(Finding(
            code="server-not-ready", where=ep.url,
            message=f"the server reports not ready (/v2/health/ready), while {model!r} is "
                    "ready and was measured: under strict readiness another model that "
                    "failed to load does this",
            remedy="check the server log for the model that failed to load"))
    if not sweep and incomplete is None and run.live is not None:
        try:
            run.live.command_stats = stats_delta(first_stats,
                                                 _stats(ep, model, model_version))
        except KeyboardInterrupt as exc:  # every run finished: keep them
            incomplete = (f"interrupted by {interrupt_name(exc)}: {len(configs)} of "
                          f"{total} configuration(s) measured")
        except (EnvironmentProblem, BadAnswer) as broke:  # every run finished: keep them
            fault = lf.diagnose_fault(ep, model, model_version, base_cfg, broke)
            invalid = f"the command's statistics: {fault.reason}"
            incomplete = (f"invalid: {invalid} ({len(configs)} of {total} "
                          "configuration(s) measured)")
    if fault is not None and invalid is not None:
        run.warnings.append(Finding(
            code=lf.SERVER_FAULT, severity="error", where=where, message=invalid,
            remedy="measure again on a server nobody else changes during the run"))
    if loaded is not None and skip:
        run.warnings.append(Finding(
            code="config-not-restored", where=ep.url,
            message=f"the model's original configuration was not loaded again: {skip}",
            remedy="check the model's configuration on the server"))
    run.incomplete = incomplete
    _run_findings(run)
    if distributed is not None:
        run.warnings += distributed.findings(run)
    return run


def _restore(ep: Endpoint, model: str, base_cfg: dict[str, Any],
             progress: Callable[[str], None] | None, *, interrupted: bool) -> str | None:
    """Load the model's original configuration again after a sweep (best effort: a
    failure is a warning, never the command's error; after an interrupt at most
    :data:`RESTORE_TIMEOUT_S`). The caller holds interrupts during it
    (:func:`~trtcheck.measure.interrupt.interrupts_held`); an interrupt that still
    reaches it (outside the main thread) skips it.

    Returns:
        the name of the signal that interrupted the restore (``"SIGINT"``,
        ``"SIGTERM"``), else ``None``.
    """
    def warn(why: str) -> None:
        if progress:
            progress(f"warning: could not load {model} with its original configuration "
                     f"again: {why}")

    if interrupted and progress:
        progress(f"loading {model} with its original configuration again ...")
    try:
        _load(ep, model, base_cfg, timeout_s=RESTORE_TIMEOUT_S if interrupted else None)
    except KeyboardInterrupt as exc:
        warn("interrupted")
        return interrupt_name(exc)
    except asyncio.TimeoutError:
        warn(f"no answer within {RESTORE_TIMEOUT_S:g} s")
    except Exception as exc:  # noqa: BLE001 - keep the measurement's own error
        warn(str(exc))
    return None


def _run_findings(run: ServeRun) -> None:
    for c in run.configs:
        for rep in c.repeats:
            st = rep.server_stats
            if st is None:
                continue
            sent = rep.counters.submitted
            seen = st.success.count + st.fail.count
            ok = rep.outcomes.get(OK, 0)
            if st.success.count < ok:
                run.warnings.append(Finding(
                    code="server-stats-short", where=f"{c.load.label} repeat {rep.repeat + 1}",
                    message=f"the server counted {st.success.count} successful requests "
                            f"for the model while trtcheck received {ok} answers: its "
                            "statistics (mean batch, queue and compute times) do not "
                            "describe this load",
                    remedy="check that the server counts this model's requests (Triton's "
                           "statistics extension) and that no version or proxy in between "
                           "answers for it"))
            cold = cold_batch_sizes(st.batch_stats)
            if cold:
                run.warnings.append(cold_sizes_finding(
                    cold, f"{c.load.label} repeat {rep.repeat + 1}"))
            if seen > sent:
                run.warnings.append(Finding(
                    code="foreign-requests", where=f"{c.load.label} repeat {rep.repeat + 1}",
                    message=f"the server counted {seen} requests for the model while "
                            f"trtcheck sent {sent}: another client used it during the run, "
                            "so its statistics are not this load's alone",
                    remedy="measure on a server (or model) nobody else uses"))


def cold_sizes_finding(cold: list[tuple[int, float]], where: str) -> Finding:
    """The ``cold-batch-sizes`` warning of one run: ``cold`` is
    :func:`~trtcheck.results.serve.cold_batch_sizes` (batch size, one-time cost ms)."""
    sizes = ", ".join(str(b) for b, _ in cold)
    cost_ms = sum(ms for _, ms in cold)
    return Finding(
        code="cold-batch-sizes", where=where,
        message=f"batch size{'s' if len(cold) > 1 else ''} {sizes} ran for the first time "
                f"since the model was loaded and took longer than any warm T(b) allows: "
                f"about {cost_ms:.0f} ms of one-time cost (a framework that compiles or "
                "searches algorithms per new shape, e.g. eager PyTorch or ONNX Runtime "
                "with cuDNN), which this run's latencies and batching include",
        remedy="warm every batch size the server can form before measuring (Triton's "
               "model_warmup, one entry per batch size up to max_batch_size, or a first "
               "run whose results you discard), then measure again")


def _retrieve(task: asyncio.Future) -> None:
    """Read ``task``'s outcome (now, or when it ends) so asyncio never logs "Task
    exception was never retrieved" for it: an interrupt that cuts a request short leaves
    its task ended with the client's error or the interrupt itself."""
    def read(t: asyncio.Future) -> None:
        if not t.cancelled():
            t.exception()

    if task.done():
        read(task)
    else:
        task.add_done_callback(read)


def _load(ep: Endpoint, model: str, cfg: dict[str, Any],
          timeout_s: float | None = None) -> None:
    async def go() -> None:
        async with open_target(ep) as c:
            task = asyncio.ensure_future(c.load_model(model, cfg))
            try:
                await (task if timeout_s is None else asyncio.wait_for(task, timeout_s))
            finally:
                if not task.done():
                    task.cancel()
                _retrieve(task)

    asyncio.run(go())


def _current_config(ep: Endpoint, model: str, version: str) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with open_target(ep) as c:
            return await c.model_config(model, version)

    return asyncio.run(go())


def _stats(ep: Endpoint, model: str, version: str) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with open_target(ep) as c:
            return await c.statistics(model, version)

    return asyncio.run(go())


def _one_run(ep: Endpoint, model: str, version: str, feed: dict[str, np.ndarray],
             outs: list[TensorSpec], shape: LoadShape, seed: int, repeat: int,
             max_duration_s: float, drain_timeout_s: float, late_threshold_ms: float,
             warmup_requests: int, client_processes: int,
             distributed: Any = None) -> ServeRepeat:
    n = client_processes if distributed is None else distributed.actors
    jobs = []
    for kproc in range(n):
        part = process_share(shape, seed, kproc, n)
        if part is None:
            continue
        conns = (part.count if part.kind == "burst" else part.concurrency
                 if part.kind == "closed" else 0)
        if part.kind == "open":  # enough for the rate over a few hundred ms of latency
            conns = int(min(256, max(8, math.ceil(part.rate_per_s * 0.05))))
        jobs.append(LoadJob(ep.url, ep.protocol, ep.address, model, version, feed, outs,
                            part, seed, max_duration_s, drain_timeout_s,
                            max(1, warmup_requests // n) if warmup_requests else 0,
                            min(conns, MAX_CONNECTIONS), late_threshold_ms))
    before: dict[str, Any] = {}

    def read_before() -> None:
        # the server counts a request only after it has sent the answer: wait until the
        # warm-up requests are all counted (two reads 50 ms apart agree)
        deadline = time.monotonic() + STATS_SETTLE_S
        prev = _stats(ep, model, version)
        while time.monotonic() < deadline:
            time.sleep(0.05)
            cur = _stats(ep, model, version)
            d = stats_delta(prev, cur)
            prev = cur
            if d.success.count == 0 and d.inference_count == 0:
                break
        before.update(prev)

    from trtcheck.measure.serving.loadgen import sending_bound_s

    bound_s = sending_bound_s(shape, max_duration_s) + drain_timeout_s + 30.0
    if distributed is None:
        results = run_processes(jobs, read_before, timeout_s=bound_s)
    else:  # the shares of actors that died or did not answer are lost, counted there
        results = distributed.run(jobs, read_before, timeout_s=bound_s,
                                  late_threshold_ms=late_threshold_ms)
    rec, msgs = merge_results(shape, results)
    oks = rec.outcomes[OK]
    # the server counts a request when it has answered it: wait until it has all
    deadline = time.monotonic() + STATS_SETTLE_S
    after = _stats(ep, model, version)
    while time.monotonic() < deadline:
        d = stats_delta(before, after)
        if d.success.count >= oks:
            break
        time.sleep(0.05)
        after = _stats(ep, model, version)
    delta = stats_delta(before, after)
    if not oks and rec.sent:
        if rec.errors:
            kind = max(sorted(rec.errors), key=rec.errors.__getitem__)
            raise request_failure(kind, msgs.get(kind, ""), jobs[0], warmup=False)
        raise EnvironmentProblem(f"no request to {model!r} at {ep.url} finished within "
                                 f"--drain-timeout-s ({drain_timeout_s:g} s)",
                                 "raise --drain-timeout-s or lower the load")
    rep = build_live_repeat(repeat, rec, delta, late_threshold_ms)
    if distributed is not None:
        rep.distributed = distributed.last_load
    return rep
