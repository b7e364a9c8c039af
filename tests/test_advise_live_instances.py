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

    def rel_width(p: dict, key: str) -> float:
        lo, hi = p[key]
        return (hi - lo) / p[key.replace("_interval", "")]

    # the assumed contention's spread adds to the run-to-run spread in quadrature: it
    # widens the P50 interval visibly; the P99 interval's width is the calibration's
    # P99 spread (0.34 on the log scale here, from its two halves) with it
    assert rel_width(p2, "p50_interval_ms") > rel_width(p1, "p50_interval_ms")
    for p in (p1, p2):
        lo, hi = p["p99_interval_ms"]
        assert lo <= p["p99_ms"] <= hi and hi / p["p99_ms"] > 2.0


def test_text_names_the_factor_and_the_interval():
    res = run_cli("advise", "--from", str(LIVE), "--arrival-rate", "300", "--instances",
                  "2", "--replicas", "0")
    assert res.returncode == 0, res.stderr
    assert "assumed contention factor 1.25" in res.stdout
    assert "prediction interval (95%)" in res.stdout
