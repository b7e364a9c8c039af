"""``trtcheck tune --export-dir``: the exported config.pbtxt is the configuration tune
measured (tests/data/tune-gpu-raw: ResNet-34 on an H200 at 142 req/s, pick window 0, max
batch 1, 4 instances, on a live model of max batch 64 behind the dynamic batcher)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from trtcheck.pipeline.tune import export_config_text
from trtcheck.results import results_from_json

RAW = Path(__file__).resolve().parent / "data" / "tune-gpu-raw" / "h200-host-resnet34-tune.json.xz"


def _tune():
    doc = json.loads(lzma.decompress(RAW.read_bytes()))
    entry = next(t for t in doc["tunes"] if t["rate_per_s"] == 142.0)
    return results_from_json(json.dumps(entry["tune_json"])).tune


def test_max_batch_1_keeps_the_dynamic_batcher_it_was_measured_behind():
    res = _tune()
    assert (res.pick.max_batch_size, res.pick.window_us) == (1, 0.0)
    assert "dynamic_batching" in res.original_config
    text, _ = export_config_text(res)
    assert "max_batch_size: 1\n" in text
    assert "dynamic_batching {\n  max_queue_delay_microseconds: 0\n}" in text
    assert "count: 4, kind: KIND_GPU" in text


def test_a_max_batch_below_the_live_models_says_what_it_refuses():
    text, _ = export_config_text(_tune())
    assert ("# max batch 1, below the measured server's 64: the max batch also bounds "
            "each request, so a client that sends requests of more than 1 row is "
            "refused; keep 64 if clients send batched requests") in text
