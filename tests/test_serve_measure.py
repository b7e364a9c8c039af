"""Serving measurement: acceptance (seed direction), load generator, waterfall, HTTP front,
results round trip. Tolerances hold on a loaded 2-core machine: directions and ratios,
never absolute speed."""

from __future__ import annotations

import asyncio
import statistics

import numpy as np
import pytest

from trtcheck.backends.synthetic import SyntheticBackend, parse_curve
from trtcheck.errors import InputError, UsageError
from trtcheck.measure.serving.loadgen import parse_load, run_load
from trtcheck.measure.serving.serve import ameasure_serving, measure_serving
from trtcheck.results import results_from_json, results_to_json

from tests.conftest import interruptible, returns_before_hang_limit


def test_seed_burst_direction_qps_falls_and_p50_rises_with_window():
    """Seed numbers: T(b) ~0.29 ms flat-ish + 12 ms fixed per-request cost, burst of 64."""
    be = SyntheticBackend("1:0.29,8:0.4,32:1.0", per_request_overhead_ms=12.0)
    run = measure_serving(be, windows_us=[0, 20000, 50000, 100000], max_batch_sizes=[32],
                          loads=["burst:64"], repeats=3, warmup_requests=0)
    qps = [c.throughput_queries_per_s for c in run.configs]
    p50 = [c.p50_ms for c in run.configs]
    mean_batch = [c.mean_batch_size for c in run.configs]
    # batches do form as the window grows (window 0: requests 12 ms apart share a batch
    # only when the machine stalls an execution that long, so no bound on its size here) ...
    assert mean_batch[3] > mean_batch[1] > mean_batch[0] >= 1.0
    # ... and P50 rises from the smallest window to the largest by the window's wait (QPS
    # falls too, by a few percent: within a loaded machine's noise, so not asserted)
    assert all(q > 0 for q in qps), qps
    assert p50[3] > p50[0] + 20.0, p50
    # the window wait is what grew
    wf = {w.name: w.median_ms for w in run.configs[3].repeats[run.configs[3].median_repeat].waterfall}
    assert wf["window_wait_ms"] > 20.0


def test_batching_raises_qps_under_sustained_overload():
    """T(1) = 20 ms and an open-loop rate above 1/T(1): batching raises QPS."""
    be = SyntheticBackend("1:20,8:26")
    run = measure_serving(be, windows_us=[0, 5000], max_batch_sizes=[1, 8],
                          loads=["open:120:poisson:180"], repeats=1, warmup_requests=0,
                          max_duration_s=5.0, drain_timeout_s=10.0)
    by = {(c.window_us, c.max_batch_size): c for c in run.configs}
    unbatched = by[(0.0, 1)]
    assert unbatched.throughput_queries_per_s < 55  # capped by 1 / T(1) = 50 /s
    for w in (0.0, 5000.0):
        batched = by[(w, 8)]
        assert batched.mean_batch_size > 1.5
        assert batched.throughput_queries_per_s > 1.5 * unbatched.throughput_queries_per_s
        assert batched.p50_ms < unbatched.p50_ms
        assert batched.ok_share == 1.0


def test_waterfall_parts_sum_to_latency_and_counters_add_up():
    be = SyntheticBackend("1:1,8:2", mode="thread")
    run = measure_serving(be, windows_us=[2000], max_batch_sizes=[8], loads=["closed:8:200"],
                          repeats=1, warmup_requests=4)
    rep = run.configs[0].repeats[0]
    assert rep.outcomes["ok"] == 200 == len(rep.latencies_ms)
    c = rep.counters
    assert c.inference_count == 200 == c.completed
    assert sum(int(k) * v for k, v in c.batch_size_histogram.items()) == 200
    assert c.avg_batch_size == pytest.approx(200 / c.execution_count)
    names = [w.name for w in rep.waterfall]
    assert "executor_hop_ms" in names and "send_lag_ms" not in names
    for i in range(len(rep.latencies_ms)):
        s = sum(rep.parts_ms[k][i] for k in rep.parts_ms)
        # the parts are disjoint stretches of the latency; the residual is loop wake-up
        # (its size on a quiet machine: benchmarks/batcher_overhead.py)
        assert rep.latencies_ms[i] - s >= -1e-9
    assert rep.residual_median_ms is not None and rep.residual_median_ms >= -1e-9
    assert len(rep.enqueue_offsets_ms) == 200 and min(rep.enqueue_offsets_ms) >= 0
    assert len(rep.batch_sizes) == 200 and set(rep.batch_sizes) <= set(range(1, 9))
    compute = statistics.median(rep.parts_ms["compute_ms"])
    assert compute >= 0.999  # T(b) between 1 and 2 ms: a sleep never returns early


def test_open_loop_counts_from_schedule_and_reports_send_lag():
    """No coordinated omission: a blocked loop shows up as latency and as late sends."""
    async def main():
        def start(i):
            fut = asyncio.get_running_loop().create_future()
            fut.set_result(i)
            if i == 10:
                import time
                time.sleep(0.05)  # the sender stalls 50 ms
            return fut

        shape = parse_load("open:1000:constant:100")
        return await run_load(shape, start, max_duration_s=5)

    rec = asyncio.run(main())
    assert rec.outcome_counts()["ok"] == 100
    lags = [rec.t_send[i] - rec.t_sched[i] for i in range(100)]
    late = sum(lag > 0.001 for lag in lags)
    assert late >= 30  # ~50 sends were due during the stall
    lat_from_sched = [rec.t_end[i] - rec.t_sched[i] for i in range(11, 40)]
    assert max(lat_from_sched) > 0.03  # the stall is in the latency, not hidden


def test_open_loop_rate_is_held():
    async def main():
        loop = asyncio.get_running_loop()

        def start(i):
            fut = loop.create_future()
            fut.set_result(None)
            return fut

        return await run_load(parse_load("open:2000:constant:2000"), start, max_duration_s=10)

    rec = asyncio.run(main())
    # the schedule is the rate, exactly; sends follow it, never early (how late on a quiet
    # machine: benchmarks/loadgen_accuracy.py)
    gaps = np.diff(np.asarray(rec.t_sched[:2000], dtype=float))
    assert len(rec.t_sched) >= 2000 and gaps == pytest.approx(1 / 2000, rel=1e-6)
    assert all(s >= d - 1e-9 for s, d in zip(rec.t_send, rec.t_sched))


def test_time_bound_and_drain_timeout_give_every_request_an_outcome():
    async def slow(batch):
        await asyncio.sleep(0.2)
        return list(batch)

    run = measure_serving(slow, windows_us=[0], max_batch_sizes=[1],
                          loads=["open:200:constant:1000"], repeats=1, warmup_requests=0,
                          max_duration_s=0.3, drain_timeout_s=0.3)
    rep = run.configs[0].repeats[0]
    o = rep.outcomes
    assert sum(o.values()) == 1000
    assert o["not_sent"] > 800 and o["timeout"] > 0 and o["ok"] >= 1
    c = rep.counters
    assert c.accepted == o["ok"] + o["timeout"]
    assert c.completed + c.cancelled_queued + c.cancelled_in_flight + c.failed == c.accepted
    assert any(w.code == "requests-not-ok" for w in run.configs[0].warnings)


def test_faulty_backend_and_full_queue_through_measure_serving():
    state = {"n": 0}

    def flaky(batch):
        state["n"] += 1
        if state["n"] % 3 == 0:
            raise RuntimeError("injected")
        return [0] * len(batch)

    run = measure_serving(flaky, windows_us=[1000], max_batch_sizes=[4], loads=["burst:200"],
                          repeats=1, warmup_requests=0, max_queue_size=50)
    rep = run.configs[0].repeats[0]
    o = rep.outcomes
    assert sum(o.values()) == 200 and o["rejected"] == 150
    assert o["error"] > 0 and o["ok"] > 0 and o["ok"] + o["error"] == 50
    assert rep.errors["RuntimeError"] == o["error"] and rep.errors["QueueFull"] == 150
    c = rep.counters
    assert c.rejected == 150 and c.failed == o["error"] and c.completed == o["ok"]
    assert c.batch_errors * 1 <= c.execution_count


def test_async_user_function_with_array_payloads():
    async def model(batch):
        await asyncio.sleep(0.001)
        return {"y": batch["x"].sum(axis=1, keepdims=True)}

    payload = {"x": np.ones((1, 4), np.float32)}
    run = measure_serving(model, windows_us=[1000], max_batch_sizes=[16], loads=["burst:32"],
                          repeats=2, payload=payload, warmup_requests=2)
    cfg = run.configs[0]
    assert cfg.ok_share == 1.0 and len(cfg.repeats) == 2
    assert run.backend.name == "callable" and run.settings.payload.startswith("x float32")
    assert cfg.mean_batch_size > 1


def test_http_front_adds_an_http_part():
    be = SyntheticBackend("1:0.5,8:1")
    run = measure_serving(be, windows_us=[0], max_batch_sizes=[8],
                          loads=["burst:32", "closed:4:60"], repeats=1, http=True,
                          warmup_requests=2)
    for cfg in run.configs:
        rep = cfg.repeats[0]
        assert rep.outcomes["ok"] == sum(rep.outcomes.values())
        names = {w.name for w in rep.waterfall}
        assert "http_ms" in names
        http = next(w for w in rep.waterfall if w.name == "http_ms")
        assert http.median_ms > 0
        assert rep.residual_p99_ms is not None and rep.residual_p99_ms >= -1e-9


def test_measure_serving_inside_a_loop_is_refused_and_async_form_works():
    async def main():
        with pytest.raises(UsageError, match="inside a running event loop"):
            measure_serving(lambda b: list(b), loads=["burst:4"])
        return await ameasure_serving(lambda b: list(b), windows_us=[0], max_batch_sizes=[4],
                                      loads=["burst:8"], repeats=1)

    run = asyncio.run(main())
    assert run.configs[0].ok_share == 1.0


def test_serve_results_round_trip_through_json():
    be = SyntheticBackend("1:0.2")
    run = measure_serving(be, windows_us=[0], max_batch_sizes=[4], loads=["open:500:50"],
                          repeats=1, warmup_requests=0)
    from trtcheck.measure.bench.runner import new_results

    res = new_results()
    res.serve = run
    back = results_from_json(results_to_json(res))
    assert back.serve == run
    assert back.serve.config("open:500:50", 0, 4) is not None


@pytest.mark.parametrize("spec,kind", [("burst:64", "burst"), ("closed:32", "closed"),
                                       ("closed:4:100", "closed"), ("open:3000", "open"),
                                       ("open:10:constant:5", "open")])
def test_parse_load(spec, kind):
    assert parse_load(spec).kind == kind


@pytest.mark.parametrize("spec", ["burst", "burst:0", "open:-1", "closed:x", "poisson:3",
                                  "trace:/nonexistent/file"])
def test_parse_load_rejects(spec):
    with pytest.raises(InputError):
        parse_load(spec)


def test_trace_replay(tmp_path):
    f = tmp_path / "arrivals.txt"
    f.write_text("# seconds\n10.0\n10.01\n10.05\n10.2\n")
    shape = parse_load(f"trace:{f}")
    assert shape.count == 4 and list(shape.schedule_s(0)) == pytest.approx([0, .01, .05, .2])


def test_synthetic_curve_interpolates_and_extends():
    be = SyntheticBackend(parse_curve("1:1,9:5"))
    assert be.batch_time_ms(5) == pytest.approx(3.0)
    assert be.batch_time_ms(17) == pytest.approx(9.0)
    assert SyntheticBackend({4: 2.0}).batch_time_ms(1) == pytest.approx(2.0)
    with pytest.raises(InputError):
        parse_curve("1:abc")


def test_closed_loop_with_rejections_keeps_the_loop_running():
    async def slow(batch):
        await asyncio.sleep(0.005)
        return list(batch)

    run = measure_serving(slow, windows_us=[0], max_batch_sizes=[1], loads=["closed:8:200"],
                          repeats=1, warmup_requests=0, max_queue_size=2, max_duration_s=3.0)
    rep = run.configs[0].repeats[0]
    o = rep.outcomes
    assert o["ok"] > 0 and o["rejected"] > 0
    assert o["ok"] + o["rejected"] == 200 == sum(o.values())
    assert rep.counters.rejected == o["rejected"] and rep.counters.completed == o["ok"]


def test_http_front_back_pressure_and_errors_reach_the_client():
    state = {"n": 0}

    async def flaky(batch):
        state["n"] += 1
        await asyncio.sleep(0.002)
        if state["n"] % 2 == 0:
            raise RuntimeError("injected")
        return [0] * len(batch)

    run = measure_serving(flaky, windows_us=[0], max_batch_sizes=[2], loads=["burst:30"],
                          repeats=1, warmup_requests=0, http=True, max_queue_size=4)
    rep = run.configs[0].repeats[0]
    o = rep.outcomes
    assert sum(o.values()) == 30 and o["rejected"] > 0 and o["error"] > 0 and o["ok"] > 0
    assert rep.counters.rejected == o["rejected"]
    assert rep.counters.failed == o["error"] and rep.counters.completed == o["ok"]


def test_overload_in_one_run_does_not_leak_into_the_next():
    """Runs are independent: a run whose requests time out behind the per-request stage
    leaves nothing behind for the next repeat or configuration."""
    be = SyntheticBackend("1:0.2", per_request_overhead_ms=10.0)
    run = measure_serving(be, windows_us=[0], max_batch_sizes=[1, 8],
                          loads=["open:400:constant:200"], repeats=2, warmup_requests=2,
                          max_duration_s=0.5, drain_timeout_s=0.3)
    for cfg in run.configs:
        for rep in cfg.repeats:
            assert rep.outcomes["timeout"] > 0  # overloaded by design: 400/s vs 100/s
            assert 70 < rep.throughput_queries_per_s < 130, rep.throughput_queries_per_s


def test_a_hung_model_cannot_hang_serve():
    """Runs are bounded in time even when a batch never finishes."""
    import asyncio
    import time

    from trtcheck.measure.serving.serve import measure_serving

    async def hung(batch):
        await asyncio.sleep(3600)
        return batch

    run = returns_before_hang_limit(
        measure_serving, hung, windows_us=(0,), max_batch_sizes=(4,), loads=["burst:8"],
        repeats=1, max_duration_s=0.3, drain_timeout_s=0.3, warmup_requests=0, payload=1.0)
    cfg = run.configs[0]
    assert cfg.ok_share == 0.0  # every request ended (timeout), none hangs


def test_open_loop_sender_never_sleeps_past_the_duration(tmp_path):
    async def fast(batch):
        return list(batch)

    trace = tmp_path / "gap.txt"
    trace.write_text("0\n0.001\n1000000\n")  # a gap of 11 days
    for load in ("open:0.01:constant:5", f"trace:{trace}"):
        # a sender that slept through the gap would not return for 11 days
        run = returns_before_hang_limit(
            measure_serving, fast, windows_us=[0], max_batch_sizes=[1], loads=[load],
            repeats=1, warmup_requests=0, max_duration_s=0.3, drain_timeout_s=0.2)
        assert run.configs[0].repeats[0].outcomes["not_sent"] >= 1


def test_hung_sync_backend_does_not_hang_serve():
    import threading
    import time

    release = threading.Event()

    def hangs(batch):
        release.wait()
        return list(batch)

    try:
        # 4 runs, each ended by its sending, drain and close timeouts; the hung executions
        # are abandoned, never joined at the end
        run = returns_before_hang_limit(
            measure_serving, hangs, windows_us=[0], max_batch_sizes=[4],
            loads=["burst:8", "burst:4"], repeats=2, warmup_requests=0,
            max_duration_s=0.2, drain_timeout_s=0.2)
        for cfg in run.configs:
            for rep in cfg.repeats:
                assert rep.outcomes["ok"] == 0
                assert sum(rep.outcomes.values()) == cfg.load.count
    finally:
        release.set()


def test_counts_of_full_and_timer_batches_are_kept_after_the_warm_up():
    async def fn(batch):
        await asyncio.sleep(0.001)
        return list(batch)

    run = measure_serving(fn, windows_us=[5000], max_batch_sizes=[4], loads=["burst:10"],
                          repeats=1, warmup_requests=8)
    c = run.configs[0].repeats[0].counters
    assert c.decision_reasons, "the reasons went to the warm-up's counters"
    assert sum(c.decision_reasons.values()) == c.execution_count


def _loop_blocking_run(rate: int = 4000):
    """An open loop the sender cannot keep: each batch blocks the event loop 5 ms."""
    import time

    async def blocks_the_loop(batch):
        time.sleep(0.005)
        return list(batch)

    return measure_serving(blocks_the_loop, windows_us=[0], max_batch_sizes=[8],
                           loads=[f"open:{rate}"], repeats=1, warmup_requests=0,
                           max_duration_s=0.4, drain_timeout_s=1.0)


def test_open_loop_with_most_sends_late_is_marked_generator_limited():
    cfg = _loop_blocking_run().configs[0]
    assert cfg.late_send_share > 0.5
    (mark,) = [v for v in cfg.validity if v.code == "generator-limited"]
    assert mark.severity == "error" and "of sends were late" in mark.message
    back = results_from_json(results_to_json(_as_results(_loop_blocking_run())))
    assert back.serve.configs[0].validity[0].code == "generator-limited"


def _as_results(run):
    from trtcheck.measure.bench.runner import new_results

    res = new_results(["trtcheck", "serve"])
    res.serve = run
    return res


def test_gate_does_not_pass_a_p99_budget_on_a_generator_limited_run():
    from trtcheck.analyze.gate.gate_evaluate import evaluate
    from trtcheck.analyze.gate.gate_policy import parse_policy

    res = _as_results(_loop_blocking_run())
    pol = parse_policy("settings:\n  on_uncertified: warn\nbudgets:\n"
                       "  - serve.configs[*].p99_ms <= 100000 ms\n"
                       "  - serve.configs[*].repeats[0].latency.p99_ms <= 100000 ms\n")
    rep = evaluate(pol, res)
    assert rep.exit_code == 1 and not rep.passed
    assert {c.verdict for c in rep.checks} == {"invalid"}
    assert "generator-limited" in rep.checks[0].message
    warn = parse_policy("settings:\n  on_invalid_run: warn\n  on_uncertified: warn\n"
                        "budgets:\n  - serve.configs[*].p99_ms <= 100000 ms\n")
    rep = evaluate(warn, res)
    assert rep.exit_code == 0 and rep.checks[0].outcome == "warn"


def test_a_window_that_forms_no_batches_gets_a_finding_saying_why():
    async def fn(batch):
        await asyncio.sleep(0.001)
        return list(batch)

    run = measure_serving(fn, windows_us=[0, 5000], max_batch_sizes=[8],
                          loads=["closed:1:40", "open:20:constant:10"], repeats=1,
                          warmup_requests=0, max_duration_s=1.0)
    by = {(c.load.label, c.window_us): c for c in run.configs}
    closed = [w for w in by[("closed:1:40", 5000.0)].warnings if w.code == "window-without-batches"]
    assert closed and "only adds latency" in closed[0].message
    assert "closed loop has 1 client" in closed[0].message
    opened = [w for w in by[("open:20:constant:10", 5000.0)].warnings
              if w.code == "window-without-batches"]
    assert opened and "too short for the rate" in opened[0].message
    # window 0 adds nothing to wait for: no such finding
    assert not [w for w in by[("closed:1:40", 0.0)].warnings
                if w.code == "window-without-batches"]


def test_raw_per_request_lists_are_capped_and_statistics_use_every_request(monkeypatch):
    import trtcheck.measure.serving.serve as serve_mod

    monkeypatch.setattr(serve_mod, "MAX_RAW_REQUESTS", 50)

    async def fn(batch):
        return list(batch)

    run = measure_serving(fn, windows_us=[0], max_batch_sizes=[8], loads=["burst:400"],
                          repeats=1, warmup_requests=0)
    rep = run.configs[0].repeats[0]
    assert rep.ok_count == 400 and rep.raw_stride == 8
    assert len(rep.latencies_ms) == 50 and len(rep.batch_sizes) == 50
    assert all(len(v) == 50 for v in rep.parts_ms.values())
    assert rep.latency.count == 400


def _serve_cli(tmp_path, extra, sig):
    import json
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "serve.json"
    proc = subprocess.Popen([sys.executable, "-m", "trtcheck", "serve", "--synthetic-curve",
                             "1:2,8:4", "--window-ms", "0,1,2,5", "--max-batch", "8",
                             "--load", "closed:4", "--duration-s", "3", "--repeats", "2",
                             "-o", str(out), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    line = ""
    while "repeat 1/2" not in line:  # the first run finished: interrupt the next ones
        line = proc.stderr.readline()
        assert line, "serve ended before its first run"
    time.sleep(0.2)
    proc.send_signal(getattr(signal, sig))
    _stdout, stderr = proc.communicate(timeout=60)
    data = json.loads(out.read_text())
    return proc.returncode, stderr, data


@pytest.mark.parametrize("sig,extra", [("SIGTERM", []), ("SIGINT", ["--http"])])
def test_interrupted_serve_writes_its_finished_configurations(tmp_path, sig, extra):
    pytest.importorskip("aiohttp")
    code, stderr, data = _serve_cli(tmp_path, extra, sig)
    assert code == 130, stderr
    assert "Traceback" not in stderr and "marked incomplete" in stderr
    assert data["incomplete"].startswith(f"interrupted by {sig}")
    assert len(data["serve"]["configs"]) < 4


def test_serving_gives_sigterm_back_to_the_commands_own_handler():
    """report runs the serving sweep inside its own SIGTERM handling: after the sweep,
    SIGTERM must still reach that handler (not the default, which kills at once)."""
    import signal

    from trtcheck.measure.interrupt import sigterm_as_interrupt

    async def fn(batch):
        return list(batch)

    with sigterm_as_interrupt():
        before = signal.getsignal(signal.SIGTERM)
        measure_serving(fn, windows_us=[0], max_batch_sizes=[2], loads=["burst:4"], repeats=1,
                        warmup_requests=0)
        assert signal.getsignal(signal.SIGTERM) is before


def test_missing_uvloop_leaves_no_coroutine_never_awaited(monkeypatch):
    """A library caller asking for uvloop without it installed gets EnvironmentProblem and
    no "coroutine ... was never awaited" RuntimeWarning (nothing was started)."""
    import gc
    import sys
    import warnings

    from trtcheck.errors import EnvironmentProblem

    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    be = SyntheticBackend("1:0.3,8:1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            measure_serving(be, use_uvloop=True, windows_us=[0], max_batch_sizes=[8],
                            loads=["burst:4"], repeats=1, warmup_requests=0)
        except EnvironmentProblem as exc:
            assert "uvloop is not installed" in exc.message
        else:
            pytest.fail("measure_serving(use_uvloop=True) ran without uvloop")
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)], \
        [str(w.message) for w in caught]


def _open_repeat(sent: int, rate_per_s: float, late_share: float = 0.0):
    from trtcheck.results.serve import ServeCounters, ServeRepeat

    counters = ServeCounters(submitted=sent, accepted=sent, rejected=0, execution_count=sent,
                             inference_count=sent, avg_batch_size=1.0,
                             batch_size_histogram={"1": sent}, completed=sent, failed=0,
                             cancelled_queued=0, cancelled_in_flight=0, batch_errors=0)
    return ServeRepeat(repeat=0, latencies_ms=[], parts_ms={}, batch_sizes=[],
                       outcomes={"ok": sent, "not_sent": 3}, latency=None, duration_s=1.0,
                       throughput_queries_per_s=rate_per_s, mean_batch_size=1.0,
                       max_batch_size=1, late_send_share=late_share,
                       achieved_send_rate_per_s=rate_per_s, counters=counters)


@pytest.mark.parametrize("arrival,sent,achieved,limited", [
    # a 1-s Poisson schedule at 150/s holds 134 arrivals about one time in ten: the
    # schedule's own sampling error, not the sender (3 standard errors: 0.9 - 3/sqrt(134))
    ("poisson", 134, 134.0, False),
    ("poisson", 134, 80.0, True),
    # a long Poisson run leaves little room: 10,000 sends, 0.87 of the rate is too slow
    ("poisson", 10000, 130.0, True),
    # a constant schedule has no sampling error
    ("constant", 134, 134.0, True),
    ("constant", 150, 149.0, False),
])
def test_generator_limited_allows_for_the_schedules_own_rate(arrival, sent, achieved,
                                                             limited):
    from trtcheck.measure.serving.loadgen import parse_load
    from trtcheck.measure.serving.serve import generator_validity

    shape = parse_load(f"open:150:{arrival}:{sent + 3}")
    marks = generator_validity(shape, [_open_repeat(sent, achieved)], "here")
    assert bool(marks) is limited
    if marks:
        assert marks[0].code == "generator-limited" and "sender reached" in marks[0].message


@pytest.mark.parametrize("lag_p99_ms,p99_ms,limited", [
    (2.57, 100.0, False),   # the 2-core demo: 13% late by 2.6 ms against a 100 ms p99
    (401.0, 1812.0, True),  # a starved client: the lag is 22% of the p99 it is part of
])
def test_late_sends_mark_the_run_only_when_their_lag_moves_the_latency(lag_p99_ms, p99_ms,
                                                                       limited):
    from trtcheck.measure.serving.loadgen import parse_load
    from trtcheck.measure.serving.serve import generator_validity
    from trtcheck.stats import summarize

    shape = parse_load("open:150:poisson:153")
    rep = _open_repeat(150, 150.0, late_share=0.13)
    rep.send_lag_p99_ms = lag_p99_ms
    rep.latency = summarize([p99_ms / 2] * 98 + [p99_ms] * 2)
    marks = generator_validity(shape, [rep], "here")
    assert bool(marks) is limited
    if limited:
        assert "13.0% of sends were late" in marks[0].message and "p99 send lag" in marks[0].message


def test_a_count_the_sending_bound_cut_short_is_a_warning():
    """``open:8:120`` needs 15 s; a run that sent 10 and 19 of them says how many were
    not sent and what the COUNT needs; a run that sent all says nothing."""
    from trtcheck.measure.serving.loadgen import parse_load
    from trtcheck.measure.serving.serve import config_result

    shape = parse_load("open:8:120")
    short = [_open_repeat(10, 8.0), _open_repeat(19, 8.0)]
    short[0].outcomes = {"ok": 10, "not_sent": 110}
    short[1].outcomes = {"ok": 19, "not_sent": 101}
    cfg = config_result(0.0, 8, shape, short)
    w = [x for x in cfg.warnings if x.code == "requests-not-sent"]
    assert len(w) == 1
    assert "110 of 120 requests were not sent" in w[0].message
    assert "110, 101 over 2 repeat(s)" in w[0].message and "about 15 s" in w[0].message
    assert "--duration-s" in w[0].remedy
    full = _open_repeat(120, 8.0)
    full.outcomes = {"ok": 120}
    assert not [x for x in config_result(0.0, 8, shape, [full]).warnings
                if x.code == "requests-not-sent"]
