"""False-fail rate and detection power of ``trtcheck gate`` baseline rules.

Draws many pairs of synthetic runs from the noise model in ``tests/gate_synth.py``
(log-normal jitter, slow AR(1) drift, interference bursts, run-level shift), evaluates a
baseline policy at the default settings with the real :func:`trtcheck.analyze.gate.evaluate`,
and counts verdicts per rule:

* same distribution (true change 0%): any ``fail`` is a false fail;
* a true slowdown of 10% and 20%: ``fail`` is a detection.

Also runs noisier machines than the default ``run_to_run_cv`` assumes (run-level shift
2% and 3%) to show what happens when the assumption is violated.

Usage::

    PYTHONPATH=. python benchmarks/gate_false_fail.py [--repeats 300] [--seed 0]

Prints a table and writes ``benchmarks/results/gate_false_fail.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent))

import gate_synth as g

from trtcheck.analyze.gate import evaluate, parse_policy

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
           "batch_sizes": sorted(MEDIANS), "policy": POLICY, "python": platform.python_version(),
           "scenarios": []}
    print(f"{args.repeats} pairs x {len(MEDIANS)} batch sizes, {args.samples} samples each; "
          "checks per rule = 2 x pairs")
    print(f"{'scenario':<46} {'rule':<15} {'pass':>6} {'inconcl':>8} {'fail':>6} {'fail %':>7}")
    t0 = time.perf_counter()
    for name, slowdown, sigma in scenarios:
        counts = run(args.repeats, args.seed, slowdown, sigma, args.samples)
        for rule, c in counts.items():
            tot = sum(c.values())
            print(f"{name:<46} {rule:<15} {c['pass']:>6} {c['inconclusive']:>8} {c['fail']:>6} "
                  f"{100.0 * c['fail'] / tot:>6.2f}%")
        out["scenarios"].append({"name": name, "true_slowdown": slowdown,
                                 "run_sigma": sigma, "counts": counts})
    out["elapsed_s"] = round(time.perf_counter() - t0, 1)
    dest = HERE / "results" / "gate_false_fail.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {dest} ({out['elapsed_s']} s)")


if __name__ == "__main__":
    main()
