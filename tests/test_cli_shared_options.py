"""Options shared by the commands: one ``--overwrite`` and one comma-list type."""

import click
import pytest

from trtcheck.cli.options import CommaList
from trtcheck.errors import UsageError


def _convert(kind: CommaList, value: str | None, option: str = "--list"):
    return kind.convert(value, click.Option([option], type=kind), None)


@pytest.mark.parametrize("value, lower, expected", [
    (None, False, None),
    ("", False, []),
    (" , ,", False, []),
    ("fp16, INT8,", False, ["fp16", "INT8"]),
    ("FP16,int8", True, ["fp16", "int8"]),
    ("open:500:poisson, burst:64", False, ["open:500:poisson", "burst:64"]),
])
def test_comma_list_strips_and_drops_empty_entries(value, lower, expected):
    assert _convert(CommaList(lower=lower), value) == expected


@pytest.mark.parametrize("kind, value, expected", [
    (CommaList(int, min=1, max=8), "1, 2,8", [1, 2, 8]),
    (CommaList(float, min=0.0, max=100.0), "0,2.5", [0.0, 2.5]),
    (CommaList(int, min=1, max=8, empty="none"), " ", None),
])
def test_comma_list_reads_numbers(kind, value, expected):
    assert _convert(kind, value) == expected


@pytest.mark.parametrize("kind, value, needle", [
    (CommaList(int, min=1, max=8, example="1,2"), "1,x", "'1,x' is not a comma-separated "
                                                         "list of integers, e.g. 1,2"),
    (CommaList(int, min=1, max=8), "0", "entries must be integers in 1..8"),
    (CommaList(int, min=1, max=8, noun="batch sizes"), "9", "batch sizes must be integers"),
    (CommaList(float, min=0.0, max=10.0), "nan", "must be finite numbers >= 0 and <= 10"),
    (CommaList(float, min=0.0, max=10.0), "inf", "must be finite numbers"),
    (CommaList(float, min=0.0, max=10.0), "-1", "must be finite numbers"),
    (CommaList(int, empty_entries="refuse", min=1, max=8), "1,,2", "has an empty entry"),
    (CommaList(int, empty_entries="refuse", min=1, max=8), "1,", "has an empty entry"),
    (CommaList(float, empty="refuse", min=0.0, max=1.0), ",", "names no entry"),
    (CommaList(int, min=1, max=8), "9" * 5000, "is not a comma-separated list"),
])
def test_comma_list_refuses_bad_entries_naming_the_option(kind, value, needle):
    with pytest.raises(click.BadParameter) as exc:
        _convert(kind, value)
    assert needle in exc.value.format_message()
    assert "'--list'" in exc.value.format_message()


def test_comma_list_refuses_an_entry_given_twice_unless_told():
    with pytest.raises(UsageError, match="--window-ms names 0.0 more than once"):
        _convert(CommaList(float, min=0.0, max=1.0, example="0,1"), "0,0.5,0", "--window-ms")
    assert _convert(CommaList(unique=False), "a,a") == ["a", "a"]


def test_comma_list_takes_a_list_as_it_is():
    assert _convert(CommaList(int, min=1, max=8), [1, 2]) == [1, 2]


def test_every_command_that_writes_takes_the_same_overwrite_flag():
    from trtcheck.cli import (
        advise_cmd,
        bench_cmd,
        build_cmd,
        compare_cmd,
        export_cmd,
        gate_cmd,
        precision_cmd,
        report_cmd,
        schema_cmd,
        serve_cmd,
    )

    for mod in (advise_cmd, bench_cmd, build_cmd, compare_cmd, export_cmd, gate_cmd,
                precision_cmd, report_cmd, schema_cmd, serve_cmd):
        cmd = mod.cli.commands["triton"] if isinstance(mod.cli, click.Group) else mod.cli
        opts = [p for p in cmd.params if "--overwrite" in getattr(p, "opts", [])]
        assert len(opts) == 1, mod.__name__
        opt = opts[0]
        assert isinstance(opt, click.Option) and opt.is_flag and not opt.required
        assert opt.name == "overwrite" and opt.help.startswith("Replace")
