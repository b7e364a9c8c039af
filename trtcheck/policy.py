"""The dynamic-batching dispatch policy, shared by the embedded batcher and the simulator.

One pure function decides, each time an execution instance is free, whether to dispatch
a batch now and of what size, or how long to wait. The asyncio batcher
(:mod:`trtcheck.measure` serving code) and the discrete-event simulator
(:mod:`trtcheck.analyze` advice code) both call :meth:`BatchingPolicy.decide`, so what is
simulated is exactly what is measured.

The rules are Triton's dynamic batcher's, as its scheduler implements them
(triton-inference-server/core ``src/dynamic_batch_scheduler.cc``,
``DynamicBatchScheduler::GetDynamicBatch``; docs: user_guide/batcher.md), for requests of
one sample each:

* The queue is scanned from the oldest request, up to ``max_batch_size`` requests. The
  largest preferred size the scan reaches is the *best* batch.
* ``max_queue_delay_us`` is counted from the **oldest** queued request's enqueue time
  (``queue_.OldestEnqueueTime()``), not from when the instance became free.
* Before that delay has passed, a best preferred size that can be formed goes out at
  once, even when more requests are queued (with preferred sizes 4 and 8 and max batch
  16, a queue of 20 sends 8).
* Once the delay has passed, everything scanned goes, up to ``max_batch_size``: a late
  batch is not cut back to a preferred size.
* A delay of 0 never waits: with preferred sizes it still sends the best preferred size
  first (``delay_is_exceeded`` is false when the delay is 0), otherwise everything queued.
* When no preferred size is configured Triton uses ``max_batch_size`` as the only one
  (``NormalizeModelConfig`` in ``src/model_config_utils.cc``), so the rules above reduce
  to "a full batch goes at once; otherwise wait for the oldest request's delay".

:meth:`BatchingPolicy.decide` is asked when an instance is free: that is the embedded
batcher (:mod:`trtcheck.measure`), which forms a batch only for a free instance, so a
batch formed while every instance is busy keeps growing until an instance takes it.

Triton's per-model batcher does not wait for a free instance. Its batcher thread
(``DynamicBatchScheduler::BatcherThread``) forms a batch (a *payload*) whenever the rate
limiter has a payload slot (``RateLimiter::PayloadSlotAvailable`` in ``src/rate_limiter.cc``:
with the default queue policy the batcher may prefetch while fewer than 2 x instances
formed payloads wait for an instance) and hands it to the instances' queue at once. A
formed payload that waits for a busy instance takes later arrivals only when the batcher
wakes for them, and ``DynamicBatchScheduler::Enqueue`` wakes it for a new request only
when the queued requests reach ``next_preferred_batch_size_`` (the next preferred size
above the payload, which is ``max_batch_size`` without preferred sizes) or the payload
was taken. So with a window the batch closes when the oldest request's delay expires,
even while the instance is busy, and requests arriving after that wait for the next
batch: under load Triton forms smaller batches, runs more executions and queues longer
than a batcher that waits for a free instance. With a window of 0 the batcher wakes for
every request (``next_preferred_batch_size_`` stays 0) and the waiting payload grows as
the embedded batcher's would. :meth:`BatchingPolicy.triton_step` is one pass of
``DynamicBatchScheduler::GetDynamicBatch`` for requests of one sample; the simulator
(:func:`trtcheck.analyze.advice.simulator.simulate` with ``ServiceModel(batcher="triton")``)
runs the batcher thread, the payload queue and the instances around it.

Unlike a batcher built on ``wait_for(queue.get(), 0)`` (which gives up even with requests
queued), a window of 0 means "take everything already queued, up to
``max_batch_size``, without waiting".
"""

from __future__ import annotations

from dataclasses import dataclass

from trtcheck.errors import InputError
from trtcheck.units import us_to_s


@dataclass(frozen=True)
class Decision:
    """What a free instance should do now.

    Attributes:
        dispatch: number of queued requests to take now (0: wait).
        wait_until_s: when ``dispatch == 0`` and requests are queued, the clock time (s)
            at which the oldest request's window expires; ``None`` means "wait for the
            next arrival" (the queue is empty).
        reason: ``"empty"``, ``"full"``, ``"preferred"``, ``"no-window"``,
            ``"window-expired"`` or ``"waiting"`` (counted by the batcher and simulator).
    """

    dispatch: int
    wait_until_s: float | None
    reason: str


TRITON_PAYLOAD_SLOTS_PER_INSTANCE = 2
"""Formed payloads that may wait for instances, per instance, before Triton's per-model
batcher stops forming more (``RateLimiter::PayloadSlotAvailable``, src/rate_limiter.cc:
``payload_queue->queue_->Size() < 2 * multiplier`` with the instance count as multiplier,
when the queue supports prefetching: no priority levels, no default timeout, no
timeout override, no maximum queue size)."""

TRITON_IDLE_WAIT_S = 0.5
"""How long Triton's batcher thread sleeps when nothing wakes it
(``default_wait_microseconds = 500 * 1000`` in ``DynamicBatchScheduler::BatcherThread``)."""


@dataclass(frozen=True)
class TritonStep:
    """The outcome of one pass of Triton's ``GetDynamicBatch`` (see
    :meth:`BatchingPolicy.triton_step`).

    Attributes:
        take: queued requests moved into the current payload now (0: none).
        saturated: the scheduler's ``payload_saturated_`` after the pass (the payload can
            not grow: the batcher starts a new one on its next pass).
        next_preferred: the new ``next_preferred_batch_size_`` (queued requests that wake
            the batcher), or ``None`` when the pass left it unchanged.
        wait_until_s: when ``take == 0``, the clock time (s) at which the oldest queued
            request's delay expires (the batcher sleeps until then); else ``None``.
        reason: ``"full"``, ``"preferred"``, ``"no-window"``, ``"window-expired"``,
            ``"grow"`` (added to a payload that waits for an instance) or ``"waiting"``.
    """

    take: int
    saturated: bool
    next_preferred: int | None
    wait_until_s: float | None
    reason: str


@dataclass(frozen=True)
class BatchingPolicy:
    """Dynamic batching settings (Triton vocabulary).

    Attributes:
        max_batch_size: largest batch, >= 1 (Triton ``max_batch_size``).
        max_queue_delay_us: window in microseconds, >= 0 (Triton
            ``max_queue_delay_microseconds``); 0 never waits.
        preferred_batch_sizes: sizes dispatched as soon as they can be formed, each in
            ``[1, max_batch_size]`` (Triton ``preferred_batch_size``).

    Raises:
        InputError: a value out of range.
    """

    max_batch_size: int = 1
    max_queue_delay_us: float = 0.0
    preferred_batch_sizes: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.max_batch_size, int) or self.max_batch_size < 1:
            raise InputError(f"max batch size must be an integer >= 1, got {self.max_batch_size!r}")
        if not self.max_queue_delay_us >= 0:
            raise InputError(f"max queue delay must be >= 0 us, got {self.max_queue_delay_us!r}")
        for p in self.preferred_batch_sizes:
            if not 1 <= p <= self.max_batch_size:
                raise InputError(f"preferred batch size {p} is outside 1..{self.max_batch_size}")
        object.__setattr__(self, "preferred_batch_sizes",
                           tuple(sorted(set(self.preferred_batch_sizes))))

    @property
    def window_s(self) -> float:
        """The window in seconds, for clock arithmetic (the only place the window leaves
        microseconds: :func:`trtcheck.units.us_to_s`)."""
        return us_to_s(self.max_queue_delay_us)

    def decide(self, queued: int, oldest_enqueue_s: float | None, now_s: float) -> Decision:
        """Decide for a free instance.

        Args:
            queued: number of requests waiting (>= 0).
            oldest_enqueue_s: enqueue time (s, same clock as ``now_s``) of the oldest
                waiting request; ignored when ``queued == 0``.
            now_s: current clock time in seconds.

        Returns:
            a :class:`Decision`. ``dispatch`` is never more than ``queued`` or
            ``max_batch_size``.
        """
        if queued <= 0:
            return Decision(0, None, "empty")
        big = self.max_batch_size
        scan = queued if queued < big else big
        window_s = self.window_s
        deadline = (oldest_enqueue_s if oldest_enqueue_s is not None else now_s) + window_s
        exceeded = window_s > 0 and now_s >= deadline
        if scan == big and not exceeded:  # max batch is the largest preferred size
            best = self.preferred_batch_sizes[-1] if self.preferred_batch_sizes else big
            return Decision(best, None, "full" if best == big else "preferred")
        if self.preferred_batch_sizes and not exceeded:
            best = 0
            for p in self.preferred_batch_sizes:  # ascending: the largest that fits
                if p > scan:
                    break
                best = p
            if best:  # a preferred size that can be formed goes at once
                return Decision(best, None, "preferred")
        if exceeded:  # late: everything scanned, not cut back to a preferred size
            return Decision(scan, None, "full" if scan == big else "window-expired")
        if window_s <= 0:  # no delay: what is queued goes now
            return Decision(scan, None, "no-window")
        return Decision(0, deadline, "waiting")

    def triton_step(self, queued: int, payload_size: int, saturated: bool,
                    oldest_enqueue_s: float | None, now_s: float) -> TritonStep:
        """One pass of Triton's ``DynamicBatchScheduler::GetDynamicBatch``
        (src/dynamic_batch_scheduler.cc) for requests of one sample each.

        Args:
            queued: requests in the scheduler's queue, not in any payload (>= 0).
            payload_size: requests already in the current payload (0: a new payload; > 0:
                a payload handed to the instances that still waits for one).
            saturated: the scheduler's ``payload_saturated_`` before the pass.
            oldest_enqueue_s: enqueue time (s) of the oldest queued request (the delay is
                counted from it: ``queue_.OldestEnqueueTime()``); ignored when
                ``queued == 0``.
            now_s: current clock time (s).

        Returns:
            a :class:`TritonStep`. Without preferred sizes Triton uses ``max_batch_size``
            as the only one (``NormalizeModelConfig``), as here.
        """
        if queued <= 0:
            return TritonStep(0, saturated, None, None, "empty")
        big = self.max_batch_size
        pref = self.preferred_batch_sizes or (big,)
        max_pref = pref[-1]
        best = 0
        send_now = False
        pending = 0
        for _ in range(min(queued, big + 1)):  # the scan from the cursor
            if payload_size + pending > 0:
                if payload_size + pending + 1 > max_pref and best == 0:
                    best = pending  # marks the cursor; the payload can not grow further
                    saturated = True
                if payload_size + pending + 1 > big:
                    send_now = True
                    break
            pending += 1
            if payload_size + pending in pref:
                best = pending
        window_s = self.window_s
        oldest = oldest_enqueue_s if oldest_enqueue_s is not None else now_s
        exceeded = window_s > 0 and now_s >= oldest + window_s  # as the timer is set
        if best and not exceeded:
            if window_s <= 0:
                saturated = True
            size = payload_size + best
            return TritonStep(best, saturated, None, None,
                              "full" if size == big else "preferred")
        if pending == 0:
            return TritonStep(0, saturated, None, None, "empty")
        if send_now or payload_size + pending >= max_pref:
            return TritonStep(pending, True, None, None,
                              "full" if payload_size + pending == big else "preferred")
        if exceeded:
            return TritonStep(pending, saturated, None, None, "window-expired")
        if window_s <= 0:
            return TritonStep(pending, saturated, None, None, "no-window")
        above = [p for p in pref if p > payload_size + pending]
        nxt = (above[0] if above else pref[0]) - payload_size
        if not saturated and payload_size and payload_size not in pref:
            return TritonStep(pending, saturated, nxt, None, "grow")
        return TritonStep(0, saturated, nxt, oldest + window_s, "waiting")
