"""The instance count ``advise`` says a live calibration's load needs follows the T(b)
multiplier it simulates more instances with (instances sharing a device): the count it
refuses with, the one its hint gives and the default search agree. Before, a sweep of
the demo ResNet-18 on 2 CPU cores (20.7 req/s per instance) said "at least 10 instances
are needed; hint: pass --instances 10" for 200 req/s, then refused --instances 10 and 11
the same way."""

from __future__ import annotations

import math

import pytest

from trtcheck.analyze.advice.advise import AdviseRequest, advise, instances_needed
from trtcheck.analyze.advice.curve import make_curve
from trtcheck.analyze.what_if_intervals import factor_at as instance_factor
from trtcheck.errors import InputError


def _live(rate: float, instances=None) -> AdviseRequest:
    """A live calibration at one instance: T(1) 40 ms, T(2) 48 ms (about 41.7 req/s per
    instance at batch 2) on a server allowing max batch 2."""
    return AdviseRequest(curve=make_curve([(1, 40.0), (2, 48.0)], source="Triton batch_stats"),
                         rate_per_s=rate, requests=1000, replicas=0, device="cpu",
                         batcher="triton", server_max_batch_size=2, instances=instances,
                         calibrated_instances=1)


def test_the_count_carries_the_rate_at_its_own_contention():
    req = _live(400.0)
    cap = 2 * 1000.0 / 48.0
    n = instances_needed(req, 400.0, cap)
    assert n * cap / instance_factor(req, n) >= 400.0  # carries it
    assert (n - 1) * cap / instance_factor(req, n - 1) < 400.0  # one fewer does not
    assert n > math.ceil(400.0 / cap)  # more than without contention (10)
    # without a live calibration there is no contention to follow
    typed = _live(400.0)
    typed.calibrated_instances = None
    assert instances_needed(typed, 400.0, cap) == math.ceil(400.0 / cap)


def test_the_refusal_names_a_count_that_is_then_accepted():
    with pytest.raises(InputError) as err:
        advise(_live(400.0, instances=[10]))
    need = int(str(err.value.message).split("at least ")[1].split()[0])
    assert f"pass --instances {need}" in str(err.value.hint)
    assert "as 10 instances share a device" in err.value.message
    adv = advise(_live(400.0, instances=[need]))
    assert adv.recommendation.prediction.instances == need
    assert adv.recommendation.prediction.stable
    # the default search reaches a count that keeps up, without --instances
    auto = advise(_live(400.0))
    assert auto.recommendation.prediction.stable
    assert auto.recommendation.prediction.instances >= need
