"""What the embedded batcher itself costs: added latency per request and max request rate.

Zero-cost backend (an ``async`` function returning its batch), one CPU core (the process
is pinned with ``os.sched_setaffinity`` when the OS allows), standard asyncio and, when
installed, uvloop. Goals: <= 20 us median added per request, >= 50,000
requests/s sustained.

* **added latency**: one request at a time (closed loop, concurrency 1); the median of
  ``submit -> result`` through the batcher (window 0, max batch 1) minus the median of
  the same zero-cost call awaited directly (the baseline a service without a batcher
  pays).
* **max rate**: ``C`` concurrent clients each awaiting ``submit`` in a loop for
  ``--seconds``; completed requests per second, for max batch 1 and 32 (window 0), and
  the same through ``enqueue`` (no per-request coroutine: what the load generator uses).

Run::

    python benchmarks/batcher_overhead.py [--seconds 2] [--profile]

Prints a table and writes ``benchmarks/results/batcher_overhead-<machine>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from _harness import add_machine_argument, result_path

from trtcheck.measure.serving import DynamicBatcher
from trtcheck.policy import BatchingPolicy

_clock = time.perf_counter


async def zero(batch):
    return batch


async def added_latency(n: int) -> dict:
    # baseline: the same zero-cost function awaited directly
    base = []
    for i in range(n):
        t0 = _clock()
        await zero([i])
        base.append(_clock() - t0)
    b = DynamicBatcher(zero, BatchingPolicy(1, 0))
    lat = []
    for i in range(n):
        t0 = _clock()
        await b.submit(i)
        lat.append(_clock() - t0)
    await b.aclose()
    mb, ml = statistics.median(base) * 1e6, statistics.median(lat) * 1e6
    lat.sort()
    return {"requests": n, "baseline_median_us": mb, "batcher_median_us": ml,
            "added_median_us": ml - mb, "batcher_p99_us": lat[int(0.99 * (n - 1))] * 1e6}


async def max_rate(max_batch: int, clients: int, seconds: float, via: str) -> dict:
    b = DynamicBatcher(zero, BatchingPolicy(max_batch, 0), max_queue_size=1 << 20)
    done = 0
    stop = _clock() + seconds

    async def client_submit():
        nonlocal done
        while _clock() < stop:
            await b.submit(None)
            done += 1

    async def client_enqueue():
        nonlocal done
        while _clock() < stop:
            await b.enqueue(None).future
            done += 1

    t0 = _clock()
    fn = client_submit if via == "submit" else client_enqueue
    await asyncio.gather(*[fn() for _ in range(clients)])
    dt = _clock() - t0
    await b.aclose()
    return {"max_batch_size": max_batch, "clients": clients, "via": via,
            "requests_per_s": done / dt, "avg_batch_size": b.counters.avg_batch_size,
            "requests": done}


async def suite(seconds: float) -> dict:
    out = {"added_latency": await added_latency(20000), "max_rate": []}
    for mb in (1, 32):
        for via in ("submit", "enqueue"):
            out["max_rate"].append(await max_rate(mb, 256, seconds, via))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--profile", action="store_true", help="cProfile the max-rate run")
    ap.add_argument("--out", default=None, help="result file [default: the naming rule]")
    add_machine_argument(ap)
    args = ap.parse_args()
    args.out = args.out or str(result_path("batcher_overhead", args.machine))
    pinned = None
    try:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        pinned = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    if args.profile:
        import cProfile
        import pstats

        cProfile.run("asyncio.run(max_rate(32, 256, 1.0, 'submit'))", "/tmp/batcher.prof")
        pstats.Stats("/tmp/batcher.prof").sort_stats("tottime").print_stats(15)
        return 0
    loops = {"asyncio": asyncio.run}
    try:
        import uvloop

        loops["uvloop"] = uvloop.run
    except ImportError:
        pass
    results = {"python": sys.version.split()[0], "machine": platform.machine(),
               "cpu_count": os.cpu_count(), "pinned_cpus": pinned,
               "load_avg_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
               "goals": {"added_median_us_max": 20.0, "requests_per_s_min": 50000.0},
               "loops": {}}
    for name, runner in loops.items():
        results["loops"][name] = runner(suite(args.seconds))
    print(f"{'loop':8} {'metric':44} {'value':>12}")
    for name, r in results["loops"].items():
        a = r["added_latency"]
        print(f"{name:8} {'added latency, median (us)':44} {a['added_median_us']:>12.2f}")
        print(f"{name:8} {'batcher submit->result, median / p99 (us)':44} "
              f"{a['batcher_median_us']:>6.2f} / {a['batcher_p99_us']:.2f}")
        for m in r["max_rate"]:
            label = f"max rate, max batch {m['max_batch_size']}, via {m['via']} (req/s)"
            print(f"{name:8} {label:44} {m['requests_per_s']:>12,.0f}  (avg batch "
                  f"{m['avg_batch_size']:.1f})")
    print(f"load average (1 min) at start: {results['load_avg_1min']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
