import time

import numpy as np
import pytest

from conftest import interruptible
from trtcheck.backends.base import Backend, InferOutput
from trtcheck.errors import InputError
from trtcheck.measure.bench.bench import StopRule, run_bench
from trtcheck.results import BackendInfo, TensorInfo


class FakeBackend(Backend):
    """Batch time = 1 ms + 0.5 ms per sample (busy wait, so the host clock sees it)."""

    def __init__(self, shape=("n", 4)):
        self.shape = list(shape)
        self.calls = []

    @property
    def info(self):
        return BackendInfo(name="fake", version="1", device="test", precision="fp32")

    def activate(self):
        self._active = True

    def deactivate(self):
        self._active = False

    def input_specs(self):
        return [TensorInfo(name="x", dtype="float32", shape=self.shape)]

    def infer(self, feed):
        b = feed["x"].shape[0]
        self.calls.append(b)
        end = time.perf_counter() + (1.0 + 0.5 * b) / 1000
        while time.perf_counter() < end:
            pass
        return InferOutput(outputs={"y": feed["x"]}, components_ms={"gpu_compute_ms": 0.5 * b})


def test_stop_rule_min_samples_and_duration(monkeypatch):
    clock = _virtual_clock(monkeypatch)  # T(b) = 1 + 0.5 b ms, exactly
    be = VirtualTimeBackend(clock)
    rule = StopRule(warmup_s=0, warmup_min_iterations=2, min_duration_s=0, min_samples=25,
                    median_precision=0)  # the minimums alone
    run = run_bench(be, "m", [1, 4], rule=rule)
    assert [b.batch_size for b in run.batches] == [1, 4]
    for b in run.batches:
        assert b.stats.count == 25 and len(b.samples_ms) == 25
        assert len(b.warmup_samples_ms) == 2
        assert len(b.components_ms["gpu_compute_ms"]) == 25
        assert b.component_stats["gpu_compute_ms"].median_ms == pytest.approx(0.5 * b.batch_size)
        assert b.stopped_by == "min_reached"
    rule = StopRule(warmup_s=0, warmup_min_iterations=0, min_duration_s=0.1, min_samples=1)
    run = run_bench(be, "m", [1], rule=rule)
    # 1.5 ms per run: 100 ms take 67 runs
    assert run.batches[0].measured_duration_s >= 0.1 and run.batches[0].stats.count >= 67
    rule = StopRule(warmup_s=0, min_duration_s=10, min_samples=1, max_duration_s=0.05)
    assert run_bench(be, "m", [1], rule=rule).batches[0].stopped_by == "max_duration"


class VirtualClock:
    """A synthetic ``time.perf_counter_ns``: it stands still until :meth:`advance_ms`."""

    def __init__(self) -> None:
        self.now_ns = 0

    def perf_counter_ns(self) -> int:
        return self.now_ns

    def advance_ms(self, ms: float) -> None:
        self.now_ns += round(ms * 1e6)


class VirtualTimeBackend(FakeBackend):
    """Batch time = 1 ms + 0.5 ms per sample, exactly, on a :class:`VirtualClock`."""

    def __init__(self, clock: VirtualClock):
        super().__init__()
        self.clock = clock

    def infer(self, feed):
        b = feed["x"].shape[0]
        self.calls.append(b)
        self.clock.advance_ms(1.0 + 0.5 * b)
        return InferOutput(outputs={"y": feed["x"]}, components_ms={"gpu_compute_ms": 0.5 * b})


def _virtual_clock(monkeypatch) -> VirtualClock:
    """A :class:`VirtualClock` that ``run_bench`` reads instead of the host clock."""
    import types

    import trtcheck.measure.bench.bench as bench_module

    clock = VirtualClock()
    monkeypatch.setattr(bench_module, "time",
                        types.SimpleNamespace(perf_counter_ns=clock.perf_counter_ns))
    return clock


def test_throughput_and_scaling_math(monkeypatch):
    be = VirtualTimeBackend(_virtual_clock(monkeypatch))
    rule = StopRule(warmup_s=0, warmup_min_iterations=1, min_duration_s=0, min_samples=30)
    run = run_bench(be, "m", [1, 8], rule=rule)
    b1, b8 = run.batches
    # T(1) = 1.5 ms, T(8) = 5 ms on the synthetic clock
    assert b1.stats.min_ms == b1.stats.median_ms == pytest.approx(1.5)
    assert b8.stats.median_ms == pytest.approx(5.0)
    assert b1.throughput_queries_per_s == pytest.approx(1000 / 1.5)
    assert b8.throughput_samples_per_s == pytest.approx(8 * 1000 / 5.0)
    assert b1.throughput_gain_vs_batch1 == pytest.approx(1.0)
    assert b8.throughput_gain_vs_batch1 == pytest.approx(8 * 1.5 / 5.0)
    assert b8.scaling_efficiency == pytest.approx(8 * 1.5 / 5.0 / 8)
    assert run.backend.name == "fake" and run.label == "fake-fp32"


def test_shapes_resolved_before_anything_runs():
    be = FakeBackend(shape=("n", "k"))
    with pytest.raises(InputError, match="x axis 1"):
        run_bench(be, "m", [1, 2], rule=StopRule(warmup_s=0, min_duration_s=0, min_samples=1))
    assert be.calls == []
    with pytest.raises(InputError):
        run_bench(be, "m", [0], rule=StopRule())


def test_bad_rules():
    for kw in [dict(min_samples=0), dict(max_duration_s=0), dict(min_samples=10, max_samples=5),
               dict(warmup_s=-1)]:
        with pytest.raises(InputError):
            StopRule(**kw)


def test_onnxruntime_backend_on_a_tiny_model(tmp_path):
    import onnx
    from onnx_builders import matmul_model

    onnx.save(matmul_model(scale=2.0), tmp_path / "t.onnx")
    from trtcheck.backends.registry import open_backend

    with open_backend(tmp_path / "t.onnx") as be:
        assert be.input_specs()[0].shape == ["n", 4]
        out = be.infer({"x": np.ones((3, 4), np.float32)})
        assert np.allclose(out.outputs["y"], 2.0)
        run = run_bench(be, str(tmp_path / "t.onnx"), [1, 2],
                        rule=StopRule(warmup_s=0, min_duration_s=0, min_samples=5))
        assert run.backend.name == "onnxruntime" and "CPUExecutionProvider" in run.backend.providers
        with pytest.raises(InputError, match="failed to run"):
            be.infer({"x": np.ones((3, 5), np.float32)})
    with pytest.raises(InputError, match="unknown backend"):
        open_backend(tmp_path / "t.onnx", "nope")


class FailingAtBatch(FakeBackend):
    """Runs out of memory at the batch sizes in ``oom`` and is stopped (Ctrl-C) on the
    ``interrupt_at`` call of a batch size."""

    def __init__(self, oom=(), interrupt_batch=None, interrupt_at=3, error=MemoryError):
        super().__init__()
        self.oom, self.interrupt_batch, self.interrupt_at = set(oom), interrupt_batch, interrupt_at
        self.error = error

    def infer(self, feed):
        b = feed["x"].shape[0]
        if b in self.oom:
            raise self.error() if self.error is MemoryError else self.error
        if b == self.interrupt_batch and self.calls.count(b) + 1 >= self.interrupt_at:
            raise KeyboardInterrupt
        return super().infer(feed)


QUICK = StopRule(warmup_s=0, warmup_min_iterations=2, min_duration_s=0, min_samples=10,
                 median_precision=0)


class Jittery(FakeBackend):
    """Every third call 4x slower: a wide median interval at few samples."""

    def infer(self, feed):
        out = super().infer(feed)
        if len(self.calls) % 3 == 0:
            end = time.perf_counter() + 0.004
            while time.perf_counter() < end:
                pass
        return out


def test_the_bench_samples_until_the_median_is_precise_within_its_time_bound():
    from trtcheck.stats import median_relative_halfwidth

    rule = StopRule(warmup_s=0, warmup_min_iterations=0, min_duration_s=0, min_samples=8,
                    median_precision=0.05, precision_bound_s=5.0)
    run = run_bench(Jittery(), "m", [1], rule=rule)
    b = run.batches[0]
    assert b.stopped_by in ("precision_reached", "precision_bound")
    if b.stopped_by == "precision_reached":
        assert median_relative_halfwidth(b.samples_ms) <= 0.05 and b.stats.count > 8
    assert b.measured_duration_s <= 5.0 + 0.5
    assert run.settings.median_precision == 0.05 and run.settings.precision_bound_s == 5.0
    # a bound shorter than the minimums never cuts them short, and stops the extra part
    rule = StopRule(warmup_s=0, warmup_min_iterations=0, min_duration_s=0.05, min_samples=8,
                    median_precision=0.0001, precision_bound_s=0.0)
    b = run_bench(Jittery(), "m", [1], rule=rule).batches[0]
    assert b.stopped_by == "precision_bound" and b.stats.count >= 8
    assert b.measured_duration_s >= 0.05


def test_out_of_memory_deep_in_a_long_message_keeps_its_label_and_byte_count():
    long_context = "while running node /model/Conv_%d: " * 40
    ort = InputError(long_context % tuple(range(40)) + "onnxruntime::BFCArena::AllocateRawInternal "
                     "Failed to allocate memory for requested buffer of size 68719476736")
    run = run_bench(FailingAtBatch(oom={8}, error=ort), "m", [1, 8], rule=QUICK)
    (row,) = run.failed_batches
    assert row.reason == "out-of-memory" and row.requested_bytes == 68719476736
    assert "68,719,476,736 bytes (64 GiB)" in row.message and len(row.message) < 400


def test_out_of_memory_at_one_batch_is_a_row_and_the_sweep_goes_on():
    be = FailingAtBatch(oom={4})
    run = run_bench(be, "m", [1, 4, 8], rule=QUICK)
    assert [b.batch_size for b in run.batches] == [1, 8]
    (row,) = run.failed_batches
    assert row.batch_size == 4 and row.reason == "out-of-memory"
    assert "shape" not in row.message and run.incomplete is None
    gpu = FailingAtBatch(oom={8}, error=InputError(
        "this batch does not fit in GPU memory: 96.0 MiB more needed for 'x'"))
    run = run_bench(gpu, "m", [1, 8], rule=QUICK)
    assert run.failed_batches[0].reason == "out-of-memory"
    assert "GPU memory" in run.failed_batches[0].message
    # every batch size out of memory: nothing measured, one clear error naming the batch
    with pytest.raises(InputError, match="out of memory at batch 2") as exc:
        run_bench(FailingAtBatch(oom={2, 4}), "m", [2, 4], rule=QUICK)
    assert "shapes" not in exc.value.message


def test_interrupt_keeps_the_finished_batch_sizes():
    be = FailingAtBatch(interrupt_batch=4)
    run = run_bench(be, "m", [1, 2, 4, 8], rule=QUICK)
    assert [b.batch_size for b in run.batches] == [1, 2]
    assert run.incomplete.startswith("interrupted by SIGINT at batch 4")
    assert "2 of 4 batch size(s) measured" in run.incomplete


def test_first_calls_are_kept_apart_from_the_samples():
    class SlowStart(FakeBackend):
        def infer(self, feed):
            b = feed["x"].shape[0]
            first = b not in self.calls
            if first:
                time.sleep(0.03)  # a new shape: allocation, kernel choice
            return super().infer(feed)

    run = run_bench(SlowStart(), "m", [1, 2], rule=QUICK)
    for b in run.batches:
        assert b.first_call_ms >= 30 and b.first_call_ms == b.warmup_samples_ms[0]
        assert b.first_call_ms not in b.samples_ms
    assert run.first_call_ms == run.batches[0].first_call_ms


def test_a_backend_returning_before_its_work_is_flagged_implausible():
    class EnqueueOnly(FakeBackend):
        """Reports 5 ms of GPU compute but returns at once (no synchronisation)."""

        def infer(self, feed):
            return InferOutput(outputs={}, components_ms={"gpu_compute_ms": 5.0})

    from trtcheck.measure.bench.bench import plausibility_findings
    from trtcheck.stats import summarize

    run = run_bench(EnqueueOnly(), "m", [1], rule=QUICK)
    v = run.batches[0].validity
    assert [f.code for f in v if f.severity == "error"] == ["implausible-latency"]
    assert "shorter than the GPU compute" in v[0].message
    # the bandwidth rule: 64 MB read in 2 us is 32 TB/s
    st = summarize([0.002] * 10)
    (f,) = plausibility_findings(st, 64 * 2**20, {}, "batch 1")
    assert f.code == "implausible-latency" and "TB/s" in f.message
    assert plausibility_findings(summarize([1.0] * 10), 64 * 2**20, {}, "batch 1") == []
    # an honest backend is plausible
    honest = run_bench(FakeBackend(), "m", [1], rule=QUICK).batches[0]
    assert not [f for f in honest.validity if f.severity == "error"]
    assert honest.input_bytes == 16


def test_sigterm_during_the_cli_sweep_writes_results_marked_incomplete(tmp_path):
    import json
    import signal
    import subprocess
    import sys

    import onnx
    from onnx_builders import matmul_model

    onnx.save(matmul_model(), tmp_path / "t.onnx")
    out = tmp_path / "out.json"
    proc = subprocess.Popen([sys.executable, "-m", "trtcheck", "bench", str(tmp_path / "t.onnx"),
                             "--batch", "1,2,4,8,16,32", "--warmup", "0", "--min-duration", "1",
                             "-o", str(out), "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    line = proc.stderr.readline()  # "benchmarking ..." is logged just before measuring
    assert "benchmarking" in line
    time.sleep(2.5)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "marked incomplete" in stderr
    data = json.loads(out.read_text())
    assert data["incomplete"].startswith("interrupted by SIGTERM")
    assert len(data["bench"][0]["batches"]) < 6
    assert json.loads(stdout)["incomplete"] == data["incomplete"]


class WithRate(FakeBackend):
    """A model with a batch input and an int64 scalar sample rate (silero-vad's ``sr``)."""

    def input_specs(self):
        return [TensorInfo(name="x", dtype="float32", shape=self.shape),
                TensorInfo(name="sr", dtype="int64", shape=[])]


def test_a_random_rank0_control_input_is_warned_and_a_given_value_is_not():
    run = run_bench(WithRate(), "m", [1], rule=QUICK)
    (w,) = [f for f in run.batches[0].warnings if f.code == "random-control-input"]
    assert "'sr'" in w.message and "--input-value sr=VALUE" in w.remedy
    run = run_bench(WithRate(), "m", [1], rule=QUICK, values={"sr": 16000})
    assert not [f for f in run.batches[0].warnings if f.code == "random-control-input"]


def test_a_gpu_timing_below_one_round_trip_is_implausible():
    """An unsynchronised GPU runner timing 0.0033 ms (the issue's case) with tiny inputs
    passes the bandwidth rule, but no GPU launches and synchronises a kernel that fast:
    on a GPU it is implausible; the same number on a CPU backend is not judged by it."""
    from trtcheck.measure.bench.bench import (
        MIN_GPU_ROUND_TRIP_MS,
        plausibility_findings,
        runs_on_gpu,
    )
    from trtcheck.results.bench import BackendInfo
    from trtcheck.stats import summarize

    st = summarize([0.0033] * 50)
    (f,) = plausibility_findings(st, 16, {}, "batch 1", gpu=True)
    assert f.code == "implausible-latency" and f.severity == "error"
    assert "0.0033 ms on a GPU" in f.message and f"{MIN_GPU_ROUND_TRIP_MS:g} ms" in f.message
    assert plausibility_findings(st, 16, {}, "batch 1", gpu=False) == []
    assert plausibility_findings(summarize([0.02] * 50), 16, {}, "batch 1", gpu=True) == []
    gpu = BackendInfo(name="tensorrt", version="10", device="NVIDIA H100", precision="fp16")
    ort_cuda = BackendInfo(name="onnxruntime", version="1", device="CUDA",
                           precision="fp32", providers=["CUDAExecutionProvider"])
    cpu = BackendInfo(name="onnxruntime", version="1", device="CPU (AMD EPYC)",
                      precision="fp32", providers=["CPUExecutionProvider"])
    assert runs_on_gpu(gpu) and runs_on_gpu(ort_cuda) and not runs_on_gpu(cpu)
