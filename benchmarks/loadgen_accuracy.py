"""How well the open-loop load generator keeps its schedule.

For target rates up to 20,000 requests/s (constant and Poisson inter-arrivals), on one
CPU core, the generator drives (a) a null target (each request's future resolved at
once) and (b) the embedded batcher with a zero-cost backend (window 0, max batch 32),
through :func:`trtcheck.measure.serving.loadgen.run_load`. Reported per rate: achieved send
rate and its error vs the target, send-lag p50/p99 (actual send - scheduled send) and
the share of sends later than 1 ms. Goals: rate within 1% up to 20,000/s with
p99 send lag < 1 ms.

Achieved rate = (sent - 1) / (last send - first send). For Poisson arrivals the target
is the schedule's own rate ((n - 1) / span of the drawn offsets), so the random draw
is not counted as generator error.

Run::

    python benchmarks/loadgen_accuracy.py [--seconds 2]

The column ``cpu%`` is the process's CPU time / wall time during the run: on a machine
where other processes compete for the core it stays well under 100% and the send lag
is the operating system's preemption, not the generator's own cost (``cpu us/req``).

Prints a table and writes ``benchmarks/results/loadgen_accuracy-<machine>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

from _harness import add_machine_argument, result_path

import numpy as np

from trtcheck import stats
from trtcheck.measure.serving import DynamicBatcher
from trtcheck.measure.serving import LoadShape, run_load
from trtcheck.policy import BatchingPolicy


async def zero(batch):
    return batch


async def one(rate: float, arrival: str, target: str, seconds: float) -> dict:
    loop = asyncio.get_running_loop()
    n = int(rate * seconds)
    shape = LoadShape("open", n, rate_per_s=rate, arrival=arrival, label=f"open:{rate:g}")
    b = None
    if target == "null":
        def start(i):
            f = loop.create_future()
            f.set_result(None)
            return f
    else:
        b = DynamicBatcher(zero, BatchingPolicy(32, 0), max_queue_size=1 << 20)

        def start(i):
            return b.enqueue(i).future
    import time

    c0, w0 = time.process_time(), time.perf_counter()
    rec = await run_load(shape, start, max_duration_s=seconds * 3, drain_timeout_s=5, seed=1)
    cpu_s, wall_s = time.process_time() - c0, time.perf_counter() - w0
    if b is not None:
        await b.aclose()
    sent = [i for i, o in enumerate(rec.outcome) if o != "not_sent"]
    ts = np.array([rec.t_send[i] for i in sent])
    lag_ms = (ts - np.array([rec.t_sched[i] for i in sent])) * 1e3
    offs = shape.schedule_s(1)
    sched_rate = (n - 1) / (offs[-1] - offs[0])
    achieved = (len(sent) - 1) / (ts.max() - ts.min())
    return {"target": target, "arrival": arrival, "rate_per_s": rate,
            "schedule_rate_per_s": sched_rate, "sent": len(sent), "planned": n,
            "achieved_rate_per_s": achieved,
            "rate_error": achieved / sched_rate - 1.0,
            "send_lag_p50_ms": stats.percentile(lag_ms, 0.5),
            "send_lag_p99_ms": stats.percentile(lag_ms, 0.99),
            "send_lag_max_ms": float(lag_ms.max()),
            "late_share_1ms": float(np.mean(lag_ms > 1.0)),
            "ok": rec.outcome_counts()["ok"],
            "process_cpu_share": cpu_s / wall_s,
            "cpu_us_per_request": cpu_s / max(1, len(sent)) * 1e6}


async def suite(seconds: float) -> list:
    out = []
    for target in ("null", "batcher"):
        for arrival in ("constant", "poisson"):
            for rate in (1000, 5000, 10000, 20000, 30000):
                out.append(await one(rate, arrival, target, seconds))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--out", default=None, help="result file [default: the naming rule]")
    add_machine_argument(ap)
    args = ap.parse_args()
    args.out = args.out or str(result_path("loadgen_accuracy", args.machine))
    pinned = None
    try:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        pinned = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    loops = {"asyncio": asyncio.run}
    try:
        import uvloop

        loops["uvloop"] = uvloop.run
    except ImportError:
        pass
    res = {"python": sys.version.split()[0], "pinned_cpus": pinned,
           "load_avg_1min": os.getloadavg()[0],
           "goals": {"rate_error_max": 0.01, "send_lag_p99_ms_max": 1.0, "up_to_rate": 20000},
           "loops": {}}
    print(f"{'loop':8} {'target':8} {'arrival':9} {'rate/s':>7} {'achieved/s':>10} "
          f"{'error':>7} {'lag p50 ms':>10} {'lag p99 ms':>10} {'late>1ms':>8} {'cpu%':>5} "
          f"{'cpu us/req':>10}")
    for name, runner in loops.items():
        rows = runner(suite(args.seconds))
        res["loops"][name] = rows
        for r in rows:
            print(f"{name:8} {r['target']:8} {r['arrival']:9} {r['rate_per_s']:>7.0f} "
                  f"{r['achieved_rate_per_s']:>10.0f} {r['rate_error']:>+7.2%} "
                  f"{r['send_lag_p50_ms']:>10.3f} {r['send_lag_p99_ms']:>10.3f} "
                  f"{r['late_share_1ms']:>8.2%} {r['process_cpu_share']:>5.0%} "
                  f"{r['cpu_us_per_request']:>10.1f}")
    print(f"load average (1 min) at start: {res['load_avg_1min']:.2f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
