"""No false fails at the default settings over repeated same-distribution pairs.

The noise model (tests/gate_synth.py) imitates a busy 2-core machine: log-normal jitter,
slow drift, interference bursts and a 1% run-level shift. benchmarks/gate_false_fail.py
runs the same experiment with more repeats and reports rates (docs/gate.md).
"""

from __future__ import annotations

import gate_synth as g
import pytest

from trtcheck.analyze.gate import evaluate, parse_policy

POLICY = parse_policy("""\
baseline:
  - bench.batch[*].median_ms: 5%
  - bench.batch[*].throughput_samples_per_s: 3%
  - bench.batch[*].p99_ms: 10%
""")
MEDIANS = {1: 2.0, 8: 9.0}
PAIRS = 40


def verdicts(slowdown: float, seed0: int) -> dict[str, int]:
    out = {"pass": 0, "inconclusive": 0, "fail": 0}
    for i in range(PAIRS):
        s = seed0 + 2 * i
        base = g.results(MEDIANS, n=800, seed=s)
        new = g.results({b: m * (1 + slowdown) for b, m in MEDIANS.items()}, n=800, seed=s + 1)
        for c in evaluate(POLICY, new, base).checks:
            out[c.verdict] += 1
    return out


@pytest.mark.slow
def test_same_engine_on_noisy_machine_never_fails():
    v = verdicts(0.0, seed0=100)
    assert v["fail"] == 0, v
    assert v["pass"] > 0  # the gate is not simply inconclusive about everything
    assert sum(v.values()) == PAIRS * 2 * 3


@pytest.mark.slow
def test_clear_regression_is_detected():
    pol = parse_policy("baseline:\n  - bench.batch[*].median_ms: 5%\n"
                       "  - bench.batch[*].throughput_samples_per_s: 3%\n")
    fails = 0
    for i in range(8):
        base = g.results(MEDIANS, n=800, seed=500 + 2 * i)
        new = g.results({b: m * 1.25 for b, m in MEDIANS.items()}, n=800, seed=501 + 2 * i)
        fails += sum(c.verdict == "fail" for c in evaluate(pol, new, base).checks)
    assert fails == 8 * 2 * 2
