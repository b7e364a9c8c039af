"""Serving soak with faults: a million requests through the embedded batcher.

Every request goes through :class:`trtcheck.measure.serving.batcher.DynamicBatcher` while the
batch function and the clients misbehave on purpose, segment after segment:

* ``errors``     - every 7th batch raises (a backend exception);
* ``slow``       - every 50th batch takes 20 ms instead of ~0;
* ``hang``       - one batch per segment never returns (an ``async`` wait on an event
                   nobody sets); the segment's close gives up on it after 0.5 s;
* ``cancel``     - a storm: 30% of the requests are cancelled by their client right
                   after submitting (queued or in flight);
* ``reject``     - a queue of 64 under 4x over-subscription with ``on_full="reject"``;
* ``wait``       - the same with ``on_full="wait"`` (back-pressure, nobody rejected);
* ``sync-mixed`` - a synchronous batch function in threads with errors, slow and one
                   hanging batch (a thread that never returns: abandoned, never joined).

Each client request ends in exactly one class: completed, rejected (QueueFull), failed
(the batch's exception or BatcherClosed), or cancelled by its client. Checked per
segment and in total: ``completed + rejected + failed + cancelled == sent``; no request
is still open after its segment (none hangs: each client waits at most 30 s); and the
batcher's own counters agree (accepted + rejected == submitted). Resident memory
(``/proc/self/statm``) is sampled every 10,000 requests; "flat" means the growth from
the end of the first segment to the end is below 64 MB (the first segment warms the
allocator and the thread pools).

A last phase measures what ``measure_serving`` (load generator, per-request records,
results) keeps: ``--serve-requests`` requests (closed loop of 64 clients, max batch 32,
a 1000-float output per request) and the peak RSS growth per request and the size of
the results JSON (raw per-request lists are capped at ``MAX_RAW_REQUESTS`` per repeat).

The CLI phase (``--cli-duration-s``, 200 by default: 1,000,000 requests) runs the real
command ``trtcheck serve --synthetic-curve 1:0.05,32:0.5 --load open:5000 --duration-s D
--window-ms 2 --max-batch 32 -o FILE`` in a subprocess, samples its RSS
(``/proc/PID/status`` VmRSS) every second, and reports the growth from the moment its
first 100,000 requests were sent (20 s into the measured run at 5,000 req/s; the run
starts after the 8 warm-up requests) to the peak; flat means under 50 MB. It checks the
accounting in the results file: sent = ok + error + rejected + timeout, and the
batcher's submitted = completed + rejected + failed + cancelled (queued and in flight),
with ok = completed.

Run (one command; on a quiet host it takes a few minutes)::

    python benchmarks/serve_soak.py [--requests 1000000] [--cli-duration-s 200] [--uvloop]
        [--machine dev-cpu]

Prints a table and writes ``benchmarks/results/serve_soak-<machine>.json`` (or
``--out FILE``). Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import sys
import threading
import time
from pathlib import Path

from _harness import add_machine_argument, result_path, write_json

from trtcheck.measure.serving import BatcherClosed, DynamicBatcher, QueueFull
from trtcheck.policy import BatchingPolicy

SEGMENTS = ("errors", "slow", "hang", "cancel", "reject", "wait", "sync-mixed")
RSS_SAMPLE_EVERY = 10_000
FLAT_RSS_BYTES = 64 * 2**20
CLIENT_WAIT_S = 30.0


def rss_bytes() -> int:
    """Resident set size of this process (Linux ``/proc/self/statm``), bytes."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Faulty:
    """Batch functions that raise, stall and hang on a schedule of batch numbers."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.n = 0
        self.never = asyncio.Event()
        self.never_sync = threading.Event()
        self.hung = False

    async def __call__(self, batch: list) -> list:
        self.n += 1
        if self.kind == "errors" and self.n % 7 == 0:
            raise RuntimeError("injected backend error")
        if self.kind == "slow" and self.n % 50 == 0:
            await asyncio.sleep(0.02)
        if self.kind == "hang" and self.n == 100 and not self.hung:
            self.hung = True
            await self.never.wait()
        return [x for x in batch]

    def sync(self, batch: list) -> list:
        self.n += 1
        if self.n % 11 == 0:
            raise ValueError("injected backend error")
        if self.n % 97 == 0:
            time.sleep(0.01)
        if self.n == 300 and not self.hung:
            self.hung = True
            self.never_sync.wait()  # this thread never returns: abandoned
        return [x for x in batch]


async def segment(kind: str, requests: int, seed: int, rss: list[tuple[int, int]],
                  sent_before: int) -> dict:
    rng = random.Random(seed)
    fn = Faulty(kind)
    on_full = "wait" if kind == "wait" else "reject"
    queue = 64 if kind in ("reject", "wait") else 4096
    b = DynamicBatcher(fn.sync if kind == "sync-mixed" else fn, BatchingPolicy(32, 200),
                       instances=4, max_queue_size=queue, on_full=on_full)
    counts = {"completed": 0, "rejected": 0, "failed": 0, "cancelled": 0, "hung": 0}
    burst = 256 if kind in ("reject", "wait") else 128

    async def one(i: int) -> None:
        try:
            if on_full == "wait":
                t = await b.submit_ticket(i)
            else:
                t = b.enqueue(i)
        except QueueFull:
            counts["rejected"] += 1
            return
        except BatcherClosed:
            counts["failed"] += 1
            return
        fut = t.future
        if kind == "cancel":
            r = rng.random()
            if r < 0.15:  # cancelled while queued
                fut.cancel()
            elif r < 0.3:  # cancelled a moment later: queued or in flight
                await asyncio.sleep(0)
                fut.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(fut), CLIENT_WAIT_S)
        except asyncio.CancelledError:
            counts["cancelled"] += 1
            return
        except asyncio.TimeoutError:
            counts["hung"] += 1
            return
        except Exception:  # noqa: BLE001 - the batch's error or BatcherClosed
            counts["failed"] += 1
            return
        counts["completed"] += 1

    t0 = time.perf_counter()
    sent = 0
    pending: set[asyncio.Task] = set()
    while sent < requests:
        n = min(burst, requests - sent)
        for _ in range(n):
            pending.add(asyncio.ensure_future(one(sent)))
            sent += 1
            if (sent_before + sent) % RSS_SAMPLE_EVERY == 0:
                rss.append((sent_before + sent, rss_bytes()))
        while len(pending) > 4 * burst:  # a bounded client window
            done, pending = await asyncio.wait(pending, timeout=1.0,
                                               return_when=asyncio.FIRST_COMPLETED)
            if not done:
                break
    if pending:  # the last requests finish; only a hung batch's requests stay open
        _, pending = await asyncio.wait(pending, timeout=2.0)
    await b.aclose(drain=True, timeout_s=0.5)  # gives up on hung batches after 0.5 s
    if pending:
        await asyncio.wait(pending, timeout=CLIENT_WAIT_S + 1)
    open_after = sum(1 for p in pending if not p.done())
    fn.never.set()
    elapsed = time.perf_counter() - t0
    c = b.counters
    total = counts["completed"] + counts["rejected"] + counts["failed"] + counts["cancelled"]
    return {"segment": kind, "sent": sent, **counts, "open_after_close": open_after,
            "accounted": total == sent and counts["hung"] == 0 and open_after == 0,
            "counters_agree": c.accepted + c.rejected == c.submitted,
            "batches": c.execution_count, "batch_errors": c.batch_errors,
            "abandoned_batches": b.abandoned_batches, "seconds": round(elapsed, 2),
            "requests_per_s": round(sent / elapsed, 1) if elapsed > 0 else None,
            "_release": fn.never_sync}


async def soak(requests: int) -> dict:
    per = requests // len(SEGMENTS)
    rss: list[tuple[int, int]] = [(0, rss_bytes())]
    rows = []
    releases = []
    sent = 0
    for k, kind in enumerate(SEGMENTS):
        n = per if k < len(SEGMENTS) - 1 else requests - per * (len(SEGMENTS) - 1)
        row = await segment(kind, n, seed=k, rss=rss, sent_before=sent)
        releases.append(row.pop("_release"))
        sent += row["sent"]
        rows.append(row)
        rss.append((sent, rss_bytes()))
    for ev in releases:  # let the abandoned sync thread end (it is a daemon anyway)
        ev.set()
    first_end = next(b for s, b in rss if s >= rows[0]["sent"])
    growth = rss[-1][1] - first_end
    tot = {k: sum(r[k] for r in rows) for k in ("sent", "completed", "rejected", "failed",
                                               "cancelled", "hung", "open_after_close")}
    return {"segments": rows, "total": tot,
            "rss_samples": [{"requests": s, "rss_bytes": b} for s, b in rss],
            "rss_growth_after_first_segment_bytes": growth,
            "rss_flat": growth < FLAT_RSS_BYTES,
            "all_accounted": all(r["accounted"] and r["counters_agree"] for r in rows)}


def serve_memory(requests: int) -> dict:
    """RSS growth per request and results size of one ``measure_serving`` run."""
    import numpy as np

    from trtcheck.measure.bench import new_results
    from trtcheck.measure.serving import MAX_RAW_REQUESTS, measure_serving
    from trtcheck.results import results_to_json

    async def fn(batch: dict) -> np.ndarray:
        return np.zeros((len(batch["x"]), 1000), np.float32)

    r0 = rss_bytes()
    t0 = time.perf_counter()
    run = measure_serving(fn, windows_us=[0], max_batch_sizes=[32],
                          loads=[f"closed:64:{requests}"], repeats=1, warmup_requests=0,
                          max_duration_s=3600, payload={"x": np.zeros((1, 16), np.float32)})
    r1 = rss_bytes()
    res = new_results(["serve_soak"])
    res.serve = run
    size = len(results_to_json(res).encode())
    rep = run.configs[0].repeats[0]
    return {"requests": requests, "ok": rep.outcomes["ok"], "seconds":
            round(time.perf_counter() - t0, 1), "rss_growth_bytes": r1 - r0,
            "rss_growth_bytes_per_request": round((r1 - r0) / requests, 1),
            "results_json_bytes": size, "raw_stride": rep.raw_stride,
            "max_raw_requests": MAX_RAW_REQUESTS}


#: Most RSS growth of the CLI run after its first 100,000 requests counted as flat.
CLI_FLAT_RSS_BYTES = 50 * 10**6


def _vmrss(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def cli_memory(duration_s: float, rate_per_s: int = 5000) -> dict:
    """RSS of ``trtcheck serve`` (embedded batcher, synthetic curve, open loop) sampled
    every second, and its request accounting."""
    import json
    import subprocess
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="serve-soak-")) / "s.json"
    cmd = [sys.executable, "-m", "trtcheck", "serve", "--synthetic-curve", "1:0.05,32:0.5",
           "--load", f"open:{rate_per_s}", "--duration-s", f"{duration_s:g}",
           "--window-ms", "2", "--max-batch", "32", "--repeats", "1", "-o", str(out)]
    t0 = time.perf_counter()  # the installed trtcheck (pip install -e . in a checkout)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    samples: list[tuple[float, int]] = []
    t_run: float | None = None
    import selectors

    sel = selectors.DefaultSelector()
    assert proc.stderr is not None
    sel.register(proc.stderr, selectors.EVENT_READ)
    err_lines: list[str] = []
    next_sample = time.perf_counter()
    while proc.poll() is None:
        for _key, _ in sel.select(timeout=0.2):
            line = proc.stderr.readline()
            if line:
                err_lines.append(line.rstrip())
                if t_run is None and line.startswith("serving "):
                    t_run = time.perf_counter()
        if time.perf_counter() >= next_sample:
            rss = _vmrss(proc.pid)
            if rss is not None:
                samples.append((round(time.perf_counter() - t0, 2), rss))
            next_sample += 1.0
    err_lines += [ln.rstrip() for ln in proc.stderr.read().splitlines()]
    run_start = (t_run or t0) - t0
    t100k = run_start + 100_000 / rate_per_s
    at = [r for t, r in samples if t <= t100k]
    after = [r for t, r in samples if t > t100k]
    base = at[-1] if at else (samples[0][1] if samples else 0)
    growth = (max(after) - base) if after else 0
    acc: dict = {}
    if proc.returncode == 0 and out.is_file():
        rep = json.loads(out.read_text())["serve"]["configs"][0]["repeats"][0]
        o, c = rep["outcomes"], rep["counters"]
        sent = c["submitted"]
        acc = {"outcomes": o, "counters": {k: v for k, v in c.items()
                                           if k not in ("batch_size_histogram",
                                                        "decision_reasons")},
               "client_identity": sent == o["ok"] + o["error"] + o["rejected"] + o["timeout"],
               "batcher_identity": c["submitted"] == c["completed"] + c["rejected"]
               + c["failed"] + c["cancelled_queued"] + c["cancelled_in_flight"],
               "ok_equals_completed": o["ok"] == c["completed"],
               "raw_stride": rep["raw_stride"], "ok_count": rep["ok_count"],
               "kept_latencies": len(rep["latencies_ms"]),
               "results_json_bytes": out.stat().st_size}
        out.unlink()
    return {"command": " ".join(cmd[1:]), "duration_s": duration_s,
            "rate_per_s": rate_per_s, "returncode": proc.returncode,
            "stderr_tail": err_lines[-3:], "seconds": round(time.perf_counter() - t0, 1),
            "rss_samples": samples, "rss_at_100k_bytes": base,
            "rss_peak_bytes": max((r for _, r in samples), default=0),
            "rss_growth_after_100k_bytes": growth,
            "rss_flat": bool(after) and growth < CLI_FLAT_RSS_BYTES, "accounting": acc,
            "accounted": bool(acc) and acc["client_identity"] and acc["batcher_identity"]
            and acc["ok_equals_completed"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--serve-requests", type=int, default=400_000)
    ap.add_argument("--cli-duration-s", type=float, default=200.0,
                    help="duration of the CLI phase (open:5000: 5,000 requests/s; 0 skips)")
    ap.add_argument("--skip-soak", action="store_true",
                    help="run only the CLI phase (and --serve-requests)")
    ap.add_argument("--uvloop", action="store_true")
    add_machine_argument(ap)
    ap.add_argument("--out", default=None, help="result file [default: the naming rule]")
    a = ap.parse_args()
    t0 = time.perf_counter()
    if a.skip_soak:
        res = {"segments": [], "total": None, "rss_samples": [], "all_accounted": True,
               "rss_flat": True}
    elif a.uvloop:
        import uvloop

        res = uvloop.run(soak(a.requests))
    else:
        res = asyncio.run(soak(a.requests))
    res["serve_memory"] = serve_memory(a.serve_requests) if a.serve_requests > 0 else None
    res["cli_memory"] = cli_memory(a.cli_duration_s) if a.cli_duration_s > 0 else None
    res["seconds"] = round(time.perf_counter() - t0, 1)
    res["machine"] = {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                      "python": sys.version.split()[0], "loop": "uvloop" if a.uvloop else
                      "asyncio", "load_average": os.getloadavg()}
    head = (f"{'segment':<11} {'sent':>8} {'completed':>9} {'rejected':>8} {'failed':>7} "
            f"{'cancelled':>9} {'hung':>4} {'open':>4} {'batches':>7} {'req/s':>8} ok")
    print(head)
    print("-" * len(head))
    for r in res["segments"]:
        print(f"{r['segment']:<11} {r['sent']:>8} {r['completed']:>9} {r['rejected']:>8} "
              f"{r['failed']:>7} {r['cancelled']:>9} {r['hung']:>4} {r['open_after_close']:>4} "
              f"{r['batches']:>7} {r['requests_per_s'] or 0:>8.0f} "
              f"{'yes' if r['accounted'] and r['counters_agree'] else 'NO'}")
    t = res["total"]
    if t is not None:
        print(f"{'total':<11} {t['sent']:>8} {t['completed']:>9} {t['rejected']:>8} "
              f"{t['failed']:>7} {t['cancelled']:>9} {t['hung']:>4} {t['open_after_close']:>4}")
        first, last = res["rss_samples"][0]["rss_bytes"], res["rss_samples"][-1]["rss_bytes"]
        print(f"RSS {first / 2**20:.0f} MiB at start, {last / 2**20:.0f} MiB at the end; "
              f"growth after the first segment "
              f"{res['rss_growth_after_first_segment_bytes'] / 2**20:.1f} MiB "
              f"({'flat' if res['rss_flat'] else 'NOT flat'}); {res['seconds']} s")
    sm = res["serve_memory"]
    if sm:
        print(f"measure_serving, {sm['requests']:,} requests: RSS +{sm['rss_growth_bytes'] / 2**20:.0f}"
              f" MiB ({sm['rss_growth_bytes_per_request']:.0f} B/request while running), results "
              f"{sm['results_json_bytes'] / 2**20:.1f} MiB (raw lists every "
              f"{sm['raw_stride']}th request), {sm['seconds']} s")
    cm = res["cli_memory"]
    if cm:
        ac = cm["accounting"]
        print(f"trtcheck serve CLI, open:5000 for {cm['duration_s']:g} s: exit "
              f"{cm['returncode']}, RSS {cm['rss_at_100k_bytes'] / 2**20:.0f} MiB after 100k "
              f"requests, peak {cm['rss_peak_bytes'] / 2**20:.0f} MiB, growth "
              f"{cm['rss_growth_after_100k_bytes'] / 1e6:.1f} MB "
              f"({'flat' if cm['rss_flat'] else 'NOT flat'}); accounting "
              f"{'exact' if cm['accounted'] else 'NOT exact'} "
              f"({ac.get('outcomes')}); {cm['seconds']} s")
    write_json(Path(a.out) if a.out else result_path("serve_soak", a.machine), res)
    ok = res["all_accounted"] and res["rss_flat"]
    if cm:
        ok = ok and cm["rss_flat"] and cm["accounted"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
