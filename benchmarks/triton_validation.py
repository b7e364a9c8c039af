"""trtcheck against a real Triton Inference Server: the live load generator vs perf_analyzer.

Part ``loadgen`` (this file's first part): on the same tritonserver and model, at the same
Poisson request rates, ``trtcheck serve --url`` (its library function
:func:`trtcheck.measure.serving.live.live.measure_live`) and Triton's reference load generator
``perf_analyzer`` (from the ``tritonclient==2.41.0`` wheel, fetched by
``engines/fetch_triton.py``) each drive the model. Per rate it reports both tools'
achieved send rate, late (delayed) sends, client P50 and P99, and checks

* client P50 and P99 of trtcheck within 10% of perf_analyzer's at the same rate;
* trtcheck's server-side mean batch equals the delta of Triton's statistics, read
  independently by this script around trtcheck's run, within 1%.

perf_analyzer counts latency from each request's actual send; trtcheck's open-loop
latency counts from the scheduled send (no coordinated omission), so with late sends the
two differ by the send lag. The table shows trtcheck's both ways (``p50``/``p99`` from the
schedule, ``p50s``/``p99s`` from the send); the check uses the from-send numbers when
either tool delayed more than 5% of its sends, and the scheduled ones otherwise.

By default the script starts its own tritonserver (CPU, python backend, explicit model
control) with a model whose batch time is T(b) = A + B * b ms (``--a-ms``, ``--b-ms``),
dynamic batching with ``--window-ms`` and ``--max-batch``; ``--url``/``--model`` measure
an existing server instead (``--protocol`` then follows the URL).

Run (dev machine, about 2 minutes with the defaults)::

    python benchmarks/triton_validation.py --machine dev-cpu

On another host (e.g. the GPU machine's CPU, offline): pack the cache made by
``python engines/fetch_triton.py --perf-analyzer`` (perf_analyzer's folder carries libb64
and a relative libcudart link; 40 MB as tar.xz)::

    tar -cJf triton-cache.tar.xz -C ~/.cache/trtcheck triton

and there, with a Python that has numpy and ``tritonclient[http,grpc]`` (the python
backend stub for that Python is copied from the cache on start)::

    mkdir -p /tmp/tc && tar -xJf triton-cache.tar.xz -C /tmp/tc
    TRTCHECK_CACHE_DIR=/tmp/tc python benchmarks/triton_validation.py \\
        --machine h200-host --rates 200,400,800,1600 --duration-s 10

Prints a table and writes ``benchmarks/results/triton_validation-<machine>.json`` (name
the protocol as the setup when it is not HTTP: ``--machine dev-cpu-grpc --protocol grpc``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _http_stats(http_url: str, model: str) -> dict:
    with urllib.request.urlopen(f"{http_url}/v2/models/{model}/stats", timeout=10) as r:
        return json.loads(r.read())["model_stats"][0]


def run_trtcheck(url: str, http_url: str, model: str, rate: float, duration_s: float,
                 seed: int, client_processes: int) -> dict:
    """One trtcheck open-loop run; also the statistics delta read around it here."""
    from trtcheck.measure.serving.live import measure_live

    before = _http_stats(http_url, model)
    run = measure_live(url, model, loads=[f"open:{rate:g}"], max_duration_s=duration_s,
                       drain_timeout_s=10.0, seed=seed, client_processes=client_processes,
                       warmup_requests=8)
    after = _http_stats(http_url, model)
    c = run.configs[0]
    rep = c.repeats[0]
    inf = after["inference_count"] - before["inference_count"]
    exe = after["execution_count"] - before["execution_count"]
    cmd = run.live.command_stats
    import numpy as np

    from trtcheck import stats

    lat_send = [v - lag for v, lag in zip(rep.latencies_ms, rep.parts_ms.get("send_lag_ms", []))]
    return {
        "achieved_rate_per_s": rep.achieved_send_rate_per_s,
        "throughput_queries_per_s": rep.throughput_queries_per_s,
        "late_share": rep.late_send_share,
        "send_lag_p99_ms": rep.send_lag_p99_ms,
        "p50_ms": c.p50_ms, "p99_ms": c.p99_ms,
        "p50_from_send_ms": stats.percentile(lat_send, 0.5) if lat_send else None,
        "p99_from_send_ms": stats.percentile(lat_send, 0.99) if lat_send else None,
        "mean_from_send_ms": float(np.mean(lat_send)) if lat_send else None,
        "outcomes": rep.outcomes,
        "server_mean_batch": c.mean_batch_size,
        "command_mean_batch": cmd.avg_batch_size if cmd else None,
        "independent_delta": {"inference_count": inf, "execution_count": exe,
                              "mean_batch": inf / exe if exe else None},
        "live_split": rep.live_split.model_dump() if rep.live_split else None,
    }


_PA_PATTERNS = {
    "send_rate_per_s": r"Avg send request rate:\s*([\d.]+)",
    "delayed_pct": r"([\d.]+)% of the requests were delayed",
    "throughput_queries_per_s": r"Throughput:\s*([\d.]+)\s*infer/sec",
    "p50_us": r"p50 latency:\s*(\d+)\s*usec",
    "p99_us": r"p99 latency:\s*(\d+)\s*usec",
    "avg_us": r"Avg HTTP time:\s*(\d+)|Avg gRPC time:\s*(\d+)",
    "request_count": r"Request count:\s*(\d+)",
    "server_inference_count": r"Inference count:\s*(\d+)",
    "server_execution_count": r"Execution count:\s*(\d+)",
}


def run_perf_analyzer(pa: Path, env: dict, address: str, protocol: str, model: str,
                      rate: float, duration_s: float, shape: str,
                      max_threads: int = 64) -> dict:
    """perf_analyzer at ``rate`` Poisson requests/s for about ``duration_s``: three
    measurement windows of a third each, all kept (``--stability-percentage=1000``: its
    stability search would otherwise repeat windows on a noisy machine, or give up)."""
    cmd = [str(pa), "-m", model, "-u", address, "-i", protocol,
           f"--request-rate-range={rate:g}", "--request-distribution=poisson",
           f"--measurement-interval={max(200, int(duration_s * 1000 / 3))}",
           "--percentile=99", "--max-trials=3", "--stability-percentage=1000",
           # its default of 4 sender threads falls behind above ~400 req/s (seen: 23% of
           # sends late at 400 req/s, 99.8% at 800, on a quiet 16-core host)
           f"--max-threads={max_threads}",
           "--shape", shape, "-v"]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=duration_s * 6 + 120, check=False)
    out = proc.stdout + proc.stderr
    res: dict = {"returncode": proc.returncode, "wall_s": time.monotonic() - t0}
    for key, pat in _PA_PATTERNS.items():
        m = re.findall(pat, out)
        if m:
            last = m[-1]
            val = next(v for v in last if v) if isinstance(last, tuple) else last
            res[key] = float(val)
    if proc.returncode != 0:
        res["output_tail"] = out[-1500:]
    res["delayed_pct"] = res.get("delayed_pct", 0.0)
    if "p50_us" in res:
        res["p50_ms"] = res["p50_us"] / 1e3
        res["p99_ms"] = res["p99_us"] / 1e3
    return res


def main() -> int:
    from _harness import add_machine_argument, cpu_model, result_path

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_machine_argument(ap)
    ap.add_argument("--rates", default="100,200,400", help="Poisson request rates, req/s")
    ap.add_argument("--duration-s", type=float, default=5.0)
    ap.add_argument("--protocol", choices=["http", "grpc"], default="http")
    ap.add_argument("--client-processes", type=int, default=1)
    ap.add_argument("--a-ms", type=float, default=2.0)
    ap.add_argument("--b-ms", type=float, default=0.25)
    ap.add_argument("--window-ms", type=float, default=2.0)
    ap.add_argument("--max-batch", type=int, default=32)
    ap.add_argument("--instances", type=int, default=1)
    ap.add_argument("--url", default=None, help="an existing server (skips starting one)")
    ap.add_argument("--model", default="tb_validation")
    ap.add_argument("--shape", default="INPUT0:4", help="perf_analyzer --shape of the input")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pa-max-threads", type=int, default=64,
                    help="perf_analyzer --max-threads (its own default is 4)")
    args = ap.parse_args()

    from trtcheck.testing import triton_server as ts
    from trtcheck.units import ms_to_us

    fetch = ts.load_fetch_triton()
    pa = fetch.fetch_perf_analyzer()
    pa_env = fetch.perf_analyzer_env()
    rates = [float(r) for r in args.rates.split(",") if r.strip()]
    srv = None
    if args.url:
        url = args.url
        http_url = url if url.startswith("http") else None
        if http_url is None:
            raise SystemExit("--url grpc://... needs the server's HTTP port too: give http://")
        protocol = "http"
        model = args.model
    else:
        tmp = Path(tempfile.mkdtemp(prefix="trtcheck-triton-val-"))
        repo = tmp / "models"
        ts.write_model(repo, args.model, a_ms=args.a_ms, b_ms=args.b_ms,
                       max_batch_size=args.max_batch,
                       max_queue_delay_us=int(ms_to_us(args.window_ms)),
                       instances=args.instances)
        srv = ts.TritonServer(repo, explicit=True, load_models=(args.model,)).start()
        http_url = srv.http_url
        protocol = args.protocol
        url = srv.http_url if protocol == "http" else srv.grpc_url
        model = args.model
    address = url.split("://", 1)[1]
    rows = []
    try:
        for k, rate in enumerate(rates):
            tc = run_trtcheck(url, http_url, model, rate, args.duration_s, args.seed + k,
                              args.client_processes)
            pr = run_perf_analyzer(pa, pa_env, address, protocol, model, rate,
                                   args.duration_s, args.shape)
            late = (tc["late_share"] or 0) > 0.05 or pr.get("delayed_pct", 0) > 5
            p50 = tc["p50_from_send_ms"] if late else tc["p50_ms"]
            p99 = tc["p99_from_send_ms"] if late else tc["p99_ms"]
            ind = tc["independent_delta"]["mean_batch"]
            row = {
                "rate_per_s": rate, "trtcheck": tc, "perf_analyzer": pr,
                "compared_from_send": late,
                "p50_ratio": (p50 / pr["p50_ms"]) if pr.get("p50_ms") and p50 else None,
                "p99_ratio": (p99 / pr["p99_ms"]) if pr.get("p99_ms") and p99 else None,
                "mean_batch_rel_err": (abs(tc["server_mean_batch"] - ind) / ind
                                       if ind else None),
                "command_mean_batch_rel_err": (abs(tc["command_mean_batch"] - ind) / ind
                                               if ind and tc["command_mean_batch"] else None),
            }
            row["ok_latency"] = (row["p50_ratio"] is not None and row["p99_ratio"] is not None
                                 and abs(row["p50_ratio"] - 1) <= 0.10
                                 and abs(row["p99_ratio"] - 1) <= 0.10)
            row["ok_mean_batch"] = (row["command_mean_batch_rel_err"] is not None
                                    and row["command_mean_batch_rel_err"] <= 0.01)
            rows.append(row)
            print(f"rate {rate:g}: done", file=sys.stderr, flush=True)
    finally:
        if srv is not None:
            srv.stop()
    head = (f"{'rate':>6} | {'tc sent/s':>9} {'tc late':>7} {'tc p50':>7} {'tc p99':>7} "
            f"{'p50s':>7} {'p99s':>7} | {'pa sent/s':>9} {'pa late':>7} {'pa p50':>7} "
            f"{'pa p99':>7} | {'p50 x':>6} {'p99 x':>6} | {'batch':>6} {'stats':>6} {'ok':>5}")
    print(head)
    print("-" * len(head))

    def f(v, fmt):
        return "-" if v is None else format(v, fmt)

    for r in rows:
        tc, pr = r["trtcheck"], r["perf_analyzer"]
        ok = ("yes" if r["ok_latency"] else "LAT") if r["ok_mean_batch"] else "BATCH"
        print(f"{r['rate_per_s']:>6g} | {f(tc['achieved_rate_per_s'], '9.1f')} "
              f"{f(tc['late_share'], '7.1%')} {f(tc['p50_ms'], '7.2f')} {f(tc['p99_ms'], '7.2f')} "
              f"{f(tc['p50_from_send_ms'], '7.2f')} {f(tc['p99_from_send_ms'], '7.2f')} | "
              f"{f(pr.get('send_rate_per_s'), '9.1f')} "
              f"{f(pr.get('delayed_pct', 0) / 100, '7.1%')} {f(pr.get('p50_ms'), '7.2f')} "
              f"{f(pr.get('p99_ms'), '7.2f')} | {f(r['p50_ratio'], '6.2f')} "
              f"{f(r['p99_ratio'], '6.2f')} | {tc['command_mean_batch'] or 0:>6.3f} "
              f"{tc['independent_delta']['mean_batch'] or 0:>6.3f} {ok:>5}")
    print("p50 x / p99 x: trtcheck / perf_analyzer (from-send numbers when either delayed > 5% "
          "of sends); batch: trtcheck's server mean batch over the command; stats: Triton's "
          "statistics delta read around it by this script.")
    out = result_path("triton_validation", args.machine)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"machine": args.machine, "cpu": cpu_model(), "cpus": os.cpu_count(),
           "load_average": os.getloadavg(),
           "settings": {k: v for k, v in vars(args).items()},
           "server": "tritonserver 2.51 (nvidia-pytriton 0.7.0 wheel), python backend, CPU",
           "part": "loadgen", "rows": rows}
    out.write_text(json.dumps(doc, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o)))
    print(f"wrote {out.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
