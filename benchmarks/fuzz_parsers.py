#!/usr/bin/env python3
"""Longer fuzzing runs of every parser trtcheck owns, with the counts recorded.

Runs each target of ``trtcheck/testing/fuzz_targets.py`` (the strategies the CI-sized test
``tests/test_parser_fuzz.py`` uses) for ``--examples`` generated inputs (random seed
unless ``--seed``), counts the inputs tried, the ones a parser refused with its own
error (expected) and the crashes (any other exception: a bug). A crash is printed, and
its input kept (up to 20 per target, ``crash_inputs``) in the result file so it can be
added to ``tests/data/fuzz-regressions/``. Prints a table and writes
``benchmarks/results/fuzz_parsers-<machine>.json`` (counts, CPU seconds per target,
machine) or ``--out FILE``.

Usage: ``python benchmarks/fuzz_parsers.py [--examples 50000] [--targets a,b] [--seed N]
[--machine dev-cpu]``
"""

from __future__ import annotations

import argparse
import base64
import os
import platform
import time
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

from _harness import add_machine_argument, result_path, write_json

from trtcheck.testing.fuzz_targets import targets


def _store(value: object) -> dict[str, object]:
    if isinstance(value, bytes):
        return {"bytes_b64": base64.b64encode(value).decode()}
    if isinstance(value, str):
        return {"text": value}
    return {"json": value}


def run_target(target, examples: int, rng_seed: int | None) -> dict[str, object]:
    """Fuzz one target; returns its counts."""
    counts = {"generated": 0, "refused": 0, "accepted": 0, "crashes": 0}
    crashes: list[dict[str, object]] = []

    def check(value: object) -> None:
        counts["generated"] += 1
        try:
            target.call(value)
            counts["accepted"] += 1
        except target.allowed:
            counts["refused"] += 1
        except Exception as exc:  # a crash: keep it, go on
            counts["crashes"] += 1
            if len(crashes) < 20:
                crashes.append({"error": f"{type(exc).__name__}: {str(exc)[:200]}",
                                "input": _store(value)})

    test = settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))(given(target.strategy)(check))
    if rng_seed is not None:
        test = seed(rng_seed)(test)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    test()
    return {**counts, "cpu_s": round(time.process_time() - cpu0, 2),
            "wall_s": round(time.perf_counter() - wall0, 2), "crash_inputs": crashes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=50_000, help="inputs per target")
    ap.add_argument("--targets", default=None, help="comma-separated target names")
    ap.add_argument("--seed", type=int, default=None, help="Hypothesis seed (default random)")
    add_machine_argument(ap)
    ap.add_argument("--out", default=None, help="result file [default: the naming rule]")
    args = ap.parse_args()
    chosen = [t for t in targets()
              if args.targets is None or t.name in args.targets.split(",")]
    rows = {}
    print(f"{'target':18} {'generated':>10} {'refused':>9} {'accepted':>9} {'crashes':>8} "
          f"{'cpu s':>8}")
    for t in chosen:
        r = run_target(t, args.examples, args.seed)
        rows[t.name] = r
        print(f"{t.name:18} {r['generated']:>10,} {r['refused']:>9,} {r['accepted']:>9,} "
              f"{r['crashes']:>8,} {r['cpu_s']:>8.1f}", flush=True)
        for c in r["crash_inputs"][:3]:
            print(f"    crash: {c['error']}")
    total = sum(r["generated"] for r in rows.values())
    crashes = sum(r["crashes"] for r in rows.values())
    print(f"{'total':18} {total:>10,} {'':>9} {'':>9} {crashes:>8,}")
    doc = {"examples_per_target": args.examples, "seed": args.seed,
           "machine": {"cpu": platform.processor() or platform.machine(),
                       "cores": os.cpu_count(), "python": platform.python_version(),
                       "load_average_1m": round(os.getloadavg()[0], 2)},
           "targets": rows, "total_generated": total, "total_crashes": crashes}
    write_json(Path(args.out) if args.out else result_path("fuzz_parsers", args.machine), doc)


if __name__ == "__main__":
    main()
