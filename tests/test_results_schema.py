"""The published results contract: shipped JSON Schema, versions, forward-compatible reading,
and the schema_version/kind envelope of every JSON document trtcheck prints."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import assert_one_line_error, run_cli
from trtcheck.results import SCHEMA_VERSION
from trtcheck.results.schema import (
    describe_change,
    generate_schema,
    next_version,
    recorded_digests,
    schema_digest,
    shipped_schema,
)
from trtcheck.results.schema import __main__ as schema_main

FAST = ["--warmup", "0", "--min-duration", "0.1", "--min-samples", "5"]


@pytest.fixture
def demo(demo_report) -> Path:
    """The session's real `report --demo` folder (every section); read only."""
    return demo_report


def test_shipped_schema_version_and_history_agree_with_the_model():
    """Fails when the results model changed without `python -m trtcheck.results.schema
    --write` (which bumps the version) and a history line in docs/results-schema.md."""
    assert schema_main.problems() == []
    assert shipped_schema() == generate_schema()
    assert recorded_digests()[SCHEMA_VERSION] == schema_digest(schema_main.model_schema())
    assert schema_main.history_has(SCHEMA_VERSION)


def test_a_model_change_without_a_bump_is_caught(monkeypatch):
    changed = generate_schema()
    changed["properties"]["sign_off"] = {"type": "string"}
    model = schema_main.model_schema()
    model["properties"]["sign_off"] = {"type": "string"}
    monkeypatch.setattr(schema_main, "generate_schema", lambda: changed)
    monkeypatch.setattr(schema_main, "model_schema", lambda: model)
    found = [p for p, _ in schema_main.problems()]
    assert any(f"schema_version is still {SCHEMA_VERSION}" in p for p in found), found
    assert any("differs from the schema generated" in p for p in found), found


def test_docstring_edits_change_no_digest():
    a = generate_schema()
    b = json.loads(json.dumps(a))
    b["description"] = "reworded"
    b["$defs"]["LatencyStats"]["description"] = "reworded"
    assert schema_digest(a) == schema_digest(b)
    b["$defs"]["LatencyStats"]["required"] = ["count"]
    assert schema_digest(a) != schema_digest(b)


def test_change_description_and_bump_kind():
    old = generate_schema()
    new = json.loads(json.dumps(old))
    new["properties"]["sign_off"] = {"type": "object", "properties": {"by": {"type": "string"}}}
    assert describe_change(old, new) == (["sign_off"], [], [])
    removed = json.loads(json.dumps(old))
    del removed["$defs"]["LatencyStats"]["properties"]["cv"]
    added, gone, changed = describe_change(old, removed)
    assert added == [] and "bench[].batches[].stats.cv" in gone
    assert next_version("1.1", major=False) == "1.2" and next_version("1.9", major=True) == "2.0"


def test_trtcheck_schema_validates_the_demo_results(demo, tmp_path):
    res = run_cli("schema")
    assert res.returncode == 0, res.stderr
    schema = json.loads(res.stdout)
    assert schema == shipped_schema()
    data = json.loads((demo / "results.json").read_text())
    assert data["schema_version"] == SCHEMA_VERSION and data["kind"] == "results"
    assert {"bench", "serve", "precision", "advice"} <= {k for k, v in data.items() if v}
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    # a wrong type is a validation error (objects are open, types are not)
    data["bench"][0]["batches"][0]["stats"]["p99_ms"] = "slow"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    # -o writes the same text, and refuses to replace a file without --overwrite
    out = tmp_path / "s.json"
    assert run_cli("schema", "-o", str(out)).returncode == 0
    assert json.loads(out.read_text()) == schema
    assert_one_line_error(run_cli("schema", "-o", str(out)), 2, "exists")


def test_unknown_top_level_field_renders_with_one_note(demo, tmp_path):
    data = json.loads((demo / "results.json").read_text())
    data["sign_off"] = {"by": "release manager", "reasons": ["p99 within budget"]}
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(data))
    res = run_cli("report", "--from", str(newer), "-o", str(tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    notes = [ln for ln in res.stderr.splitlines() if "unknown field" in ln]
    assert len(notes) == 1 and "sign_off" in notes[0] and notes[0].startswith("note: ")
    assert (tmp_path / "r" / "report.html").is_file()


def test_newer_minor_is_read_and_newer_major_refused(demo, tmp_path):
    data = json.loads((demo / "results.json").read_text())
    major, minor = (int(x) for x in SCHEMA_VERSION.split("."))
    data["schema_version"] = f"{major}.{minor + 3}"
    data["bench"][0]["batches"][0]["stats"]["p999_ms"] = 9.0
    p = tmp_path / "minor.json"
    p.write_text(json.dumps(data))
    res = run_cli("gate", str(p), "--list-metrics")
    assert res.returncode == 0, res.stderr
    note = next(ln for ln in res.stderr.splitlines() if ln.startswith("note: "))
    assert f"{major}.{minor + 3}" in note and SCHEMA_VERSION in note and "p999_ms" in note
    data["schema_version"] = f"{major + 1}.0"
    p.write_text(json.dumps(data))
    line = assert_one_line_error(run_cli("report", "--from", str(p), "-o",
                                         str(tmp_path / "x")), 2, "newer")
    assert f"{major + 1}.0" in line and SCHEMA_VERSION in line


def test_files_with_the_integer_version_1_still_read(demo, tmp_path):
    data = json.loads((demo / "results.json").read_text())
    data["schema_version"] = 1
    del data["kind"]
    for run in data["bench"]:
        for b in run["batches"]:
            del b["stats"]["percentile_method"]
    p = tmp_path / "old.json"
    p.write_text(json.dumps(data))
    res = run_cli("gate", str(p), "--list-metrics", "--format", "json")
    assert res.returncode == 0, res.stderr
    assert "unknown field" not in res.stderr


def test_every_printed_json_document_has_version_and_kind(demo, demo_model, tmp_path):
    results = str(demo / "results.json")
    docs = {
        "results": run_cli("bench", str(demo_model), "--batch", "1", *FAST, "--format",
                           "json"),
        "advise": run_cli("advise", "--latency-curve", "1:2,8:6", "--arrival-rate", "500",
                          "--format", "json"),
        "gate-metrics": run_cli("gate", results, "--list-metrics", "--format", "json"),
        "inspect": run_cli("inspect", str(demo_model), "--format", "json"),
        "compare": run_cli("compare", results, results, "--format", "json"),
    }
    policy = tmp_path / "gate.yaml"
    policy.write_text("budgets:\n  - inspection.parameter_bytes <= 1 GiB\n")
    docs["gate"] = run_cli("gate", results, "--policy", str(policy), "--format", "json")
    for kind, res in docs.items():
        assert res.returncode == 0, (kind, res.stderr)
        doc = json.loads(res.stdout)
        assert list(doc)[:2] == ["schema_version", "kind"], kind
        assert doc["schema_version"] == SCHEMA_VERSION and doc["kind"] == kind
    # another kind of document where a results file is expected: one line naming it
    adv = tmp_path / "advice.json"
    adv.write_text(docs["advise"].stdout)
    assert_one_line_error(run_cli("report", "--from", str(adv), "-o", str(tmp_path / "y")),
                          2, "advise document")


def test_a_history_line_goes_into_the_history_table(tmp_path):
    """`--write` adds its line as the last row of the table under "## History", not at
    the end of the file."""
    docs = tmp_path / "results-schema.md"
    docs.write_text("# Results schema\n\n## History\n\n| version | change |\n|---|---|\n"
                    "| 1.0 | first |\n| 1.1 | second |\n\n## Consistency checks\n\ntext\n")
    schema_main.add_history_line("| 2.0 | third |", docs)
    lines = docs.read_text().splitlines()
    assert lines[lines.index("| 1.1 | second |") + 1] == "| 2.0 | third |"
    assert lines[-1] == "text"
    assert schema_main.history_has("2.0", docs)
    plain = tmp_path / "plain.md"
    plain.write_text("no table\n")
    schema_main.add_history_line("| 2.0 | third |", plain)
    assert plain.read_text() == "no table\n| 2.0 | third |\n"


def test_the_generated_schema_names_the_version_it_is_generated_for(monkeypatch):
    """After `--write` bumps the version, the schema it writes names the new version."""
    from trtcheck.results import model as model_module

    monkeypatch.setattr(model_module, "SCHEMA_VERSION", "9.0")
    assert "schema version 9.0;" in generate_schema()["$comment"]
