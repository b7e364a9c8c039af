"""Contract tests of the TensorRT backend against a fake that enforces the real API's rules.

No machine here can run a TensorRT engine (docs/tensorrt.md), so the GPU path is checked
against ``tests/fake_trt.py``: asynchronous streams, device vs pinned memory, event
timing with a deterministic clock, profile checks, I/O address checks, graph capture.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_trt import (  # noqa: E402
    D2H_BYTES_PER_MS,
    EXEC_MS_BASE,
    EXEC_MS_PER_SAMPLE,
    H2D_BYTES_PER_MS,
    FakeContext,
    FakeCudart,
    FakeTrt,
    make_plan,
)

from trtcheck.backends import cuda_timing as ct  # noqa: E402
from trtcheck.backends.tensorrt import TensorRTBackend, default_runtime  # noqa: E402
from trtcheck.errors import EnvironmentProblem, InputError  # noqa: E402


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    p = tmp_path / "model.plan"
    p.write_bytes(make_plan())
    return p


@pytest.fixture
def fakes():
    cud = FakeCudart()
    trt = FakeTrt(cud)
    yield trt, cud
    ct.set_cudart(None)


def backend(plan: Path, fakes, **kw) -> TensorRTBackend:
    trt, cud = fakes
    return TensorRTBackend(plan, runtime="tensorrt", trt_module=trt, cudart_module=cud, **kw)


def x_of(batch: int) -> np.ndarray:
    return np.arange(batch * 48, dtype=np.float32).reshape(batch, 3, 4, 4)


def test_infer_outputs_and_event_timings(plan, fakes):
    trt, cud = fakes
    with backend(plan, fakes) as b:
        assert [t.name for t in b.input_specs()] == ["x"]
        assert b.input_specs()[0].shape == [None, 3, 4, 4]
        assert b.input_specs()[0].dtype == "float32"
        assert b.info.device == "Fake GPU" and b.info.version == "10.8.0.43"
        out = b.infer({"x": x_of(4)})
        np.testing.assert_array_equal(out.outputs["y"], 2 * x_of(4))
        c = out.components_ms
        nbytes = 4 * 48 * 4
        # the events bracket exactly the copies and the execution, on the backend's stream
        assert c["h2d_ms"] == pytest.approx(nbytes / H2D_BYTES_PER_MS)
        assert c["gpu_compute_ms"] == pytest.approx(EXEC_MS_BASE + 4 * EXEC_MS_PER_SAMPLE)
        assert c["d2h_ms"] == pytest.approx(nbytes / D2H_BYTES_PER_MS)
        assert c["host_enqueue_ms"] >= 0
        # a second batch size reallocates and still computes right
        out8 = b.infer({"x": x_of(8)})
        np.testing.assert_array_equal(out8.outputs["y"], 2 * x_of(8))
        assert out8.components_ms["gpu_compute_ms"] == pytest.approx(1.08)
        streams = {e["stream"] for e in trt.executions}
        assert streams == {b.stream.ptr} and b.stream.ptr != 0
    # deactivate frees every allocation, event and stream
    assert not cud.device_allocs and not cud.host_allocs and not cud.streams
    assert cud.events_live == 0


def test_shape_outside_profile_lists_min_opt_max(plan, fakes):
    with backend(plan, fakes) as b:
        with pytest.raises(InputError) as ei:
            b.infer({"x": x_of(9)})
        assert "min [1, 3, 4, 4], opt [4, 3, 4, 4], max [8, 3, 4, 4]" in ei.value.message
        assert ei.value.exit_code == 2
        with pytest.raises(InputError, match="outside optimization profile"):
            b.infer({"x": np.zeros((2, 3, 5, 4), np.float32)})
    with backend(plan, fakes, profile_index=1) as b:  # profile 1: batch 8..32
        assert b.profile["x"].min == [8, 3, 4, 4]
        with pytest.raises(InputError, match="max \\[32, 3, 4, 4\\]"):
            b.infer({"x": x_of(4)})
        np.testing.assert_array_equal(b.infer({"x": x_of(16)}).outputs["y"], 2 * x_of(16))
    with pytest.raises(InputError, match="2 optimization profile"):
        backend(plan, fakes, profile_index=2).activate()


def test_feed_names_checked(plan, fakes):
    with backend(plan, fakes) as b:
        with pytest.raises(InputError, match="missing x; unknown z"):
            b.infer({"z": x_of(1)})


def test_batch_that_does_not_fit(plan, fakes):
    trt, cud = fakes
    cud.memory_bytes = 4 * 48 * 4 * 2 + 100  # room for batch 4 in and out, not batch 8
    with backend(plan, fakes) as b:
        b.infer({"x": x_of(4)})
        with pytest.raises(InputError, match="does not fit in GPU memory") as ei:
            b.infer({"x": x_of(8)})
        assert "MiB free" in ei.value.message and "smaller batch" in ei.value.hint


def test_cuda_graph_capture_and_replay(plan, fakes):
    trt, cud = fakes
    with backend(plan, fakes, use_cuda_graph=True) as b:
        outs = [b.infer({"x": x_of(2)}) for _ in range(4)]
        for o in outs:
            np.testing.assert_array_equal(o.outputs["y"], 2 * x_of(2))
        # 1st: plain enqueue (TensorRT needs it after a shape change); 2nd: capture + launch
        assert cud.captures == 1 and cud.graph_launches == 3
        assert outs[-1].components_ms["gpu_compute_ms"] == pytest.approx(1.02)
        # a new shape: plain enqueue again, then a new graph
        b.infer({"x": x_of(3)})
        b.infer({"x": x_of(3)})
        assert cud.captures == 2
    assert [e["captured"] for e in trt.executions] == [False, True, False, True]


def test_no_gpu_is_environment_problem(plan):
    cud = FakeCudart(devices=0)
    try:
        b = TensorRTBackend(plan, runtime="tensorrt", trt_module=FakeTrt(cud), cudart_module=cud)
        with pytest.raises(EnvironmentProblem, match="no CUDA GPU is visible") as ei:
            b.activate()
        assert ei.value.exit_code == 3
    finally:
        ct.set_cudart(None)


def test_other_version_deserialize_none_is_translated(tmp_path, fakes):
    p = tmp_path / "old.plan"
    p.write_bytes(make_plan(version="10.7.0.23"))
    with pytest.raises(EnvironmentProblem) as ei:
        backend(p, fakes).activate()
    assert "built by TensorRT 10.7.0; this runtime is 10.8.0" in ei.value.message
    assert "rebuild" in ei.value.hint


def test_non_plan_files_fail_before_deserialize(tmp_path, fakes, demo_model):
    trt, _ = fakes
    with pytest.raises(InputError, match="ONNX model, not a TensorRT plan"):
        backend(demo_model, fakes).activate()
    p = tmp_path / "cut.plan"
    p.write_bytes(make_plan()[:20])
    with pytest.raises(InputError, match="truncated"):
        backend(p, fakes).activate()
    assert trt.executions == []


def test_missing_runtime_module_names_the_extra(plan):
    # the real import: neither tensorrt nor cuda-python's TensorRT is installed here
    try:
        import tensorrt  # noqa: F401
        pytest.fail("this test expects a machine without the tensorrt module")
    except ImportError:
        pass
    b = TensorRTBackend(plan, runtime="tensorrt")
    with pytest.raises(EnvironmentProblem) as ei:
        b.activate()
    assert ei.value.exit_code == 3
    assert "pip install tensorrt-cu12" in ei.value.hint


def test_fake_enforces_addresses_and_stream(fakes):
    """The fake has teeth: missing addresses or a bad stream make execute fail."""
    trt, cud = fakes
    logs = []
    eng = trt._deserialize(type("L", (), {"log": lambda self, s, m: logs.append(m)})(),
                           make_plan())
    ctx: FakeContext = eng.create_execution_context()
    s = cud.cudaStreamCreateWithFlags(1)[1]
    assert ctx.set_input_shape("x", (2, 3, 4, 4))
    assert not ctx.set_input_shape("x", (9, 3, 4, 4))
    assert not ctx.execute_async_v3(int(s))
    assert "Neither address or allocator is set" in logs[-1]
    d = cud.cudaMalloc(2 * 48 * 4)[1]
    ctx.set_tensor_address("x", d)
    ctx.set_tensor_address("y", d)
    assert not ctx.execute_async_v3(0)  # not a live stream handle
    assert ctx.execute_async_v3(int(s))


def test_inspection_profiles_memory_and_layer_profiler(plan, fakes):
    with backend(plan, fakes) as b:
        profs = b.profiles()
        assert [p.shapes["x"].max[0] for p in profs] == [8, 32]
        mem = b.memory()
        assert mem.device_memory_bytes_per_profile == {0: 8 * 48 * 4 * 2, 1: 32 * 48 * 4 * 2}
        assert mem.weights_bytes == 36 and mem.weights_source == "engine_stat"
        assert mem.gpu_total_bytes == 1 << 30
        insp = b.engine_inspection()
        assert insp.inspector_schema == "11.x" and insp.layers[0].tactic == "scale_kernel"
        assert insp.profiles == profs and insp.memory.weights_bytes == 36
        times = b.profile_layers({"x": x_of(1)}, iterations=4)
        assert times == {"scale": pytest.approx(0.75), "copy": pytest.approx(0.5)}


def test_runtime_choice(monkeypatch, plan):
    monkeypatch.delenv("POLYGRAPHY_USE_TENSORRT_RTX", raising=False)
    assert default_runtime() == "tensorrt"
    monkeypatch.setenv("POLYGRAPHY_USE_TENSORRT_RTX", "1")
    assert default_runtime() == "tensorrt_rtx"
    with pytest.raises(InputError, match="unknown TensorRT runtime"):
        TensorRTBackend(plan, runtime="onnx")


def test_cuda_timing_errors_and_buffers(fakes):
    _, cud = fakes
    ct.set_cudart(cud)
    with pytest.raises(ct.CudaError) as ei:
        ct.check((35,), "cudaFoo")
    assert ei.value.exit_code == 3 and ei.value.code == 35 and "nvidia-smi" in ei.value.hint
    assert ct.check((0, 7), "x") == 7 and ct.check((0, 1, 2), "x") == (1, 2)
    cud.devices = 0
    assert ct.device_count() == 0  # no driver: 0, not an exception
    cud.devices = 1
    h = ct.PinnedBuffer(16)
    with pytest.raises(ValueError, match="does not fit"):
        h.view(np.float32, (5,))
    h.view(np.float32, (4,))[:] = 1.5
    d = ct.DeviceBuffer(16)
    s = ct.Stream()
    timer = ct.EventTimer(s, ["copy"])
    timer.start("copy")
    ct.memcpy_async(d.ptr, h.ptr, 16, "h2d", s)
    timer.end("copy")
    assert timer.elapsed_ms("copy") == pytest.approx(16 / H2D_BYTES_PER_MS)
    with pytest.raises(ct.CudaError):  # wrong direction: the fake checks where memory lives
        ct.memcpy_async(d.ptr, h.ptr, 16, "d2h", s)
    with pytest.raises(ValueError):
        ct.memcpy_async(d.ptr, h.ptr, 16, "sideways", s)
    timer.destroy()
    for x in (h, d, s):
        (x.free if hasattr(x, "free") else x.destroy)()
    assert not cud.device_allocs and not cud.host_allocs and cud.events_live == 0


def test_missing_cuda_python(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_cuda(name, *a, **k):
        if name == "cuda" or name.startswith("cuda."):
            raise ImportError("no cuda")
        return real_import(name, *a, **k)

    ct.set_cudart(None)
    monkeypatch.setattr(builtins, "__import__", no_cuda)
    try:
        with pytest.raises(EnvironmentProblem, match="cuda-python is not installed") as ei:
            ct.cudart()
        assert "cuda-python>=12,<13" in ei.value.hint
    finally:
        monkeypatch.setattr(builtins, "__import__", real_import)
        ct.set_cudart(None)
