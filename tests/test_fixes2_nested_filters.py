"""Follow-up: gate metric paths with nested filters, multi-condition filters
(`[F1=V1,F2=V2]`), dotted filter fields and filters on dicts of records; forms that are
not supported are refused with one clear error, never a filter silently matching nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from trtcheck.analyze import metrics as M
from trtcheck.cli import main
from trtcheck.results import load_results
from conftest import synthetic_serve_json  # noqa: E402


@pytest.fixture(scope="module")
def serve_json(tmp_path_factory) -> Path:
    return synthetic_serve_json(tmp_path_factory.mktemp("fixes2-filters") / "serve.json",
                                max_batch="4,8", repeats="2")


@pytest.fixture(scope="module")
def precision_json(tmp_path_factory) -> Path:
    """A real FP32-vs-FP16 comparison (ONNX Runtime CPU) whose FP16 variant fails at the
    node 'square' (localised)."""
    import onnx

    from trtcheck.load.precision_models import build_overflow_model
    from trtcheck.measure.precision import compare_onnx_precisions
    from trtcheck.measure.runner import new_results
    from trtcheck.results import save_results

    d = tmp_path_factory.mktemp("fixes2-precision")
    onnx.save_model(build_overflow_model(), str(d / "m.onnx"))
    res = new_results()
    res.precision = compare_onnx_precisions(d / "m.onnx", ["fp16"], sample_count=1, seed=0)
    return save_results(res, d / "results.json")


def values(text: str, results) -> list[tuple[str, object]]:
    p = M.parse_path(text)
    M.check_path(p)
    return [(v.path, v.value) for v in M.evaluate_path(p, results)]


def test_multi_condition_filter_selects_the_one_configuration(serve_json):
    res = load_results(serve_json)
    want = res.serve.config("burst:16", 0, 8)
    assert want is not None
    idx = res.serve.configs.index(want)
    got = values("serve.configs[window_ms=0,max_batch_size=8].p99_ms", res)
    # before the fix: [] (the value "0,max_batch_size=8" matched nothing, silently)
    assert got == [(f"serve.configs[{idx}].p99_ms", want.p99_ms)]
    # the same number parsing as single filters: 0.0 / 8.0 / spaces match too
    assert values("serve.configs[ window_ms = 0.0 , max_batch_size=8.0 ].p99_ms", res) == got
    assert values("len(serve.configs[window_ms=2,max_batch_size=4])", res)[0][1] == 1
    assert values("len(serve.configs[window_ms=2,max_batch_size=16])", res)[0][1] == 0


def test_dotted_field_and_quoted_values(serve_json):
    res = load_results(serve_json)
    got = values("serve.configs[load.kind=burst,window_ms=2].max_batch_size", res)
    assert sorted(v for _, v in got) == [4, 8]
    # a quoted value may hold ':' ',' or ']'
    assert len(values("serve.configs[load.label='burst:16'].p50_ms", res)) == 4
    assert values("len(serve.configs[load.label='burst:16,x]'])", res)[0][1] == 0


def test_filters_nest_inside_filtered_items(serve_json):
    res = load_results(serve_json)
    cfg = res.serve.config("burst:16", 0, 8)
    rep = cfg.repeats[1]
    part = next(w for w in rep.waterfall if w.name == "compute_ms")
    got = values("serve.configs[window_ms=0,max_batch_size=8].repeats[repeat=1]"
                 ".waterfall[name=compute_ms].median_ms", res)
    assert [v for _, v in got] == [part.median_ms]
    got = values("serve.configs[window_ms=0].repeats[0].p99_ms", res)
    zero = [c for c in res.serve.configs if c.window_ms == 0]
    assert [v for _, v in got] == [c.repeats[0].latency.p99_ms for c in zero]
    # raw samples follow the nested item: a computed percentile works there too
    got = values("serve.configs[window_ms=2,max_batch_size=4].repeats[repeat=0].p50_ms", res)
    assert len(got) == 1 and got[0][1] > 0


def test_filters_on_a_dict_of_records_and_nested_lists(precision_json):
    res = load_results(precision_json)
    v = res.precision.variants["fp16"]
    assert values("precision.variants[label=fp16].max_abs_error", res) == [
        ("precision.variants[fp16].max_abs_error", v.max_abs_error)]
    layer = next(x for x in v.localization.first_failing if x.node == "square")
    got = values("precision.variants[precision=fp16].localization"
                 ".first_failing[op_type=Pow,node=square].max_abs_error", res)
    assert [x for _, x in got] == [layer.max_abs_error]
    assert values("len(precision.variants[passed=false])", res)[0][1] == 1
    assert values("len(precision.variants[passed=true])", res)[0][1] == 0


@pytest.mark.parametrize("path,fragment,hint", [
    ("serve.configs[window_ms=0][max_batch_size=8].p99_ms", "two selectors on one list",
     "configs[window_ms=0,max_batch_size=8]"),
    ("serve.configs[window_ms=0][1].p99_ms", "two selectors on one list", "one selector"),
    ("serve.configs[window_ms=0 and max_batch_size=8].p99_ms", "holds '='", "commas"),
    ("serve.configs[window_ms=0,8].p99_ms", "'8' is not FIELD=VALUE", "commas"),
    ("serve.configs[window_ms>=2].p99_ms", "equality only", "[*]"),
    ("serve.configs[window_ms!=2].p99_ms", "equality only", "[*]"),
    ("serve.configs[window_ms>2].p99_ms", "equality only", "[*]"),
    ("serve.configs[window_ms=0,max_batch_size<8].p99_ms", "equality only", "[*]"),
    ("serve.configs[window_ms=0ms].p99_ms", "is a number", "[window_ms=0]"),
    ("serve.configs[window_ms=0,window_ms=2].p99_ms", "tests window_ms twice", "one"),
    ("serve.configs[load=burst].p99_ms", "is a LoadSpec", "load.kind"),
    ("serve.configs[load.knd=burst].p99_ms", "no field 'knd'", "kind"),
    ("precision.variants[passed=maybe].max_abs_error", "true/false", "passed=true"),
    ("inspection.op_histogram[count=3]", "cannot apply to the dict", "[KEY]"),
])
def test_unsupported_forms_are_refused_clearly(path, fragment, hint):
    with pytest.raises(M.MetricPathError) as ei:
        M.check_path(M.parse_path(path))
    assert fragment in ei.value.message, ei.value.message
    assert hint in (ei.value.hint or ""), ei.value.hint


def _gate(tmp_path, results, policy, capsys):
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy)
    with pytest.raises(SystemExit) as e:
        main(["gate", str(results), "--policy", str(pol)])
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


def test_gate_end_to_end(serve_json, tmp_path, capsys):
    code, out, err = _gate(tmp_path, serve_json, "version: 1\nbudgets:\n"
                           "  - serve.configs[window_ms=0,max_batch_size=8].mean_batch_size >= 1\n"
                           "  - serve.configs[load.kind=burst,window_ms=2].repeats[repeat=0]"
                           ".max_batch_size >= 1\n", capsys)
    assert code == 0, out + err
    assert "matched nothing" not in out
    # a form that cannot be supported: exit 2 naming the policy line and the alternative
    code, out, err = _gate(tmp_path, serve_json, "version: 1\nbudgets:\n"
                           "  - serve.configs[window_ms=0][max_batch_size=8].p99_ms <= 1 s\n",
                           capsys)
    assert code == 2 and out == ""
    assert "policy.yaml:3:" in err and "[window_ms=0,max_batch_size=8]" in err
    assert len(err.strip().splitlines()) == 1


def test_values_may_hold_comparison_characters(serve_json):
    # only FIELD<op> at the start of a condition is a comparison; '->' inside a value is text
    res = load_results(serve_json)
    assert values("len(serve.configs[load.label=a->b])", res)[0][1] == 0
    assert values("len(serve.configs[load.label='burst:16'])", res)[0][1] == 4


def test_quotes_open_only_at_the_start_of_a_value(serve_json):
    from trtcheck.analyze.gate import parse_policy

    res = load_results(serve_json)
    # an apostrophe inside a value is text (it used to be: '[' ... first ']')
    assert values("len(serve.configs[load.label=it's])", res)[0][1] == 0
    assert values("len(serve.configs[load.label= 'a,]b' ,window_ms=0])", res)[0][1] == 0
    pol = parse_policy("budgets:\n  - len(engine.layers[name=it's]) == 0\n"
                       "  - \"len(serve.configs[load.label='a==b']) == 0\"\n"
                       "  - \"len(inspection.lints[code=x[31m]) == 0\"\n")
    assert [r.op for r in pol.rules] == ["==", "==", "=="]
    assert pol.rules[1].path.segments[1].selectors[0].conditions() == (("load.label", "a==b"),)
