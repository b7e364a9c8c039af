"""Run the real ``trtcheck`` command line in this process.

:func:`invoke` drives :func:`trtcheck.cli.main` (the root Click group and its one error
boundary: typed errors become ``error: ...; hint: ...`` and their exit code) inside Click's
:class:`~click.testing.CliRunner` isolation, so stdout and stderr come back separately and
nothing touches the terminal. It is the way tests call the CLI; a test that needs the real
process boundary (an interpreter start, ``python -m trtcheck``, signals) uses
``conftest.run_cli`` instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from click.testing import CliRunner


@dataclass
class CliResult:
    """What one command line gave: exit code, stdout and stderr (text)."""

    returncode: int
    stdout: str
    stderr: str


def invoke(*args: str | os.PathLike[str], env: Mapping[str, str | None] | None = None,
           input: str | bytes | None = None) -> CliResult:
    """Run ``trtcheck ARGS`` through :func:`trtcheck.cli.main` and return what it printed.

    ``env`` overrides environment variables for the call (``None`` removes one);
    ``TRTCHECK_DEBUG`` is always removed (so an internal error is one line, as for a user)
    and ``COLUMNS`` is 80 unless given (help texts wrap the same everywhere).
    """
    from trtcheck.cli import main

    full_env: dict[str, str | None] = {"TRTCHECK_DEBUG": None, "COLUMNS": "80"}
    full_env.update(env or {})
    runner = CliRunner()
    with runner.isolation(input=input, env=full_env) as (out, err, _mixed):
        try:
            main([os.fspath(a) for a in args])
            code = 0  # pragma: no cover - main always exits
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        stdout = out.getvalue().decode("utf-8", errors="replace")
        stderr = err.getvalue().decode("utf-8", errors="replace")
    return CliResult(code, stdout, stderr)
