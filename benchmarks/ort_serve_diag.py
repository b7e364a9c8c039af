#!/usr/bin/env python3
"""Why do ONNX Runtime executions run slower inside the serving process on some hosts?

Prints the host's CPU limits (cgroup ``cpu.max``, affinity, CPU model) and, for the demo
ResNet-18 on one intra-op thread: back-to-back executions (as ``bench``) and the
executions inside an open-loop serving run (``compute`` of each batch), each with the
cgroup throttling counters before/after, and optionally pinned to given cores.
Writes ``benchmarks/results/ort_serve_diag-<machine>.json`` (name the pinning as the setup,
e.g. ``--machine h200-host-pin23 --pin 2,3``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from _harness import add_machine_argument, cpu_model, result_path, write_json


def cgroup_cpu() -> dict:
    out = {}
    for p in ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu.stat",
              "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us",
              "/sys/fs/cgroup/cpu/cpu.stat", "/sys/fs/cgroup/cpuset.cpus.effective"):
        try:
            out[p] = Path(p).read_text().strip()
        except OSError:
            pass
    return out


def throttled() -> dict:
    for p in ("/sys/fs/cgroup/cpu.stat", "/sys/fs/cgroup/cpu/cpu.stat"):
        try:
            kv = dict(line.split() for line in Path(p).read_text().splitlines())
            return {k: int(v) for k, v in kv.items()}
        except OSError:
            continue
    return {}


def diff(a: dict, b: dict) -> dict:
    return {k: b[k] - a.get(k, 0) for k in b}


def mhz() -> list[float]:
    try:
        return [float(line.split(":")[1]) for line in Path("/proc/cpuinfo").read_text()
                .splitlines() if line.startswith("cpu MHz")]
    except OSError:
        return []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pin", default="", help="comma-separated cores to pin the process to")
    add_machine_argument(ap)
    ap.add_argument("--rate", type=float, default=15.0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if args.pin:
        os.sched_setaffinity(0, {int(c) for c in args.pin.split(",")})
    from trtcheck.backends.onnxruntime import OnnxRuntimeBackend
    from trtcheck.load.demo import demo_model_path
    from trtcheck.measure.serving import measure_serving
    from trtcheck.units import ms_to_us

    info = {"cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
            "affinity": sorted(os.sched_getaffinity(0)), "cgroup": cgroup_cpu(),
            "mhz_before": mhz(), "loadavg": os.getloadavg(), "pin": args.pin}
    print(json.dumps(info, indent=1))
    be = OnnxRuntimeBackend(str(demo_model_path()), intra_op_threads=args.threads)
    be.activate()
    import onnxruntime as ort  # noqa: F401
    sess = be._sess  # noqa: SLF001 - diagnostic
    rows = {}
    x = {b: np.random.default_rng(0).random((b, 3, 224, 224), dtype=np.float32)
         for b in (1, 4)}
    for b in x:
        for _ in range(5):
            sess.run(None, {"input": x[b]})
    for block in range(3):
        for b in x:
            t0 = throttled()
            ts = []
            for _ in range(30):
                s = time.perf_counter_ns()
                sess.run(None, {"input": x[b]})
                ts.append((time.perf_counter_ns() - s) / 1e6)
            rows[f"bench b{b} block{block}"] = {
                "median_ms": float(np.median(ts)), "p90_ms": float(np.percentile(ts, 90)),
                "throttle": diff(t0, throttled())}
            print(f"bench b{b} block{block}: median {np.median(ts):.2f} ms p90 "
                  f"{np.percentile(ts, 90):.2f} throttle {diff(t0, throttled())}", flush=True)
    for window in (0.0, 10.0):
        t0 = throttled()
        run = measure_serving(be, windows_us=[ms_to_us(window)], max_batch_sizes=[4],
                              loads=[f"open:{args.rate:g}:poisson:{int(args.rate * 6)}"],
                              repeats=1, warmup_requests=8, seed=1)
        rep = run.configs[0].repeats[0]
        comp = np.array(rep.parts_ms["compute_ms"])
        bs = np.array(rep.batch_sizes)
        per_b = {int(b): float(np.median(comp[bs == b])) for b in np.unique(bs)}
        lat = np.array(rep.latencies_ms)
        key = f"serve window {window:g} rate {args.rate:g}"
        rows[key] = {"compute_median_by_batch_ms": per_b, "p50_ms": float(np.median(lat)),
                     "throttle": diff(t0, throttled()),
                     "parts_median_ms": {k: float(np.median(v)) for k, v in
                                         rep.parts_ms.items()}}
        print(key, json.dumps(rows[key]), flush=True)
    be.deactivate()
    info["mhz_after"] = mhz()
    write_json(result_path("ort_serve_diag", args.machine), {"info": info, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
