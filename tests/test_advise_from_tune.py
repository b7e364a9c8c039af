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
