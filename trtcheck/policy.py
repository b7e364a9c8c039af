"""The dynamic-batching dispatch policy, shared by the embedded batcher and the simulator.

One pure function decides, each time an execution instance is free, whether to dispatch
a batch now and of what size, or how long to wait. The asyncio batcher
(:mod:`trtcheck.measure` serving code) and the discrete-event simulator
(:mod:`trtcheck.analyze` advice code) both call :meth:`BatchingPolicy.decide`, so what is
simulated is exactly what is measured.

Semantics follow Triton's dynamic batcher (docs: user_guide/batcher.md, "Dynamic
Batcher"): ``max_queue_delay_us`` bounds how long the **oldest** queued request may wait
for a batch to fill (the timer starts when that request was enqueued, not when the
instance became free); a batch of ``max_batch_size`` is dispatched at once; when
``preferred_batch_sizes`` are given, the largest preferred size that the queue can fill
is dispatched at once. Unlike the seed experiment's design (pitfall 5:
``wait_for(queue.get(), 0)`` gives up even with requests queued), a window of 0 means
"take everything already queued, up to ``max_batch_size``, without waiting".
"""

from __future__ import annotations

from dataclasses import dataclass

from trtcheck.errors import InputError


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
        """The window in seconds."""
        return self.max_queue_delay_us * 1e-6

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
        if queued >= self.max_batch_size:
            return Decision(self.max_batch_size, None, "full")
        if self.preferred_batch_sizes:
            fits = [p for p in self.preferred_batch_sizes if p <= queued]
            if fits:  # Triton: a preferred size that can be formed goes out at once
                return Decision(fits[-1], None, "preferred")
        if self.max_queue_delay_us <= 0:
            return Decision(queued, None, "no-window")
        deadline = (oldest_enqueue_s if oldest_enqueue_s is not None else now_s) + self.window_s
        if now_s >= deadline:
            return Decision(queued, None, "window-expired")
        return Decision(0, deadline, "waiting")
