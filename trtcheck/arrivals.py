"""Arrival schedules: the times at which requests reach a server, for every part that
sends or simulates them.

One set of functions draws every schedule, so the load generator (``serve --load``,
:mod:`trtcheck.measure.serving.loadgen`) and the simulator (``advise``,
:mod:`trtcheck.analyze.advice.simulator`) get the same times from the same seed by construction,
the way :mod:`trtcheck.policy` is the one dispatch policy of the batcher and the simulator.

Two origins are in use, both from the same draws:

* the load generator sends its first request at once: offsets start at 0
  (``first_at_zero=True``; :func:`open_loop_offsets_s`);
* ``advise`` simulates a stationary arrival process: the first request arrives one gap
  after 0 (``first_at_zero=False``; :func:`make_arrivals`).

For a Poisson process the gaps are exponential with mean ``1/rate``, drawn by
``numpy.random.default_rng(seed).exponential`` (one draw per request, in order); a
constant process is spaced ``1/rate`` apart. All times are seconds, float64.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from trtcheck.errors import InputError


def check_rate(rate_per_s: float) -> None:
    """Refuse an arrival rate that is not a finite number > 0 (requests per second).

    Raises:
        InputError: naming the rate.
    """
    if not (math.isfinite(rate_per_s) and rate_per_s > 0):
        raise InputError(f"arrival rate must be > 0 requests per second, got {rate_per_s!r}",
                         "e.g. --arrival-rate 200")


def poisson_arrivals(rate_per_s: float, n: int, rng: np.random.Generator, *,
                     first_at_zero: bool = False) -> npt.NDArray[np.float64]:
    """``n`` Poisson arrival times in seconds: exponential gaps with mean ``1/rate``
    drawn from ``rng``, summed. The first arrival is at its first gap after 0, or at 0
    with ``first_at_zero`` (its gap is drawn and replaced by 0, so later gaps are the same
    draws). Shape ``[n]``, float64, non-decreasing.

    Raises:
        InputError: rate not > 0.
    """
    check_rate(rate_per_s)
    gaps = rng.exponential(1.0 / rate_per_s, size=n)
    if first_at_zero and n > 0:
        gaps[0] = 0.0
    return np.cumsum(gaps)


def constant_arrivals(rate_per_s: float, n: int, *, first_at_zero: bool = False
                      ) -> npt.NDArray[np.float64]:
    """``n`` evenly spaced arrivals, ``1/rate`` seconds apart, starting at ``1/rate``
    (or at 0 with ``first_at_zero``). Shape ``[n]``, float64.

    Raises:
        InputError: rate not > 0.
    """
    check_rate(rate_per_s)
    start = 0 if first_at_zero else 1
    return np.arange(start, n + start, dtype=np.float64) / rate_per_s


def read_trace(path: str | Path, min_arrivals: int = 2) -> npt.NDArray[np.float64]:
    """Arrival times (s) of a trace file (:func:`trtcheck.traces.read_arrival_times`),
    sorted and shifted to start at 0. With ``min_arrivals >= 2`` the trace must also
    span time (a rate is taken from it).

    Raises:
        InputError: as the shared reader; fewer than ``min_arrivals`` arrivals, or (with
            ``min_arrivals >= 2``) all arrivals at the same instant.
    """
    from trtcheck.traces import read_arrival_times

    arr = read_arrival_times(path, min_arrivals=min_arrivals)
    if min_arrivals >= 2 and arr[-1] <= 0:
        raise InputError(f"all arrivals in {path} are at the same instant",
                         "give arrival times in seconds, not a count")
    return arr


def trace_rate_per_s(arrivals_s: npt.NDArray[np.float64]) -> float:
    """Mean arrival rate of arrival times: ``(n - 1) / (last - first)``."""
    return (len(arrivals_s) - 1) / float(arrivals_s[-1] - arrivals_s[0])


def make_arrivals(process: str, rate_per_s: float | None, n: int, seed: int = 0,
                  ) -> npt.NDArray[np.float64]:
    """Arrival times (s) for ``process`` = ``poisson``, ``constant`` or ``trace:FILE``,
    the first one gap after 0 (the stationary process ``advise`` simulates).

    For a trace, ``rate_per_s`` (when given) rescales the trace's time axis to that
    mean rate; ``n`` is ignored (the whole trace is used).

    Raises:
        InputError: unknown process, bad rate, unreadable trace.
    """
    if process.startswith("trace:"):
        arr = read_trace(process[len("trace:"):])
        if rate_per_s is not None:
            check_rate(rate_per_s)
            arr = arr * ((len(arr) - 1) / arr[-1] / rate_per_s)
        return arr
    if rate_per_s is None:
        raise InputError("an arrival rate is needed", "pass --arrival-rate REQ_PER_S")
    if process == "poisson":
        return poisson_arrivals(rate_per_s, n, np.random.default_rng(seed))
    if process == "constant":
        return constant_arrivals(rate_per_s, n)
    raise InputError(f"unknown arrival process {process!r}",
                     "use poisson, constant or trace:FILE")


def open_loop_offsets_s(arrival: str, rate_per_s: float, count: int, seed: int,
                        trace_s: Sequence[float] = ()) -> npt.NDArray[np.float64]:
    """The load generator's open-loop send offsets (s from the start), shape ``[count]``:
    for ``"poisson"`` the draws of :func:`make_arrivals` with the same seed, the first
    sent at 0; for ``"constant"`` ``1/rate`` apart from 0; for ``"trace"`` the first
    ``count`` of ``trace_s``.

    Raises:
        InputError: rate not > 0 (Poisson or constant).
    """
    if arrival == "trace":
        return np.asarray(trace_s[:count], dtype=np.float64)
    if arrival == "constant":
        return constant_arrivals(rate_per_s, count, first_at_zero=True)
    return poisson_arrivals(rate_per_s, count, np.random.default_rng(seed),
                            first_at_zero=True)
