import json

import pytest

from trtcheck.errors import InputError, SchemaError
from trtcheck.fingerprint import collect_environment
from trtcheck.results import (
    SCHEMA_VERSION,
    load_results,
    results_from_json,
    results_to_json,
    save_results,
)
from tests.factories import make_results


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


# --- consistency of values the schema's types accept -----------------------------------

def _serve_doc(tmp_path_factory=None):
    import tempfile
    from pathlib import Path

    from conftest import synthetic_serve_json

    out = Path(tempfile.mkdtemp()) / "serve.json"
    return json.loads(synthetic_serve_json(out).read_text())


@pytest.fixture(scope="module")
def serve_doc():
    return _serve_doc()


def _first_part(repeat: dict) -> str:
    return next(iter(repeat["parts_ms"]))


SERVE_BREAKS = {
    "empty repeats": (lambda d: d["serve"]["configs"][0].update(repeats=[]), "no repeats"),
    "median repeat out of range": (lambda d: d["serve"]["configs"][0].update(median_repeat=7),
                                   "median_repeat is 7"),
    "unequal parts": (lambda d: (lambda r: r["parts_ms"][_first_part(r)].pop())(
        d["serve"]["configs"][0]["repeats"][0]), "must be aligned"),
    "NaN part": (lambda d: (lambda r: r["parts_ms"][_first_part(r)].__setitem__(0, "NaN"))(
        d["serve"]["configs"][0]["repeats"][0]), "is nan"),
    "infinite latency": (lambda d: d["serve"]["configs"][0]["repeats"][0]["latencies_ms"]
                         .__setitem__(0, "Infinity"), "is inf"),
    "batch 2**63": (lambda d: d["serve"]["configs"][0].update(max_batch_size=2**63),
                    "batch sizes are 1.."),
    "batch sizes short": (lambda d: d["serve"]["configs"][0]["repeats"][0].update(
        batch_sizes=[]), "batch_sizes has 0 entries"),
    "zero repeats setting": (lambda d: d["serve"]["settings"].update(repeats=0),
                             "repeats is 0"),
}


@pytest.mark.parametrize("case", sorted(SERVE_BREAKS))
def test_inconsistent_serve_values_are_schema_errors(serve_doc, case):
    import copy

    doc = copy.deepcopy(serve_doc)
    change, needle = SERVE_BREAKS[case]
    change(doc)
    with pytest.raises(SchemaError) as e:
        results_from_json(json.dumps(doc), "r.json")
    assert needle in e.value.message and "Value error" not in e.value.message


@pytest.mark.parametrize("change,needle", [
    (lambda b: b.update(batch_size=2**63), "batch sizes are 1.."),
    (lambda b: b.update(batch_size=0), "batch sizes are 1.."),
    (lambda b: b["samples_ms"].__setitem__(0, -1.0), "samples_ms[0] is -1.0"),
    (lambda b: b.update(components_ms={"gpu_compute_ms": [1.0]}), "must be aligned"),
])
def test_inconsistent_bench_values_are_schema_errors(change, needle):
    doc = json.loads(results_to_json(make_results()))
    change(doc["bench"][0]["batches"][0])
    with pytest.raises(SchemaError) as e:
        results_from_json(json.dumps(doc), "r.json")
    assert needle in e.value.message


def test_duplicate_batch_rows_are_a_schema_error():
    doc = json.loads(results_to_json(make_results()))
    doc["bench"][0]["batches"].append(doc["bench"][0]["batches"][0])
    with pytest.raises(SchemaError, match="batch size 1 appears twice"):
        results_from_json(json.dumps(doc), "r.json")


@pytest.mark.parametrize("text,needle", [
    ("[" * 200000 + "]" * 200000, "nested too deeply"),
    ('{"schema_version": ' + "9" * 5000 + "}", "cannot convert"),
])
def test_hostile_json_is_one_input_error(text, needle):
    with pytest.raises(InputError) as e:
        results_from_json(text, "r.json")
    assert needle in e.value.message


@pytest.mark.parametrize("command", [["advise", "--arrival-rate", "100"], ["report"]])
def test_advise_and_report_refuse_inconsistent_results(serve_doc, tmp_path, command):
    import copy

    from cli_helper import invoke as run_main

    doc = copy.deepcopy(serve_doc)
    doc["serve"]["configs"][0]["repeats"] = []
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    args = [command[0], "--from", str(p), *command[1:]]
    if command[0] == "report":
        args += ["-o", str(tmp_path / "rep")]
    res = run_main(*args)
    assert res.returncode == 2, res.stderr
    assert "no repeats" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "rep").exists()


def test_lone_surrogates_are_escaped_and_written(tmp_path):
    """A file name with an undecodable byte (Python keeps it as a lone surrogate) or a
    "\\ud800" read from JSON reaches the results: the file is written, names escaped,
    and no temporary file is left."""
    from trtcheck.results import save_results

    r = make_results()
    bad = "m\udcff.onnx"
    r = r.model_copy(update={"bench": [r.bench[0].model_copy(update={"model_path": bad})]})
    out = tmp_path / "r.json"
    save_results(r, out)
    back = json.loads(out.read_text(encoding="utf-8"))
    assert back["bench"][0]["model_path"] == "m\\udcff.onnx"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    doc = json.loads(results_to_json(make_results()))
    doc["bench"][0]["label"] = "x\ud800"
    parsed = results_from_json(json.dumps(doc), "r.json")  # JSON "\ud800" escape
    assert parsed.bench[0].label == "x\\ud800"
    results_to_json(parsed)


def test_results_file_from_a_fifo_or_device_is_refused(tmp_path):
    import os

    from trtcheck.results import load_results

    os.mkfifo(tmp_path / "r.json")
    with pytest.raises(InputError, match="FIFO"):
        load_results(tmp_path / "r.json")
    with pytest.raises(InputError, match="device"):
        load_results("/dev/zero")
    (tmp_path / "link.json").symlink_to(tmp_path / "gone.json")
    with pytest.raises(InputError, match="a link to a missing file"):
        load_results(tmp_path / "link.json")
