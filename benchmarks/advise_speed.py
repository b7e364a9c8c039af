#!/usr/bin/env python3
"""``trtcheck advise`` wall time including interpreter start-up (under 2 s from
a results JSON on 2 cores), and what it imports.

Writes a results JSON with a bench section (T(b) of a synthetic curve with raw samples,
as ``trtcheck bench`` stores it) to a temporary folder, then runs
``python -m trtcheck advise --from results.json --arrival-rate R`` as a subprocess N
times per scenario and reports the median and max wall time; one extra run with
``-X importtime`` lists any heavy module imported (onnxruntime, matplotlib, scipy,
tensorrt, torch, onnx). Prints a table and writes
``benchmarks/results/advise_speed-<machine>.json``.

Usage: ``python benchmarks/advise_speed.py [--runs 5] [--machine dev-cpu]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _harness import add_machine_argument, result_path, write_json

from trtcheck.fingerprint import collect_environment
from trtcheck.results import (
    BackendInfo, BatchResult, BenchRun, BenchSettings, Results, ToolInfo, save_results,
    utc_now_iso,
)
from trtcheck.stats import summarize

HEAVY = ("onnxruntime", "matplotlib", "scipy", "tensorrt", "tensorrt_rtx", "torch", "onnx")
SCENARIOS = [
    ("light model, sparse", {1: 0.29, 2: 0.35, 4: 0.5, 8: 1.02, 16: 1.73}, "200"),
    ("light model, busy", {1: 0.29, 2: 0.35, 4: 0.5, 8: 1.02, 16: 1.73}, "20000"),
    ("heavy model, 3000 req/s", {1: 20.0, 8: 40.0, 32: 110.0}, "3000"),
]


def write_results(points: dict[int, float], path: Path) -> None:
    rng = np.random.default_rng(0)
    batches = []
    for b, t in points.items():
        s = (t * (1 + 0.03 * rng.standard_normal(300))).clip(t * 0.5).tolist()
        st = summarize(s)
        batches.append(BatchResult(batch_size=b, input_shapes={"x": [b, 3, 224, 224]},
                                   samples_ms=s, stats=st,
                                   throughput_queries_per_s=1000 / st.median_ms,
                                   throughput_samples_per_s=b * 1000 / st.median_ms,
                                   measured_duration_s=sum(s) / 1000, stopped_by="min_reached"))
    run = BenchRun(label="speed", model_path="model.onnx",
                   backend=BackendInfo(name="synthetic", version="1", device="none"),
                   settings=BenchSettings(warmup_s=0, warmup_min_iterations=0, min_duration_s=0,
                                          min_samples=1, max_duration_s=1, max_samples=1000,
                                          batch_sizes=list(points), input_source="random"),
                   batches=batches)
    save_results(Results(tool=ToolInfo(version="0"), created_utc=utc_now_iso(),
                         environment=collect_environment(), bench=[run]), path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    add_machine_argument(ap)
    args = ap.parse_args()
    env = dict(os.environ)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, pts, rate in SCENARIOS:
            f = Path(tmp) / f"{abs(hash(name))}.json"
            write_results(pts, f)
            cmd = [sys.executable, "-m", "trtcheck", "advise", "--from", str(f),
                   "--arrival-rate", rate, "--format", "json"]
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
                times.append(time.perf_counter() - t0)
                if p.returncode != 0:
                    print(p.stderr, file=sys.stderr)
                    return 1
            adv = json.loads(p.stdout)
            imp = subprocess.run([sys.executable, "-X", "importtime", *cmd[1:]],
                                 capture_output=True, text=True, env=env, check=False)
            mods = {ln.split("|")[-1].strip() for ln in imp.stderr.splitlines()
                    if ln.startswith("import time:")}
            heavy = sorted(m for m in mods if m.split(".")[0] in HEAVY)
            rows.append({"scenario": name, "arrival_rate_per_s": float(rate),
                         "median_s": statistics.median(times), "max_s": max(times),
                         "runs": args.runs, "sweep_s": adv["sweep_seconds"],
                         "candidates": len(adv["candidates"]),
                         "recommendation": adv["recommendation"]["kind"],
                         "heavy_imports": heavy, "modules_imported": len(mods)})
    print(f"{'scenario':28} {'median s':>9} {'max s':>7} {'sweep s':>8} {'cands':>6} "
          f"{'heavy imports':>14}  recommendation")
    for r in rows:
        print(f"{r['scenario']:28} {r['median_s']:>9.2f} {r['max_s']:>7.2f} {r['sweep_s']:>8.3f} "
              f"{r['candidates']:>6} {(', '.join(r['heavy_imports']) or 'none'):>14}  "
              f"{r['recommendation']}")
    ok = all(r["max_s"] < 2.0 and not r["heavy_imports"] for r in rows)
    print("goal (< 2 s including start-up, no heavy imports):", "met" if ok else "NOT met")
    out = {"rows": rows, "goal_s": 2.0, "met": ok, "cpu_count": os.cpu_count(),
           "python": platform.python_version(), "load_average": os.getloadavg()}
    write_json(result_path("advise_speed", args.machine), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
