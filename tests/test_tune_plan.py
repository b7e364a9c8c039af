"""The analysis of ``trtcheck tune``: T(b) blended from the target-rate and closed-loop
runs, contention factors per instance count, and the prediction interval formula."""

from __future__ import annotations

import math

import numpy as np

from tests.factories import one_instance_tune_calibration

from trtcheck.analyze import tune_plan as tp


def test_blended_curve_keeps_target_rate_sizes_and_a_median_slope_above():
    open_stats = {1: (100, 300.0), 2: (50, 175.0)}  # T(1) 3, T(2) 3.5 ms
    # closed loop: a faster level, a steady 0.5 ms per sample, and one erratic size
    closed = {1: (20, 50.0), 8: (30, 7.0 * 30), 16: (40, 11.0 * 40), 26: (6, 60.0 * 6)}
    curve, top = tp.blended_curve(open_stats, closed, "test")
    assert top == 2
    assert curve.t_ms(1) == 3.0 and curve.t_ms(2) == 3.5
    # slopes from (2, 3.5): (7-3.5)/6 = 0.58, (11-3.5)/14 = 0.54, (60-3.5)/24 = 2.35;
    # the weighted median is 0.54 ms per sample: the erratic size does not drive it
    assert abs(curve.t_ms(26) - (3.5 + 24 * (7.5 / 14))) < 1e-6


def test_contention_interpolates_in_log_n_and_assumes_a_stated_factor():
    assert tp.contention_interp(1.3, 2, 4) == 1.15
    assert tp.contention_interp(1.3, 4, 4) == 1.3
    assert tp.assumed_contention(1) == 1.0 and tp.assumed_contention(2) == 1.25
    assert tp.assumed_contention(4) == 1.5


def test_interval_holds_the_point_and_widens_with_drift_and_fewer_requests():
    rng = np.random.default_rng(0)
    lat = rng.lognormal(1.0, 0.3, 8000)
    a = tp.interval(lat, 0.99, 2000, 0.05)
    b = tp.interval(lat, 0.99, 200, 0.05)
    c = tp.interval(lat, 0.99, 2000, 0.20)
    for iv in (a, b, c):
        assert iv.lo_ms <= iv.point_ms <= iv.hi_ms
    assert b.hi_ms - b.lo_ms > a.hi_ms - a.lo_ms
    assert c.hi_ms - c.lo_ms > a.hi_ms - a.lo_ms


def test_interval_covers_the_p99_of_runs_drawn_from_the_predicted_distribution():
    rng = np.random.default_rng(1)
    model = rng.lognormal(1.0, 0.4, 20000)
    iv = tp.interval(model, 0.99, 400, tp.DRIFT_FLOOR_REL)
    inside = sum(iv.holds(float(np.quantile(rng.choice(model, 400), 0.99)))
                 for _ in range(200))
    assert inside / 200 >= 0.9


def test_drift_is_a_robust_log_spread_with_a_floor_and_its_dof():
    assert tp.drift_from_pairs([]) == tp.Drift(tp.DRIFT_FLOOR_REL, 1)
    assert tp.relative_spread(10.0, 10.0) == 0.0
    # a pair 20% apart: |ln 1.2| / sqrt(2) / 0.6745 (median of one deviation)
    d = tp.drift_from_pairs([math.log(1.2)])
    assert abs(d.sd_log - math.log(1.2) / math.sqrt(2) / tp.MAD_NORMAL) < 1e-12 and d.dof == 1
    # one start-of-run transient among three pairs does not set the spread
    calm = tp.drift_from_pairs([0.02, 0.03, math.log(7.0)])
    assert calm.sd_log < 0.06 and calm.dof == 3
    # a confirming run's miss counts as one more deviation
    assert tp.drift_from_pairs([0.02], [0.5]).dof == 2
    # small samples inflate the interval: t(1) > t(3) > z
    assert tp.Drift(0.1, 1).t_quantile > tp.Drift(0.1, 3).t_quantile > tp.Z_INTERVAL


def test_interval_is_positive_however_large_the_drift():
    lat = np.random.default_rng(0).lognormal(1.5, 0.3, 5000)
    for sd in (0.05, 0.6, 1.2):
        iv = tp.interval(lat, 0.99, 500, sd, dof=1)
        assert 0 < iv.lo_ms < iv.point_ms < iv.hi_ms
        assert abs(math.log(iv.point_ms / iv.lo_ms) - math.log(iv.hi_ms / iv.point_ms)) < 1.0


def test_clustered_tail_widens_the_band():
    rng = np.random.default_rng(2)
    iid = rng.lognormal(1.0, 0.2, 10000)
    clustered = iid.copy()
    for start in rng.choice(9900, 5, replace=False):  # 5 stalls of 30 requests each
        clustered[start:start + 30] += 40.0
    assert tp.cluster_factor(iid, 0.99) < 1.5
    assert tp.cluster_factor(clustered, 0.99) > 10


class _Rep:
    def __init__(self, lat):
        self.latencies_ms = lat


def test_repeat_drifts_take_the_level_from_the_p50_pairs_and_p99_from_its_own():
    rng = np.random.default_rng(3)
    a = list(rng.lognormal(1.8, 0.1, 1000))
    b = list(rng.lognormal(1.8, 0.1, 1000))
    b[500:] = [x + 60.0 if i % 50 == 0 else x for i, x in enumerate(b[500:])]  # P99 only
    d50, d99 = tp.repeat_drifts([_Rep(a), _Rep(b)])
    assert d50.dof == d99.dof == 3 and d50.sd_log < 0.06
    # the stalls in the second half of b move P99 between a and b and between b's halves
    assert 3 * d50.sd_log < d99.sd_log == tp.tail_drift([_Rep(a), _Rep(b)]).sd_log


def test_the_p99_drift_is_capped():
    rng = np.random.default_rng(5)
    a, b = (list(rng.lognormal(1.8, 0.1, 1000)) for _ in range(2))
    a[500:] = [x + 60.0 if i % 50 == 0 else x for i, x in enumerate(a[500:])]
    b[:500] = [x + 60.0 if i % 50 == 0 else x for i, x in enumerate(b[:500])]
    assert tp.tail_drift([_Rep(a), _Rep(b)]).sd_log > tp.P99_DRIFT_MAX
    assert tp.repeat_drifts([_Rep(a), _Rep(b)])[1].sd_log == tp.P99_DRIFT_MAX
    note = tp.p99_spread_note(tp.tail_drift([_Rep(a), _Rep(b)]), 3.0)
    assert note is not None and "3 s run" in note and "0.35" in note
    assert tp.p99_spread_note(tp.Drift(0.2, 3), 3.0) is None


def test_a_calm_tail_keeps_the_p99_drift_near_the_level():
    rng = np.random.default_rng(4)
    a, b = (list(rng.lognormal(1.8, 0.1, 4000)) for _ in range(2))
    d50, d99 = tp.repeat_drifts([_Rep(a), _Rep(b)])
    assert d50.sd_log <= d99.sd_log < 0.1


def test_the_grid_searches_up_to_the_max_batch_at_every_instance_count():
    g = tp.grid(32, 2, (0.0, 1000.0))
    assert {c.max_batch_size for c in g} == {1, 2, 4, 8, 16, 32}
    assert {c.instances for c in g} == {1, 2}
    assert {c.window_us for c in g if c.max_batch_size == 1} == {0.0}
    assert max(c.max_batch_size for c in tp.grid(12, 1, (0.0,))) == 12


def test_device_and_sharing_come_from_instance_group():
    assert tp.device_of({"instance_group": [{"kind": "KIND_GPU", "gpus": [0], "count": 2}]}
                        ) == ("GPU", 1)
    assert tp.device_of({"instance_group": [{"kind": "KIND_CPU", "count": 2}]}) == ("CPU", 1)


def test_a_size_a_stall_made_slow_is_dropped():
    stats = {1: (400, 400 * 6.7), 2: (200, 200 * 7.2), 3: (9, 9 * 17.9), 4: (60, 60 * 8.1),
             5: (40, 40 * 8.6)}
    kept = tp.drop_stalled_sizes(stats)
    assert 3 not in kept and set(kept) == {1, 2, 4, 5}
    steady = {b: (50, 50 * (6.0 + 0.5 * b)) for b in range(1, 6)}
    assert tp.drop_stalled_sizes(steady) == steady


def test_stalls_leave_the_delay_body_and_are_drawn_per_execution():
    from trtcheck.analyze.advice.curve import make_curve
    from trtcheck.analyze.advice.live_calibration import LiveCalibration, LiveObservation

    rng = np.random.default_rng(4)
    client = rng.normal(6.0, 0.4, 3000)
    for start in rng.choice(2900, 4, replace=False):  # 4 stalls of ~40 requests
        client[start:start + 40] += 40.0
    delay = np.concatenate([rng.normal(1.0, 0.2, 194), np.full(6, 41.0)])
    obs = LiveObservation(window_us=1000.0, max_batch_size=8, preferred_batch_sizes=(),
                          instances=1, rate_per_s=300.0, batch_stats={1: (1000, 3000.0)},
                          queue_mean_ms=0.5, compute_mean_ms=3.0, server_request_mean_ms=4.0,
                          mean_batch=1.3, client_latencies_ms=client)
    cal = LiveCalibration(curve=make_curve([(1, 3.0), (8, 5.0)], source="test"),
                          request_delay_ms=tuple(rng.permutation(delay).tolist()),
                          per_batch_overhead_ms=0.0, observation=obs)
    body, stall = tp.split_stalls(cal)
    assert max(body.request_delay_ms) <= stall.fence_ms < 41.0  # the body has no stall
    assert 30.0 < stall.size_ms < 45.0
    assert 0.0 < stall.per_execution < 0.05
    assert 0.04 < stall.measured_share < 0.07  # 160 of 3000 requests
    series = stall.excess_series_ms()
    assert len(series) == tp.STALL_SERIES
    assert sum(x > 0 for x in series) == round(stall.per_execution * tp.STALL_SERIES)
    # without a tail there is nothing to split
    calm = LiveCalibration(curve=cal.curve, request_delay_ms=tuple(delay[:194].tolist()),
                           per_batch_overhead_ms=0.0, observation=obs)
    same, none = tp.split_stalls(calm)
    assert none.per_execution == 0.0 and same.request_delay_ms == calm.request_delay_ms


def test_the_p99_interval_starts_no_lower_than_the_p50_interval():
    """With a P99 drift far wider than the P50's, the P99 interval's lower end would
    fall below the P50 interval's (a run's P99 below its P50): it is raised to it."""
    from trtcheck.analyze.advice.simulator import Candidate

    cal, curves = one_instance_tune_calibration()
    s = tp.Search(cal, curves, 0.02, 1.0, 100.0, 300, 8, 1, drift_dof=3)
    p = tp.predict_one(s, Candidate(0.0, 1, 1))
    assert p.p99.lo_ms == p.p50.lo_ms < p.p50_ms <= p.p99_ms
    wide = math.exp(-tp.Drift(1.0, 3).half_width_log) * p.p99_ms
    assert wide < p.p50.lo_ms  # without the rule the P99 interval would start lower


def test_no_interval_starts_below_what_one_request_takes_alone():
    """A wide P50 drift (0.7 on the log scale, a busy host) would put the P50 interval's
    lower end far below the fastest request the calibration measured: it is raised to
    that floor, and the P99 interval with it."""
    from trtcheck.analyze.advice.simulator import Candidate

    cal, curves = one_instance_tune_calibration()
    free = tp.predict_one(tp.Search(cal, curves, 0.7, 0.7, 100.0, 300, 8, 1, drift_dof=3),
                          Candidate(0.0, 1, 1))
    assert free.p50.lo_ms < 1.0  # the drift term alone: far below one request's 2.5 ms
    held = tp.predict_one(tp.Search(cal, curves, 0.7, 0.7, 100.0, 300, 8, 1, drift_dof=3,
                                    floor_ms=2.5), Candidate(0.0, 1, 1))
    assert held.p50.lo_ms == held.p99.lo_ms == 2.5
    assert held.p50.hi_ms == free.p50.hi_ms and held.p50_ms == free.p50_ms


def test_an_overhead_fit_at_its_bound_is_named_in_a_note():
    """The per-execution overhead stops at T(1) of the run's own T(b) when the run queued
    more than the model explains (a python-backend model on a CPU host: 2.24 ms at T(1)
    2.24 ms, Triton's queue 2.16 ms against 2.0 ms simulated): tune says so."""
    from trtcheck.analyze.advice.curve import make_curve
    from trtcheck.analyze.advice.live_calibration import LiveCalibration, LiveObservation

    obs = LiveObservation(window_us=2000.0, max_batch_size=8, preferred_batch_sizes=(),
                          instances=1, rate_per_s=20.0, batch_stats={1: (100, 224.0)},
                          queue_mean_ms=2.16, compute_mean_ms=2.24, server_request_mean_ms=4.4,
                          mean_batch=1.0, client_latencies_ms=np.full(100, 5.3))
    curve = make_curve([(1, 2.24), (8, 6.5)], source="test")
    at = LiveCalibration(curve=curve, request_delay_ms=(0.0,), per_batch_overhead_ms=2.24,
                         observation=obs, check={"queue_mean_ms": 2.0,
                                                 "measured_queue_mean_ms": 2.16})
    note = tp.overhead_bound_note(at)
    assert note is not None and "upper bound, T(1) = 2.24 ms" in note
    assert "2.16 ms against 2 ms simulated" in note
    below = LiveCalibration(curve=curve, request_delay_ms=(0.0,), per_batch_overhead_ms=0.3,
                            observation=obs)
    assert tp.overhead_bound_note(below) is None


def test_a_count_without_its_own_run_is_named_interpolated_or_extrapolated():
    """ResNet-34 on an H200 (tune record): a closed loop and a target-rate run at one
    instance, a target-rate run at four. Counts 2-3 lie between the calibrated counts,
    5-6 beyond the largest; both are widened, neither is "measured"."""
    import json
    import lzma
    from pathlib import Path

    from trtcheck.results import results_from_json

    path = Path(__file__).resolve().parent / "data" / "tune-gpu-raw" / "h200-host-resnet34-tune.json.xz"
    doc = json.loads(lzma.decompress(path.read_bytes()))["tunes"][0]["tune_json"]
    runs = results_from_json(json.dumps(doc)).tune.runs[:3]
    assert [tp.run_instances(r) for r in runs] == [1, 1, 4]
    curves = tp.instance_curves(runs, 6)
    assert curves.sources == {1: "none", 2: "interpolated", 3: "interpolated", 4: "measured",
                              5: "extrapolated", 6: "extrapolated"}
    assert 1.0 < curves.factors[2] < curves.factors[3] < curves.factors[4] < curves.factors[5]
    assert set(tp.INFERRED_CONTENTION) == {"interpolated", "extrapolated", "assumed"}


def test_when_no_configuration_keeps_up_the_one_that_carries_most_is_named():
    from trtcheck.results.tune import TunePrediction

    def pred(mb, n, util, cap, stable):
        return TunePrediction(window_us=0.0, max_batch_size=mb, instances=n, stable=stable,
                              utilisation=util, capacity_queries_per_s=cap)

    busy = [pred(1, 1, 2.2, 27.0, False), pred(8, 2, 1.1, 55.0, False),
            pred(4, 2, 0.95, 63.0, True)]  # stable, but past the 90% headroom
    top = tp.none_keeps_up(busy, 0.9)
    assert top is not None and (top.max_batch_size, top.instances) == (4, 2)
    # one configuration that keeps up with headroom: the rate is not what stops a search
    assert tp.none_keeps_up([*busy, pred(8, 4, 0.5, 120.0, True)], 0.9) is None
    assert tp.none_keeps_up([], 0.9) is None
