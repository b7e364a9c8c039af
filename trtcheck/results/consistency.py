"""Consistency checks of results records that the JSON schema alone cannot express.

A results file can match every field's type and still be impossible: a configuration with
no repeats, waterfall parts not aligned with the latencies they split, a NaN latency, a
batch size of 2**63. Analysis indexes and sums these arrays, so each such file would
crash ``advise``/``report`` or, worse, give a number. The records call these functions
from pydantic validators, so :func:`trtcheck.results.model.results_from_json` turns every
one into a :class:`~trtcheck.errors.SchemaError` (exit 2) naming the JSON path.

Every check raises :class:`ValueError` (what pydantic reports as a validation error).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

MAX_BATCH_SIZE = 2**31 - 1
"""Largest batch size a record may hold (TensorRT and ONNX Runtime dimensions are 32-bit
signed on the batch axis of every runtime trtcheck drives)."""

MAX_COUNT = 2**53
"""Largest count (requests, executions, samples) a record may hold: the largest integer a
float64 holds exactly, far beyond any run (10**7 requests at most)."""


def check_times_ms(values: Iterable[float], what: str, unit: str = "ms") -> None:
    """Every value is a finite time >= 0 (in ``unit``: ms, or us for batching windows).

    Raises:
        ValueError: naming the first bad value and its index.
    """
    for i, v in enumerate(values):
        if not (math.isfinite(v) and v >= 0.0):
            raise ValueError(f"{what}[{i}] is {v!r}: times must be finite and >= 0 {unit}")


def check_aligned(base: Sequence[object], others: Mapping[str, Sequence[object]],
                  base_name: str, allow_empty: bool = False) -> None:
    """Every list in ``others`` has the length of ``base`` (per-request or per-execution
    arrays that the analysis zips together).

    Args:
        allow_empty: an empty list in ``others`` means "not recorded" and passes.

    Raises:
        ValueError: naming the first list of another length.
    """
    for name, values in others.items():
        if allow_empty and not values:
            continue
        if len(values) != len(base):
            raise ValueError(f"{name} has {len(values)} entries but {base_name} has "
                             f"{len(base)}; they must be aligned")


def check_batch_size(value: int, what: str) -> int:
    """``1 <= value <= MAX_BATCH_SIZE``.

    Raises:
        ValueError: out of range.
    """
    if not 1 <= value <= MAX_BATCH_SIZE:
        raise ValueError(f"{what} is {value}: batch sizes are 1..{MAX_BATCH_SIZE}")
    return value


def check_batch_sizes(values: Iterable[int], what: str) -> None:
    """:func:`check_batch_size` on every value."""
    for i, v in enumerate(values):
        check_batch_size(v, f"{what}[{i}]")


def check_unique(values: Sequence[object], what: str) -> None:
    """No value appears twice (keys that analysis looks rows up by).

    Raises:
        ValueError: naming the first duplicate.
    """
    seen: set[object] = set()
    for v in values:
        if v in seen:
            raise ValueError(f"{what} {v!r} appears twice")
        seen.add(v)
