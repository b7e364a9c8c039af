"""``unstable-repeats``: the throughput of an open load is judged per request sent. Two
repeats of ``open:10`` for 3 s against the demo ResNet-18 on the 2-core dev CPU (a real
tune search, tests/data/tune-cpu-raw) served 7.9 and 11.0 queries/s because their
Poisson schedules spread 30 arrivals each over 3.8 and 2.7 s (achieved send rates 7.8 and
10.8 req/s): the server kept up with both."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from trtcheck.measure.serving.loadgen import parse_load
from trtcheck.measure.serving.serve import (
    UNSTABLE_REPEATS_SPREAD,
    config_result,
    repeat_throughput_spread,
)
from trtcheck.results import results_from_json

RAW = (Path(__file__).resolve().parent / "data" / "tune-cpu-raw"
       / "dev-cpu-demo-resnet18-sparse-closed-loop.json.xz")


@pytest.fixture(scope="module")
def repeats():
    tune = results_from_json(lzma.decompress(RAW.read_bytes()).decode()).tune
    reps = tune.runs[1].configs[0].repeats
    assert [round(r.throughput_queries_per_s, 1) for r in reps] == [7.9, 11.0]
    return reps


def test_an_open_load_is_judged_per_request_sent(repeats):
    assert repeat_throughput_spread("open", repeats) < 0.01
    raw = repeat_throughput_spread("closed", repeats)
    assert raw == pytest.approx((11.02 - 7.91) / 9.465, rel=0.01)
    assert raw > UNSTABLE_REPEATS_SPREAD


def test_the_schedules_count_makes_no_unstable_finding(repeats):
    cfg = config_result(2000.0, 8, parse_load("open:10"), list(repeats))
    assert "unstable-repeats" not in [w.code for w in cfg.warnings]
    assert "unstable" not in [f.code for f in cfg.validity]


def test_a_server_that_served_less_of_what_was_sent_is_unstable(repeats):
    """The same repeats with the second one's throughput cut by a third (the server
    answered fewer of the requests sent): the finding names the spread per request
    sent."""
    slow = repeats[1].model_copy(update={"throughput_queries_per_s":
                                         repeats[1].throughput_queries_per_s * 2 / 3})
    cfg = config_result(2000.0, 8, parse_load("open:10"), [repeats[0], slow])
    found = [w for w in cfg.warnings if w.code == "unstable-repeats"]
    assert len(found) == 1
    assert "per request sent" in found[0].message
    assert "unstable" in [f.code for f in cfg.validity]


def test_fewer_than_two_repeats_have_no_spread(repeats):
    assert repeat_throughput_spread("open", repeats[:1]) is None
