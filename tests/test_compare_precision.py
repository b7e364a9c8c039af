"""`trtcheck compare` shows the precision sections of both files: per variant (matched by
label) the accuracy metrics of the precision results model, A vs B, in text, Markdown,
HTML and JSON (as it shows serve and engine sections)."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from trtcheck.analyze.compare.compare import compare
from trtcheck.results import load_results, save_results

#: the accuracy fields of VariantResult that compare shows (worst values over outputs)
ACCURACY = ["max_abs_error", "max_outside_tolerance_fraction", "min_cosine_similarity",
            "max_rel_l2_error", "nonfinite_count", "min_top1_agreement"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A: the safe model (FP16 passes); B: the overflow model (FP16 fails), both real
    FP32-vs-FP16 comparisons on ONNX Runtime."""
    from trtcheck.load.precision_models import build_overflow_model, build_safe_model
    from trtcheck.measure.precision.precision import compare_onnx_precisions
    from trtcheck.measure.bench.runner import new_results

    d = tmp_path_factory.mktemp("compare-precision")
    out = {}
    for key, model in (("a", build_safe_model()), ("b", build_overflow_model())):
        onnx_path = d / f"{key}.onnx"
        onnx.save_model(model, str(onnx_path))
        res = new_results()
        res.precision = compare_onnx_precisions(onnx_path, ["fp16"], sample_count=1, seed=0)
        out[key] = save_results(res, d / f"{key}.json")
    return out


def test_comparison_holds_every_accuracy_metric(files):
    ra, rb = load_results(files["a"]), load_results(files["b"])
    c = compare(ra, rb, name_a="a.json", name_b="b.json")
    assert [p.variant for p in c.precision] == ["fp16"]
    p = c.precision[0]
    assert (p.passed_a, p.passed_b) == (True, False)
    va, vb = ra.precision.variants["fp16"], rb.precision.variants["fp16"]
    got = {m.metric: m for m in p.metrics}
    assert list(got) == ACCURACY
    assert got["max_abs_error"].a == va.max_abs_error
    assert got["max_abs_error"].b == vb.max_abs_error
    assert got["max_abs_error"].difference == pytest.approx(vb.max_abs_error - va.max_abs_error)
    assert got["min_cosine_similarity"].direction == "higher"
    setup = {d.field: d for d in c.precision_setup}
    assert setup["model"].differs and setup["passed"].a == "True" and setup["passed"].b == "False"


def test_variants_only_in_one_file_and_no_section(files):
    ra, rb = load_results(files["a"]), load_results(files["b"])
    v = rb.precision.variants["fp16"]
    rb2 = rb.model_copy(update={"precision": rb.precision.model_copy(
        update={"variants": {"int8": v.model_copy(update={"label": "int8"})}})})
    c = compare(ra, rb2)
    assert c.precision == [] and c.precision_only_in_a == ["fp16"]
    assert c.precision_only_in_b == ["int8"]
    none = compare(ra, rb.model_copy(update={"precision": None}))
    assert none.precision_setup == [] and none.precision == []


@pytest.mark.parametrize("fmt", ["text", "md", "html", "json"])
def test_every_format_shows_the_precision_comparison(cli, files, fmt):
    res = cli("compare", str(files["a"]), str(files["b"]), "--format", fmt)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    vb = load_results(files["b"]).precision.variants["fp16"]
    if fmt == "json":
        data = json.loads(out)
        assert data["precision"][0]["variant"] == "fp16"
        m = {x["metric"]: x for x in data["precision"][0]["metrics"]}
        assert m["max_abs_error"]["b"] == vb.max_abs_error
        return
    heading = {"text": "precision fp16: verdict pass / FAIL",
               "md": "#### Precision fp16: verdict pass / FAIL",
               "html": "<h3>Precision fp16: verdict pass / FAIL"}[fmt]
    assert heading in out
    for name in ACCURACY:
        shown = name.replace("_", "\\_") if fmt == "md" else name
        assert shown in out, name
    assert f"{vb.max_abs_error:.6g}" in out


def test_html_escapes_untrusted_variant_fields(files):
    from trtcheck.report.compare_render import render_html

    ra, rb = load_results(files["a"]), load_results(files["b"])
    v = rb.precision.variants["fp16"]
    evil = rb.model_copy(update={"precision": rb.precision.model_copy(update={
        "variants": {"fp16": v.model_copy(update={"built_by": "<script>alert(1)</script>"})}})})
    html = render_html(compare(ra, evil))
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
