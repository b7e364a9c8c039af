#!/usr/bin/env python3
"""Serving predictions for a real GPU model behind Triton, against perf_analyzer.

Two modes:

``record`` (on the GPU machine): starts tritonserver (python backend, explicit model
control) with a torchvision model in FP16 (random weights: compute cost is what matters)
running eagerly on ``cuda:0`` inside the python backend (``KIND_GPU``, ``gpus: [0]``), and

1. loads every configuration of the grid at once, each under its own model name
   (1, 2 and 4 instances on the one GPU, windows 0-5 ms, max batch 2-64), so nothing is
   reloaded between measurements;
2. measures the idle-gap effect (perf_analyzer closed loop at concurrency 1 against 2 on
   a no-window configuration: Triton's per-execution compute of batch 1 in each);
3. records trtcheck calibration runs as a user makes them (``trtcheck serve --url ...
   --load open:R -o live.json``; a higher rate; a closed loop of 64 clients that forms
   the large batches; a repeat right after, and one at the end of the run for drift) at
   1, 2 and 4 instances;
4. measures every configuration of the grid with perf_analyzer (request-rate mode,
   Poisson, ``--async``, three windows of ``--requests-per-window`` requests, >= 2,000
   in all) at rates from 30% to past one instance's capacity (fractions of 1 / T(1),
   T(1) measured on the server first), each with the server's statistics delta
   (mean batch, per-batch-size compute, queue time); a rate a configuration could not
   keep up with ends that configuration's rates;
5. measures a few configurations again later in the run (the A/A spread: the noise
   floor); ``--grid holdout2`` and ``holdout3`` measure every configuration twice, the
   whole grid in order and then again, so every configuration has its own A/A spread.

Everything goes to ``$OUT/tune_gpu_record.json`` (rewritten after every measurement, so a
timeout still leaves data; ``complete`` says whether the run finished), with the
calibration runs' ``live.json`` documents inside. The run is bounded by ``--budget-s``
(each step is skipped when its estimated time would pass it) and every perf_analyzer or
trtcheck process by its own timeout.

``evaluate`` (anywhere; no server): takes a recorded file (``.json`` or ``.json.xz``)
and, per model, predicts every measured configuration at its achieved rate from the
recorded calibration, exactly as ``trtcheck advise --from live.json --arrival-rate R
--window-ms W --max-batch B --instances N`` puts it in ``what_if`` (the same library
functions, in process), and compares with perf_analyzer's measurement. Goals (issue
"tune_gpu"): mean batch within 10% in >= 95% of configurations; P50 within 10% and P99
within 20% (or within that configuration's A/A spread, whichever is larger) in >= 90%;
interval coverage >= 90% (when the predictions carry intervals). Also prints the noise
floor: of the configurations measured twice, how often the second measurement is within
the goal of the first. Prints a table per model and writes
``benchmarks/results/tune_gpu-<machine>.json``.

Run on the GPU machine (what travels: the Triton cache as tar.xz, cp312 wheels of the
client side; see ../shared/docs/environment.md)::

    TRTCHECK_CACHE_DIR=/tmp/tc python benchmarks/tune_gpu.py record --arch resnet18 \\
        --out $OUT/tune_gpu_record.json

and anywhere::

    python benchmarks/tune_gpu.py evaluate tests/data/tune-gpu-raw/h200-host.json.xz \\
        --machine h200-host
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import lzma
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from _harness import add_machine_argument, format_table, result_path, write_json
from trtcheck.testing.pb_numpy import PB_NUMPY_PY

GOALS = {"mean_batch": 0.10, "p50_ms": 0.10, "p99_ms": 0.20}
#: share of configurations that must meet each goal
GOAL_SHARE = {"mean_batch": 0.95, "p50_ms": 0.90, "p99_ms": 0.90, "coverage": 0.90}

MODEL_PY = '''\
import json
import time

''' + PB_NUMPY_PY + '''

class TritonPythonModel:
    """A torchvision model (parameter ``arch``) in FP16 on cuda:0, eager PyTorch, random
    weights; INPUT__0 FP16 [b, 3, 224, 224] -> OUTPUT__0 FP32 [b, 1000]. ``arch`` "sleep"
    is a scripted stand-in without torch (busy-waits 3 ms + 0.5 ms x b) for trying the
    script on a machine without a GPU."""

    def initialize(self, args):
        cfg = json.loads(args["model_config"])
        self.arch = cfg.get("parameters", {}).get("arch", {}).get("string_value", "resnet18")
        if self.arch == "sleep":
            return
        import torch
        import torchvision

        self.torch = torch
        self.dev = torch.device("cuda:0")
        torch.backends.cudnn.benchmark = False  # the same kernels every run
        torch.manual_seed(0)
        self.model = getattr(torchvision.models, self.arch)(weights=None).half().to(
            self.dev).eval()
        mb = max(1, int(cfg.get("max_batch_size", 1)))
        # first-call costs out of the measurement: eager PyTorch pays a one-time cost per
        # new input shape (cuDNN engine choice, allocator growth): 0.2-1.4 s per batch
        # size for mobilenet_v3_large on an H100, so "all" warms every size up to the max
        params = cfg.get("parameters", {})
        self.graphs = {}
        if params.get("execution", {}).get("string_value", "eager") == "cuda-graphs":
            self._capture(mb)
            return
        warm = params.get("warm_sizes", {}).get("string_value", "pow2")
        sizes = range(1, mb + 1) if warm == "all" else {1, 2, 4, 8, 16, 32, 64, mb}
        with torch.inference_mode():
            for b in sorted(sizes):
                if b <= mb:
                    x = torch.randn(b, 3, 224, 224, device=self.dev, dtype=torch.float16)
                    for _ in range(3):
                        self.model(x)
        # the allocator's cache of the largest warm-up batch back to the device: 20 and
        # more instances of a model with large activations (VGG-16) share one GPU
        torch.cuda.empty_cache()
        torch.cuda.synchronize()

    def _capture(self, mb):
        """One CUDA graph per captured size (:data:`GRAPH_SIZES` up to the max, and the
        max): a batch runs the smallest graph that holds it, padded, as a GPU-bound
        engine does (no per-kernel launches from Python)."""
        torch = self.torch
        pool = torch.cuda.graph_pool_handle()
        sizes = sorted({b for b in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64) if b < mb} | {mb})
        with torch.inference_mode():
            for b in sorted(sizes, reverse=True):  # the largest first: the pool's size
                x = torch.zeros(b, 3, 224, 224, device=self.dev, dtype=torch.float16)
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(2):
                        self.model(x)
                torch.cuda.current_stream().wait_stream(side)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, pool=pool):
                    y = self.model(x)
                self.graphs[b] = (g, x, y)
        torch.cuda.synchronize()

    def _run(self, x_np):
        torch = self.torch
        n = int(x_np.shape[0])
        if not self.graphs:
            x = torch.from_numpy(x_np).to(self.dev)
            with torch.inference_mode():
                return self.model(x).float().cpu().numpy()
        b = min(k for k in self.graphs if k >= n)
        g, x, y = self.graphs[b]
        with torch.inference_mode():
            x[:n].copy_(torch.from_numpy(x_np), non_blocking=False)
            g.replay()
            return y[:n].float().cpu().numpy()

    def execute(self, requests):
        xs = [input_array(r, "INPUT__0") for r in requests]
        sizes = [int(x.shape[0]) for x in xs]
        if self.arch == "sleep":
            end = time.perf_counter() + 0.003 + 0.0005 * sum(sizes)
            while time.perf_counter() < end:
                pass
            y = np.zeros((sum(sizes), 1000), dtype=np.float32)
        else:
            y = self._run(np.concatenate(xs))
        out, i = [], 0
        for n in sizes:
            out.append(pb_utils.InferenceResponse([output_tensor("OUTPUT__0", y[i:i + n])]))
            i += n
        return out
'''


#: which batch sizes each instance runs once at load (``--warm-sizes``): "pow2" (1, 2, 4,
#: ..., 64 and the max) or "all" (1 .. max batch)
WARM_SIZES = "pow2"
#: how each instance runs the model (``--execution``): "eager" (PyTorch launches every
#: kernel from Python) or "cuda-graphs" (one captured graph per padded size)
EXECUTION = "eager"


@dataclass(frozen=True)
class Variant:
    """One server configuration, loaded under its own model name."""

    instances: int
    window_us: int
    max_batch_size: int

    @property
    def name(self) -> str:
        return f"x{self.instances}_w{self.window_us}_b{self.max_batch_size}"

    def label(self) -> str:
        return f"w{self.window_us / 1000:g}ms b{self.max_batch_size} x{self.instances}"


#: the calibration configuration at each instance count (also measured on the grid)
CAL = {n: Variant(n, 2000, 64) for n in (1, 2, 4)}
#: (variant, rate fractions of 1 / T(1)) in the order measured
GRID: list[tuple[Variant, tuple[float, ...]]] = [
    (CAL[1], (0.3, 0.6, 1.0, 1.5, 2.2)),
    (CAL[2], (0.6, 1.5, 2.2)),
    (CAL[4], (0.6, 1.5, 2.2)),
    (Variant(1, 0, 8), (0.3, 1.0, 2.2)),
    (Variant(1, 500, 32), (0.6, 1.5)),
    (Variant(1, 5000, 64), (0.6, 1.5, 2.2)),
    (Variant(2, 0, 32), (0.6, 1.0, 2.2)),
    (Variant(1, 1000, 2), (0.6, 1.0, 1.5)),
    (Variant(2, 5000, 8), (1.0, 1.5)),
    (Variant(4, 500, 16), (1.0, 2.2)),
    (Variant(1, 2000, 16), (1.0, 2.2)),
]
#: ``--grid small``: for a model whose T(1) is two to three times longer (the same number
#: of requests per measurement takes that much longer at its lower rates)
GRID_SMALL: list[tuple[Variant, tuple[float, ...]]] = [
    (CAL[1], (0.4, 1.0, 1.6, 2.4)),
    (CAL[2], (0.6, 1.6, 2.4)),
    (CAL[4], (1.0, 2.4)),
    (Variant(1, 0, 8), (0.6, 1.6)),
    (Variant(1, 5000, 64), (1.0, 2.4)),
    (Variant(2, 0, 32), (1.0, 2.4)),
    (Variant(1, 1000, 2), (1.0,)),
    (Variant(4, 500, 16), (1.6,)),
]
#: measured again late in the run: (variant name, rate fraction)
AA = [(CAL[1].name, 1.0), (CAL[2].name, 1.5), (CAL[4].name, 1.5), ("x1_w0_b8", 1.0),
      ("x1_w5000_b64", 0.6), ("x2_w0_b32", 1.0)]
AA_SMALL = [(CAL[1].name, 1.6), (CAL[2].name, 1.6), ("x1_w0_b8", 1.6)]
#: ``--grid holdout``: configurations no predictor was developed on (3 instances, windows
#: 1 and 3 ms, max batch 4/16/32 with other windows), for a model none was developed on
GRID_HOLDOUT: list[tuple[Variant, tuple[float, ...]]] = [
    (CAL[1], (0.3, 0.8, 1.3, 2.0)),
    (CAL[2], (1.0, 2.0)),
    (CAL[4], (1.3,)),
    (Variant(1, 1000, 32), (0.5, 1.2, 2.0)),
    (Variant(3, 1000, 32), (0.8, 2.0)),
    (Variant(2, 500, 64), (0.5, 1.3, 2.4)),
    (Variant(1, 3000, 16), (0.4, 1.3)),
    (Variant(3, 0, 16), (1.0, 2.4)),
    (Variant(2, 2000, 4), (0.8, 1.6)),
    (Variant(1, 0, 64), (0.5, 1.0, 1.8)),
]
AA_HOLDOUT = [(CAL[1].name, 1.3), (CAL[2].name, 2.0), (CAL[4].name, 1.3),
              ("x1_w1000_b32", 1.2), ("x2_w500_b64", 1.3)]
#: ``--grid holdout2``: windows, max batch sizes and instance counts of no other grid
#: (0.25, 1.5 and 4 ms; 8, 12, 24 and 48; 3 instances beside 1, 2 and 4), every
#: measurement taken twice (:data:`AA_ALL`)
GRID_HOLDOUT2: list[tuple[Variant, tuple[float, ...]]] = [
    (CAL[1], (0.5, 1.0, 1.8)),
    (CAL[4], (1.0, 2.0)),
    (Variant(1, 1500, 24), (0.6, 1.4)),
    (Variant(2, 250, 48), (0.7, 1.5, 2.3)),
    (Variant(3, 4000, 8), (0.9, 1.9)),
    (Variant(4, 0, 12), (0.8, 2.1)),
    (Variant(1, 250, 8), (0.6, 1.2)),
    (Variant(2, 1500, 16), (1.0, 1.9)),
    (Variant(3, 500, 48), (1.3, 2.4)),
]
#: every measurement of the grid taken again, in the same order, after the whole grid:
#: each configuration's own A/A spread, minutes apart (the issue's per-configuration
#: tolerance: "within 10%, or within that configuration's A/A spread")
AA_ALL = "all"
#: ``--grid holdout3``: windows, max batch sizes and instance pairings of no other grid
#: (0.75 and 3 ms; 6, 10, 20, 24 and 40), every measurement taken twice
GRID_HOLDOUT3: list[tuple[Variant, tuple[float, ...]]] = [
    (CAL[1], (0.6, 1.2, 2.0)),
    (CAL[4], (0.9, 1.8)),
    (Variant(1, 750, 20), (0.7, 1.6)),
    (Variant(2, 3000, 40), (0.8, 2.2)),
    (Variant(3, 0, 6), (1.0, 2.0)),
    (Variant(4, 750, 24), (0.6, 1.5)),
    (Variant(2, 0, 10), (1.2, 2.4)),
    (Variant(3, 3000, 40), (0.9,)),
]
GRIDS: dict[str, tuple[list[tuple[Variant, tuple[float, ...]]], Any]] = {
    "full": (GRID, AA), "small": (GRID_SMALL, AA_SMALL),
    "holdout": (GRID_HOLDOUT, AA_HOLDOUT), "holdout2": (GRID_HOLDOUT2, AA_ALL),
    "holdout3": (GRID_HOLDOUT3, AA_ALL)}


# ----------------------------------------------------------------------------- record


def model_config(name: str, arch: str, v: Variant, kind: str = "KIND_GPU") -> dict:
    """Triton's config JSON of one variant (``kind`` KIND_GPU: on GPU 0)."""
    group: dict[str, Any] = {"count": v.instances, "kind": kind}
    if kind == "KIND_GPU":
        group["gpus"] = [0]
    return {"name": name, "backend": "python", "max_batch_size": v.max_batch_size,
            "input": [{"name": "INPUT__0", "data_type": "TYPE_FP16", "dims": [3, 224, 224]}],
            "output": [{"name": "OUTPUT__0", "data_type": "TYPE_FP32", "dims": [1000]}],
            "instance_group": [group],
            "dynamic_batching": {"max_queue_delay_microseconds": v.window_us},
            "parameters": {"arch": {"string_value": arch},
                           "warm_sizes": {"string_value": WARM_SIZES},
                           "execution": {"string_value": EXECUTION}}}


def stats_delta(before: dict, after: dict) -> dict:
    """Triton statistics delta: counts, queue/compute means (ms) and per-batch-size
    ``[executions, total compute ms]`` (compute input + infer + output)."""
    b, a = before["model_stats"][0], after["model_stats"][0]

    def d(key: str) -> tuple[int, float]:
        x, y = a["inference_stats"][key], b["inference_stats"][key]
        return x["count"] - y["count"], (x["ns"] - y["ns"]) / 1e6

    bb = {s["batch_size"]: s for s in b.get("batch_stats", [])}
    batches: dict[str, list] = {}
    for s in a.get("batch_stats", []):
        o = bb.get(s["batch_size"])
        n = s["compute_infer"]["count"] - (o["compute_infer"]["count"] if o else 0)
        ms = sum((s[k]["ns"] - (o[k]["ns"] if o else 0)) / 1e6
                 for k in ("compute_input", "compute_infer", "compute_output"))
        if n > 0:
            batches[str(int(s["batch_size"]))] = [int(n), float(ms)]
    inf = a["inference_count"] - b["inference_count"]
    ex = a["execution_count"] - b["execution_count"]
    q_n, q_ms = d("queue")
    c_n = d("compute_infer")[0]
    c_ms = sum(d(k)[1] for k in ("compute_input", "compute_infer", "compute_output"))
    s_n, s_ms = d("success")
    f_n, _ = d("fail")
    return {"inferences": inf, "executions": ex, "mean_batch": inf / ex if ex else 0.0,
            "queue_mean_ms": q_ms / q_n if q_n else 0.0,
            "compute_mean_ms": c_ms / c_n if c_n else 0.0,
            "request_mean_ms": s_ms / s_n if s_n else 0.0, "failures": f_n,
            "batch_stats": batches}


class Recorder:
    """The record mode's state: the server, the output document, the deadline."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.t0 = time.monotonic()
        self.deadline = self.t0 + args.budget_s
        self.out = Path(args.out)
        self.work = Path(tempfile.mkdtemp(prefix="tune-gpu-"))
        self.grid, self.aa = GRIDS[args.grid]
        self.doc: dict[str, Any] = {
            "kind": "tune_gpu_record", "complete": False, "arch": args.arch,
            "host": platform.node(), "cpus": os.cpu_count(),
            "execution": getattr(args, "execution", "eager"),
            "requests_per_window": args.requests_per_window, "grid_name": args.grid,
            "grid": [
                {"variant": v.name, "instances": v.instances, "window_us": v.window_us,
                 "max_batch_size": v.max_batch_size, "rate_fractions": list(fr)}
                for v, fr in self.grid],
            "gpu": [], "events": [], "idle_gap": None, "calibrations": [], "rows": []}
        self.srv = None
        self.t1_ms = None

    # -- bookkeeping
    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def log(self, msg: str) -> None:
        print(f"[{self.elapsed():6.1f}s] {msg}", flush=True)
        self.doc["events"].append([round(self.elapsed(), 2), msg])

    def save(self) -> None:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.out.with_suffix(".part")
        tmp.write_text(json.dumps(self.doc) + "\n")
        tmp.replace(self.out)

    def gpu_state(self, when: str) -> None:
        try:
            q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,"
                                "clocks.mem,power.draw,temperature.gpu,utilization.gpu,"
                                "memory.used", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as exc:
            q = f"nvidia-smi failed: {exc}"
        self.doc["gpu"].append({"when": when, "t_s": round(self.elapsed(), 2), "query": q})

    # -- server
    def start(self) -> None:
        from trtcheck.testing.triton_server import TritonServer

        repo = self.work / "models"
        for v, _ in self.grid:
            d = repo / v.name / "1"
            d.mkdir(parents=True, exist_ok=True)
            (d / "model.py").write_text(MODEL_PY)
            (repo / v.name / "config.pbtxt").write_text(
                f'name: "{v.name}"\nbackend: "python"\nmax_batch_size: {v.max_batch_size}\n')
        self.srv = TritonServer(repo, explicit=True, log_path=self.work / "server.log",
                                extra_args=("--model-load-thread-count=12",))
        self.srv.start(timeout_s=120)
        self.log(f"tritonserver ready at {self.srv.http_url}")
        names = [v.name for v, _ in self.grid]

        def load(v: Variant) -> str:
            t = time.monotonic()
            self.srv.load(v.name, model_config(v.name, self.args.arch, v, self.args.instance_kind), timeout_s=240)
            return f"{v.name} loaded in {time.monotonic() - t:.1f} s"

        with concurrent.futures.ThreadPoolExecutor(6) as ex:
            for msg in ex.map(load, [v for v, _ in self.grid]):
                self.log(msg)
        self.doc["models_loaded"] = names
        self.check_outputs(CAL[1].name)

    def check_outputs(self, name: str) -> None:
        """One request of two different images through tritonclient: the answer has the
        right shape and finite values (the numpy-2 trap returns empty outputs), and its
        two rows differ (the model computed on the request's data, not on a misread
        input)."""
        import tritonclient.http as httpclient

        c = httpclient.InferenceServerClient(self.srv.http_url.removeprefix("http://"))
        x = np.random.default_rng(0).standard_normal((2, 3, 224, 224)).astype(np.float16)
        inp = httpclient.InferInput("INPUT__0", list(x.shape), "FP16")
        inp.set_data_from_numpy(x)
        r = c.infer(name, [inp]).as_numpy("OUTPUT__0")
        ok = r is not None and r.shape == (2, 1000) and bool(np.isfinite(r).all())
        differ = ok and self.args.arch != "sleep" and not np.allclose(r[0], r[1])
        self.doc["output_check"] = {"model": name, "shape": None if r is None else
                                    list(r.shape), "finite": ok, "rows_differ": differ,
                                    "first": None if r is None else r.ravel()[:4].tolist()}
        self.log(f"output check {name}: {self.doc['output_check']}")

    def stats(self, name: str) -> dict:
        with urllib.request.urlopen(f"{self.srv.http_url}/v2/models/{name}/stats",
                                    timeout=10) as r:
            return json.loads(r.read())

    # -- measurements
    def perf_analyzer(self, name: str, load: list[str], per_window: int,
                      timeout_s: float) -> dict:
        from trtcheck.testing.triton_server import load_fetch_triton

        ft = load_fetch_triton()
        exe = ft.fetch_perf_analyzer()
        export = self.work / "pa.json"
        csv = self.work / "pa.csv"
        export.unlink(missing_ok=True)
        csv.unlink(missing_ok=True)
        before = self.stats(name)
        cmd = [str(exe), "-m", name, "-u", f"127.0.0.1:{self.srv.http_port}", "-i", "http",
               "--async", *load, "--measurement-mode", "count_windows",
               "--measurement-request-count", str(per_window), "--max-trials", "3",
               "--stability-percentage", "999", "--max-threads", "64",
               "-f", str(csv), "--profile-export-file", str(export)]
        t = time.monotonic()
        try:
            proc = subprocess.run(cmd, env=ft.perf_analyzer_env(), capture_output=True,
                                  text=True, timeout=timeout_s)
            rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-800:]
        except subprocess.TimeoutExpired:
            rc, tail = 124, "timed out"
        wall = time.monotonic() - t
        after = self.stats(name)
        res: dict[str, Any] = {"returncode": rc, "wall_s": round(wall, 2),
                               "stats": stats_delta(before, after)}
        if not csv.exists() or not export.exists():
            res["error"] = tail
            return res
        head, vals = (csv.read_text().splitlines() + ["", ""])[:2]
        pa = dict(zip(head.split(","), vals.split(",")))

        def us(key: str) -> float | None:
            v = pa.get(key)
            return float(v) / 1e3 if v not in (None, "") else None

        res.update({"p50_ms": us("p50 latency"), "p90_ms": us("p90 latency"),
                    "p95_ms": us("p95 latency"), "p99_ms": us("p99 latency"),
                    "mean_ms": us("Avg latency"),
                    "throughput_queries_per_s": float(pa.get("Inferences/Second") or 0)})
        exp = json.loads(export.read_text())["experiments"]
        reqs = [r for e in exp for r in e["requests"]]
        lat = np.array([(r["response_timestamps"][-1] - r["timestamp"]) / 1e6 for r in reqs
                        if r.get("response_timestamps")])
        sends = np.sort(np.array([r["timestamp"] for r in reqs], dtype=np.float64)) / 1e9
        res["requests"] = int(len(reqs))
        res["answered"] = int(lat.size)
        res["achieved_rate_per_s"] = (float((len(sends) - 1) / (sends[-1] - sends[0]))
                                      if len(sends) > 1 else None)
        if lat.size:
            res["latency_quantiles_ms"] = [round(float(q), 4) for q in
                                           np.quantile(lat, np.linspace(0, 1, 101))]
        return res

    def measure(self, v: Variant, fraction: float, repeat: int) -> dict | None:
        rate = round(fraction * 1000.0 / self.t1_ms)
        per = self.args.requests_per_window
        est = 3 * per / rate + 3
        if est > self.left():
            self.log(f"skip {v.name} @{rate}/s (needs ~{est:.0f} s, {self.left():.0f} s left)")
            return None
        res = self.perf_analyzer(v.name, ["--request-rate-range", str(rate),
                                          "--request-distribution", "poisson"], per,
                                 timeout_s=min(max(3 * est, 30), max(self.left(), 10)))
        st = res["stats"]
        ach = res.get("achieved_rate_per_s") or rate
        keeps_up = (res.get("returncode") in (0, 2) and "p99_ms" in res
                    and res.get("throughput_queries_per_s", 0) >= 0.9 * ach)
        row = {"variant": v.name, "instances": v.instances, "window_us": v.window_us,
               "max_batch_size": v.max_batch_size, "rate_fraction": fraction,
               "rate_per_s": rate, "repeat": repeat, "t_s": round(self.elapsed(), 2),
               "keeps_up": bool(keeps_up), **res}
        self.doc["rows"].append(row)
        self.save()
        self.log(f"{v.label():18s} {rate:5d}/s rep{repeat}: batch {st['mean_batch']:.2f} "
                 f"P50 {res.get('p50_ms') or float('nan'):.2f} P99 "
                 f"{res.get('p99_ms') or float('nan'):.2f} ms thr "
                 f"{res.get('throughput_queries_per_s', 0):.0f} (ach {ach:.0f}) "
                 f"compute {st['compute_mean_ms']:.2f} ms n={res.get('requests')} "
                 f"rc={res['returncode']} {res['wall_s']:.1f}s")
        return row

    def idle_gap(self) -> None:
        """Closed loop at concurrency 1, 2 and 4 on the grid's one-instance configuration
        with the shortest window (none, in the older grids): batch-1 compute per execution
        in each (an execution after an idle gap runs slower); T(1) for the rate grid."""
        name = min((v for v, _ in self.grid if v.instances == 1),
                   key=lambda v: v.window_us).name
        out = {}
        for c in (1, 2, 4):
            res = self.perf_analyzer(name, ["--concurrency-range", str(c)], 300, timeout_s=60)
            if "error" in res:
                raise RuntimeError(f"perf_analyzer failed (rc {res['returncode']}): "
                                   f"{res['error']}")
            bs = res["stats"]["batch_stats"]
            out[str(c)] = {"p50_ms": res.get("p50_ms"), "p99_ms": res.get("p99_ms"),
                           "throughput_queries_per_s": res.get("throughput_queries_per_s"),
                           "batch_stats": bs, "mean_batch": res["stats"]["mean_batch"],
                           "compute_mean_ms": res["stats"]["compute_mean_ms"]}
            t1 = bs.get("1")
            self.log(f"idle gap: concurrency {c}: P50 {res.get('p50_ms')} ms, "
                     f"T(1) {t1[1] / t1[0] if t1 else float('nan'):.3f} ms "
                     f"({t1[0] if t1 else 0} executions), mean batch "
                     f"{res['stats']['mean_batch']:.2f}")
        self.doc["idle_gap"] = out
        t1 = out["2"]["batch_stats"].get("1") or out["1"]["batch_stats"].get("1")
        self.t1_ms = t1[1] / t1[0]
        self.doc["t1_ms_for_rates"] = self.t1_ms
        self.log(f"T(1) for the rate grid: {self.t1_ms:.3f} ms (1 / T(1) = "
                 f"{1000 / self.t1_ms:.0f} req/s)")
        self.save()

    def calibrate(self, v: Variant, design: str, load: str, duration_s: float,
                  client_processes: int = 1) -> None:
        """``trtcheck serve --url URL --model NAME --load LOAD -o live.json``."""
        est = duration_s + 8
        if est > self.left():
            self.log(f"skip calibration {design} on {v.name} ({self.left():.0f} s left)")
            return
        live = self.work / f"live-{v.name}-{design}.json"
        live.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "trtcheck", "serve", "--url", self.srv.http_url,
               "--model", v.name, "--load", load, "--duration-s", f"{duration_s:g}",
               "--client-processes", str(client_processes), "-o", str(live)]
        t = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=min(duration_s * 4 + 40, max(self.left(), 10)))
            rc, err = proc.returncode, proc.stderr[-800:]
        except subprocess.TimeoutExpired:
            rc, err = 124, "timed out"
        entry: dict[str, Any] = {"variant": v.name, "instances": v.instances,
                                 "window_us": v.window_us,
                                 "max_batch_size": v.max_batch_size, "design": design,
                                 "load": load, "duration_s": duration_s,
                                 "client_processes": client_processes,
                                 "t_s": round(self.elapsed(), 2), "returncode": rc,
                                 "wall_s": round(time.monotonic() - t, 2)}
        if live.exists():
            entry["live"] = json.loads(live.read_text())
        else:
            entry["error"] = err
        self.doc["calibrations"].append(entry)
        self.save()
        summary = ""
        try:
            c = entry["live"]["serve"]["configs"][0]
            summary = (f"P50 {c.get('p50_ms')} P99 {c.get('p99_ms')} mean batch "
                       f"{c.get('mean_batch_size')}")
        except (KeyError, IndexError, TypeError):
            summary = err[-300:] if rc else ""
        self.log(f"calibration {design} {v.name} {load}: rc={rc} "
                 f"{entry['wall_s']:.1f}s {summary}")

    def calibrations(self, n: int) -> None:
        v = CAL[n]
        rate = round(0.7 * 1000.0 / self.t1_ms)
        self.calibrate(v, "open", f"open:{rate}", 4.0)
        if n == 1:
            self.calibrate(v, "open-repeat", f"open:{rate}", 4.0)
        self.calibrate(v, "open-high", f"open:{round(2.2 * 1000.0 / self.t1_ms)}", 3.0,
                       client_processes=2)
        self.calibrate(v, "closed64", "closed:64:1500", 6.0)
        if self.left() > 20:  # the same closed loop from perf_analyzer's C++ client
            res = self.perf_analyzer(v.name, ["--concurrency-range", "64"], 500, timeout_s=60)
            res.pop("latency_quantiles_ms", None)
            res.update(variant=v.name, instances=v.instances, t_s=round(self.elapsed(), 2))
            self.doc.setdefault("closed64_perf_analyzer", []).append(res)
            bs = res["stats"]["batch_stats"]
            self.log(f"perf_analyzer closed 64 on {v.name}: mean batch "
                     f"{res['stats']['mean_batch']:.1f}, T(b) " + " ".join(
                         f"{b}:{t / n:.2f}({n})" for b, (n, t) in sorted(
                             bs.items(), key=lambda kv: int(kv[0])) if n >= 3))
            self.save()

    def run(self) -> None:
        self.gpu_state("start")
        self.start()
        self.save()
        self.idle_gap()
        variants = {v.name: v for v, _ in self.grid}
        for i, (v, fractions) in enumerate(self.grid):
            if v in CAL.values():
                self.calibrations(v.instances)
            for fr in fractions:
                row = self.measure(v, fr, 0)
                if row is not None and not row["keeps_up"]:
                    self.log(f"{v.name} fell behind at {row['rate_per_s']}/s: its higher "
                             "rates are skipped")
                    break
            if i == 5 and self.aa != AA_ALL:  # A/A of the first configurations
                for name, fr in self.aa[:3]:
                    self.measure(variants[name], fr, 1)
        if self.aa == AA_ALL:  # every measurement again, the grid's duration later
            first = [r for r in self.doc["rows"] if r["repeat"] == 0 and r["keeps_up"]]
            for r in first:
                self.measure(variants[r["variant"]], r["rate_fraction"], 1)
        else:
            for name, fr in self.aa[3:]:
                self.measure(variants[name], fr, 1)
        self.calibrate(CAL[1], "open-late", f"open:{round(0.7 * 1000.0 / self.t1_ms)}", 4.0)
        self.gpu_state("end")
        self.doc["complete"] = True
        self.doc["wall_s"] = round(self.elapsed(), 1)
        self.save()
        self.log(f"done: {len(self.doc['rows'])} measurements, "
                 f"{len(self.doc['calibrations'])} calibrations")

    def stop(self) -> None:
        if self.srv is not None:
            try:
                tail = self.srv.log_tail(60)
                self.doc["server_log_tail"] = tail
            finally:
                self.srv.stop()
            self.save()


class TuneRecorder(Recorder):
    """The ``tune-record`` mode: ``trtcheck tune`` against the GPU model at several rates,
    then its pick and the reference configurations (the best measured in an earlier
    record) measured with perf_analyzer in the same run."""

    def run(self) -> None:
        from trtcheck.testing.triton_server import TritonServer

        a = self.args
        known = {v.name: v for grid, _ in GRIDS.values() for v, _ in grid}
        refs = [known[n] for n in dict.fromkeys(a.references.split(",")) if n in known]
        self.doc.update(kind="tune_gpu_tune_record", rates=[float(r) for r in
                                                             a.rates.split(",")],
                        slo_p99_ms=a.slo_p99_ms, objective=a.objective,
                        max_instances=a.max_instances, references=[v.name for v in refs],
                        tunes=[], grid=[])
        self.gpu_state("start")
        repo = self.work / "models"
        start_cfg = Variant(1, 2000, 64)
        names = {a.model: start_cfg, **{v.name: v for v in refs}}
        for name, v in names.items():
            (repo / name / "1").mkdir(parents=True, exist_ok=True)
            (repo / name / "1" / "model.py").write_text(MODEL_PY)
            group = (f"instance_group [ {{ count: {v.instances} kind: {a.instance_kind}"
                     + (" gpus: [ 0 ]" if a.instance_kind == "KIND_GPU" else "") + " } ]\n")
            (repo / name / "config.pbtxt").write_text(
                f'name: "{name}"\nbackend: "python"\nmax_batch_size: {v.max_batch_size}\n'
                'input [ { name: "INPUT__0" data_type: TYPE_FP16 dims: [ 3, 224, 224 ] } ]\n'
                'output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1000 ] } ]\n'
                + group + f"dynamic_batching {{ max_queue_delay_microseconds: "
                f"{v.window_us} }}\n"
                f'parameters {{ key: "arch" value: {{ string_value: "{a.arch}" }} }}\n'
                f'parameters {{ key: "execution" value: {{ string_value: "{EXECUTION}" }} }}\n'
                # every measured reference runs each batch size once at load (as tune's
                # model_warmup does for the configurations it loads)
                + ('parameters { key: "warm_sizes" value: { string_value: "all" } }\n'
                   if name != a.model else ""))
        self.srv = TritonServer(repo, explicit=True, log_path=self.work / "server.log",
                                extra_args=("--model-load-thread-count=8",))
        self.srv.start(timeout_s=120)
        self.log(f"tritonserver ready at {self.srv.http_url}")
        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            for name, msg in zip(names, ex.map(
                    lambda n: (self.srv.load(n, timeout_s=240), n)[1], list(names))):
                self.log(f"{msg} loaded")
        self.check_outputs(a.model)
        self.t1_ms = 1.0  # rates are absolute here (fraction x 1000 / 1 ms = rate)
        if a.rate_fractions:
            # a model no record measured: rates and objective from its own T(1)
            t1 = self.measure_t1(a.model)
            self.doc["t1_ms_for_rates"] = t1
            self.doc["rates"] = [float(round(float(f) * 1000.0 / t1))
                                 for f in a.rate_fractions.split(",")]
            if a.slo_t1_multiple:
                self.doc["slo_p99_ms"] = round(a.slo_t1_multiple * t1, 1)
            self.log(f"T(1) {t1:.3f} ms: rates {self.doc['rates']}, P99 objective "
                     f"{self.doc['slo_p99_ms']} ms")
        self.save()
        for rate in self.doc["rates"]:
            self.tune_at(rate, refs)
        for entry, rate, todo in getattr(self, "_pending", []):  # A/B/A/B, later
            self.measure_all(entry, rate, todo, 1)
        self.gpu_state("end")
        self.doc["complete"] = True
        self.doc["wall_s"] = round(self.elapsed(), 1)
        self.save()
        self.log("done")

    def measure_t1(self, name: str) -> float:
        """Triton's mean compute time of batch 1 (ms) in a closed loop of 1 client on the
        start configuration (every execution follows a short idle gap: an upper value)."""
        res = self.perf_analyzer(name, ["--concurrency-range", "1"], 300, timeout_s=90)
        bs = res["stats"]["batch_stats"]
        if "1" not in bs:
            raise RuntimeError(f"no batch-1 executions to measure T(1): {res.get('error')}")
        return bs["1"][1] / bs["1"][0]

    def tune_at(self, rate: float, refs: list[Variant]) -> None:
        a = self.args
        if self.left() < 60:
            self.log(f"skip tune at {rate:g}/s ({self.left():.0f} s left)")
            return
        out = self.work / f"tune-{rate:g}.json"
        out.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "trtcheck", "tune", "--url", self.srv.http_url,
               "--model", a.model, "--arrival-rate", f"{rate:g}", "--objective", a.objective,
               "--max-instances", str(a.max_instances), "-o", str(out)]
        if self.doc["slo_p99_ms"]:
            cmd += ["--slo-p99-ms", f"{self.doc['slo_p99_ms']:g}"]
        t = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            stdout, stderr = proc.communicate(
                timeout=min(a.tune_timeout_s, max(self.left() - 20, 10)))
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            # Ctrl-C, as a user stops it: tune loads the original configuration back
            # (a kill would leave its last one loaded for the next rate's search)
            proc.send_signal(signal.SIGINT)
            try:
                stdout, stderr = proc.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr = proc.communicate()
            rc = 124
        wall = time.monotonic() - t
        if rc != 0:  # whatever the search left, the next one starts from the same config
            try:
                self.srv.load(a.model, timeout_s=240)
            except RuntimeError as exc:
                self.log(f"reloading {a.model} from its repository failed: {exc}")
        entry: dict[str, Any] = {"rate_per_s": rate, "returncode": rc,
                                 "wall_s": round(wall, 1), "command": cmd[2:],
                                 "stdout_tail": stdout[-3000:], "stderr_tail": stderr[-3000:],
                                 "t_s": round(self.elapsed(), 1), "measured": []}
        if out.exists():
            entry["tune_json"] = json.loads(out.read_text())
        self.doc["tunes"].append(entry)
        self.save()
        pick = (entry.get("tune_json") or {}).get("tune", {}).get("pick")
        self.log(f"tune at {rate:g}/s: rc={rc} {wall:.1f} s; pick "
                 + (f"w{pick['window_us'] / 1000:g}ms b{pick['max_batch_size']} "
                    f"x{pick['instances']}" if pick else "none")
                 + f"; stderr tail: {stderr[-400:]!r}")
        todo: list[tuple[str, Variant]] = []
        if pick:
            pv = Variant(int(pick["instances"]), int(round(pick["window_us"])),
                         int(pick["max_batch_size"]))
            same = next((v for v in refs if v == pv), None)
            if same is None:
                name = f"pick_{int(rate)}"
                try:
                    (self.work / "models" / name / "1").mkdir(parents=True, exist_ok=True)
                    (self.work / "models" / name / "1" / "model.py").write_text(MODEL_PY)
                    (self.work / "models" / name / "config.pbtxt").write_text(
                        f'name: "{name}"\nbackend: "python"\n')
                    self.srv.load(name, model_config(name, a.arch, pv, a.instance_kind),
                                  timeout_s=240)
                    todo.append(("pick", Variant(pv.instances, pv.window_us,
                                                 pv.max_batch_size)))
                    self._names = getattr(self, "_names", {})
                    self._names[pv] = name
                except RuntimeError as exc:
                    self.log(f"loading the pick failed: {exc}")
            else:
                todo.append(("pick", same))
        todo += [("reference", v) for v in refs]
        self.measure_all(entry, rate, todo, 0)
        self._pending = getattr(self, "_pending", []) + [(entry, rate, todo)]

    def measure_all(self, entry: dict, rate: float, todo: list, repeat: int) -> None:
        a = self.args
        for role, v in todo:
            name = getattr(self, "_names", {}).get(v, v.name) if role == "pick" else v.name
            if 3 * a.requests_per_window / rate + 3 > self.left() - 5:
                self.log(f"skip {role} {name} at {rate:g}/s ({self.left():.0f} s left)")
                continue
            res = self.perf_analyzer(name, ["--request-rate-range", f"{rate:g}",
                                            "--request-distribution", "poisson"],
                                     a.requests_per_window,
                                     timeout_s=3 * (3 * a.requests_per_window / rate + 3))
            res.pop("latency_quantiles_ms", None)
            res.update(role=role, model=name, instances=v.instances, window_us=v.window_us,
                       max_batch_size=v.max_batch_size, repeat=repeat,
                       t_s=round(self.elapsed(), 1))
            entry["measured"].append(res)
            self.save()
            self.log(f"  {role:9s} {v.label():18s} at {rate:g}/s rep{repeat}: P50 "
                     f"{res.get('p50_ms')} P99 {res.get('p99_ms')} ms, thr "
                     f"{res.get('throughput_queries_per_s', 0):.0f}, mean batch "
                     f"{res['stats']['mean_batch']:.2f}")


def record(args: argparse.Namespace) -> int:
    rec = TuneRecorder(args) if args.mode == "tune-record" else Recorder(args)
    try:
        rec.run()
    except Exception as exc:  # keep what was measured, say what broke
        import traceback

        rec.doc["error"] = f"{type(exc).__name__}: {exc}"
        rec.doc["traceback"] = traceback.format_exc()[-3000:]
        rec.log(f"error: {rec.doc['error']}")
        rec.save()
        rec.stop()
        return 4
    rec.stop()
    return 0


# ----------------------------------------------------------------------------- evaluate


def load_record(path: Path) -> dict:
    """A recorded file, plain or xz-compressed JSON."""
    raw = path.read_bytes()
    if path.suffix == ".xz":
        raw = lzma.decompress(raw)
    return json.loads(raw)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("record", help="measure on the GPU machine (starts tritonserver)")
    r.add_argument("--arch", default="resnet18",
                   help="torchvision model name (resnet18, resnet50, mobilenet_v3_large)")
    r.add_argument("--instance-kind", choices=["KIND_GPU", "KIND_CPU"], default="KIND_GPU",
                   help="Triton instance kind [KIND_GPU, gpus [0]]; KIND_CPU with --arch sleep "
                   "tries the script out on a machine without a GPU")
    r.add_argument("--grid", choices=sorted(GRIDS), default="full",
                   help="full: 11 configurations, 32 rates; small: 8 configurations, 17 rates, "
                   "for a model with a T(1) two to three times longer; holdout: 10 "
                   "configurations, 24 rates, none of them in the other grids but the "
                   "calibration ones; holdout2: 9 configurations, 20 rates, again none of "
                   "the others', every measurement taken twice; holdout3: 8 configurations, "
                   "16 rates, again none of the others', every measurement taken twice "
                   "[full]")
    r.add_argument("--warm-sizes", choices=["pow2", "all"], default="pow2",
                   help="batch sizes each instance runs once at load: powers of two and "
                   "the max, or every size up to the max (a model whose every new shape "
                   "costs a one-time stall) [pow2]")
    r.add_argument("--out", required=True, help="the record file (JSON)")
    r.add_argument("--execution", choices=["eager", "cuda-graphs"], default="eager",
                   help="eager PyTorch (every kernel launched from Python: CPU-bound at "
                   "small batches) or one CUDA graph per padded batch size (GPU-bound, as an "
                   "engine runs) [eager]")
    r.add_argument("--budget-s", type=float, default=520.0,
                   help="wall-clock bound of the whole run, s [520]")
    r.add_argument("--requests-per-window", type=int, default=700,
                   help="perf_analyzer count window (3 windows are kept) [700]")
    t = sub.add_parser("tune-record", help="trtcheck tune on the GPU machine, its picks and "
                       "the reference configurations measured with perf_analyzer")
    t.add_argument("--arch", default="resnet18", help="torchvision model name [resnet18]")
    t.add_argument("--model", default="resnet18", help="the served model's name [resnet18]")
    t.add_argument("--rates", default="191,478,701", help="arrival rates, req/s")
    t.add_argument("--slo-p99-ms", type=float, default=20.0, help="P99 objective, ms [20]")
    t.add_argument("--rate-fractions", default=None,
                   help="rates as fractions of 1 / T(1), T(1) measured first on the start "
                   "configuration (replaces --rates; for a model no record measured)")
    t.add_argument("--slo-t1-multiple", type=float, default=None,
                   help="with --rate-fractions: the P99 objective as this multiple of T(1)")
    t.add_argument("--objective", default="p99", help="trtcheck tune --objective [p99]")
    t.add_argument("--max-instances", type=int, default=4, help="[4]")
    t.add_argument("--references", default="x4_w2000_b64,x2_w2000_b64,x4_w500_b16",
                   help="grid variants (of any --grid) measured beside each pick (the best "
                   "of an earlier record)")
    t.add_argument("--tune-timeout-s", type=float, default=170.0,
                   help="bound of one trtcheck tune, s [170]")
    t.add_argument("--instance-kind", choices=["KIND_GPU", "KIND_CPU"], default="KIND_GPU")
    t.add_argument("--out", required=True, help="the record file (JSON)")
    t.add_argument("--execution", choices=["eager", "cuda-graphs"], default="eager",
                   help="as for record [eager]")
    t.add_argument("--budget-s", type=float, default=540.0, help="wall-clock bound, s [540]")
    t.add_argument("--requests-per-window", type=int, default=700,
                   help="perf_analyzer count window (3 windows are kept) [700]")
    t.add_argument("--grid", default="full", help=argparse.SUPPRESS)
    e = sub.add_parser("evaluate", help="predictions against the record (no server)")
    e.add_argument("records", nargs="+", type=Path, help="recorded files (.json or .json.xz)")
    add_machine_argument(e, default="h200-host")
    e.add_argument("--tune", type=Path, nargs="*", default=[],
                   help="tune-record files (.json or .json.xz): tune's picks and predictions")
    e.add_argument("--out", default=None, help="result file [default: the naming rule]")
    args = ap.parse_args()
    if args.mode in ("record", "tune-record"):
        global WARM_SIZES
        # tune-record: the pick, like the references, runs every batch size once at load
        WARM_SIZES = getattr(args, "warm_sizes", "all")
        global EXECUTION
        EXECUTION = args.execution
        return record(args)
    return evaluate(args)


#: the calibration each predictor takes: (name, description)
PREDICTORS = [
    ("one-calibration", "the 1-instance calibration run (open load at 0.7 / T(1), w2ms b64) "
     "predicts every configuration, as docs/advise.md says"),
    ("per-instance-count", "the calibration run at the row's own instance count (the same "
     "open load) predicts the rows of that count"),
    ("one-calibration-late", "as one-calibration, from the same run repeated at the end of "
     "the record (minutes later: run-to-run drift)"),
    ("tune-design", "trtcheck tune's predictor (trtcheck.analyze.tune_plan) fed with the "
     "recorded runs of its design: a closed loop of 64 clients at 1 instance (w2ms here, "
     "tune uses 1 ms), the 1-instance open run nearest the row's rate (0.7 / T(1) with its "
     "repeat, or 2.2 / T(1)) and the same open load at 4 instances; drift from the repeat "
     "pair; intervals for the measured run's request count, no lower end below the latency "
     "floor of those runs"),
]


def _tune_design_predictor(rec: dict, work: Path):
    """``predict(row) -> TunePrediction`` by :mod:`trtcheck.analyze.tune_plan` from the
    recorded runs that match ``trtcheck tune``'s design (see :data:`PREDICTORS`)."""
    import math

    from trtcheck.analyze import tune_plan as tp
    from trtcheck.analyze.advice import Candidate
    from trtcheck.results import load_results

    first = {(x["variant"], x["design"]): set(x["first_sizes"])
             for x in cold_calibrations(rec)}

    def serve_of(entry: dict):
        # the record's runs with first_since_load as the live tool records it now
        doc = json.loads(json.dumps(entry["live"]))
        new = first.get((entry["variant"], entry["design"]), set())
        for rep in doc["serve"]["configs"][0]["repeats"]:
            for b in (rep.get("server_stats") or {}).get("batch_stats") or []:
                b["first_since_load"] = int(b["batch_size"]) in new
        path = work / f"tp-{entry['variant']}-{entry['design']}.json"
        path.write_text(json.dumps(doc))
        return load_results(path).serve

    top_n = max(n for n in (1, 2, 4) if _calibration(rec, n, "open"))
    closed = [serve_of(_calibration(rec, 1, "closed64"))]
    base, rep = serve_of(_calibration(rec, 1, "open")), _calibration(rec, 1, "open-repeat")
    reps = list(base.configs[0].repeats)
    if rep is not None:
        reps += list(serve_of(rep).configs[0].repeats)
    low = base.model_copy(update={"configs": [base.configs[0].model_copy(
        update={"repeats": reps})]})
    dr50, dr99 = tp.repeat_drifts(reps)
    d50, d99 = dr50.sd_log, dr99.sd_log
    # the drift comes from the 1-instance calibration configuration at its open rate
    cal = CAL[1]
    drift_at = (Candidate(float(cal.window_us), cal.max_batch_size, 1),
                float(_calibration(rec, 1, "open")["load"].split(":")[1]))
    searches = {}
    floors = {}  # as tune: no interval starts below what any of its runs bounds
    for design in ("open", "open-high"):
        e = _calibration(rec, 1, design)
        top = _calibration(rec, top_n, design)
        if e is None:
            continue
        runs = [*closed, low if design == "open" else serve_of(e)]
        open_idx = len(runs) - 1
        if top is not None:  # the target rate at the largest instance count
            runs.append(serve_of(top))
        rate = float(e["load"].split(":")[1])
        curves = tp.instance_curves(runs, 4)
        searches[rate] = (curves, *tp.queueing_and_stalls(runs, open_idx, curves=curves))
        floors[rate] = tp.lowest_latency_floor_ms(runs)

    def predict(row: dict):
        rate = float(row.get("achieved_rate_per_s") or row["rate_per_s"])
        cal_rate = min(searches, key=lambda r: abs(math.log(r / rate)))
        curves, q, stall = searches[cal_rate]
        floor = floors[cal_rate]
        srch = tp.Search(q, curves, d50, d99, rate, int(row.get("requests") or 2000), 64, 4,
                         drift_dof=dr99.dof, stall=stall,
                         floor_ms=floor[0] if floor is not None else 0.0,
                         drift_at=drift_at)
        return tp.predict_one(srch, Candidate(float(row["window_us"]),
                                              int(row["max_batch_size"]),
                                              int(row["instances"])))

    any_curves = next(iter(searches.values()))[0]
    info = {"variant": f"closed64 x1 + open x1 + open x{top_n}", "design": "tune-design",
            "load": "/".join(f"open:{r:g}" for r in searches), "t_s": 0.0,
            "curve_ms": [[int(b), round(float(t), 4)] for b, t in any_curves.curve_1.points()],
            "per_batch_overhead_ms": None, "contention_factors": {
                str(k): round(v, 4) for k, v in any_curves.factors.items()},
            "drift_p50_rel": d50, "drift_p99_rel": d99, "drift_dof": dr99.dof,
            "stalls": {f"open:{r:g}": {"per_execution": round(v[2].per_execution, 5),
                                       "size_ms": round(v[2].size_ms, 3),
                                       "measured_share": round(v[2].measured_share, 4)}
                       for r, v in searches.items()},
            # the search's model on its calibration run (after the re-match, before the
            # stall split)
            "self_check": {f"open:{r:g}": {k: round(float(v[1].check[k]), 3) for k in (
                "p50_ms", "measured_p50_ms", "p99_ms", "measured_p99_ms")}
                for r, v in searches.items()}}
    return predict, info


def _calibration(rec: dict, instances: int, design: str) -> dict | None:
    for c in rec["calibrations"]:
        if c["instances"] == instances and c["design"] == design and "live" in c:
            return c
    return None


def _predictor(entry: dict, work: Path):
    """``predict(row) -> SimPrediction`` from one recorded calibration run, exactly as
    ``trtcheck advise --from live.json --arrival-rate R --window-ms W --max-batch B
    --instances N`` computes its ``what_if`` (same functions, in process)."""
    from trtcheck.analyze.advice import Candidate, build_request, inputs_from_live, what_if
    from trtcheck.results import load_results

    live = work / f"live-{entry['variant']}-{entry['design']}.json"
    live.write_text(json.dumps(entry["live"]))
    curve, measured = inputs_from_live(load_results(live), source=str(live))

    def predict(row: dict):
        rate = float(row.get("achieved_rate_per_s") or row["rate_per_s"])
        req = build_request(curve, measured, rate_per_s=rate, instances=[row["instances"]])
        return what_if(req, [Candidate(float(row["window_us"]), int(row["max_batch_size"]),
                                       int(row["instances"]))])[0]

    cal = measured.get("live_calibration")
    info = {"variant": entry["variant"], "design": entry["design"], "load": entry["load"],
            "t_s": entry["t_s"], "curve_ms": [[int(b), round(float(t), 4)]
                                              for b, t in curve.points()],
            "per_batch_overhead_ms": getattr(cal, "per_batch_overhead_ms", None),
            "calibrated_instances": measured.get("calibrated_instances"),
            "run_to_run_rel": measured.get("run_to_run_rel")}
    return predict, info


def _aa_spread(rows: list[dict]) -> dict[tuple, dict[str, float]]:
    """Per (variant, rate) measured twice: the relative A/A spread ``|a - b| / mean`` of
    mean batch, P50 and P99."""
    by: dict[tuple, list[dict]] = {}
    for r in rows:
        by.setdefault((r["variant"], r["rate_per_s"]), []).append(r)
    out = {}
    for key, rs in by.items():
        if len(rs) < 2:
            continue
        a, b = rs[0], rs[1]
        vals = {"mean_batch": (a["stats"]["mean_batch"], b["stats"]["mean_batch"]),
                "p50_ms": (a["p50_ms"], b["p50_ms"]), "p99_ms": (a["p99_ms"], b["p99_ms"])}
        out[key] = {k: abs(x - y) / (0.5 * (x + y)) for k, (x, y) in vals.items()
                    if x is not None and y is not None and x + y > 0}
    return out


def interval_choice(models: list[dict], name: str = "tune-design") -> dict[str, Any]:
    """The choice on the interval against the choice on the point, on the grid: at each
    rate of each record where 3 or more configurations kept up, the one with the lowest
    upper end of predictor ``name``'s P99 interval (as ``trtcheck tune`` and ``advise``
    from a live calibration choose) and the one with the lowest P99 point, each against
    the lowest P99 measured at that rate (the first measurement of each configuration).
    Returns the counts within 10% of the best and one row per rate."""
    out: dict[str, Any] = {"predictor": name, "rates": 0, "upper_end_within_10pct": 0,
                           "point_within_10pct": 0, "rows": []}
    for m in models:
        rows = (m["predictors"].get(name) or {}).get("rows")
        if not isinstance(rows, list):
            continue
        by: dict[float, dict[str, dict]] = {}
        for x in rows:
            if x["p99_interval_ms"] and x["predicted"]["p99_ms"] is not None:
                by.setdefault(x["rate_per_s"], {}).setdefault(x["variant"], x)
        for rate, cfgs in sorted(by.items()):
            xs = list(cfgs.values())
            if len(xs) < 3:
                continue
            best = min(x["measured"]["p99_ms"] for x in xs)
            up = min(xs, key=lambda x: x["p99_interval_ms"][1])
            pt = min(xs, key=lambda x: x["predicted"]["p99_ms"])
            gap_up = up["measured"]["p99_ms"] / best - 1.0
            gap_pt = pt["measured"]["p99_ms"] / best - 1.0
            out["rates"] += 1
            out["upper_end_within_10pct"] += gap_up <= 0.10
            out["point_within_10pct"] += gap_pt <= 0.10
            out["rows"].append({"arch": m["arch"], "rate_per_s": rate,
                                "configurations": len(xs), "upper_end_pick": up["config"],
                                "upper_end_gap": gap_up, "point_pick": pt["config"],
                                "point_gap": gap_pt})
    return out


def aa_agreement(models: list[dict]) -> dict[str, Any]:
    """The noise floor over every configuration measured twice (``aa_spread`` of each
    evaluated model): how many second measurements fall within the goal of the first
    (``max / min - 1`` within :data:`GOALS`; a spread ``s = |a - b| / mean`` is that
    when ``s <= 2 g / (2 + g)``). No predictor can be asked to do better on a
    measurement than the measurement does on itself."""
    pairs = [x for m in models for x in m["aa_spread"]]
    out: dict[str, Any] = {"pairs": len(pairs)}
    for k, g in GOALS.items():
        lim = 2 * g / (2 + g)
        out[k] = sum(1 for x in pairs if k in x and x[k] <= lim + 1e-12)
    return out


def evaluate_record(rec: dict, work: Path) -> dict:
    """Every predictor of :data:`PREDICTORS` against one record's measured rows."""
    rows = [r for r in rec["rows"] if r.get("p50_ms") is not None and r.get("keeps_up")]
    dropped = [f"{r['variant']}@{r['rate_per_s']}" for r in rec["rows"] if r not in rows]
    aa = _aa_spread(rows)
    out: dict[str, Any] = {"arch": rec["arch"], "t1_ms_for_rates": rec.get("t1_ms_for_rates"),
                           "measured_rows": len(rows), "not_kept_up": dropped,
                           "aa_spread": [{"variant": k[0], "rate_per_s": k[1], **v}
                                         for k, v in aa.items()], "predictors": {}}
    for name, _ in PREDICTORS:
        preds: dict[int, Any] = {}
        infos = []
        if name == "tune-design":
            try:
                pr_fn, info = _tune_design_predictor(rec, work)
            except (ImportError, StopIteration, ValueError) as exc:  # no tune_plan here
                out["predictors"][name] = {"error": str(exc), "rows": [], "configurations": 0,
                                           "within_goal": {k: 0 for k in GOALS},
                                           "with_interval": 0, "inside_interval": None,
                                           "calibrations": []}
                continue
            infos.append(info)
            preds = {n: pr_fn for n in {r["instances"] for r in rows}}
        for n in sorted({r["instances"] for r in rows} if name != "tune-design" else []):
            design = "open-late" if name == "one-calibration-late" else "open"
            entry = _calibration(rec, 1 if name != "per-instance-count" else n, design)
            if entry is None:
                continue
            if name != "per-instance-count" and preds:
                preds[n] = preds[next(iter(preds))]
                continue
            preds[n], info = _predictor(entry, work)
            infos.append(info)
        res_rows = []
        for r in rows:
            if r["instances"] not in preds:
                continue
            p = preds[r["instances"]](r)
            meas = {"mean_batch": r["stats"]["mean_batch"], "p50_ms": r["p50_ms"],
                    "p99_ms": r["p99_ms"]}
            pred = {"mean_batch": p.mean_batch if p.stable else None,
                    "p50_ms": p.p50_ms if p.stable else None,
                    "p99_ms": p.p99_ms if p.stable else None}
            spread = aa.get((r["variant"], r["rate_per_s"]), {})
            tol = {k: max(g, spread.get(k, 0.0)) for k, g in GOALS.items()}
            rel = {k: None if pred[k] is None else pred[k] / meas[k] - 1.0 for k in GOALS}
            within = {k: rel[k] is not None and abs(rel[k]) <= tol[k] for k in GOALS}
            strict = {k: rel[k] is not None and abs(rel[k]) <= GOALS[k] for k in GOALS}
            i50 = getattr(p, "p50_interval_ms", None)
            i99 = getattr(p, "p99_interval_ms", None)
            if i50 is None and getattr(p, "p50", None) is not None:  # a TunePrediction
                i50 = [p.p50.lo_ms, p.p50.hi_ms]
                i99 = [p.p99.lo_ms, p.p99.hi_ms] if p.p99 is not None else None
            inside = None
            if i50 and i99:
                inside = {"p50_ms": i50[0] <= meas["p50_ms"] <= i50[1],
                          "p99_ms": i99[0] <= meas["p99_ms"] <= i99[1]}
            res_rows.append({
                "config": f"{r['rate_per_s']}/s w{r['window_us'] / 1000:g}ms "
                          f"b{r['max_batch_size']} x{r['instances']}"
                          + (f" rep{r['repeat']}" if r["repeat"] else ""),
                "variant": r["variant"], "instances": r["instances"],
                "rate_per_s": r["rate_per_s"],
                "achieved_rate_per_s": r.get("achieved_rate_per_s"),
                "measured": meas, "predicted": pred, "rel_error": rel, "tolerance": tol,
                "within_goal": within, "within_goal_strict": strict,
                "p50_interval_ms": i50, "p99_interval_ms": i99,
                "inside_interval": inside,
                "contention_factor": getattr(p, "contention_factor", None)})
        n = len(res_rows)
        hits = {k: sum(x["within_goal"][k] for x in res_rows) for k in GOALS}
        hits_strict = {k: sum(x["within_goal_strict"][k] for x in res_rows) for k in GOALS}
        with_iv = [x for x in res_rows if x["inside_interval"] is not None]
        cover = ({k: sum(x["inside_interval"][k] for x in with_iv) for k in ("p50_ms", "p99_ms")}
                 if with_iv else None)
        out["predictors"][name] = {"calibrations": infos, "rows": res_rows,
                                   "configurations": n, "within_goal": hits,
                                   "within_goal_strict": hits_strict,
                                   "with_interval": len(with_iv), "inside_interval": cover}
    return out


def _mean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return float(np.mean(xs)) if xs else None


def evaluate_tune(tr: dict, truth: dict | None, work: Path | None = None) -> dict:
    """A ``tune-record`` file: per rate, tune's pick against the best reference measured
    in the same run (perf_analyzer, mean over the A/B repeats), the live runs and the wall
    time; and tune's predictions of every configuration that the ground-truth record
    ``truth`` measured at the same rate (within 1%), with their intervals."""
    out: dict[str, Any] = {"rates": [], "predictions": []}
    gt_rows = [r for r in (truth or {}).get("rows", [])
               if r.get("p50_ms") is not None and r.get("keeps_up")]
    aa = _aa_spread(gt_rows)
    for t in tr["tunes"]:
        rate = t["rate_per_s"]
        tj = (t.get("tune_json") or {}).get("tune") or {}
        pick = tj.get("pick")
        by: dict[tuple, list[dict]] = {}
        for m in t["measured"]:
            if m.get("p99_ms") is not None:
                by.setdefault((m["role"], m["instances"], m["window_us"],
                               m["max_batch_size"]), []).append(m)
        meas = [{"role": k[0], "config": f"w{k[2] / 1000:g}ms b{k[3]} x{k[1]}",
                 "instances": k[1], "window_us": k[2], "max_batch_size": k[3],
                 "p50_ms": _mean([m["p50_ms"] for m in v]),
                 "p99_ms": _mean([m["p99_ms"] for m in v]),
                 "p99_each_ms": [m["p99_ms"] for m in v],
                 "throughput_queries_per_s": _mean([m["throughput_queries_per_s"]
                                                    for m in v]),
                 "keeps_up": all(m["throughput_queries_per_s"] >= 0.9 * rate for m in v),
                 "repeats": len(v)} for k, v in by.items()]
        ok = [m for m in meas if m["keeps_up"] and (not tr.get("slo_p99_ms")
                                                     or m["p99_ms"] <= tr["slo_p99_ms"])]
        best = min(ok, key=lambda m: m["p99_ms"]) if ok else None
        pm = next((m for m in meas if m["role"] == "pick"), None)
        gt_at = [r for r in gt_rows if abs(r["rate_per_s"] - rate) <= 0.01 * rate]
        gt_best = min(gt_at, key=lambda r: r["p99_ms"]) if gt_at else None
        entry = {"rate_per_s": rate, "returncode": t["returncode"], "wall_s": t["wall_s"],
                 "live_runs": tj.get("live_runs"), "tune_wall_s": tj.get("wall_s"),
                 "restored": tj.get("restored"),
                 "pick": None if not pick else {
                     "config": f"w{pick['window_us'] / 1000:g}ms b{pick['max_batch_size']} "
                               f"x{pick['instances']}",
                     "predicted_p50_ms": pick["predicted"].get("p50_ms"),
                     "predicted_p99_ms": pick["predicted"].get("p99_ms"),
                     "predicted_p99_interval_ms": [pick["predicted"]["p99"]["lo_ms"],
                                                   pick["predicted"]["p99"]["hi_ms"]]
                     if pick["predicted"].get("p99") else None,
                     "tune_measured": pick.get("measured")},
                 "measured": meas, "best_measured": best, "pick_measured": pm,
                 "pick_p99_vs_best": (pm["p99_ms"] / best["p99_ms"] - 1.0
                                      if pm and best else None),
                 "ground_truth_best": None if not gt_best else {
                     "config": f"w{gt_best['window_us'] / 1000:g}ms "
                               f"b{gt_best['max_batch_size']} x{gt_best['instances']}",
                     "p99_ms": gt_best["p99_ms"], "p50_ms": gt_best["p50_ms"]},
                 "stderr_tail": t.get("stderr_tail", "")[-600:]}
        entry["within_10pct_of_best"] = (entry["pick_p99_vs_best"] is not None
                                         and entry["pick_p99_vs_best"] <= 0.10)
        out["rates"].append(entry)
        preds = {(round(p["window_us"]), p["max_batch_size"], p["instances"]): p
                 for p in tj.get("predictions", [])}
        same_run = []
        for m in meas:  # tune's predictions against perf_analyzer in the same run
            p = preds.get((round(m["window_us"]), m["max_batch_size"], m["instances"]))
            if p is None or not p.get("stable"):
                continue
            row = {"rate_per_s": rate, "role": m["role"], "config": m["config"]}
            for k in ("p50_ms", "p99_ms"):
                iv = p.get(k[:3])
                row[k] = {"measured": m[k], "predicted": p.get(k),
                          "rel_error": p[k] / m[k] - 1.0 if p.get(k) else None,
                          "interval": [iv["lo_ms"], iv["hi_ms"]] if iv else None,
                          "inside": bool(iv and iv["lo_ms"] <= m[k] <= iv["hi_ms"])}
            same_run.append(row)
        entry["same_run_predictions"] = same_run
        if t.get("tune_json") and work is not None and t["returncode"] == 0:
            # a search that ended in an error (rc 2: its calibration refused) has no
            # first round to replay
            rp = repredict_tune(t["tune_json"], meas, rate, tr.get("objective") or "p99",
                                tr.get("slo_p99_ms") or None, work)
            if rp is not None and rp["pick"] is not None and best is not None:
                mp = rp["pick"]["measured_p99_ms"]
                rp["pick_p99_vs_best"] = None if mp is None else mp / best["p99_ms"] - 1.0
            entry["repredicted"] = rp
        for r in gt_at:
            p = preds.get((r["window_us"], r["max_batch_size"], r["instances"]))
            if p is None:
                continue
            meas_v = {"mean_batch": r["stats"]["mean_batch"], "p50_ms": r["p50_ms"],
                      "p99_ms": r["p99_ms"]}
            pred_v = {k: p.get(k) if p.get("stable") else None for k in GOALS}
            spread = aa.get((r["variant"], r["rate_per_s"]), {})
            tol = {k: max(g, spread.get(k, 0.0)) for k, g in GOALS.items()}
            rel = {k: None if pred_v[k] is None else pred_v[k] / meas_v[k] - 1.0
                   for k in GOALS}
            iv = {k: (p.get(k[:3]) or None) for k in ("p50_ms", "p99_ms")}
            inside = ({k: iv[k]["lo_ms"] <= meas_v[k] <= iv[k]["hi_ms"] for k in iv}
                      if iv["p50_ms"] and iv["p99_ms"] else None)
            out["predictions"].append({
                "rate_per_s": rate, "config": f"w{r['window_us'] / 1000:g}ms "
                f"b{r['max_batch_size']} x{r['instances']}" + (
                    f" rep{r['repeat']}" if r["repeat"] else ""),
                "measured": meas_v, "predicted": pred_v, "rel_error": rel, "tolerance": tol,
                "within_goal": {k: rel[k] is not None and abs(rel[k]) <= tol[k]
                                for k in GOALS},
                "p50_interval_ms": [iv["p50_ms"]["lo_ms"], iv["p50_ms"]["hi_ms"]]
                if iv["p50_ms"] else None,
                "p99_interval_ms": [iv["p99_ms"]["lo_ms"], iv["p99_ms"]["hi_ms"]]
                if iv["p99_ms"] else None,
                "inside_interval": inside,
                "contention_source": p.get("contention_source")})
    return out


def repredict_tune(tj_doc: dict, measured: list[dict], rate: float, objective: str,
                   slo_p99_ms: float | None, work: Path) -> dict | None:
    """tune's first round again, offline, with the predictor of this checkout: the
    calibration runs of a recorded ``tune.json`` (every run but the confirming ones)
    through :mod:`trtcheck.analyze.tune_plan` (the same calls as
    :func:`trtcheck.pipeline.tune.run_tune`), its pick, and its predictions of the
    configurations perf_analyzer measured in the same run (``measured``)."""
    from trtcheck.analyze import tune_plan as tp
    from trtcheck.analyze.advice import Candidate
    from trtcheck.analyze.objectives import get_objective
    from trtcheck.results import load_results

    path = work / f"tune-{rate:g}.json"
    path.write_text(json.dumps(tj_doc))
    res = load_results(path).tune
    if res is None or not res.runs:
        return None
    keep = [i for i, pu in enumerate(res.run_purposes) if pu != "confirm"]
    runs = [res.runs[i] for i in keep]
    open_idx = next(j for j, i in enumerate(keep)
                    if res.run_purposes[i].startswith("calibration at the rate"))
    N, B = res.max_instances, res.max_batch_size
    dr50, dr99 = tp.repeat_drifts(runs[open_idx].configs[0].repeats)
    curves = tp.instance_curves(runs, N)
    queueing, stall = tp.queueing_and_stalls(runs, open_idx, curves=curves)
    tail = tp.tail_drift(runs[open_idx].configs[0].repeats)
    n_req = max(50, int(rate * tp.confirm_duration_s(tail, 3.0, rate)))
    obs = queueing.observation  # the repeated run: the drift's source
    search = tp.Search(queueing, curves, dr50.sd_log, dr99.sd_log, rate,
                       n_req, B, N, drift_dof=dr99.dof, stall=stall,
                       drift_at=(Candidate(obs.window_us, obs.max_batch_size, obs.instances),
                                 rate))
    preds = tp.predict_all(search)
    pick, _ = tp.choose(preds, get_objective(objective), slo_p99_ms)
    by = {(round(p.window_us), p.max_batch_size, p.instances): p for p in preds}
    rows = []
    for m in measured:
        p = by.get((round(m["window_us"]), m["max_batch_size"], m["instances"]))
        if p is None or not p.stable or p.p50 is None or p.p99 is None:
            continue
        rows.append({"role": m["role"], "config": m["config"], **{
            k: {"measured": m[k], "predicted": getattr(p, k),
                "rel_error": getattr(p, k) / m[k] - 1.0,
                "interval": [iv.lo_ms, iv.hi_ms], "inside": bool(iv.lo_ms <= m[k] <= iv.hi_ms)}
            for k, iv in (("p50_ms", p.p50), ("p99_ms", p.p99))}})
    pk = None
    if pick is not None and pick.p99 is not None:
        key = (round(pick.window_us), pick.max_batch_size, pick.instances)
        pm = next((m for m in measured if (round(m["window_us"]), m["max_batch_size"],
                                           m["instances"]) == key), None)
        pk = {"config": f"w{pick.window_us / 1000:g}ms b{pick.max_batch_size} x{pick.instances}",
              "predicted_p99_ms": pick.p99_ms,
              "predicted_p99_interval_ms": [pick.p99.lo_ms, pick.p99.hi_ms],
              "measured_p99_ms": pm["p99_ms"] if pm else None}
    return {"pick": pk, "rows": rows, "drift_p99_log_sd": dr99.sd_log, "drift_dof": dr99.dof,
            "stall": {"per_execution": stall.per_execution, "size_ms": stall.size_ms,
                      "measured_share": stall.measured_share}}


def print_tune(ev: dict) -> None:
    """The tables of :func:`evaluate_tune`."""
    print(f"\ntrtcheck tune on {ev.get('gpu') or 'the GPU machine'} (pick and references "
          "measured with perf_analyzer in the same run, mean of the A/B repeats):")
    rows = []
    for e in ev["rates"]:
        b, pm, pk = e["best_measured"], e["pick_measured"], e["pick"]
        rows.append({"rate": e["rate_per_s"], "pick": pk["config"] if pk else "none",
                     "pred": (f"{pk['predicted_p99_ms']:.2f} [{pk['predicted_p99_interval_ms'][0]:.1f}, "
                              f"{pk['predicted_p99_interval_ms'][1]:.1f}]")
                     if pk and pk.get("predicted_p99_interval_ms") else "-",
                     "pickm": pm["p99_ms"] if pm else None,
                     "best": f"{b['config']} {b['p99_ms']:.2f}" if b else "-",
                     "vs": None if e["pick_p99_vs_best"] is None else
                     f"{e['pick_p99_vs_best']:+.0%} {'ok' if e['within_10pct_of_best'] else 'NOT ok'}",
                     "gt": (f"{e['ground_truth_best']['config']} "
                            f"{e['ground_truth_best']['p99_ms']:.2f}")
                     if e["ground_truth_best"] else "-",
                     "runs": e["live_runs"], "wall": e["tune_wall_s"]})
    print(format_table(rows, [("rate", "req/s", ".0f"), ("pick", "tune's pick", ""),
                              ("pred", "predicted P99 [interval]", ""),
                              ("pickm", "pick P99 measured", ".2f"),
                              ("best", "best measured (same run)", ""),
                              ("vs", "pick vs best", ""),
                              ("gt", "best in the grid record", ""),
                              ("runs", "live runs", ""), ("wall", "tune wall s", ".1f")]))
    same = [x for e in ev["rates"] for x in e.get("same_run_predictions", [])]
    if same:
        print("\ntune's predictions against perf_analyzer in the same run (mean of A/B):")
        print(format_table([{
            "rate": x["rate_per_s"], "role": x["role"], "config": x["config"],
            "p50": f"{x['p50_ms']['measured']:.2f} / {x['p50_ms']['predicted']:.2f} "
                   f"({x['p50_ms']['rel_error']:+.0%}) [{x['p50_ms']['interval'][0]:.1f}, "
                   f"{x['p50_ms']['interval'][1]:.1f}] {'in' if x['p50_ms']['inside'] else 'OUT'}",
            "p99": f"{x['p99_ms']['measured']:.2f} / {x['p99_ms']['predicted']:.2f} "
                   f"({x['p99_ms']['rel_error']:+.0%}) [{x['p99_ms']['interval'][0]:.1f}, "
                   f"{x['p99_ms']['interval'][1]:.1f}] {'in' if x['p99_ms']['inside'] else 'OUT'}"}
            for x in same], [("rate", "req/s", ".0f"), ("role", "role", ""),
                             ("config", "configuration", ""),
                             ("p50", "P50 meas / pred [interval]", ""),
                             ("p99", "P99 meas / pred [interval]", "")]))
    rep = [(e["rate_per_s"], e["repredicted"]) for e in ev["rates"] if e.get("repredicted")]
    if rep:
        print("\ntune's first round again offline with this checkout's predictor (its "
              "calibration runs; pick and the same-run perf_analyzer configurations):")
        for rate, rp in rep:
            pk = rp["pick"]
            vs = rp.get("pick_p99_vs_best")
            print(f"  {rate:.0f} req/s: pick {pk['config'] if pk else 'none'}"
                  + (f", predicted P99 {pk['predicted_p99_ms']:.2f} "
                     f"[{pk['predicted_p99_interval_ms'][0]:.1f}, "
                     f"{pk['predicted_p99_interval_ms'][1]:.1f}]" if pk else "")
                  + (f", measured {pk['measured_p99_ms']:.2f} ({vs:+.0%} vs best)"
                     if pk and pk["measured_p99_ms"] is not None and vs is not None else
                     ", not among the configurations measured in that run")
                  + f"; drift P99 sd(log) {rp['drift_p99_log_sd']:.3f} ({rp['drift_dof']} dof)"
                  + f", stalls {rp['stall']['per_execution']:.4f}/execution of "
                    f"{rp['stall']['size_ms']:.1f} ms")
        rows_all = [x for _, rp in rep for x in rp["rows"]]
        print(format_table([{
            "config": x["config"], "role": x["role"],
            **{k[:3]: f"{x[k]['measured']:.2f} / {x[k]['predicted']:.2f} "
                      f"({x[k]['rel_error']:+.0%}) [{x[k]['interval'][0]:.1f}, "
                      f"{x[k]['interval'][1]:.1f}] {'in' if x[k]['inside'] else 'OUT'}"
               for k in ("p50_ms", "p99_ms")}} for x in rows_all],
            [("config", "configuration", ""), ("role", "role", ""),
             ("p50", "P50 meas / pred [interval]", ""),
             ("p99", "P99 meas / pred [interval]", "")]))
        n = len(rows_all)
        ev["repredicted_summary"] = {
            "configurations": n,
            "p50_within_10pct": sum(abs(x["p50_ms"]["rel_error"]) <= 0.10 for x in rows_all),
            "p99_within_20pct": sum(abs(x["p99_ms"]["rel_error"]) <= 0.20 for x in rows_all),
            "inside_both": sum(x["p50_ms"]["inside"] and x["p99_ms"]["inside"]
                               for x in rows_all)}
        print(f"  {ev['repredicted_summary']}")
    preds = ev["predictions"]
    if preds:
        table = []
        for x in preds:
            m, p, r = x["measured"], x["predicted"], x["rel_error"]

            def cell(k: str) -> str:
                if p[k] is None:
                    return f"{m[k]:.2f} / unstable"
                return (f"{m[k]:.2f} / {p[k]:.2f} ({r[k]:+.0%})"
                        + ("" if x["within_goal"][k] else " *"))

            iv = x["inside_interval"]
            table.append({"rate": x["rate_per_s"], "config": x["config"],
                          "batch": cell("mean_batch"), "p50": cell("p50_ms"),
                          "p99": cell("p99_ms"),
                          "iv": "-" if iv is None else
                          f"{'y' if iv['p50_ms'] else 'n'}/{'y' if iv['p99_ms'] else 'n'}"})
        print("\ntune's predictions (its last round) against the grid record at the same "
              "rate (another machine start, earlier: drift included):")
        print(format_table(table, [("rate", "req/s", ".0f"), ("config", "configuration", ""),
                                   ("batch", "mean batch meas / pred", ""),
                                   ("p50", "P50 ms", ""), ("p99", "P99 ms", ""),
                                   ("iv", "in interval", "")]))
        n = len(preds)
        hits = {k: sum(x["within_goal"][k] for x in preds) for k in GOALS}
        wi = [x for x in preds if x["inside_interval"]]
        both = sum(1 for x in wi if x["inside_interval"]["p50_ms"]
                   and x["inside_interval"]["p99_ms"])
        ev["summary"] = {"configurations": n, "within_goal": hits,
                         "with_interval": len(wi), "inside_both": both}
        print(f"  within goal ({n}): mean batch {hits['mean_batch']} ({hits['mean_batch'] / n:.0%}), "
              f"P50 {hits['p50_ms']} ({hits['p50_ms'] / n:.0%}), P99 {hits['p99_ms']} "
              f"({hits['p99_ms'] / n:.0%}); interval coverage P50&P99 {both}/{len(wi)}")


def _compact(x: Any) -> Any:
    """The result document without what each row repeats: floats rounded to 4 decimals,
    a row's ``tolerance`` only where an A/A spread widened a goal, no empty fields."""
    if isinstance(x, float):
        return round(x, 4)
    if isinstance(x, list):
        return [_compact(v) for v in x]
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if k == "tolerance" and v == GOALS:
                continue
            if k in ("variant", "achieved_rate_per_s") or v is None:
                continue
            out[k] = _compact(v)
        return out
    return x


def cold_calibrations(rec: dict) -> list[dict]:
    """Per calibration run of a record, in the order it ran: the batch sizes that ran cold
    (:func:`trtcheck.results.serve.cold_batch_sizes`, with ``first_since_load`` set for the
    sizes no earlier calibration of the same loaded model executed) and their one-time
    cost against the run's compute time, ms."""
    from trtcheck.results.serve import TritonBatchStat, cold_batch_sizes

    seen: dict[str, set[int]] = {}
    out = []
    for c in sorted((c for c in rec["calibrations"] if "live" in c), key=lambda c: c["t_s"]):
        before = seen.setdefault(c["variant"], set())
        bs = c["live"]["serve"]["configs"][0]["repeats"][0]["server_stats"]["batch_stats"]
        stats = [TritonBatchStat(batch_size=b["batch_size"], execution_count=b["execution_count"],
                                 compute_input_ms=b["compute_input_ms"],
                                 compute_infer_ms=b["compute_infer_ms"],
                                 compute_output_ms=b["compute_output_ms"],
                                 first_since_load=b["batch_size"] not in before) for b in bs]
        cold = cold_batch_sizes(stats)
        out.append({"variant": c["variant"], "design": c["design"], "t_s": c["t_s"],
                    "first_sizes": sorted(int(b["batch_size"]) for b in bs
                                          if int(b["batch_size"]) not in before),
                    "cold_sizes": [b for b, _ in cold],
                    "cold_cost_ms": round(sum(ms for _, ms in cold), 1),
                    "compute_ms": round(sum(x.compute_infer_ms for x in stats), 1)})
        before.update(int(b["batch_size"]) for b in bs)
    return out


def evaluate(args: argparse.Namespace) -> int:
    """The ``evaluate`` mode (see the module text)."""
    work = Path(tempfile.mkdtemp(prefix="tune-gpu-eval-"))
    models = []
    for path in args.records:
        rec = load_record(path)
        ev = evaluate_record(rec, work)
        ev["record"] = str(path)
        ev["cold_calibrations"] = cold_calibrations(rec)
        models.append(ev)
        print(f"\n{rec['arch']}: calibration runs whose new batch sizes ran cold (new: "
              "sizes no earlier calibration of the loaded model executed)")
        print(format_table([{**x, "cold_sizes": ",".join(map(str, x["cold_sizes"])) or "-",
                             "share": f"{x['cold_cost_ms'] / max(x['compute_ms'], 1e-9):.0%}"}
                            for x in ev["cold_calibrations"]],
                           [("variant", "variant", ""), ("design", "run", ""),
                            ("cold_sizes", "cold sizes", ""),
                            ("cold_cost_ms", "one-time cost ms", ""),
                            ("share", "of compute", "")]))
        for name, desc in PREDICTORS:
            pr = ev["predictors"][name]
            print(f"\n{rec['arch']} / {name}: {desc}")
            for c in pr["calibrations"]:
                print(f"  calibration {c['variant']} {c['load']} (t={c['t_s']:.0f} s): T(b) "
                      + " ".join(f"{b}:{t:.2f}" for b, t in c["curve_ms"][:6])
                      + f"; per-execution overhead {c['per_batch_overhead_ms'] or 0:.3f} ms")
                for load, sc in (c.get("self_check") or {}).items():
                    print(f"    the search on its own calibration run {load}: P50 "
                          f"{sc['p50_ms']:.2f} / {sc['measured_p50_ms']:.2f} ms, P99 "
                          f"{sc['p99_ms']:.2f} / {sc['measured_p99_ms']:.2f} ms "
                          "(simulated / measured)")
            table = []
            for x in pr["rows"]:
                m, p, e = x["measured"], x["predicted"], x["rel_error"]

                def cell(k: str) -> str:
                    if p[k] is None:
                        return f"{m[k]:.2f} / unstable"
                    mark = "" if x["within_goal"][k] else " *"
                    return f"{m[k]:.2f} / {p[k]:.2f} ({e[k]:+.0%}){mark}"

                iv = x["inside_interval"]
                table.append({"config": x["config"], "batch": cell("mean_batch"),
                              "p50": cell("p50_ms"), "p99": cell("p99_ms"),
                              "in interval": "-" if iv is None else
                              f"{'y' if iv['p50_ms'] else 'n'}/{'y' if iv['p99_ms'] else 'n'}"})
            print(format_table(table, [("config", "configuration", ""),
                                       ("batch", "mean batch meas / pred", ""),
                                       ("p50", "P50 ms", ""), ("p99", "P99 ms", ""),
                                       ("in interval", "P50/P99 in interval", "")]))
            h, n = pr["within_goal"], pr["configurations"]
            cov = pr["inside_interval"]
            print(f"  within goal ({n} configurations; * = outside): mean batch "
                  f"{h['mean_batch']}, P50 {h['p50_ms']}, P99 {h['p99_ms']}"
                  + (f" (without the A/A widening: {hs['mean_batch']}, {hs['p50_ms']}, "
                     f"{hs['p99_ms']})" if (hs := pr.get("within_goal_strict")) and hs != h
                     else "") + "; interval "
                  + ("none in these predictions" if cov is None else
                     f"coverage P50 {cov['p50_ms']}/{pr['with_interval']}, P99 "
                     f"{cov['p99_ms']}/{pr['with_interval']}"))
    tune_evs = []
    for tune_path in args.tune:
        tr = load_record(tune_path)
        truth = next((load_record(p) for p in args.records
                      if load_record(p)["arch"] == tr["arch"]), None)
        tune_ev = evaluate_tune(tr, truth, work)
        tune_ev["record"] = str(tune_path)
        tune_ev["arch"] = tr["arch"]
        gpu = (tr.get("gpu") or [{}])[0].get("query", "")
        tune_ev["gpu"] = gpu.split(",")[0] or None  # nvidia-smi's name of the GPU
        print(f"\n{tr['arch']}: {tune_path}")
        print_tune(tune_ev)
        tune_evs.append(tune_ev)
    goals = []
    for name, _ in PREDICTORS:
        n = sum(m["predictors"][name]["configurations"] for m in models)
        if not n:
            continue
        row: dict[str, Any] = {"predictor": name, "configurations": n}
        for k in GOALS:
            hit = sum(m["predictors"][name]["within_goal"][k] for m in models)
            row[k] = hit
            row[f"{k}_share"] = hit / n
            row[f"{k}_met"] = hit / n >= GOAL_SHARE[k]
            row[f"{k}_strict"] = sum(m["predictors"][name].get("within_goal_strict", {})
                                     .get(k, 0) for m in models)
        wi = sum(m["predictors"][name]["with_interval"] for m in models)
        if wi:
            both = sum(sum(1 for x in m["predictors"][name]["rows"] if x["inside_interval"]
                           and x["inside_interval"]["p50_ms"] and x["inside_interval"]["p99_ms"])
                       for m in models)
            row["coverage_share"] = both / wi
            row["coverage_met"] = both / wi >= GOAL_SHARE["coverage"]
        goals.append(row)
    aa = aa_agreement(models)
    if aa["pairs"]:
        print(f"\nthe noise floor: {aa['pairs']} configurations measured twice; the second "
              f"measurement within the goal of the first in: mean batch {aa['mean_batch']}, "
              f"P50 {aa['p50_ms']}, P99 {aa['p99_ms']} "
              f"({aa['p50_ms'] / aa['pairs']:.0%} and {aa['p99_ms'] / aa['pairs']:.0%} "
              "for P50 and P99)")
    choice = interval_choice(models)
    if choice["rates"]:
        print(f"\nchoosing on the interval (tune-design predictor, every rate with 3 or more "
              f"configurations that kept up; the pick within 10% of the best measured P99): "
              f"lowest P99 interval upper end {choice['upper_end_within_10pct']} of "
              f"{choice['rates']} rates, lowest P99 point {choice['point_within_10pct']} of "
              f"{choice['rates']}")
    print("\ngoals over both models (share of configurations within goal; goal share in "
          "brackets):")
    print(format_table([{**g, "mb": f"{g['mean_batch']}/{g['configurations']} "
                         f"({g['mean_batch_share']:.0%}) {'met' if g['mean_batch_met'] else 'NOT met'}",
                         "p50": f"{g['p50_ms']}/{g['configurations']} ({g['p50_ms_share']:.0%}) "
                         f"{'met' if g['p50_ms_met'] else 'NOT met'}",
                         "p99": f"{g['p99_ms']}/{g['configurations']} ({g['p99_ms_share']:.0%}) "
                         f"{'met' if g['p99_ms_met'] else 'NOT met'}",
                         "strict": f"{g['mean_batch_strict']}/{g['p50_ms_strict']}/"
                                   f"{g['p99_ms_strict']}",
                         "cov": "-" if "coverage_share" not in g else
                         f"{g['coverage_share']:.0%} {'met' if g['coverage_met'] else 'NOT met'}"}
                        for g in goals],
                       [("predictor", "predictor", ""), ("mb", "mean batch [95%]", ""),
                        ("p50", "P50 [90%]", ""), ("p99", "P99 [90%]", ""),
                        ("strict", "without A/A widening mb/P50/P99", ""),
                        ("cov", "interval coverage P50&P99 [90%]", "")]))
    doc = {"benchmark": "tune_gpu", "machine": args.machine,
           "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "goals": GOALS, "goal_share": GOAL_SHARE,
           "predictors": dict(PREDICTORS), "summary": goals, "aa_agreement": aa,
           "interval_choice": choice,
           "models": models,
           "tune": tune_evs}
    from _harness import environment_record

    for m in models:  # each measurement once, not once per predictor
        first = next(iter(m["predictors"].values()))["rows"]
        m["measured"] = [{"config": x["config"], **x["measured"]} for x in first]
        for name, pr in m["predictors"].items():
            if name in ("per-instance-count", "one-calibration-late"):
                pr["rows"] = "(printed; rerun evaluate on the record for them)"
                continue
            for x in pr["rows"]:
                x.pop("measured", None)
                x.pop("instances", None)
                x.pop("rate_per_s", None)
    doc = _compact(doc)
    doc["environment"] = environment_record()
    doc["environment_note"] = ("the evaluation's environment; the measurements' machine is "
                               "in each record (h200-host: one NVIDIA H200)")
    write_json(Path(args.out) if args.out else result_path("tune_gpu", args.machine), doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
