"""Synthetic results documents for the gate and compare tests (and benchmarks/gate_speed.py).

Latencies follow a noise model of a busy 2-core machine (what our CI boxes are):

* per-execution log-normal jitter (``sigma`` on the log scale, default 0.08);
* drift: an AR(1) process on the log scale (coefficient 0.98, i.e. a correlation
  length of about 50 executions, stationary
  standard deviation ``drift_sigma``), as background load comes and goes;
* bursts of interference: with probability ``burst_rate`` per execution a burst of
  5-40 executions starts whose latencies are multiplied by 1.5-4x (another process
  taking the core);
* a run-level shift: every run's median moves by a log-normal factor with standard
  deviation ``run_sigma`` (frequency scaling, cache state, placement).

All draws come from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

from typing import Any

from pathlib import Path

import numpy as np

from trtcheck.results import (
    BackendInfo,
    BatchResult,
    BenchRun,
    BenchSettings,
    Environment,
    Finding,
    GpuInfo,
    ModelInspection,
    Results,
    TensorInfo,
    ToolInfo,
    save_results,
)
from trtcheck.stats import stability_findings, summarize


def noisy_latencies(rng: np.random.Generator, n: int, median_ms: float, sigma: float = 0.08,
                    drift_sigma: float = 0.02, burst_rate: float = 0.0005,
                    run_sigma: float = 0.01) -> np.ndarray:
    """``n`` latencies (ms) around ``median_ms`` under the noise model above."""
    shift = rng.normal(0.0, run_sigma)
    phi = 0.98
    eps = rng.normal(0.0, drift_sigma * np.sqrt(1 - phi ** 2), n)
    drift = np.empty(n)
    acc = rng.normal(0.0, drift_sigma)
    for i in range(n):
        acc = phi * acc + eps[i]
        drift[i] = acc
    jitter = rng.normal(0.0, sigma, n)
    lat = median_ms * np.exp(shift + drift + jitter)
    i = 0
    starts = np.flatnonzero(rng.random(n) < burst_rate)
    for s in starts:
        if s < i:
            continue
        length = int(rng.integers(5, 41))
        lat[s:s + length] *= rng.uniform(1.5, 4.0)
        i = s + length
    return lat


def environment(gpu: str = "NVIDIA H200", driver: str = "580.65", ort: str = "1.20.1",
                cpu: str = "AMD EPYC 9654") -> Environment:
    """A fixed environment fingerprint."""
    return Environment(hostname="ci-runner", os="Linux 6.8", machine="x86_64", cpu_model=cpu,
                       cpu_count=2, memory_total_bytes=24 * 2**30, python_version="3.11.9",
                       python_implementation="cpython", trtcheck_version="0.1.0",
                       packages={"onnxruntime": ort, "numpy": "2.1.0"},
                       gpus=[GpuInfo(name=gpu, driver_version=driver)] if gpu else [],
                       cuda_driver_version=driver if gpu else None)


def batch_result(batch_size: int, samples: np.ndarray) -> BatchResult:
    """A BatchResult with statistics computed by trtcheck.stats from ``samples``."""
    st = summarize(samples)
    qps = 1000.0 / st.median_ms
    return BatchResult(batch_size=batch_size, input_shapes={"x": [batch_size, 3, 224, 224]},
                       samples_ms=[float(x) for x in samples], stats=st,
                       throughput_queries_per_s=qps, throughput_samples_per_s=qps * batch_size,
                       measured_duration_s=float(np.sum(samples)) / 1000.0,
                       stopped_by="min_reached",
                       warnings=stability_findings(samples, st, where=f"batch {batch_size}"))


def bench_run(label: str, medians_ms: dict[int, float], n: int, seed: int,
              precision: str = "fp32", **noise: float) -> BenchRun:
    """One run over ``medians_ms`` (batch size -> median latency) with ``n`` samples each."""
    rng = np.random.default_rng(seed)
    batches = [batch_result(b, noisy_latencies(rng, n, m, **noise))
               for b, m in sorted(medians_ms.items())]
    return BenchRun(label=label, model_path="resnet18.onnx",
                    backend=BackendInfo(name="onnxruntime", version="1.20.1",
                                        device="CPU", precision=precision),
                    settings=BenchSettings(warmup_s=0.5, warmup_min_iterations=10,
                                           min_duration_s=2.0, min_samples=n,
                                           max_duration_s=60.0, max_samples=100_000,
                                           batch_sizes=sorted(medians_ms),
                                           input_source="random", seed=seed),
                    batches=batches)


def inspection(parameter_bytes: int = 46_800_000) -> ModelInspection:
    """A small ONNX inspection record with one lint."""
    return ModelInspection(path="resnet18.onnx", file_size_bytes=parameter_bytes + 20_000,
                           sha256="0" * 64, ir_version=9, opset={"": 17},
                           inputs=[TensorInfo(name="x", dtype="float32",
                                              shape=["batch", 3, 224, 224])],
                           outputs=[TensorInfo(name="y", dtype="float32", shape=["batch", 1000])],
                           node_count=69, op_histogram={"Conv": 20, "Relu": 17, "Gemm": 1},
                           parameter_count=parameter_bytes // 4, parameter_bytes=parameter_bytes,
                           initializer_dtypes={"float32": 102},
                           lints=[Finding(code="onnx-dynamic-batch", severity="info",
                                          message="batch axis is dynamic")])


def results(medians_ms: dict[int, float] | None = None, n: int = 1000, seed: int = 0,
            label: str = "onnxruntime-fp32", extra_runs: list[BenchRun] | None = None,
            env: Environment | None = None, parameter_bytes: int = 46_800_000,
            **noise: Any) -> Results:
    """A complete results document with one (or more) bench runs."""
    medians_ms = medians_ms or {1: 2.0, 8: 9.0}
    runs = [bench_run(label, medians_ms, n, seed, **noise)] + list(extra_runs or [])
    return Results(tool=ToolInfo(version="0.1.0", command=["trtcheck", "bench"]),
                   created_utc="2026-11-29T20:00:00Z", environment=env or environment(),
                   inspection=inspection(parameter_bytes), bench=runs)


def write(res: Results, path: Path) -> Path:
    """Save ``res`` with trtcheck.results.save_results and return the path."""
    return save_results(res, path)
