"""One arrival schedule from 1 process vs from 3 Ray actors on 3 nodes (``serve --url ... --ray``).

On a local Ray cluster of 3 nodes on this machine (``trtcheck/testing/ray_cluster.py``,
1 CPU each) against the test tritonserver (CPU, python backend, T(b) = A + B * b ms,
window 2 ms, max batch 32), per Poisson rate the same schedule (same seed, a fixed
count) is sent once by one load process and once split across 3 actors, alternately,
``--repeats`` times each. It checks:

* the server-side mean batch (Triton's inferences / executions over the run) of the
  split run within 1% of the one-process run's (medians over the repeats);
* client P50 and P99 (from the scheduled send) within 5%;
* the accounting: every scheduled request has one outcome in both, the shares add up.

Part two, **sending capacity on a null target**: a KServe v2 HTTP endpoint that answers
every inference at once with a fixed response (:func:`null_target`, its own process, no
model behind it), driven open-loop by 1 and then 3 actors at a rate no sender can reach:
``--null-rate-per-actor`` (default 100,000 req/s, five times what one actor sent on a
16-core host) times the actor count, so every actor is behind its share all along and
the achieved send rate (all sends together) is what the actors can send. The ratio of
the two achieved rates is the capacity scaling; each run's rate is checked to have been
out of reach (achieved below 90% of it: every send late is not enough, a sender that
keeps pace a few milliseconds behind is late on every send), else the ratio only says
the rate was met. The achieved rate is over the sends' own span: a sender far behind
fires its backlog back to back and checks the duration bound only between catch-up
batches, so its sending can outlast ``--null-duration-s``. Every node's measured clock
offset (and its bound) is recorded.

Run (about 4 minutes on the 2-core development machine)::

    python benchmarks/distributed_load.py --machine dev-cpu

Prints the tables and writes ``benchmarks/results/distributed_load-<machine>.json``. On a
machine of 2 cores the three nodes, the server and the driver share those cores: the
scaling ratio there says what the cores allow, not what three machines would.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NULL_MODEL = "null"
_META = {"name": NULL_MODEL, "versions": ["1"], "platform": "null",
         "inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [-1, 4]}],
         "outputs": [{"name": "OUTPUT0", "datatype": "FP32", "shape": [-1, 4]}]}
_CONFIG = {"name": NULL_MODEL, "max_batch_size": 32, "backend": "null",
           "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [4]}],
           "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [4]}]}
_INFER = json.dumps({"model_name": NULL_MODEL, "model_version": "1", "outputs": [
    {"name": "OUTPUT0", "datatype": "FP32", "shape": [1, 4], "data": [0.0] * 4}]}).encode()


def null_target(port_out: Any) -> None:
    """A KServe v2 HTTP endpoint with one model, ``null``, that answers every inference
    at once (a fixed JSON response of the right shape) and counts them in its
    statistics; the metadata, config, readiness and stats endpoints ``serve --url``
    reads. Runs until killed; sends its port on ``port_out``."""
    import asyncio

    import httptools

    count = [0]

    def stats() -> bytes:
        n = count[0]
        d = {"count": n, "ns": 0}
        return json.dumps({"model_stats": [{
            "name": NULL_MODEL, "version": "1", "inference_count": n, "execution_count": n,
            "inference_stats": {k: d if k == "success" or k.startswith("compute") or
                                k == "queue" else {"count": 0, "ns": 0}
                                for k in ("success", "fail", "queue", "compute_input",
                                          "compute_infer", "compute_output")},
            "batch_stats": [{"batch_size": 1, "compute_input": d, "compute_infer": d,
                             "compute_output": d}]}]}).encode()

    routes = {"/v2": json.dumps({"name": "null-target", "version": "0",
                                 "extensions": ["statistics"]}).encode(),
              "/v2/health/ready": b"", "/v2/health/live": b"",
              f"/v2/models/{NULL_MODEL}": json.dumps(_META).encode(),
              f"/v2/models/{NULL_MODEL}/ready": b"",
              f"/v2/models/{NULL_MODEL}/config": json.dumps(_CONFIG).encode()}

    def reply(body: bytes, status: str = "200 OK") -> bytes:
        return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body

    infer_reply = reply(_INFER)

    class Conn(asyncio.Protocol):
        def connection_made(self, transport: Any) -> None:
            self.t = transport
            self.url = b""
            self.p = httptools.HttpRequestParser(self)

        def data_received(self, data: bytes) -> None:
            try:
                self.p.feed_data(data)
            except httptools.HttpParserError:
                self.t.close()

        def on_url(self, url: bytes) -> None:
            self.url = url

        def on_message_complete(self) -> None:
            path = self.url.decode().split("?")[0].rstrip("/") or "/v2"
            self.url = b""
            if path.endswith("/infer"):
                count[0] += 1
                self.t.write(infer_reply)
            elif path.endswith("/stats"):
                self.t.write(reply(stats()))
            elif path in routes:
                self.t.write(reply(routes[path]))
            else:
                self.t.write(reply(b'{"error":"not found"}', "404 Not Found"))

    async def main() -> None:
        loop = asyncio.get_running_loop()
        srv = await loop.create_server(Conn, "127.0.0.1", 0, backlog=1024)
        port_out.send(srv.sockets[0].getsockname()[1])
        await srv.serve_forever()

    try:
        import uvloop

        uvloop.run(main())
    except ImportError:
        asyncio.run(main())


def _one(url: str, model: str, load: str, seed: int, duration_s: float,
         distributed: Any, warmup: int = 8) -> dict[str, Any]:
    from trtcheck.measure.serving.live.live import measure_live

    run = measure_live(url, model, loads=[load], max_duration_s=duration_s,
                       drain_timeout_s=10.0, seed=seed, warmup_requests=warmup,
                       distributed=distributed)
    rep = run.configs[0].repeats[0]
    d = rep.distributed
    return {"p50_ms": rep.latency.median_ms if rep.latency else None,
            "p99_ms": rep.latency.p99_ms if rep.latency else None,
            "server_mean_batch": rep.mean_batch_size, "outcomes": rep.outcomes,
            "server_inferences": rep.server_stats.inference_count,
            "late_share": rep.late_send_share, "send_lag_p99_ms": rep.send_lag_p99_ms,
            "achieved_send_rate_per_s": rep.achieved_send_rate_per_s,
            "distributed": None if d is None else d.model_dump(mode="json")}


def _med(xs: list[float | None]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main() -> int:
    from _harness import add_machine_argument, cpu_model, format_table, write_result

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_machine_argument(ap)
    ap.add_argument("--rates", default="100,200", help="Poisson request rates, req/s")
    ap.add_argument("--duration-s", type=float, default=4.0, help="schedule length per run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--a-ms", type=float, default=2.0)
    ap.add_argument("--b-ms", type=float, default=0.25)
    ap.add_argument("--null-rate-per-actor", type=float, default=100000.0,
                    help="open-loop rate on the null target per actor, req/s: far above "
                    "what one actor sends, so the achieved rate is its capacity")
    ap.add_argument("--null-actors", default="1,3",
                    help="actor counts of the null-target runs (scaling: last / first)")
    ap.add_argument("--null-duration-s", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from trtcheck.measure.serving.live.distributed import RayLoad
    from trtcheck.testing import triton_server as ts
    from trtcheck.testing.ray_cluster import local_ray_cluster

    repo = Path(tempfile.mkdtemp(prefix="trtcheck-dist-")) / "models"
    ts.write_model(repo, "tb_dist", a_ms=args.a_ms, b_ms=args.b_ms, max_batch_size=32,
                   max_queue_delay_us=2000)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    null = ctx.Process(target=null_target, args=(child,), daemon=True)
    null.start()
    null_url = f"http://127.0.0.1:{parent.recv()}"
    rows, null_rows, clocks = [], [], []
    srv = ts.TritonServer(repo, explicit=True, load_models=("tb_dist",)).start()
    try:
        with local_ray_cluster(3) as cluster:
            with RayLoad(cluster.address, 3) as rl:
                for k, rate in enumerate(float(r) for r in args.rates.split(",") if r):
                    count = int(round(rate * args.duration_s))
                    load = f"open:{rate:g}:poisson:{count}"
                    one, three = [], []
                    for r in range(args.repeats):
                        seed = args.seed + 100 * k + r
                        one.append(_one(srv.http_url, "tb_dist", load, seed,
                                        args.duration_s + 2, None))
                        three.append(_one(srv.http_url, "tb_dist", load, seed,
                                          args.duration_s + 2, rl))
                        print(f"rate {rate:g} repeat {r + 1}: done", file=sys.stderr,
                              flush=True)
                    row = {"rate_per_s": rate, "requests": count, "one_process": one,
                           "ray_3_actors": three}
                    for name, runs in (("1p", one), ("3a", three)):
                        for key in ("server_mean_batch", "p50_ms", "p99_ms", "late_share",
                                    "achieved_send_rate_per_s"):
                            row[f"{key}_{name}"] = _med([x[key] for x in runs])
                    row["batch_rel_err"] = abs(row["server_mean_batch_3a"]
                                               / row["server_mean_batch_1p"] - 1)
                    row["p50_ratio"] = row["p50_ms_3a"] / row["p50_ms_1p"]
                    row["p99_ratio"] = row["p99_ms_3a"] / row["p99_ms_1p"]
                    row["accounting_exact"] = all(
                        sum(x["outcomes"].values()) == count for x in one + three) and all(
                        x["distributed"]["scheduled_requests"] == count
                        and x["distributed"]["lost_requests"] == 0 for x in three)
                    row["ok"] = (row["batch_rel_err"] <= 0.01
                                 and abs(row["p50_ratio"] - 1) <= 0.05
                                 and abs(row["p99_ratio"] - 1) <= 0.05
                                 and row["accounting_exact"])
                    rows.append(row)
                    for x in three:
                        clocks += [{"actor": n["actor"], "node_id": n["node_id"][:8],
                                    "clock_offset_ms": n["clock_offset_ms"],
                                    "clock_offset_error_ms": n["clock_offset_error_ms"],
                                    "start_skew_ms": n["start_skew_ms"]}
                                   for n in x["distributed"]["nodes"]]
            # sending capacity on the null target: each actor's share at a rate it
            # cannot reach, so what it sends is what it can (all CPUs free)
            for actors in (int(a) for a in args.null_actors.split(",") if a):
                rate = args.null_rate_per_actor * actors
                count = int(rate * args.null_duration_s)
                load = f"open:{rate:g}:constant:{count}"
                with RayLoad(cluster.address, actors) as d:
                    x = _one(null_url, NULL_MODEL, load, args.seed, args.null_duration_s, d)
                nodes = x["distributed"]["nodes"]
                late = [n["late_sends"] / n["sent_requests"] if n["sent_requests"] else 0.0
                        for n in nodes]
                null_rows.append({
                    "actors": actors, "target_rate_per_s": rate,
                    "sent": x["distributed"]["sent_requests"],
                    "achieved_send_rate_per_s": x["achieved_send_rate_per_s"],
                    "late_share": x["late_share"],
                    # behind and falling further behind: a sender that keeps pace a
                    # few ms late is late on every send but meets the rate
                    "rate_out_of_reach": (x["achieved_send_rate_per_s"] or 0) < 0.9 * rate,
                    "sender_cpu_share_max": max(n["load_cpu_share"] or 0 for n in nodes),
                    "per_actor_rates_per_s": [n["achieved_send_rate_per_s"] for n in nodes],
                    "per_actor_late_shares": late})
                print(f"null target, {actors} actor(s): done", file=sys.stderr, flush=True)
    finally:
        srv.stop()
        null.kill()
        null.join(5)
    scaling = (null_rows[-1]["achieved_send_rate_per_s"]
               / null_rows[0]["achieved_send_rate_per_s"]) if len(null_rows) >= 2 else None
    capacity_measured = all(r["rate_out_of_reach"] for r in null_rows)
    print(format_table(rows, [
        ("rate_per_s", "rate/s", "g"), ("requests", "requests", "d"),
        ("server_mean_batch_1p", "batch 1p", ".3f"), ("server_mean_batch_3a", "batch 3a", ".3f"),
        ("batch_rel_err", "batch err", ".2%"),
        ("p50_ms_1p", "p50 1p", ".2f"), ("p50_ms_3a", "p50 3a", ".2f"),
        ("p99_ms_1p", "p99 1p", ".2f"), ("p99_ms_3a", "p99 3a", ".2f"),
        ("p50_ratio", "p50 x", ".3f"), ("p99_ratio", "p99 x", ".3f"),
        ("late_share_1p", "late 1p", ".1%"), ("late_share_3a", "late 3a", ".1%"),
        ("accounting_exact", "exact", ""), ("ok", "ok", "")]))
    print("1p: one load process; 3a: the same schedule split across 3 Ray actors on 3 "
          "nodes; medians over the repeats; batch: Triton's inferences / executions.")
    print()
    print(format_table(null_rows, [
        ("actors", "actors", "d"), ("target_rate_per_s", "target/s", "g"),
        ("sent", "sent", "d"), ("achieved_send_rate_per_s", "sent/s", ".0f"),
        ("late_share", "late", ".1%"), ("rate_out_of_reach", "unreachable", ""),
        ("sender_cpu_share_max", "cpu max", ".0%")]))
    if scaling and null_rows:
        a0, a1 = null_rows[0]["actors"], null_rows[-1]["actors"]
        print(f"sending capacity scaling, {a1} actor(s) / {a0} on the null target: "
              f"{scaling:.2f}x" + ("" if capacity_measured else
                                   " (a rate was reached: not the capacity; raise "
                                   "--null-rate-per-actor)"))
    else:
        print("sending capacity scaling: -")
    off = [c["clock_offset_ms"] for c in clocks]
    err = [c["clock_offset_error_ms"] for c in clocks]
    print(f"clock offsets: {len(off)} measured, |offset| max {max(map(abs, off)):.3f} ms, "
          f"bound max {max(err):.3f} ms; start skew max "
          f"{max(c['start_skew_ms'] for c in clocks):.3f} ms")
    write_result("distributed_load", args.machine, {
        "cpu": cpu_model(), "cpus": os.cpu_count(), "load_average": os.getloadavg(),
        "settings": vars(args),
        "server": "tritonserver 2.51, python backend, CPU, window 2 ms, max batch 32",
        "cluster": "ray.cluster_utils.Cluster, 3 nodes on this host, 1 CPU each",
        "rows": rows, "null_target": null_rows,
        "send_capacity_scaling": scaling, "send_capacity_measured": capacity_measured,
        "clock_offsets": clocks})
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
