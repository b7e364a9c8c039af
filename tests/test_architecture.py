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


# --- .importlinter states docs/architecture.md's table, no more and no less ---------------

STAGES = ("load", "inspection", "backends", "measure", "analyze", "report", "export", "pipeline",
          "api", "cli")


def _contracts() -> list[dict[str, list[str] | str]]:
    """The contracts of ``.importlinter``: each as ``{key: value}``, list-valued keys split
    into lines (comments dropped)."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(REPO / ".importlinter", encoding="utf-8")
    out = []
    for section in cfg.sections():
        if not section.startswith("importlinter:contract:"):
            continue
        c: dict[str, list[str] | str] = {"id": section.split(":", 2)[2]}
        for key, value in cfg[section].items():
            lines = [x.strip() for x in value.splitlines()]
            lines = [x for x in lines if x and not x.startswith("#")]
            c[key] = lines if key in ("source_modules", "forbidden_modules", "layers",
                                      "ignore_imports") else value.strip()
        out.append(c)
    return out


def _top(module: str) -> str | None:
    """``trtcheck.load.shapes`` -> ``load``; outside trtcheck -> ``None``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "trtcheck" and len(parts) > 1 else None


def _doc_bottom_layer() -> set[str]:
    """The bottom layer as docs/architecture.md names it (``trtcheck/results/``,
    ``trtcheck/errors.py``, ...), from "Bottom layer shared by all" to "imports no stage"."""
    import re

    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = text.index("Bottom layer shared by all")
    end = text.index("imports no stage", start)
    return set(re.findall(r"`trtcheck/(\w+)(?:\.py|/)`", text[start:end]))


def _doc_table() -> dict[str, set[str]]:
    """docs/architecture.md's table: stage -> the stages it may import (``everything``:
    every stage)."""
    import re

    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `trtcheck\.(\w+)` \|.*\| ([^|]+) \|$", text, flags=re.M)
    table = {}
    for stage, may in rows:
        words = set(re.findall(r"[a-z]+", may))
        table[stage] = set(STAGES) if "everything" in words else words & set(STAGES)
    return table


def _package_modules() -> set[str]:
    pkg = REPO / "trtcheck"
    names = {p.stem for p in pkg.glob("*.py")} | {p.name for p in pkg.iterdir()
                                                if (p / "__init__.py").exists()}
    return names - {"__init__"}


def test_importlinter_has_no_exceptions():
    """No contract carries ``ignore_imports``: an import the table forbids is moved, not
    excused."""
    text = (REPO / ".importlinter").read_text(encoding="utf-8")
    assert "ignore_imports" not in text
    assert all("ignore_imports" not in c for c in _contracts())


def test_every_package_module_is_a_stage_the_bottom_layer_or_testing():
    table = _doc_table()
    bottom = _doc_bottom_layer()
    assert set(table) == set(STAGES)
    assert not bottom & set(STAGES)
    assert _package_modules() == set(STAGES) | bottom | {"testing", "__main__"}


def test_importlinter_forbids_exactly_what_the_table_forbids():
    """Pairs (importer, imported) of top-level trtcheck modules: those the contracts forbid
    equal those docs/architecture.md forbids (its table; the bottom layer imports no stage;
    no part of the tool imports ``trtcheck.testing``)."""
    table = _doc_table()
    bottom = _doc_bottom_layer()
    tool = set(STAGES) | bottom  # what may be imported; ``__main__`` imports cli
    allowed = {stage: table[stage] | bottom for stage in STAGES}
    allowed.update({b: set(bottom) for b in bottom})
    allowed["__main__"] = set(tool)
    want = {(a, b) for a in allowed for b in tool | {"testing"}
            if a != b and b not in allowed[a]}

    got = set()
    for c in _contracts():
        if c["type"] == "layers":
            layers = [_top(m) for m in c["layers"]]  # highest first
            got |= {(low, high) for i, high in enumerate(layers) for low in layers[i + 1:]}
        elif c["type"] == "forbidden":
            sources = [_top(m) for m in c["source_modules"]]
            forbidden = [_top(m) for m in c["forbidden_modules"] if _top(m)]
            got |= {(a, b) for a in sources for b in forbidden if a != b}
        else:  # a new contract type: teach this test what it forbids
            raise AssertionError(f"contract {c['id']}: unknown type {c['type']}")
    assert got == want, (f"forbidden by the table only: {sorted(want - got)}; "
                         f"by the contracts only: {sorted(got - want)}")


# --- no module imports another module's private names -------------------------------------

def _own_test(test_file: Path, module: str) -> bool:
    """``tests/test_<stem>...py`` is the own test of a module whose last name is ``stem``
    (``trtcheck.report`` -> ``test_report*.py``); it may take that module's private names."""
    return test_file.parent.name == "tests" and \
        test_file.stem.startswith("test_" + module.rsplit(".", 1)[-1])


def _private_imports() -> list[str]:
    """``path:line module._name`` for every private (``_name``, not dunder) name of a trtcheck
    module imported by another module (``from M import _x``) or read through an imported
    module (``m._x``), in ``trtcheck/``, ``benchmarks/`` and ``tests/``."""
    import ast
    import importlib.util

    def is_module(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            return False

    out = []
    for base in ("trtcheck", "benchmarks", "tests"):
        for path in sorted((REPO / base).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            modules: dict[str, str] = {}  # local name -> trtcheck module it is bound to
            found: list[tuple[int, str, str]] = []
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                        and node.module.split(".")[0] == "trtcheck":
                    for a in node.names:
                        if a.name.startswith("_") and not a.name.startswith("__"):
                            found.append((node.lineno, node.module, a.name))
                        elif is_module(f"{node.module}.{a.name}"):
                            modules[a.asname or a.name] = f"{node.module}.{a.name}"
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        if a.asname and a.name.split(".")[0] == "trtcheck":
                            modules[a.asname] = a.name
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id in modules and node.attr.startswith("_") \
                        and not node.attr.startswith("__"):
                    found.append((node.lineno, modules[node.value.id], node.attr))
            rel = path.relative_to(REPO)
            out += [f"{rel}:{line} {module}.{name}" for line, module, name in found
                    if not _own_test(path, module)]
    return out


def test_no_private_name_crosses_a_module():
    """A name another module needs is public (no underscore, a docstring) in the module
    that owns it; a test may use the private names of the module it tests."""
    assert _private_imports() == []
