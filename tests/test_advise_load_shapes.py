"""advise predicts the load shapes serve measures: bursts and closed loops, with a serial
or a parallel per-request overhead. The accuracy goals against measurement live in
``benchmarks/advise_load_shapes.py``; here: the behaviour, and that the embedded batcher
shows the same direction as the prediction."""

from __future__ import annotations

import pytest

from trtcheck.analyze.advice.advise import AdviseRequest, advise, what_if
from trtcheck.analyze.advice.curve import parse_curve_text
from trtcheck.analyze.advice.simulator import Candidate, ClosedLoop
from trtcheck.backends.synthetic import SyntheticBackend
from trtcheck.measure.serving.serve import measure_serving

LIGHT = "1:0.29,8:0.4,32:1.0"
"""The seed's light model (T(1) = 0.29 ms) behind its 12 ms serial Python layer."""


def test_burst_behind_a_serial_layer_loses_to_the_window_in_simulation_and_measurement():
    windows_us = (0.0, 100_000.0)
    backend = SyntheticBackend(LIGHT, spread=0.0, seed=0, mode="async")
    run = measure_serving(backend, windows_us=windows_us, max_batch_sizes=(32,),
                          loads=["burst:32"], repeats=1, per_request_overhead_ms=12.0,
                          warmup_requests=0)
    meas = sorted(run.configs, key=lambda c: c.window_us)
    req = AdviseRequest(curve=parse_curve_text(LIGHT), rate_per_s=None,
                        per_request_overhead_ms=12.0, serial_overhead=True, burst_size=32)
    pred = what_if(req, [Candidate(w, 32, 1) for w in windows_us])
    # the serial layer lets requests in at 83 req/s; the window only delays the last ones
    assert pred[0].throughput_queries_per_s == pytest.approx(1000 / 12, rel=0.01)
    assert pred[0].mean_batch == pytest.approx(1.0)
    assert pred[1].throughput_queries_per_s < pred[0].throughput_queries_per_s
    assert pred[1].p50_ms > pred[0].p50_ms
    assert meas[1].throughput_queries_per_s < meas[0].throughput_queries_per_s
    assert meas[1].p50_ms > meas[0].p50_ms
    assert meas[1].mean_batch_size > 1.5 and pred[1].mean_batch > 1.5


def test_a_burst_is_never_refused_and_advise_answers_no_batching():
    req = AdviseRequest(curve=parse_curve_text(LIGHT), rate_per_s=None,
                        per_request_overhead_ms=12.0, serial_overhead=True, burst_size=64)
    adv = advise(req)
    assert adv.recommendation.kind == "no-batching"
    assert adv.inputs.load == "burst:64"
    # the rules use the rate the requests reached the queue at: the serial layer's 83/s
    assert adv.inputs.arrival_rate_per_s == pytest.approx(1000 / 12, rel=0.01)
    assert all(p.stable for p in adv.candidates)
    assert "utilisation target" not in adv.recommendation.summary


def test_instant_burst_without_a_front_batches_from_the_backlog():
    req = AdviseRequest(curve=parse_curve_text("1:2,8:4,32:10"), rate_per_s=None,
                        burst_size=64)
    p1, p32 = what_if(req, [Candidate(0.0, 1, 1), Candidate(0.0, 32, 1)])
    assert p1.p99_ms == pytest.approx(64 * 2.0, rel=0.01)  # one at a time
    assert p32.mean_batch == pytest.approx(32.0)  # all 64 are queued at once: 2 x 32
    assert p32.p99_ms == pytest.approx(2 * 10.0, rel=0.01)
    assert p32.p99_ms < p1.p99_ms


def test_parallel_overhead_closed_loop_batches_from_the_backlog():
    # 16 clients, each waiting 4 ms outside the server: the queue holds the others
    req = AdviseRequest(curve=parse_curve_text("1:2,8:4,32:10"), rate_per_s=None,
                        per_request_overhead_ms=4.0, closed_loop=ClosedLoop(16, 400))
    p0, p1 = what_if(req, [Candidate(0.0, 1, 1), Candidate(0.0, 32, 1)])
    # batch 1 at 2 ms: at most 500 req/s; batching lets all 16 clients through together
    assert p0.throughput_queries_per_s == pytest.approx(500, rel=0.05)
    assert p1.throughput_queries_per_s > 1.5 * p0.throughput_queries_per_s
    assert p1.mean_batch > 4
    assert p0.requests == p1.requests == 400


def test_closed_loop_needs_clients_and_requests():
    from trtcheck.errors import InputError

    with pytest.raises(InputError):
        ClosedLoop(0, 100)
    with pytest.raises(InputError):
        ClosedLoop(4, 1)


def test_burst_wording_follows_the_burst_not_the_open_loop_rule():
    """A burst behind a serial layer: no closed-loop pitfall, queue words from the burst
    (a queue of N at t=0, the busy share from the simulation), capacity with the serial
    overhead, and the table's labels aligned; the answer stays "no batching"."""
    from cli_helper import invoke

    args = ["advise", "--latency-curve", LIGHT, "--per-request-overhead-ms", "12",
            "--serial-overhead", "--load", "burst:64", "--window-ms", "0,20,50,100",
            "--max-batch", "32"]
    texts = {}
    for fmt in ("text", "md"):
        res = invoke(*args, "--format", fmt)
        assert res.returncode == 0, res.stderr
        texts[fmt] = res.stdout
    for text in texts.values():
        assert "closed-loop load" not in text
        assert "no queue forms by itself" not in text
        assert "a burst of 64 is a queue of 64 at t=0" in text
        assert "a queue is there from the start" in text
        assert "No batching" in text
    text = texts["text"]
    assert "is busy 2.4% of the time" in text  # 83.3 q/s x 0.29 ms, from the simulated run
    assert "passes at most 83 req/s" in text and "83 req/s per process in all" in text
    header = next(ln for ln in text.splitlines() if "config" in ln and "P50 ms" in ln)
    rec = next(ln for ln in text.splitlines() if ln.startswith("  recommended ") and "W=" in ln)
    runner = next(ln for ln in text.splitlines() if ln.startswith("  runner-up ("))
    assert rec.index("W=") == runner.index("W=") == header.index("config")


def test_closed_loop_keeps_the_closed_loop_pitfall():
    req = AdviseRequest(curve=parse_curve_text(LIGHT), rate_per_s=None,
                        per_request_overhead_ms=12.0, serial_overhead=True,
                        closed_loop=ClosedLoop(8, 200))
    codes = {p.code for p in advise(req).pitfalls}
    assert "pitfall-load-shape" in codes and "pitfall-burst-load" not in codes
