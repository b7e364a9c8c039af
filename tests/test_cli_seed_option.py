"""A negative --seed is bad input (exit 2, one line), in every command."""

from __future__ import annotations

import pytest

from trtcheck.cli import main

CURVE = ["--latency-curve", "1:2,8:4,32:10", "--arrival-rate", "500"]


@pytest.mark.parametrize("args", [
    ["advise", *CURVE, "--seed", "-1"],
    ["serve", "--synthetic-curve", "1:0.5", "--seed", "-1"],
    ["bench", "m.onnx", "--seed", "-1"],
    ["report", "m.onnx", "--seed", "-1"],
    ["compare", "a.json", "b.json", "--seed", "-1"],
    ["precision", "m.onnx", "--seed", "-1"],
])
def test_negative_seed_is_exit_2_one_line(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert e.value.code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error:") and "--seed" in lines[0], err
    assert "hint:" in lines[0] and "internal error" not in err


def test_every_seed_option_has_a_lower_bound():
    """Every command's --seed refuses negatives at parse time (numpy's default_rng does)."""
    import click

    from trtcheck.cli import COMMANDS, cli
    ctx = click.Context(cli)
    for name in COMMANDS:
        cmd = cli.get_command(ctx, name)
        for p in cmd.params:
            if "--seed" in getattr(p, "opts", []):
                assert isinstance(p.type, click.IntRange) and p.type.min == 0, name
