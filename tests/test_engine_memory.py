"""Engine memory estimates: pure functions over recorded numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from trtcheck.inspection.engine.engine_memory import (
    activation_bytes,
    io_bytes_per_sample,
    largest_batch_that_fits,
    memory_summary,
    need_bytes,
    onnx_initializer_bytes,
    tensor_bytes,
    weights_from_layers,
)
from trtcheck.inspection.engine.trtexec import load_trtexec_export
from trtcheck.results.engine import (
    EngineInspection,
    EngineMemory,
    EngineTensor,
    OptimizationProfile,
    ProfileShape,
)


def test_tensor_and_io_bytes(trtexec_exports: Path):
    assert tensor_bytes([2, 3], "fp16") == 12
    assert tensor_bytes([-1, 3], "fp32") is None and tensor_bytes([2], "weird") is None
    insp = load_trtexec_export(trtexec_exports / "resnet18-a100-fp16")
    assert io_bytes_per_sample(insp.io_tensors) == 3 * 224 * 224 * 4 + 1000 * 4


def test_weights(trtexec_exports: Path, demo_model: Path):
    fp32 = load_trtexec_export(trtexec_exports / "resnet18-a100-fp32")
    assert weights_from_layers(fp32) == 46738848  # 11.68 M parameters x 4 bytes
    assert onnx_initializer_bytes(demo_model) == pytest.approx(11.69e6 * 4, rel=0.01)


def test_activation_model():
    assert activation_bytes(3, 400, 8) == 400        # static allocation: max-shape size
    assert activation_bytes(16, 400, 8) == 800       # linear extrapolation beyond the profile
    with pytest.raises(ValueError):
        activation_bytes(0, 400, 8)
    assert need_bytes(4, weights=100, device_memory_at_max=400, max_batch=8,
                      io_per_sample=10, contexts=2) == 100 + 2 * (400 + 40)


def test_largest_batch_worked_example():
    kw = dict(weights=100, device_memory_at_max=400, max_batch=8, io_per_sample=10)
    # budget = 900: within the profile everything up to 8 fits -> the profile limits
    fit = largest_batch_that_fits(1000, **kw)
    assert (fit.batch, fit.limited_by, fit.budget_bytes) == (8, "profile", 900)
    # a rebuilt engine: 100 + 50 b + 10 b <= 900 -> b = 13 (need(13) = 880, need(14) = 940)
    fit = largest_batch_that_fits(1000, within_profile=False, **kw)
    assert (fit.batch, fit.limited_by, fit.need_bytes) == (13, "memory", 880)
    assert largest_batch_that_fits(400, **kw).batch == 0
    assert largest_batch_that_fits(2000, contexts=2, within_profile=False, **kw).batch == 14
    with pytest.raises(ValueError):
        largest_batch_that_fits(1000, headroom_fraction=1.0, **kw)


def test_memory_summary():
    io = [EngineTensor(name="x", dims=[-1, 3, 4, 4], dtype="fp32", mode="input"),
          EngineTensor(name="y", dims=[-1, 10], dtype="fp32", mode="output")]
    prof = OptimizationProfile(index=0, shapes={"x": ProfileShape(
        min=[1, 3, 4, 4], opt=[4, 3, 4, 4], max=[64, 3, 4, 4])})
    insp = EngineInspection(source="plan", path="m.plan", io_tensors=io, profiles=[prof])
    rec = EngineMemory(weights_bytes=10_000, weights_source="engine_stat",
                       device_memory_bytes_per_profile={0: 50_000},
                       gpu_free_bytes=100_000, gpu_total_bytes=200_000)
    mem = memory_summary(insp, plan_size_bytes=12345, recorded=rec)
    assert mem.io_bytes_per_sample == (48 + 10) * 4
    # 10000 + 50000 + 232 b <= 90000 -> b <= 129, capped by the profile max 64
    assert mem.largest_batch_fits == 64 and "limited by profile" in mem.notes[-1]
    bare = memory_summary(insp)
    assert bare.largest_batch_fits is None and "not estimated" in bare.notes[-1]
