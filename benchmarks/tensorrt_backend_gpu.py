#!/usr/bin/env python3
"""Run TensorRTBackend's real CUDA path on a GPU with a TensorRT-shaped shim engine.

No machine here has TensorRT and a GPU together (docs/tensorrt.md), so this script checks
everything of :class:`trtcheck.backends.tensorrt.TensorRTBackend` except TensorRT itself
on a real GPU: pinned staging buffers, ``cudaMalloc``'d device buffers whose addresses go
through ``set_tensor_address``, ``cudaMemcpyAsync`` H2D/D2H on the backend's stream,
CUDA-event timing of each part, CUDA-graph capture and replay, and the out-of-memory
path of a real ``cudaMalloc``. The shim "engine" computes ``y = x @ W`` (FP32,
``x`` [B, K], ``W`` [K, K]) with PyTorch on the stream handle the backend passes to
``execute_async_v3``, reading and writing the raw device addresses the backend set
(through ``__cuda_array_interface__``).

Checks: outputs equal ``x @ W`` (within FP32/TF32 tolerance); the backend's
``gpu_compute_ms`` agrees with ``torch.cuda.Event`` timing of the same matmul (median,
goal within 5%: different buffers and streams); graph replay gives the same outputs;
a batch too large for the GPU is an InputError naming free memory.

Usage: ``python benchmarks/tensorrt_backend_gpu.py [--machine h200-host]`` (needs torch,
cuda-python, pydantic); prints a table and writes
``benchmarks/results/tensorrt_backend_gpu-<machine>.json`` (or ``--out FILE``).
"""

from __future__ import annotations

import argparse
import enum
import json
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _harness import add_machine_argument, result_path, write_json

K = 4096
MAX_ROWS = 50_000_000  # profile max batch: big enough to reach cudaMalloc's OOM


def make_shim(torch):
    W = torch.randn(K, K, device="cuda", dtype=torch.float32, generator=torch.Generator(
        device="cuda").manual_seed(0)) / K ** 0.5

    class Arr:
        def __init__(self, ptr, shape):
            self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": "<f4",
                                             "data": (int(ptr), False), "version": 3}

    class Trt:
        __version__ = "shim (no TensorRT)"
        DataType = enum.Enum("DataType", "FLOAT")
        TensorIOMode = enum.Enum("TensorIOMode", "INPUT OUTPUT")

        class ILogger:
            def __init__(self):
                pass

        class IProfiler:
            def __init__(self):
                pass

        @staticmethod
        def nptype(dt):
            return np.float32

        class Runtime:
            def __init__(self, logger):
                pass

            def deserialize_cuda_engine(self, data):
                return Engine()

    class Engine:
        num_io_tensors = 2
        num_optimization_profiles = 1

        def get_tensor_name(self, i):
            return ["x", "y"][i]

        def get_tensor_mode(self, n):
            return Trt.TensorIOMode.INPUT if n == "x" else Trt.TensorIOMode.OUTPUT

        def get_tensor_dtype(self, n):
            return Trt.DataType.FLOAT

        def get_tensor_shape(self, n):
            return (-1, K)

        def get_tensor_profile_shape(self, n, p):
            return ((1, K), (64, K), (MAX_ROWS, K))

        def create_execution_context(self):
            return Context()

    class Context:
        def __init__(self):
            self.shape = None
            self.addr = {}
            self.profiler = None

        def set_optimization_profile_async(self, i, stream):
            return isinstance(stream, int)

        def get_tensor_shape(self, n):
            return self.shape or (-1, K)

        def set_input_shape(self, n, shape):
            self.shape = tuple(shape)
            return True

        def set_tensor_address(self, n, ptr):
            self.addr[n] = int(ptr)
            return True

        def execute_async_v3(self, stream):
            if set(self.addr) != {"x", "y"} or self.shape is None:
                return False
            x = torch.as_tensor(Arr(self.addr["x"], self.shape), device="cuda")
            y = torch.as_tensor(Arr(self.addr["y"], self.shape), device="cuda")
            with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
                torch.matmul(x, W, out=y)
            return True

    return Trt(), W


def plan_bytes() -> bytes:
    body = b"shim"
    return (b"ftrt" + b"\0" * 12 + struct.pack("<Q", 32 + len(body)) + bytes([10, 8, 0, 43])
            + b"ftrt" + body)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_machine_argument(ap, default="h200-host")
    ap.add_argument("--out", default=None, help="result file [default: the naming rule]")
    ap.add_argument("--iters", type=int, default=50)
    args = ap.parse_args()

    import torch

    from trtcheck.backends import cuda_timing as ct
    from trtcheck.backends.tensorrt import TensorRTBackend
    from trtcheck.errors import InputError

    torch.backends.cuda.matmul.allow_tf32 = False
    trt, W = make_shim(torch)
    plan = Path(tempfile.mkdtemp(prefix="trtcheck-shim-")) / "shim.plan"
    plan.write_bytes(plan_bytes())
    dev = ct.device_name(0)
    res: dict = {"device": dev, "torch": torch.__version__, "K": K, "iters": args.iters,
                 "batches": {}, "graph": {}, "checks": {}}
    Wn = W.cpu().numpy().astype(np.float64)
    rng = np.random.default_rng(0)
    ok = True
    with TensorRTBackend(plan, runtime="tensorrt", trt_module=trt) as b:
        for batch in (1, 8, 64, 256, 1024):
            x = rng.standard_normal((batch, K)).astype(np.float32)
            comps: dict[str, list[float]] = {}
            host = []
            for i in range(args.iters + 5):
                t0 = time.perf_counter()
                o = b.infer({"x": x})
                host.append((time.perf_counter() - t0) * 1000)
                if i >= 5:
                    for k, v in o.components_ms.items():
                        comps.setdefault(k, []).append(v)
            ref = x.astype(np.float64) @ Wn
            err = float(np.max(np.abs(o.outputs["y"] - ref)) / np.max(np.abs(ref)))
            # the same matmul timed by torch events on a torch stream
            xt = torch.from_numpy(x).cuda()
            yt = torch.empty_like(xt)
            s = torch.cuda.Stream()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            tt = []
            with torch.cuda.stream(s):
                for i in range(args.iters + 5):
                    e0.record()
                    torch.matmul(xt, W, out=yt)
                    e1.record()
                    e1.synchronize()
                    if i >= 5:
                        tt.append(e0.elapsed_time(e1))
            med = {k: statistics.median(v) for k, v in comps.items()}
            torch_ms = statistics.median(tt)
            rel = abs(med["gpu_compute_ms"] - torch_ms) / torch_ms
            nbytes = x.nbytes
            res["batches"][batch] = {
                "median_components_ms": med, "median_host_ms": statistics.median(host),
                "torch_event_matmul_ms": torch_ms, "rel_diff_compute_vs_torch": rel,
                "h2d_GB_per_s": nbytes / (med["h2d_ms"] / 1000) / 1e9,
                "max_rel_error": err}
            ok &= err < 1e-4
        # CUDA graph replay
    with TensorRTBackend(plan, runtime="tensorrt", trt_module=trt, use_cuda_graph=True) as g:
        x = rng.standard_normal((256, K)).astype(np.float32)
        outs = [g.infer({"x": x}) for _ in range(args.iters + 5)]
        ref = x.astype(np.float64) @ Wn
        err = float(np.max(np.abs(outs[-1].outputs["y"] - ref)) / np.max(np.abs(ref)))
        gc = [o.components_ms["gpu_compute_ms"] for o in outs[5:]]
        he = [o.components_ms["host_enqueue_ms"] for o in outs[5:]]
        res["graph"] = {"batch": 256, "graphs_captured": len(g._graphs),
                        "median_gpu_compute_ms": statistics.median(gc),
                        "median_host_enqueue_ms": statistics.median(he),
                        "max_rel_error": err}
        ok &= err < 1e-4 and len(g._graphs) == 1
        # a batch whose device buffer cannot fit: a real cudaMalloc failure must become an
        # InputError naming free memory (called at the allocation step infer() uses)
        free = ct.mem_get_info()[0]
        try:
            g._buffer(g._dev, ct.DeviceBuffer, "x", free + (8 << 30))
            res["checks"]["oom"] = "no error (unexpected)"
            ok = False
        except InputError as exc:
            res["checks"]["oom"] = f"InputError: {exc.message} | hint: {exc.hint}"
    print(f"device: {dev}  torch {torch.__version__}  K={K}  iters={args.iters}")
    print(f"{'batch':>6s} {'h2d ms':>8s} {'compute ms':>11s} {'torch ms':>9s} {'diff':>7s} "
          f"{'d2h ms':>8s} {'enqueue ms':>11s} {'host ms':>8s} {'H2D GB/s':>9s} {'rel err':>9s}")
    for batch, r in res["batches"].items():
        m = r["median_components_ms"]
        print(f"{batch:6d} {m['h2d_ms']:8.4f} {m['gpu_compute_ms']:11.4f} "
              f"{r['torch_event_matmul_ms']:9.4f} {r['rel_diff_compute_vs_torch']:7.2%} "
              f"{m['d2h_ms']:8.4f} {m['host_enqueue_ms']:11.4f} {r['median_host_ms']:8.3f} "
              f"{r['h2d_GB_per_s']:9.2f} {r['max_rel_error']:9.2e}")
    print("graph replay:", json.dumps(res["graph"]))
    print("oom:", res["checks"]["oom"])
    res["all_outputs_correct"] = bool(ok)
    plan.unlink()
    plan.parent.rmdir()
    write_json(Path(args.out) if args.out else result_path("tensorrt_backend_gpu", args.machine),
               json.loads(json.dumps(res, default=str)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
