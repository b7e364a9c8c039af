"""Every Python block of the README and docs/ runs, and uses the public API only
(``trtcheck`` / ``trtcheck.api``), in a folder holding the files the docs name."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from onnx_builders import small_classifier
from trtcheck.results.migrate import migrate
from trtcheck.results.model import SCHEMA_VERSION, parse_schema_version

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
INTERNAL = re.compile(r"^\s*(?:from|import)\s+trtcheck\.(?!api\b)(\w+)", re.M)


def _snippets() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        for k, m in enumerate(BLOCK.finditer(doc.read_text(encoding="utf-8"))):
            out.append((f"{doc.relative_to(REPO)}#{k + 1}", m.group(1)))
    return out


SNIPPETS = _snippets()


def test_the_docs_have_python_snippets():
    names = {n.split("#")[0] for n, _ in SNIPPETS}
    assert {"docs/api.md", "docs/advise.md", "docs/report.md", "docs/serving.md",
            "docs/inspect.md"} <= names


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("snippets")
    onnx.save(small_classifier(seed=0), str(d / "model.onnx"))
    data = json.loads((REPO / "tests" / "gold" / "inputs" / "bench_a.json").read_text())
    ours = parse_schema_version(SCHEMA_VERSION)[0]
    data = migrate(data, parse_schema_version(data["schema_version"])[0], ours)
    data["schema_version"] = SCHEMA_VERSION
    (d / "results.json").write_text(json.dumps(data))
    (d / "gate.yaml").write_text("budgets:\n  - bench.batch[1].median_ms <= 1 s\n"
                                 "baseline:\n  - bench.batch[*].median_ms: 50%\n")
    shutil.copy(REPO / "tests" / "data" / "perf-analyzer" / "concurrency.csv", d / "pa.csv")
    shutil.copy(REPO / "tests" / "data" / "perf-analyzer" / "tb_linear-stats.json",
                d / "stats.json")
    return d


NOT_RUN = "# not run:"
"""First line of a block that needs what no test machine has (a Ray cluster): compiled
only, and the one kind of block that may use a module outside the public API (the
distributed load of a live target is not part of it yet)."""


def test_blocks_that_are_not_run_are_few_and_say_why():
    skipped = [n for n, code in SNIPPETS if code.startswith(NOT_RUN)]
    assert skipped == ["docs/serving.md#2"], skipped
    for n, code in SNIPPETS:
        compile(code, n, "exec")


@pytest.mark.parametrize("name,code", [s for s in SNIPPETS if not s[1].startswith(NOT_RUN)],
                         ids=[n for n, c in SNIPPETS if not c.startswith(NOT_RUN)])
def test_snippet_uses_the_public_api_and_runs(name, code, folder, tmp_path):
    internal = INTERNAL.findall(code)
    assert not internal, f"{name} imports internal modules: {internal}"
    work = tmp_path / "work"
    shutil.copytree(folder, work)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{name}:\n{proc.stderr[-3000:]}"
