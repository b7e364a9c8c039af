#!/usr/bin/env python3
"""``advise`` predictions for bursts and closed loops against ``serve`` measurements.

The embedded batcher with the synthetic backend (async, no spread) is measured with
``measure_serving`` (what ``trtcheck serve`` runs) for each load shape and window at
max batch 32, 3 repeats (headline = median, as serve reports), and the same settings
are predicted with :func:`trtcheck.analyze.advice.advise.what_if`. Scenarios:

- the seed's: T(b) 1:0.29,8:0.4,32:1.0 behind a serial 12 ms layer, ``burst:64``,
  windows 0/20/50/100 ms (the seed table's direction: QPS falls, P50 rises);
- the same behind the serial layer as a closed loop ``closed:4:80``.

(``serve`` models the per-request overhead as a serial front stage only; a parallel
overhead is a pure delay in the simulator and has no measured counterpart here.)

Goal (docs/advise.md): QPS and mean batch within 10%, P50 within 10%, P99 within 20%.
Prints a table and writes ``benchmarks/results/advise_load_shapes-<machine>.json``.

Usage: ``python benchmarks/advise_load_shapes.py [--machine dev-cpu] [--repeats 3]``
(about 1 minute).
"""

from __future__ import annotations

import argparse
import os
import sys

from _harness import add_machine_argument, cpu_model, result_path, write_json

from trtcheck.analyze.advice import AdviseRequest, what_if
from trtcheck.analyze.advice import parse_curve_text
from trtcheck.analyze.advice import Candidate, ClosedLoop
from trtcheck.backends.synthetic import SyntheticBackend
from trtcheck.measure.serving import measure_serving
from trtcheck.units import ms_to_us, us_to_ms

SCENARIOS = [
    ("seed burst, serial 12 ms", "1:0.29,8:0.4,32:1.0", 12.0, True, "burst:64",
     (0.0, 20.0, 50.0, 100.0)),
    ("closed loop, serial 12 ms", "1:0.29,8:0.4,32:1.0", 12.0, True, "closed:4:80",
     (0.0, 20.0, 50.0)),
]
GOALS = {"qps": 0.10, "batch": 0.10, "p50": 0.10, "p99": 0.20}


def _err(pred: float, meas: float) -> float:
    return abs(pred - meas) / meas if meas else float("inf")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_machine_argument(ap)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows = []
    for name, curve, overhead, serial, load, windows in SCENARIOS:
        backend = SyntheticBackend(curve, spread=0.0, seed=0, mode="async")
        kind, _, rest = load.partition(":")
        kw: dict = {}
        if kind == "burst":
            kw["burst_size"] = int(rest)
        else:
            c, n = (int(x) for x in rest.split(":"))
            kw["closed_loop"] = ClosedLoop(c, n)
        run = measure_serving(backend, windows_us=[ms_to_us(w) for w in windows],
                              max_batch_sizes=(32,),
                              loads=[load], repeats=args.repeats,
                              per_request_overhead_ms=overhead, warmup_requests=0)
        req = AdviseRequest(curve=parse_curve_text(curve), rate_per_s=None,
                            per_request_overhead_ms=overhead, serial_overhead=serial, **kw)
        preds = what_if(req, [Candidate(ms_to_us(w), 32, 1) for w in windows])
        for m, p in zip(sorted(run.configs, key=lambda c: c.window_us), preds):
            row = {"scenario": name, "load": load, "window_ms": us_to_ms(m.window_us),
                   "meas": {"qps": m.throughput_queries_per_s, "batch": m.mean_batch_size,
                            "p50": m.p50_ms, "p99": m.p99_ms},
                   "pred": {"qps": p.throughput_queries_per_s, "batch": p.mean_batch,
                            "p50": p.p50_ms, "p99": p.p99_ms}}
            row["err"] = {k: _err(row["pred"][k], row["meas"][k]) for k in GOALS}
            row["within"] = {k: row["err"][k] <= g for k, g in GOALS.items()}
            rows.append(row)
    print(f"{'scenario':28} {'W ms':>5} {'QPS m/p':>13} {'batch m/p':>11} "
          f"{'P50 m/p ms':>15} {'P99 m/p ms':>15}")
    for r in rows:
        m, p, ok = r["meas"], r["pred"], r["within"]

        def cell(k: str, fmt: str) -> str:
            return f"{m[k]:{fmt}}/{p[k]:{fmt}}{'' if ok[k] else '*'}"

        print(f"{r['scenario']:28} {r['window_ms']:>5g} {cell('qps', '.1f'):>13} "
              f"{cell('batch', '.2f'):>11} {cell('p50', '.0f'):>15} {cell('p99', '.0f'):>15}")
    counts = {k: sum(r["within"][k] for r in rows) for k in GOALS}
    print("within goal: " + ", ".join(f"{k} {n}/{len(rows)}" for k, n in counts.items())
          + f"  (* = outside; load average {os.getloadavg()[0]:.1f})")
    directions = []
    for name, *_ in SCENARIOS[:1]:
        seq = [r for r in rows if r["scenario"] == name]
        for who in ("meas", "pred"):
            q = [r[who]["qps"] for r in seq]
            p50 = [r[who]["p50"] for r in seq]
            directions.append({"scenario": name, "who": who,
                               "qps_falls": all(a > b for a, b in zip(q, q[1:])),
                               "p50_rises": all(a < b for a, b in zip(p50, p50[1:]))})
    for d in directions:
        print(f"{d['scenario']} ({d['who']}): QPS falls with the window: {d['qps_falls']}, "
              f"P50 rises: {d['p50_rises']}")
    out = {"machine": args.machine, "cpu": cpu_model(), "load_average": os.getloadavg(),
           "repeats": args.repeats, "goals": GOALS, "rows": rows, "within": counts,
           "directions": directions}
    write_json(result_path("advise_load_shapes", args.machine), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
