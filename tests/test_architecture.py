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
