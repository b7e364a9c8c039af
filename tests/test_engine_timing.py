"""The enqueue-bound judgement on recorded component timings."""

from __future__ import annotations

from trtcheck.analyze.derived.engine_timing import enqueue_bound_finding
from trtcheck.results.bench import BatchResult
from trtcheck.stats import summarize


def batch(enqueue_ms: float, gpu_ms: float) -> BatchResult:
    samples = [gpu_ms + 0.05] * 5
    return BatchResult(
        batch_size=1, input_shapes={"x": [1, 4096]}, samples_ms=samples,
        components_ms={"host_enqueue_ms": [enqueue_ms] * 5, "gpu_compute_ms": [gpu_ms] * 5},
        stats=summarize(samples),
        component_stats={"host_enqueue_ms": summarize([enqueue_ms] * 5),
                         "gpu_compute_ms": summarize([gpu_ms] * 5)},
        throughput_queries_per_s=1.0, throughput_samples_per_s=1.0,
        measured_duration_s=1.0, stopped_by="min_reached")


def test_enqueue_bound():
    # the H200 shim numbers at batch 1: enqueue 0.094 ms, events 0.104 ms
    f = enqueue_bound_finding(batch(0.094, 0.1045))
    assert f is not None and f.code == "enqueue-bound" and "CUDA graph" in f.remedy
    # batch 1024: enqueue 0.35 ms, compute 0.70 ms -> just under the threshold
    assert enqueue_bound_finding(batch(0.3486, 0.7020)) is None
    # graph replay: 0.011 ms to launch 0.19 ms of work
    assert enqueue_bound_finding(batch(0.0115, 0.1905)) is None


def test_missing_components():
    b = batch(0.1, 0.1).model_copy(update={"component_stats": {}})
    assert enqueue_bound_finding(b) is None
