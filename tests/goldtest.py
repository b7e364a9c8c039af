"""Golden-file comparison for command outputs (the pattern of coverage.py's tests/goldtest.py).

A golden file under ``tests/gold/`` holds what a command printed or wrote for fixed inputs,
after :func:`scrub` replaced what may change between machines and runs (the running
versions of trtcheck and onnx, absolute paths) and rounded every decimal number to
:data:`SIGNIFICANT_DIGITS` significant digits (:func:`scrub_floats`): a golden file states
its numbers at that precision, never to the last bit, because the last digits of a float
change with the NumPy build, BLAS and CPU (the order of a pairwise sum); and two numbers
agree when they differ by at most :data:`RELATIVE_TOLERANCE` (:func:`numbers_agree`). :func:`check_gold` compares an output with
its golden file and fails with a unified diff; with ``pytest --update-gold`` (or
``TRTCHECK_UPDATE_GOLD=1``) it rewrites the golden file instead. A failing comparison also
leaves the output under ``tests/actual/`` (ignored by git) for a side-by-side look.
"""

from __future__ import annotations

import difflib
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
GOLD = TESTS / "gold"
ACTUAL = TESTS / "actual"
REPO = TESTS.parent

#: set by conftest.py from ``--update-gold`` / ``TRTCHECK_UPDATE_GOLD=1``
UPDATE = os.environ.get("TRTCHECK_UPDATE_GOLD", "").strip().lower() in ("1", "true", "yes", "on")


#: the precision at which golden files compare numbers: a float printed with more
#: significant digits is rounded to this many (a double holds 15-17)
SIGNIFICANT_DIGITS = 10

#: a decimal number with a fraction (``12.5``, ``-0.00123``, ``1.5e-07``), not part of a
#: word, a version (``1.17.1``) or an address (``127.0.0.1``); integers are exact and stay
_FLOAT = re.compile(r"(?<![\w.])\d+\.\d+(?:[eE][+-]?\d+)?(?![\w.])")


def _round_float(match: re.Match[str]) -> str:
    text = match.group(0)
    value = Decimal(text)
    if len(value.as_tuple().digits) <= SIGNIFICANT_DIGITS:
        return text
    rounded = format(value, f".{SIGNIFICANT_DIGITS}g")
    if "e" in rounded or "E" in rounded:
        mantissa, exponent = rounded.lower().split("e")
        mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
        return f"{mantissa}e{int(exponent):+03d}"
    return rounded.rstrip("0").rstrip(".") if "." in rounded else rounded


def scrub_floats(text: str) -> str:
    """``text`` with every decimal number of more than :data:`SIGNIFICANT_DIGITS`
    significant digits rounded to that many (half to even, in decimal; trailing zeros
    dropped). Shorter numbers, integers and dotted versions are left as they are, so a
    human-readable table keeps its format."""
    return _FLOAT.sub(_round_float, text)


#: two decimal numbers of a golden comparison agree within this relative difference: the
#: rounding to SIGNIFICANT_DIGITS can land on either side of a boundary, and a bootstrap's
#: sums differ in the 9th digit between NumPy 1.x and 2.x
RELATIVE_TOLERANCE = 1e-6


def numbers_agree(expected: str, actual: str, rel: float = RELATIVE_TOLERANCE) -> bool:
    """Whether ``actual`` is ``expected`` but for decimal numbers (:data:`_FLOAT`) that
    differ by at most ``rel`` relative: the same text around them, the same count."""
    exp_parts, act_parts = _FLOAT.split(expected), _FLOAT.split(actual)
    if exp_parts != act_parts:
        return False
    for a, b in zip(_FLOAT.findall(expected), _FLOAT.findall(actual)):
        x, y = float(a), float(b)
        if abs(x - y) > rel * max(abs(x), abs(y)):
            return False
    return True


def default_scrubs() -> list[tuple[str, str]]:
    """``(regex, replacement)`` pairs for what varies between machines and runs."""
    import onnx

    from trtcheck import __version__

    return [
        (re.escape(str(REPO)), "<REPO>"),
        (rf"\btrtcheck{re.escape(' ')}{re.escape(__version__)}\b", "trtcheck VERSION"),
        # the running onnx names itself in texts; results files read as inputs name the
        # onnx that wrote them (any version: the oldest allowed reads them too)
        (rf"\bonnx {re.escape(onnx.__version__)}\b", "onnx VERSION"),
        (r"\bonnx \d+\.\d+\.\d+\b", "onnx VERSION"),
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
    ``scrubs`` applied, in that order, then :func:`scrub_floats`."""
    for pattern, repl in default_scrubs() + list(scrubs or []):
        text = re.sub(pattern, repl, text)
    return scrub_floats(text)


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
    if text == expected or numbers_agree(expected, text):
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
