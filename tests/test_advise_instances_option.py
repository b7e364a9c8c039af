"""``advise --instances``: a count, a range or a comma list (as ``serve --instances``
takes one), each bad form one line that says what is wrong. Before, ``1,2`` was
"cannot read" while ``serve`` took it, and ``0`` said "cannot read" too."""

from __future__ import annotations

import pytest

from trtcheck.cli.options_advise import parse_instances
from trtcheck.errors import InputError

from conftest import assert_one_line_error
from cli_helper import invoke


@pytest.mark.parametrize("text, counts", [("4", [4]), ("1..3", [1, 2, 3]), ("1,2", [1, 2]),
                                          ("1..3,8", [1, 2, 3, 8]), (" 2 , 1 ", [1, 2]),
                                          (None, None)])
def test_counts_ranges_and_lists(text, counts):
    assert parse_instances(text) == counts


@pytest.mark.parametrize("text, words", [("0", "holds a count below 1"),
                                         ("1,0", "holds a count below 1"),
                                         ("3..1", "the range 3..1 runs backwards"),
                                         ("x", "cannot read --instances 'x'"),
                                         ("1,,2", "cannot read"),
                                         ("1..200000", "goes above 100,000 instances")])
def test_each_bad_form_says_what_is_wrong(text, words):
    with pytest.raises(InputError) as err:
        parse_instances(text)
    assert words in err.value.message


def test_a_list_searches_those_counts():
    res = invoke("advise", "--latency-curve", "1:1,8:2", "--arrival-rate", "100",
                 "--instances", "1,2", "--replicas", "0", "--format", "json")
    assert res.returncode == 0, res.stderr
    bad = invoke("advise", "--latency-curve", "1:1,8:2", "--arrival-rate", "100",
                 "--instances", "0")
    assert_one_line_error(bad, 2, "--instances 0 holds a count below 1")
