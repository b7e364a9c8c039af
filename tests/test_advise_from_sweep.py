"""``advise --from live.json`` of a ``serve --url`` sweep that loaded smaller max batch
sizes (2 and 4) than the model's own (8): the server allows the model's 8, so the advice
says the sizes above the largest it measured were not assessed, and the export keeps 8
with a comment. Before, the sweep's 2 was taken for the server's: no note, and the
export lowered the model's max batch from 8 to 2 without a word. (A recorded sweep of the
demo ResNet-18 through the ONNX wrapper on 2 CPU cores.)"""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from conftest import run_cli

RAW = Path(__file__).resolve().parent / "data" / "serve-live-raw" / \
    "dev-cpu-demo-resnet18-sweep.json.xz"


def test_the_models_own_max_batch_bounds_the_advice_and_the_export(tmp_path):
    doc = json.loads(lzma.decompress(RAW.read_bytes()))
    assert doc["serve"]["live"]["model_config_json"]["max_batch_size"] == 8
    assert {c["max_batch_size"] for c in doc["serve"]["configs"]} == {2, 4}
    live = tmp_path / "live.json"
    live.write_text(json.dumps(doc))
    res = run_cli("advise", "--from", str(live), "--arrival-rate", "18", "--slo-p99-ms", "800",
                  "--replicas", "0", "--export-dir", str(tmp_path / "exp"), "--format", "json")
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    top = max(int(b) for b in adv["curve"]["points_ms"])
    pit = [p for p in adv["pitfalls"] if p["code"] == "uncalibrated-batch-sizes"]
    assert pit and f"batch sizes above {top}" in pit[0]["message"]
    assert "(the server allows 8)" in pit[0]["message"]
    rec = adv["recommendation"]["prediction"]["max_batch_size"]
    assert rec < 8
    cfg = (tmp_path / "exp" / "resnet18" / "config.pbtxt").read_text()
    assert "\nmax_batch_size: 8\n" in cfg
    assert (f"# max batch 8 (the measured Triton server's max_batch_size): the server's own, "
            f"kept; the advice recommends {rec}") in cfg
