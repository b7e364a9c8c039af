"""An open loop sized by its duration (``open:RATE`` without COUNT: ``round(RATE x D)``
requests on a Poisson schedule) sends its whole schedule, even where the schedule runs
past ``D`` (at most 2x ``D``); one with an explicit COUNT stays bounded by ``D``. Before,
the schedule was cut at ``D``: 20 requests of ``open:10`` for 2 s sent 14 (6.8 req/s),
always the same ones, and nothing said so. Assertions follow from the schedule, never
from how fast the machine is (sends 50 ms apart, answered at once)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from trtcheck.measure.serving.loadgen import (
    NOT_SENT, OK, OPEN_OVERRUN_MAX, parse_load, run_load, sending_bound_s)


def test_only_a_count_from_the_duration_stretches_the_bound():
    shape = parse_load("open:10", 2.0)
    assert shape.count == 20 and shape.count_from_duration
    assert not parse_load("open:10:20", 2.0).count_from_duration
    assert sending_bound_s(shape, 2.0, np.array([0.1, 2.6])) == pytest.approx(2.7)
    assert sending_bound_s(shape, 2.0, np.array([0.1, 1.5])) == 2.0
    assert sending_bound_s(shape, 2.0, np.array([0.1, 9.0])) == OPEN_OVERRUN_MAX * 2.0
    assert sending_bound_s(shape, 2.0) == OPEN_OVERRUN_MAX * 2.0  # the largest it can be
    assert sending_bound_s(parse_load("open:10:20", 2.0), 2.0, np.array([2.6])) == 2.0
    assert sending_bound_s(parse_load("burst:8"), 2.0) == 2.0


def _seed_past(shape, d_s: float) -> int:
    """A seed whose schedule ends between 1.1 and 1.8 x ``d_s``."""
    return next(s for s in range(500)
                if 1.1 * d_s < shape.schedule_s(s)[-1] < 1.8 * d_s)


def _answer_at_once(i: int) -> asyncio.Future:
    fut = asyncio.get_running_loop().create_future()
    fut.set_result(i)
    return fut


@pytest.mark.parametrize("streamed", [False, True])
def test_a_schedule_past_the_duration_is_sent_whole(streamed):
    d_s = 1.0
    shape = parse_load("open:20", d_s)
    seed = _seed_past(shape, d_s)
    counted: dict[str, int] = {}

    async def go(spec_shape):
        on_end = (lambda i, sched, send, end, o, e: counted.__setitem__(
            o, counted.get(o, 0) + 1)) if streamed else None
        return await run_load(spec_shape, _answer_at_once, max_duration_s=d_s, seed=seed,
                              on_end=on_end)

    rec = asyncio.run(go(shape))
    outcomes = counted if streamed else {o: rec.outcome.count(o) for o in set(rec.outcome)}
    assert outcomes.get(OK) == 20 and not outcomes.get(NOT_SENT)
    # the same schedule with its count given stays within the duration
    counted.clear()
    fixed = parse_load("open:20:20", d_s)
    late = int(np.sum(fixed.schedule_s(seed) >= d_s))
    assert late >= 1
    rec = asyncio.run(go(fixed))
    if streamed:
        assert counted.get(OK, 0) == 20 - late
    else:
        assert rec.outcome.count(NOT_SENT) == late
