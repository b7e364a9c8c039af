"""The text summary of a live serving run (``trtcheck serve --url`` stdout) names every
configuration a validity mark made invalid (``generator-limited``), as the embedded
batcher's summary does. Before, the live summary showed only the late-sends warning,
while docs/serving.md tells users to look for the mark."""

from __future__ import annotations

import lzma
from pathlib import Path

from trtcheck.report.text_tables import serve_table_text
from trtcheck.results import results_from_json


def test_a_generator_limited_configuration_is_named_on_stdout():
    raw = Path(__file__).resolve().parent / "data" / "serve-live-raw" / \
        "dev-cpu-demo-resnet18-sweep.json.xz"
    run = results_from_json(lzma.decompress(raw.read_bytes()).decode()).serve
    marks = [(c, f) for c in run.configs for f in c.validity if f.severity == "error"]
    assert [f.code for _, f in marks] == ["generator-limited"]
    text = serve_table_text(run)
    (line,) = [ln for ln in text.splitlines() if ln.startswith("invalid [")]
    f = marks[0][1]
    assert line == f"invalid [{f.where}] {f.message}; {f.remedy}"
