"""``trtcheck serve --url``'s text table says "median shown": its sent/s is the median
over the repeats, as its QPS is (it was the median-throughput repeat's own, so a row
could read QPS 7.4 beside sent/s 5.7: more answers than sends)."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np

from trtcheck.report.text_tables import serve_table_text
from trtcheck.results import results_from_json


def test_sent_per_s_is_the_median_over_the_repeats_like_qps():
    """tune's calibration run at the rate, two repeats that sent 9.5 and 10.85 req/s
    (a real CPU search, tests/data/tune-cpu-raw)."""
    raw = Path(__file__).resolve().parent / "data" / "tune-cpu-raw" / \
        "dev-cpu-demo-resnet18-10rps.json.xz"
    run = results_from_json(lzma.decompress(raw.read_bytes()).decode()).tune.runs[1]
    (c,) = run.configs
    sent = [r.achieved_send_rate_per_s for r in c.repeats]
    assert len(sent) == 2 and abs(sent[0] - sent[1]) > 1.0
    text = serve_table_text(run).splitlines()
    row = text[text.index(f"load {c.load.label}") + 3].split()
    assert float(row[4]) == round(c.throughput_queries_per_s, 1)
    assert float(row[5]) == round(float(np.median(sent)), 1)
    assert any("in the repeat of median throughput" in ln for ln in text)
