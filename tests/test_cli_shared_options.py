"""Options shared by the commands: one ``--overwrite`` and one comma-list reader."""

import click
import pytest

from trtcheck.cli.common import comma_list


@pytest.mark.parametrize("value, lower, expected", [
    (None, False, []),
    ("", False, []),
    (" , ,", False, []),
    ("fp16, INT8,", False, ["fp16", "INT8"]),
    ("FP16,int8", True, ["fp16", "int8"]),
    ("open:500:poisson, burst:64", False, ["open:500:poisson", "burst:64"]),
])
def test_comma_list_strips_and_drops_empty_entries(value, lower, expected):
    assert comma_list(value, lower=lower) == expected


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
