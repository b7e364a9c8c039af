"""Shared option decorators and output helpers for the commands."""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class OutputFormat(str, enum.Enum):
    """Formats a command can print. Machine formats go to stdout, progress to stderr."""

    TEXT = "text"
    JSON = "json"
    MD = "md"


def format_option(*choices: OutputFormat) -> Callable[[F], F]:
    """``--format`` with the given choices (default: the first)."""
    names = [c.value for c in (choices or tuple(OutputFormat))]
    return click.option("--format", "output_format", type=click.Choice(names),
                        default=names[0], show_default=True,
                        help="Output format (machine formats print to stdout).")


def progress_enabled() -> bool:
    """Progress bars only when stderr is a terminal."""
    return sys.stderr.isatty()


def echo_json(obj: Any) -> None:
    """Print ``obj`` (a pydantic model or JSON-able value) as indented JSON on stdout."""
    if hasattr(obj, "model_dump_json"):
        click.echo(obj.model_dump_json(indent=2))
    else:
        click.echo(json.dumps(obj, indent=2, sort_keys=True))


def log(message: str) -> None:
    """A progress/status line for humans, on stderr."""
    click.echo(message, err=True)
