"""``trtcheck tune``'s check of the target rate against the run length, before any live
run (no server is contacted: the URL refuses connections)."""

from __future__ import annotations

from cli_helper import invoke
from conftest import assert_one_line_error


def test_too_few_requests_per_run_asks_for_a_longer_run_within_the_options_range():
    res = invoke("tune", "--url", "http://127.0.0.1:1", "--model", "m", "--arrival-rate",
                 "0.1")
    line = assert_one_line_error(res, 2, "too few to calibrate from (at least 10)")
    assert "raise --duration-s to 100 or more" in line


def test_a_rate_no_run_length_can_calibrate_asks_for_a_higher_rate():
    """At 1e-9 req/s the hint said "raise --duration-s to 10000000000 or more", a value
    --duration-s refuses (at most 10000 s)."""
    res = invoke("tune", "--url", "http://127.0.0.1:1", "--model", "m", "--arrival-rate",
                 "1e-9")
    line = assert_one_line_error(res, 2, "too few to calibrate from")
    assert "even --duration-s 10000, its largest, is too short: tune a rate of at least " \
           "0.001 req/s" in line
    assert "raise --duration-s" not in line
