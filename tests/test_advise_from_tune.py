"""``advise --from tune.json``: a tune search's run at the target rate is the calibration
(the whole flow against a real tritonserver is in tests/test_tune_cli.py)."""

from __future__ import annotations

from trtcheck.fingerprint import collect_environment
from trtcheck.results import Results, ToolInfo
from trtcheck.results.model import save_results
from trtcheck.results.tune import TuneResult

from cli_helper import invoke
from conftest import assert_one_line_error


def test_a_search_with_no_run_at_the_rate_is_one_line(tmp_path):
    doc = Results(kind="tune", tool=ToolInfo(version="0.1.0", command=["trtcheck", "tune"]),
                  created_utc="2026-12-05T00:00:00Z", environment=collect_environment(),
                  tune=TuneResult(url="http://127.0.0.1:1", model="m", arrival_rate_per_s=10.0,
                                  objective="p99"))
    path = save_results(doc, tmp_path / "tune.json")
    res = invoke("advise", "--from", path, "--arrival-rate", "10")
    assert_one_line_error(res, 2, "without a finished run at the target rate")


def test_sizes_the_search_measured_but_the_rate_run_did_not_are_noted():
    """tune.json held a measured T(7) from its closed loop while `advise --from tune.json`
    (calibrated from the run at the rate, batches of 1) quoted capacity at T(8) = T(1):
    the advice says those sizes are extrapolated, and names the measured values."""
    from types import SimpleNamespace

    from trtcheck.analyze.advice.curve import make_curve
    from trtcheck.analyze.advice.inputs import _tune_curve_note

    tune = SimpleNamespace(calibration=SimpleNamespace(per_instances=[
        SimpleNamespace(instances=1, batch_sizes=[1, 7], t_ms=[36.06, 159.5]),
        SimpleNamespace(instances=2, batch_sizes=[1, 7], t_ms=[40.0, 170.0])]))
    note = _tune_curve_note(tune, make_curve([(1, 36.06)], source="live"), "tune.json")
    assert note is not None
    assert note.startswith("tune.json's search also measured T(7) = 159.5 ms at 1 instance")
    assert "sizes above 1 are extrapolated as T(b) = T(1)" in note
    # nothing to say when the run at the rate formed those sizes itself
    assert _tune_curve_note(tune, make_curve([(1, 36.0), (7, 160.0)], source="live"),
                            "tune.json") is None
