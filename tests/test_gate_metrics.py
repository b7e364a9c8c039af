"""Metric paths, units and directions (trtcheck.analyze.metrics)."""

from __future__ import annotations

import gate_synth as g
import numpy as np
import pytest

from trtcheck.analyze import metrics as M
from trtcheck.stats import percentile


@pytest.fixture(scope="module")
def res():
    fp16 = g.bench_run("ort-fp16", {1: 1.5, 8: 6.0}, 300, seed=7, precision="fp16")
    return g.results(seed=1, n=600, extra_runs=[fp16])


def one(text, res):
    p = M.parse_path(text)
    M.check_path(p)
    vals = M.evaluate_path(p, res)
    assert len(vals) == 1, vals
    return vals[0]


def test_primary_run_and_stats_shorthand(res):
    b8 = res.bench[0].batch(8)
    v = one("bench.batch[8].p99_ms", res)
    assert v.value == b8.stats.p99_ms
    assert one("bench.batch[8].stats.p99_ms", res).value == b8.stats.p99_ms
    assert one("bench[0].batches[8].median_ms", res).value == b8.stats.median_ms
    # the value is a statistic of the raw samples: the gate can bootstrap it
    assert v.stat == M.SampleStat("quantile", 0.99)
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
    vals = M.evaluate_path(M.parse_path("bench.batch[*].median_ms"), res)
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
    with pytest.raises(M.MetricPathError) as ei:
        M.check_path(M.parse_path(text))
    assert needle in ei.value.message
    if hint:
        assert hint in (ei.value.hint or "")


def test_missing_data_is_not_a_schema_error(res):
    p = M.parse_path("bench.batch[16].p99_ms")
    M.check_path(p)  # valid in the schema
    with pytest.raises(M.MetricMissing, match="present: batch_size 1, 8"):
        M.evaluate_path(p, res)
    with pytest.raises(M.MetricMissing, match="no item with label nope"):
        M.evaluate_path(M.parse_path("bench[nope].batch[8].p99_ms"), res)
    empty = res.model_copy(update={"bench": [], "inspection": None})
    with pytest.raises(M.MetricMissing):
        M.evaluate_path(M.parse_path("bench.batch[8].p99_ms"), empty)
    with pytest.raises(M.MetricMissing):
        M.evaluate_path(M.parse_path("inspection.parameter_bytes"), empty)


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
    assert M.infer_direction(leaf) == direction


@pytest.mark.parametrize("raw,leaf,expect", [
    ("5 ms", "p99_ms", 5.0), ("250us", "p99_ms", 0.25), ("0.5 s", "p99_ms", 500.0),
    (5, "p99_ms", 5.0), ("2 GiB", "device_memory_bytes", 2 * 2**30),
    ("100 MB", "parameter_bytes", 100e6), ("1500 samples/s", "throughput_samples_per_s", 1500),
    ("40 qps", "throughput_queries_per_s", 40), ("1e3 /s", "throughput_samples_per_s", 1000),
])
def test_units(raw, leaf, expect):
    assert M.parse_quantity(raw, M.metric_unit(leaf)) == pytest.approx(expect)


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
    with pytest.raises(M.UnitError) as ei:
        M.parse_quantity(raw, M.metric_unit(leaf))
    assert needle in ei.value.message or needle in (ei.value.hint or "")


def test_schema_paths_lists_known_metrics():
    paths = M.schema_paths()
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
        p = M.parse_path(text)
        M.check_path(p, root=FutureResults)
        (v,) = M.evaluate_path(p, fut)
        assert v.value == pytest.approx(expect)
        assert v.samples is not None and v.samples.size == 700 and v.stat is not None
    with pytest.raises(M.MetricPathError) as ei:
        M.check_path(M.parse_path("serve.repeets[0].p99_ms"), root=FutureResults)
    assert "did you mean 'repeats'" in (ei.value.hint or "")


def test_list_metrics_round_trips_through_the_path_language(res):
    items = M.list_metrics(res)
    paths = [p for p, _ in items]
    assert "bench.batch[8].p99_ms" in paths
    assert "bench[ort-fp16].batch[8].throughput_samples_per_s" in paths
    assert "inspection.opset['']" in paths
    assert not any("samples_ms" in p for p in paths)
    for p, v in items:
        pp = M.parse_path(p)
        M.check_path(pp)
        (got,) = M.evaluate_path(pp, res)
        assert got.value == v, p
