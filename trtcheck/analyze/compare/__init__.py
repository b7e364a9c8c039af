"""Comparing two results documents (``compare``: metric deltas with regression
intervals, field differences, layer timings).

The names below are the subsystem's public face; the rest of its modules is private. The
entry point :func:`trtcheck.analyze.compare.compare.compare` is imported from its module
(it shares the module's name, so the face does not rebind it).
"""

from __future__ import annotations

from trtcheck.analyze.compare.compare import (
    Comparison,
    FieldDiff,
    MetricDelta,
)

__all__ = [
    "Comparison",
    "FieldDiff",
    "MetricDelta",
]
