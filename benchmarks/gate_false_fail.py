"""False-fail rate and detection power of ``trtcheck gate`` baseline rules.

Draws many pairs of synthetic runs from the noise model in ``trtcheck/testing/synthetic_results.py``
(log-normal jitter, slow AR(1) drift, interference bursts, run-level shift), evaluates a
baseline policy at the default settings with the real
:func:`trtcheck.analyze.gate.gate_evaluate.evaluate`, and counts verdicts per rule:

* same distribution (true change 0%): any ``fail`` is a false fail;
* a true slowdown of 10% and 20%: ``fail`` is a detection.

Also runs noisier machines than the default ``run_to_run_cv`` assumes (run-level shift
2% and 3%) to show what happens when the assumption is violated.

Usage::

    python benchmarks/gate_false_fail.py [--repeats 300] [--seed 0] [--machine dev-cpu]

Prints a table and writes ``benchmarks/results/gate_false_fail-<machine>.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

from _harness import add_machine_argument, format_table, write_result

from trtcheck.testing import synthetic_results as g

from trtcheck.analyze.gate import evaluate
from trtcheck.analyze.gate import parse_policy

POLICY = """\
baseline:
  - bench.batch[*].median_ms: 5%
  - bench.batch[*].throughput_samples_per_s: 5%
  - bench.batch[*].throughput_samples_per_s: 3%
  - bench.batch[*].p99_ms: 10%
"""

RULES = ["median_ms 5%", "throughput 5%", "throughput 3%", "p99_ms 10%"]
MEDIANS = {1: 2.0, 8: 9.0}


def run(repeats: int, seed: int, slowdown: float, run_sigma: float, n: int) -> dict:
    pol = parse_policy(POLICY)
    counts = {r: {"pass": 0, "inconclusive": 0, "fail": 0} for r in RULES}
    for i in range(repeats):
        s = seed * 1_000_000 + i * 2
        base = g.results(MEDIANS, n=n, seed=s, run_sigma=run_sigma)
        new = g.results({b: m * (1 + slowdown) for b, m in MEDIANS.items()}, n=n, seed=s + 1,
                        run_sigma=run_sigma)
        rep = evaluate(pol, new, base)
        for c in rep.checks:
            if c.kind != "baseline":
                continue
            rule = RULES[(c.line - 2)]
            counts[rule][c.verdict if c.verdict in ("pass", "fail") else "inconclusive"] += 1
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--samples", type=int, default=1000, help="samples per batch size")
    add_machine_argument(ap)
    args = ap.parse_args()
    scenarios = [
        ("same, run-to-run 1% (default assumption)", 0.0, 0.01),
        ("same, run-to-run 2% (noisier than assumed)", 0.0, 0.02),
        ("same, run-to-run 3% (noisier than assumed)", 0.0, 0.03),
        ("10% slower, run-to-run 1%", 0.10, 0.01),
        ("20% slower, run-to-run 1%", 0.20, 0.01),
        ("50% slower, run-to-run 1%", 0.50, 0.01),
    ]
    out = {"repeats": args.repeats, "samples_per_batch": args.samples, "seed": args.seed,
           "batch_sizes": sorted(MEDIANS), "policy": POLICY, "scenarios": []}
    print(f"{args.repeats} pairs x {len(MEDIANS)} batch sizes, {args.samples} samples each; "
          "checks per rule = 2 x pairs")
    rows = []
    t0 = time.perf_counter()
    for name, slowdown, sigma in scenarios:
        counts = run(args.repeats, args.seed, slowdown, sigma, args.samples)
        for rule, c in counts.items():
            tot = sum(c.values())
            rows.append({"scenario": name, "rule": rule, "pass": c["pass"],
                         "inconclusive": c["inconclusive"], "fail": c["fail"],
                         "fail_percent": 100.0 * c["fail"] / tot})
        out["scenarios"].append({"name": name, "true_slowdown": slowdown,
                                 "run_sigma": sigma, "counts": counts})
    out["elapsed_s"] = round(time.perf_counter() - t0, 1)
    print(format_table(rows, [("scenario", "scenario", ""), ("rule", "rule", ""),
                              ("pass", "pass", "d"), ("inconclusive", "inconcl", "d"),
                              ("fail", "fail", "d"), ("fail_percent", "fail %", ".2f")]))
    write_result("gate_false_fail", args.machine, out)

if __name__ == "__main__":
    main()
