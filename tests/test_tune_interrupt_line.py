"""The line an interrupted ``trtcheck tune`` ends with
(:func:`trtcheck.pipeline.tune.interrupted_line`)."""

from __future__ import annotations

from trtcheck.pipeline.tune import TuneOutcome, interrupted_line
from trtcheck.results.tune import TuneResult


def _outcome(restored: bool) -> TuneOutcome:
    res = TuneResult(url="http://h:1", model="m", arrival_rate_per_s=10.0, objective="p99",
                     restored=restored)
    return TuneOutcome(result=res, incomplete="interrupted by SIGINT during live run 2 "
                                              "(contention at the rate); 1 live run(s) "
                                              "finished and kept")


def test_a_restored_model_is_said_to_be_back():
    line = interrupted_line(_outcome(True), "m", "t.json")
    assert line.endswith("finished and kept; the original configuration is loaded again")


def test_a_model_left_on_another_configuration_is_a_warning_with_the_way_back():
    line = interrupted_line(_outcome(False), "m", "t.json")
    assert "warning: m's original configuration is not loaded again: unload m, then load " \
           "it with the repository's config, or with tune.original_config from t.json" in line
    assert "tune.original_config" not in interrupted_line(_outcome(False), "m", None)


def test_the_stop_names_the_run_it_cut_short_or_the_step_it_came_after():
    """A SIGTERM after both repeats of the run at the rate (runs 2-3) had finished said
    "during live run 2 ...; 3 live run(s) finished and kept". The step's runs finished
    decide: the one cut short, or the runs it came after."""
    from trtcheck.pipeline.tune import interrupted_where

    purpose = "calibration at the rate, with a repeat"
    assert interrupted_where(2, 2, 2, purpose) == f"after live runs 2-3 ({purpose})"
    assert interrupted_where(2, 1, 2, purpose) == f"during live run 3 ({purpose})"
    assert interrupted_where(2, 0, 2, purpose) == f"during live run 2 ({purpose})"
    assert interrupted_where(5, 1, 1, "confirm") == "after live run 5 (confirm)"
