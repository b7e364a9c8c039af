"""Results files of an earlier major schema read as the current model: schema 1.x held
the batching window in milliseconds (``window_ms``), 2.0 in microseconds (``window_us``)."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

import pytest

from trtcheck.errors import SchemaError
from trtcheck.results import SCHEMA_VERSION, load_results, results_from_json, results_to_json
from trtcheck.results.migrate import can_migrate, migrate

#: a real `report` results file of schema 1.4 (the golden tests' full.json when the window
#: was in ms): bench, precision, serve (windows 0, 2, 10 ms) and advice
OLD = Path(__file__).parent / "data" / "results-1.x" / "full-1.4.json"


@pytest.fixture(scope="module")
def raw() -> dict:
    doc = json.loads(OLD.read_text(encoding="utf-8"))
    assert doc["schema_version"] == "1.4"
    return doc


def test_a_1x_file_loads_with_the_same_windows_in_us(raw):
    res = load_results(OLD)
    assert res.schema_version == SCHEMA_VERSION and SCHEMA_VERSION.startswith("3.")
    assert raw["serve"]["settings"]["windows_ms"] == [0.0, 2.0, 10.0]
    assert res.serve.settings.windows_us == [0.0, 2000.0, 10000.0]
    assert [c.window_us for c in res.serve.configs] == [
        c["window_ms"] * 1000 for c in raw["serve"]["configs"]]
    assert [p.window_us for p in res.advice.serve_predictions] == [0.0, 2000.0, 10000.0]
    assert [p.window_us for p in res.advice.serve_predictions] == [
        p["window_ms"] * 1000 for p in raw["advice"]["serve_predictions"]]
    old_be = raw["advice"]["formulas"]["break_even_window_ms_at_max_batch"]
    assert res.advice.formulas.break_even_window_us_at_max_batch == old_be * 1000
    # the same configuration is found by its window in us
    cfg = res.serve.config("burst:64", 2000, 8)
    assert cfg is not None and cfg.p99_ms == raw["serve"]["configs"][1]["p99_ms"]
    # everything else is as it was: the advice's windows were in us already
    assert [c.window_us for c in res.advice.candidates] == [
        c["window_us"] for c in raw["advice"]["candidates"]]
    assert res.serve.configs[0].p99_ms == raw["serve"]["configs"][0]["p99_ms"]


def test_a_migrated_file_is_written_as_2_0_and_reads_back_the_same(raw, caplog):
    with caplog.at_level(logging.WARNING, logger="trtcheck.results"):
        res = load_results(OLD)
    assert not caplog.records  # a migration is not an unknown field: no note
    text = results_to_json(res)
    assert '"window_ms"' not in text and '"windows_ms"' not in text
    assert json.loads(text)["schema_version"] == SCHEMA_VERSION
    assert results_from_json(text) == res


def test_a_hand_edited_1x_window_is_still_refused_in_one_line(raw):
    doc = copy.deepcopy(raw)
    doc["serve"]["configs"][0]["window_ms"] = "two"
    with pytest.raises(SchemaError) as ei:
        results_from_json(json.dumps(doc), "old.json")
    assert "serve.configs.0.window_us" in ei.value.message
    doc = copy.deepcopy(raw)
    doc["serve"]["settings"]["windows_ms"] = [0, -2]
    with pytest.raises(SchemaError) as ei:
        results_from_json(json.dumps(doc), "old.json")
    assert "windows_us[1] is -2000.0" in ei.value.message


def test_a_2x_file_is_not_migrated_again(raw):
    once = load_results(OLD)
    again = results_from_json(results_to_json(once), "new.json")
    assert again.serve.settings.windows_us == [0.0, 2000.0, 10000.0]
    # a 2.0 file holding the old field is not converted: it is an unknown field
    doc = json.loads(results_to_json(once))
    doc["serve"]["configs"][0]["window_ms"] = 5.0
    res = results_from_json(json.dumps(doc), "edited.json")
    assert res.serve.configs[0].window_us == 0.0


def test_migrate_converts_settings_to_the_nanosecond_and_leaves_the_rest():
    doc = {"serve": {"settings": {"windows_ms": [0.3, 1.2345678]},
                     "configs": [{"window_ms": 0.1}, {"window_us": 7.0}, "not a record"]},
           "advice": {"formulas": {"break_even_window_ms_at_max_batch": 0.0491234567}}}
    migrate(doc, 1, 2)
    assert doc["serve"]["settings"] == {"windows_us": [300.0, 1234.568]}
    assert doc["serve"]["configs"] == [{"window_us": 100.0}, {"window_us": 7.0}, "not a record"]
    # a computed window keeps its digits
    be = doc["advice"]["formulas"]["break_even_window_us_at_max_batch"]
    assert be == 0.0491234567 * 1000
    assert migrate({}, 1, 2) == {}  # nothing to migrate in a bench-only file


def test_versions_that_can_and_cannot_be_migrated(raw):
    assert can_migrate(1, 2) and can_migrate(2, 2) and can_migrate(1, 3)
    assert not can_migrate(4, 3)
    doc = copy.deepcopy(raw)
    doc["schema_version"] = "4.0"
    with pytest.raises(SchemaError) as ei:
        results_from_json(json.dumps(doc), "future.json")
    assert "newer than" in ei.value.message and SCHEMA_VERSION in ei.value.message


def test_a_section_saved_on_its_own_is_migrated_once(raw):
    from trtcheck.results.migrate import migrate_section
    from trtcheck.results.serve import ServeRun

    run = migrate_section("serve", copy.deepcopy(raw["serve"]), 1, 2)
    assert ServeRun.model_validate(run).settings.windows_us == [0.0, 2000.0, 10000.0]
    # already in the current form: left as it is
    assert migrate_section("serve", copy.deepcopy(run), 1, 2) == run
