"""The rounds of ``trtcheck tune`` (:func:`trtcheck.pipeline.tune.take_round`): a pick
measured outside its interval recalibrates and picks again; what the document shows
side by side (the pick and its runner-up, the why) comes from one round's predictions.
The live loop against a real tritonserver is in tests/test_tune_cli.py."""

from __future__ import annotations

from trtcheck.analyze.objectives import get_objective
from trtcheck.pipeline.tune import _why, passed_over_note, take_round
from trtcheck.results.tune import (TuneChoice, TuneInterval, TuneMeasured, TunePrediction,
                                   TuneResult)


def _pred(mb: int, capacity: float, p99_hi: float) -> TunePrediction:
    iv = TuneInterval(point_ms=p99_hi * 0.8, lo_ms=p99_hi * 0.6, hi_ms=p99_hi)
    return TunePrediction(window_us=1000.0, max_batch_size=mb, instances=1, stable=True,
                          utilisation=0.1, p50_ms=iv.point_ms, p99_ms=iv.point_ms, p50=iv,
                          p99=iv, throughput_queries_per_s=2.0, mean_batch=1.0,
                          capacity_queries_per_s=capacity, feasible=True)


def _choice(p: TunePrediction, rnd: int) -> TuneChoice:
    return TuneChoice(window_us=p.window_us, max_batch_size=p.max_batch_size,
                      instances=p.instances, predicted=p, round=rnd)


def test_the_same_pick_again_keeps_the_runner_up_of_its_own_round():
    """Round 2 recalibrated (T(b) grew) and picked the measured configuration again: the
    pick stays round 1's prediction, so the runner-up must be round 1's too. Before:
    "runner-up window 1 ms, max batch 2: ... capacity 46.28 against 66.74 req/s", round
    2's runner-up against round 1's pick (max batch 1 above max batch 2 in capacity)."""
    res = TuneResult(url="http://h:1", model="m", arrival_rate_per_s=2.0, slo_p99_ms=1000.0,
                     objective="fewest-instances", objective_rule="rule")
    pick1, runner1 = _pred(1, 66.74, 120.0), _pred(2, 80.12, 130.0)
    assert take_round(res, _choice(pick1, 1), runner1) is False
    res.pick.measured = TuneMeasured(  # type: ignore[union-attr]
        p50_ms=60.0, p99_ms=200.0, throughput_queries_per_s=2.0, mean_batch=1.0,
        requests=16, run=3, p50_inside=True, p99_inside=False)
    pick2, runner2 = _pred(1, 38.9, 180.0), _pred(2, 46.28, 190.0)
    res.predictions = [pick2, runner2]
    assert take_round(res, _choice(pick2, 2), runner2) is True
    assert res.pick is not None and res.pick.round == 1 and res.pick.predicted == pick1
    assert res.runner_up == runner1
    assert res.rounds[-1].measured == res.pick.measured  # judged as measured
    why = _why(res, get_objective("fewest-instances"), "instance")
    line = next(w for w in why if w.startswith("runner-up"))
    assert "capacity 80.12 against 66.74 req/s" in line, line
    assert any("round 2's recalibration" in w and "round 1's predictions" in w for w in why)
    assert "runner-up of that round" in res.notes[-1]


def test_the_rounds_provenance_stays_on_the_count_of_feasible_configurations():
    """With a max batch below the live model's, a line about it follows the count of
    feasible configurations; the round's provenance belongs to the count (on the demo
    it ended the max-batch line: "... would be refused (the export says so) (round 2's
    recalibration; ...)")."""
    res = TuneResult(url="http://h:1", model="m", arrival_rate_per_s=2.0, slo_p99_ms=1000.0,
                     objective="fewest-instances", objective_rule="rule",
                     original_config={"max_batch_size": 8})
    pick1, runner1 = _pred(1, 66.74, 120.0), _pred(2, 80.12, 130.0)
    take_round(res, _choice(pick1, 1), runner1)
    res.pick.measured = TuneMeasured(  # type: ignore[union-attr]
        p50_ms=60.0, p99_ms=200.0, throughput_queries_per_s=2.0, mean_batch=1.0,
        requests=16, run=3, p50_inside=True, p99_inside=False)
    res.predictions = [pick1, runner1]
    assert take_round(res, _choice(pick1, 2), runner1) is True
    why = _why(res, get_objective("fewest-instances"), "instance")
    count = next(w for w in why if "configurations predicted feasible" in w)
    assert count.endswith("(round 2's recalibration; the pick and runner-up are round 1's "
                          "predictions)"), why
    below = next(w for w in why if w.startswith("max batch 1 is below the live model's 8"))
    assert below.endswith("(the export says so)"), why


def test_a_new_pick_brings_its_own_runner_up():
    res = TuneResult(url="http://h:1", model="m", arrival_rate_per_s=2.0,
                     objective="fewest-instances")
    a, b, c = _pred(1, 60.0, 100.0), _pred(2, 70.0, 110.0), _pred(4, 90.0, 95.0)
    take_round(res, _choice(a, 1), b)
    assert take_round(res, _choice(c, 2), a) is False
    assert res.pick is not None and res.pick.predicted == c and res.runner_up == a
    why = _why(res, get_objective("fewest-instances"), "instance")
    assert not any("recalibration" in w for w in why)


def test_the_closest_configuration_is_probed_when_no_interval_meets_the_objective():
    """No interval within 20 ms: the candidate to measure is the one whose upper end
    comes closest among those whose point prediction meets the objective; a busier one
    than the utilisation limit, an excluded one (measured above it) and one whose point
    misses are never probed; without an objective nothing is."""
    from trtcheck.analyze.tune_plan import probe_candidate

    near = _pred(1, 60.0, 30.0)          # point 24, upper end 30
    nearer = _pred(2, 60.0, 24.0)        # point 19.2, upper end 24
    busy = _pred(4, 60.0, 22.0).model_copy(update={"utilisation": 0.95})
    missing = _pred(8, 60.0, 26.0).model_copy(update={"p99_ms": 21.0})
    preds = [near, nearer, busy, missing]
    assert probe_candidate(preds, 20.0) is nearer
    assert probe_candidate(preds, 20.0, exclude=[(1000.0, 2, 1)]) is None  # near: 24 > 20
    assert probe_candidate(preds, 25.0, exclude=[(1000.0, 2, 1)]) is missing  # 21 <= 25
    assert probe_candidate([near, missing], 22.0) is missing
    assert probe_candidate(preds, None) is None
    assert probe_candidate([busy], 30.0) is None


def test_a_probed_configuration_certified_by_the_next_round_becomes_the_pick():
    """Round 1 certified nothing and measured its closest candidate (within the
    objective); round 2, recalibrated with that run, certifies the same configuration:
    the measured run is the pick, now certified, with round 2's runner-up."""
    res = TuneResult(url="http://h:1", model="m", arrival_rate_per_s=2.0, slo_p99_ms=100.0,
                     objective="fewest-instances", objective_rule="rule")
    probe = _pred(1, 66.74, 120.0)
    probed = _choice(probe, 1).model_copy(update={"certified": False})
    probed.measured = TuneMeasured(p50_ms=50.0, p99_ms=90.0, throughput_queries_per_s=2.0,
                                   mean_batch=1.0, requests=16, run=3, p50_inside=True,
                                   p99_inside=True)
    res.rounds.append(probed)
    again, runner = _pred(1, 60.0, 98.0), _pred(2, 80.0, 99.0)
    res.predictions = [again, runner]
    assert take_round(res, _choice(again, 2), runner) is True
    assert res.pick is probed and res.pick.certified and res.runner_up == runner
    assert res.pick.measured is not None and res.pick.measured.p99_ms == 90.0


def test_the_probe_follows_the_users_objective():
    """Among the configurations whose point prediction meets 25 ms (no interval does):
    fewest-instances measures the 1-instance one though 2 instances come closer, the
    throughput objective the highest capacity, p99 the closest. Before, every objective
    measured the closest, and the pick then contradicted the objective its `why` named
    (2 instances under fewest-instances, where 1 instance had met the objective)."""
    from trtcheck.analyze.tune_plan import probe_candidate

    one = _pred(2, 60.0, 30.0)                                      # 1 instance, 24 / 30
    two = _pred(2, 120.0, 24.0).model_copy(update={"instances": 2})  # closer, 2 instances
    wide = _pred(8, 300.0, 28.0)                                    # 1 instance, capacity
    preds = [one, two, wide]
    assert probe_candidate(preds, 25.0, objective=get_objective("fewest-instances")) is wide
    assert probe_candidate([one, two], 25.0,
                           objective=get_objective("fewest-instances")) is one
    assert probe_candidate(preds, 25.0, objective=get_objective("throughput")) is wide
    assert probe_candidate(preds, 25.0, objective=get_objective("p99")) is two
    assert probe_candidate(preds, 25.0) is two


def test_a_configuration_measured_within_but_never_certified_is_explained():
    """Round 1 measured its closest candidate within the objective (no interval was);
    a later round certified another configuration, which is the pick. The note says why
    the measured one was passed over, with its numbers."""
    probe = _pred(1, 66.74, 320.0)
    probed = _choice(probe, 1).model_copy(update={"certified": False})
    probed.measured = TuneMeasured(p50_ms=50.0, p99_ms=225.0, throughput_queries_per_s=10.0,
                                   mean_batch=1.0, requests=120, run=4, p50_inside=True,
                                   p99_inside=True)
    note = passed_over_note(probed, "instance")
    assert note.startswith("window 1 ms, max batch 1, 1 instance measured P99 225 ms within "
                           "the objective in one run (round 1)"), note
    assert "[192, 320] ms was not within it" in note, note


def test_an_uncertified_pick_takes_its_rounds_predictions_and_runner_up():
    """Round 1 certified nothing and measured its closest candidate within a 40 ms
    objective; round 2, recalibrated, still certified nothing and found nothing more to
    measure. The measured configuration is the pick with round 1's predictions (round
    2's gave the same configuration other numbers: P99 325 ms [109, 1279] in tune.json
    beside 321 ms [91.5, 1477] printed) and, as runner-up, the candidate round 1 would
    have measured next. Before: round 2's predictions and no runner-up."""
    from trtcheck.pipeline.tune import take_uncertified

    res = TuneResult(url="http://h:1", model="m", arrival_rate_per_s=2.0, slo_p99_ms=40.0,
                     objective="p99", objective_rule="rule")
    probe, second, above = _pred(1, 60.0, 45.0), _pred(2, 60.0, 48.0), _pred(4, 60.0, 46.0)
    probed = _choice(probe, 1).model_copy(update={"certified": False})
    res.rounds.append(probed)
    res.predictions = [_pred(1, 61.0, 50.0), _pred(2, 61.0, 52.0)]  # round 2's
    take_uncertified(res, probed, [probe, second, above], [(1000.0, 4, 1)], 40.0, 0.9,
                     get_objective("p99"))
    assert res.pick is probed and res.predictions == [probe, second, above]
    assert res.runner_up == second  # not the pick, not the one measured above
    # nothing else a round would measure: no runner-up
    take_uncertified(res, probed, [probe], [], 40.0, 0.9, get_objective("p99"))
    assert res.runner_up is None
