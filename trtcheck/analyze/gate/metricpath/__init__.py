"""Metric paths (the gate's language, also used by compare): parsing (``metric_grammar``),
checks against the results schema and directions (``metric_checks``), values in one
document and ``--list-metrics`` (``metric_resolver``). Metric units are
:mod:`trtcheck.units`.

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.analyze.gate.metricpath.metric_checks import (
    HIGHER,
    LOWER,
    infer_direction,
)
from trtcheck.analyze.gate.metricpath.metric_grammar import (
    MetricMissing,
    MetricPath,
    MetricPathError,
    parse_path,
)
from trtcheck.analyze.gate.metricpath.metric_resolver import evaluate_path, list_metrics

__all__ = [
    "HIGHER",
    "LOWER",
    "MetricMissing",
    "MetricPath",
    "MetricPathError",
    "evaluate_path",
    "infer_direction",
    "list_metrics",
    "parse_path",
]
