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


def test_an_existing_export_entry_is_refused_before_any_live_run(tmp_path):
    """Refused at once (exit 2), before tune contacts the server: the URL here answers
    nothing, so a check made after the search would have said 'cannot reach' instead."""
    from conftest import assert_one_line_error, run_cli
    from trtcheck.testing.triton_server import free_ports

    entry = tmp_path / "out" / "tb_linear"
    entry.mkdir(parents=True)
    (entry / "config.pbtxt").write_text("name: \"tb_linear\"\n")
    res = run_cli("tune", "--url", f"http://127.0.0.1:{free_ports(1)[0]}", "--model",
                  "tb_linear", "--arrival-rate", "50", "--export-dir", str(tmp_path / "out"))
    line = assert_one_line_error(res, 2, "config.pbtxt exists", "--export-dir")
    assert "--model-name" not in line  # tune has no such option
    assert (entry / "config.pbtxt").read_text() == "name: \"tb_linear\"\n"  # untouched
