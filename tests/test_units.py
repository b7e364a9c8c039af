"""Human formatting of quantities (trtcheck.units)."""

from __future__ import annotations

import pytest

from trtcheck.units import int_ranges


def test_int_ranges():
    assert int_ranges([1, 2, 3, 7, 9, 10]) == "1-3, 7, 9-10"
    assert int_ranges([5, 5, 4]) == "4-5"
    assert int_ranges([]) == ""


@pytest.mark.parametrize("value,digits,text", [
    (1184.2, 3, "1184"), (999.6, 3, "1000"), (0.6891, 3, "0.689"), (12.0, 3, "12"),
    (123.4, 4, "123.4"), (-2345.6, 3, "-2346"), (0.0001234, 3, "0.000123"), (None, 3, "-"),
])
def test_sig_keeps_integer_digits_out_of_exponent_notation(value, digits, text):
    from trtcheck.units import sig

    assert sig(value, digits) == text
