"""The objectives registry (``tune --objective``, ``advise --objective``): each rule picks
by the P99 interval's upper end, and adding one is a registration."""

from __future__ import annotations

import pytest

from trtcheck.analyze.objectives import (
    OBJECTIVES, Objective, get_objective, p99_upper_ms, register,
)
from trtcheck.errors import InputError
from trtcheck.results.tune import TuneInterval, TunePrediction


def pred(w: float, b: int, n: int, p99: float, hi: float, cap: float,
         util: float = 0.5) -> TunePrediction:
    return TunePrediction(window_us=w, max_batch_size=b, instances=n, stable=True,
                          utilisation=util, p99_ms=p99,
                          p99=TuneInterval(point_ms=p99, lo_ms=p99 * 0.8, hi_ms=hi),
                          capacity_queries_per_s=cap)


PREDS = [pred(0, 4, 1, 9.0, 14.0, 500), pred(1000, 8, 1, 8.0, 12.0, 600),
         pred(0, 8, 2, 6.0, 7.0, 1200), pred(0, 4, 2, 6.1, 7.05, 1000)]


def test_the_three_objectives_are_registered():
    assert set(OBJECTIVES) == {"fewest-instances", "p99", "throughput"}


def test_fewest_instances_takes_one_instance_then_lowest_upper_end():
    p = get_objective("fewest-instances").pick(PREDS)
    assert (p.instances, p.max_batch_size, p.window_us) == (1, 8, 1000)


def test_p99_takes_the_lowest_upper_end_and_the_simpler_within_two_percent():
    p = get_objective("p99").pick(PREDS)
    assert (p.instances, p.max_batch_size) == (2, 4)  # 7.05 is within 2% of 7.0


def test_throughput_takes_the_highest_capacity():
    assert get_objective("throughput").pick(PREDS).capacity_queries_per_s == 1200


def test_feasible_is_decided_on_the_interval_not_the_point():
    obj = get_objective("fewest-instances")
    one = PREDS[1]  # point 8 ms, upper end 12 ms
    assert obj.feasible(one, slo_p99_ms=13.0, max_utilisation=0.9)
    assert not obj.feasible(one, slo_p99_ms=10.0, max_utilisation=0.9)
    assert p99_upper_ms(one) == 12.0
    assert not obj.feasible(pred(0, 4, 1, 1, 1, 1, util=0.95), slo_p99_ms=None,
                            max_utilisation=0.9)


def test_every_rule_is_described_with_the_objective():
    for obj in OBJECTIVES.values():
        assert "5 ms" in obj.describe(5.0)


def test_unknown_objective_is_one_input_error():
    with pytest.raises(InputError) as ei:
        get_objective("cheapest")
    assert "fewest-instances" in (ei.value.hint or "")


def test_an_objective_is_one_class_and_a_registration():
    class Widest(Objective):
        name = "widest-window"

        def rank(self, feasible):
            return sorted(feasible, key=lambda p: -p.window_us)

        def describe(self, slo_p99_ms):
            return "the longest window"

    try:
        register(Widest())
        assert get_objective("widest-window").pick(PREDS).window_us == 1000
        with pytest.raises(ValueError):
            register(Widest())
    finally:
        OBJECTIVES.pop("widest-window", None)
