"""Engine-inspector JSON: both schemas, names-only engines, lints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trtcheck.errors import InputError
from trtcheck.inspection.engine.engine_json import lint_engine, load_layer_info
from trtcheck.load.engine_json import parse_layer_info, split_format_datatype


def t11(name, dims, dtype, fmt="Row major linear"):
    return {"Name": name, "Location": "Device", "Dimensions": dims, "Datatype": dtype,
            "Format": fmt}


#: a TensorRT 11-style document: I/O Tensors, Datatype and Format split
DOC_11 = {
    "Layers": [
        {"Name": "conv1 + relu1", "LayerType": "CaskConvolution",
         "Inputs": [t11("images", [1, 3, 224, 224], "FP16")],
         "Outputs": [t11("c1", [1, 30, 112, 112], "FP16", "Channel major where channel % 8 == 0")],
         "Weights": {"Type": "Half", "Count": 810}, "Bias": {"Type": "Half", "Count": 30},
         "TacticName": "sm90_xmma_fprop", "Metadata": "[ONNX Layer: /conv1/Conv]\x1e[ONNX Layer: /relu1/Relu]"},
        {"Name": "fc", "LayerType": "CaskGemmMatrixMultiply",
         "Inputs": [t11("c1", [1, 30, 112, 112], "FP16")],
         "Outputs": [t11("fc_out", [1, 10], "FP32")],
         "Weights": {"Type": "Float", "Count": 100}},
        {"Name": "/q/QuantizeLinear", "LayerType": "Quantize",
         "Inputs": [t11("fc_out", [1, 10], "FP32")], "Outputs": [t11("q", [1, 10], "Int8")]},
        {"Name": "/dq/DequantizeLinear", "LayerType": "Dequantize",
         "Inputs": [t11("q", [1, 10], "Int8")], "Outputs": [t11("logits", [1, 10], "FP32")]},
    ],
    "I/O Tensors": [{"Name": "images", "Mode": "Input", "Datatype": "FP16",
                     "Format": "Row major linear", "Dimensions": [-1, 3, 224, 224]},
                    {"Name": "logits", "Mode": "Output", "Datatype": "FP32",
                     "Format": "Row major linear", "Dimensions": [-1, 10]}],
}


def test_split_format_datatype():
    assert split_format_datatype("Row major linear FP32") == ("fp32", "Row major linear")
    assert split_format_datatype("Channel major FP16 format where channel % 8 == 0") == (
        "fp16", "Channel major format where channel % 8 == 0")
    assert split_format_datatype("Thirty-two wide channel vectorized row major Int8 format") \
        == ("int8", "Thirty-two wide channel vectorized row major format")
    assert split_format_datatype(None) == (None, None)


def test_schema_11():
    insp = parse_layer_info(DOC_11)
    assert insp.inspector_schema == "11.x" and insp.detailed
    io = {t.name: t for t in insp.io_tensors}
    assert io["images"].mode == "input" and io["images"].dims == [-1, 3, 224, 224]
    assert io["images"].dtype == "fp16" and io["logits"].mode == "output"
    conv = insp.layers[0]
    assert conv.fused_ops == ["/conv1/Conv", "/relu1/Relu"]  # from Metadata
    assert conv.weights_bytes == 2 * 840 and conv.precision == "fp16"
    assert insp.layers[1].precision == "fp32"
    assert insp.precision_mix == {"fp16": 1, "fp32": 2, "int8": 1}
    codes = [f.code for f in lint_engine(insp)]
    assert "engine-fp32-layers" in codes          # fc stayed FP32 in an FP16 engine
    assert "engine-unfused-qdq" in codes          # the Q layer sits between two layers
    align = [f for f in lint_engine(insp) if f.code == "engine-channel-alignment"]
    assert len(align) == 1 and "output channels 30 not a multiple of 8" in align[0].message


def test_names_only_engine(tmp_path: Path):
    p = tmp_path / "e.graph.json"
    p.write_text(json.dumps({"Layers": ["conv1 + relu1", "fc"], "Bindings": ["x", "y"]}))
    insp = load_layer_info(p)
    assert not insp.detailed
    assert [f.code for f in insp.lints] == ["engine-not-detailed"]
    assert "--profilingVerbosity=detailed" in insp.lints[0].remedy
    assert "ProfilingVerbosity.DETAILED" in insp.lints[0].remedy


def test_bad_documents(tmp_path: Path):
    with pytest.raises(InputError, match="no 'Layers' key"):
        parse_layer_info({"foo": 1})
    p = tmp_path / "x.json"
    p.write_text("not json")
    with pytest.raises(InputError, match="not JSON"):
        load_layer_info(p)
    with pytest.raises(InputError, match="not found"):
        load_layer_info(tmp_path / "missing.json")


def test_real_8x_export(trtexec_exports: Path):
    insp = load_layer_info(trtexec_exports / "resnet18-a100-fp32" / "resnet.onnx.engine.graph.json")
    assert insp.inspector_schema == "8.x/10.x" and len(insp.layers) == 32
    assert {t.name for t in insp.io_tensors} == {"input.1", "191"}


def test_a_named_dimension_is_dynamic_not_a_refusal(tmp_path: Path):
    doc = {"Layers": [{"Name": "conv", "LayerType": "CaskConvolution",
                       "Inputs": [{"Name": "x", "Dimensions": ["N", 3, "224", 224],
                                   "Format/Datatype": "Row major linear FP16 format"}],
                       "Outputs": [{"Name": "y", "Dimensions": ["N", 8, 224, 224],
                                    "Format/Datatype": "Row major linear FP16 format"}]}],
           "Bindings": ["x", "y"]}
    p = tmp_path / "e.graph.json"
    p.write_text(json.dumps(doc))
    insp = load_layer_info(p)
    layer = insp.layers[0]
    assert layer.inputs[0].dims == [-1, 3, 224, 224] and layer.outputs[0].dims[0] == -1
    doc["Layers"][0]["Inputs"][0]["Dimensions"] = [{"x": 1}, 3]
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="dimension"):  # a record is still malformed
        load_layer_info(p)


def test_layer_detail_remedies_name_the_runtimes_own_cli():
    from trtcheck.inspection.engine.engine import layer_info_remedy
    from trtcheck.inspection.engine.engine_json import REBUILD_DETAILED_RTX

    rtx = layer_info_remedy("tensorrt_rtx")
    assert rtx.startswith("on an RTX GPU machine run `tensorrt_rtx --loadEngine=PLAN")
    assert "trtexec" not in rtx and "fixed at build time" in rtx
    assert "--profilingVerbosity=detailed --saveEngine" in rtx  # at build, not at load
    trt = layer_info_remedy("tensorrt")
    assert "`trtexec --loadEngine=PLAN --exportLayerInfo" in trt
    assert "--loadEngine=PLAN --exportLayerInfo=PLAN.graph.json --profilingVerbosity" not in trt
    assert "tensorrt_rtx --onnx=MODEL --profilingVerbosity=detailed" in REBUILD_DETAILED_RTX


def test_a_descriptive_field_of_the_wrong_type_is_unknown_not_a_refusal(tmp_path: Path):
    """One odd descriptive field (a layer type, tactic or format that is a record) is read
    as unknown and named in one finding; the rest of the file is kept. A name or a
    dimension of the wrong type still refuses the file (the report rests on them)."""
    doc = {"Layers": [
        {"Name": "conv", "LayerType": {"kind": "conv"}, "TacticName": ["a", "b"],
         "Inputs": [{"Name": "x", "Dimensions": [1, 3, 8, 8], "Format/Datatype": [7],
                     "Location": {"gpu": True}}],
         "Outputs": [{"Name": "y", "Dimensions": [1, 8, 8, 8],
                      "Format/Datatype": "Row major linear FP16 format"}]},
        {"Name": "relu", "LayerType": "PointWiseV2",
         "Inputs": [{"Name": "y", "Dimensions": [1, 8, 8, 8],
                     "Format/Datatype": "Row major linear FP16 format"}],
         "Outputs": [{"Name": "z", "Dimensions": [1, 8, 8, 8],
                      "Format/Datatype": "Row major linear FP16 format"}]}],
        "Bindings": ["x", "z"]}
    p = tmp_path / "e.graph.json"
    p.write_text(json.dumps(doc))
    insp = load_layer_info(p)
    conv, relu = insp.layers
    assert conv.layer_type is None and conv.tactic is None
    assert conv.inputs[0].location is None and conv.inputs[0].dims == [1, 3, 8, 8]
    assert relu.layer_type == "PointWiseV2" and relu.outputs[0].dtype == "fp16"
    [f] = [f for f in insp.lints if f.code == "engine-json-field-ignored"]
    assert f.message.startswith("4 descriptive field(s)") and "TacticName" in f.message
    assert "(and 1 more)" in f.message
    doc["Layers"][1]["Name"] = {"x": 1}
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="Name"):
        load_layer_info(p)
