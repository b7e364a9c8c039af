"""tune on a slow model whose 3 s closed loop ran each batch size a few times: a real
search of the demo ResNet-18 (ONNX Runtime wrapper) on the 2-core dev CPU at 10 req/s
(tests/data/tune-cpu-raw). Its closed loop of 8 clients ran sizes 1-8 one to four times
each (T(8) 276 ms), its target-rate run batch 1 (57 executions, T(1) 39.8 ms) and the
2-instance run at the rate 47.2 ms per batch of 1 (2 cores shared)."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from trtcheck.analyze import tune_plan as tp
from trtcheck.analyze.advice import Candidate
from trtcheck.results import results_from_json

RAW = (Path(__file__).resolve().parent / "data" / "tune-cpu-raw"
       / "dev-cpu-demo-resnet18-sparse-closed-loop.json.xz")


@pytest.fixture(scope="module")
def runs():
    """The search's three calibration runs: closed loop, target rate (2 repeats), the
    target rate at 2 instances."""
    tune = results_from_json(lzma.decompress(RAW.read_bytes()).decode()).tune
    assert tune.run_purposes[:3] == ["calibration", "calibration at the rate, with a repeat",
                                     "contention at the rate"]
    return tune.runs[:3]


def test_closed_loop_sizes_with_few_executions_still_give_t_of_b_its_slope(runs):
    """No closed-loop size reached 5 executions; with none of them, T(b) had a single
    point (T(1)) and the search predicted T(8) = T(1): a capacity of 403 req/s at max
    batch 8, where the closed loop itself carried 27.7 req/s."""
    closed = tp.pooled_batch_stats([runs[0]])
    assert max(n for n, _ in closed.values()) < 5
    c = tp.instance_curves(runs, 2)
    t8 = float(c.curve_1.t_ms(8))
    measured_t8 = closed[8][1] / closed[8][0]
    assert t8 == pytest.approx(measured_t8, rel=0.15)
    queueing, stall = tp.queueing_and_stalls(runs, 1, curves=c)
    s = tp.Search(queueing, c, 0.1, 0.2, 10.0, 500, 8, 2, stall=stall)
    p = tp.predict_one(s, Candidate(0.0, 8, 1))
    assert p.capacity_queries_per_s < 40.0


def test_a_closed_loop_slower_than_the_fitted_busy_t_of_b_sets_the_idle_fit_aside(runs):
    """The idle fit (x1 against x2 at the rate) gave a = 1.75, a busy T(1) of 19.2 ms,
    while the closed loop, whose instance is always busy, measured 41 ms: the fit is
    contradicted, none is applied, and the 2-instance run's slowdown is contention."""
    c = tp.instance_curves(runs, 2)
    assert c.idle_source == "contradicted" and c.idle_slowdown == 0.0
    assert c.idle_fitted > 1.0
    assert c.idle_closed_ratio > tp.IDLE_CLOSED_RATIO_MAX
    own = tp.pooled_batch_stats([runs[1]])[1]
    assert float(c.curve_1.t_ms(1)) == pytest.approx(own[1] / own[0], rel=0.05)
    assert c.factors[2] > 1.1
    note = tp.idle_clip_note(c)
    assert note is not None and note.startswith("no idle slowdown is applied: its fit (x2.")
    assert "x1.19 for 2 instances" in note


def test_the_latency_floor_is_the_lowest_over_the_runs(runs):
    """The closed loop's mean T(1) (41 ms under 8 clients) is no floor for a request at
    the target rate, whose fastest took less: every run bounds it."""
    closed = tp.latency_floor_ms(runs[0])
    low = tp.lowest_latency_floor_ms(runs)
    assert closed is not None and low is not None
    assert low[0] < closed[0]
    fastest = min(x for r in runs for c in r.configs for rep in c.repeats
                  for x in rep.latencies_ms)
    assert low[0] <= fastest
    assert tp.lowest_latency_floor_ms([]) is None
