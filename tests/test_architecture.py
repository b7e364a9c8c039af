"""Architecture rules: one-way data flow and lazy heavy imports."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("onnxruntime", "tensorrt", "tensorrt_rtx", "torch", "matplotlib", "scipy", "cuda")


def test_import_contracts_hold():
    exe = Path(sys.executable).parent / "lint-imports"
    assert exe.exists(), "import-linter is missing: install the test extra (pip install -e '.[test]')"
    proc = subprocess.run([str(exe)], cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _modules_after(args):
    code = ("import sys, runpy; sys.argv = ['trtcheck'] + %r\n"
            "try:\n    runpy.run_module('trtcheck', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(' '.join(sorted(m for m in sys.modules)), file=sys.stderr)" % (args,))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=False)
    return set(proc.stderr.split())


def test_help_imports_no_heavy_module():
    mods = _modules_after(["--help"])
    assert "trtcheck" in mods
    assert not [m for m in mods if m.split(".")[0] in HEAVY]


def _import_cycles(package: str) -> list[list[str]]:
    """Strongly connected components of more than one module in ``package``'s import graph
    (grimp, which import-linter uses; imports inside functions count too)."""
    import grimp

    graph = grimp.build_graph(package)
    modules = sorted(graph.modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.find_modules_directly_imported_by(v)):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for m in modules:
        if m not in index:
            visit(m)
    return cycles


def test_no_import_cycle():
    assert _import_cycles("trtcheck") == []
