"""Discrete-event simulation of the dynamic batcher, driven by the measured T(b).

The model (the same structure as the embedded batcher in :mod:`trtcheck.measure`):

1. Requests arrive at times ``a_i`` (Poisson, constant rate, or a trace).
2. **Ingress**: each request costs ``ingress_per_request_us`` of a single serial
   dispatcher thread (the asyncio event loop: receive, create the future, enqueue)
   before it joins the queue: ``enq_i = max(a_i, enq_{i-1}) + c`` (a FIFO single server,
   Lindley's recursion).
3. **Dispatch**: whenever an instance is free and something changed (an arrival, a
   completion, a window timer), the free instance asks
   :meth:`trtcheck.policy.BatchingPolicy.decide` (the very function the batcher calls)
   and either takes the first ``dispatch`` queued requests or waits until the
   returned deadline. Window timers fire ``timer_slack_us`` late (asyncio's timers run
   on the selector's millisecond-rounded timeout and the loop's own latency).
4. **Execution**: the batch occupies the instance for
   ``T(b) * f + per_batch_overhead_ms + b * per_item_overhead_ms`` where ``T(b)`` is
   the measured curve (piecewise linear) and ``f`` a factor drawn from the measured
   relative spread at the nearest measured batch size (raw samples / median), or from a
   lognormal fitted to it, or 1 (``spread="none"``).
5. **Response**: each request's latency is its batch's completion minus its arrival,
   plus ``per_request_overhead_ms`` (work outside the queue that does not hold the
   instance: HTTP parsing, serialisation, the response; a pure delay). With Triton's
   batcher in an open loop, the responses leave ``per_batch_overhead_ms`` before the
   instance is free again: that overhead is the instance's work after the batch
   (Triton's request time held 0.005 ms per request outside queue and compute where
   the fit to its queue time gave 2.2 ms per execution, a python-backend model on a
   CPU host), so it delays the batches behind, not the batch's own requests.

Cost: one Python iteration per batch and per arrival that meets a free instance;
arrival bookkeeping while all instances are busy is a ``bisect`` (the queue is the
index range ``[head, tail)`` of the sorted enqueue times). A 3,000-request run takes a
few milliseconds, so ``advise`` sweeps hundreds of candidates in well under a second.
"""

from __future__ import annotations

from typing import Any

import bisect
import collections
import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from trtcheck.analyze.advice.curve import LatencyCurve, fit_linear
from trtcheck.arrivals import (  # noqa: F401  (re-exported: the simulator's arrivals)
    constant_arrivals,
    make_arrivals,
    poisson_arrivals,
    read_trace,
    trace_rate_per_s,
)
from trtcheck.errors import InputError
from trtcheck.policy import BatchingPolicy
from trtcheck.results.advice import SimPrediction
from trtcheck.stats import circular_block_indices, percentile
from trtcheck.units import us_to_s


@dataclass(frozen=True)
class ServiceModel:
    """How long things take, apart from the arrival process.

    Attributes:
        curve: T(b) in ms with raw samples (for the spread) when measured.
        per_batch_overhead_ms: instance time added to every execution (executor thread
            hop, launch; with Triton's batcher in an open loop, after the batch's
            responses: see the module text, step 5), >= 0.
        per_item_overhead_ms: instance time per request in a batch (gathering inputs,
            slicing outputs), >= 0.
        per_request_overhead_ms: latency added to every request outside the queue
            (HTTP, serialisation); a pure delay, no shared resource, >= 0.
        ingress_per_request_us: serial dispatcher cost per request before it is queued
            (event-loop time), >= 0.
        timer_slack_us: how late window timers fire, >= 0.
        spread: ``"empirical"`` (resample the measured relative spread),
            ``"lognormal"`` (lognormal fitted to it) or ``"none"``.
        batch_excess_ms: measured samples of extra instance time per execution beyond
            the median T(b) in the serving process (event-loop/GIL hand-back, executor
            hop, assembly, preemption), drawn independently per execution; empty: none.
            When given, use ``spread="none"`` (the samples already carry the spread).
        request_delay_ms: measured samples of per-request time outside the queue and
            the instance (result dispatch, the event-loop turn back to the caller),
            drawn per request and added to its latency; empty: none.
        send_lag_ms: measured samples of how late requests entered the server after
            their scheduled arrival (load generator send lag), drawn per request and
            added to the arrival before it joins the queue (order preserved); empty: none.
        resample_block: the three measured sample series above are in time order and
            are drawn in circular blocks of this many consecutive samples
            (:func:`trtcheck.stats.circular_block_indices`), not one by one: a
            process-wide stall shows as a run of consecutive late sends and slow
            executions, and a host whose speed drifts gives runs of slow executions;
            independent draws would turn one stall of 30 late requests into 30 stalls,
            and spread a slow phase evenly. 64 (our choice, >= 1; 1 draws independently)
            keeps the stalls and the drift seen in validation (a lag-1 autocorrelation
            of the per-execution excess up to 0.9 on a shared host) inside one block.
        contention_per_arrival_ms: instance time added to an execution for every request
            that arrives while it runs, >= 0. A model function that runs Python (eager
            PyTorch launching kernels) shares the interpreter lock with the event loop,
            so the loop's work for each arrival stretches the running execution: measured
            0.39 ms per arrival for eager ResNet-18 fp16 on an H200 (an execution of
            2.0 ms in ``bench`` took 3.5 ms at 300 req/s and 5-6 ms at 1,500 req/s in
            the serving process; docs/advise.md). Calibrated by
            :func:`trtcheck.analyze.advice.inputs.calibration_from_serve`; 0 for backends that
            release the lock (ONNX Runtime, TensorRT, async functions).
        batcher: ``"embedded"`` (:meth:`BatchingPolicy.decide` for a free instance) or
            ``"triton"`` (Triton's batcher thread, :meth:`BatchingPolicy.triton_step`).
        idle_slowdown: relative extra time of an execution that starts on an instance
            idle for long, >= 0 (0: none). An execution that starts ``g`` ms after its
            instance's previous one ended computes ``1 + a (1 - exp(-g / tau))`` times its
            T(b) (``a`` this, ``tau`` :attr:`idle_tau_ms`; the per-execution overheads
            outside compute and the measured excess are not scaled: the slowdown is
            fitted to Triton's compute times); the instance that takes the
            next batch is the one idle longest (Triton's instance threads wait in turn).
            A GPU model in Triton's python backend ran batch 1 in 4.38 ms at 96 req/s and
            3.25 ms at 319 req/s on one instance (ResNet-18, H200), 9.1 ms at concurrency
            1 and 7.3 ms at 2 (MobileNetV3, H100): an instance kept busy runs faster, and
            instances that share a load each idle longer. Fitted by
            :func:`trtcheck.analyze.tune_plan.fit_idle_slowdown`; Triton's batcher only.
        idle_tau_ms: time constant of :attr:`idle_slowdown`, ms (> 0).
        delay_per_execution: in a closed loop (:func:`simulate_closed`), draw
            :attr:`request_delay_ms` once per execution for all its requests instead of
            once per request. The requests of one execution are answered together, so a
            stall delays them together and their clients send again together; drawn per
            request, a few slow samples scatter every batch's clients and a window that
            counts from the oldest request splits the next batch. A live-Triton
            calibration sets it (its delay is a residual whose tail is such stalls); open
            loops draw per request either way.
    """

    curve: LatencyCurve
    per_batch_overhead_ms: float = 0.0
    per_item_overhead_ms: float = 0.0
    per_request_overhead_ms: float = 0.0
    ingress_per_request_us: float = 0.0
    timer_slack_us: float = 0.0
    spread: str = "empirical"
    batch_excess_ms: tuple[float, ...] = ()
    request_delay_ms: tuple[float, ...] = ()
    send_lag_ms: tuple[float, ...] = ()
    resample_block: int = 64
    contention_per_arrival_ms: float = 0.0
    batcher: str = "embedded"
    delay_per_execution: bool = False
    idle_slowdown: float = 0.0
    idle_tau_ms: float = 3.0

    def __post_init__(self) -> None:
        if self.batcher not in ("embedded", "triton"):
            raise InputError(f"unknown batcher {self.batcher!r}", "use embedded or triton")
        c = self.contention_per_arrival_ms
        if not (math.isfinite(c) and c >= 0):
            raise InputError(f"contention per arrival must be a number >= 0 ms, got {c!r}")
        if not (isinstance(self.resample_block, int) and self.resample_block >= 1):
            raise InputError(f"resample block must be an integer >= 1, got "
                             f"{self.resample_block!r}")
        for name in ("per_batch_overhead_ms", "per_item_overhead_ms",
                     "per_request_overhead_ms", "ingress_per_request_us", "timer_slack_us"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise InputError(f"{name.replace('_', '-')} must be a number >= 0, got {v!r}")
        a, tau = self.idle_slowdown, self.idle_tau_ms
        if not (math.isfinite(a) and a >= 0):
            raise InputError(f"idle slowdown must be a number >= 0, got {a!r}")
        if not (math.isfinite(tau) and tau > 0):
            raise InputError(f"idle time constant must be a number > 0 ms, got {tau!r}")
        if a > 0 and self.batcher != "triton":
            raise InputError("the idle slowdown is modelled for Triton's batcher only",
                             "use batcher='triton' or idle_slowdown=0")
        if self.spread not in ("empirical", "lognormal", "none"):
            raise InputError(f"unknown spread model {self.spread!r}",
                             "use empirical, lognormal or none")

    @property
    def mean_batch_excess_ms(self) -> float:
        """Mean of :attr:`batch_excess_ms` (0 when empty)."""
        return float(np.mean(self.batch_excess_ms)) if self.batch_excess_ms else 0.0

    def contention_stretch(self, rate_per_s: float | None) -> float:
        """Factor on the instance time from :attr:`contention_per_arrival_ms` at an
        arrival rate: an execution of ``s`` ms sees ``rate * s / 1000`` arrivals, each
        adding ``c`` ms, so ``s' = s / (1 - rate * c / 1000)`` (a fixed point; inf when
        ``rate * c >= 1000``: the loop's work alone fills the time). 1 without contention
        or rate."""
        c = self.contention_per_arrival_ms
        if c <= 0 or not rate_per_s:
            return 1.0
        share = rate_per_s * c / 1000.0
        return math.inf if share >= 1.0 else 1.0 / (1.0 - share)

    def mean_spread_factors(self, bs: np.ndarray) -> np.ndarray:
        """Mean of the spread factor the simulator multiplies T(b) by, per batch size in
        ``bs`` (1 with ``spread="none"`` or no raw samples): the mean of the measured
        samples over their median (empirical), or ``exp(sigma^2 / 2)`` (lognormal). A
        heavy tail makes the mean execution, which sets capacity, longer than the median
        T(b): a bench on a busy machine had a median of 0.56 ms and a mean near 2 ms."""
        bs = np.asarray(bs, dtype=np.float64)
        if self.spread == "none" or not self.curve.samples_ms:
            return np.ones_like(bs)
        keys = np.array(sorted(self.curve.samples_ms), dtype=np.float64)
        per_key = []
        for k in keys:
            rel = self.curve.spread_factors(int(k))
            if rel is None or rel.size < 2:
                per_key.append(1.0)
            elif self.spread == "empirical":
                per_key.append(float(np.mean(rel)))
            else:
                pos = rel[rel > 0]
                sigma = float(np.std(np.log(pos), ddof=1)) if pos.size > 1 else 0.0
                per_key.append(math.exp(sigma * sigma / 2.0))
        nearest = np.argmin(np.abs(np.log(np.maximum(bs, 1.0))[:, None]
                                   - np.log(keys)[None, :]), axis=1)
        return np.asarray(per_key, dtype=np.float64)[nearest]

    def batch_time_ms(self, b: int, rate_per_s: float | None = None) -> float:
        """Mean instance time of a batch of ``b``: ``T(b)`` times its mean spread factor
        (:meth:`mean_spread_factors`), ``+ per-batch + b*per-item`` plus the mean
        measured excess, times :meth:`contention_stretch` at ``rate_per_s`` (req/s)
        when given."""
        f = float(self.mean_spread_factors(np.array([b]))[0])
        return (float(self.curve.t_ms(b)) * f + self.per_batch_overhead_ms
                + b * self.per_item_overhead_ms
                + self.mean_batch_excess_ms) * self.contention_stretch(rate_per_s)

    def capacity_per_instance_per_s(self, max_batch_size: int,
                                    rate_per_s: float | None = None) -> tuple[float, int]:
        """``max over b <= B of 1000*b / batch_time_ms(b, rate)`` (mean execution times,
        the measured spread included) and the ``b`` reaching it (the serial ingress is
        :meth:`ingress_capacity_per_s`). With contention the
        capacity depends on the offered rate (``rate_per_s``; 0 when it saturates)."""
        fit = fit_linear(self.curve)
        bs = np.arange(1, max_batch_size + 1)
        t = (np.asarray(self.curve.t_ms(bs, fit)) * self.mean_spread_factors(bs)
             + self.per_batch_overhead_ms + bs * self.per_item_overhead_ms
             + self.mean_batch_excess_ms)
        stretch = self.contention_stretch(rate_per_s)
        if math.isinf(stretch):
            return 0.0, int(max_batch_size)
        cap = 1000.0 * bs / (t * stretch)
        i = int(np.argmax(cap))
        return float(cap[i]), int(bs[i])

    def ingress_capacity_per_s(self) -> float:
        """Requests per second the serial ingress can take (inf when it costs nothing)."""
        return 1e6 / self.ingress_per_request_us if self.ingress_per_request_us > 0 else math.inf


# ----------------------------------------------------------------------------- arrivals
# The arrival schedules live in trtcheck.arrivals (shared with the load generator); they
# are imported above and stay importable from here.


# ---------------------------------------------------------------------------- the engine

class _Draws:
    """Pre-drawn service-time factors (common random numbers across candidates)."""

    def __init__(self, service: ServiceModel, n: int, seed: int) -> None:
        rng = np.random.default_rng(seed + 1_000_003)
        self.u = rng.random(n + 1)
        self.z = rng.standard_normal(n + 1)
        self.service = service
        self._cache: dict[int, np.ndarray | float | None] = {}
        block = service.resample_block
        self.batch_excess = self._resample(service.batch_excess_ms, n + 1, block, rng)
        self.request_delay = self._resample(service.request_delay_ms, n, block, rng)
        self.send_lag = self._resample(service.send_lag_ms, n, block, rng)

    @staticmethod
    def _resample(samples: tuple[float, ...], m: int, block: int,
                  rng: np.random.Generator) -> np.ndarray | None:
        if not samples:
            return None
        arr = np.asarray(samples, dtype=np.float64)
        return arr[circular_block_indices(arr.size, m, block, rng)]

    def factors_for(self, b: int) -> np.ndarray | None:
        """Factor for batch number ``k`` of size ``b`` is ``factors_for(b)[k]``."""
        if b in self._cache:
            return self._cache[b]  # type: ignore[return-value]
        sv = self.service
        fac = None
        if sv.spread != "none":
            rel = sv.curve.spread_factors(b)
            if rel is not None and rel.size > 1:
                if sv.spread == "empirical":
                    fac = rel[(self.u * rel.size).astype(np.int64).clip(0, rel.size - 1)]
                else:
                    sigma = float(np.std(np.log(rel[rel > 0]), ddof=1))
                    fac = np.exp(sigma * self.z)
        self._cache[b] = fac
        return fac


def _triton_core(policy: BatchingPolicy, instances: int, enq: list[float], service_ms,
                 slack_s: float, b_start: list[int], b_size: list[int], b_done: list[float],
                 b_qlen: list[int], b_now: list[float], b_reason: list[str],
                 finished: list[int] | None = None, idle_slowdown: float = 0.0,
                 idle_tau_s: float = 0.003, b_idle: list[float] | None = None,
                 post_s: float = 0.0):
    """Triton's per-model dynamic batcher (``DynamicBatchScheduler::BatcherThread`` and
    ``Enqueue`` in src/dynamic_batch_scheduler.cc, ``RateLimiter::PayloadSlotAvailable``
    and ``DequeuePayload`` in src/rate_limiter.cc, ``InstanceQueue::Dequeue`` in
    src/instance_queue.cc) as an event-driven core that an arrival process drives.

    The batcher thread keeps one current payload. A pass (:meth:`BatchingPolicy.triton_step`)
    moves queued requests into it; a new payload goes to the payload queue at once and a
    free instance takes it. The batcher starts a new payload when the current one was
    taken by an instance or cannot grow (``payload_saturated_``), forms nothing while
    ``2 x instances`` payloads wait (``PayloadSlotAvailable``), and runs a pass when a
    request arrives and the wake rule of ``Enqueue`` holds (a slot is free and the payload
    was taken, is saturated, or the queue reached ``next_preferred_batch_size_``), when an
    instance takes a payload (its callback), when its delay timer fires, or after
    :data:`~trtcheck.policy.TRITON_IDLE_WAIT_S` idle. An instance that takes a payload also
    merges the payloads behind it whose oldest request waited longer than the window, up
    to ``max_batch_size`` (``InstanceQueue::Dequeue``). Batcher and hand-over cost no time.

    Args:
        enq: enqueue times (s), non-decreasing; request ``i`` is ``enq[i]``. The driver may
            append to it as requests reach the queue (a closed loop), never reorder it.
        service_ms: ``service_ms(size, k, now, idle_fac=f)``: execution time (ms) of the
            ``k``-th execution, of ``size`` requests, started at ``now`` (s), its compute
            T(b) times the idle factor ``f``.
        slack_s: how late the batcher's delay timer fires (s).
        b_start, b_size, b_done, b_qlen, b_now, b_reason: each execution appends its first
            request (its requests are ``b_start .. b_start + b_size - 1``), size,
            completion (s), queue length when its payload was formed, start (s) and reason.
        finished: when given, the index (into the ``b_*`` lists) of every execution that
            completes is appended to it, in completion order.
        idle_slowdown, idle_tau_s: an execution on an instance idle for ``g`` s computes
            ``1 + idle_slowdown (1 - exp(-g / idle_tau_s))`` times its T(b) (the overheads
            outside compute and the excess are not scaled)
            (:attr:`ServiceModel.idle_slowdown`); the instance idle longest takes the
            next payload; an instance that never ran counts as idle for long.
        b_idle: when given, each execution's idle factor is appended to it.
        post_s: of each execution's time, the part after its responses left (s): the
            instance stays busy for it, ``b_done`` is the response (not before the
            start); 0 in a closed loop, whose clients send again when the instance frees.

    Returns:
        ``(next_time, advance, drained)``: ``next_time()`` is the time (s) of the core's
        next own event (a completion or the batcher's timer; inf: none);
        ``advance(now, arrived)`` processes, at time ``now``, the arrivals of requests up
        to index ``arrived - 1`` (``enq[i] <= now`` for them), then the completions and
        the timer due by then (at equal times an arrival is queued before an instance
        takes a batch, as in :func:`simulate`'s embedded batcher); ``drained(n)`` is
        true when the first ``n`` requests are all in executions.
    """
    from trtcheck.policy import TRITON_IDLE_WAIT_S, TRITON_PAYLOAD_SLOTS_PER_INSTANCE

    inf = math.inf
    window_s = policy.window_s
    big = policy.max_batch_size
    slots = TRITON_PAYLOAD_SLOTS_PER_INSTANCE * instances
    step = policy.triton_step
    heappush, heappop = heapq.heappush, heapq.heappop
    # payloads: [first request, size, reason, queue length when formed]
    pq: list[list] = []  # formed payloads waiting for an instance, oldest first
    cur: list | None = None  # the batcher's current payload (None: a new, empty one)
    cur_taken = False  # the current payload went to an instance (stale)
    saturated = False
    next_pref = 0
    head = tail = 0  # queued requests: [head, tail)
    free = instances
    idle_q = collections.deque((-inf, i) for i in range(instances))  # (idle since, inst)
    busy: list[tuple[float, int, int]] = []  # (completion, execution index, instance)
    a_idle = float(idle_slowdown)
    exp = math.exp
    timer = inf  # the batcher's wake-up time (inf: sleeps until woken)
    blocked = False  # waiting for a payload slot
    k = 0

    def take_payloads(now: float) -> None:
        nonlocal free, k, cur_taken
        while free and pq:
            p = pq.pop(0)
            if cur is p:
                cur_taken = True
            while (pq and window_s > 0 and big > 1 and now - enq[pq[0][0]] > window_s
                   and p[1] + pq[0][1] <= big):
                nxt = pq.pop(0)
                if cur is nxt:
                    cur_taken = True
                p[1] += nxt[1]
            since, inst = idle_q.popleft()
            fac = 1.0 + a_idle * (1.0 - exp((since - now) / idle_tau_s)) if a_idle else 1.0
            if b_idle is not None:
                b_idle.append(fac)
            done = now + service_ms(p[1], k, now, idle_fac=fac) * 1e-3
            heappush(busy, (done, k, inst))
            done = max(now, done - post_s)
            k += 1
            free -= 1
            b_start.append(p[0])
            b_size.append(p[1])
            b_done.append(done)
            b_qlen.append(p[3])
            b_now.append(now)
            b_reason.append(p[2])

    def batcher(now: float) -> None:
        nonlocal cur, cur_taken, saturated, next_pref, head, timer, blocked
        blocked = False
        while True:
            if saturated or cur_taken:
                cur, cur_taken, saturated, next_pref = None, False, False, 0
            q = tail - head
            if q == 0:
                timer = now + TRITON_IDLE_WAIT_S
                return
            if len(pq) >= slots:
                blocked, timer = True, inf
                return
            st = step(q, cur[1] if cur is not None else 0, saturated, enq[head], now)
            saturated = st.saturated
            if st.next_preferred is not None:
                next_pref = st.next_preferred
            if st.take <= 0:
                timer = (st.wait_until_s + slack_s if st.wait_until_s is not None
                         else now + TRITON_IDLE_WAIT_S)
                return
            if cur is None:
                cur = [head, st.take, st.reason, q]
                pq.append(cur)
            else:
                cur[1] += st.take
            head += st.take
            take_payloads(now)

    def next_time() -> float:
        t_done = busy[0][0] if busy else inf
        return timer if timer < t_done else t_done

    def advance(now: float, arrived: int) -> None:
        nonlocal free, timer, tail
        while tail < arrived:  # arrivals first: a request that comes as an instance frees
            tail += 1  # joins what is waiting (the embedded batcher's order too)
            if blocked:
                continue
            if len(pq) < slots and (saturated or cur_taken or tail - head >= next_pref):
                batcher(now)
        woken = False
        while busy and busy[0][0] <= now:
            t_done, bi, inst = heappop(busy)
            idle_q.append((t_done, inst))
            free += 1
            if finished is not None:
                finished.append(bi)
            if pq:
                take_payloads(now)
                woken = True  # the payload's callback wakes the batcher
        if timer <= now:
            timer = inf
            woken = True
        if woken:
            batcher(now)

    def drained(n: int) -> bool:
        return head >= n and not pq

    return next_time, advance, drained


def _triton_run(policy: BatchingPolicy, instances: int, enq: list[float], service_ms,
                slack_s: float, b_start: list[int], b_size: list[int], b_done: list[float],
                b_qlen: list[int], b_now: list[float], b_reason: list[str],
                idle_slowdown: float = 0.0, idle_tau_s: float = 0.003,
                b_idle: list[float] | None = None, post_s: float = 0.0) -> None:
    """Triton's batcher (:func:`_triton_core`) over the open-loop enqueue times ``enq``
    (s, increasing, all known in advance), appending each execution to the lists."""
    n = len(enq)
    inf = math.inf
    next_time, advance, drained = _triton_core(policy, instances, enq, service_ms, slack_s,
                                               b_start, b_size, b_done, b_qlen, b_now,
                                               b_reason, None, idle_slowdown, idle_tau_s,
                                               b_idle, post_s)
    tail = 0
    while True:
        t_arr = enq[tail] if tail < n else inf
        t_core = next_time()
        now = t_arr if t_arr < t_core else t_core
        if now == inf:
            break
        while tail < n and enq[tail] <= now:
            tail += 1
        advance(now, tail)
        if drained(n):
            break


def simulate(policy: BatchingPolicy, instances: int, service: ServiceModel,
             arrivals_s: np.ndarray, *, seed: int = 0, warmup_fraction: float = 0.0,
             draws: _Draws | None = None, rate_per_s: float | None = None,
             finite: bool = False, latencies_out: list[float] | None = None,
             executions_out: list[tuple[int, float]] | None = None) -> SimPrediction:
    """Simulate the batcher for one configuration.

    Args:
        policy: the dispatch policy (its :meth:`~BatchingPolicy.decide` is called for
            every dispatch decision, exactly as the batcher does).
        instances: execution instances sharing the queue, >= 1.
        service: time model.
        arrivals_s: arrival times in seconds, increasing, shape ``[n]``, ``n >= 2``.
        seed: seed of the service-time spread draws.
        warmup_fraction: share of the first requests left out of the statistics
            (start-up transient of an empty system), in ``[0, 0.5]``.
        draws: pre-drawn factors to share between candidates (internal).
        rate_per_s: offered rate for the record (default: from ``arrivals_s``).
        latencies_out: when given, the simulated latency (ms) of every request counted
            (after the warm-up) is appended to it (live calibration compares them with
            the client's).
        executions_out: when given, ``(size, idle factor)`` of every execution counted
            (after the warm-up) is appended to it (the factor is 1 without
            :attr:`ServiceModel.idle_slowdown`).
        finite: the arrivals are a finite load that drains (a burst: every arrival at
            once, ``trtcheck serve --load burst:N``): nothing is refused for capacity,
            the run is always ``stable``, the recorded ``arrival_rate_per_s`` is the rate
            at which requests reached the queue (``n / last enqueue``, inf for an
            instant burst without a serial front) and ``utilisation`` is the measured
            throughput over the capacity at ``policy.max_batch_size``.

    Returns:
        :class:`SimPrediction`. When the offered rate of an open load exceeds the
        capacity of ``instances`` at ``policy.max_batch_size`` (or of the ingress),
        nothing is simulated and ``stable`` is ``False``.

    Raises:
        InputError: ``instances < 1``, fewer than 2 arrivals, warm-up out of range.
    """
    if not isinstance(instances, int) or instances < 1:
        raise InputError(f"instances must be an integer >= 1, got {instances!r}")
    n = int(len(arrivals_s))
    if n < 2:
        raise InputError("need at least 2 arrivals to simulate")
    if not 0.0 <= warmup_fraction <= 0.5:
        raise InputError("warm-up fraction must be in [0, 0.5]")
    big_b = policy.max_batch_size
    if finite:
        rate = math.inf
        cap_inst, _ = service.capacity_per_instance_per_s(big_b, None)
        cap = min(cap_inst * instances, service.ingress_capacity_per_s())
        rho = math.nan
    else:
        rate = rate_per_s if rate_per_s is not None else trace_rate_per_s(arrivals_s)
        cap_inst, _ = service.capacity_per_instance_per_s(big_b, rate)
        cap = min(cap_inst * instances, service.ingress_capacity_per_s())
        rho = rate / cap if cap > 0 else math.inf
    base: dict[str, Any] = dict(window_us=float(policy.max_queue_delay_us), max_batch_size=big_b,
                instances=instances, arrival_rate_per_s=float(rate), utilisation=float(rho),
                preferred_batch_sizes=list(policy.preferred_batch_sizes))
    if not finite and rho >= 1.0:
        return SimPrediction(stable=False, **base)

    arr = np.asarray(arrivals_s, dtype=np.float64)
    draws = draws or _Draws(service, n, seed)
    sent = arr
    if draws.send_lag is not None:
        sent = np.maximum.accumulate(arr + 1e-3 * draws.send_lag[:n])
    c_in = us_to_s(service.ingress_per_request_us)
    if c_in > 0:
        idx = np.arange(n, dtype=np.float64)
        enq_arr = np.maximum.accumulate(sent - idx * c_in) + (idx + 1) * c_in
    else:
        enq_arr = sent
    enq = enq_arr.tolist()
    excess = draws.batch_excess.tolist() if draws.batch_excess is not None else None

    fit = fit_linear(service.curve)
    tmed = np.asarray(service.curve.t_ms(np.arange(0, big_b + 1), fit), dtype=np.float64)
    fixed_ms = (tmed + service.per_batch_overhead_ms
                + np.arange(0, big_b + 1) * service.per_item_overhead_ms)
    fac_by_b: list[list[float] | None] = [None] * (big_b + 1)
    has_spread = service.spread != "none"
    t_med_list = tmed.tolist()
    fixed_list = fixed_ms.tolist()
    slack = us_to_s(service.timer_slack_us)
    contention = service.contention_per_arrival_ms

    decide = policy.decide
    inf = math.inf
    free = instances
    busy: list[float] = []
    timer = inf
    head = tail = 0
    k = 0
    b_start: list[int] = []
    b_size: list[int] = []
    b_done: list[float] = []
    b_qlen: list[int] = []
    b_now: list[float] = []
    b_reason: list[str] = []
    reasons: dict[str, int] = {}
    heappush, heappop, bis = heapq.heappush, heapq.heappop, bisect.bisect_right
    now = 0.0

    def service_ms(m: int, k: int, now: float, lo_hint: int = 0,
                   idle_fac: float = 1.0) -> float:
        """Execution time (ms) of the ``k``-th batch, of ``m`` requests, started at ``now``
        (s): T(m) with its drawn spread times the idle factor ``idle_fac``, the
        overheads, the measured excess, and the contention of the arrivals during the
        execution (``lo_hint``: a queue index at or before ``now``)."""
        svc = fixed_list[m]
        compute = t_med_list[m]
        if has_spread:
            fl = fac_by_b[m]
            if fl is None:
                fa = draws.factors_for(m)
                fl = fa.tolist() if fa is not None else []
                fac_by_b[m] = fl
            if fl:
                svc += t_med_list[m] * (fl[k] - 1.0)
                compute = t_med_list[m] * fl[k]
        if idle_fac != 1.0:
            svc += compute * (idle_fac - 1.0)
        if excess is not None:
            svc += excess[k]
        if svc < 0.0:  # a measured excess below -T(b) (noisy bench): no time travel
            svc = 0.0
        if contention > 0.0:  # arrivals during the execution stretch it
            lo = bis(enq, now, lo_hint)
            extra = 0.0
            for _ in range(3):  # fixed point; the count rarely changes after 2
                extra_new = contention * (bis(enq, now + (svc + extra) * 1e-3, lo) - lo)
                if extra_new == extra:
                    break
                extra = extra_new
            svc += extra
        return svc

    b_idle: list[float] = []
    if service.batcher == "triton":
        _triton_run(policy, instances, enq, service_ms, slack, b_start, b_size, b_done,
                    b_qlen, b_now, b_reason, service.idle_slowdown,
                    service.idle_tau_ms * 1e-3, b_idle, service.per_batch_overhead_ms * 1e-3)
        head = n
    while head < n:
        if free == 0:
            now = busy[0]
        else:
            t_next = enq[tail] if tail < n else inf
            if busy and busy[0] < t_next:
                t_next = busy[0]
            now = timer if timer < t_next else t_next
        while busy and busy[0] <= now:
            heappop(busy)
            free += 1
        if tail < n and enq[tail] <= now:
            tail = bis(enq, now, tail)
        if timer <= now:
            timer = inf
        while free:
            q = tail - head
            d = decide(q, enq[head] if q else None, now)
            m = d.dispatch
            if m > 0:
                svc = service_ms(m, k, now, tail)
                done = now + svc * 1e-3
                heappush(busy, done)
                free -= 1
                b_start.append(head)
                b_size.append(m)
                b_done.append(done)
                b_qlen.append(q)
                b_now.append(now)
                b_reason.append(d.reason)
                head += m
                k += 1
                timer = inf
            else:
                timer = d.wait_until_s + slack if d.wait_until_s is not None else inf
                break

    sizes = np.asarray(b_size, dtype=np.int64)
    done_b = np.asarray(b_done, dtype=np.float64)
    start_b = np.asarray(b_start, dtype=np.int64)
    done_r = np.repeat(done_b, sizes)
    dispatch_t = np.repeat(np.asarray(b_now, dtype=np.float64), sizes)
    lat_ms = (done_r - arr) * 1e3 + service.per_request_overhead_ms
    if draws.request_delay is not None:
        lat_ms = lat_ms + draws.request_delay[:n]
    first = int(n * warmup_fraction)
    keep_b = start_b >= first
    lat = lat_ms[first:]
    if latencies_out is not None:
        latencies_out.extend(lat.tolist())
    if executions_out is not None:
        facs = b_idle if len(b_idle) == len(b_size) else [1.0] * len(b_size)
        executions_out.extend((int(m), float(f)) for m, f, kept in
                              zip(b_size, facs, keep_b.tolist(), strict=True) if kept)
    span = float(done_r[first:].max() - arr[first])
    wait_total = float(np.sum(np.clip(dispatch_t[first:] - enq_arr[first:], 0, None)))
    sz = sizes[keep_b] if keep_b.any() else sizes
    # count the reasons of the batches reported (after the warm-up), so they add up
    for r, kept in zip(b_reason, keep_b if keep_b.any() else np.ones_like(keep_b), strict=True):
        if kept:
            reasons[r] = reasons.get(r, 0) + 1
    q = [percentile(lat, f) for f in (0.50, 0.95, 0.99)]  # one way everywhere
    if finite:
        reach = float(enq_arr[-1] - arr[0])
        base["arrival_rate_per_s"] = n / reach if reach > 0 else math.inf
        base["utilisation"] = (lat.size / span) / cap if span > 0 and cap > 0 else 0.0
    return SimPrediction(
        stable=True,
        throughput_queries_per_s=float(lat.size / span) if span > 0 else None,
        mean_ms=float(lat.mean()), p50_ms=float(q[0]), p95_ms=float(q[1]), p99_ms=float(q[2]),
        mean_batch=float(sz.mean()), max_batch=int(sz.max()),
        mean_queue_len=wait_total / span if span > 0 else None,
        max_queue_len=int(max(b_qlen)) if b_qlen else 0,
        single_request_batch_share=float(np.mean(sz == 1)),
        requests=int(lat.size), batches=int(sz.size), dispatch_reasons=reasons, **base)


@dataclass(frozen=True)
class Candidate:
    """One configuration to simulate: window (us), max batch, instances, and Triton
    preferred batch sizes (each in ``[1, max_batch_size]``; empty: none)."""

    window_us: float
    max_batch_size: int
    instances: int
    preferred_batch_sizes: tuple[int, ...] = ()

    def policy(self) -> BatchingPolicy:
        """The :class:`BatchingPolicy` of this candidate."""
        return BatchingPolicy(max_batch_size=self.max_batch_size,
                              max_queue_delay_us=self.window_us,
                              preferred_batch_sizes=self.preferred_batch_sizes)


@dataclass(frozen=True)
class ClosedLoop:
    """A closed-loop load (``trtcheck serve --load closed:C:COUNT``): ``clients`` clients
    each send a request at 0 and their next one as soon as the previous response is back
    (its latency includes the per-request overhead), ``count`` requests in all."""

    clients: int
    count: int

    def __post_init__(self) -> None:
        if not (isinstance(self.clients, int) and self.clients >= 1):
            raise InputError(f"closed loop needs >= 1 client, got {self.clients!r}")
        if not (isinstance(self.count, int) and self.count >= 2):
            raise InputError(f"closed loop needs >= 2 requests, got {self.count!r}")


def simulate_closed(policy: BatchingPolicy, instances: int, service: ServiceModel,
                    load: ClosedLoop, *, seed: int = 0, warmup_fraction: float = 0.0,
                    draws: _Draws | None = None, latencies_out: list[float] | None = None,
                    sends_out: list[float] | None = None) -> SimPrediction:
    """Simulate the batcher under a closed loop (arrivals follow completions).

    The same stages as :func:`simulate` (serial ingress, the batcher, the execution-time
    model, the per-request delay); a client sends its next request when its previous
    response arrives (completion + per-request overhead and delay). The batcher is the
    service model's: ``batcher="embedded"`` asks :meth:`BatchingPolicy.decide` whenever an
    instance is free; ``batcher="triton"`` runs Triton's batcher thread (the core
    :func:`simulate` runs for open-loop arrivals, :meth:`BatchingPolicy.triton_step`):
    a batch closes when its oldest request's delay runs out even while every instance is
    busy, up to ``2 x instances`` formed batches wait for an instance, and an instance
    merges waiting batches whose oldest request waited longer than the window. One
    Python step per event; the send lag and the interpreter-lock contention of the
    service model are not applied (they were measured under open-loop arrivals).

    Args:
        latencies_out: when given, the latency (ms, from the send to the response) of
            every request counted (after the warm-up) is appended to it.
        sends_out: when given, the send time (s, from the first send at 0) of every
            request is appended to it, in request order (fed to :func:`simulate` as
            arrivals, they reproduce this run's batches: the same core, the same draws).

    Returns:
        :class:`SimPrediction`, always ``stable`` (a closed loop cannot outrun the
        server); ``arrival_rate_per_s`` is the achieved request rate (= throughput,
        Little's law) and ``utilisation`` that rate over the capacity at
        ``policy.max_batch_size``.

    Raises:
        InputError: ``instances < 1``, warm-up out of range.
    """
    if not isinstance(instances, int) or instances < 1:
        raise InputError(f"instances must be an integer >= 1, got {instances!r}")
    if not 0.0 <= warmup_fraction <= 0.5:
        raise InputError("warm-up fraction must be in [0, 0.5]")
    n = load.count
    draws = draws or _Draws(service, n, seed)
    big_b = policy.max_batch_size
    fit = fit_linear(service.curve)
    tmed = np.asarray(service.curve.t_ms(np.arange(0, big_b + 1), fit), dtype=np.float64)
    fixed = (tmed + service.per_batch_overhead_ms
             + np.arange(0, big_b + 1) * service.per_item_overhead_ms).tolist()
    t_med = tmed.tolist()
    excess = draws.batch_excess.tolist() if draws.batch_excess is not None else None
    delay = draws.request_delay.tolist() if draws.request_delay is not None else None
    fac_by_b: dict[int, list[float]] = {}
    c_in = us_to_s(service.ingress_per_request_us)
    slack = us_to_s(service.timer_slack_us)
    c_req = service.per_request_overhead_ms * 1e-3
    has_spread = service.spread != "none"
    inf = math.inf

    def service_ms(m: int, k: int, now: float = 0.0, idle_fac: float = 1.0) -> float:
        """Execution time (ms) of the ``k``-th execution, of ``m`` requests: T(m) with
        its drawn spread times the idle factor ``idle_fac``, the overheads and the
        measured excess (no contention in a closed loop)."""
        svc = fixed[m]
        compute = t_med[m]
        if has_spread:
            fl = fac_by_b.get(m)
            if fl is None:
                fa = draws.factors_for(m)
                fl = fa.tolist() if fa is not None else []
                fac_by_b[m] = fl
            if fl:
                svc += t_med[m] * (fl[k % len(fl)] - 1.0)
                compute = t_med[m] * fl[k % len(fl)]
        if idle_fac != 1.0:
            svc += compute * (idle_fac - 1.0)
        if excess is not None:
            svc += excess[k % len(excess)]
        return svc if svc > 0.0 else 0.0

    sent_at = [0.0] * n
    enq_at: list[float] = []  # enqueue times in request order (non-decreasing: FIFO ingress)
    lat_ms = [0.0] * n
    sends: list[float] = [0.0] * min(load.clients, n)  # heap of send times
    n_sent = len(sends)
    enq_heap: list[tuple[float, int]] = []
    ingress_free = 0.0
    b_size: list[int] = []
    b_qlen: list[int] = []
    reasons: dict[str, int] = {}
    wait_total = 0.0
    next_id = 0
    completed = 0

    per_exec = service.delay_per_execution

    def respond(r: int, k: int, now: float) -> None:
        """Request ``r`` of execution ``k`` completed at ``now`` (s): its latency, and its
        client's next send."""
        nonlocal completed, n_sent
        d = c_req + (delay[k if per_exec else r] * 1e-3 if delay is not None else 0.0)
        lat_ms[r] = (now + d - sent_at[r]) * 1e3
        completed += 1
        if n_sent < n:
            heapq.heappush(sends, now + d)
            n_sent += 1

    def send_and_enqueue(now: float) -> None:
        """Sends due by ``now`` pass the serial ingress; those enqueued by ``now`` join
        ``enq_at``."""
        nonlocal next_id, ingress_free
        while sends and sends[0] <= now:
            s = heapq.heappop(sends)
            r = next_id
            next_id += 1
            sent_at[r] = s
            e = max(s, ingress_free) + c_in if c_in > 0 else s
            ingress_free = e
            heapq.heappush(enq_heap, (e, r))
        while enq_heap and enq_heap[0][0] <= now:
            enq_at.append(heapq.heappop(enq_heap)[0])

    if service.batcher == "triton":
        b_start: list[int] = []
        b_done: list[float] = []
        b_now: list[float] = []
        b_reason: list[str] = []
        finished: list[int] = []
        next_time, advance, _ = _triton_core(policy, instances, enq_at, service_ms, slack,
                                             b_start, b_size, b_done, b_qlen, b_now,
                                             b_reason, finished, service.idle_slowdown,
                                             service.idle_tau_ms * 1e-3)
        while completed < n:
            t_send = sends[0] if sends else inf
            t_enq = enq_heap[0][0] if enq_heap else inf
            now = min(t_send, t_enq, next_time())
            if now == inf:
                break
            send_and_enqueue(now)
            advance(now, len(enq_at))
            for bi in finished:
                first_r = b_start[bi]
                for r in range(first_r, first_r + b_size[bi]):
                    respond(r, bi, b_done[bi])
            finished.clear()
        for bi, m in enumerate(b_size):
            start_t = b_now[bi]
            for r in range(b_start[bi], b_start[bi] + m):
                wait_total += start_t - enq_at[r]
            reasons[b_reason[bi]] = reasons.get(b_reason[bi], 0) + 1
    else:
        decide = policy.decide
        qhead = 0  # the queue is enq_at[qhead:]: requests enter and leave in order
        busy: list[tuple[float, int, int, int]] = []  # (done, first request, size, k)
        free = instances
        timer = inf
        k = 0
        while completed < n:
            t_send = sends[0] if sends else inf
            t_enq = enq_heap[0][0] if enq_heap else inf
            t_done = busy[0][0] if busy else inf
            now = min(t_send, t_enq, t_done, timer)
            if now == inf:
                break
            while busy and busy[0][0] <= now:
                _, first_r, size, kb = heapq.heappop(busy)
                free += 1
                for r in range(first_r, first_r + size):
                    respond(r, kb, now)
            send_and_enqueue(now)
            if timer <= now:
                timer = inf
            while free:
                q = len(enq_at) - qhead
                dec = decide(q, enq_at[qhead] if q else None, now)
                m = dec.dispatch
                if m <= 0:
                    timer = dec.wait_until_s + slack if dec.wait_until_s is not None else inf
                    break
                svc = service_ms(m, k)
                for r in range(qhead, qhead + m):
                    wait_total += now - enq_at[r]
                heapq.heappush(busy, (now + svc * 1e-3, qhead, m, k))
                qhead += m
                b_size.append(m)
                b_qlen.append(q)
                reasons[dec.reason] = reasons.get(dec.reason, 0) + 1
                free -= 1
                k += 1
                timer = inf
    first = int(n * warmup_fraction)
    lat = np.asarray(lat_ms[first:], dtype=np.float64)
    if latencies_out is not None:
        latencies_out.extend(lat.tolist())
    if sends_out is not None:
        sends_out.extend(sent_at)
    t_end = max(sent_at[r] + lat_ms[r] * 1e-3 for r in range(n))
    span = t_end - sent_at[first]
    thr = float(lat.size / span) if span > 0 else None
    cap_inst, _ = service.capacity_per_instance_per_s(big_b, None)
    cap = min(cap_inst * instances, service.ingress_capacity_per_s())
    sz = np.asarray(b_size, dtype=np.int64)
    q = [percentile(lat, f) for f in (0.50, 0.95, 0.99)]
    return SimPrediction(
        window_us=float(policy.max_queue_delay_us), max_batch_size=big_b,
        instances=instances, arrival_rate_per_s=thr or 0.0,
        utilisation=float(thr / cap) if thr and cap > 0 else 0.0,
        preferred_batch_sizes=list(policy.preferred_batch_sizes), stable=True,
        throughput_queries_per_s=thr, mean_ms=float(lat.mean()), p50_ms=float(q[0]),
        p95_ms=float(q[1]), p99_ms=float(q[2]), mean_batch=float(sz.mean()),
        max_batch=int(sz.max()), mean_queue_len=wait_total / span if span > 0 else None,
        max_queue_len=int(max(b_qlen)) if b_qlen else 0,
        single_request_batch_share=float(np.mean(sz == 1)), requests=int(lat.size),
        batches=int(sz.size), dispatch_reasons=reasons)


def sweep(candidates: Iterable[Candidate], service: ServiceModel,
          arrivals_s: np.ndarray | ClosedLoop, *, seed: int = 0,
          warmup_fraction: float = 0.1, rate_per_s: float | None = None,
          finite: bool = False) -> list[SimPrediction]:
    """Simulate every candidate on the same arrivals and the same spread draws
    (common random numbers: differences between candidates are not sampling noise).

    ``arrivals_s`` is an array of arrival times (s) or a :class:`ClosedLoop`;
    ``finite`` marks an array as a burst (see :func:`simulate`).

    Returns:
        one :class:`SimPrediction` per candidate, in order.
    """
    if isinstance(arrivals_s, ClosedLoop):
        draws = _Draws(service, arrivals_s.count, seed)
        return [simulate_closed(c.policy(), c.instances, service, arrivals_s, seed=seed,
                                warmup_fraction=warmup_fraction, draws=draws)
                for c in candidates]
    draws = _Draws(service, len(arrivals_s), seed)
    return [simulate(c.policy(), c.instances, service, arrivals_s, seed=seed,
                     warmup_fraction=warmup_fraction, draws=draws, rate_per_s=rate_per_s,
                     finite=finite)
            for c in candidates]


def default_grid(max_batch_limit: int, instances: Sequence[int],
                 windows_us: Sequence[float] | None = None) -> list[Candidate]:
    """The candidate grid ``advise`` searches.

    Windows 0, 100 us, 250 us, 500 us, 1, 2, 5, 10, 20, 50 ms (Triton's
    ``max_queue_delay_microseconds`` range in practice spans tens of us to tens of
    ms); max batch sizes 1 and powers of two up to ``max_batch_limit`` (the largest
    measured batch, so no candidate relies on an extrapolated T(b)); max batch 1 is
    simulated with window 0 only (a window cannot change a batch of one).
    """
    windows = list(windows_us) if windows_us is not None else [
        0, 100, 250, 500, 1000, 2000, 5000, 10000, 20000, 50000]
    batches = [1]
    b = 2
    while b <= max_batch_limit:
        batches.append(b)
        b *= 2
    if batches[-1] != max_batch_limit and max_batch_limit > 1:
        batches.append(max_batch_limit)
    out: list[Candidate] = []
    for n_inst in instances:
        out.append(Candidate(0.0, 1, n_inst))
        for bb in batches[1:]:
            for w in windows:
                out.append(Candidate(float(w), bb, n_inst))
    return out
