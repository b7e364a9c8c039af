"""Results documents for tests: small, fixed and valid against the results model."""

from trtcheck.fingerprint import collect_environment
from trtcheck.results import (
    BackendInfo,
    BatchResult,
    BenchRun,
    BenchSettings,
    Results,
    ToolInfo,
)
from trtcheck.stats import summarize


def make_results(samples=(1.0, 1.1, 0.9, 1.05)) -> Results:
    """A results document with one bench run (``fake-fp32``, batch 1) whose latency samples
    are ``samples`` (ms)."""
    st = summarize(samples)
    run = BenchRun(
        label="fake-fp32", model_path="m.onnx",
        backend=BackendInfo(name="fake", version="0", device="CPU", providers=["X"]),
        settings=BenchSettings(warmup_s=0, warmup_min_iterations=0, min_duration_s=0,
                               min_samples=1, max_duration_s=1, max_samples=10,
                               batch_sizes=[1], input_source="random-uniform", seed=0),
        batches=[BatchResult(batch_size=1, input_shapes={"x": [1, 3]}, samples_ms=list(samples),
                             components_ms={"gpu_compute_ms": [0.5] * len(samples)},
                             stats=st, throughput_queries_per_s=1000 / st.median_ms,
                             throughput_samples_per_s=1000 / st.median_ms,
                             measured_duration_s=0.1, stopped_by="min_reached")])
    return Results(tool=ToolInfo(version="0.1.0", command=["trtcheck", "bench"]),
                   created_utc="2026-11-29T00:00:00Z", environment=collect_environment(),
                   bench=[run])
