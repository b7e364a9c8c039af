"""Run the real ``trtcheck`` entry point in this process (the CLI boundary with its exit
codes and one-line errors, without a subprocess's ~1 s start-up).

Output is captured with Click's :meth:`click.testing.CliRunner.isolation`, so what a
command echoes to stdout and stderr comes back as text, like :func:`conftest.run_cli`.
"""

from __future__ import annotations

from click.testing import CliRunner

from conftest import CliResult
from trtcheck.cli import main


def run_main(*args: str, input: str | bytes | None = None) -> CliResult:
    """``trtcheck ARGS`` in-process; returns exit code, stdout and stderr."""
    runner = CliRunner()
    with runner.isolation(input=input) as (out, err, _):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        stdout = out.getvalue().decode("utf-8", "replace")
        stderr = err.getvalue().decode("utf-8", "replace") if err is not None else ""
    return CliResult(code, stdout, stderr)
