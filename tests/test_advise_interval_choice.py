"""``advise --from live.json`` chooses on the P99 prediction intervals, as tune does: the
objective ranks the configurations by the upper end of their P99 interval, one whose
upper end is within the objective before any whose point alone is, and the rule is
stated (tests/gold/inputs/live.json: one instance, calibrated at about 200 req/s)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from trtcheck.analyze.advice import build_request, inputs_from_live
from trtcheck.analyze.advice.advise import AdviseRequest, advise
from trtcheck.analyze.objectives import TIE_ABS_MS, TIE_REL
from trtcheck.analyze.advice.curve import make_curve
from trtcheck.report.advise_text import advice_text
from trtcheck.results import load_results

LIVE = Path(__file__).resolve().parent / "gold" / "inputs" / "live.json"


def _advice(rate_per_s: float, slo_p99_ms: float | None, objective: str | None = None,
            **kw):
    curve, measured = inputs_from_live(load_results(LIVE), source=str(LIVE))
    req = build_request(curve, measured, rate_per_s=rate_per_s, slo_p99_ms=slo_p99_ms, **kw)
    return advise(replace(req, objective=objective) if objective else req)


def test_the_recommendation_has_the_lowest_p99_upper_end_within_the_objective():
    adv = _advice(300.0, 40.0)
    rec = adv.recommendation
    chosen = rec.prediction
    assert rec.interval_rule is not None and rec.stability is None
    hi = chosen.p99_interval_ms[1]
    assert hi <= 40.0
    rivals = [p for p in adv.candidates if p.instances == chosen.instances and p.stable
              and p.p99_interval_ms is not None and p.p99_interval_ms[1] <= 40.0]
    assert len(rivals) >= 2
    for p in rivals:  # none has a lower upper end beyond the tie
        assert hi <= p.p99_interval_ms[1] * (1 + TIE_REL) + TIE_ABS_MS
    assert not [f for f in adv.pitfalls if f.code == "p99-interval-above-objective"]
    assert "within the 40 ms objective" in rec.summary
    text = advice_text(adv)
    assert "Chosen on: the P99 prediction interval" in text and "Stability:" not in text


def test_an_objective_no_interval_meets_is_recommended_uncertified_with_a_warning():
    adv = _advice(300.0, 20.0)
    rec = adv.recommendation
    assert rec.prediction.p99_ms <= 20.0 < rec.prediction.p99_interval_ms[1]
    assert "recommended uncertified" in rec.interval_rule
    assert "above the 20 ms objective: uncertified" in rec.summary
    assert [f for f in adv.pitfalls if f.code == "p99-interval-above-objective"]


def test_the_runner_up_is_compared_on_its_interval_too():
    adv = _advice(300.0, 40.0)
    rec = adv.recommendation
    last = [n for n in adv.path if n.step == "batching"][-1]
    assert "upper end of the P99 prediction interval" in last.question
    assert last.value == rec.prediction.p99_interval_ms[1]
    assert rec.runner_up is not None and rec.runner_up.p99_interval_ms is not None
    assert "the choice is on the P99 interval's upper end" in last.conclusion


def test_another_objective_ranks_on_the_upper_end_across_instance_counts():
    adv = _advice(300.0, None, instances=[1, 2, 3], objective="p99")
    rec = adv.recommendation
    assert rec.interval_rule is not None and "lowest P99 interval upper end" in \
        rec.interval_rule
    hi = rec.prediction.p99_interval_ms[1]
    for p in adv.candidates:
        if p.stable and p.p99_interval_ms is not None:
            assert hi <= p.p99_interval_ms[1] * (1 + TIE_REL) + TIE_ABS_MS


def test_a_curve_without_a_live_calibration_is_chosen_on_the_point_with_replicas():
    curve = make_curve([(1, 2.0), (8, 4.0), (32, 10.0)], source="typed")
    adv = advise(AdviseRequest(curve=curve, rate_per_s=400.0, requests=1000, replicas=4))
    rec = adv.recommendation
    assert rec.interval_rule is None and rec.stability is not None
    assert rec.prediction.p99_interval_ms is None
    assert "Chosen on the P99 prediction interval" not in rec.summary


def test_no_replicas_are_run_when_the_intervals_decide():
    curve, measured = inputs_from_live(load_results(LIVE), source=str(LIVE))
    req = build_request(curve, measured, rate_per_s=300.0, slo_p99_ms=40.0)
    a, b = advise(req), advise(replace(req, replicas=0))
    assert a.recommendation.prediction.window_us == b.recommendation.prediction.window_us
    assert a.recommendation.prediction.max_batch_size == \
        b.recommendation.prediction.max_batch_size


def test_fewest_instances_adds_an_instance_when_no_interval_at_one_is_within():
    """At 300 req/s no one-instance upper end is within 30 ms, a two-instance one is: the
    rule (fewest instances among those whose upper end meets the objective) takes 2."""
    adv = _advice(300.0, 30.0)
    rec = adv.recommendation
    assert rec.prediction.instances == 2 and rec.certified is True
    assert rec.prediction.p99_interval_ms[1] <= 30.0
    ones = [p for p in adv.candidates if p.instances == 1 and p.p99_interval_ms]
    assert ones and min(p.p99_interval_ms[1] for p in ones) > 30.0
    assert "1-2 instances" in rec.interval_rule
    scale = next(n for n in adv.path if n.step == "scale-out")
    assert scale.answer == "yes" and "lowest P99 interval upper end" in scale.conclusion


def test_an_uncertified_recommendation_is_marked_in_the_record():
    rec = _advice(300.0, 20.0).recommendation
    assert rec.certified is False
    assert _advice(300.0, None).recommendation.certified is None


def test_the_runner_up_meets_the_objective_when_one_of_its_kind_does():
    adv = _advice(300.0, 30.0, instances=[1, 2, 3], objective="p99")
    run = adv.recommendation.runner_up
    assert run is not None and run.p99_interval_ms[1] <= 30.0


def test_the_throughput_objective_is_explained_by_capacity():
    adv = _advice(300.0, 100.0, objective="throughput")
    last = [n for n in adv.path if n.step == "batching"][-1]
    assert "throughput objective" in last.question
    assert "the choice is on capacity" in last.conclusion, last.conclusion
