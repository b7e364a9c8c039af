import json

import pytest

from trtcheck.errors import InputError, SchemaError
from trtcheck.fingerprint import collect_environment
from trtcheck.results import (
    SCHEMA_VERSION,
    BackendInfo,
    BatchResult,
    BenchRun,
    BenchSettings,
    Results,
    ToolInfo,
    load_results,
    results_from_json,
    results_to_json,
    save_results,
)
from trtcheck.stats import summarize


def make_results(samples=(1.0, 1.1, 0.9, 1.05)) -> Results:
    st = summarize(samples)
    run = BenchRun(
        label="fake-fp32", model_path="m.onnx",
        backend=BackendInfo(name="fake", version="0", device="CPU", providers=["X"]),
        settings=BenchSettings(warmup_s=0, warmup_min_iterations=0, min_duration_s=0,
                               min_samples=1, max_duration_s=1, max_samples=10,
                               batch_sizes=[1], input_source="random-uniform", seed=0),
        batches=[BatchResult(batch_size=1, input_shapes={"x": [1, 3]}, samples_ms=list(samples),
                             components_ms={"gpu_compute_ms": [0.5] * len(samples)},
                             stats=st, throughput_queries_per_s=1000 / st.median_ms,
                             throughput_samples_per_s=1000 / st.median_ms,
                             measured_duration_s=0.1, stopped_by="min_reached")])
    return Results(tool=ToolInfo(version="0.1.0", command=["trtcheck", "bench"]),
                   created_utc="2026-11-29T00:00:00Z", environment=collect_environment(),
                   bench=[run])


def test_round_trip_is_exact(tmp_path):
    r = make_results()
    path = save_results(r, tmp_path / "r.json")
    back = load_results(path)
    assert back == r
    assert results_to_json(back) == results_to_json(r)
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["bench"][0]["batches"][0]["samples_ms"] == [1.0, 1.1, 0.9, 1.05]
    assert data["environment"]["python_version"]


def test_newer_major_schema_is_refused():
    data = json.loads(results_to_json(make_results()))
    data["schema_version"] = f"{int(SCHEMA_VERSION.split('.')[0]) + 1}.0"
    with pytest.raises(SchemaError, match="newer") as info:
        results_from_json(json.dumps(data))
    assert data["schema_version"] in info.value.message and SCHEMA_VERSION in info.value.message


def test_unknown_key_is_ignored_and_named(caplog):
    data = json.loads(results_to_json(make_results()))
    data["bench"][0]["batches"][0]["p99"] = 3
    with caplog.at_level("WARNING", logger="trtcheck"):
        back = results_from_json(json.dumps(data))
    assert back == make_results().model_copy(update={"created_utc": back.created_utc,
                                                      "environment": back.environment})
    assert len(caplog.records) == 1 and "bench.0.batches.0.p99" in caplog.records[0].message


@pytest.mark.parametrize("text,err", [("not json", "not JSON"), ("[1, 2]", "not a trtcheck"),
                                      ('{"a": 1}', "no schema_version")])
def test_not_results(text, err):
    with pytest.raises(InputError, match=err):
        results_from_json(text)


def test_load_missing_and_directory(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_results(tmp_path / "nope.json")
    with pytest.raises(InputError, match="directory"):
        load_results(tmp_path)


def test_environment_fingerprint_fields():
    env = collect_environment()
    assert env.cpu_count >= 1 and env.python_version.count(".") == 2
    assert "numpy" in env.packages and "onnxruntime" in env.packages
    key = env.comparable_key()
    assert set(key) == {"cpu_model", "gpus", "driver", "runtimes"}


def test_non_finite_floats_round_trip_as_strict_json(tmp_path):
    r = make_results()
    r.bench[0].batches[0].throughput_queries_per_s = float("inf")
    r.bench[0].batches[0].stats.cv = float("nan")
    text = results_to_json(r)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    back = results_from_json(text)
    assert back.bench[0].batches[0].throughput_queries_per_s == float("inf")
    assert back.bench[0].batches[0].stats.cv != back.bench[0].batches[0].stats.cv  # NaN
