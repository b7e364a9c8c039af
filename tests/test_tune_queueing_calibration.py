"""The queueing calibration of ``trtcheck tune`` (``tune_plan.calibrate_queueing``): the
per-request delay and overhead come from both repeats of the target-rate run, pooled,
not from the faster one; measured GPU runs from tests/data/tune-gpu-raw."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import numpy as np

from trtcheck.analyze import tune_plan as tp
from trtcheck.results import load_results

RAW = Path(__file__).parent / "data" / "tune-gpu-raw" / "h100-host-vgg16.json.xz"


def _serve(tmp_path: Path, rec: dict, design: str):
    live = next(c["live"] for c in rec["calibrations"]
                if c["design"] == design and c["instances"] == 1 and "live" in c)
    p = tmp_path / f"{design}.json"
    p.write_text(json.dumps(live))
    return load_results(p).serve


def test_both_repeats_of_the_target_rate_run_calibrate_the_level(tmp_path):
    # eager VGG-16 fp16 in Triton's python backend on an H100: the target-rate run and
    # its repeat, as tune records them (one run, two repeats); P50 5.03 and 5.60 ms,
    # P99 7.1 and 8.4 ms
    rec = json.loads(lzma.decompress(RAW.read_bytes()))
    a, b = _serve(tmp_path, rec, "open"), _serve(tmp_path, rec, "open-repeat")
    reps = [*a.configs[0].repeats, *b.configs[0].repeats]
    run = a.model_copy(update={"configs": [a.configs[0].model_copy(
        update={"repeats": reps})]})
    cal = tp.calibrate_queueing([run], 0)
    sizes = [len(r.latencies_ms) for r in reps]
    medians = [float(np.median(r.latencies_ms)) for r in reps]
    # every request of both repeats, less any transient the observation leaves out
    kept = cal.observation.client_latencies_ms.size
    assert kept > max(sizes)
    assert kept >= (1.0 - cal.observation.transient_share) * sum(sizes) - 1
    # the calibration reproduces the pooled level, not the faster repeat's
    pooled = float(np.median(np.concatenate([r.latencies_ms for r in reps])))
    assert abs(cal.check["measured_p50_ms"] - pooled) <= 0.02 * pooled
    assert 1.02 * min(medians) < cal.check["measured_p50_ms"] < max(medians)
    # one repeat alone calibrates from that repeat only
    one = tp.calibrate_queueing([a], 0)
    assert one.observation.client_latencies_ms.size <= sizes[0]
