"""The golden-file scrubber: numbers compare at a stated precision, never to the last bit."""

from __future__ import annotations

import pytest

from goldtest import GOLD, SIGNIFICANT_DIGITS, scrub, scrub_floats


@pytest.mark.parametrize("a,b", [
    # the same quantity from two NumPy builds, differing in the last digits
    ("4.235498108448925", "4.235498108448923"),
    ("16.9419924337957", "16.941992433795694"),
    ('"s_tau0_ms": 16.94199243379573,', '"s_tau0_ms": 16.941992433795694,'),
    ("1.2345678901234e-07", "1.2345678901236e-07"),
])
def test_last_digit_differences_scrub_alike(a: str, b: str) -> None:
    assert a != b
    assert scrub_floats(a) == scrub_floats(b)


@pytest.mark.parametrize("a,b", [("4.23549810", "4.23549811"), ("16.94199243", "16.94199244"),
                                 ("1.0724583932348881", "1.0724561901054775")])
def test_differences_within_the_precision_still_show(a: str, b: str) -> None:
    assert scrub_floats(a) != scrub_floats(b)


@pytest.mark.parametrize("text", [
    "P99 4.25 ms at 3000 req/s", "trtcheck 0.9.1 on onnx 1.17.0, 127.0.0.1:8000",
    "median 0.00 ms", "10 samples", "x1.23456789012345y", "sha 3a1f2.0000000000001b",
])
def test_short_numbers_versions_and_words_stay(text: str) -> None:
    assert scrub_floats(text) == text


def test_rounding_is_to_the_stated_digits() -> None:
    assert SIGNIFICANT_DIGITS == 10
    assert scrub_floats("0.007566204287515") == "0.007566204288"
    assert scrub_floats("1.1999999999999") == "1.2"
    assert scrub_floats("-2.906683480453971") == "-2.90668348"
    assert scrub_floats(scrub_floats("2.906683480453971")) == scrub_floats("2.906683480453971")


def test_scrub_rounds_after_the_other_scrubs() -> None:
    assert scrub('{"x": 0.30000000000000004}') == '{"x": 0.3}'


def test_every_committed_golden_is_already_scrubbed() -> None:
    """A golden file written around the scrubber would compare to the last bit again."""
    unscrubbed = sorted(str(p.relative_to(GOLD)) for p in GOLD.rglob("*")
                        if p.is_file() and p.relative_to(GOLD).parts[0] != "inputs"
                        and scrub_floats(p.read_text(encoding="utf-8"))
                        != p.read_text(encoding="utf-8"))
    assert unscrubbed == []


def test_numbers_agree_within_the_relative_tolerance_and_nothing_else():
    from goldtest import numbers_agree

    # a bootstrap bound from NumPy 1.25 and from 2.4
    assert numbers_agree('"ratio_low": 0.9701493565,', '"ratio_low": 0.9701493521,')
    assert not numbers_agree('"ratio_low": 0.9701493565,', '"ratio_low": 0.9701503565,')
    assert not numbers_agree('"ratio_low": 0.97,', '"ratio_high": 0.97,')
    assert not numbers_agree("a 1.5 b", "a 1.5 b 2.5")
