"""The idle slowdown: an execution on an instance that was idle runs slower (simulated in
Triton's batcher, fitted by ``trtcheck tune`` from target-rate runs at two instance
counts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trtcheck.analyze import tune_plan as tp
from trtcheck.analyze.advice.curve import make_curve
from trtcheck.analyze.advice.live_calibration import LiveObservation
from trtcheck.analyze.advice.simulator import ServiceModel, make_arrivals, simulate
from trtcheck.errors import InputError
from trtcheck.policy import BatchingPolicy


def _service(t_ms: float, a: float, tau_ms: float = 3.0) -> ServiceModel:
    return ServiceModel(make_curve([(1, t_ms), (8, t_ms)]), spread="none", batcher="triton",
                        idle_slowdown=a, idle_tau_ms=tau_ms)


def test_sparse_requests_run_slow_and_a_backlog_runs_at_busy_speed():
    policy = BatchingPolicy(max_batch_size=1, max_queue_delay_us=0.0)
    # 100 ms apart: every execution follows a long idle gap -> (1 + a) x T
    ex: list[tuple[int, float]] = []
    p = simulate(policy, 1, _service(2.0, 0.5), np.arange(50) * 0.1, executions_out=ex)
    assert all(abs(f - 1.5) < 1e-9 for _, f in ex)
    assert abs(p.p50_ms - 3.0) < 1e-6
    # 1 ms apart with T = 2 ms: a queue forms, each execution starts as the last ends
    ex = []
    simulate(policy, 1, _service(2.0, 0.5), np.arange(200) * 0.001, executions_out=ex,
             warmup_fraction=0.1)
    assert all(f == 1.0 for _, f in ex)


def test_the_instance_idle_longest_takes_the_next_batch():
    # 2 instances, a request every 3 ms, T = 2 ms: the instances take turns, so each is
    # idle 6 ms - its own execution; the factor solves f = 1 + a (1 - exp(-(6 - 2f)/tau))
    a, tau = 0.4, 3.0
    policy = BatchingPolicy(max_batch_size=1, max_queue_delay_us=0.0)
    ex: list[tuple[int, float]] = []
    simulate(policy, 2, _service(2.0, a, tau), np.arange(400) * 0.003, executions_out=ex,
             warmup_fraction=0.1)
    f = 1.0
    for _ in range(100):
        f = 1.0 + a * (1.0 - math.exp(-(6.0 - 2.0 * f) / tau))
    assert all(abs(g - f) < 1e-9 for _, g in ex)


def test_without_the_slowdown_nothing_changes():
    policy = BatchingPolicy(max_batch_size=8, max_queue_delay_us=1000.0)
    arr = make_arrivals("poisson", 300.0, 3000, 0)
    p0 = simulate(policy, 2, _service(2.0, 0.0), arr)
    p1 = simulate(policy, 2, ServiceModel(make_curve([(1, 2.0), (8, 2.0)]), spread="none",
                                          batcher="triton"), arr)
    assert (p0.p50_ms, p0.p99_ms, p0.mean_batch) == (p1.p50_ms, p1.p99_ms, p1.mean_batch)


def test_bad_idle_parameters_are_refused():
    curve = make_curve([(1, 2.0), (8, 3.0)])
    with pytest.raises(InputError, match="idle slowdown"):
        ServiceModel(curve, batcher="triton", idle_slowdown=-0.1)
    with pytest.raises(InputError, match="time constant"):
        ServiceModel(curve, batcher="triton", idle_slowdown=0.2, idle_tau_ms=0.0)
    with pytest.raises(InputError, match="Triton's batcher only"):
        ServiceModel(curve, idle_slowdown=0.2)


def _observed(instances: int, a: float, rate: float, seed: int) -> LiveObservation:
    """A target-rate run as Triton's statistics would show it, simulated with a known
    slowdown: ``batch_stats`` sums each execution's T(b) x its idle factor."""
    curve = make_curve([(1, 2.0), (8, 4.1)])
    policy = BatchingPolicy(max_batch_size=8, max_queue_delay_us=1000.0)
    ex: list[tuple[int, float]] = []
    lat: list[float] = []
    p = simulate(policy, instances, ServiceModel(curve, spread="none", batcher="triton",
                                                 idle_slowdown=a,
                                                 idle_tau_ms=tp.IDLE_TAU_MS),
                 make_arrivals("poisson", rate, 6000, seed), seed=seed, warmup_fraction=0.1,
                 rate_per_s=rate, executions_out=ex, latencies_out=lat)
    stats: dict[int, list[float]] = {}
    for b, f in ex:
        s = stats.setdefault(b, [0, 0.0])
        s[0] += 1
        s[1] += float(curve.t_ms(b)) * f
    return LiveObservation(
        window_us=1000.0, max_batch_size=8, preferred_batch_sizes=(), instances=instances,
        rate_per_s=rate, batch_stats={b: (int(n), ms) for b, (n, ms) in stats.items()},
        queue_mean_ms=0.0, compute_mean_ms=0.0, server_request_mean_ms=0.0,
        mean_batch=float(p.mean_batch or 1.0), client_latencies_ms=np.asarray(lat))


@pytest.mark.parametrize("true_a", [0.0, 0.3, 0.8])
def test_the_fit_recovers_the_slowdown_from_runs_at_two_instance_counts(true_a):
    low, high = _observed(1, true_a, 250.0, 3), _observed(4, true_a, 250.0, 4)
    a, residual = tp.fit_idle_slowdown(low, high, seed=0)
    assert abs(a - true_a) < 0.12
    assert abs(residual - 1.0) < 0.03 or (true_a == 0.0 and residual <= 1.03)


def test_a_slowdown_the_runs_cannot_show_stays_contention():
    # the high run 2.5x slower at every size than any idle share explains: the fit
    # stops at its bound and leaves the rest as a ratio above 1
    low = _observed(1, 0.0, 250.0, 3)
    high = _observed(4, 0.0, 250.0, 4)
    slow = {b: (n, ms * 5.0) for b, (n, ms) in high.batch_stats.items()}
    a, residual = tp.fit_idle_slowdown(low, LiveObservation(**{**high.__dict__,
                                                               "batch_stats": slow}))
    assert a == tp.IDLE_SLOWDOWN_MAX and residual > 1.0


def _curves(a: float, residual: float, source: str = "fitted") -> tp.InstanceCurves:
    return tp.InstanceCurves(make_curve([(1, 2.0), (8, 4.1)]), {1: 1.0, 4: 1.3},
                             {1: "none", 4: "measured"}, 0.15, "measured", idle_slowdown=a,
                             idle_source=source, idle_residual=residual,
                             idle_high_instances=4)


def test_a_fit_on_its_upper_bound_is_set_aside_and_said_in_the_notes_and_the_text():
    """A slowdown fitted at IDLE_SLOWDOWN_MAX did not explain the slower run: it is set
    aside (no idle slowdown, source "rejected") and tune says so, in a note and in the
    calibration text. Before, it was applied clipped: on a 2-core CPU, the demo
    ResNet-18's T(1) came out 19.4 ms (a closed loop measured 37.8 ms per batch-1
    execution) and tune predicted 103 req/s for 2 instances that carried 46."""
    from trtcheck.report.tune_text import tune_text
    from trtcheck.results.tune import TuneCalibration, TuneResult

    low = _observed(1, 0.0, 250.0, 3)
    high = _observed(4, 0.0, 250.0, 4)
    slow = {b: (n, ms * 5.0) for b, (n, ms) in high.batch_stats.items()}
    a, residual = tp.fit_idle_slowdown(low, LiveObservation(**{**high.__dict__,
                                                               "batch_stats": slow}))
    assert a == tp.IDLE_SLOWDOWN_MAX
    note = tp.idle_clip_note(_curves(0.0, residual, "rejected"))
    assert note is not None
    assert note.startswith("no idle slowdown is applied: its fit reached the upper bound "
                           f"{tp.IDLE_SLOWDOWN_MAX:g}")
    assert "4-instance run" in note and f"x{residual:.3g}" in note
    # the factor that is applied, so the note and the per-count T(b) say one thing
    assert "the whole ratio is the contention factor, x1.3 for 4 instances" in note
    assert tp.idle_clip_note(_curves(0.8, 1.0)) is None  # a fit inside the bound
    assert tp.idle_clip_note(_curves(0.0, 1.0)) is None

    def text(a: float, source: str) -> str:
        cal = TuneCalibration(idle_slowdown=a, idle_tau_ms=tp.IDLE_TAU_MS, idle_source=source)
        return tune_text(TuneResult(url="http://h:1", model="m", arrival_rate_per_s=2.0,
                                    objective="p99", calibration=cal))

    assert "idle slowdown: none (its fit reached the upper bound 2 without explaining the " \
           "run at more instances" in text(0.0, "rejected")
    assert "idle slowdown 0.8 (fitted):" in text(0.8, "fitted") and "none" not in text(
        0.8, "fitted").split("idle slowdown", 1)[1].split("\n", 1)[0]
    # a document written before the fit was set aside still reads as clipped
    assert "idle slowdown 2 (fitted, clipped at its upper bound 2" in text(2.0, "fitted")


def test_a_search_whose_fit_hit_the_bound_keeps_the_measured_t_of_b():
    """The demo ResNet-18 through the ONNX Runtime wrapper on a 2-core CPU (a recorded
    tune search at 10 req/s: closed loop and target-rate runs at 1 instance, a
    target-rate run at 2). The 2-instance run was slower than any idle share explains:
    the fit is set aside, T(1) stays the target-rate runs' own (about 41 ms, where the
    clipped fit made it 19.4 ms) and the whole ratio is the contention factor, so 2
    instances at max batch 1 carry at most what two instances at the measured T(1) do."""
    import lzma
    from pathlib import Path

    from trtcheck.analyze.advice import Candidate
    from trtcheck.results import results_from_json

    raw = Path(__file__).resolve().parent / "data" / "tune-cpu-raw" / \
        "dev-cpu-demo-resnet18-10rps.json.xz"
    tune = results_from_json(lzma.decompress(raw.read_bytes()).decode()).tune
    runs = [r for r, why in zip(tune.runs, tune.run_purposes) if why != "confirm"]
    assert [tp.run_instances(r) for r in runs] == [1, 1, 2]
    c = tp.instance_curves(runs, 2)
    assert c.idle_source == "rejected" and c.idle_slowdown == 0.0
    own = tp.pooled_batch_stats([runs[1]])[1]
    t1 = own[1] / own[0]  # the target-rate run's mean batch-1 execution, ms
    assert c.curve_1.points()[0][1] == pytest.approx(t1, rel=0.1)
    assert c.factors[2] > 1.1
    queueing, stall = tp.queueing_and_stalls(runs, 1, curves=c)
    s = tp.Search(queueing, c, 0.1, 0.2, 10.0, 500, 8, 2, stall=stall)
    p = tp.predict_one(s, Candidate(0.0, 1, 2))
    assert p.capacity_queries_per_s <= 2 * 1000.0 / t1


def test_the_slowdown_scales_compute_and_the_overhead_follows_the_responses():
    """A request every 100 ms (every execution after a long idle gap), T = 1 ms,
    slowdown 2 (x3), 2 ms per execution outside compute: a request takes 3 ms (the
    overhead is the instance's work after the responses left, and is not slowed). Before,
    the slowdown scaled the overhead too and the overhead sat in each request's latency:
    9 ms, where a python-backend model on a CPU host measured P50 3.4 ms for the 9.0 ms
    that tune predicted."""
    policy = BatchingPolicy(max_batch_size=1, max_queue_delay_us=0.0)
    sv = ServiceModel(make_curve([(1, 1.0), (8, 1.0)]), spread="none", batcher="triton",
                      idle_slowdown=2.0, per_batch_overhead_ms=2.0)
    p = simulate(policy, 1, sv, np.arange(50) * 0.1)
    assert abs(p.p50_ms - 3.0) < 1e-6 and abs(p.p99_ms - 3.0) < 1e-6


def test_the_overhead_after_the_responses_holds_the_instance():
    """Requests at 0 and 1.5 ms, T = 1 ms, 2 ms per execution outside compute: the first
    answers at 1 ms, the instance is free at 3 ms, so the second waits 1.5 ms and
    answers at 4 ms (2.5 ms)."""
    policy = BatchingPolicy(max_batch_size=1, max_queue_delay_us=0.0)
    sv = ServiceModel(make_curve([(1, 1.0), (8, 1.0)]), spread="none", batcher="triton",
                      per_batch_overhead_ms=2.0)
    lat: list[float] = []
    simulate(policy, 1, sv, np.array([0.0, 0.0015]), finite=True, latencies_out=lat)
    assert np.allclose(sorted(lat), [1.0, 2.5])
