"""Bounded per-request records of a serving run: the reservoir keeps at most its
capacity of requests (every stride-th, a power of two) with statistics of every request
(exact up to the capacity, within 0.05 % beyond); a streamed run reports each request
once; and the accounting is exact: sent = completed + rejected + failed + timed out +
cancelled."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from trtcheck import stats as tstats
from trtcheck.measure.serving.loadgen import OUTCOMES, parse_load, run_load
from trtcheck.measure.serving.request_record import RequestReservoir


def test_reservoir_is_exact_up_to_its_capacity():
    rng = np.random.default_rng(0)
    x = np.round(rng.lognormal(0, 1, 900), 4).tolist()
    r = RequestReservoir(["a"], capacity=1000)
    for v in x:
        r.add((v,))
    assert r.exact and r.stride == 1 and r.kept("a") == x
    assert r.summarize("a") == tstats.summarize(x)
    assert r.percentile("a", 0.99) == tstats.percentile(x, 0.99)


@pytest.mark.parametrize("method", ["linear", "nearest-rank"])
def test_reservoir_beyond_capacity_keeps_a_bounded_stride_sample(method):
    rng = np.random.default_rng(1)
    x = np.round(rng.lognormal(0, 1.2, 50_000), 4)
    r = RequestReservoir(["a", "neg"], capacity=1000)
    for v in x.tolist():
        r.add((v, -v))
    assert not r.exact
    assert r.count == 50_000
    kept = r.kept("a")
    assert 500 <= len(kept) <= 1000
    assert r.stride & (r.stride - 1) == 0  # a power of two
    assert kept == x[::r.stride][:len(kept)].tolist()  # every stride-th, in order
    ex, ap = tstats.summarize(x, method), r.summarize("a", method)
    assert ap.count == ex.count
    assert ap.mean_ms == pytest.approx(ex.mean_ms, rel=1e-12)
    assert ap.std_ms == pytest.approx(ex.std_ms, rel=1e-9)
    assert (ap.min_ms, ap.max_ms) == (ex.min_ms, ex.max_ms)
    for k in ("median_ms", "p25_ms", "p75_ms", "p90_ms", "p95_ms", "p99_ms", "mad_ms"):
        assert getattr(ap, k) == pytest.approx(getattr(ex, k), rel=6e-4, abs=1e-4), k
    assert r.percentile("neg", 0.01, method) == pytest.approx(
        tstats.percentile(-x, 0.01, method), rel=6e-4)


@pytest.mark.parametrize("spec", ["burst:300", "closed:8:500", "open:20000:constant:400"])
def test_a_streamed_run_reports_each_sent_request_once(spec):
    seen: list[tuple[int, str]] = []

    async def go():
        loop = asyncio.get_running_loop()

        def start(i: int):
            fut = loop.create_future()
            if i % 5 == 0:
                loop.call_soon(fut.set_exception, RuntimeError("x"))
            else:
                loop.call_soon(fut.set_result, i)
            return fut

        return await run_load(parse_load(spec), start, max_duration_s=5,
                              on_end=lambda i, a, b, c, o, e: seen.append((i, o)))

    rec = asyncio.run(go())
    counts = rec.outcome_counts()
    assert set(counts) == set(OUTCOMES)
    assert rec.outcome == [] and rec.t_send == []  # nothing kept per request
    assert len(seen) == len({i for i, _ in seen}) == sum(
        v for k, v in counts.items() if k != "not_sent")
    assert counts["error"] == sum(1 for i, _ in seen if i % 5 == 0)
    assert sum(counts.values()) == parse_load(spec).count


def test_serve_accounting_is_exact_and_records_bounded(monkeypatch):
    """Rejections (a queue of 4), failures (every 3rd batch raises), timeouts (a batch
    that outlives the drain) and successes: every request is counted once, on the client
    and in the batcher alike, and the kept per-request lists stay within the cap."""
    import trtcheck.measure.serving.serve as serve_mod

    monkeypatch.setattr(serve_mod, "MAX_RAW_REQUESTS", 64)
    calls = [0]

    async def fn(batch):
        calls[0] += 1
        if calls[0] % 3 == 0:
            raise RuntimeError("scripted")
        if calls[0] == 40:
            await asyncio.sleep(3.0)  # outlives the drain: its requests time out
        await asyncio.sleep(0.001)
        return list(batch)

    run = serve_mod.measure_serving(fn, windows_us=[500], max_batch_sizes=[4],
                                    loads=["open:4000:constant:2000"], repeats=1,
                                    warmup_requests=0, max_queue_size=4,
                                    max_duration_s=5.0, drain_timeout_s=0.5)
    rep = run.configs[0].repeats[0]
    o, c = rep.outcomes, rep.counters
    sent = o["ok"] + o["error"] + o["rejected"] + o["timeout"]
    assert sent + o["not_sent"] == 2000
    assert c.submitted == sent
    assert c.submitted == (c.completed + c.rejected + c.failed + c.cancelled_queued
                           + c.cancelled_in_flight)
    assert (o["ok"], o["rejected"]) == (c.completed, c.rejected)
    assert o["error"] == c.failed
    assert o["timeout"] == c.cancelled_queued + c.cancelled_in_flight
    assert min(o["ok"], o["error"], o["rejected"], o["timeout"]) > 0
    assert rep.ok_count == o["ok"] and len(rep.latencies_ms) <= 64
    assert len(rep.send_lag_ms) <= 64
    assert rep.raw_stride > 1 and rep.latency.count == o["ok"]


def test_live_records_of_two_processes_merge_bounded_and_exact():
    """A live run's record (one per load process) keeps counts exact and its kept
    requests within the capacity after merging; the repeat built from it agrees."""
    from trtcheck.measure.serving.live.live import build_live_repeat, stats_delta
    from trtcheck.measure.serving.live.live_record import LiveRunRecord

    parts = [LiveRunRecord(open_loop=True, late_threshold_ms=1.0, capacity=100)
             for _ in range(2)]
    rng = np.random.default_rng(2)
    n = 5000
    for i in range(n):
        sched = i * 0.001
        send = sched + (0.002 if i % 10 == 0 else 0.0001)
        outcome = "error" if i % 50 == 0 else "timeout" if i % 77 == 0 else "ok"
        parts[i % 2].on_end(i, sched, send, send + 0.001 + rng.random() * 0.004, outcome,
                            "HTTP 500" if outcome == "error" else "")
    whole = parts[0]
    whole.merge(parts[1])
    assert whole.sent == n and sum(whole.outcomes.values()) == n
    assert whole.errors == {"HTTP 500": whole.outcomes["error"]}
    assert whole.late == n // 10
    st = {"name": "m", "inference_count": 0, "execution_count": 0}
    rep = build_live_repeat(0, whole, stats_delta(st, st), 1.0)
    assert rep.ok_count == whole.outcomes["ok"] == rep.latency.count
    assert len(rep.latencies_ms) <= 100 and len(rep.send_lag_ms) <= 100
    assert rep.latencies_ms and rep.raw_stride > 1
    assert rep.counters.submitted == (rep.counters.completed + rep.counters.failed
                                      + rep.counters.cancelled_in_flight)
    assert rep.late_send_share == pytest.approx(0.1)
    assert 1.0 <= rep.latency.median_ms <= 5.1
