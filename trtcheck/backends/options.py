"""Backend option groups: the command-line options a backend takes, declared by the backend.

Each backend module declares one :class:`OptionGroup` (``OPTIONS``) naming its options:
the flag, the keyword of the backend's constructor it sets, the type, the help and the
default. The registry (:mod:`trtcheck.backends.registry`) holds each backend with its
group; the command line builds its backend options from the groups
(:mod:`trtcheck.cli.options_backend`), and :func:`constructor_kwargs` turns the values a
user gave into the chosen backend's constructor keywords, refusing an option of another
backend instead of dropping it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from trtcheck.errors import InputError

#: how an option's value is read: a flag (bool), an integer, or a comma-separated list
OptionKind = Literal["flag", "int", "list"]


@dataclass(frozen=True)
class BackendOption:
    """One command-line option of a backend.

    Attributes:
        flag: the option as typed, e.g. ``"--cuda-graph"``.
        dest: the name the command receives the value under, e.g. ``"cuda_graph"``.
        kwarg: the keyword of the backend's constructor it sets, e.g. ``"use_cuda_graph"``.
        kind: ``"flag"`` (``True`` when given), ``"int"`` (in ``[min, max]``) or ``"list"``
            (comma-separated strings).
        help: the ``--help`` text.
        min: the smallest accepted integer (``kind="int"``), or ``None``.
        max: the largest accepted integer (``kind="int"``), or ``None``.
        metavar: the placeholder shown in ``--help``, or ``None`` for the type's own.
    """

    flag: str
    dest: str
    kwarg: str
    kind: OptionKind
    help: str
    min: int | None = None
    max: int | None = None
    metavar: str | None = None

    def given(self, value: Any) -> bool:
        """Whether ``value`` (as the command received it) was given: a set flag, a number,
        a non-empty list; ``None``, ``False`` and ``[]`` are the defaults."""
        return value is not None and value is not False and value != []


@dataclass(frozen=True)
class OptionGroup:
    """The options of one runtime (``label`` names it in messages, e.g. ``"TensorRT"``)."""

    label: str
    options: tuple[BackendOption, ...]

    def by_dest(self, dest: str) -> BackendOption | None:
        """The option received under ``dest``, or ``None``."""
        return next((o for o in self.options if o.dest == dest), None)


def constructor_kwargs(backend_name: str, group: OptionGroup,
                       groups: Iterable[OptionGroup], values: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor keywords of backend ``backend_name`` (whose group is ``group``) from
    the option values a command received (``dest -> value``; values not given are skipped).

    Args:
        groups: every registered group, to name the runtime of a foreign option.

    Raises:
        InputError: a given option that ``group`` does not declare (exit 2), e.g.
            ``--cuda-graph is a TensorRT option; the onnxruntime backend does not take it``.
    """
    kwargs: dict[str, Any] = {}
    for dest, value in values.items():
        own = group.by_dest(dest)
        if own is not None:
            if own.given(value):
                kwargs[own.kwarg] = True if own.kind == "flag" else value
            continue
        for other in groups:
            foreign = other.by_dest(dest)
            if foreign is not None and foreign.given(value):
                article = "an" if other.label[:1] in "AEIOU" else "a"
                raise InputError(f"{foreign.flag} is {article} {other.label} option; the "
                                 f"{backend_name} backend does not take it",
                                 f"drop {foreign.flag}: it applies to {other.label} only")
    return kwargs
