"""trtexec exports: the real files from tests/data/trtexec-exports (A100, TITAN RTX)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trtcheck.errors import InputError
from trtcheck.inspection.engine.trtexec import find_exports, layer_time_table, load_trtexec_export


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


def _copy_export(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def _graph_file(folder: Path) -> Path:
    return next(folder.glob("*.graph.json"))


@pytest.mark.parametrize("bad_dim", ["3.5", "null", "true", "[1]", "1e400",
                                     "99999999999999999999999"])
def test_non_integer_dimension_is_one_input_error(trtexec_exports: Path, tmp_path: Path,
                                                  bad_dim: str):
    folder = _copy_export(trtexec_exports / "resnet18-a100-fp16", tmp_path / "e")
    g = _graph_file(folder)
    text = g.read_text()
    i = text.index('"Dimensions": [') + len('"Dimensions": [')
    g.write_text(text[:i] + bad_dim + ", " + text[i:])
    with pytest.raises(InputError) as e:
        load_trtexec_export(folder)
    assert "dimension" in e.value.message and g.name in e.value.message


def test_integral_float_dimension_is_accepted(trtexec_exports: Path, tmp_path: Path):
    folder = _copy_export(trtexec_exports / "resnet18-a100-fp16", tmp_path / "e")
    g = _graph_file(folder)
    text = g.read_text()
    i = text.index('"Dimensions": [') + len('"Dimensions": [')
    g.write_text(text[:i] + "3.0, " + text[i:])
    insp = load_trtexec_export(folder)
    assert any(t.dims and t.dims[0] == 3 for la in insp.layers for t in la.inputs)


def test_bad_bytes_and_control_characters_in_a_layer_name_keep_the_file(
        trtexec_exports: Path, tmp_path: Path):
    """One invalid UTF-8 byte, a raw control character and a lone surrogate in layer
    names: the file is read, the names keep them (escaped), and the results serialise."""
    folder = _copy_export(trtexec_exports / "resnet18-a100-fp16", tmp_path / "e")
    g = _graph_file(folder)
    data = g.read_bytes()
    data = data.replace(b'"Conv_0 + Relu_1"', b'"Conv_0\xff + Relu_1\x07"', 1)
    data = data.replace(b'"MaxPool_2"', b'"MaxPool_2\\ud800"', 1)
    g.write_bytes(data)
    prof = next(folder.glob("*.profile.json"))
    pdata = prof.read_bytes().replace(b'"Conv_0 + Relu_1"', b'"Conv_0\\\\xff + Relu_1\\u0007"')
    prof.write_bytes(pdata.replace(b'"MaxPool_2"', b'"MaxPool_2\\ud800"'))
    insp = load_trtexec_export(folder)
    names = [la.name for la in insp.layers]
    assert "Conv_0\\xff + Relu_1\x07" in names
    assert "MaxPool_2\\ud800" in names
    import json

    back = json.loads(insp.model_dump_json())  # serialises (no surrogate left)
    assert "Conv_0\\xff + Relu_1\x07" in [la["name"] for la in back["layers"]]


def test_name_only_export_does_not_call_outputs_inputs(tmp_path: Path):
    from trtcheck.load.engine_json import parse_layer_info

    insp = parse_layer_info({"Layers": ["conv1 + relu1", "fc"],
                             "Bindings": ["images", "logits"]})
    assert [t.mode for t in insp.io_tensors] == [None, None]
    detailed = parse_layer_info({"Layers": [
        {"Name": "fc", "Inputs": [{"Name": "images", "Dimensions": [1, 8]}],
         "Outputs": [{"Name": "logits", "Dimensions": [1, 2]}]}],
        "Bindings": ["images", "logits"]})
    assert [t.mode for t in detailed.io_tensors] == ["input", "output"]


@pytest.mark.parametrize("kind,doc", [
    ("profile", '[{"count": "many"}, {"name": "a", "averageMs": 1}]'),
    ("profile", '[{"name": {"x": 1}, "averageMs": 1}]'),
    ("profile", '[{"name": "a", "averageMs": "fast"}]'),
    ("profile", '[{"name": "a", "averageMs": NaN}]'),
    ("timing", '[{"computeMs": "1"}]'),
    ("timing", '[1, 2]'),
    ("timing", '[{"computeMs": 1, "startEnqMs": 5, "endEnqMs": 1}]'),
    ("graph", '{"Layers": [{"Name": "a", "Inputs": 5}]}'),
    ("graph", '{"Layers": [{"Name": "a", "Weights": {"Count": -4, "Type": "Half"}}]}'),
    ("graph", '{"Layers": [{"Name": ["a"]}]}'),
    ("graph", '{"Layers": [], "Bindings": {"a": 1}}'),
    ("graph", "[" * 100000 + "]" * 100000),
    ("graph", '{"Layers": [' + "9" * 5000 + "]}"),
])
def test_malformed_export_fields_are_one_input_error(tmp_path: Path, kind: str, doc: str):
    p = tmp_path / f"e.{kind}.json"
    p.write_text(doc)
    with pytest.raises(InputError):
        load_trtexec_export(p)


@pytest.mark.parametrize("kind,doc", [
    ("profile.metadata", '{"performance_summary": [1], "inference_options": 3, '
                         '"device_information": "x"}'),
    ("metadata", '[{"Name": {"a": 1}, "ComputeCapability": ["8", 0]}]'),
    ("build.metadata", '{"model_options": [1, 2], "build_options": null}'),
])
def test_odd_metadata_sections_are_ignored(tmp_path: Path, kind: str, doc: str):
    (tmp_path / "e.profile.json").write_text('[{"name": "a", "averageMs": 1}]')
    (tmp_path / f"e.{kind}.json").write_text(doc)
    insp = load_trtexec_export(tmp_path)
    assert [la.name for la in insp.layers] == ["a"]


@pytest.mark.parametrize("precision", ["FP32+FP16", "FP32+INT8", "FP32+FP16+INT8"])
def test_reduced_precision_requested_but_not_applied(trtexec_exports: Path, tmp_path: Path,
                                                     precision: str):
    """The real FP32 export with its build options saying a reduced precision was
    requested: every layer is FP32, so each requested precision gets
    ``engine-precision-not-applied``; the real FP16 and QAT exports, which run what they
    asked for, get none."""
    import json
    import shutil

    src = trtexec_exports / "resnet18-a100-fp32"
    dst = tmp_path / "export"
    shutil.copytree(src, dst)
    meta = next(dst.glob("*build.metadata.json"))
    doc = json.loads(meta.read_text())
    doc["build_options"]["Precision"] = precision
    meta.write_text(json.dumps(doc))
    insp = load_trtexec_export(dst)
    found = [f for f in insp.lints if f.code == "engine-precision-not-applied"]
    asked = [p.lower() for p in precision.split("+") if p != "FP32"]
    assert len(found) == len(asked)
    for f, p in zip(found, asked):
        assert f.severity == "warning"
        assert f"{p.upper()} was requested at build" in f.message and "no layer runs" in f.message
    for name in ("resnet18-a100-fp16", "resnet18-a100-qat", "resnet18-a100-fp32"):
        real = load_trtexec_export(trtexec_exports / name)
        assert "engine-precision-not-applied" not in {f.code for f in real.lints}, name
