"""Fuzzing of every parser trtcheck owns (Hypothesis): no input makes a parser raise
anything but the project's own error types.

Targets and strategies: ``trtcheck/testing/fuzz_targets.py``. The CI-sized run generates 10,000
inputs per parser (profile ``ci``: 1,000 Hypothesis examples of 10 inputs each,
derandomized so CI runs are repeatable); set ``TRTCHECK_FUZZ_PROFILE=quick`` for 300 per
parser while editing. Longer runs with
recorded counts: ``benchmarks/fuzz_parsers.py``. Every input that once crashed a parser
is kept in ``tests/data/fuzz-regressions/<target>.json`` and replayed first.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from trtcheck.testing.fuzz_targets import Target, targets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REGRESSIONS = Path(__file__).parent / "data" / "fuzz-regressions"

#: inputs per Hypothesis example: each example is a list of this many parser inputs, so
#: Hypothesis's own per-example work is shared by several parser calls
PER_EXAMPLE = 10

PROFILES = {
    # 1,000 examples x 10 inputs = 10,000 generated inputs per parser
    "ci": settings(max_examples=1_000, deadline=None, database=None, derandomize=True,
                   suppress_health_check=list(HealthCheck), print_blob=True),
    "quick": settings(max_examples=30, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck)),
}
PROFILE_NAME = os.environ.get("TRTCHECK_FUZZ_PROFILE", "ci")
PROFILE = PROFILES[PROFILE_NAME]

TARGETS = {t.name: t for t in targets()}


def decode_regression(entry: dict) -> object:
    """A stored input: ``{"bytes_b64": ...}``, ``{"text": ...}`` or ``{"json": ...}``."""
    if "bytes_b64" in entry:
        return base64.b64decode(entry["bytes_b64"])
    if "text" in entry:
        return entry["text"]
    return entry["json"]


def _check(target: Target, value: object) -> None:
    try:
        target.call(value)
    except target.allowed:
        pass


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_stored_crash_inputs_stay_fixed(name):
    f = REGRESSIONS / f"{name}.json"
    if not f.exists():
        pytest.fail(f"no regression file {f.name}: every fuzz target keeps one (may be [])")
    for entry in json.loads(f.read_text(encoding="utf-8")):
        _check(TARGETS[name], decode_regression(entry))


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_parser_raises_only_its_own_errors(name):
    target = TARGETS[name]
    generated = [0]

    @PROFILE
    @given(st.lists(target.strategy, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
    def run(values: list[object]) -> None:
        for value in values:
            generated[0] += 1
            _check(target, value)

    run()
    if PROFILE_NAME == "ci":
        assert generated[0] >= 10_000, generated[0]
