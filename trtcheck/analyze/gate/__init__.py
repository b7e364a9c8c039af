"""The CI gate: the YAML policy (``gate_policy``: parsing, rule and settings validation),
checking a policy against results and a baseline (``gate_evaluate``) and the regression
statistics on raw samples (``regression``, also used by compare). The metric paths the
gate speaks are the subpackage :mod:`trtcheck.analyze.gate.metricpath`.

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.analyze.gate.gate_evaluate import (
    Check,
    GateReport,
    environment_differences,
    evaluate,
)
from trtcheck.analyze.gate.gate_policy import load_policy, parse_policy

__all__ = [
    "Check",
    "GateReport",
    "environment_differences",
    "evaluate",
    "load_policy",
    "parse_policy",
]
