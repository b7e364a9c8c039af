"""Wall time of ``trtcheck gate`` as a CI step runs it: a fresh process, startup included.

Goal: under 1 s for a typical results file, without TensorRT or onnxruntime.

Cases (synthetic, seeded results from trtcheck/testing/synthetic_results.py, written with save_results):

* typical: batch sizes 1, 4, 8, 16 with 2,000 samples each (``trtcheck bench``'s
  default 2 s minimum per batch size on a ~1 ms model), 6 budgets and 3 baseline rules
  over every batch size (12 bootstrap comparisons);
* large: batch sizes 1..32 (6) with 10,000 samples each, same policy (18 comparisons);
* budgets only: the typical file without a baseline.

Each case runs ``python -m trtcheck gate ...`` ``--repeats`` times (default 5) and
reports the median and the maximum wall time; it also checks that onnxruntime,
matplotlib, scipy and tensorrt were not imported (``-X importtime``).

Usage::

    python benchmarks/gate_speed.py [--repeats 5] [--machine dev-cpu]

Prints a table and writes ``benchmarks/results/gate_speed-<machine>.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import add_machine_argument, format_table, write_result

from trtcheck.testing import synthetic_results as g

POLICY = """\
version: 1
budgets:
  - bench.batch[8].p99_ms <= 200 ms
  - bench.batch[1].median_ms <= 50 ms
  - bench.batch[*].throughput_samples_per_s >= 10 samples/s
  - metric: inspection.parameter_bytes
    max: 100 MiB
  - len(inspection.lints[severity=error]) == 0
  - bench.batch[8].count >= 459
baseline:
  - bench.batch[*].median_ms: 5%
  - bench.batch[*].p99_ms: 10%
  - bench.batch[*].throughput_samples_per_s: 3%
"""
HEAVY = ("onnxruntime", "matplotlib", "scipy", "tensorrt", "tensorrt_rtx", "torch")


def timed(argv: list[str], repeats: int) -> tuple[list[float], set[str], int]:
    env = dict(os.environ)
    times = []
    imported: set[str] = set()
    rc = -1
    for i in range(repeats):
        extra = ["-X", "importtime"] if i == 0 else []
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, *extra, "-m", "trtcheck", *argv],
                              capture_output=True, text=True, env=env, check=False)
        times.append(time.perf_counter() - t0)
        rc = proc.returncode
        if i == 0:
            imported = {ln.split("|")[-1].strip().split(".")[0] for ln in proc.stderr.splitlines()
                        if ln.startswith("import time:")}
            times.pop()  # importtime slows the process: not counted
    return times, imported & set(HEAVY), rc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    add_machine_argument(ap)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        dd = Path(d)
        typical = {1: 1.0, 4: 2.5, 8: 4.5, 16: 8.5}
        large = {1: 1.0, 2: 1.5, 4: 2.5, 8: 4.5, 16: 8.5, 32: 16.0}
        files = {
            "typ_base": g.write(g.results(typical, n=2000, seed=1), dd / "typ_base.json"),
            "typ_new": g.write(g.results(typical, n=2000, seed=2), dd / "typ_new.json"),
            "big_base": g.write(g.results(large, n=10_000, seed=3), dd / "big_base.json"),
            "big_new": g.write(g.results(large, n=10_000, seed=4), dd / "big_new.json"),
        }
        pol = dd / "policy.yaml"
        pol.write_text(POLICY)
        pol_budgets = dd / "budgets.yaml"
        pol_budgets.write_text(POLICY.split("baseline:")[0])
        cases = [
            ("typical: 4 batch sizes x 2,000 samples, baseline", files["typ_new"],
             ["-p", str(pol), "-b", str(files["typ_base"])]),
            ("large: 6 batch sizes x 10,000 samples, baseline", files["big_new"],
             ["-p", str(pol), "-b", str(files["big_base"])]),
            ("typical, budgets only", files["typ_new"], ["-p", str(pol_budgets)]),
        ]
        rows = []
        for name, res, extra in cases:
            times, heavy, rc = timed(["gate", str(res), *extra], args.repeats + 1)
            rows.append({"case": name, "file_mb": round(res.stat().st_size / 1e6, 2),
                         "median_s": round(statistics.median(times), 3),
                         "max_s": round(max(times), 3), "exit_code": rc,
                         "heavy_imports": ", ".join(sorted(heavy)) or "none",
                         "runs": len(times)})
    print(format_table(rows, [("case", "case", ""), ("file_mb", "file MB", ".2f"),
                              ("median_s", "median s", ".3f"), ("max_s", "max s", ".3f"),
                              ("exit_code", "exit", "d"),
                              ("heavy_imports", "heavy imports", "")]))
    write_result("gate_speed", args.machine, {
        "goal_s": 1.0, "cases": rows,
        "note": "fresh process per run, startup included"})

if __name__ == "__main__":
    main()
