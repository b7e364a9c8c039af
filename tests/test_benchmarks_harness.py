"""Benchmarks run against the installed package: no script edits ``sys.path`` or imports
from ``tests/``; they share ``benchmarks/_harness.py`` for result files and tables."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
#: modules that live in tests/ (a benchmark importing one would need tests/ on the path)
TEST_MODULES = {p.stem for p in (BENCHMARKS.parent / "tests").glob("*.py")} | {"tests"}
SCRIPTS = sorted(BENCHMARKS.glob("*.py"))


def _harness():
    spec = importlib.util.spec_from_file_location("_harness", BENCHMARKS / "_harness.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def test_there_are_benchmarks():
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_no_sys_path_edit_and_nothing_from_tests(script: Path):
    text = script.read_text(encoding="utf-8")
    assert "sys.path" not in text, f"{script.name} edits sys.path (code or child code)"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for name in names:
            assert name.split(".")[0] not in TEST_MODULES, f"{script.name} imports {name}"


def test_result_path_follows_the_naming_rule():
    h = _harness()
    assert h.result_path("gate_speed", "dev").name == "gate_speed-dev.json"
    assert h.result_path("gate_speed", "h200").parent == BENCHMARKS / "results"
    for bad in ("", "H200", "a b", "../x", "dev.json"):
        with pytest.raises(ValueError):
            h.result_path("gate_speed", bad)


def test_format_table_aligns_text_left_and_numbers_right():
    h = _harness()
    text = h.format_table([{"case": "a", "s": 1.5}, {"case": "long name", "s": None}],
                          [("case", "case", ""), ("s", "seconds", ".2f")])
    assert text.splitlines() == ["case       seconds", "a             1.50",
                                 "long name        -"]
