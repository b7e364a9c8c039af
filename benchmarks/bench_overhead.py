#!/usr/bin/env python3
"""trtcheck's measured latency vs a plain ``session.run`` loop.

For the demo ResNet-18 at batch 1 and 8, in one process and with the same ONNX Runtime
session and inputs: (a) a hand-written loop timing ``session.run`` with
``time.perf_counter_ns``; (b) :func:`trtcheck.measure.bench.bench.run_bench`. The two are
interleaved A/B/A/B in rounds so machine drift hits both; the goal is medians within 3%.
Prints a table and writes ``benchmarks/results/bench_overhead-<machine>.json``.

Usage: ``python benchmarks/bench_overhead.py [--rounds 3] [--samples 60]``
"""

from __future__ import annotations

import argparse
import json
import platform
import time

from _harness import add_machine_argument, result_path

import numpy as np


from trtcheck.backends.onnxruntime import OnnxRuntimeBackend
from trtcheck.fingerprint import collect_environment
from trtcheck.load.demo import demo_model_path
from trtcheck.measure.bench import StopRule, run_bench


def plain_loop(sess, feed, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        sess.run(None, feed)
        out.append((time.perf_counter_ns() - t0) / 1e6)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=60)
    ap.add_argument("--batches", default="1,8")
    add_machine_argument(ap)
    args = ap.parse_args()
    model = demo_model_path()
    be = OnnxRuntimeBackend(model)
    be.activate()
    sess = be._session()
    rows = []
    for b in [int(x) for x in args.batches.split(",")]:
        feed = {"input": np.random.default_rng(0).random((b, 3, 224, 224), dtype=np.float32)}
        for _ in range(5):
            sess.run(None, feed)
        plain: list[float] = []
        tool: list[float] = []
        for _ in range(args.rounds):
            plain += plain_loop(sess, feed, args.samples)
            run = run_bench(be, str(model), [b], rule=StopRule(
                warmup_s=0, warmup_min_iterations=1, min_duration_s=0,
                min_samples=args.samples, max_samples=args.samples))
            tool += run.batches[0].samples_ms
        mp, mt = float(np.median(plain)), float(np.median(tool))
        rows.append({"batch": b, "plain_median_ms": mp, "trtcheck_median_ms": mt,
                     "diff_pct": (mt - mp) / mp * 100, "n_each": len(plain),
                     "within_3pct": abs(mt - mp) / mp <= 0.03})
    be.deactivate()
    print(f"{'batch':>5} {'plain ms':>10} {'trtcheck ms':>12} {'diff %':>8} {'n':>5}  goal <=3%")
    for r in rows:
        print(f"{r['batch']:>5} {r['plain_median_ms']:>10.3f} {r['trtcheck_median_ms']:>12.3f} "
              f"{r['diff_pct']:>+8.2f} {r['n_each']:>5}  {'ok' if r['within_3pct'] else 'MISSED'}")
    env = collect_environment()
    out = {"benchmark": "bench_overhead", "model": "demo resnet18 (onnxruntime CPU)",
           "cpu": env.cpu_model, "cpu_count": env.cpu_count, "python": platform.python_version(),
           "onnxruntime": env.packages.get("onnxruntime"), "rows": rows,
           "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    dest = result_path("bench_overhead", args.machine)
    dest.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
