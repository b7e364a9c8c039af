"""The discrete-event simulator against closed-form cases, and the shared policy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trtcheck.analyze.advice.curve import make_curve, parse_curve_text
from trtcheck.analyze.advice.queueing import md1_mean_wait_ms, single_request_batch_share
from trtcheck.analyze.advice.simulator import (
    Candidate,
    ServiceModel,
    constant_arrivals,
    default_grid,
    make_arrivals,
    poisson_arrivals,
    read_trace,
    simulate,
    sweep,
)
from trtcheck.errors import InputError
from trtcheck.policy import BatchingPolicy, Decision


def _flat(ms: float) -> ServiceModel:
    return ServiceModel(make_curve([(1, ms)]), spread="none")


def test_md1_mean_wait_matches_pollaczek_khinchine():
    rate, s_ms = 300.0, 2.0  # rho = 0.6
    arr = poisson_arrivals(rate, 100_000, np.random.default_rng(7))
    p = simulate(BatchingPolicy(1, 0), 1, _flat(s_ms), arr, warmup_fraction=0.05)
    wq = p.mean_ms - s_ms
    assert wq == pytest.approx(md1_mean_wait_ms(rate, s_ms), rel=0.06)
    assert p.mean_batch == 1.0 and p.max_batch == 1
    # Little's law: mean queue = lambda * Wq
    assert p.mean_queue_len == pytest.approx(rate * wq / 1000, rel=0.06)
    assert p.utilisation == pytest.approx(0.6, rel=0.01)


def test_deterministic_arrivals_without_window_never_queue():
    arr = constant_arrivals(100.0, 500)  # 10 ms apart, service 4 ms
    p = simulate(BatchingPolicy(8, 0), 1, _flat(4.0), arr)
    assert p.p50_ms == pytest.approx(4.0) and p.p99_ms == pytest.approx(4.0)
    assert p.mean_batch == 1.0 and p.max_queue_len == 1
    assert p.throughput_queries_per_s == pytest.approx(500 / (4.99 + 0.004), rel=1e-6)


def test_deterministic_arrivals_with_window_form_exact_batches():
    # 1 ms apart, window 2.5 ms from the oldest: arrivals at k, k+1, k+2 ms go together
    arr = constant_arrivals(1000.0, 300)
    p = simulate(BatchingPolicy(64, 2500), 1, _flat(0.1), arr)
    assert p.mean_batch == pytest.approx(3.0) and p.max_batch == 3
    assert p.dispatch_reasons == {"window-expired": 100}
    # waits 2.5, 1.5, 0.5 ms, then 0.1 ms execution
    assert p.mean_ms == pytest.approx(1.6, abs=1e-9)
    assert p.p50_ms == pytest.approx(1.6, abs=1e-9)


def test_full_batch_dispatches_before_the_window():
    arr = constant_arrivals(1000.0, 400)
    p = simulate(BatchingPolicy(4, 50_000), 1, _flat(0.1), arr)
    assert p.mean_batch == 4.0 and p.dispatch_reasons == {"full": 100}
    assert p.p99_ms < 3.2  # oldest waited 3 ms for the 4th, never the 50 ms window


def test_window_fill_probability_matches_poisson():
    rate, w_ms = 100.0, 2.0
    arr = poisson_arrivals(rate, 40_000, np.random.default_rng(3))
    p = simulate(BatchingPolicy(64, w_ms * 1000), 1, _flat(0.01), arr)
    assert p.single_request_batch_share == pytest.approx(
        single_request_batch_share(rate, w_ms), abs=0.015)
    assert p.mean_batch == pytest.approx(1 + rate * w_ms / 1000, rel=0.03)


def test_timer_slack_delays_window_dispatch():
    arr = constant_arrivals(10.0, 50)  # sparse: every window expires alone
    base = simulate(BatchingPolicy(8, 2000), 1, _flat(1.0), arr)
    late = simulate(BatchingPolicy(8, 2000),
                    1, ServiceModel(make_curve([(1, 1.0)]), timer_slack_us=700, spread="none"),
                    arr)
    assert base.p50_ms == pytest.approx(3.0) and late.p50_ms == pytest.approx(3.7)


def test_serial_ingress_is_a_single_server_in_front():
    # ingress 1 ms per request, arrivals 0.5 ms apart in a burst of 10 then nothing:
    arr = np.concatenate([np.arange(10) * 0.0005, [1.0]])
    sv = ServiceModel(make_curve([(1, 0.001)]), ingress_per_request_us=1000, spread="none")
    p = simulate(BatchingPolicy(1, 0), 4, sv, arr)
    # request k leaves the ingress at (k+1) ms; its latency is (k+1) - 0.5k ms (+0.001)
    assert p.max_batch == 1
    assert p.mean_ms == pytest.approx((sum((k + 1) - 0.5 * k for k in range(10)) + 1) / 11
                                      + 0.001, rel=1e-6)


def test_unstable_configuration_is_flagged_not_simulated():
    arr = poisson_arrivals(1000, 1000, np.random.default_rng(0))
    p = simulate(BatchingPolicy(1, 0), 1, _flat(2.0), arr)
    assert not p.stable and p.p99_ms is None and p.utilisation == pytest.approx(2.0, rel=0.05)


def test_several_instances_share_the_queue():
    arr = poisson_arrivals(1500, 20_000, np.random.default_rng(1))
    one = simulate(BatchingPolicy(1, 0), 1, _flat(2.0), arr)
    four = simulate(BatchingPolicy(1, 0), 4, _flat(2.0), arr)
    assert not one.stable and four.stable
    assert four.utilisation == pytest.approx(0.75, rel=0.02)
    assert four.throughput_queries_per_s == pytest.approx(1500, rel=0.03)


def test_simulator_calls_the_shared_policy_for_every_decision(monkeypatch):
    calls: list[tuple[int, float]] = []
    real = BatchingPolicy.decide

    def spy(self, queued, oldest, now):
        calls.append((queued, now))
        return real(self, queued, oldest, now)

    monkeypatch.setattr(BatchingPolicy, "decide", spy)
    arr = poisson_arrivals(2000, 2000, np.random.default_rng(2))
    p = simulate(BatchingPolicy(8, 1000), 1, _flat(1.0), arr)
    assert calls and sum(p.dispatch_reasons.values()) == p.batches
    assert len(calls) >= p.batches

    # a policy that always dispatches exactly one request: the simulator obeys it
    def one_at_a_time(self, queued, oldest, now):
        return Decision(1, None, "forced") if queued else Decision(0, None, "empty")

    monkeypatch.setattr(BatchingPolicy, "decide", one_at_a_time)
    p = simulate(BatchingPolicy(8, 1000), 1, _flat(0.1), arr)
    assert p.mean_batch == 1.0 and p.dispatch_reasons == {"forced": 2000}


def test_empirical_spread_raises_the_tail_but_not_the_median():
    rng = np.random.default_rng(5)
    samples = {1: (1.0 + 0.3 * rng.standard_normal(2000)).clip(0.5).tolist()}
    c = make_curve([(1, float(np.median(samples[1])))], samples_ms=samples)
    arr = constant_arrivals(100.0, 3000)
    flat = simulate(BatchingPolicy(1, 0), 1, ServiceModel(c, spread="none"), arr)
    emp = simulate(BatchingPolicy(1, 0), 1, ServiceModel(c, spread="empirical"), arr)
    logn = simulate(BatchingPolicy(1, 0), 1, ServiceModel(c, spread="lognormal"), arr)
    assert emp.p50_ms == pytest.approx(flat.p50_ms, rel=0.03)
    assert emp.p99_ms == pytest.approx(float(np.percentile(samples[1], 99)), rel=0.05)
    assert logn.p99_ms > flat.p99_ms * 1.3


def test_sweep_uses_common_random_numbers_and_is_deterministic():
    c = parse_curve_text("1:1,8:2,32:5")
    sv = ServiceModel(c)
    arr = make_arrivals("poisson", 2000, 3000, seed=4)
    grid = default_grid(32, [1])
    a = sweep(grid, sv, arr, seed=4)
    b = sweep(grid, sv, arr, seed=4)
    assert [x.p99_ms for x in a] == [x.p99_ms for x in b]
    assert len(grid) == 1 + 5 * 10  # b=1 once; 2,4,8,16,32 x 10 windows
    assert grid[0] == Candidate(0.0, 1, 1)


def test_arrivals_and_traces(tmp_path):
    arr = make_arrivals("poisson", 500, 20_000, seed=1)
    assert (len(arr) - 1) / (arr[-1] - arr[0]) == pytest.approx(500, rel=0.03)
    assert np.all(np.diff(arr) > 0)
    const = make_arrivals("constant", 4, 4)
    assert const.tolist() == [0.25, 0.5, 0.75, 1.0]
    f = tmp_path / "t.txt"
    f.write_text("# times\n0.5\n0.1, x\n0.3\n")
    assert read_trace(f).tolist() == pytest.approx([0.0, 0.2, 0.4])
    scaled = make_arrivals(f"trace:{f}", 10.0, 0)
    assert scaled[-1] == pytest.approx(0.2)
    for bad, needle in [("1\n", "at least 2"), ("1\n1\n", "same instant"), ("x\n2\n", "not a time")]:
        f.write_text(bad)
        with pytest.raises(InputError, match=needle):
            read_trace(f)
    with pytest.raises(InputError, match="not found"):
        read_trace(tmp_path / "missing.txt")
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(InputError, match="not a text file"):
        read_trace(tmp_path / "bin.txt")
    f.write_text("[0.2, 0.0, 0.1]")  # the JSON form serve accepts is accepted here too
    assert read_trace(f).tolist() == pytest.approx([0.0, 0.1, 0.2])
    with pytest.raises(InputError, match="unknown arrival"):
        make_arrivals("bursty", 1.0, 10)
    with pytest.raises(InputError, match="> 0"):
        make_arrivals("poisson", 0.0, 10)
    assert math.isfinite(float(arr[-1]))


def test_negative_measured_excess_never_runs_time_backwards():
    """A serving run faster than a disturbed bench gives a negative per-execution excess;
    the advice and the predicted-vs-measured model must still work (found by `report --demo`
    on a loaded machine: mean excess -26.8 ms against T(1) = 8 ms)."""
    from trtcheck.analyze.advice.advise import advise
    from trtcheck.analyze.advice.curve import parse_curve_text
    from trtcheck.analyze.advice.inputs import build_request
    from trtcheck.analyze.advice.serve_compare import service_from_advice

    curve = parse_curve_text("1:8,2:16,4:32,8:61")
    # moderately negative (faster serving executions than the bench medians): kept, and the
    # simulator clamps each execution at zero time
    req = build_request(curve, {"batch_excess_ms": (-1.0, -2.0, -9.0), "source": "serve"},
                        rate_per_s=50.0)
    adv = advise(req)
    p = adv.recommendation.prediction
    assert p.p50_ms >= 0 and p.p99_ms >= p.p50_ms
    # a negative mean excess is a fit artefact: clamped to 0 (spread kept), with a note
    assert adv.inputs.per_batch_overhead_ms == 0.0
    assert any("clamped to 0 ms" in n for n in adv.curve.notes)
    service = service_from_advice(adv)
    assert service.per_batch_overhead_ms == 0.0
    assert service.mean_batch_excess_ms == pytest.approx(0.0, abs=1e-9)
    # implausibly negative (mean below -T(1)/2): the bench was disturbed; excess ignored
    req = build_request(curve, {"batch_excess_ms": (-40.0, -20.0, -30.0), "source": "serve"},
                        rate_per_s=50.0)
    assert req.batch_excess_ms == () and "disturbed" in req.notes[0]
    adv = advise(req)
    assert any("disturbed" in n for n in adv.curve.notes)
