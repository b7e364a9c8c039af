"""Shared fixtures: real models (demo ResNet-18, PP-OCR) and a CLI runner.

Fixtures that need a download FAIL with a clear message when it is impossible; they
never skip silently.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _load_fetch_module():
    spec = importlib.util.spec_from_file_location("fetch_ppocr", REPO / "engines" / "fetch_ppocr.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def ppocr() -> dict[str, Path]:
    """Paths of the PP-OCR det/rec/cls ONNX models (downloaded once into the cache)."""
    try:
        return _load_fetch_module().fetch()
    except Exception as exc:  # noqa: BLE001 - turn any failure into a clear test failure
        pytest.fail(f"cannot fetch the PP-OCR models (engines/fetch_ppocr.py): {exc}")


@pytest.fixture(scope="session")
def demo_model() -> Path:
    """Path of the cached demo ResNet-18."""
    from trtcheck.load.demo import demo_model_path

    return demo_model_path()


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str, cwd: str | os.PathLike[str] | None = None, timeout: float = 300,
            env: dict[str, str] | None = None) -> CliResult:
    """Run ``python -m trtcheck ARGS`` in a subprocess (the real boundary and exit codes)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.pop("TRTCHECK_DEBUG", None)
    if env:
        full_env.update(env)
    proc = subprocess.run([sys.executable, "-m", "trtcheck", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, env=full_env, check=False)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli():
    """The :func:`run_cli` helper."""
    return run_cli


def assert_one_line_error(res: CliResult, code: int = 2, *needles: str) -> str:
    """Assert exit ``code``, no traceback, exactly one stderr line starting ``error:``."""
    assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    err_lines = [ln for ln in lines if ln.startswith("error:")]
    assert len(err_lines) == 1, res.stderr
    for n in needles:
        assert n in err_lines[0], (n, err_lines[0])
    return err_lines[0]
