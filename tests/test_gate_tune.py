"""``trtcheck gate`` on a tune document: a tune measurement's P99 is a summary of one
live run, whose raw latencies the document keeps; the gate says where to find them."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from trtcheck.analyze.gate.gate_evaluate import evaluate
from trtcheck.analyze.gate.gate_policy import parse_policy
from trtcheck.results import results_from_json


def _tune_doc():
    raw = (Path(__file__).resolve().parent / "data" / "tune-gpu-raw"
           / "h200-host-resnet34-tune.json.xz")
    entry = next(t for t in json.loads(lzma.decompress(raw.read_bytes()))["tunes"]
                 if t["rate_per_s"] == 427.0)
    return results_from_json(json.dumps(entry["tune_json"]))


def test_a_tune_pick_p99_points_to_the_raw_latencies_of_its_run():
    res = _tune_doc()
    run = res.tune.pick.measured.run
    pol = parse_policy("settings:\n  on_uncertified: warn\nbudgets:\n"
                       "  - tune.pick.measured.p99_ms <= 1000 ms\n"
                       f"  - tune.runs[{run}].configs[0].repeats[*].p99_ms <= 1000 ms\n")
    rep = evaluate(pol, res)
    by = {c.metric.split(".")[1]: c for c in rep.checks}
    pick = by["pick"]
    assert pick.verdict == "not-certified" and pick.outcome == "warn"
    assert "gate tune.runs[N].configs[0].repeats[*].p99_ms" in pick.message, pick.message
    # and how many requests that run must hold to certify p99 (MLPerf early stopping)
    assert "takes at least 459 requests with none past the bound" in pick.message
    # already a warning: no advice to make it one
    assert "set on_uncertified: warn" not in pick.message, pick.message
    # the run's own latencies are what certifies (or not, by their count)
    assert by[f"runs[{run}]"].verdict in ("pass", "not-certified"), by
    assert "no raw samples" not in by[f"runs[{run}]"].message
    pol_fail = parse_policy("budgets:\n  - tune.pick.measured.p99_ms <= 1000 ms\n")
    msg = evaluate(pol_fail, res).checks[0].message
    assert "or set on_uncertified: warn under the policy's settings" in msg, msg
