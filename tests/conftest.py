"""Shared fixtures."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _fetch_module():
    spec = importlib.util.spec_from_file_location("fetch_ppocr", ROOT / "engines" / "fetch_ppocr.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fetch_ppocr", mod)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def ppocr() -> dict[str, Path]:
    """``{"det", "rec", "cls"}`` -> path of the real PP-OCR ONNX models (cached).

    Fails (never skips) when they cannot be fetched: these are the real inputs the
    tests must run on.
    """
    try:
        paths = _fetch_module().fetch()
    except Exception as exc:  # network/pip failure: say so loudly
        pytest.fail(f"cannot fetch the PP-OCR models with engines/fetch_ppocr.py: {exc}")
    for key, p in paths.items():
        if not Path(p).is_file():
            pytest.fail(f"PP-OCR {key} model missing after fetch: {p}")
    return paths
