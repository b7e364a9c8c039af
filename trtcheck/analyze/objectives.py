"""Objectives by name: how a serving configuration is chosen among the predicted ones.

An :class:`Objective` says which candidates are acceptable (:meth:`Objective.feasible`),
which one it picks (:meth:`Objective.pick`) and its rule in words
(:meth:`Objective.describe`). ``trtcheck tune --objective`` and ``trtcheck advise
--objective`` look them up in one registry (:data:`OBJECTIVES`, :func:`get_objective`).
Adding an objective is one module with an :class:`Objective` subclass and one
:func:`register` call.

The choice is made on the prediction **interval** where the prediction has one (tune's
:class:`~trtcheck.results.tune.TunePrediction`, and advise's
:class:`~trtcheck.results.advice.SimPrediction` from a live calibration): a configuration
meets the P99 objective when the upper end of its P99 interval does, and P99 is compared
by that upper end (the latency the configuration stays under with the interval's
confidence). A prediction without an interval is compared by its point.

Shipped: ``fewest-instances`` (the fewest instances meeting the P99 objective; among
those the lowest P99, the simpler within 2%), ``p99`` (the lowest P99 within the
instance limit), ``throughput`` (the highest capacity among those meeting the P99
objective: Model Analyzer's default objective, which ranks by throughput).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from trtcheck.errors import InputError

TIE_REL = 0.02
"""P99 values within 2% (+ :data:`TIE_ABS_MS`) are a tie, broken towards the simpler
configuration (no window first, then the shorter window, then the smaller max batch;
the same tie as ``advise``'s nominal choice)."""

TIE_ABS_MS = 0.01

THROUGHPUT_TIE_REL = 0.05
"""Capacities within 5% are a tie for the ``throughput`` objective, broken by P99."""


def p99_upper_ms(p: Any) -> float:
    """The P99 a prediction is compared by: its interval's upper end when it has one,
    else its point; ``inf`` when unstable or unknown (ms)."""
    iv = getattr(p, "p99", None)
    if iv is not None and getattr(iv, "hi_ms", None) is not None:
        return float(iv.hi_ms)
    pair = getattr(p, "p99_interval_ms", None)
    if pair:
        return float(pair[1])
    v = getattr(p, "p99_ms", None)
    return math.inf if v is None else float(v)


def capacity_per_s(p: Any) -> float:
    """Requests per second a configuration carries: its recorded capacity, else the
    offered rate / utilisation (req/s)."""
    cap = getattr(p, "capacity_queries_per_s", None)
    if cap:
        return float(cap)
    rate = getattr(p, "arrival_rate_per_s", None)
    util = float(getattr(p, "utilisation", 0.0) or 0.0)
    return float(rate) / util if rate and util > 0 else 0.0


def _simpler_key(p: Any) -> tuple:
    return (p.window_us > 0, p.window_us, p.max_batch_size)


class Objective:
    """How a configuration is chosen. Subclasses set :attr:`name` and :attr:`summary`
    and may override :meth:`pick`.

    Attributes:
        name: the registry name (``--objective NAME``).
        summary: one line for ``--help``.
    """

    name: str = ""
    summary: str = ""

    def feasible(self, p: Any, *, slo_p99_ms: float | None, max_utilisation: float,
                 max_instances: int | None = None) -> bool:
        """Whether prediction ``p`` is acceptable: stable, at most ``max_utilisation``
        busy, within ``max_instances``, and (with an objective) the upper end of its
        P99 interval at most ``slo_p99_ms``."""
        if not p.stable or p.utilisation > max_utilisation:
            return False
        if max_instances is not None and p.instances > max_instances:
            return False
        return slo_p99_ms is None or p99_upper_ms(p) <= slo_p99_ms

    def rank(self, feasible: Sequence[Any]) -> list[Any]:
        """The feasible predictions best first (the first is :meth:`pick`'s)."""
        raise NotImplementedError

    def pick(self, feasible: Sequence[Any]) -> Any:
        """The chosen prediction among ``feasible`` (non-empty).

        Raises:
            ValueError: ``feasible`` is empty.
        """
        if not feasible:
            raise ValueError("no feasible configuration to pick from")
        return self.rank(feasible)[0]

    def describe(self, slo_p99_ms: float | None) -> str:
        """The rule in words, as printed with every answer."""
        raise NotImplementedError


def _p99_ties_ranked(cands: Sequence[Any], key: Any = _simpler_key) -> list[Any]:
    """Lowest P99 (upper end) first; values within :data:`TIE_REL` of the best count
    as a tie and go in the order of ``key`` (simpler first)."""
    best = min(p99_upper_ms(p) for p in cands)
    tie = best * (1 + TIE_REL) + TIE_ABS_MS
    ties = sorted((p for p in cands if p99_upper_ms(p) <= tie), key=key)
    rest = sorted((p for p in cands if p99_upper_ms(p) > tie), key=p99_upper_ms)
    return ties + rest


class FewestInstances(Objective):
    """The fewest instances that meet the P99 objective; among them the lowest P99."""

    name = "fewest-instances"
    summary = "fewest instances meeting the P99 objective, then the lowest P99"

    def rank(self, feasible: Sequence[Any]) -> list[Any]:  # noqa: D102
        out: list[Any] = []
        for n in sorted({p.instances for p in feasible}):
            out += _p99_ties_ranked([p for p in feasible if p.instances == n])
        return out

    def describe(self, slo_p99_ms: float | None) -> str:  # noqa: D102
        meet = (f"whose P99 interval's upper end is at most {slo_p99_ms:g} ms"
                if slo_p99_ms is not None else "that keep up")
        return (f"fewest instances among the configurations {meet}; among those the "
                f"lowest P99 upper end (within {TIE_REL:.0%}: the simpler one)")


class LowestP99(Objective):
    """The lowest P99 within the instance limit."""

    name = "p99"
    summary = "lowest P99 within the instance counts searched"

    def rank(self, feasible: Sequence[Any]) -> list[Any]:  # noqa: D102
        return _p99_ties_ranked(feasible, key=lambda p: (p.instances, *_simpler_key(p)))

    def describe(self, slo_p99_ms: float | None) -> str:  # noqa: D102
        meet = (f", P99 upper end at most {slo_p99_ms:g} ms" if slo_p99_ms is not None
                else "")
        return (f"lowest P99 interval upper end among the configurations that keep up"
                f"{meet} (within {TIE_REL:.0%}: fewer instances, then the simpler one)")


class HighestThroughput(Objective):
    """The highest capacity among the configurations that meet the P99 objective."""

    name = "throughput"
    summary = "highest throughput (capacity) under the P99 objective (Model Analyzer's)"

    def rank(self, feasible: Sequence[Any]) -> list[Any]:  # noqa: D102
        best = max(capacity_per_s(p) for p in feasible)
        tie = best * (1 - THROUGHPUT_TIE_REL)
        top = [p for p in feasible if capacity_per_s(p) >= tie]
        rest = sorted((p for p in feasible if capacity_per_s(p) < tie),
                      key=lambda p: -capacity_per_s(p))
        return sorted(top, key=lambda p: (p99_upper_ms(p), p.instances)) + rest

    def describe(self, slo_p99_ms: float | None) -> str:  # noqa: D102
        meet = (f" whose P99 interval's upper end is at most {slo_p99_ms:g} ms"
                if slo_p99_ms is not None else " that keep up")
        return (f"highest capacity (requests per second the configuration carries) among "
                f"the configurations{meet}; capacities within {THROUGHPUT_TIE_REL:.0%} are "
                "a tie, broken by the lower P99 upper end")


OBJECTIVES: dict[str, Objective] = {}
"""The registry: name -> objective."""

DEFAULT_OBJECTIVE = "fewest-instances"


def register(obj: Objective) -> Objective:
    """Add ``obj`` to :data:`OBJECTIVES` under ``obj.name`` (returns it).

    Raises:
        ValueError: the name is empty or taken.
    """
    if not obj.name or obj.name in OBJECTIVES:
        raise ValueError(f"objective name {obj.name!r} is empty or already registered")
    OBJECTIVES[obj.name] = obj
    return obj


for _o in (FewestInstances(), LowestP99(), HighestThroughput()):
    register(_o)


def get_objective(name: str) -> Objective:
    """The registered objective ``name``.

    Raises:
        InputError: no such objective (the names are listed).
    """
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise InputError(f"unknown objective {name!r}",
                         f"use one of: {', '.join(OBJECTIVES)}") from None
