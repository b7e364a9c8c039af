"""Tests of the embedded dynamic batcher: semantics, faults, counters (plain asyncio.run)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from trtcheck.measure.serving.batcher import (
    BatcherClosed, BatcherLoopError, DynamicBatcher, QueueFull, default_assemble,
    default_split,
)
from trtcheck.policy import BatchingPolicy

from tests.conftest import returns_before_hang_limit


def run(coro):
    return asyncio.run(coro)


def test_created_outside_loop_is_a_clear_error():
    async def fn(b):
        return b

    with pytest.raises(BatcherLoopError, match="running asyncio event loop"):
        DynamicBatcher(fn, BatchingPolicy())


def test_each_request_gets_its_own_slice_and_counters_add_up():
    async def main():
        async def fn(batch):
            await asyncio.sleep(0.002)
            return [x * 10 for x in batch]

        async with DynamicBatcher(fn, BatchingPolicy(8, 5000)) as b:
            res = await asyncio.gather(*[b.submit(i) for i in range(21)])
        return res, b.counters

    res, c = run(main())
    assert res == [i * 10 for i in range(21)]
    assert c.inference_count == 21 == c.completed == c.accepted
    assert sum(k * v for k, v in c.batch_size_histogram.items()) == 21
    assert sum(c.batch_size_histogram.values()) == c.execution_count
    assert c.avg_batch_size == pytest.approx(21 / c.execution_count)
    assert max(c.batch_size_histogram) == 8


def test_window_zero_still_batches_a_backlog():
    """Seed pitfall 5: with window 0, what is already queued goes out together."""
    async def main():
        async def fn(batch):
            return list(batch)

        b = DynamicBatcher(fn, BatchingPolicy(32, 0))
        tickets = [b.enqueue(i) for i in range(64)]  # all queued before the worker runs
        await asyncio.gather(*[t.future for t in tickets])
        await b.aclose()
        return b.counters

    c = run(main())
    assert c.batch_size_histogram == {32: 2}


def test_window_timer_starts_at_oldest_request():
    async def main():
        async def fn(batch):
            return list(batch)

        async with DynamicBatcher(fn, BatchingPolicy(100, 60_000)) as b:
            t0 = b.enqueue(0)
            await asyncio.sleep(0.03)
            t1 = b.enqueue(1)
            await asyncio.gather(t0.future, t1.future)
        return t0, t1

    t0, t1 = run(main())
    assert t0.batch_id == t1.batch_id
    # dispatched about 60 ms after the OLDEST request, i.e. ~30 ms after the second one
    assert 0.055 <= t0.t_dispatch - t0.t_enqueue < 0.2
    assert t1.t_dispatch - t1.t_enqueue < t0.t_dispatch - t0.t_enqueue - 0.02


def test_preferred_batch_size_dispatches_early():
    async def main():
        async def fn(batch):
            return list(batch)

        b = DynamicBatcher(fn, BatchingPolicy(32, 1_000_000, (4,)))
        ts = [b.enqueue(i) for i in range(5)]
        await asyncio.wait_for(asyncio.gather(*[t.future for t in ts[:4]]), 2.0)
        await b.aclose(drain=True)
        return b.counters

    c = run(main())
    assert c.batch_size_histogram[4] == 1
    assert c.decision_reasons.get("preferred") == 1


def test_errors_reach_every_request_of_the_failing_batch_only():
    async def main():
        calls = {"n": 0}

        async def fn(batch):
            calls["n"] += 1
            if any(x % 7 == 3 for x in batch):
                raise RuntimeError("boom")
            return list(batch)

        async with DynamicBatcher(fn, BatchingPolicy(4, 0)) as b:
            ts = []
            for i in range(40):
                ts.append(b.enqueue(i))
                if i % 4 == 3:
                    await asyncio.sleep(0.001)
            outs = await asyncio.gather(*[t.future for t in ts], return_exceptions=True)
        return ts, outs, b.counters

    ts, outs, c = run(main())
    by_batch: dict[int, list] = {}
    for t, o in zip(ts, outs):
        by_batch.setdefault(t.batch_id, []).append(o)
    for bid, os_ in by_batch.items():
        failed = [isinstance(o, RuntimeError) for o in os_]
        assert all(failed) or not any(failed), f"batch {bid} partly failed"
    n_err = sum(isinstance(o, RuntimeError) for o in outs)
    assert n_err > 0 and c.failed == n_err and c.completed == 40 - n_err
    assert c.settled() == 40 == c.accepted


def test_sync_function_runs_in_threads_and_hop_is_measured():
    async def main():
        def fn(batch):
            return batch["x"] * 2

        async with DynamicBatcher(fn, BatchingPolicy(8, 2000), instances=2) as b:
            ts = [await b.submit_ticket({"x": np.full((1, 3), i, np.float32)}) for i in range(16)]
            outs = await asyncio.gather(*[t.future for t in ts])
        return ts, outs

    ts, outs = run(main())
    for i, (t, o) in enumerate(zip(ts, outs)):
        assert o.shape == (1, 3) and float(o[0, 0]) == 2 * i
        parts = t.parts_s()
        assert all(v >= 0 for v in parts.values())
        assert sum(parts.values()) == pytest.approx(t.t_delivered - t.t_enqueue, abs=1e-9)
        assert parts["executor_hop"] > 0


def test_cancellation_never_loses_or_hangs_another():
    async def main():
        async def fn(batch):
            await asyncio.sleep(0.01)
            return list(batch)

        async with DynamicBatcher(fn, BatchingPolicy(4, 5000)) as b:
            tasks = [asyncio.ensure_future(b.submit(i)) for i in range(30)]
            await asyncio.sleep(0)  # queued
            for i in range(0, 30, 5):
                tasks[i].cancel()  # cancelled while queued
            await asyncio.sleep(0.012)
            for i in range(1, 30, 6):
                tasks[i].cancel()  # some of these are in flight
            outs = await asyncio.wait_for(
                asyncio.gather(*tasks, return_exceptions=True), 5.0)
        return outs, b.counters

    outs, c = run(main())
    for i, o in enumerate(outs):
        assert isinstance(o, asyncio.CancelledError) or o == i
    assert c.settled() == c.accepted == 30
    n_cancel = sum(isinstance(o, asyncio.CancelledError) for o in outs)
    # a task cancelled after its result was set (but before it resumed) is "completed"
    # on the server side and cancelled on the client side: both views must add up
    server_cancelled = c.cancelled_queued + c.cancelled_in_flight
    assert server_cancelled <= n_cancel
    assert c.completed == 30 - server_cancelled >= 30 - n_cancel
    assert c.cancelled_queued >= 5  # the six cancelled while queued (one may be in flight)


def test_full_queue_rejects_with_typed_error_and_counters_add_up():
    async def main():
        release = asyncio.Event()

        async def fn(batch):
            await release.wait()
            return list(batch)

        b = DynamicBatcher(fn, BatchingPolicy(2, 0), max_queue_size=5)
        ok, rejected = [], 0
        await asyncio.sleep(0)
        for i in range(20):
            try:
                ok.append(b.enqueue(i))
            except QueueFull:
                rejected += 1
            await asyncio.sleep(0)
        release.set()
        outs = await asyncio.wait_for(asyncio.gather(*[t.future for t in ok]), 5.0)
        await b.aclose()
        return ok, outs, rejected, b.counters

    ok, outs, rejected, c = run(main())
    assert rejected > 0 and c.rejected == rejected
    assert c.submitted == 20 == c.accepted + c.rejected
    assert c.completed == len(ok) == len(outs)


def test_full_queue_wait_mode_applies_back_pressure():
    async def main():
        async def fn(batch):
            await asyncio.sleep(0.002)
            return list(batch)

        b = DynamicBatcher(fn, BatchingPolicy(2, 0), max_queue_size=3, on_full="wait")
        max_seen = 0

        async def client(i):
            nonlocal max_seen
            r = await b.submit(i)
            max_seen = max(max_seen, b.queued)
            return r

        outs = await asyncio.wait_for(asyncio.gather(*[client(i) for i in range(40)]), 10.0)
        await b.aclose()
        return outs, max_seen, b.counters

    outs, max_seen, c = run(main())
    assert outs == list(range(40))
    assert max_seen <= 3 and c.rejected == 0 and c.completed == 40


def test_close_without_drain_fails_queued_requests():
    async def main():
        async def fn(batch):
            await asyncio.sleep(0.05)
            return list(batch)

        b = DynamicBatcher(fn, BatchingPolicy(1, 0), max_queue_size=100)
        ts = [b.enqueue(i) for i in range(10)]
        await asyncio.sleep(0.01)
        await b.aclose(drain=False)
        outs = await asyncio.gather(*[t.future for t in ts], return_exceptions=True)
        with pytest.raises(BatcherClosed):
            b.enqueue(99)
        return outs, b.counters

    outs, c = run(main())
    assert outs[0] == 0
    assert all(isinstance(o, BatcherClosed) for o in outs[1:])
    assert c.settled() == 10


def test_default_assemble_and_split_round_trip():
    ps = [{"x": np.full((r, 2), i)} for i, r in enumerate([1, 2, 1])]
    batch, rows = default_assemble(ps)
    assert batch["x"].shape == (4, 2) and rows == [1, 2, 1]
    parts = default_split({"y": batch["x"] + 1}, rows)
    assert [p["y"].shape[0] for p in parts] == [1, 2, 1]
    assert float(parts[1]["y"][0, 0]) == 2
    with pytest.raises(ValueError, match="rows"):
        default_split(np.zeros((3, 2)), rows)


def test_a_broken_policy_fails_requests_instead_of_hanging():
    class Broken(BatchingPolicy):
        def decide(self, queued, oldest_enqueue_s, now_s):
            raise ZeroDivisionError("bug")

    async def main():
        async def fn(batch):
            return list(batch)

        b = DynamicBatcher(fn, Broken(4, 0))
        ts = [b.enqueue(i) for i in range(3)]
        outs = await asyncio.wait_for(asyncio.gather(*[t.future for t in ts],
                                                     return_exceptions=True), 2.0)
        await b.aclose()
        return outs, b.counters

    outs, c = run(main())
    assert all(isinstance(o, ZeroDivisionError) for o in outs)
    assert c.failed == 3 == c.settled()


def test_batch_raising_cancelled_error_fails_that_batch_only():
    from trtcheck.measure.serving.batcher import BatchCancelled

    calls = []

    async def fn(batch):
        calls.append(list(batch))
        if len(calls) == 1:
            raise asyncio.CancelledError()  # e.g. an async client whose call was cancelled
        return [x + 1 for x in batch]

    async def main():
        async with DynamicBatcher(fn, BatchingPolicy(4, 0)) as b:
            first = await asyncio.gather(b.submit(1), return_exceptions=True)
            later = await asyncio.gather(*[b.submit(i) for i in range(5)])
            return first, later, b.closed, b.counters

    first, later, closed, c = run(main())
    assert isinstance(first[0], BatchCancelled)
    assert later == [1, 2, 3, 4, 5] and not closed
    assert c.batch_errors == 1 and c.failed == 1 and c.completed == 5


def test_hung_sync_batch_is_abandoned_by_aclose_and_its_pool_never_joined():
    import threading

    from trtcheck.measure.serving.batcher import DaemonThreadPool

    release = threading.Event()

    def fn(batch):
        release.wait()  # a driver call that never returns
        return batch

    async def main():
        b = DynamicBatcher(fn, BatchingPolicy(4, 0))
        fut = b.enqueue(1).future
        await asyncio.sleep(0.05)
        await b.aclose(drain=False, timeout_s=0.2)
        return fut, b

    try:
        fut, b = returns_before_hang_limit(run, main())
        assert b.abandoned_batches == 1
        assert isinstance(fut.exception(), BatcherClosed)
        pool = DaemonThreadPool(1)
        pool.submit(release.wait)
        returns_before_hang_limit(pool.shutdown, wait=False)
        # returned with its thread still blocked: nothing waited for it
        assert any(t.is_alive() for t in pool._threads)
        assert all(t.daemon for t in pool._threads)
    finally:
        release.set()


def test_decision_reasons_survive_a_counter_reset():
    async def main():
        async with DynamicBatcher(lambda batch: batch, BatchingPolicy(4, 1000)) as b:
            await asyncio.gather(*[b.submit(i) for i in range(8)])
            b.counters = type(b.counters)()
            await asyncio.gather(*[b.submit(i) for i in range(8)])
            await b.submit(9)  # alone: closed by the window timer
            return b.counters

    c = run(main())
    assert c.decision_reasons, "reasons after a reset went to the old counters"
    assert sum(c.decision_reasons.values()) == c.execution_count
