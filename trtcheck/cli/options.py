"""The comma-list option type every command uses (``--batch 1,2,4``, ``--window-ms 0,20``,
``--precision fp16,int8``, ``--load burst:64,open:500``, ``--gpus 0,1``...)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class CommaList(click.ParamType):
    """A comma-separated option value read into a list of ``item`` values.

    Entries are stripped. Empty entries are dropped (``"fp16, int8,"`` -> ``["fp16",
    "int8"]``), or refused with ``empty_entries="refuse"``. Numbers must lie in
    ``[min, max]`` and be finite; an entry given twice is refused
    (:func:`refuse_duplicates`) unless ``unique`` is false. ``None``
    stays ``None``; an empty value is ``None`` with ``empty="none"``, an empty list with
    ``empty="list"``, refused with ``empty="refuse"``.

    Args:
        item: ``str``, ``int`` or ``float``: the type of each entry.
        min: the smallest accepted number (inclusive), or ``None``.
        max: the largest accepted number (inclusive), or ``None``.
        lower: lower-case ``str`` entries.
        unique: refuse an entry given twice.
        empty_entries: ``"drop"`` or ``"refuse"`` (``"1,,2"``).
        empty: what a value without entries gives (see above).
        example: a valid value, for the messages, e.g. ``"1,2,4,8"``.
        noun: what the entries are, for the range message, e.g. ``"batch sizes"``
            [default: ``"entries"``; Click's message names the option].

    Raises (from :meth:`convert`):
        click.BadParameter: an entry that is not a number of the kind, or out of range,
            or an empty entry/value where refused (exit 2, one line, naming the option).
        UsageError: an entry given twice (exit 2).
    """

    name = "list"

    def __init__(self, item: type = str, *, min: float | None = None,
                 max: float | None = None, lower: bool = False, unique: bool = True,
                 empty_entries: str = "drop", empty: str = "list", example: str = "",
                 noun: str | None = None) -> None:
        if item not in (str, int, float):
            raise ValueError(f"CommaList entries are str, int or float, not {item!r}")
        if empty_entries not in ("drop", "refuse") or empty not in ("list", "none",
                                                                    "refuse"):
            raise ValueError("empty_entries: drop|refuse; empty: list|none|refuse")
        self.item, self.min, self.max = item, min, max
        self.lower, self.unique = lower, unique
        self.empty_entries, self.empty = empty_entries, empty
        self.example, self.noun = example, noun

    def _kind(self) -> str:
        return {int: "integers", float: "numbers", str: "names"}[self.item]

    def _range_text(self) -> str:
        if self.item is int:
            if self.min is not None and self.max is not None:
                return f"integers in {self.min}..{self.max}"
            return "integers" + ("" if self.min is None else f" >= {self.min}")
        low = "" if self.min is None else f" >= {self.min:g}"
        high = "" if self.max is None else f" <= {self.max:g}"
        return "finite numbers" + low + (" and" if low and high else "") + high

    def _example(self) -> str:
        return f", e.g. {self.example}" if self.example else ""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if value is None or isinstance(value, list):
            return value
        if isinstance(value, tuple):
            return list(value)
        text = str(value)
        entries = [v.strip() for v in text.split(",")]
        if self.empty_entries == "refuse" and text.strip() and any(not v for v in entries):
            self.fail(f"{text!r} has an empty entry; give a comma-separated list of "
                      f"{self._kind()}{self._example()}", param, ctx)
        entries = [v for v in entries if v]
        if not entries:
            if self.empty == "none":
                return None
            if self.empty == "refuse":
                self.fail(f"{text!r} names no entry; give a comma-separated list of "
                          f"{self._kind()}{self._example()}", param, ctx)
            return []
        out: list[Any]
        if self.item is str:
            out = [v.lower() for v in entries] if self.lower else entries
        else:
            try:
                out = [self.item(v) for v in entries]
            except ValueError:
                self.fail(f"{text!r} is not a comma-separated list of {self._kind()}"
                          f"{self._example()}", param, ctx)
            if any((self.item is float and not math.isfinite(v))
                   or (self.min is not None and v < self.min)
                   or (self.max is not None and v > self.max) for v in out):
                self.fail(f"{self.noun or 'entries'} must be {self._range_text()}"
                          f"{self._example()}", param, ctx)
        if self.unique and param is not None:
            refuse_duplicates(_option_name(param), out, self.example or "A,B")
        return out


def _option_name(param: click.Parameter) -> str:
    """The option as typed: its longest spelling, e.g. ``--window-ms``."""
    return max(param.opts, key=len) if param.opts else (param.name or "LIST")


def refuse_duplicates(option: str, items: list[Any], example: str) -> None:
    """Before any work: a comma-separated list option names each entry once
    (``--precision fp32,fp32`` would build one plan, then refuse to write it again;
    ``--batch 1,1`` would time batch 1 twice under one label).

    Args:
        option: the option as typed, e.g. ``"--precision"``.
        items: the parsed entries, in the order given.
        example: a valid value for the hint.

    Raises:
        UsageError: an entry appears more than once (all repeated entries are named).
    """
    from trtcheck.errors import UsageError

    seen: set[Any] = set()
    repeated: list[str] = []
    for item in items:
        if item in seen and str(item) not in repeated:
            repeated.append(str(item))
        seen.add(item)
    if repeated:
        raise UsageError(f"{option} names {', '.join(repeated)} more than once",
                         f"give each entry once, e.g. {option} {example}")


GPU_IDS = CommaList(int, min=0, unique=False, noun="GPU ids", example="0,1")
"""``--gpus 0,1``: GPU ids (integers >= 0); :func:`gpu_ids` checks them distinct."""


def gpu_ids(ids: list[int] | None) -> tuple[int, ...] | None:
    """``--gpus 0,1`` (read by :data:`GPU_IDS`) -> ``(0, 1)``; ``None`` -> ``None`` (no
    ids written).

    Raises:
        UsageError: no id, or an id given twice.
    """
    from trtcheck.errors import UsageError

    if ids is None:
        return None
    if not ids or len(set(ids)) != len(ids):
        raise UsageError(f"--gpus {','.join(map(str, ids))!r} must list distinct GPU ids >= 0",
                         "e.g. --gpus 0,1")
    return tuple(ids)


def objective_option(what: str, recorded: str | None = None) -> Any:
    """The ``--objective NAME`` option of ``tune`` and ``advise``: its choices and help
    come from the objective registry (:data:`trtcheck.analyze.objectives.OBJECTIVES`), so
    a registered objective appears in both commands with no edit here. ``what`` names
    what is chosen ("the configuration", "the recommendation"). With ``recorded`` (the
    input that may carry an objective, e.g. "--from tune.json"), the option's value is
    ``None`` when not given, so the command can take that input's objective; its help
    names both defaults."""
    from trtcheck.analyze.objectives import OBJECTIVES

    names = list(OBJECTIVES)
    rules = "; ".join(f"{name}: {obj.summary}" for name, obj in OBJECTIVES.items())
    if recorded is None:
        return click.option("--objective", default=names[0], show_default=True,
                            type=click.Choice(names),
                            help=f"How {what} is chosen ({rules}).")
    return click.option("--objective", default=None, type=click.Choice(names),
                        help=f"How {what} is chosen ({rules}). [default: {names[0]}; with "
                             f"{recorded}, its objective]")


def apply_options(f: F, decorators: list[Callable[[F], F]]) -> F:
    """``f`` decorated with ``decorators`` in order (the first is the first in ``--help``),
    as if they were stacked on it: an option group of a command in one decorator."""
    for decorate in reversed(decorators):
        f = decorate(f)
    return f


def given_options(names: set[str]) -> list[str]:
    """The long flags of the current command's parameters named in ``names`` that the user
    gave (not left at their default), in ``--help`` order: for refusing options a mode
    would silently ignore."""
    ctx = click.get_current_context()
    return [max(p.opts, key=len) for p in ctx.command.params if p.name in names
            and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]


def option_given(param: str) -> bool:
    """Whether the user gave the current command's parameter ``param`` on the command line
    (not its default)."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    return ctx.get_parameter_source(param) not in (ParameterSource.DEFAULT, None)
