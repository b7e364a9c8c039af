"""A load run's start (``run_load``'s ``t0_s``): a schedule anchored to a given start
rather than to when the run began, as the shares of a distributed run need (one common
epoch). Without ``t0_s`` the run starts when it begins, as before. Every assertion
follows from the given start and the schedule, never from how fast the machine is."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from live_jobs import tb_linear_jobs

from trtcheck.measure.serving.live.live_record import LiveRunRecord
from trtcheck.measure.serving.loadgen import OK, parse_load, run_load


def _answer_at_once(i: int) -> asyncio.Future:
    fut = asyncio.get_running_loop().create_future()
    fut.set_result(i)
    return fut


def _run(spec: str, t0_s: float | None, streamed: bool, max_duration_s: float = 5.0):
    """``run_load`` of ``spec`` answering every request at once; the record and
    ``(i, t_sched, t_send)`` of every sent request."""
    seen: list[tuple[int, float, float]] = []

    async def go():
        on_end = (lambda i, sched, send, end, o, e: seen.append((i, sched, send))) \
            if streamed else None
        return await run_load(parse_load(spec), _answer_at_once, t0_s=t0_s,
                              max_duration_s=max_duration_s, on_end=on_end)

    rec = asyncio.run(go())
    if not streamed:
        seen = [(i, rec.t_sched[i], rec.t_send[i]) for i in range(len(rec.outcome))
                if rec.outcome[i] == OK]
    return rec, sorted(seen)


@pytest.mark.parametrize("streamed", [False, True])
def test_an_open_loop_given_a_past_start_keeps_its_schedule_and_sends_late(streamed):
    spec = "open:1000:constant:100"  # arrivals 1 ms apart: 0, 1, ..., 99 ms
    offs = parse_load(spec).schedule_s(0)
    t0 = time.perf_counter() - 0.05  # the start was 50 ms ago
    rec, seen = _run(spec, t0, streamed)
    assert rec.t_start == t0 and rec.t_began >= t0 + 0.05
    assert rec.outcome_counts()[OK] == len(seen) == 100
    for i, sched, send in seen:
        # the schedule is anchored to the given start, not to when the run began ...
        assert sched == t0 + 0.001 + float(offs[i])
        assert send >= sched  # ... never early
        if sched < rec.t_began:  # ... and what was due before it began goes out late
            assert send - sched >= rec.t_began - sched > 0
    # at least the arrivals due in the first 50 ms were late, the first by 49 ms or more
    assert sum(sched < rec.t_began for _, sched, _ in seen) >= 49
    assert seen[0][2] - seen[0][1] >= 0.049


@pytest.mark.parametrize("streamed", [False, True])
def test_without_a_start_the_run_starts_when_it_begins(streamed):
    before = time.perf_counter()
    rec, seen = _run("open:1000:constant:20", None, streamed)
    offs = parse_load("open:1000:constant:20").schedule_s(0)
    assert rec.t_start == rec.t_began >= before
    assert [s for _, s, _ in seen] == [rec.t_start + 0.001 + float(o) for o in offs]


@pytest.mark.parametrize("streamed", [False, True])
def test_the_sending_bound_counts_from_the_given_start(streamed):
    # a start a whole duration ago: the bound has passed, nothing is sent
    t0 = time.perf_counter() - 1.0
    rec, seen = _run("open:100:constant:50", t0, streamed, max_duration_s=0.5)
    assert seen == []
    assert rec.outcome_counts() == {"ok": 0, "error": 0, "rejected": 0, "timeout": 0,
                                    "not_sent": 50}
    assert rec.t_stop_sending >= rec.t_began > t0 + 0.5


@pytest.mark.parametrize("streamed", [False, True])
def test_a_backlog_stops_at_the_sending_bound(streamed):
    """A sender far behind its schedule (a start 1.5 s ago: about 1500 sends already
    due) whose bound is 0.1 s away: each send takes 2 ms or more (a blocking sleep), so
    firing the whole backlog would take 3 s; the bound is checked after every send, so
    sending stops by it plus one send (the margin allows a loaded machine)."""
    send_s = 0.002
    spec = "open:1000:constant:2000"
    sent: list[float] = []

    def slow_send(i: int) -> asyncio.Future:
        time.sleep(send_s)  # at least send_s: the sends of one loop run one after another
        sent.append(time.perf_counter())
        return _answer_at_once(i)

    async def go():
        on_end = (lambda *a: None) if streamed else None
        return await run_load(parse_load(spec), slow_send, t0_s=t0, max_duration_s=1.6,
                              on_end=on_end)

    t0 = time.perf_counter() - 1.5
    stop_at = t0 + 1.6
    rec = asyncio.run(go())
    counts = rec.outcome_counts()
    assert counts[OK] == len(sent) and counts["not_sent"] == 2000 - len(sent)
    # each send began before the bound, after the one before it had taken send_s
    assert len(sent) <= (stop_at - rec.t_began) / send_s + 1
    assert len(sent) < 1500  # far from the whole backlog
    assert rec.t_stop_sending < stop_at + send_s + 0.5
    assert all(t < stop_at + send_s + 0.5 for t in sent)


@pytest.mark.parametrize("spec", ["burst:20", "closed:4:40"])
@pytest.mark.parametrize("streamed", [False, True])
def test_a_burst_or_closed_loop_given_a_start_ahead_waits_for_it(spec, streamed):
    t0 = time.perf_counter() + 0.03
    rec, seen = _run(spec, t0, streamed)
    assert rec.t_start == t0 and rec.t_began < t0
    assert len(seen) == parse_load(spec).count
    assert all(t0 <= sched <= send for _, sched, send in seen)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_burst_given_a_past_start_fires_at_once(streamed):
    t0 = time.perf_counter() - 0.05
    rec, seen = _run("burst:10", t0, streamed)
    assert rec.t_start == t0 and rec.t_began >= t0 + 0.05
    # all at once, from when it began, not from the given start
    assert len(seen) == 10 and all(rec.t_began <= sched <= send for _, sched, send in seen)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_start_that_is_not_a_time_is_refused(bad):
    with pytest.raises(ValueError, match="t0_s"):
        asyncio.run(run_load(parse_load("burst:1"), _answer_at_once, t0_s=bad))


def test_a_live_record_moves_and_merges_its_start_and_when_it_began():
    a = LiveRunRecord(open_loop=True, late_threshold_ms=1.0)
    b = LiveRunRecord(open_loop=True, late_threshold_ms=1.0)
    a.t_start, a.t_began = 100.0, 100.004
    b.t_start, b.t_began = 100.0, 100.002
    a.shift(100.0)
    b.shift(100.0)
    assert (a.t_start, b.t_start) == (0.0, 0.0)  # onto the epoch exactly
    assert a.t_began == pytest.approx(0.004, abs=1e-12)
    a.merge(b)
    assert a.t_start == 0.0 and a.t_began == pytest.approx(0.002, abs=1e-12)


@pytest.mark.triton
@pytest.mark.slow
def test_local_load_processes_share_one_common_start(triton):
    """Every local load process anchors its share to the one start the measuring process
    sends with go (after the go itself), not to when its own run began: process k's
    earliest scheduled send is exactly that start + 1 ms + offset k of the one schedule;
    how late each run began is recorded per process."""
    from trtcheck.measure.serving.live.live import merge_results, run_processes

    seed = 5
    shape, jobs = tb_linear_jobs(triton, "open:100:poisson:60", seed, 3)
    before_go: list[float] = []
    parts = run_processes(jobs, lambda: before_go.append(time.perf_counter()),
                          timeout_s=30.0)
    offs = shape.schedule_s(seed)
    assert [(p.record.sent, p.record.outcomes[OK]) for p in parts] == [(20, 20)] * 3
    # one start for every process, exactly, chosen at go (ahead of it)
    assert len({p.record.t_start for p in parts}) == 1
    start = parts[0].record.t_start
    assert start > before_go[0]
    for k, part in enumerate(parts):
        rec = part.record
        assert rec.first == pytest.approx(start + 0.001 + float(offs[k]), abs=1e-9)
    for part in parts:
        assert part.record.start_late_s == [part.record.t_began - start]
    whole, _ = merge_results(shape, parts)
    assert whole.first == pytest.approx(start + 0.001 + float(offs[0]), abs=1e-9)
    assert len(whole.start_late_s) == 3


@pytest.mark.triton
@pytest.mark.slow
def test_one_local_load_process_starts_when_its_run_begins(triton):
    from trtcheck.measure.serving.live.live import run_processes

    shape, jobs = tb_linear_jobs(triton, "open:100:constant:10", 0, 1)
    (part,) = run_processes(jobs, lambda: None, timeout_s=30.0)
    rec = part.record
    assert rec.sent == 10 and rec.t_start == rec.t_began and rec.start_late_s == [0.0]
    assert rec.first == pytest.approx(rec.t_start + 0.001, abs=1e-9)


def test_go_carries_one_common_start_ahead_of_the_signal():
    """``signal_go``: several processes get a ``"sync"`` (timing the signal) and then
    ``("go", start)`` with one start at least the lead ahead of when it was sent; one
    process gets a plain ``"go"`` (its run starts when it begins)."""
    import multiprocessing as mp

    from trtcheck.measure.serving.live.live import LOCAL_START_LEAD_S, signal_go

    pipes = [mp.Pipe() for _ in range(3)]
    try:
        before = time.perf_counter()
        start = signal_go([a for a, _ in pipes])
        after = time.perf_counter()
        assert start is not None and before + LOCAL_START_LEAD_S < start
        assert start < after + LOCAL_START_LEAD_S + (after - before)
        for _, b in pipes:
            assert b.recv() == "sync" and b.recv() == ("go", start) and not b.poll()
        assert signal_go([pipes[0][0]]) is None and pipes[0][1].recv() == "go"
    finally:
        for a, b in pipes:
            a.close()
            b.close()
