#!/usr/bin/env python3
"""Advice stability: do independent measurements of one model on one machine give the
same recommendation?

Measures T(b) of MODEL (default: the demo ResNet-18 on ONNX Runtime) ``--runs`` times
(default 5), each an independent ``trtcheck bench`` run with the short rule that
``trtcheck advise MODEL`` uses (0.2 s warm-up, >= 0.5 s and 20 runs per batch size),
then asks ``trtcheck advise --from`` each measurement for the same arrival rates. The
rates are shares of one instance's batch-1 capacity (1 / T(1)) from a pilot
measurement, so the question is the same on a fast and a slow machine: 0.1 (sparse: no
queue forms), 0.5 and 0.9 (a queue forms). Goal: for each rate, at least 4 of 5
measurements give the same headline (window, max batch, instances); how many of them
said "cannot tell" (the replicas of that one measurement did not agree) is counted too.

Prints a table and writes ``benchmarks/results/advise_stability-<machine>.json``.

Usage (one command on any machine; the GPU host runs the same CPU model)::

    python benchmarks/advise_stability.py --machine dev-cpu
    python benchmarks/advise_stability.py --machine h200-host
    python benchmarks/advise_stability.py --model m.onnx --shapes x:1x3x48x192 --machine dev-cpu-cls
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _harness import add_machine_argument, cpu_model, result_path, write_json

SHARES = (0.1, 0.5, 0.9)
GOAL_AGREE = 4


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if p.returncode != 0:
        print(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}", file=sys.stderr)
    return p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="ONNX model [default: the demo ResNet-18]")
    ap.add_argument("--shapes", default=None, help="as bench --shapes")
    ap.add_argument("--batch", default="1,2,4,8")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shares", default=",".join(str(s) for s in SHARES),
                    help="arrival rates as shares of 1 / T(1) of the pilot measurement")
    add_machine_argument(ap)
    args = ap.parse_args()
    env = dict(os.environ)
    if args.model is None:
        from trtcheck.load.demo import demo_model_path

        model = str(demo_model_path())
    else:
        model = args.model
    shares = [float(s) for s in args.shares.split(",")]
    py = [sys.executable, "-m", "trtcheck"]
    shape_opt = ["--shapes", args.shapes] if args.shapes else []
    bench_opt = ["--batch", args.batch, "--warmup", "0.2", "--min-duration", "0.5",
                 "--min-samples", "20", "--max-duration", "5"]
    t_start = time.perf_counter()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i in range(args.runs + 1):  # run 0 is the pilot that sets the rates
            f = Path(tmp) / f"m{i}.json"
            if _run(py + ["bench", model, *shape_opt, *bench_opt, "-o", str(f)],
                    env).returncode != 0:
                return 1
            files.append(f)
        pilot = json.loads(files[0].read_text())
        t1 = next(b["stats"]["median_ms"] for b in pilot["bench"][0]["batches"]
                  if b["batch_size"] == min(int(x) for x in args.batch.split(",")))
        rates = [float(f"{s * 1000.0 / t1:.3g}") for s in shares]
        rows = []
        for share, rate in zip(shares, rates):
            heads, details = [], []
            for f in files[1:]:
                p = _run(py + ["advise", "--from", str(f), "--arrival-rate", f"{rate:g}",
                               "--format", "json"], env)
                if p.returncode != 0:
                    heads.append("error")
                    details.append({"error": p.stderr.strip().splitlines()[-1:]})
                    continue
                adv = json.loads(p.stdout)
                rec = adv["recommendation"]
                pr = rec["prediction"]
                st = rec.get("stability") or {}
                status = st.get("status", "-")
                head = (f"W={pr['window_us'] / 1000:g}ms B={pr['max_batch_size']} "
                        f"x{pr['instances']}" + (" (cannot tell)" if status == "cannot-tell"
                                                 else ""))
                heads.append(head)
                details.append({"headline": head, "kind": rec["kind"], "status": status,
                                "share": st.get("share"), "t1_ms": adv["curve"]["points_ms"]
                                .get("1"), "p99_ms": pr.get("p99_ms")})
            configs = [h.replace(" (cannot tell)", "") for h in heads]
            mode, count = Counter(configs).most_common(1)[0]
            rows.append({"share_of_capacity": share, "arrival_rate_per_s": rate,
                         "headlines": heads, "agree": count, "mode": mode,
                         "cannot_tell": sum(h.endswith("(cannot tell)") for h in heads),
                         "runs": details})
    wall = time.perf_counter() - t_start
    print(f"model {Path(model).name}, pilot T(1) = {t1:.3g} ms, {args.runs} measurements, "
          f"{cpu_model()}, load average before {load_before[0]:.1f}, after "
          f"{os.getloadavg()[0]:.1f}, {wall:.0f} s")
    print(f"{'share':>5} {'req/s':>8} {'agree':>5} {'cannot tell':>11}  most common "
          "headline (window, max batch, instances) / all")
    for r in rows:
        print(f"{r['share_of_capacity']:>5g} {r['arrival_rate_per_s']:>8g} "
              f"{r['agree']:>3}/{len(r['headlines'])} {r['cannot_tell']:>11}  {r['mode']}")
        t1s = ", ".join(f"{d['t1_ms']:.3g}" if d.get("t1_ms") else "-" for d in r["runs"])
        shares_txt = ", ".join(f"{d.get('share') or 0:.0%}" for d in r["runs"])
        print(f"{'':21}all: {' | '.join(r['headlines'])}")
        print(f"{'':21}T(1) ms: {t1s}; replica shares: {shares_txt}")
    ok = all(r["agree"] >= GOAL_AGREE for r in rows)
    print(f"goal (same headline in >= {GOAL_AGREE} of {args.runs} per rate):",
          "met" if ok else "NOT met")
    out = {"model": model, "machine": args.machine, "cpu": cpu_model(), "cpu_count": os.cpu_count(),
           "load_average_before": load_before, "load_average_after": os.getloadavg(),
           "pilot_t1_ms": t1, "runs": args.runs, "rows": rows, "goal_agree": GOAL_AGREE,
           "met": ok, "wall_s": wall}
    write_json(result_path("advise_stability", args.machine), out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
