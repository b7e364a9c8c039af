#!/usr/bin/env python3
"""Does an ONNX Runtime CPU execution take longer after an idle gap?

The advise validation found ResNet-18 executions inside the serving process slower and more
variable than `bench`'s back-to-back T(b). Hypothesis: idle gaps between executions (which a
batcher at moderate load has and a back-to-back bench has not) cost time (caches, CPU
frequency/idle states). This measures the median execution time of the demo ResNet-18
(one intra-op thread) at batch 1 and 4 with idle gaps of 0/5/20/50 ms between executions,
from the main thread and from an executor thread (as the batcher runs sync backends).
Prints a table and writes ``benchmarks/results/ort_idle_gap-<machine>.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _harness import add_machine_argument, result_path

import numpy as np


from trtcheck.fingerprint import collect_environment
from trtcheck.load.demo import demo_model_path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--out", default=None, help="result file [default: the naming rule]")
    add_machine_argument(ap)
    args = ap.parse_args()
    args.out = args.out or str(result_path("ort_idle_gap", args.machine))
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(demo_model_path()), sess_options=opts,
                                providers=["CPUExecutionProvider"])
    pool = ThreadPoolExecutor(max_workers=1)
    rows = []
    for b in (1, 4):
        x = np.random.default_rng(0).random((b, 3, 224, 224), dtype=np.float32)
        for _ in range(10):
            sess.run(None, {"input": x})
        for where in ("main-thread", "executor-thread"):
            for gap_ms in (0, 5, 20, 50):
                times = []
                for i in range(args.runs):
                    if gap_ms:
                        time.sleep(gap_ms / 1000)
                    xi = x + np.float32(i * 1e-6)  # fresh input each time, like a batcher
                    t0 = time.perf_counter_ns()
                    if where == "main-thread":
                        sess.run(None, {"input": xi})
                    else:
                        pool.submit(sess.run, None, {"input": xi}).result()
                    times.append((time.perf_counter_ns() - t0) / 1e6)
                rows.append({"batch": b, "where": where, "gap_ms": gap_ms,
                             "median_ms": float(np.median(times)),
                             "p90_ms": float(np.percentile(times, 90)), "n": len(times)})
    base = {(r["batch"], r["where"]): r["median_ms"] for r in rows if r["gap_ms"] == 0}
    print(f"{'batch':>5} {'where':>16} {'gap ms':>7} {'median ms':>10} {'p90 ms':>8} {'vs gap 0':>9}")
    for r in rows:
        r["ratio_vs_no_gap"] = r["median_ms"] / base[(r["batch"], r["where"])]
        print(f"{r['batch']:>5} {r['where']:>16} {r['gap_ms']:>7} {r['median_ms']:>10.3f} "
              f"{r['p90_ms']:>8.3f} {r['ratio_vs_no_gap']:>9.2f}")
    env = collect_environment()
    Path(args.out).write_text(json.dumps({
        "benchmark": "ort_idle_gap", "cpu": env.cpu_model, "cpu_count": env.cpu_count,
        "python": platform.python_version(), "onnxruntime": ort.__version__, "rows": rows,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
