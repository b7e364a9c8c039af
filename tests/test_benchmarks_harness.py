"""Benchmarks run against the installed package: no script edits ``sys.path`` (or sets
``PYTHONPATH``) or imports from ``tests/``; they share ``benchmarks/_harness.py`` for
result files and tables, and ``benchmarks/results/`` follows its naming rule."""

from __future__ import annotations

import ast
import importlib.util
import re
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
    assert "PYTHONPATH" not in text, f"{script.name} sets the import path of a child"
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
    assert h.result_path("gate_speed", "dev-cpu").name == "gate_speed-dev-cpu.json"
    assert h.result_path("gate_speed", "h200-host").parent == BENCHMARKS / "results"
    assert h.result_path("advise_validation", "dev-cpu-onnxruntime").name == \
        "advise_validation-dev-cpu-onnxruntime.json"
    for bad in ("", "dev", "H200-host", "dev-cpu-", "dev-cpu--x", "dev-cpu-A", "a b",
                "../x", "dev-cpu.json", "h200host"):
        with pytest.raises(ValueError):
            h.result_path("gate_speed", bad)
    for bad in ("no_such_benchmark", "_harness", "gate-speed"):
        with pytest.raises(ValueError):
            h.result_path(bad, "dev-cpu")
    assert h.parse_result_name("gate_speed-dev-cpu.json") == ("gate_speed", "dev-cpu")
    for bad in ("gate_speed.json", "gate_speed-dev-cpu.txt", "gate_speed-dev-cpu_raw.json.gz",
                "run1_gate_speed-dev-cpu.json", "gate_speed_h200.json"):
        with pytest.raises(ValueError):
            h.parse_result_name(bad)


def test_the_machine_option_refuses_a_name_outside_the_rule(capsys):
    import argparse

    h = _harness()
    ap = argparse.ArgumentParser()
    h.add_machine_argument(ap)
    assert ap.parse_args([]).machine == "dev-cpu"
    assert ap.parse_args(["--machine", "h200-host-pin23"]).machine == "h200-host-pin23"
    with pytest.raises(SystemExit):
        ap.parse_args(["--machine", "h200host"])
    assert "h200host" in capsys.readouterr().err


RESULT_NAME = re.compile(r"^(?P<benchmark>[a-z0-9_]+)-(?P<machine>[a-z0-9]+(-[a-z0-9]+)*)\.json$")


def test_every_result_file_is_benchmark_dash_machine_json():
    """One current file per benchmark and machine: ``<script stem>-<machine>.json`` and
    nothing else (no tables, logs, raw dumps or numbered reruns: git keeps the history)."""
    h = _harness()
    stems = {p.stem for p in SCRIPTS if not p.stem.startswith("_")}
    files = sorted((BENCHMARKS / "results").iterdir())
    assert files
    for f in files:
        m = RESULT_NAME.match(f.name)
        assert f.is_file() and m, f"{f.name}: not <benchmark>-<machine>.json"
        assert m["benchmark"] in stems, f"{f.name}: no script benchmarks/{m['benchmark']}.py"
        h.check_machine(m["machine"])
        assert h.parse_result_name(f.name) == (m["benchmark"], m["machine"])


QUOTED = re.compile(r"benchmarks/results/([A-Za-z0-9_.{},*<>-]+)")


def _braces(name: str) -> list[str]:
    """``a-{x,y}.json`` -> ``["a-x.json", "a-y.json"]`` (the shell's brace expansion)."""
    m = re.search(r"\{([^{}]*)\}", name)
    if not m:
        return [name]
    return [one for alt in m[1].split(",")
            for one in _braces(name[:m.start()] + alt + name[m.end():])]


def test_quoted_result_files_exist():
    """Every result file that docs, scripts or code name exists (a name with
    ``<machine>`` in it is a pattern, not a file; ``git show REV:PATH`` names history)."""
    repo = BENCHMARKS.parent
    sources = [repo / "README.md", *(repo / "docs").glob("*.md"), *SCRIPTS,
               *(repo / "trtcheck").rglob("*.py"), *(repo / "tests").glob("*.py")]
    missing = []
    for src in sources:
        text = src.read_text(encoding="utf-8")
        for m in QUOTED.finditer(text):
            if text[max(0, m.start() - 1)] == ":":  # git show REV:benchmarks/results/...
                continue
            name = m[1].rstrip(".,")
            if not name or "<" in name:
                continue
            for one in _braces(name):
                if not list((BENCHMARKS / "results").glob(one)):
                    missing.append(f"{src.relative_to(repo)}: {one}")
    assert missing == []


def test_format_table_aligns_text_left_and_numbers_right():
    h = _harness()
    text = h.format_table([{"case": "a", "s": 1.5}, {"case": "long name", "s": None}],
                          [("case", "case", ""), ("s", "seconds", ".2f")])
    assert text.splitlines() == ["case       seconds", "a             1.50",
                                 "long name        -"]
