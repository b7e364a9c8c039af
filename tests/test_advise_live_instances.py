"""``advise --from live.json`` at an instance count the live run did not calibrate: a
warning naming the assumed contention factor, and a wider prediction interval
(tests/gold/inputs/live.json: one instance)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

LIVE = Path(__file__).resolve().parent / "gold" / "inputs" / "live.json"


def _advise(n: int) -> dict:
    res = run_cli("advise", "--from", str(LIVE), "--arrival-rate", "300", "--instances",
                  str(n), "--replicas", "0", "--format", "json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_two_instances_on_a_one_instance_calibration_warn_and_widen():
    one, two = _advise(1), _advise(2)
    p1, p2 = one["recommendation"]["prediction"], two["recommendation"]["prediction"]
    assert p1["instances"] == 1 and p2["instances"] == 2
    assert p1["contention_factor"] is None
    assert p2["contention_factor"] == 1.25 and p2["contention_source"] == "assumed"
    notes = " ".join(two["curve"]["notes"])
    assert "calibrated at 1 instance only" in notes and "1.25" in notes
    assert "CPU cores" in notes

    def upper(p: dict, key: str) -> float:
        return p[key][1] / p[key.replace("_interval", "")]

    # the assumed contention's spread adds to the run-to-run spread in quadrature: it
    # widens the P50 interval visibly, upwards (its lower end may stop at the
    # calibration's fastest request: no request is faster than one alone); the P99
    # interval's width is the calibration's P99 spread (0.34 on the log scale here,
    # from its two halves) with it
    assert upper(p2, "p50_interval_ms") > upper(p1, "p50_interval_ms")
    for p in (p1, p2):
        lo, hi = p["p99_interval_ms"]
        assert lo <= p["p99_ms"] <= hi and hi / p["p99_ms"] > 2.0


def test_text_names_the_factor_and_the_interval():
    res = run_cli("advise", "--from", str(LIVE), "--arrival-rate", "300", "--instances",
                  "2", "--replicas", "0")
    assert res.returncode == 0, res.stderr
    assert "assumed contention factor 1.25" in res.stdout
    assert "prediction interval (95%)" in res.stdout


def test_markdown_carries_the_intervals_the_text_shows():
    """``--format md``: the what-if table has each row's P50/P99 interval and the
    contention it assumed; the recommendation's interval is in its own table."""
    res = run_cli("advise", "--from", str(LIVE), "--arrival-rate", "300", "--window-ms",
                  "0", "--max-batch", "4", "--instances", "1,2", "--replicas", "0",
                  "--format", "md")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "**Prediction intervals (95%; docs/advise.md)**" in out
    head = [ln for ln in out.splitlines() if ln.startswith("| config |")][0]
    assert head.endswith("P50 interval ms | P99 interval ms | contention |")
    two = [ln for ln in out.splitlines() if ln.startswith("| W=0 ms B=4 x2 |")][0]
    cells = [c.strip() for c in two.strip("|").split("|")]
    lo, hi = (float(x) for x in cells[7].split("-"))
    assert lo < float(cells[1]) < hi
    assert cells[9] == "T(b) x 1.25 (assumed)"
