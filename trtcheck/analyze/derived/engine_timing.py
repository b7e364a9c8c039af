"""Judging GPU-side timings of TensorRT executions (reads the results model only).

CUDA events recorded around ``execute_async_v3`` measure stream time between the two
records. When the host takes longer to enqueue the work than the GPU takes to run it,
the stream sits idle waiting for kernels and that idle time is counted as
``gpu_compute_ms``. Measured on an NVIDIA H200 (``benchmarks/tensorrt_backend_gpu.py``,
results in ``benchmarks/results/tensorrt_backend_gpu-h200-host.json``): a 1x4096x4096 FP32
matmul launched from Python read 0.104 ms between events against 0.034 ms for the kernel
alone; at batch 1024 (0.69 ms of work) the two agreed within 1.4%, and CUDA-graph replay
removed the gap (0.190 vs 0.196 ms at batch 256). trtexec prints the same diagnosis
("Throughput may be bound by Enqueue Time rather than GPU Compute ... --useCudaGraph
... may increase the throughput").
"""

from __future__ import annotations

from trtcheck.results.bench import BatchResult
from trtcheck.results.stats import Finding

ENQUEUE_BOUND_RATIO = 0.5
"""Flag when the median host enqueue time reaches half the median GPU compute time: from
there on, host launch gaps are a visible part of ``gpu_compute_ms`` (our threshold,
placed from the H200 measurement in the module docstring)."""


def enqueue_bound_finding(batch: BatchResult,
                          ratio: float = ENQUEUE_BOUND_RATIO) -> Finding | None:
    """A warning when ``batch``'s executions are bound by host enqueue time.

    Args:
        batch: a bench result with ``component_stats`` ``host_enqueue_ms`` and
            ``gpu_compute_ms`` (as the TensorRT backend records them).
        ratio: threshold on ``median(host_enqueue_ms) / median(gpu_compute_ms)``.

    Returns:
        a ``Finding`` with code ``"enqueue-bound"``, or ``None`` (also when the two
        components were not recorded).
    """
    enq = batch.component_stats.get("host_enqueue_ms")
    gpu = batch.component_stats.get("gpu_compute_ms")
    if enq is None or gpu is None or gpu.median_ms <= 0:
        return None
    r = enq.median_ms / gpu.median_ms
    if r < ratio:
        return None
    return Finding(
        code="enqueue-bound", severity="warning", where=f"batch {batch.batch_size}",
        message=(f"host enqueue takes {enq.median_ms:.3f} ms against {gpu.median_ms:.3f} ms "
                 f"of GPU compute ({r:.0%}): the GPU waits for the host, and gpu_compute_ms "
                 "includes those gaps"),
        remedy="replay executions from a CUDA graph (use_cuda_graph=True, trtexec "
               "--useCudaGraph) or run larger batches")
