#!/usr/bin/env python3
"""Verify trtcheck's CUDA timing primitives (cuda-python events) against PyTorch's.

Needs a CUDA GPU, PyTorch with CUDA and cuda-python. Each check times the SAME GPU work
with trtcheck's :mod:`trtcheck.backends.cuda_timing` events and with
``torch.cuda.Event`` recorded on the same stream, ``--repeats`` times, and compares the
medians (goal: agree within 2%). Known-size work gives a bandwidth/throughput sanity
figure beside it:

1. device-to-device copy of N bytes (``cudaMemcpyAsync`` D2D issued by cuda-python);
   bandwidth = 2 N / t (read + write);
2. host-to-device and device-to-host copies from/to pinned memory (``cudaMallocHost``),
   also against a host clock (``perf_counter`` around copy + synchronize);
3. a PyTorch op (FP16 matmul, known FLOPs) run directly;
4. the same op captured into a CUDA graph twice (by ``torch.cuda.CUDAGraph`` and by
   :class:`trtcheck.backends.cuda_timing.CudaGraph` through cuda-python) and replayed.

Usage: ``python benchmarks/cuda_timing.py [--machine h200-host] [--repeats 50]``; prints a
table and writes ``benchmarks/results/cuda_timing-<machine>.json`` (or ``--out FILE``).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

from _harness import add_machine_argument, result_path, write_json


def _load_cuda_timing():
    """Import trtcheck/backends/cuda_timing.py by path: it needs only trtcheck.errors, and
    this avoids importing trtcheck.backends (pydantic) on a bare GPU box."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "trtcheck" / "backends" / "cuda_timing.py"
    spec = importlib.util.spec_from_file_location("trtcheck_cuda_timing", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ct = _load_cuda_timing()


def _median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def both_ways(torch, stream_ptr: int, work, repeats: int, warmup: int = 5) -> dict:
    """Time ``work()`` with cuda-python events and torch events on the same stream."""
    s = ct.Stream.from_ptr(stream_ptr)
    e0, e1 = ct.Event(), ct.Event()
    t0 = torch.cuda.Event(enable_timing=True)
    t1 = torch.cuda.Event(enable_timing=True)
    ours, theirs, host = [], [], []
    for i in range(warmup + repeats):
        torch.cuda.current_stream().synchronize()
        h0 = time.perf_counter()
        t0.record()
        e0.record(s)
        work()
        e1.record(s)
        t1.record()
        t1.synchronize()
        h1 = time.perf_counter()
        if i >= warmup:
            ours.append(e1.elapsed_ms_since(e0))
            theirs.append(t0.elapsed_time(t1))
            host.append((h1 - h0) * 1000.0)
    e0.destroy()
    e1.destroy()
    mo, mt = _median(ours), _median(theirs)
    return {"cuda_python_event_ms_median": mo, "torch_event_ms_median": mt,
            "host_clock_ms_median": _median(host),
            "rel_diff_events": abs(mo - mt) / mt if mt else None,
            "cuda_python_event_ms": ours, "torch_event_ms": theirs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_machine_argument(ap, default="h200-host")
    ap.add_argument("--out", default=None, help="result file [default: the naming rule]")
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--copy-mib", type=int, default=512)
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("error: no CUDA GPU visible to PyTorch", file=sys.stderr)
        return 3
    rt = ct.cudart()
    dev = ct.device_name(0)
    free_b, total_b = ct.mem_get_info()
    stream = torch.cuda.Stream()
    torch.cuda.set_stream(stream)
    sptr = stream.cuda_stream
    s = ct.Stream.from_ptr(sptr)
    n = args.copy_mib * 1024 * 1024
    results: dict = {
        "device": dev, "torch": torch.__version__,
        "cuda_runtime_version": ct.check(rt.cudaRuntimeGetVersion()),
        "cuda_driver_version": ct.check(rt.cudaDriverGetVersion()),
        "python": platform.python_version(), "repeats": args.repeats,
        "mem_free_bytes": free_b, "mem_total_bytes": total_b,
        "torch_mem_total_bytes": torch.cuda.get_device_properties(0).total_memory,
        "checks": {},
    }
    checks = results["checks"]

    def run(name, fn):
        try:
            checks[name] = fn()
        except Exception as exc:  # record and go on: one failure must not lose the rest
            checks[name] = {"error": f"{type(exc).__name__}: {exc}"}

    # 1. D2D copy through cuda-python
    def d2d():
        a, b = ct.DeviceBuffer(n), ct.DeviceBuffer(n)
        ct.check(rt.cudaMemsetAsync(a.ptr, 1, n, s.handle))
        r = both_ways(torch, sptr, lambda: ct.memcpy_async(b.ptr, a.ptr, n, "d2d", s),
                      args.repeats)
        r["bytes"] = n
        r["bandwidth_GB_per_s_read_plus_write"] = 2 * n / (r["cuda_python_event_ms_median"]
                                                           / 1000) / 1e9
        # torch's own copy kernel of the same size, timed by torch events only
        ta = torch.empty(n, dtype=torch.uint8, device="cuda")
        tb = torch.empty_like(ta)
        r2 = both_ways(torch, sptr, lambda: tb.copy_(ta), args.repeats)
        r["torch_copy_kernel_event_ms_median"] = r2["torch_event_ms_median"]
        r["torch_copy_kernel_cuda_python_event_ms_median"] = r2["cuda_python_event_ms_median"]
        a.free()
        b.free()
        return r

    # 2. H2D / D2H pinned
    def pinned(kind):
        def f():
            h = ct.PinnedBuffer(n)
            d = ct.DeviceBuffer(n)
            arr = h.view("uint8", (n,))
            arr[:] = 7
            if kind == "h2d":
                work = lambda: ct.memcpy_async(d.ptr, h.ptr, n, "h2d", s)  # noqa: E731
            else:
                work = lambda: ct.memcpy_async(h.ptr, d.ptr, n, "d2h", s)  # noqa: E731
            r = both_ways(torch, sptr, work, args.repeats)
            r["bytes"] = n
            r["bandwidth_GB_per_s"] = n / (r["cuda_python_event_ms_median"] / 1000) / 1e9
            r["rel_diff_event_vs_host_clock"] = (
                abs(r["host_clock_ms_median"] - r["cuda_python_event_ms_median"])
                / r["cuda_python_event_ms_median"])
            h.free()
            d.free()
            return r
        return f

    # 3./4. matmul direct, torch graph, cuda-python graph
    m = 8192
    A = torch.randn(m, m, device="cuda", dtype=torch.float16)
    B = torch.randn(m, m, device="cuda", dtype=torch.float16)
    C = torch.empty(m, m, device="cuda", dtype=torch.float16)
    flops = 2 * m ** 3

    def op():
        torch.matmul(A, B, out=C)

    def direct():
        r = both_ways(torch, sptr, op, args.repeats)
        r["tflops"] = flops / (r["cuda_python_event_ms_median"] / 1000) / 1e12
        return r

    def torch_graph():
        op()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            op()
        torch.cuda.set_stream(stream)
        r = both_ways(torch, sptr, g.replay, args.repeats)
        r["tflops"] = flops / (r["cuda_python_event_ms_median"] / 1000) / 1e12
        return r

    def ours_graph():
        op()
        torch.cuda.synchronize()
        g = ct.CudaGraph(s, op)
        r = both_ways(torch, sptr, lambda: g.launch(s), args.repeats)
        r["tflops"] = flops / (r["cuda_python_event_ms_median"] / 1000) / 1e12
        g.destroy()
        return r

    run("d2d_copy", d2d)
    run("h2d_pinned_copy", pinned("h2d"))
    run("d2h_pinned_copy", pinned("d2h"))
    run("matmul_fp16_direct", direct)
    run("matmul_fp16_torch_graph_replay", torch_graph)
    run("matmul_fp16_cuda_python_graph_replay", ours_graph)
    g1 = checks.get("matmul_fp16_torch_graph_replay", {})
    g2 = checks.get("matmul_fp16_cuda_python_graph_replay", {})
    if "torch_event_ms_median" in g1 and "cuda_python_event_ms_median" in g2:
        results["graph_capture_rel_diff_cuda_python_vs_torch"] = (
            abs(g2["cuda_python_event_ms_median"] - g1["torch_event_ms_median"])
            / g1["torch_event_ms_median"])

    print(f"device: {dev}  torch {torch.__version__}  repeats {args.repeats}")
    print(f"{'check':40s} {'cuda-python ms':>14s} {'torch ms':>10s} {'host ms':>9s} "
          f"{'rel diff':>9s}  extra")
    ok = True
    for name, r in checks.items():
        if "error" in r:
            print(f"{name:40s} ERROR {r['error']}")
            ok = False
            continue
        extra = {k: round(v, 2) for k, v in r.items()
                 if k.startswith(("bandwidth", "tflops", "rel_diff_event_vs"))}
        rd = r["rel_diff_events"]
        ok &= rd is not None and rd <= 0.02
        print(f"{name:40s} {r['cuda_python_event_ms_median']:14.4f} "
              f"{r['torch_event_ms_median']:10.4f} {r['host_clock_ms_median']:9.4f} "
              f"{rd:9.4%}  {extra}")
    if "graph_capture_rel_diff_cuda_python_vs_torch" in results:
        print(f"graph replay, cuda-python capture vs torch capture: "
              f"{results['graph_capture_rel_diff_cuda_python_vs_torch']:.4%}")
    results["all_event_pairs_within_2pct"] = bool(ok)
    write_json(Path(args.out) if args.out else result_path("cuda_timing", args.machine),
               results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
