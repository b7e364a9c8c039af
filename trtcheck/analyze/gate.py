"""The CI gate: a YAML policy checked against a results file (and a baseline).

The public face of the gate. The work is done in two modules:

- :mod:`trtcheck.analyze.gate_policy`: :func:`load_policy` / :func:`parse_policy` parse
  and validate a policy file into a :class:`Policy` (every mistake is reported at once, in
  one :class:`PolicyError` naming each line); the policy format is described there.
- :mod:`trtcheck.analyze.gate_evaluate`: :func:`evaluate` is a pure function from
  (policy, results, baseline) to a :class:`GateReport` holding every check's verdict;
  the verdicts and validity marks are described there.
"""

from __future__ import annotations

from trtcheck.analyze.gate_evaluate import (
    Check,
    GateReport,
    environment_differences,
    evaluate,
)
from trtcheck.analyze.gate_policy import (
    Policy,
    PolicyError,
    Rule,
    Settings,
    load_policy,
    parse_policy,
)

__all__ = [
    "Check",
    "GateReport",
    "Policy",
    "PolicyError",
    "Rule",
    "Settings",
    "environment_differences",
    "evaluate",
    "load_policy",
    "parse_policy",
]
