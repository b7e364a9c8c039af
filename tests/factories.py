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


def one_instance_tune_calibration():
    """A tune search's queueing calibration and T(b) of one instance (T(1) 2 ms, T(8)
    4 ms, no window, 100 req/s, client P50 about 3 ms, a fixed 0.5 ms per-request delay):
    ``(LiveCalibration, InstanceCurves)``."""
    import numpy as np

    from trtcheck.analyze import tune_plan as tp
    from trtcheck.analyze.advice.curve import make_curve
    from trtcheck.analyze.advice.live_calibration import LiveCalibration, LiveObservation

    rng = np.random.default_rng(0)
    obs = LiveObservation(window_us=0.0, max_batch_size=8, preferred_batch_sizes=(),
                          instances=1, rate_per_s=100.0, batch_stats={1: (1000, 2000.0)},
                          queue_mean_ms=0.1, compute_mean_ms=2.0, server_request_mean_ms=2.2,
                          mean_batch=1.0, client_latencies_ms=rng.normal(3.0, 0.2, 500))
    curve = make_curve([(1, 2.0), (8, 4.0)], source="test")
    cal = LiveCalibration(curve=curve, request_delay_ms=(0.5,) * 200,
                          per_batch_overhead_ms=0.0, observation=obs)
    return cal, tp.InstanceCurves(curve, {1: 1.0}, {1: "none"}, 0.0, "assumed", {1: [0]}, 8)
