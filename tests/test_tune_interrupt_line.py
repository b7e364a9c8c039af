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
