"""Human formatting of quantities (trtcheck.units)."""

from __future__ import annotations

from trtcheck.units import int_ranges


def test_int_ranges():
    assert int_ranges([1, 2, 3, 7, 9, 10]) == "1-3, 7, 9-10"
    assert int_ranges([5, 5, 4]) == "4-5"
    assert int_ranges([]) == ""
