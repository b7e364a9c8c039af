"""The embedded dynamic batcher against a real GPU workload, through the public API.

ResNet-18 (torchvision, random weights: compute cost is what matters) in fp16 on CUDA,
served by ``trtcheck.measure.serving.serve.measure_serving`` as a plain synchronous Python
function (the batcher runs it in an executor thread, as a Python service would):
burst and open-loop load shapes, a few windows and max batch sizes, 3 repeats each.
Also records the offline curve T(b) (host end-to-end and CUDA-event GPU time) so the
serving numbers can be read against it.

Run (needs torch + torchvision + a CUDA GPU)::

    python benchmarks/gpu_batcher_h200.py [--machine h200-host] [--keep-results FILE]

Prints the curve and the tables and writes the summary to
``benchmarks/results/gpu_batcher_h200-<machine>.json`` (or ``--out FILE``); with
``--keep-results FILE`` also the full trtcheck results document with raw per-request
data (gzip JSON).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from _harness import add_machine_argument, result_path, torch_resnet18_fp16, write_json


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_machine_argument(ap, default="h200-host")
    ap.add_argument("--out", default=None, help="summary file [default: the naming rule]")
    ap.add_argument("--keep-results", metavar="FILE", default=None,
                    help="also write the full results document (gzip JSON) to FILE")
    ap.add_argument("--budget-s", type=float, default=220.0,
                    help="stop starting new load shapes after this many seconds")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    import torch
    import torchvision

    from trtcheck.backends.callable import CallableBackend
    from trtcheck.report.text_tables import serve_table_text
    from trtcheck.measure.bench import new_results
    from trtcheck.measure.serving import measure_serving
    from trtcheck.units import us_to_ms

    t_start = time.perf_counter()
    if not torch.cuda.is_available():
        print("error: no CUDA device", file=sys.stderr)
        return 3
    gpu = torch.cuda.get_device_name(0)
    model, dev, infer = torch_resnet18_fp16()

    rng = np.random.default_rng(0)
    max_b = 32
    # warm up every batch size the batcher can form (cudnn.benchmark tunes per shape)
    for b in range(1, max_b + 1):
        for _ in range(3):
            infer({"x": rng.random((b, 3, 224, 224), dtype=np.float32).astype(np.float16)})
    torch.cuda.synchronize()

    # offline curve: host end-to-end per execution and GPU-only (CUDA events)
    curve = {}
    for b in (1, 2, 4, 8, 16, 32):
        xb = {"x": rng.random((b, 3, 224, 224), dtype=np.float32).astype(np.float16)}
        host, gpu_ms = [], []
        xg = torch.from_numpy(xb["x"]).to(dev)
        for _ in range(50):
            t0 = time.perf_counter()
            infer(xb)
            host.append((time.perf_counter() - t0) * 1e3)
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with torch.inference_mode():
                e0.record()
                model(xg)
                e1.record()
            e1.synchronize()
            gpu_ms.append(e0.elapsed_time(e1))
        curve[b] = {"host_e2e_median_ms": statistics.median(host),
                    "gpu_median_ms": statistics.median(gpu_ms),
                    "host_samples_per_s": b * 1000.0 / statistics.median(host)}
    t1 = curve[1]["host_e2e_median_ms"] / 1000.0
    print(f"device {gpu}; T(1) host {t1 * 1e3:.3f} ms; curve "
          + ", ".join(f"b{b}: {v['host_e2e_median_ms']:.2f} ms" for b, v in curve.items()),
          flush=True)

    # cuDNN autotuning (cudnn.benchmark) state per thread: time a batch of 32 on a fresh
    # thread vs the thread that already ran it (the first run of this benchmark saw
    # 160-360 ms batches when each repeat used new executor threads)
    import concurrent.futures
    import threading

    x32 = {"x": rng.random((32, 3, 224, 224), dtype=np.float32).astype(np.float16)}

    def timed() -> float:
        t0 = time.perf_counter()
        infer(x32)
        return (time.perf_counter() - t0) * 1e3

    fresh: list = []
    th = threading.Thread(target=lambda: fresh.extend([timed(), timed()]))
    th.start()
    th.join()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="serve")
    # warm every batch size inside the thread the batcher will use
    for b in range(1, max_b + 1):
        xb = {"x": rng.random((b, 3, 224, 224), dtype=np.float32).astype(np.float16)}
        for _ in range(2):
            pool.submit(infer, xb).result()
    warmed = [pool.submit(timed).result() for _ in range(3)]
    thread_probe = {"fresh_thread_first_ms": fresh[0], "fresh_thread_second_ms": fresh[1],
                    "warmed_pool_thread_ms": warmed, "main_thread_ms": [timed(), timed()]}
    print(f"batch-32 per-thread probe: {thread_probe}", flush=True)

    payload = {"x": rng.random((1, 3, 224, 224), dtype=np.float32).astype(np.float16)}
    backend = CallableBackend(infer, name="resnet18_fp16_torch", device=gpu, precision="fp16")
    sparse = round(min(5000.0, 0.3 / t1))
    over = round(min(8000.0, 2.0 / t1))
    loads = ["burst:64", f"open:{sparse}", f"open:{over}"]
    runs = []
    for load in loads:
        if time.perf_counter() - t_start > args.budget_s:
            print(f"budget reached, skipping {load}", flush=True)
            continue
        runs.append(measure_serving(
            backend, windows_us=[0, 2000, 10_000], max_batch_sizes=[1, 8, 32], loads=[load],
            repeats=args.repeats, payload=payload, max_duration_s=1.0, drain_timeout_s=3.0,
            warmup_requests=8, executor=pool, model_path="torchvision resnet18 fp16 (random weights)",
            progress=lambda m: print(m, flush=True)))
    run = runs[0]
    for r in runs[1:]:
        run.configs.extend(r.configs)
        run.settings.loads.extend(r.settings.loads)
    results = new_results(["benchmarks/gpu_batcher_h200.py"] + sys.argv[1:])
    results.serve = run

    table = serve_table_text(run)
    summary = {
        "device": gpu, "torch": torch.__version__, "torchvision": torchvision.__version__,
        "python": sys.version.split()[0], "model": "torchvision resnet18 fp16, random weights",
        "batch_function": "sync, run by the batcher in an executor thread; host fp16 input "
                          "copied to GPU, logits copied back",
        "offline_curve": curve, "thread_probe_batch32": thread_probe,
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark), "loads": run.settings.loads, "repeats": args.repeats,
        "configs": [{
            "load": c.load.label, "window_ms": us_to_ms(c.window_us),
            "max_batch_size": c.max_batch_size,
            "mean_batch_size": c.mean_batch_size, "max_batch_size_seen": c.max_batch_size_seen,
            "throughput_queries_per_s": c.throughput_queries_per_s, "p50_ms": c.p50_ms,
            "p99_ms": c.p99_ms, "ok_share": c.ok_share, "late_send_share": c.late_send_share,
            "send_lag_p99_ms": c.send_lag_p99_ms,
            "waterfall_median_ms": {w.name: w.median_ms
                                    for w in c.repeats[c.median_repeat].waterfall},
            "residual_median_ms": c.repeats[c.median_repeat].residual_median_ms,
        } for c in run.configs],
        "elapsed_s": time.perf_counter() - t_start,
    }
    curve_txt = "\n".join(f"  b={b:>2}: host {v['host_e2e_median_ms']:.3f} ms, GPU "
                          f"{v['gpu_median_ms']:.3f} ms, {v['host_samples_per_s']:.0f} samples/s"
                          for b, v in curve.items())
    print(f"device: {gpu}\noffline curve (median of 50):\n{curve_txt}\n"
          f"batch-32 per-thread probe (cudnn.benchmark on): {json.dumps(thread_probe)}\n")
    pool.shutdown()
    print(table)
    print(f"elapsed {summary['elapsed_s']:.1f} s")
    write_json(Path(args.out) if args.out else result_path("gpu_batcher_h200", args.machine),
               summary)
    if args.keep_results:
        with gzip.open(args.keep_results, "wt") as fh:
            fh.write(results.model_dump_json())
        print(f"wrote {args.keep_results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
