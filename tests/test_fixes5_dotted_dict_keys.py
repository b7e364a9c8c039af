"""QA pass 4, item 5b: the gate paths docs/precision.md shows
(``precision.variants.fp16.max_abs_error``) work: a plain name after a dict field is
read as its key, the same as ``precision.variants[fp16].max_abs_error``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trtcheck.analyze import metrics as M
from trtcheck.analyze.gate import parse_policy

REPO = Path(__file__).resolve().parent.parent


def test_fold_turns_dotted_dict_names_into_keys():
    p = M.fold_dotted_keys(M.parse_path("precision.variants.fp16.outputs.y.max_abs_error"))
    assert [s.name for s in p.segments] == ["precision", "variants", "outputs",
                                            "max_abs_error"]
    assert p.segments[1].selectors[0].key == "fp16"
    assert p.segments[2].selectors[0].key == "y"
    assert p.text == "precision.variants.fp16.outputs.y.max_abs_error"
    same = M.parse_path("precision.variants[fp16].max_abs_error")
    assert M.fold_dotted_keys(same) == same
    op = M.fold_dotted_keys(M.parse_path("inspection.op_histogram.Conv"))
    assert op.segments[-1].selectors[0].key == "Conv"
    # lists and records are untouched; unknown names are left for check_path to report
    b = M.parse_path("bench.batch[8].p99_ms")
    assert M.fold_dotted_keys(b) == b
    with pytest.raises(M.MetricPathError):
        M.check_path(M.fold_dotted_keys(M.parse_path("precision.variantz.fp16.passed")))


def test_every_documented_precision_path_loads():
    doc = (REPO / "docs" / "precision.md").read_text()
    paths = sorted(set(re.findall(r"`(precision\.variants\.fp16\.[A-Za-z0-9_.<>]+)`", doc)))
    assert len(paths) >= 8, paths
    rules = [p.replace("<output>", "y") for p in paths]
    pol = parse_policy("version: 1\nbudgets:\n" + "".join(
        f"  - {r} >= 0\n" if not r.endswith("passed") else f"  - {r} == true\n"
        for r in rules))
    assert len(pol.rules) == len(rules)


def test_dotted_and_selector_forms_give_the_same_value(tmp_path):
    import onnx

    from trtcheck.analyze.gate import evaluate
    from trtcheck.load.precision_models import build_safe_model
    from trtcheck.measure.bench import StopRule
    from trtcheck.measure.precision import compare_onnx_precisions
    from trtcheck.measure.runner import new_results

    model = tmp_path / "safe.onnx"
    onnx.save_model(build_safe_model(), str(model))
    quick = StopRule(warmup_s=0.0, warmup_min_iterations=1, min_duration_s=0.0,
                     min_samples=5, max_duration_s=5.0)
    res = new_results(["trtcheck", "precision"])
    res.precision = compare_onnx_precisions(model, ["fp16"], sample_count=2, bench_rule=quick)
    out = next(iter(res.precision.variants["fp16"].outputs))
    assert "." not in out and "[" not in out
    pol = parse_policy("version: 1\nbudgets:\n"
                       "  - precision.variants.fp16.max_abs_error <= 1\n"
                       "  - precision.variants[fp16].max_abs_error <= 1\n"
                       f"  - precision.variants.fp16.outputs.{out}.max_abs_error <= 1\n")
    a, b, c = evaluate(pol, res).checks
    assert a.verdict == b.verdict == c.verdict == "pass", [a.message, b.message, c.message]
    assert a.value == b.value == c.value
    assert a.metric == b.metric == "precision.variants[fp16].max_abs_error"
