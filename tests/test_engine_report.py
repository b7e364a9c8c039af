"""The engine results section: JSON round trip, report section, escaping, CLI inspect."""

from __future__ import annotations

import json
from pathlib import Path

from tests.factories import make_results
from trtcheck.inspection.engine.trtexec import load_trtexec_export
from trtcheck.report import build_report, render_report
from trtcheck.report.sec_engine import render_markdown, render_text
from trtcheck.results import results_from_json, results_to_json

HOSTILE = '<script>alert(1)</script>|`x`*_[a](b)'


def with_engine(trtexec_exports: Path):
    r = make_results()
    r.engine = load_trtexec_export(trtexec_exports / "resnet18-a100-fp16")
    return r


def test_round_trip(trtexec_exports: Path):
    r = with_engine(trtexec_exports)
    back = results_from_json(results_to_json(r))
    assert back == r
    assert back.engine.timing.layer_sum_ms == r.engine.timing.layer_sum_ms


def test_report_section_and_charts(trtexec_exports: Path, tmp_path: Path):
    written = render_report(with_engine(trtexec_exports), tmp_path / "out")
    html = (tmp_path / "out" / "report.html").read_text()
    md = (tmp_path / "out" / "report.md").read_text()
    assert "TensorRT engine" in html and "per-layer profiling adds 17.9%" in html
    assert "Conv_0 + Relu_1" in html
    assert "(charts/engine-precision-mix.png)" in md and "(charts/engine-layer-times.png)" in md
    assert (tmp_path / "out" / "charts" / "engine-layer-times.png").is_file()
    assert any(p.name == "report.html" for p in written)
    assert "engine-reformats" in md


def test_untrusted_layer_names_are_escaped(trtexec_exports: Path):
    r = with_engine(trtexec_exports)
    layers = list(r.engine.layers)
    layers[1] = layers[1].model_copy(update={"name": HOSTILE, "tactic": HOSTILE})
    r.engine = r.engine.model_copy(update={"layers": layers})
    html, md, _, _ = build_report(r)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<script>" not in md and "\\|" in md
    text = render_text(r.engine)
    assert "<script>" in text  # plain text for a terminal: shown as is, no markup


def test_cli_inspect_exports_and_formats(trtexec_exports: Path, cli):
    folder = trtexec_exports / "resnet18-a100-fp16"
    res = cli("inspect", str(folder))
    assert res.returncode == 0, res.stderr
    assert "per-layer profiling adds 17.9%" in res.stdout
    assert "precision mix: fp16 34" in res.stdout
    js = cli("inspect", str(folder / "resnet.onnx.engine.graph.json"), "--format", "json")
    assert js.returncode == 0 and json.loads(js.stdout)["inspector_schema"] == "8.x/10.x"
    md = cli("inspect", str(trtexec_exports / "mobilenet-qat-titanrtx"), "--format", "md")
    assert md.returncode == 0 and "engine-unfused-qdq" in md.stdout
    assert render_markdown(load_trtexec_export(folder)).count("| Conv") >= 5
