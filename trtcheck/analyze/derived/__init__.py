"""Derived analyses stored in the results before rendering (``derived``): the
``enqueue-bound`` warning (``engine_timing``), the predicted-vs-measured serving table and
the verdict (``verdict``).

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.analyze.derived.derived import (
    add_enqueue_bound_findings,
    add_serve_predictions,
    complete,
)
from trtcheck.analyze.derived.verdict import (
    bench_findings,
    fit_remedy,
    judge,
)

__all__ = [
    "add_enqueue_bound_findings",
    "add_serve_predictions",
    "bench_findings",
    "complete",
    "fit_remedy",
    "judge",
]
