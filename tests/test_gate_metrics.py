"""Gate metric paths (trtcheck.analyze.gate.metricpath.metric_grammar, metric_resolver, metric_checks):
the path language (runs by label, filters, nested and multi-condition filters, dotted dict
keys, functions), units and directions, schema checks and --list-metrics."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from trtcheck.analyze.gate.gate_policy import parse_policy
from trtcheck.analyze.gate.metricpath.metric_checks import (
    check_path,
    fold_dotted_keys,
    infer_direction,
    schema_paths,
)
from trtcheck.analyze.gate.metricpath.metric_grammar import MetricMissing, MetricPathError, parse_path
from trtcheck.analyze.gate.metricpath.metric_resolver import SampleStat, evaluate_path, list_metrics
from trtcheck.cli import main
from trtcheck.results import SCHEMA_VERSION, load_results
from trtcheck.stats import percentile
from trtcheck.units import UnitError, metric_unit, parse_quantity

from trtcheck.testing import synthetic_results as g
from conftest import gate_output as _gate_output
from conftest import synthetic_serve_json


@pytest.fixture(scope="module")
def res():
    fp16 = g.bench_run("ort-fp16", {1: 1.5, 8: 6.0}, 300, seed=7, precision="fp16")
    return g.results(seed=1, n=600, extra_runs=[fp16])


def one(text, res):
    p = parse_path(text)
    check_path(p)
    vals = evaluate_path(p, res)
    assert len(vals) == 1, vals
    return vals[0]


def test_primary_run_and_stats_shorthand(res):
    b8 = res.bench[0].batch(8)
    v = one("bench.batch[8].p99_ms", res)
    assert v.value == b8.stats.p99_ms
    assert one("bench.batch[8].stats.p99_ms", res).value == b8.stats.p99_ms
    assert one("bench[0].batches[8].median_ms", res).value == b8.stats.median_ms
    # the value is a statistic of the raw samples: the gate can bootstrap it
    assert v.stat == SampleStat("quantile", 0.99)
    assert v.samples is not None and v.samples.size == 600


def test_run_by_label_and_throughput_is_inverse_median(res):
    run = res.bench[1]
    v = one("bench[ort-fp16].batch[8].throughput_samples_per_s", res)
    assert v.value == run.batch(8).throughput_samples_per_s
    assert v.stat is not None and v.stat.kind == "inverse_median"
    assert float(v.stat.of(v.samples)) == pytest.approx(v.value, rel=1e-9)


def test_other_sections_and_functions(res):
    assert one("inspection.parameter_bytes", res).value == 46_800_000
    assert one("inspection.op_histogram[Conv]", res).value == 20
    assert one("len(inspection.lints)", res).value == 1
    assert one("len(inspection.lints[severity=error])", res).value == 0
    assert one("len(inspection.lints[code=onnx-dynamic-batch])", res).value == 1
    assert one("len(bench)", res).value == 2  # a list leaf counts its items
    assert one("len(bench[*])", res).value == 2
    assert one("bench[1].backend.precision", res).value == "fp16"
    assert one("environment.gpus[0].name", res).value == "NVIDIA H200"
    expect = max(b.stats.p99_ms for r in res.bench for b in r.batches)
    assert one("max(bench[*].batch[*].p99_ms)", res).value == expect


def test_star_expands_with_keys(res):
    vals = evaluate_path(parse_path("bench.batch[*].median_ms"), res)
    assert [v.path for v in vals] == ["bench.batch[1].median_ms", "bench.batch[8].median_ms"]
    assert [v.match_key for v in vals] == [("1",), ("8",)]


def test_computed_percentile_from_raw_samples(res):
    v = one("bench.batch[8].p99.9_ms", res)
    assert v.value == pytest.approx(percentile(res.bench[0].batch(8).samples_ms, 0.999))


@pytest.mark.parametrize("text,needle,hint", [
    ("bench.batch[8].p99ms", "no field 'p99ms'", "p99_ms"),
    ("inspection.paramter_bytes", "no field 'paramter_bytes'", "parameter_bytes"),
    ("bench.bach[8].p99_ms", "no field 'bach'", "batch"),
    ("bench.batch[8].p100_ms", "out of range", "p99.9_ms"),
    ("bench.batch[8].p0_ms", "out of range", None),
    ("bench.batch[8]", "not a value", "p99_ms"),
    ("inspection.lints", "not a single value", "len("),
    ("inspection.parameter_bytes.x", "single value", None),
    ("avg(bench.batch[8].p99_ms)", "unknown function", None),
    ("bench.batch[8", "without ']'", None),
    ("bench.batch[].p99_ms", "empty selector", None),
    ("inspection.lints[colour=red]", "no field 'colour'", None),
    ("min(inspection.lints)", "needs numbers", None),
    ("inspection.p99_ms", "no raw samples", None),
])
def test_static_errors(text, needle, hint):
    with pytest.raises(MetricPathError) as ei:
        check_path(parse_path(text))
    assert needle in ei.value.message
    if hint:
        assert hint in (ei.value.hint or "")


def test_missing_data_is_not_a_schema_error(res):
    p = parse_path("bench.batch[16].p99_ms")
    check_path(p)  # valid in the schema
    with pytest.raises(MetricMissing, match="present: batch_size 1, 8"):
        evaluate_path(p, res)
    with pytest.raises(MetricMissing, match="no item with label nope"):
        evaluate_path(parse_path("bench[nope].batch[8].p99_ms"), res)
    empty = res.model_copy(update={"bench": [], "inspection": None})
    with pytest.raises(MetricMissing):
        evaluate_path(parse_path("bench.batch[8].p99_ms"), empty)
    with pytest.raises(MetricMissing):
        evaluate_path(parse_path("inspection.parameter_bytes"), empty)


def test_component_stats_use_component_samples():
    rng = np.random.default_rng(3)
    tot = rng.lognormal(0, 0.1, 500) + 2.0
    gpu = tot - 1.0
    b = g.batch_result(8, tot)
    from trtcheck.stats import summarize
    b = b.model_copy(update={"components_ms": {"gpu_compute_ms": list(gpu)},
                             "component_stats": {"gpu_compute_ms": summarize(gpu)}})
    r = g.results(n=50)
    r.bench[0].batches[1] = b
    v = one("bench.batch[8].component_stats[gpu_compute_ms].p99_ms", r)
    assert v.value == pytest.approx(percentile(gpu, 0.99))
    assert v.samples is not None and np.allclose(v.samples, gpu)


@pytest.mark.parametrize("leaf,direction", [
    ("p99_ms", "lower"), ("median_ms", "lower"), ("parameter_bytes", "lower"),
    ("throughput_samples_per_s", "higher"), ("throughput_queries_per_s", "higher"),
    ("top1_accuracy", "higher"), ("cosine_similarity", "higher"), ("max_abs_error", "lower"),
    ("len", "lower"), ("p99.9_ms", "lower"), ("batch_size", None), ("cv", "lower"),
])
def test_direction(leaf, direction):
    assert infer_direction(leaf) == direction


@pytest.mark.parametrize("raw,leaf,expect", [
    ("5 ms", "p99_ms", 5.0), ("250us", "p99_ms", 0.25), ("0.5 s", "p99_ms", 500.0),
    (5, "p99_ms", 5.0), ("2 GiB", "device_memory_bytes", 2 * 2**30),
    ("100 MB", "parameter_bytes", 100e6), ("1500 samples/s", "throughput_samples_per_s", 1500),
    ("40 qps", "throughput_queries_per_s", 40), ("1e3 /s", "throughput_samples_per_s", 1000),
])
def test_units(raw, leaf, expect):
    assert parse_quantity(raw, metric_unit(leaf)) == pytest.approx(expect)


@pytest.mark.parametrize("raw,leaf,needle", [
    ("5 sec", "p99_ms", "unknown unit 'sec'"),
    ("5 MiB", "p99_ms", "is a size"),
    ("5 ms", "parameter_bytes", "is a duration"),
    ("1500 queries/s", "throughput_samples_per_s", "counts queries"),
    ("fast", "p99_ms", "not a number"),
    (True, "p99_ms", "must be a number"),
    ("5 ms", "count", "plain number"),
])
def test_unit_errors(raw, leaf, needle):
    with pytest.raises(UnitError) as ei:
        parse_quantity(raw, metric_unit(leaf))
    assert needle in ei.value.message or needle in (ei.value.hint or "")


def test_schema_paths_lists_known_metrics():
    paths = schema_paths()
    assert "bench[*].batches[*].stats.p99_ms" in paths
    assert "inspection.parameter_bytes" in paths


def test_a_section_added_later_is_addressable_without_changes():
    """A serve-like section with ``latencies_ms`` and a ``latency`` stats record works:
    stats shorthand, computed percentiles and bootstrap-able values come for free."""
    from trtcheck.results import LatencyStats, Results
    from trtcheck.results.base import Record
    from trtcheck.stats import summarize

    class Repeat(Record):
        repeat: int
        latencies_ms: list[float]
        latency: LatencyStats | None = None
        throughput_queries_per_s: float

    class ServeLike(Record):
        label: str
        repeats: list[Repeat]

    class FutureResults(Results):
        serve: ServeLike | None = None

    rng = np.random.default_rng(4)
    lat = rng.lognormal(np.log(5), 0.2, 700)
    st = summarize(lat)
    rep = Repeat(repeat=0, latencies_ms=list(lat), latency=st,
                 throughput_queries_per_s=1000 / st.median_ms)
    base = g.results(n=20)
    fut = FutureResults(**base.model_dump(exclude={"serve"}),
                        serve=ServeLike(label="burst", repeats=[rep]))
    for text, expect in [("serve.repeats[0].p99_ms", st.p99_ms),
                         ("serve.repeats[0].latency.median_ms", st.median_ms),
                         ("serve.repeats[0].p99.9_ms", percentile(lat, 0.999))]:
        p = parse_path(text)
        check_path(p, root=FutureResults)
        (v,) = evaluate_path(p, fut)
        assert v.value == pytest.approx(expect)
        assert v.samples is not None and v.samples.size == 700 and v.stat is not None
    with pytest.raises(MetricPathError) as ei:
        check_path(parse_path("serve.repeets[0].p99_ms"), root=FutureResults)
    assert "did you mean 'repeats'" in (ei.value.hint or "")


def test_list_metrics_round_trips_through_the_path_language(res):
    items = list_metrics(res)
    paths = [p for p, _ in items]
    assert "bench.batch[8].p99_ms" in paths
    assert "bench[ort-fp16].batch[8].throughput_samples_per_s" in paths
    assert "inspection.opset['']" in paths
    assert not any("samples_ms" in p for p in paths)
    for p, v in items:
        pp = parse_path(p)
        check_path(pp)
        (got,) = evaluate_path(pp, res)
        assert got.value == v, p


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
    from trtcheck.measure.precision.precision import compare_onnx_precisions
    from trtcheck.measure.bench.runner import new_results
    from trtcheck.results import save_results

    d = tmp_path_factory.mktemp("fixes2-precision")
    onnx.save_model(build_overflow_model(), str(d / "m.onnx"))
    res = new_results()
    res.precision = compare_onnx_precisions(d / "m.onnx", ["fp16"], sample_count=1, seed=0)
    return save_results(res, d / "results.json")


def values(text: str, results) -> list[tuple[str, object]]:
    p = parse_path(text)
    check_path(p)
    return [(v.path, v.value) for v in evaluate_path(p, results)]


def test_multi_condition_filter_selects_the_one_configuration(serve_json):
    res = load_results(serve_json)
    want = res.serve.config("burst:16", 0, 8)
    assert want is not None
    got = values("serve.configs[window_ms=0,max_batch_size=8].p99_ms", res)
    # before the fix: [] (the value "0,max_batch_size=8" matched nothing, silently);
    # a configuration is named by the filter of its key fields
    assert got == [("serve.configs[load.label=burst:16,window_us=0,max_batch_size=8].p99_ms",
                    want.p99_ms)]
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
    zero = [c for c in res.serve.configs if c.window_us == 0]
    assert [v for _, v in got] == [c.repeats[0].latency.p99_ms for c in zero]
    # raw samples follow the nested item: a computed percentile works there too
    got = values("serve.configs[window_ms=2,max_batch_size=4].repeats[repeat=0].p50_ms", res)
    assert len(got) == 1 and got[0][1] > 0


def test_window_filters_in_us_and_in_the_ms_of_schema_1_select_the_same(serve_json):
    """The window is ``window_us`` (microseconds) in the results; a policy written for
    schema 1.x filters on ``window_ms`` (milliseconds) and selects the same items."""
    res = load_results(serve_json)
    assert sorted({c.window_us for c in res.serve.configs}) == [0.0, 2000.0]
    for ms, us in (("0", "0"), ("2", "2000"), ("2.0", "2000.0"), ("0.002e3", "2e3")):
        by_us = values(f"serve.configs[window_us={us},max_batch_size=4].p99_ms", res)
        assert len(by_us) == 1
        assert values(f"serve.configs[window_ms={ms},max_batch_size=4].p99_ms", res) == by_us
    # 2 us is not 2 ms: the new field takes microseconds
    assert values("len(serve.configs[window_us=2])", res)[0][1] == 0
    assert values("len(serve.configs[load.kind=burst,window_ms=2])", res)[0][1] == 2


def test_window_ms_filters_of_a_gate_policy_pass_on_schema_1_and_2_files(tmp_path, capsys):
    """A policy naming ``window_ms`` gates a 1.x file (migrated on load) and the same run
    read as 2.0, with the values the 1.x file holds."""
    import json

    from trtcheck.results import results_to_json

    old = Path(__file__).parent / "data" / "results-1.x" / "full-1.4.json"
    raw = json.loads(old.read_text(encoding="utf-8"))
    assert raw["schema_version"] == "1.4"
    p99 = next(r["measured_p99_ms"] for r in raw["advice"]["serve_predictions"]
               if r["window_ms"] == 2.0)
    new = tmp_path / "full-2.json"
    new.write_text(results_to_json(load_results(old)), encoding="utf-8")
    assert json.loads(new.read_text(encoding="utf-8"))["schema_version"] == SCHEMA_VERSION
    for doc in (old, new):
        res = load_results(doc)
        for path in ("advice.serve_predictions[window_ms=2].measured_p99_ms",
                     "advice.serve_predictions[window_us=2000].measured_p99_ms"):
            assert [v for _, v in values(path, res)] == [p99]
        code, out = _gate_output(tmp_path, doc, "version: 1\nbudgets:\n"
                                 "  - serve.configs[window_ms=2].max_batch_size >= 8\n"
                                 "  - serve.configs[window_us=2000].max_batch_size >= 8\n"
                                 "  - advice.serve_predictions[window_ms=10].measured_mean_batch"
                                 " >= 1\n", capsys)
        assert code == 0, out
        assert "matched nothing" not in out


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
    ("serve.configs[window_ms=0ms].p99_ms", "window_ms is a number", "[window_ms=2]"),
    ("serve.configs[window_us=0ms].p99_ms", "is a number", "[window_us=0]"),
    ("serve.configs[window_ms=0,window_ms=2].p99_ms", "tests window_ms twice", "one"),
    ("serve.configs[window_ms=2,window_us=2000].p99_ms", "window_ms and window_us name the "
     "same field", "one"),
    ("serve.configs[load=burst].p99_ms", "is a LoadSpec", "load.kind"),
    ("serve.configs[load.knd=burst].p99_ms", "no field 'knd'", "kind"),
    ("precision.variants[passed=maybe].max_abs_error", "true/false", "passed=true"),
    ("inspection.op_histogram[count=3]", "cannot apply to the dict", "[KEY]"),
])
def test_unsupported_forms_are_refused_clearly(path, fragment, hint):
    with pytest.raises(MetricPathError) as ei:
        check_path(parse_path(path))
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
    from trtcheck.analyze.gate.gate_policy import parse_policy

    res = load_results(serve_json)
    # an apostrophe inside a value is text (it used to be: '[' ... first ']')
    assert values("len(serve.configs[load.label=it's])", res)[0][1] == 0
    assert values("len(serve.configs[load.label= 'a,]b' ,window_ms=0])", res)[0][1] == 0
    pol = parse_policy("budgets:\n  - len(engine.layers[name=it's]) == 0\n"
                       "  - \"len(serve.configs[load.label='a==b']) == 0\"\n"
                       "  - \"len(inspection.lints[code=x[31m]) == 0\"\n")
    assert [r.op for r in pol.rules] == ["==", "==", "=="]
    assert pol.rules[1].path.segments[1].selectors[0].conditions() == (("load.label", "a==b"),)


REPO = Path(__file__).resolve().parent.parent


def test_fold_turns_dotted_dict_names_into_keys():
    p = fold_dotted_keys(parse_path("precision.variants.fp16.outputs.y.max_abs_error"))
    assert [s.name for s in p.segments] == ["precision", "variants", "outputs",
                                            "max_abs_error"]
    assert p.segments[1].selectors[0].key == "fp16"
    assert p.segments[2].selectors[0].key == "y"
    assert p.text == "precision.variants.fp16.outputs.y.max_abs_error"
    same = parse_path("precision.variants[fp16].max_abs_error")
    assert fold_dotted_keys(same) == same
    op = fold_dotted_keys(parse_path("inspection.op_histogram.Conv"))
    assert op.segments[-1].selectors[0].key == "Conv"
    # lists and records are untouched; unknown names are left for check_path to report
    b = parse_path("bench.batch[8].p99_ms")
    assert fold_dotted_keys(b) == b
    with pytest.raises(MetricPathError):
        check_path(fold_dotted_keys(parse_path("precision.variantz.fp16.passed")))


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

    from trtcheck.analyze.gate.gate_evaluate import evaluate
    from trtcheck.load.precision_models import build_safe_model
    from trtcheck.measure.bench.bench import StopRule
    from trtcheck.measure.precision.precision import compare_onnx_precisions
    from trtcheck.measure.bench.runner import new_results

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


def test_filter_on_a_float_field_matches_integer_text(serve_results_json, tmp_path, capsys):
    # window_ms is stored as 0.0: [window_ms=0] must match it (it matched nothing)
    code, out = _gate_output(tmp_path, serve_results_json, "version: 1\nbudgets:\n"
                      "  - serve.configs[window_ms=0].mean_batch_size >= 1\n"
                      "  - serve.configs[window_ms=2.0].mean_batch_size >= 1\n", capsys)
    assert code == 0, out
    assert "matched nothing" not in out


def test_request_rate_metrics_take_a_request_rate_unit(tmp_path, capsys):
    """`load.rate_per_s` and `arrival_rate_per_s` are requests per second; the gate called
    the unit 'rate/s', refused '1 rate/s' and then hinted "rates take rate/s"."""
    from trtcheck.units import format_quantity, metric_unit, parse_quantity
    for leaf in ("rate_per_s", "arrival_rate_per_s", "capacity_per_instance_per_s"):
        u = metric_unit(leaf)
        assert parse_quantity("300 requests/s", u) == 300.0
        assert parse_quantity("300 qps", u) == 300.0
        assert "rate/s" not in format_quantity(300.0, u)


def test_computed_percentiles_follow_the_recorded_percentile_method():
    """A percentile computed from raw samples (p99.9_ms, p97_ms) uses the method the file
    records in ``percentile_method``, as its stored p99_ms does; a bootstrap of a stored
    percentile uses it too."""
    from trtcheck.stats import percentile_method

    with percentile_method("nearest-rank"):
        nr = g.results(seed=3, n=250)
    lin = g.results(seed=3, n=250)
    st = nr.bench[0].batch(8).stats
    assert st.percentile_method == "nearest-rank"
    samples = np.asarray(nr.bench[0].batch(8).samples_ms)
    for name, q in (("p99.9_ms", 0.999), ("p97_ms", 0.97)):
        v_nr = one(f"bench.batch[8].{name}", nr)
        v_lin = one(f"bench.batch[8].{name}", lin)
        assert v_nr.value == pytest.approx(percentile(samples, q, "nearest-rank"), rel=1e-12)
        assert v_lin.value == pytest.approx(percentile(samples, q, "linear"), rel=1e-12)
        assert v_nr.value != v_lin.value  # 250 samples: the methods differ here
        assert (v_nr.stat.kind, v_nr.stat.method) == ("quantile", "nearest-rank")
        assert v_lin.stat.method == "linear"
    v = one("bench.batch[8].p99_ms", nr)
    assert v.value == st.p99_ms == float(v.stat.of(samples))
    # medians are one number under both methods (the middle sample or the mean of two)
    assert one("bench.batch[8].median_ms", nr).stat == SampleStat("quantile", 0.5)
