"""A live target's load from a Ray cluster: one arrival schedule split across N actors on
different nodes (``trtcheck serve --url ... --ray ADDRESS|auto [--ray-actors N]``).

:class:`RayLoad` connects to a running Ray cluster, reserves one CPU on each of N nodes
(a placement group with the ``SPREAD`` strategy: one bundle per node while there are
nodes enough) and starts one :class:`LoadActor` in each bundle. For every run of
:func:`trtcheck.measure.serving.live.live.measure_live` (pass ``distributed=``):

1. the run's load shape is split by arrival index (:func:`~trtcheck.measure.serving.live.live.process_share`:
   an open loop's arrivals ``k, k + N, ...`` of the one ``arrivals.py`` schedule of the
   seed; a burst's count and a closed loop's clients dealt evenly), and each actor gets a
   :class:`~trtcheck.measure.serving.live.live.LoadJob` with its share;
2. each actor runs the load process's own coroutine (:func:`~trtcheck.measure.serving.live.live.run_job`)
   on a :func:`~trtcheck.measure.serving.loadgen.precise_loop` in a thread of its own: it encodes
   the request once, opens and warms its connections, sends its warm-up burst and waits;
3. when every actor is ready (the barrier), the driver reads the server's statistics,
   measures each node's clock offset (:data:`CLOCK_SAMPLES` Ray round trips; the one
   with the shortest round trip: offset = node wall time - the driver's midpoint, error
   bound = half that round trip), picks a common epoch (:data:`START_LEAD_S` or more
   ahead) and tells every actor that epoch on its own clock; each waits until it and
   runs its share's schedule **anchored to the epoch** (``run_load``'s ``t0_s``), not to
   whenever its loop got going: the shares' schedules line up to within the clock
   bounds, and an actor whose loop began late (``start_skew_ms``) sends its first
   arrivals late (counted as late sends) instead of shifting its whole share;
4. every actor's per-request record comes back (latencies still count from each
   request's scheduled time, on the actor's own clock), is moved onto the common epoch
   (its start is the epoch exactly, so after the move every share starts at 0) and
   merged (:func:`~trtcheck.measure.serving.live.live.merge_results`) into the one
   :class:`~trtcheck.measure.serving.loadgen.LoadRecord` the results are built from, so the
   statistics are exactly those of the union of the requests.

Faults: an actor that dies (its process or node), fails its warm-up alone, or has not
answered when the run's bound is reached is stopped (``ray.kill``) and its share is
**lost**: its scheduled requests are counted in ``lost_requests``, the other shares are
kept. Every wait is bounded. An exception in the driver (Ctrl-C, SIGTERM) kills every
actor at once before it propagates. :meth:`RayLoad.close` kills the actors, removes the
placement group and disconnects (the cluster keeps running).

Ray is an optional dependency (extra ``ray``) imported only here, inside functions; the
nodes need trtcheck with the ``triton`` and ``ray`` extras, the same version.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from trtcheck.errors import EnvironmentProblem, UsageError
from trtcheck.measure.serving.live.live import (
    START_TIMEOUT_S, LoadJob, LoadResult, request_failure, run_job,
)
from trtcheck.measure.serving.loadgen import ERROR, NOT_SENT, OK, TIMEOUT, precise_loop
from trtcheck.results.load_nodes import DistributedLoad, LoadNodeShare
from trtcheck.results.stats import Finding

#: The install hint of the optional dependency.
RAY_HINT = "pip install 'ray>=2.9' (the ray extra; on the driver and every node)"
#: Seconds the cluster may take to reserve the actors' CPUs (the placement group).
PLACEMENT_TIMEOUT_S = 60.0
#: Round trips per node for its clock offset (the shortest one is used).
CLOCK_SAMPLES = 7
#: Least seconds between the driver's go and the common epoch.
START_LEAD_S = 0.5
#: Seconds an actor may take to answer a short call (describe, prepare, go).
CALL_TIMEOUT_S = 30.0
#: Seconds to reach the head node's address before Ray is asked to join it.
CONNECT_TIMEOUT_S = 10.0
#: Most actors one run may use.
MAX_RAY_ACTORS = 256

#: The HTTP/2 client connection preface and an empty SETTINGS frame (RFC 9113 3.4).
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
#: The frame type of SETTINGS, the server's first frame on an HTTP/2 connection.
_H2_SETTINGS = 0x04


def _read_some(sock: socket.socket, n: int) -> bytes:
    """Up to ``n`` bytes from ``sock`` (fewer when the peer closes first)."""
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        EnvironmentProblem: Ray is not installed (exit 3, with the install hint).
    """
    try:
        import ray
    except ImportError:
        raise EnvironmentProblem("--ray needs Ray, which is not installed",
                                 RAY_HINT) from None
    return ray


# --------------------------------------------------------------------------- actor


class LoadActor:
    """One share's load sender, run as a Ray actor (threaded: ``max_concurrency`` 4, so
    :meth:`stop` reaches it while :meth:`result` waits).

    Call order per run: :meth:`prepare`, :meth:`wait_ready`, :meth:`go`, :meth:`result`.
    Times it reports are its node's clocks: ``time.time()`` (wall, s) for the epoch,
    ``time.perf_counter()`` (s) in the records.
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._ready = threading.Event()
        self._go = threading.Event()
        self._done = threading.Event()
        self._warm: dict[str, str] = {}
        self._epoch_wall_s: float | None = None
        self._stopped = False
        self._outcome: tuple[str, Any] = ("error", "no result")
        self._loop: Any = None
        self._task: Any = None
        self._target_perf_s = 0.0
        self._cpu_s = 0.0
        self._wall_s = 0.0

    def describe(self) -> dict[str, Any]:
        """Where this actor runs: node id, IP, host name, pid, trtcheck version."""
        import os

        import ray

        import trtcheck

        return {"node_id": ray.get_runtime_context().get_node_id(),
                "node_ip": ray.util.get_node_ip_address(), "hostname": socket.gethostname(),
                "pid": os.getpid(), "trtcheck_version": trtcheck.__version__}

    def clock(self) -> float:
        """This node's wall clock, ``time.time()`` seconds."""
        return time.time()

    def prepare(self, job: LoadJob) -> None:
        """Start the load thread for ``job``: connect, warm up, then wait for :meth:`go`."""
        self._reset()
        threading.Thread(target=self._main, args=(job,), daemon=True,
                         name="trtcheck-ray-load").start()

    def _main(self, job: LoadJob) -> None:
        def ready(warm_errors: dict[str, str]) -> None:
            self._warm = dict(warm_errors)
            self._ready.set()

        def wait_go() -> bool:
            self._go.wait()
            if self._stopped or self._epoch_wall_s is None:
                return False
            # the common epoch on this node's clock, as a perf_counter time
            self._target_perf_s = time.perf_counter() + (self._epoch_wall_s - time.time())
            left = self._target_perf_s - time.perf_counter()
            if left > 0.002:
                time.sleep(left - 0.002)
            while time.perf_counter() < self._target_perf_s:
                pass
            self._cpu_s = time.thread_time()
            self._wall_s = time.perf_counter()
            return not self._stopped

        loop = precise_loop()
        self._loop = loop
        try:
            # the schedule starts at the epoch, however late this loop gets going
            self._task = loop.create_task(run_job(job, ready, wait_go,
                                                  start_at=lambda: self._target_perf_s))
            res = loop.run_until_complete(self._task)
            self._cpu_s = time.thread_time() - self._cpu_s
            self._wall_s = time.perf_counter() - self._wall_s
            self._outcome = ("done", res)
        except BaseException as exc:  # noqa: BLE001 - reported to the driver as one line
            self._outcome = ("error", f"{type(exc).__name__}: {exc}")
        finally:
            loop.close()
            self._ready.set()
            self._done.set()

    def wait_ready(self, timeout_s: float) -> tuple[str, Any]:
        """Wait until connected and warmed up: ``("ready", warm-up errors by kind)``, or
        ``("error", text)`` (the thread ended first), ``("timeout", "")``."""
        if not self._ready.wait(timeout_s):
            return ("timeout", "")
        if self._done.is_set() and self._outcome[0] == "error":
            return self._outcome
        return ("ready", self._warm)

    def go(self, epoch_wall_s: float) -> None:
        """Start the run at ``epoch_wall_s`` (this node's ``time.time()`` seconds)."""
        self._epoch_wall_s = float(epoch_wall_s)
        self._go.set()

    def result(self, timeout_s: float) -> tuple[str, Any]:
        """Wait for the run: ``("done", (LoadResult | None, epoch perf_counter s, load
        thread CPU s, run wall s))``, ``("error", text)`` or ``("timeout", "")``."""
        if not self._done.wait(timeout_s):
            return ("timeout", "")
        kind, res = self._outcome
        if kind != "done":
            return self._outcome
        return ("done", (res, self._target_perf_s, self._cpu_s, self._wall_s))

    def stop(self) -> None:
        """Stop at once: a run waiting for :meth:`go` does not start; a running one is
        cancelled."""
        self._stopped = True
        self._go.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # closed meanwhile
                pass


# --------------------------------------------------------------------------- driver


def measure_clock_offset(clock: Callable[[], float], samples: int = CLOCK_SAMPLES
                         ) -> tuple[float, float]:
    """A remote wall clock's offset from this one, seconds: ``clock()`` returns the
    remote ``time.time()``; of ``samples`` round trips the shortest is used (offset =
    remote - midpoint of the round trip; Cristian's method).

    Returns:
        ``(offset_s, error_bound_s)`` (the bound is half the shortest round trip).
    """
    best: tuple[float, float] | None = None
    for _ in range(max(1, samples)):
        t0 = time.time()
        remote = clock()
        t1 = time.time()
        rtt = t1 - t0
        if best is None or rtt < 2 * best[1]:
            best = (remote - (t0 + t1) / 2, rtt / 2)
    assert best is not None
    return best


def _shift(res: LoadResult, by_s: float) -> LoadResult:
    """``res`` with every time of its record moved by ``-by_s`` (onto the epoch)."""
    import copy

    rec = copy.deepcopy(res.record)
    rec.shift(by_s)
    return replace(res, record=rec)


def node_share(actor: int, info: dict[str, Any], job: LoadJob, res: LoadResult | None, *,
               late_threshold_ms: float, lost_reason: str | None = None,
               clock: tuple[float, float] | None = None, start_skew_s: float | None = None,
               cpu_share: float | None = None) -> LoadNodeShare:
    """One actor's :class:`LoadNodeShare` from its record (``None``: lost, with
    ``lost_reason``). Latencies as the merged results count them (open loop: from the
    scheduled time); ``start_skew_s``: seconds its load loop began after the epoch (its
    schedule is anchored to the epoch either way)."""
    shape = job.shape
    base: dict[str, Any] = dict(actor=actor, node_id=str(info.get("node_id", "")),
                node_ip=str(info.get("node_ip", "")), hostname=str(info.get("hostname", "")),
                trtcheck_version=str(info.get("trtcheck_version", "")),
                clock_offset_ms=None if clock is None else clock[0] * 1e3,
                clock_offset_error_ms=None if clock is None else clock[1] * 1e3)
    bounded = not (shape.kind == "closed" and shape.count >= 10**9)
    if res is None:
        scheduled = shape.count if bounded else 0
        return LoadNodeShare(**base, scheduled_requests=scheduled, lost=True,
                             lost_requests=scheduled, lost_reason=lost_reason)
    rec = res.record
    open_loop = shape.kind == "open"
    o = rec.outcomes
    fig: dict[str, Any] = {}
    if open_loop and rec.sent:
        fig.update(late_sends=int(rec.late),
                   send_lag_p50_ms=rec.lags.percentile("send_lag_ms", 0.5),
                   send_lag_p99_ms=rec.lags.percentile("send_lag_ms", 0.99))
        if rec.sent > 1:
            span = rec.send_hi - rec.send_lo
            fig["achieved_send_rate_per_s"] = (rec.sent - 1) / span if span > 0 else None
    if rec.ok.count:
        fig.update(p50_ms=rec.ok.percentile("latency_ms", 0.5),
                   p99_ms=rec.ok.percentile("latency_ms", 0.99))
    total = sum(o.values())
    return LoadNodeShare(
        **base, scheduled_requests=total if bounded else rec.sent,
        sent_requests=rec.sent, ok_requests=o.get(OK, 0),
        error_requests=o.get(ERROR, 0), timeout_requests=o.get(TIMEOUT, 0),
        not_sent_requests=o.get(NOT_SENT, 0), load_cpu_share=cpu_share,
        start_skew_ms=None if start_skew_s is None else start_skew_s * 1e3, **fig)


class RayLoad:
    """Load actors on a Ray cluster for :func:`trtcheck.measure.serving.live.live.measure_live`
    (``distributed=``). A context manager: ``with RayLoad("auto", 3) as ray_load: ...``.

    Args:
        address: ``"auto"`` (the cluster this machine belongs to) or ``HOST:PORT`` of the
            head node's GCS (``ray start --head`` prints it).
        actors: actors to start, 1..:data:`MAX_RAY_ACTORS` (``None``: one per alive
            node with a CPU).
        progress: called with one line per step.

    Raises (from :meth:`connect`):
        EnvironmentProblem: Ray not installed, no cluster at ``address``, or the
            cluster cannot place the actors in time (exit 3).
        UsageError: ``actors`` out of range.
    """

    def __init__(self, address: str, actors: int | None = None, *,
                 progress: Callable[[str], None] | None = None,
                 placement_timeout_s: float = PLACEMENT_TIMEOUT_S) -> None:
        if actors is not None and not 1 <= int(actors) <= MAX_RAY_ACTORS:
            raise UsageError(f"--ray-actors must be 1..{MAX_RAY_ACTORS}, got {actors}",
                             "e.g. --ray-actors 3")
        self.address = address
        self._want = None if actors is None else int(actors)
        self._progress = progress
        self._placement_timeout_s = placement_timeout_s
        self._ray: Any = None
        self._initialized_here = False
        self._pg: Any = None
        self._actors: list[Any] = []
        self._info: list[dict[str, Any]] = []
        self.last_load: DistributedLoad | None = None
        self._history: list[DistributedLoad] = []

    # -- lifecycle

    def __enter__(self) -> RayLoad:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _log(self, line: str) -> None:
        if self._progress:
            self._progress(line)

    def connect(self) -> None:
        """Join the cluster, reserve the actors' CPUs and start the actors (see the
        class for errors)."""
        ray = import_ray()
        self._ray = ray
        if not ray.is_initialized():
            import logging

            self._probe()
            try:
                ray.init(address=self.address, log_to_driver=False,
                         logging_level=logging.WARNING, configure_logging=True)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise EnvironmentProblem(
                    f"no Ray cluster at {self.address!r}: {' '.join(str(exc).split())[:200]}",
                    "start one (ray start --head on this machine, ray start --address "
                    "HEAD:6379 on the others) or give --ray HOST:PORT") from None
            self._initialized_here = True
        try:
            self._start_actors()
        except BaseException:
            self.close()
            raise

    def _probe(self) -> None:
        """For ``HOST:PORT``: within :data:`CONNECT_TIMEOUT_S`, a TCP connection to the
        head, and an HTTP/2 answer there (a Ray head's GCS is a gRPC server: it answers
        the HTTP/2 connection preface with a SETTINGS frame, RFC 9113 section 3.4).
        ``ray.init`` itself retries for minutes at an address where nothing listens,
        or where another server (an HTTP port, the dashboard) does.

        Raises:
            EnvironmentProblem: nothing answers there, or what answers is not gRPC.
        """
        host, sep, port = self.address.rpartition(":")
        if not sep or not port.isdigit() or "://" in self.address:
            return  # "auto", or a form Ray resolves itself
        try:
            with socket.create_connection((host.strip("[]"), int(port)),
                                          timeout=CONNECT_TIMEOUT_S) as sock:
                sock.sendall(_H2_PREFACE)
                head = _read_some(sock, 9)
        except OSError as exc:
            raise EnvironmentProblem(
                f"no Ray cluster at {self.address!r}: {exc.strerror or exc}",
                "start one (ray start --head prints its address) or give --ray auto "
                "on a node of the cluster") from None
        if len(head) < 9 or head[3] != _H2_SETTINGS:
            raise EnvironmentProblem(
                f"{self.address!r} answers, but not as a Ray cluster's head (no gRPC "
                "there: another server, such as an HTTP port or the Ray dashboard)",
                "give --ray the head's GCS address (ray start --head prints it; port "
                "6379 by default) or --ray auto on a node of the cluster")

    def _start_actors(self) -> None:
        ray = self._ray
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        nodes = [n for n in ray.nodes() if n.get("Alive") and
                 float((n.get("Resources") or {}).get("CPU", 0)) >= 1]
        n = self._want if self._want is not None else max(1, len(nodes))
        self._log(f"ray: {len(nodes)} node(s) with a CPU; starting {n} load actor(s) ...")
        self._pg = placement_group([{"CPU": 1}] * n, strategy="SPREAD")
        try:
            ray.get(self._pg.ready(), timeout=self._placement_timeout_s)
        except ray.exceptions.GetTimeoutError:
            cpus = sum(float((x.get("Resources") or {}).get("CPU", 0)) for x in nodes)
            raise EnvironmentProblem(
                f"the Ray cluster at {self.address!r} could not place {n} load actor(s) of "
                f"1 CPU each within {self._placement_timeout_s:g} s ({cpus:g} CPU(s) "
                f"on {len(nodes)} node(s), some may be in use)",
                "add nodes, free CPUs, or lower --ray-actors") from None
        cls = ray.remote(num_cpus=1, max_concurrency=4, max_restarts=0)(LoadActor)
        self._actors = [cls.options(scheduling_strategy=PlacementGroupSchedulingStrategy(
            self._pg, placement_group_bundle_index=i)).remote() for i in range(n)]
        try:
            self._info = ray.get([a.describe.remote() for a in self._actors],
                                 timeout=max(CALL_TIMEOUT_S, START_TIMEOUT_S))
        except ray.exceptions.GetTimeoutError:
            raise EnvironmentProblem(
                f"the Ray load actors did not start within {START_TIMEOUT_S:g} s",
                "check the cluster (ray status) and that trtcheck is installed on every "
                "node") from None
        except ray.exceptions.RayError as exc:
            raise EnvironmentProblem(
                f"a Ray load actor failed to start: {' '.join(str(exc).split())[:300]}",
                "install trtcheck (extras triton, ray; the same version) on every node"
                ) from None
        hosts = sorted({i["node_id"] for i in self._info})
        self._log(f"ray: {n} load actor(s) on {len(hosts)} node(s): "
                  + ", ".join(f"{i['hostname']}/{i['node_ip']}" for i in self._info))

    def close(self) -> None:
        """Kill every actor, remove the placement group, disconnect (idempotent; never
        raises)."""
        ray = self._ray
        if ray is None:
            return
        self._kill(range(len(self._actors)))
        self._actors = []
        if self._pg is not None:
            try:
                from ray.util.placement_group import remove_placement_group

                remove_placement_group(self._pg)
            except Exception:  # noqa: BLE001 - the cluster may be gone
                pass
            self._pg = None
        if self._initialized_here:
            try:
                ray.shutdown()
            except Exception:  # noqa: BLE001
                pass
            self._initialized_here = False
        self._ray = None

    def _kill(self, which: Sequence[int] | range) -> None:
        for i in which:
            a = self._actors[i] if i < len(self._actors) else None
            if a is None:
                continue
            try:
                self._ray.kill(a, no_restart=True)
            except Exception:  # noqa: BLE001 - already dead
                pass
            self._actors[i] = None

    @property
    def actors(self) -> int:
        """Actors alive (a lost actor is not used again)."""
        return sum(a is not None for a in self._actors)

    @property
    def actor_nodes(self) -> list[dict[str, Any]]:
        """Where each actor runs, in actor order (:meth:`LoadActor.describe`: ``node_id``,
        ``node_ip``, ``hostname``, ``pid``, ``trtcheck_version``), lost ones included."""
        return [dict(i) for i in self._info]

    # -- one run

    def run(self, jobs: list[LoadJob], between: Callable[[], None], *, timeout_s: float,
            late_threshold_ms: float) -> list[LoadResult]:
        """Run one split load: job ``k`` on the ``k``-th alive actor, all starting at one
        epoch after ``between()`` (called once every actor is ready). Records the shares
        in :attr:`last_load`.

        Returns:
            the kept shares' records, times in seconds from the common epoch.

        Raises:
            EnvironmentProblem: every share was lost; every actor's warm-up failed
                (:func:`~trtcheck.measure.serving.live.live.request_failure`, exit 2 or 3).
            KeyboardInterrupt: after killing every actor.
        """
        ray = self._ray
        slots = [i for i, a in enumerate(self._actors) if a is not None][:len(jobs)]
        if not slots:
            raise EnvironmentProblem("no Ray load actor is left: every one was lost in an "
                                     "earlier run", "check the cluster (ray status) and "
                                     "run again")
        lost: dict[int, str] = {}
        kept: dict[int, tuple[LoadResult, float, float, float]] = {}
        clocks: dict[int, tuple[float, float]] = {}
        try:
            refs = {k: self._actors[s].prepare.remote(jobs[k]) for k, s in enumerate(slots)}
            self._gather(refs, CALL_TIMEOUT_S, lost, "start its load")
            refs = {k: self._actors[slots[k]].wait_ready.remote(START_TIMEOUT_S)
                    for k in range(len(slots)) if k not in lost}
            warm: dict[int, dict[str, str]] = {}
            for k, out in self._gather(refs, START_TIMEOUT_S + CALL_TIMEOUT_S, lost,
                                       "connect and warm up").items():
                if out[0] == "ready" and out[1]:
                    warm[k] = out[1]
                elif out[0] != "ready":
                    lost[k] = ("its load failed: " + str(out[1])) if out[0] == "error" \
                        else f"not ready within {START_TIMEOUT_S:g} s"
            if warm and len(warm) + len(lost) == len(slots):  # nobody warmed up
                kind, text = next(iter(warm[min(warm)].items()))
                raise request_failure(kind, text, jobs[0], warmup=True)
            for k, errs in warm.items():
                kind, text = next(iter(errs.items()))
                lost[k] = f"every warm-up request failed: {kind}: {text}"
            for k in list(lost):
                self._kill([slots[k]])
            live = [k for k in range(len(slots)) if k not in lost]
            between()  # the barrier: every kept actor is connected and warmed up
            for k in live:
                try:
                    clocks[k] = measure_clock_offset(self._remote_clock(slots[k]))
                except ray.exceptions.RayError as exc:
                    lost[k] = _why(exc)
                    self._kill([slots[k]])
            live = [k for k in live if k not in lost]
            worst_rtt_s = max((2 * clocks[k][1] for k in live), default=0.0)
            epoch = time.time() + max(START_LEAD_S, 4 * worst_rtt_s)
            for k in live:
                self._actors[slots[k]].go.remote(epoch + clocks[k][0])
            refs = {k: self._actors[slots[k]].result.remote(timeout_s) for k in live}
            for k, out in self._gather(refs, timeout_s + START_LEAD_S + CALL_TIMEOUT_S,
                                       lost, "finish").items():
                if out[0] == "done" and out[1][0] is not None:
                    kept[k] = out[1]
                else:
                    lost[k] = (f"its load failed: {out[1]}" if out[0] == "error" else
                               f"no result within {timeout_s:g} s" if out[0] == "timeout"
                               else "it stopped before its run")
                    self._kill([slots[k]])
            self._kill([slots[k] for k in lost])  # died, or no answer: never used again
        except BaseException:
            self._stop_all(slots)
            raise
        shares, out_records = [], []
        for k, s in enumerate(slots):
            info = self._info[s]
            if k in kept:
                res, target, cpu_s, wall_s = kept[k]
                shifted = _shift(res, target)
                out_records.append(shifted)
                shares.append(node_share(
                    s, info, jobs[k], shifted, late_threshold_ms=late_threshold_ms,
                    clock=clocks.get(k), start_skew_s=res.record.t_began - target,
                    cpu_share=cpu_s / wall_s if wall_s > 0 else None))
            else:
                shares.append(node_share(s, info, jobs[k], None,
                                         late_threshold_ms=late_threshold_ms,
                                         lost_reason=lost.get(k, "lost"),
                                         clock=clocks.get(k)))
        for sh in shares:
            if sh.lost:
                self._log(f"warning: ray load actor {sh.actor} on {sh.hostname}/"
                          f"{sh.node_ip} lost: {sh.lost_reason}; its "
                          f"{sh.lost_requests} request(s) are counted as lost")
        self.last_load = DistributedLoad(
            ray_address=self.address, actors=len(shares), nodes=shares,
            distinct_nodes=len({sh.node_id for sh in shares}),
            scheduled_requests=sum(sh.scheduled_requests for sh in shares),
            sent_requests=sum(sh.sent_requests for sh in shares),
            ok_requests=sum(sh.ok_requests for sh in shares),
            lost_requests=sum(sh.lost_requests for sh in shares),
            late_sends=sum(sh.late_sends for sh in shares),
            max_clock_offset_error_ms=max((sh.clock_offset_error_ms for sh in shares
                                           if sh.clock_offset_error_ms is not None),
                                          default=None))
        if not out_records:
            raise EnvironmentProblem(
                "every Ray load actor was lost: " + "; ".join(
                    f"actor {sh.actor}: {sh.lost_reason}" for sh in shares),
                "check the cluster (ray status) and the nodes' route to the server")
        return out_records

    def _remote_clock(self, slot: int) -> Callable[[], float]:
        """A function reading actor ``slot``'s wall clock (one Ray round trip)."""
        actor, ray = self._actors[slot], self._ray

        def read() -> float:
            return float(ray.get(actor.clock.remote(), timeout=CALL_TIMEOUT_S))

        return read

    def _gather(self, refs: dict[int, Any], timeout_s: float, lost: dict[int, str],
                what: str) -> dict[int, Any]:
        """Results of ``refs`` (share -> object ref) within ``timeout_s``; a share whose
        actor died or did not answer goes to ``lost`` with the reason."""
        ray = self._ray
        out: dict[int, Any] = {}
        by_ref = {r: k for k, r in refs.items()}
        deadline = time.monotonic() + timeout_s
        pending = list(refs.values())
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            done, pending = ray.wait(pending, num_returns=1, timeout=min(left, 1.0))
            for r in done:
                k = by_ref[r]
                try:
                    out[k] = ray.get(r)
                except ray.exceptions.RayError as exc:
                    lost[k] = _why(exc)
        for r in pending:
            lost[by_ref[r]] = f"did not {what} within {timeout_s:g} s"
        return out

    def _stop_all(self, slots: Sequence[int]) -> None:
        """On an interrupt or error: kill every actor of the run now (a killed actor's
        process exits, closing its connections)."""
        self._kill(slots)

    # -- findings

    def findings(self, run: Any) -> list[Finding]:
        """Run-level warnings of a distributed run: lost shares, actors sharing a node."""
        out: list[Finding] = []
        for c in run.configs:
            for rep in c.repeats:
                d = rep.distributed
                if d is None:
                    continue
                where = f"{c.load.label} repeat {rep.repeat + 1}"
                if d.lost_requests or any(n.lost for n in d.nodes):
                    names = ", ".join(f"actor {n.actor} ({n.hostname or n.node_ip})"
                                      for n in d.nodes if n.lost)
                    out.append(Finding(
                        code="load-share-lost", where=where,
                        message=f"{names} lost during the run: {d.lost_requests} of "
                                f"{d.scheduled_requests} scheduled request(s) have no "
                                "record; the figures are the other shares' (the server's "
                                "statistics may include requests the lost share sent)",
                        remedy="check the lost node (ray status) and run again"))
                if d.distinct_nodes < d.actors:
                    out.append(Finding(
                        code="load-actors-share-node", severity="info", where=where,
                        message=f"{d.actors} load actors ran on {d.distinct_nodes} node(s): "
                                "they share those machines' CPUs and network",
                        remedy="start more Ray nodes, or lower --ray-actors"))
        return out


def _why(exc: BaseException) -> str:
    """One line for a Ray failure (an actor or its node died)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}"

