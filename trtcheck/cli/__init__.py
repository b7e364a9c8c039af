"""Command-line interface: ``trtcheck <command>``.

One module per command (``trtcheck/cli/<name>_cmd.py``) exporting a Click command
named ``cli``; :data:`COMMANDS` maps command names to those modules, loaded lazily
(Click's documented LazyGroup pattern) so ``trtcheck --help`` imports no heavy module.

:func:`main` is the one error boundary: :class:`trtcheck.errors.TrtcheckError` becomes
one line ``error: <what is wrong>; hint: <what to do>`` on stderr and its exit code; anything else is an internal
error (exit 4) with a request to report it; ``TRTCHECK_DEBUG=1`` shows tracebacks.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from typing import Any

import click

from trtcheck import __version__
from trtcheck.errors import EXIT_CODES_HELP, EXIT_INTERNAL, TrtcheckError
from trtcheck.units import terminal_safe

#: command name -> module under trtcheck.cli (each defines a click command ``cli``)
COMMANDS: dict[str, str] = {
    "inspect": "inspect_cmd",
    "bench": "bench_cmd",
    "report": "report_cmd",
    "gate": "gate_cmd",
    "compare": "compare_cmd",
    "preflight": "preflight_cmd",
    "build": "build_cmd",
    "precision": "precision_cmd",
    "serve": "serve_cmd",
    "advise": "advise_cmd",
    "tune": "tune_cmd",
    "schema": "schema_cmd",


    "export": "export_cmd",
}


class LazyGroup(click.Group):
    """A group that imports each command's module only when it is needed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        mod = importlib.import_module(f"trtcheck.cli.{module}")
        cmd: click.Command = mod.cli
        if not any(p.name == "verbose" for p in cmd.params):
            cmd.params.extend(_verbosity_options())
        if cmd.callback is not None and not getattr(cmd.callback, "_paths_checked", False):
            cmd.callback = _with_path_checks(cmd, cmd.callback)
        return cmd


_VERBOSE_HELP = "More detail on stderr (debug lines)."
_QUIET_HELP = ("Less on stderr (-q: no progress lines or bars, notes and warnings stay; "
               "-qq: errors only).")


def _set_verbosity(ctx: click.Context, param: click.Parameter, value: int) -> None:
    """Callback of ``-v``/``-q`` before and after the subcommand: the counts add up
    (``trtcheck -q report -q`` is ``-qq``)."""
    if ctx.resilient_parsing:
        return
    from trtcheck.cli.common import configure_logging

    counts = ctx.meta.setdefault("trtcheck.verbosity", {})
    counts[(ctx.command.name, param.name)] = value
    configure_logging(sum(v if name == "verbose" else -v
                          for (_cmd, name), v in counts.items()))


def _verbosity_options() -> list[click.Option]:
    """``-v/--verbose`` and ``-q/--quiet`` for a subcommand, as on the group."""
    return [click.Option(["-v", "--verbose"], count=True, expose_value=False, is_eager=True,
                         callback=_set_verbosity, help=_VERBOSE_HELP),
            click.Option(["-q", "--quiet"], count=True, expose_value=False, is_eager=True,
                         callback=_set_verbosity, help=_QUIET_HELP)]


def _with_path_checks(cmd: click.Command, callback: Any) -> Any:
    """``callback`` preceded by :func:`trtcheck.cli.common.check_path_parameters`."""
    @functools.wraps(callback)
    def checked(*args: Any, **kwargs: Any) -> Any:
        from trtcheck.cli.common import check_path_parameters

        check_path_parameters(cmd, kwargs)
        return callback(*args, **kwargs)

    checked._paths_checked = True  # type: ignore[attr-defined]
    return checked


#: runtimes ``--version`` names: (what, distributions that provide it, first found wins)
RUNTIME_DISTRIBUTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ONNX Runtime", ("onnxruntime", "onnxruntime-gpu")),
    ("TensorRT", ("tensorrt", "tensorrt-cu13", "tensorrt-cu12", "tensorrt-cu13-bindings",
                  "tensorrt-cu12-bindings")),
    ("TensorRT-RTX", ("tensorrt-rtx-cu13", "tensorrt-rtx", "tensorrt_rtx")),
    ("cuda-python", ("cuda-python", "cuda-bindings")),
)


def version_text() -> str:
    """``trtcheck, version X`` and one line per runtime with the installed distribution's
    version or "not installed" (read with importlib.metadata: nothing is imported), and
    the results schema version."""
    from importlib import metadata

    from trtcheck.results.model import SCHEMA_VERSION

    lines = [f"trtcheck, version {__version__}", f"  results schema {SCHEMA_VERSION}"]
    width = max(len(name) for name, _ in RUNTIME_DISTRIBUTIONS)
    for name, dists in RUNTIME_DISTRIBUTIONS:
        found = "not installed"
        for dist in dists:
            try:
                found = f"{metadata.version(dist)} ({dist})"
                break
            except metadata.PackageNotFoundError:
                continue
        lines.append(f"  {name:<{width}}  {found}")
    return "\n".join(lines)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(version_text())
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"],
                                               "max_content_width": 100},
             epilog=EXIT_CODES_HELP)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_version,
              help="Show the version, the runtimes found (ONNX Runtime, TensorRT, "
              "TensorRT-RTX, cuda-python) and the results schema version, then exit.")
@click.option("-v", "--verbose", count=True, expose_value=False, is_eager=True,
              callback=_set_verbosity, help=_VERBOSE_HELP)
@click.option("-q", "--quiet", count=True, expose_value=False, is_eager=True,
              callback=_set_verbosity, help=_QUIET_HELP)
def cli() -> None:
    """trtcheck: health check for TensorRT engines and ONNX models.

    \b
    Typical use:
      trtcheck report --demo                 # full report on the built-in ResNet-18
      trtcheck inspect model.onnx            # I/O, ops, parameters, FLOPs, lints
      trtcheck bench model.onnx --batch 1,8  # latency and throughput per batch size
      trtcheck report --from results.json    # re-render a report, no measurement
      trtcheck serve model.onnx --window-ms 0,20 --load burst:64,open:500
      trtcheck advise --latency-curve 1:20,8:40,32:110 --arrival-rate 3000  # batch:ms pairs
      trtcheck gate results.json --policy gate.yaml --baseline prod.json

    Progress goes to stderr: a bar with the time left on a terminal, plain lines
    elsewhere; -q and -v work before or after the command. Results go to stdout or -o
    files.
    Shell completion: eval "$(_TRTCHECK_COMPLETE=bash_source trtcheck)" (zsh_source,
    fish_source for those shells).
    """


def format_error(exc: TrtcheckError) -> str:
    """The one line printed for a typed error: ``error: <what>; hint: <what to do>``
    (whitespace folded, control characters of names the user gave shown as escapes)."""
    message = terminal_safe(" ".join(exc.message.split()))
    if exc.hint:
        return f"error: {message}; hint: {terminal_safe(' '.join(exc.hint.split()))}"
    return f"error: {message}"


#: Click >= 8.2 raises this (a UsageError) for a bare group invocation; it carries the help
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def format_usage_error(exc: click.UsageError) -> str:
    """One line ``error: <Click's message>; hint: see `trtcheck <command> --help```."""
    command = exc.ctx.command_path if exc.ctx is not None else "trtcheck"
    message = terminal_safe(" ".join(exc.format_message().split()).rstrip("."))
    return f"error: {message}; hint: see `{command} --help`"


def _print_error(exc: TrtcheckError) -> None:
    click.echo(format_error(exc), err=True)


def internal_error_line(exc: BaseException) -> str:
    """The one line printed for an unexpected exception (a bug in trtcheck: exit 4)."""
    return (f"error: internal error: {type(exc).__name__}: "
            f"{terminal_safe(' '.join(str(exc).split()))}; "
            "hint: this is a bug in trtcheck: rerun with TRTCHECK_DEBUG=1 and report the "
            "traceback")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``trtcheck`` console script; exits the process."""
    try:
        rv = cli.main(args=argv, prog_name="trtcheck", standalone_mode=False)
    except TrtcheckError as exc:
        _print_error(exc)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.UsageError as exc:  # Click's own parsing errors: the house one-line format
        if isinstance(exc, _NO_ARGS_IS_HELP):  # bare `trtcheck`: show the help as Click does
            exc.show()
            sys.exit(exc.exit_code)
        click.echo(format_usage_error(exc), err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:  # the boundary: never a traceback for the user
        if os.environ.get("TRTCHECK_DEBUG", "").strip().lower() in ("1", "true", "yes", "on"):
            raise
        click.echo(internal_error_line(exc), err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(rv if isinstance(rv, int) else 0)
