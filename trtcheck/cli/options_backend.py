"""The backend options of the command line, built from the groups the backends declare
(:mod:`trtcheck.backends.options`, registered in :mod:`trtcheck.backends.registry`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from trtcheck.backends.options import BackendOption
from trtcheck.backends.registry import option_groups
from trtcheck.cli.options import CommaList

F = TypeVar("F", bound=Callable[..., Any])


def _click_option(opt: BackendOption) -> Callable[[F], F]:
    if opt.kind == "flag":
        return click.option(opt.flag, opt.dest, is_flag=True, help=opt.help)
    if opt.kind == "int":
        return click.option(opt.flag, opt.dest, type=click.IntRange(min=opt.min, max=opt.max),
                            default=None, metavar=opt.metavar, help=opt.help)
    return click.option(opt.flag, opt.dest, type=CommaList(unique=False, empty="none"),
                        default=None, metavar=opt.metavar, help=opt.help)


def backend_options(backends: tuple[str, ...] | None = None) -> Callable[[F], F]:
    """A decorator adding the options of the backends ``backends`` (default: every
    registered backend), group by group in registration order; the command receives each
    under its ``dest`` and passes them on as one mapping (``RunOptions.backend_options``)."""
    opts = [o for group in option_groups(backends) for o in group.options]

    def decorate(f: F) -> F:
        for opt in reversed(opts):
            f = _click_option(opt)(f)
        return f

    return decorate


def backend_option_dests(backends: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The ``dest`` names of the options :func:`backend_options` adds."""
    return tuple(o.dest for group in option_groups(backends) for o in group.options)
