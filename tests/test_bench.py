import time

import numpy as np
import pytest

from trtcheck.backends.base import Backend, InferOutput
from trtcheck.errors import InputError
from trtcheck.measure.bench import StopRule, run_bench
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


def test_stop_rule_min_samples_and_duration():
    be = FakeBackend()
    rule = StopRule(warmup_s=0, warmup_min_iterations=2, min_duration_s=0, min_samples=25)
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
    assert run.batches[0].measured_duration_s >= 0.1 and run.batches[0].stats.count > 20
    rule = StopRule(warmup_s=0, min_duration_s=10, min_samples=1, max_duration_s=0.05)
    assert run_bench(be, "m", [1], rule=rule).batches[0].stopped_by == "max_duration"


def test_throughput_and_scaling_math():
    be = FakeBackend()
    rule = StopRule(warmup_s=0, warmup_min_iterations=1, min_duration_s=0, min_samples=30)
    run = run_bench(be, "m", [1, 8], rule=rule)
    b1, b8 = run.batches
    assert b1.throughput_queries_per_s == pytest.approx(1000 / b1.stats.median_ms)
    assert b8.throughput_samples_per_s == pytest.approx(8 * 1000 / b8.stats.median_ms)
    assert b1.throughput_gain_vs_batch1 == pytest.approx(1.0)
    # T(1) ~ 1.5 ms, T(8) ~ 5 ms: gain ~ 8*1.5/5 = 2.4; a busy wait can only run longer
    # than asked on a loaded machine, so check the exact relations and loose bounds
    assert b8.throughput_gain_vs_batch1 == pytest.approx(
        b8.throughput_samples_per_s / b1.throughput_samples_per_s)
    assert 1.2 < b8.throughput_gain_vs_batch1 < 8
    assert b8.scaling_efficiency == pytest.approx(b8.throughput_gain_vs_batch1 / 8)
    assert b1.stats.min_ms >= 1.5 and b8.stats.min_ms >= 5.0
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
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.eye(4, dtype=np.float32) * 2, "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])],
                          initializer=[w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "t.onnx")
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
