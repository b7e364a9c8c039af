"""The one home of arrival schedules: the load generator and the simulator draw the same
times from the same seed."""

import numpy as np
import pytest

from trtcheck.analyze.advice.serve_compare import open_loop_schedule
from trtcheck.analyze.advice.simulator import make_arrivals
from trtcheck.arrivals import constant_arrivals, open_loop_offsets_s, poisson_arrivals
from trtcheck.errors import InputError
from trtcheck.measure.serving.loadgen import parse_load


@pytest.mark.parametrize("arrival", ["poisson", "constant"])
@pytest.mark.parametrize("seed", [0, 3, 41])
def test_load_generator_and_simulator_schedules_are_identical(arrival, seed):
    shape = parse_load(f"open:250:{arrival}:400")
    sent = shape.schedule_s(seed)
    simulated = open_loop_schedule(shape.rate_per_s, shape.count, arrival, seed)
    assert sent.dtype == simulated.dtype == np.float64
    assert np.array_equal(sent, simulated)
    assert sent[0] == 0.0 and np.all(np.diff(sent) >= 0)


def test_advise_process_uses_the_same_draws_one_gap_later():
    # advise's stationary process and the load generator draw the same exponential gaps;
    # only the first (replaced by 0 in the load generator) differs
    sim = make_arrivals("poisson", 500.0, 1000, seed=9)
    sent = open_loop_offsets_s("poisson", 500.0, 1000, seed=9)
    gaps = np.random.default_rng(9).exponential(1.0 / 500.0, size=1000)
    assert np.array_equal(np.diff(sim), np.diff(np.cumsum(gaps)))
    assert np.allclose(np.diff(sim)[1:], np.diff(sent)[1:], rtol=1e-9, atol=1e-12)
    assert sim[0] == gaps[0] and sent[0] == 0.0


def test_seeded_sequences_are_the_documented_draws():
    rng = np.random.default_rng(5)
    expected = np.cumsum(rng.exponential(1 / 200.0, size=50))
    assert np.array_equal(poisson_arrivals(200.0, 50, np.random.default_rng(5)), expected)
    assert np.array_equal(make_arrivals("poisson", 200.0, 50, seed=5), expected)
    assert constant_arrivals(4.0, 3).tolist() == [0.25, 0.5, 0.75]
    assert constant_arrivals(4.0, 3, first_at_zero=True).tolist() == [0.0, 0.25, 0.5]


def test_trace_offsets_are_cut_to_count():
    assert open_loop_offsets_s("trace", 0.0, 2, 0, (0.0, 0.1, 0.3)).tolist() == [0.0, 0.1]


@pytest.mark.parametrize("rate", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_rate_is_one_input_error(rate):
    with pytest.raises(InputError, match="arrival rate must be > 0"):
        open_loop_offsets_s("poisson", rate, 10, 0)
    with pytest.raises(InputError, match="arrival rate must be > 0"):
        constant_arrivals(rate, 10)
