"""A synthetic backend whose batch time follows a given curve T(b), for reproducible
serving experiments and tests.

``T(b)`` is given as points ``{batch_size: milliseconds}`` and linearly interpolated
(``numpy.interp``) between them; below the first point it is the first value, beyond the
last point it is extended along the last segment's slope (flat when one point is given).
An optional seeded relative spread multiplies each execution's time by
``max(0, 1 + spread * N(0, 1))``.

The backend sleeps instead of computing, so the event loop stays honest: as a sync
backend (:meth:`SyntheticBackend.infer`, run by the batcher in an executor thread) it
calls :func:`time.sleep`; as an async backend (:meth:`SyntheticBackend.infer_async`) it
awaits :func:`asyncio.sleep` for all but the last 1.5 ms and then yields to the loop
(``asyncio.sleep(0)``) until the deadline, because the loop's timers round up to whole
milliseconds (selectors' epoll timeout).

``per_request_overhead_ms`` stands for the fixed per-request cost of an HTTP/Python
serving layer (about 12 ms measured for ResNet-18 behind a Python HTTP layer: HTTP receive
and asyncio scheduling ~6 ms, tensor copy and thread hop ~4 ms, response ~2 ms). It is not
spent by the backend (which only sees batches):
:func:`trtcheck.measure.serving.serve.measure_serving` reads it and puts a serial front stage of
that cost before the batcher queue (one request at a time, like a single Python event-loop
thread), see :class:`trtcheck.measure.serving.serve.SerialFront`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from trtcheck.backends.base import Backend, InferOutput
from trtcheck.errors import InputError
from trtcheck.results.consistency import MAX_BATCH_SIZE
from trtcheck.results.bench import BackendInfo
from trtcheck.results.inspection import TensorInfo

_SPIN_S = 0.0015

MAX_CURVE_TIME_MS = 1e7
"""Largest batch time of a synthetic curve, ms (the bound every duration option has)."""


def parse_curve(text: str) -> dict[int, float]:
    """Parse ``"1:0.29,8:1.02"`` (batch:milliseconds pairs) into ``{1: 0.29, 8: 1.02}``.

    Raises:
        InputError: malformed pairs, batch outside 1..2**31-1, negative, non-finite or
            over :data:`MAX_CURVE_TIME_MS` times, repeats.
    """
    out: dict[int, float] = {}
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        b, sep, ms = part.partition(":")
        try:
            bi, msf = int(b), float(ms)
        except ValueError:
            bi, msf = -1, float("nan")
        if not sep or not 1 <= bi <= MAX_BATCH_SIZE or not np.isfinite(msf) \
                or not 0 <= msf <= MAX_CURVE_TIME_MS:
            raise InputError(f"bad synthetic curve point {part!r}",
                             "write batch:milliseconds pairs, e.g. 1:0.29,8:1.02,32:3.5")
        if bi in out:
            raise InputError(f"synthetic curve gives batch {bi} twice", None)
        out[bi] = msf
    if not out:
        raise InputError("empty synthetic curve", "e.g. --synthetic-curve 1:0.29,8:1.02")
    return out


class SyntheticBackend(Backend):
    """Sleeps ``T(b)`` per batch of ``b`` requests.

    Args:
        curve_ms: batch size -> batch time in ms (at least one point, sizes >= 1,
            times >= 0), or the text form accepted by :func:`parse_curve`.
        spread: relative standard deviation of each execution's time (>= 0; 0 = exact).
        seed: seed of the spread's random generator.
        per_request_overhead_ms: fixed per-request serving-layer cost (>= 0), applied by
            the serving measurement as a serial front stage (see the module docstring).
        mode: ``"async"`` (serving uses :meth:`infer_async` on the loop) or ``"thread"``
            (serving runs :meth:`infer` in an executor thread, like a real sync backend).
        output_width: columns of the output array ``y`` (float32 zeros of ``[b, width]``).

    Batches: the feed is a dict with an array ``x`` (``b`` = its rows), an array, or a
    list of ``b`` payloads.

    Raises:
        InputError: invalid curve, spread, overhead or mode.
    """

    def __init__(self, curve_ms: Mapping[int, float] | str, spread: float = 0.0,
                 seed: int = 0, per_request_overhead_ms: float = 0.0, mode: str = "async",
                 output_width: int = 1) -> None:
        curve = parse_curve(curve_ms) if isinstance(curve_ms, str) else dict(curve_ms)
        if not curve or any(int(b) < 1 or not np.isfinite(t) or t < 0 for b, t in curve.items()):
            raise InputError(f"invalid synthetic curve {curve!r}",
                             "batch sizes >= 1 and times >= 0 ms")
        if not spread >= 0:
            raise InputError(f"spread must be >= 0, got {spread!r}", None)
        if not per_request_overhead_ms >= 0:
            raise InputError(f"per-request overhead must be >= 0 ms, got "
                             f"{per_request_overhead_ms!r}", None)
        if mode not in ("async", "thread"):
            raise InputError(f"synthetic mode must be 'async' or 'thread', got {mode!r}", None)
        self.curve_ms = {int(b): float(t) for b, t in sorted(curve.items())}
        self.spread = float(spread)
        self.seed = seed
        self.per_request_overhead_ms = float(per_request_overhead_ms)
        self.mode = mode
        self.output_width = int(output_width)
        self._xs = np.array(list(self.curve_ms), dtype=np.float64)
        self._ys = np.array(list(self.curve_ms.values()), dtype=np.float64)
        self._rng = np.random.default_rng(seed)

    # -- the curve ----------------------------------------------------------------------

    def batch_time_ms(self, batch_size: int) -> float:
        """``T(batch_size)`` in ms without spread (interpolated / extended linearly)."""
        xs, ys = self._xs, self._ys
        b = float(batch_size)
        if len(xs) == 1 or b <= xs[-1]:
            return float(np.interp(b, xs, ys))
        slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
        return float(ys[-1] + slope * (b - xs[-1]))

    def _draw_s(self, b: int) -> float:
        t = self.batch_time_ms(b)
        if self.spread > 0:
            t *= max(0.0, 1.0 + self.spread * float(self._rng.standard_normal()))
        return t * 1e-3

    @staticmethod
    def _rows(feed: Any) -> int:
        if isinstance(feed, dict):
            x = feed.get("x", next(iter(feed.values()), None))
            return int(x.shape[0]) if x is not None and hasattr(x, "shape") and x.ndim else 1
        if hasattr(feed, "shape") and getattr(feed, "ndim", False):
            return int(feed.shape[0])
        if isinstance(feed, Sequence):
            return len(feed)
        return 1

    def _out(self, b: int) -> InferOutput:
        return InferOutput(outputs={"y": np.zeros((b, self.output_width), np.float32)})

    # -- Backend protocol ---------------------------------------------------------------

    @property
    def info(self) -> BackendInfo:
        pts = ",".join(f"{b}:{t:g}" for b, t in self.curve_ms.items())
        return BackendInfo(name="synthetic", version="1", device="none (sleeps T(b))",
                           precision="n/a",
                           options={"curve_ms": pts, "spread": self.spread, "seed": self.seed,
                                    "per_request_overhead_ms": self.per_request_overhead_ms,
                                    "mode": self.mode})

    def activate(self) -> None:
        self._rng = np.random.default_rng(self.seed)
        self._active = True

    def deactivate(self) -> None:
        self._active = False

    def input_specs(self) -> list[TensorInfo]:
        return [TensorInfo(name="x", dtype="float32", shape=["batch", 1])]

    def output_specs(self) -> list[TensorInfo]:
        return [TensorInfo(name="y", dtype="float32", shape=["batch", self.output_width])]

    def infer(self, feed: Any) -> InferOutput:
        """Sleep ``T(b)`` with :func:`time.sleep` (blocks the calling thread)."""
        b = self._rows(feed)
        time.sleep(self._draw_s(b))
        return self._out(b)

    async def infer_async(self, feed: Any) -> InferOutput:
        """Sleep ``T(b)`` without blocking the loop (timer, then yields until due)."""
        b = self._rows(feed)
        dt = self._draw_s(b)
        deadline = time.perf_counter() + dt
        if dt > _SPIN_S:
            await asyncio.sleep(dt - _SPIN_S)
        while time.perf_counter() < deadline:
            await asyncio.sleep(0)
        return self._out(b)

    @property
    def prefers_async(self) -> bool:
        """Whether serving should call :meth:`infer_async` (``mode == "async"``)."""
        return self.mode == "async"
