"""trtexec exports: the real files from tests/data/trtexec-exports (A100, TITAN RTX)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trtcheck.errors import InputError
from trtcheck.inspection.trtexec import find_exports, layer_time_table, load_trtexec_export


def test_resnet18_fp16_check_value(trtexec_exports: Path):
    insp = load_trtexec_export(trtexec_exports / "resnet18-a100-fp16")
    t = insp.timing
    assert t is not None
    assert t.layer_sum_ms == pytest.approx(1.017, abs=0.001)
    assert t.engine_mean_ms == pytest.approx(0.863, abs=0.001)
    assert t.iterations == 3698
    assert t.profiling_overhead_ratio == pytest.approx(1.016832 / 0.8623545 - 1, rel=1e-4)
    assert t.h2d_mean_ms == 0 and t.d2h_mean_ms == 0  # exported without data transfers
    assert insp.device_name == "NVIDIA A100 80GB PCIe" and insp.compute_capability == "8.0"
    assert insp.build_options["Precision"] == "FP32+FP16"
    assert insp.inference_options["CUDA Graph"] == "Enabled"


def test_resnet18_fp16_layers(trtexec_exports: Path):
    insp = load_trtexec_export(trtexec_exports / "resnet18-a100-fp16")
    assert insp.inspector_schema == "8.x/10.x" and insp.detailed
    assert len(insp.layers) == 36
    assert insp.reformat_count == 2
    assert insp.precision_mix == {"fp16": 34}
    first = insp.layers[1]
    assert first.name == "Conv_0 + Relu_1" and first.fused_ops == ["Conv_0", "Relu_1"]
    assert first.layer_type == "CaskConvolution" and first.precision == "fp16"
    assert first.tactic.startswith("trt_turing_cutlass_image_network_first_layer")
    assert first.weights_count == 9408 + 64 and first.weights_bytes == 2 * (9408 + 64)
    # all ResNet-18 parameters, in FP16
    assert sum(la.weights_count or 0 for la in insp.layers) == pytest.approx(11.69e6, rel=0.01)
    io = {t.name: t for t in insp.io_tensors}
    assert io["input.1"].mode == "input" and io["input.1"].dims == [32, 3, 224, 224]
    assert io["input.1"].dtype == "fp32" and io["input.1"].format == "Row major linear"
    assert io["191"].mode == "output"
    top = layer_time_table(insp, 3)
    assert top[0].name == "Conv_0 + Relu_1" and top[0].avg_time_ms == pytest.approx(0.111616)
    assert sum(la.time_pct or 0 for la in insp.layers) == pytest.approx(100, abs=0.01)
    assert [f.code for f in insp.lints] == ["engine-reformats"]
    assert "8.7% of layer time" in insp.lints[0].message


def test_fp32_engine(trtexec_exports: Path):
    insp = load_trtexec_export(trtexec_exports / "resnet18-a100-fp32")
    assert insp.precision_mix == {"fp32": 31}
    assert insp.timing.engine_mean_ms == pytest.approx(2.00003)  # summary: min,max,MEAN,...
    assert insp.timing.layer_sum_ms == pytest.approx(2.123776)
    assert sum(la.weights_bytes or 0 for la in insp.layers) == pytest.approx(4 * 11.69e6, rel=0.01)
    assert not any(f.code == "engine-fp32-layers" for f in insp.lints)


def test_qat_engines(trtexec_exports: Path):
    r = load_trtexec_export(trtexec_exports / "resnet18-a100-qat")
    assert r.precision_mix["int8"] == 32
    codes = {f.code for f in r.lints}
    assert "engine-unfused-qdq" in codes
    conv1 = next(la for la in r.layers if la.name.startswith("conv1.weight"))
    assert conv1.precision == "int8"  # INT8 weights, FP32 output: computes INT8
    m = load_trtexec_export(trtexec_exports / "mobilenet-qat-titanrtx")
    assert m.device_name == "NVIDIA TITAN RTX" and m.compute_capability == "7.5"
    assert m.timing.profile_iterations == 6610
    # averageMs is per inference: timeMs / count
    assert m.timing.layer_sum_ms == pytest.approx(0.4704, abs=1e-3)
    align = [f for f in m.lints if f.code == "engine-channel-alignment"]
    assert align and all("multiple of 16" in f.message for f in align)


def test_individual_files_and_errors(trtexec_exports: Path, tmp_path: Path):
    d = trtexec_exports / "resnet18-a100-fp16"
    graph_only = load_trtexec_export(d / "resnet.onnx.engine.graph.json")
    assert graph_only.timing is None and len(graph_only.layers) == 36
    two = load_trtexec_export([d / "resnet.onnx.engine.graph.json",
                               d / "resnet.onnx.engine.profile.json"])
    assert two.timing.layer_sum_ms == pytest.approx(1.016832)
    assert two.timing.engine_mean_ms is None and two.timing.profiling_overhead_ratio is None
    assert set(find_exports(d)) == {"graph", "profile", "timing", "metadata",
                                    "build.metadata", "profile.metadata"}
    with pytest.raises(InputError, match="engines found"):
        find_exports([trtexec_exports / "resnet18-a100-fp16", trtexec_exports / "resnet18-a100-qat"])
    with pytest.raises(InputError, match="no trtexec export files"):
        find_exports(tmp_path)
    bad = tmp_path / "x.profile.json"
    bad.write_text('{"not": "a list"}')
    with pytest.raises(InputError, match="not a trtexec profile"):
        load_trtexec_export(bad)
