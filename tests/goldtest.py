"""Golden-file comparison for command outputs (the pattern of coverage.py's tests/goldtest.py).

A golden file under ``tests/gold/`` holds what a command printed or wrote for fixed inputs,
after :func:`scrub` replaced what may change between machines and runs (the running
versions of trtcheck and onnx, absolute paths). :func:`check_gold` compares an output with
its golden file and fails with a unified diff; with ``pytest --update-gold`` (or
``TRTCHECK_UPDATE_GOLD=1``) it rewrites the golden file instead. A failing comparison also
leaves the output under ``tests/actual/`` (ignored by git) for a side-by-side look.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
GOLD = TESTS / "gold"
ACTUAL = TESTS / "actual"
REPO = TESTS.parent

#: set by conftest.py from ``--update-gold`` / ``TRTCHECK_UPDATE_GOLD=1``
UPDATE = os.environ.get("TRTCHECK_UPDATE_GOLD", "").strip().lower() in ("1", "true", "yes", "on")


def default_scrubs() -> list[tuple[str, str]]:
    """``(regex, replacement)`` pairs for what varies between machines and runs."""
    import onnx

    from trtcheck import __version__

    return [
        (re.escape(str(REPO)), "<REPO>"),
        (rf"\btrtcheck{re.escape(' ')}{re.escape(__version__)}\b", "trtcheck VERSION"),
        (rf"\bonnx {re.escape(onnx.__version__)}\b", "onnx VERSION"),
        # the results schema version: bumped by every schema change, checked by
        # tests/test_results_schema.py
        (r'("schema_version": )"\d+\.\d+"', r'\1"SCHEMA_VERSION"'),
        (r"\bresults schema \d+(\.\d+)?\b", "results schema SCHEMA_VERSION"),
        (r"(?m)^(schema_version\s+)\d+(\.\d+)?$", r"\1SCHEMA_VERSION"),
        # charts: matplotlib's PNG/SVG bytes change with its version and fonts
        (r"data:image/(png|svg\+xml);base64,[A-Za-z0-9+/=]+", r"data:image/\1;base64,CHART"),
    ]


def scrub(text: str, scrubs: list[tuple[str, str]] | None = None) -> str:
    """``text`` with every ``(regex, replacement)`` of :func:`default_scrubs` and
    ``scrubs`` applied, in that order."""
    for pattern, repl in default_scrubs() + list(scrubs or []):
        text = re.sub(pattern, repl, text)
    return text


def check_gold(name: str, actual: str, scrubs: list[tuple[str, str]] | None = None) -> None:
    """Assert that ``actual`` (scrubbed) equals ``tests/gold/<name>``.

    With :data:`UPDATE` set, write it there instead (and pass). A missing golden file
    fails with the command to create it.
    """
    text = scrub(actual, scrubs)
    gold = GOLD / name
    if UPDATE:
        gold.parent.mkdir(parents=True, exist_ok=True)
        gold.write_text(text, encoding="utf-8", newline="\n")
        return
    if not gold.is_file():
        pytest.fail(f"no golden file {gold.relative_to(REPO)}; write it with "
                    "`python -m pytest tests/test_golden_outputs.py --update-gold`")
    expected = gold.read_text(encoding="utf-8")
    if text == expected:
        return
    out = ACTUAL / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8", newline="\n")
    diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True),
                                        text.splitlines(keepends=True),
                                        fromfile=f"gold/{name}", tofile=f"actual/{name}", n=2))
    pytest.fail(f"output differs from tests/gold/{name} (actual kept in tests/actual/{name}; "
                "if the change is intended: python -m pytest tests/test_golden_outputs.py "
                f"--update-gold):\n{diff[:8000]}", pytrace=False)
