"""The published schemas agree with the reader and with what every command prints:
``trtcheck schema KIND`` for each JSON document kind, open within a major version."""

from __future__ import annotations

import copy
import json
import logging
import re
from pathlib import Path

import jsonschema
import onnx
import pytest

from cli_helper import invoke
from onnx_builders import small_classifier
from trtcheck.errors import SchemaError
from trtcheck.report.documents import DOCUMENT_KINDS
from trtcheck.results import SCHEMA_VERSION
from trtcheck.results.migrate import migrate
from trtcheck.results.model import parse_schema_version, results_from_json

REPO = Path(__file__).resolve().parents[1]
INPUTS = REPO / "tests" / "gold" / "inputs"
EXPORTS = REPO / "tests" / "data" / "trtexec-exports"
BRIEF_KINDS = {"results", "advise", "inspect", "gate", "gate-metrics", "compare",
               "preflight", "build"}


def _current(name: str) -> dict:
    """A fixed input document written as this major version would write it (the gold
    inputs are of schema 1.4: migrated, with the current version)."""
    data = json.loads((INPUTS / name).read_text())
    ours = parse_schema_version(SCHEMA_VERSION)[0]
    data = migrate(data, parse_schema_version(data["schema_version"])[0], ours)
    data["schema_version"] = SCHEMA_VERSION
    return data


def _schema(kind: str) -> jsonschema.Draft202012Validator:
    res = invoke("schema", kind)
    assert res.returncode == 0, res.stderr
    schema = json.loads(res.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _objects(node, path=()):
    """Every JSON object of a document with its path (the first two items of a list)."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from _objects(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:2]):
            yield from _objects(v, path + (i,))


def _reads(data) -> bool:
    logging.disable(logging.WARNING)
    try:
        results_from_json(json.dumps(data))
        return True
    except SchemaError:
        return False
    finally:
        logging.disable(logging.NOTSET)


def test_every_kind_has_a_schema_and_list_names_them():
    assert BRIEF_KINDS <= set(DOCUMENT_KINDS)
    res = invoke("schema", "--list")
    assert res.returncode == 0
    assert [ln.split("\t")[0] for ln in res.stdout.splitlines()] == list(DOCUMENT_KINDS)
    for kind in DOCUMENT_KINDS:
        schema = _schema(kind).schema
        k = schema["properties"]["kind"]
        assert k.get("const") == kind or (kind == "results" and kind in k.get("enum", []))
        # the reader takes a results file without kind as results; nothing without a version
        assert {"schema_version"} | ({"kind"} if kind != "results" else set()) \
            <= set(schema["required"])
    bad = invoke("schema", "nonesuch")
    assert bad.returncode == 2 and bad.stderr.startswith("error: ")
    assert len(bad.stderr.strip().splitlines()) == 1 and "gate-metrics" in bad.stderr



def test_schema_help_names_the_kinds_list_names():
    res = invoke("schema", "--help")
    assert res.returncode == 0
    text = re.sub(r"-\s+", "-", " ".join(res.stdout.split()))  # undo click's wrapping
    found = re.search(r"JSON document of KIND \((.*?): `trtcheck schema --list`\)", text)
    assert found, text
    assert found.group(1).split(", ") == list(DOCUMENT_KINDS)

def test_a_future_minor_file_with_unknown_fields_validates_and_reads(tmp_path):
    data = _current("full.json")
    major, minor = (int(x) for x in SCHEMA_VERSION.split("."))
    data["schema_version"] = f"{major}.{minor + 4}"
    data["sign_off"] = {"by": "release manager"}
    data["bench"][0]["batches"][0]["stats"]["p999_ms"] = 9.5
    data["serve"]["configs"][0]["energy_j"] = 1.25
    data["advice"]["recommendation"]["why_not_more"] = ["memory"]
    validator = _schema("results")
    assert validator.is_valid(data)
    p = tmp_path / "future.json"
    p.write_text(json.dumps(data))
    res = invoke("gate", str(p), "--list-metrics")
    assert res.returncode == 0, res.stderr
    notes = [ln for ln in res.stderr.splitlines() if "unknown field" in ln]
    assert len(notes) == 1 and "sign_off" in notes[0] and "p999_ms" in notes[0]
    assert "bench.batch[1].p99_ms" in res.stdout
    # the next major version is refused by both
    data["schema_version"] = f"{major + 1}.0"
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(data)
    assert not _reads(data)


@pytest.mark.parametrize("name,sections", [
    ("live.json", None), ("bench_a.json", None),
    # the sections the others lack (all of full.json is slow to read 100 times)
    ("full.json", {"advice", "precision", "verdict"})])
def test_the_schema_accepts_an_unknown_field_exactly_where_the_reader_does(name, sections):
    """Inject an unknown field into every object of a real document: the schema and the
    reader agree on each (open records; typed maps such as environment.packages and
    parts_ms closed); a known field of a wrong type is refused by both."""
    validator = _schema("results")
    data = _current(name)
    assert validator.is_valid(data)
    opened = closed = 0
    for path, _ in list(_objects(data)):
        if sections is not None and (not path or path[0] not in sections):
            continue
        for value in (1,):
            d = copy.deepcopy(data)
            node = d
            for k in path:
                node = node[k]
            node["zz_unknown_field"] = value
            schema_ok = validator.is_valid(d)
            assert schema_ok == _reads(d), (path, value, schema_ok)
            opened += schema_ok
            closed += not schema_ok
    assert opened > 20 and (closed >= 1 or sections is not None)
    d = copy.deepcopy(data)
    d["tool"]["version"] = 3
    assert not validator.is_valid(d) and not _reads(d)


def test_every_command_json_validates_against_its_schema(tmp_path, monkeypatch):
    for name in ("full.json", "live.json", "bench_a.json", "bench_b.json"):
        (tmp_path / name).write_text(json.dumps(_current(name)))
    onnx.save(small_classifier(seed=0), str(tmp_path / "small.onnx"))
    policy = tmp_path / "gate.yaml"
    policy.write_text("budgets:\n  - bench.batch[8].p99_ms <= 12 ms\n"
                      "  - inspection.parameter_bytes <= 1 GiB\n"
                      "baseline:\n  - bench.batch[*].median_ms: 5%\n")
    monkeypatch.chdir(tmp_path)
    exports = [str(p) for p in sorted((EXPORTS / "resnet18-a100-fp16").glob("*.json"))]
    runs = {
        "advise": [["advise", "--latency-curve", "1:2,8:6", "--arrival-rate", "500"],
                   ["advise", "--from", "full.json", "--arrival-rate", "500"],
                   ["advise", "--from", "live.json", "--arrival-rate", "300"]],
        "inspect": [["inspect", "small.onnx"], ["inspect", *exports]],
        "gate": [["gate", "bench_b.json", "--policy", "gate.yaml", "--baseline",
                  "bench_a.json"]],
        "gate-metrics": [["gate", "full.json", "--list-metrics"],
                         ["gate", "live.json", "--list-metrics"]],
        "compare": [["compare", "bench_a.json", "bench_b.json"],
                    ["compare", "full.json", "full.json"]],
        "results": [["bench", "small.onnx", "--batch", "1,2", "--warmup", "0",
                     "--min-duration", "0.05", "--min-samples", "5"]],
        # a TensorRT-RTX engine built on the CPU (ahead of time), then its pre-flight,
        # alone and with a TensorRT load log
        "build": [["build", "small.onnx", "--runtime", "tensorrt_rtx", "--precision",
                   "fp32", "--shapes", "x:1x3x32x32", "-o", "engines"]],
        "preflight": [["preflight", "engines/small.fp32.plan"],
                      ["preflight", "--log", "trt.log"],
                      ["preflight", "engines/small.fp32.plan", "--log", "trt.log"]],
    }
    (tmp_path / "trt.log").write_text(
        "[E] [TRT] IRuntime::deserializeCudaEngine: Error Code 1: Serialization "
        "(Serialization assertion stdVersionRead == kSERIALIZATION_VERSION failed."
        "Version tag does not match. Note: Current Version: 239, Serialized Engine "
        "Version: 238)\n")
    for kind, commands in runs.items():
        validator = _schema(kind)
        for args in commands:
            res = invoke(*args, "--format", "json") if "--format" not in args \
                else invoke(*args)
            # 3: the plan cannot load here (no GPU), which the document says
            assert res.returncode in (0, 1, 3), (args, res.stderr[-2000:])
            doc = json.loads(res.stdout)
            assert doc["kind"] == kind, args
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
            assert not errors, (args, [f"{list(e.path)}: {e.message[:200]}"
                                       for e in errors[:3]])
            doc["kind"] = "other"
            assert not validator.is_valid(doc)


def test_imported_measurements_validate_and_every_kind_is_printable():
    """A results document read from a perf_analyzer CSV or Triton statistics validates
    (what report --from writes as results.json); every registered kind can be printed."""
    from trtcheck.cli.common import JSON_KINDS
    from trtcheck.results.documents import load_results_input

    validator = _schema("results")
    for name in ("concurrency.csv", "request-rate.csv", "tb_linear-stats.json"):
        res = load_results_input(str(REPO / "tests" / "data" / "perf-analyzer" / name))
        doc = json.loads(res.model_dump_json())
        assert not list(validator.iter_errors(doc)), name
    assert set(DOCUMENT_KINDS) <= set(JSON_KINDS)
