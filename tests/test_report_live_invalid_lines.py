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


def test_a_sweep_over_instance_counts_names_the_count_in_each_place():
    """``config_result`` of a live sweep over 1 and 2 instances places its findings at
    ``LOAD window W ms max batch B instances N``: the 8 open-loop configurations of the
    recorded sweep were 4 places before (each label stood for two configurations)."""
    from trtcheck.measure.serving.loadgen import parse_load
    from trtcheck.measure.serving.serve import config_result

    raw = Path(__file__).resolve().parent / "data" / "serve-live-raw" / \
        "dev-cpu-demo-resnet18-sweep.json.xz"
    run = results_from_json(lzma.decompress(raw.read_bytes()).decode()).serve
    c = next(c for c in run.configs if c.load.label == "open:10" and c.instances == 2
             and any(w.code == "late-sends" for w in c.warnings))
    again = config_result(c.window_us, c.max_batch_size, parse_load("open:10", 2.0),
                          c.repeats, instances=2)
    late = next(w for w in again.warnings if w.code == "late-sends")
    assert late.where == (f"open:10 window {c.window_us / 1000:g} ms max batch "
                          f"{c.max_batch_size} instances 2")
    plain = config_result(c.window_us, c.max_batch_size, parse_load("open:10", 2.0),
                          c.repeats)
    assert all("instances" not in (w.where or "") for w in plain.warnings)
