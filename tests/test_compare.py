"""trtcheck compare: view-model values, escaping, formats and the CLI."""

from __future__ import annotations

import json
import re

from trtcheck.testing import synthetic_results as g
import pytest

from trtcheck.analyze.compare.compare import compare
from trtcheck.cli import main
from trtcheck.report import compare_render

from tests.conftest import exit2 as _exit2

EVIL = "<script>alert('x')</script>|*_`"


@pytest.fixture(scope="module")
def pair():
    a = g.results({1: 2.0, 8: 9.0}, n=800, seed=1)
    b = g.results({1: 1.5, 8: 9.0}, n=800, seed=2,
                  env=g.environment(gpu="NVIDIA A100", driver="550.1"),
                  extra_runs=[g.bench_run("only-b", {1: 1.0}, 100, seed=9)])
    return a, b


def test_deltas_and_verdicts(pair):
    a, b = pair
    c = compare(a, b, "a.json", "b.json")
    assert not c.comparable
    gpus = next(r for r in c.environment if r.field == "gpus")
    assert gpus.differs and gpus.a == "NVIDIA H200" and gpus.b == "NVIDIA A100"
    assert c.runs_only_in_b == ["only-b"]
    run = c.runs[0]
    assert run.matched_by == "label"
    b1 = next(x for x in run.batches if x.batch_size == 1)
    med = next(m for m in b1.metrics if m.metric == "median_ms")
    ra, rb = a.bench[0].batch(1), b.bench[0].batch(1)
    assert med.a == ra.stats.median_ms and med.b == rb.stats.median_ms
    assert med.ratio == pytest.approx(rb.stats.median_ms / ra.stats.median_ms)
    assert med.low < med.ratio < med.high
    assert med.change == "better"  # 25% faster
    thr = next(m for m in b1.metrics if m.metric == "throughput_samples_per_s")
    assert thr.change == "better" and thr.direction == "higher" and thr.ratio > 1.2


def test_same_file_shows_no_clear_change(pair):
    a, _ = pair
    c = compare(a, a)
    assert c.comparable
    for bc in c.runs[0].batches:
        for m in bc.metrics:
            assert m.ratio == pytest.approx(1.0) and m.change == "no clear change"


def test_runs_paired_by_position_when_labels_differ():
    a = g.results(n=200, seed=1, label="ort-fp32")
    b = g.results(n=200, seed=2, label="ort-fp16")
    c = compare(a, b)
    assert [(r.label_a, r.label_b, r.matched_by) for r in c.runs] == [
        ("ort-fp32", "ort-fp16", "position")]


def test_untrusted_text_is_escaped_in_html_and_markdown():
    a = g.results(n=100, seed=1, label=EVIL)
    b = g.results(n=100, seed=2, label=EVIL)
    c = compare(a, b, name_a="a<b>.json", name_b="b.json")
    html = compare_render.render_html(c)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "a&lt;b&gt;.json" in html
    md = compare_render.render_markdown(c)
    assert "<script>" not in md and "&lt;script&gt;" in md
    # no unescaped pipe from the label can break a table row
    assert EVIL not in md


def test_layer_matching_duck_typed():
    from types import SimpleNamespace as NS
    L = (lambda name, t, p, ms: NS(name=name, layer_type=t, precision=p, avg_time_ms=ms))
    a = g.results(n=50, seed=1)
    b = g.results(n=50, seed=2)
    ea = NS(layers=[L("conv1 + relu1", "Conv", "fp32", 0.5), L("head.fc + bias_add", "Gemm", "fp32", 0.2),
                    L("pool", "Pool", "fp32", 0.1)], precision_mix={"fp32": 3})
    eb = NS(layers=[L("conv1 + relu1", "Conv", "fp16", 0.2), L("head.fc + bias_add_1", "Gemm", "fp16", 0.15),
                    L("softmax", "SoftMax", "fp32", 0.05)], precision_mix={"fp16": 2, "fp32": 1})
    from trtcheck.analyze.compare.compare import compare_layers
    lc = compare_layers(NS(engine=ea), NS(engine=eb))
    assert lc is not None
    assert [(d.name_a, d.name_b, d.matched_by) for d in lc.matched] == [
        ("conv1 + relu1", "conv1 + relu1", "name"), ("head.fc + bias_add", "head.fc + bias_add_1", "similar-name")]
    assert lc.matched[0].delta_ms == pytest.approx(-0.3)
    assert lc.only_in_a == ["pool"] and lc.only_in_b == ["softmax"]
    assert lc.sum_a_ms == pytest.approx(0.8) and lc.sum_b_ms == pytest.approx(0.4)
    assert compare_layers(a, b) is None  # no engine section: no layer comparison


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as ei:
        main(argv)
    cap = capsys.readouterr()
    return ei.value.code, cap.out, cap.err


def test_cli_formats(pair, tmp_path, capsys):
    a, b = pair
    pa, pb = g.write(a, tmp_path / "a.json"), g.write(b, tmp_path / "b.json")
    code, out, err = run_main(["compare", str(pa), str(pb)], capsys)
    assert code == 0
    assert "environment: NOT comparable" in out
    assert re.search(r"^  1\s+800/800\s+median_ms\s+.*better$", out, re.MULTILINE), out
    code, out, _ = run_main(["compare", str(pa), str(pb), "--format", "json"], capsys)
    data = json.loads(out)
    assert data["runs"][0]["label_a"] == "onnxruntime-fp32"
    code, out, _ = run_main(["compare", str(pa), str(pb), "--format", "md"], capsys)
    assert out.startswith("## trtcheck compare")
    html = tmp_path / "c.html"
    code, _, err = run_main(["compare", str(pa), str(pb), "--format", "html", "-o", str(html)],
                            capsys)
    assert code == 0 and html.read_text().startswith("<!DOCTYPE html>")
    # an existing file is not replaced without --overwrite, and inputs never
    code, _, err = run_main(["compare", str(pa), str(pb), "--format", "html", "-o", str(html)],
                            capsys)
    assert code == 2 and "--overwrite" in err
    before = pa.read_bytes()
    code, _, err = run_main(["compare", str(pa), str(pb), "-o", str(pa), "--overwrite"],
                            capsys)
    assert code == 2 and "input file" in err and pa.read_bytes() == before


def test_cli_bad_input(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("not json")
    code, _, err = run_main(["compare", str(bad), str(bad)], capsys)
    assert code == 2 and err.startswith("error: ") and "not JSON" in err


def test_layers_of_real_trtexec_exports(trtexec_exports):
    """ResNet-18 on an A100: FP32 vs FP16 (same graph) and FP32 vs INT8-QAT (renumbered)."""
    from trtcheck.inspection.engine.trtexec import load_trtexec_export
    fp32 = load_trtexec_export(trtexec_exports / "resnet18-a100-fp32")
    fp16 = load_trtexec_export(trtexec_exports / "resnet18-a100-fp16")
    qat = load_trtexec_export(trtexec_exports / "resnet18-a100-qat")
    base = g.results(n=100, seed=1)
    ra = base.model_copy(update={"engine": fp32})
    rb = base.model_copy(update={"engine": fp16})
    rq = base.model_copy(update={"engine": qat})
    c = compare(ra, rb, "fp32.json", "fp16.json")
    L = c.layers
    assert L is not None and (L.layers_a, L.layers_b) == (len(fp32.layers), len(fp16.layers))
    by_name = {d.name_a: d for d in L.matched}
    conv0 = by_name["Conv_0 + Relu_1"]
    assert conv0.matched_by == "name" and conv0.precision_b == "fp16"
    t32 = next(x.avg_time_ms for x in fp32.layers if x.name == "Conv_0 + Relu_1")
    t16 = next(x.avg_time_ms for x in fp16.layers if x.name == "Conv_0 + Relu_1")
    assert conv0.delta_ms == pytest.approx(t16 - t32)
    # every compute layer of the FP32 engine finds its FP16 twin
    compute = [x.name for x in fp32.layers if x.layer_type not in ("Reformat", "NoOp")]
    assert all(n in by_name for n in compute)
    assert L.sum_a_ms == pytest.approx(sum(x.avg_time_ms for x in fp32.layers))
    assert "Conv_0 + Relu_1" in compare_render.render_text(c)
    # QAT renumbers every node: matched by execution order and output dims
    q = compare(ra, rq).layers
    pairs = {d.name_a: d.name_b for d in q.matched}
    assert pairs["Conv_0 + Relu_1"] == "conv1.weight + QuantizeLinear_7 + Conv_9"
    assert pairs["Conv_13 + Relu_14"].startswith("layer2.0.conv1.weight")
    assert pairs["Conv_16 + Add_17 + Relu_18"].startswith("layer2.0.downsample.0.weight")
    assert all(d.matched_by in ("similar-name", "order-and-type") for d in q.matched)


def test_two_runs_of_one_file(tmp_path, capsys):
    r = g.results({1: 2.0, 8: 9.0}, n=400, seed=1,
                  extra_runs=[g.bench_run("ort-fp16", {1: 1.0, 8: 4.5}, 400, seed=2)])
    p = g.write(r, tmp_path / "r.json")
    code, out, _ = run_main(["compare", str(p), str(p), "--run-a", "onnxruntime-fp32",
                             "--run-b", "ort-fp16", "--format", "json"], capsys)
    assert code == 0
    run = json.loads(out)["runs"][0]
    assert (run["label_a"], run["label_b"]) == ("onnxruntime-fp32", "ort-fp16")
    med = run["batches"][1]["metrics"][0]
    assert med["metric"] == "median_ms" and med["change"] == "better" and med["ratio"] < 0.6
    code, _, err = run_main(["compare", str(p), str(p), "--run-b", "nope"], capsys)
    assert code == 2 and "present: onnxruntime-fp32, ort-fp16" in err


@pytest.mark.parametrize("opt", ["--confidence", "--run-to-run-cv"])
def test_compare_non_finite_options(opt, tmp_path, capsys):
    from trtcheck.results import Results  # noqa: F401  (import check only)
    _exit2(["compare", "a.json", "b.json", opt, "nan"], opt, capsys)


def test_different_models_get_a_banner_and_no_verdicts(pair):
    from trtcheck.results import ModelInspection, TensorInfo

    def insp(inp: str, out: str) -> ModelInspection:
        return ModelInspection(format="onnx", path="m.onnx", file_size_bytes=1, sha256="0" * 64,
                               ir_version=8, opset={"ai.onnx": 17}, inputs=[
                                   TensorInfo(name=inp, dtype="float32", shape=[1, 3])],
                               outputs=[TensorInfo(name=out, dtype="float32", shape=[1])],
                               node_count=1, op_histogram={}, parameter_count=0,
                               parameter_bytes=0, initializer_dtypes={})

    a, b = pair
    a = a.model_copy(update={"inspection": insp("images", "logits")})
    same = a.model_copy(update={"inspection": insp("images", "logits")})
    other = b.model_copy(update={"inspection": insp("audio", "text")})
    assert compare(a, same).different_models is None
    c = compare(a, other, "a.json", "b.json")
    assert c.different_models and "inputs ['images'] vs ['audio']" in c.different_models
    for bc in c.runs[0].batches:
        for m in bc.metrics:
            assert m.change == "different models" and m.ratio is None and m.low is None
    text = compare_render.render_text(c)
    assert "WARNING: different models" in text
    run_lines = [ln for ln in text.splitlines() if "different models" in ln
                 and not ln.startswith("WARNING")]
    assert run_lines and not any(re.search(r"[+-]\d+(\.\d+)?%", ln) for ln in run_lines)
    assert "different models" in compare_render.render_markdown(c)
    assert "different models" in compare_render.render_html(c)


def test_two_files_with_nothing_compare_pairs_are_one_line_exit_2(pair, tmp_path):
    """A bench-only file and a serving-only file share no section compare can pair: one
    line naming what each holds and what compare pairs, exit 2 (before: exit 0 and only
    the environment table)."""
    from tests.cli_helper import invoke
    from tests.conftest import assert_one_line_error
    from tests.test_compare_serve import _serve_results

    a, _ = pair
    serve_only = _serve_results("1:2,8:4")
    c = compare(a, serve_only, "bench.json", "live.json")
    assert c.shares_nothing and c.runs == [] and c.serve == []
    assert c.holds_a == ["bench runs (onnxruntime-fp32)", "a model inspection"]
    assert c.holds_b[0].startswith("a serving run (2 configuration(s): burst:32 W=0 ms B=8")
    pa, pb = g.write(a, tmp_path / "bench.json"), g.write(serve_only, tmp_path / "live.json")
    line = assert_one_line_error(invoke("compare", pa, pb), 2, "nothing to compare: A (",
                                 "holds bench runs (onnxruntime-fp32) and a model inspection; B (",
                                 "holds a serving run", "hint: compare pairs bench runs")
    assert "tune pick with a serving run" in line
