"""Lint a TensorRT engine's layers (engine-inspector JSON or a deserialized engine's
inspector): findings with codes ``engine-*``.

Parsing the document is :mod:`trtcheck.load.engine_json`; this module judges the parsed
:class:`~trtcheck.results.engine.EngineInspection`.

The lints follow the TensorRT Engine Explorer (TREx, ``trex/lint.py``, removed from the
TensorRT repo in 11.1) in spirit: reformat layers, FP32 compute layers left in an engine
that otherwise runs reduced precision, Q/DQ layers that TensorRT could not fuse, and
channel counts that miss tensor-core alignment (multiples of 8 for FP16, 16 for INT8
with 32 preferred on Ampere+; NVIDIA Deep Learning Performance Guide, "Tensor Core
Requirements", and TensorRT best-practices "Channel alignment"). An engine built without
``ProfilingVerbosity.DETAILED`` gets one finding saying how to rebuild
(:data:`REBUILD_DETAILED`).
"""

from __future__ import annotations

import re
from pathlib import Path

from trtcheck.load.engine_json import IGNORED_FIELD_CODE, is_reformat, read_layer_info
from trtcheck.results.engine import EngineInspection, EngineLayer
from trtcheck.results.stats import Finding

REBUILD_DETAILED = ("rebuild with detailed profiling verbosity: trtexec "
                    "--profilingVerbosity=detailed, or config.profiling_verbosity = "
                    "trt.ProfilingVerbosity.DETAILED (Polygraphy: "
                    "CreateConfig(profiling_verbosity=...))")

REBUILD_DETAILED_RTX = ("rebuild with detailed profiling verbosity (fixed at build time): "
                        "tensorrt_rtx --onnx=MODEL --profilingVerbosity=detailed "
                        "--saveEngine=PLAN (TensorRT-RTX's own CLI), or "
                        "config.profiling_verbosity = tensorrt_rtx.ProfilingVerbosity.DETAILED")


def _is_rtx(insp: EngineInspection) -> bool:
    plan = getattr(insp, "plan", None)
    return insp.runtime_name == "tensorrt_rtx" or getattr(plan, "kind", None) == "tensorrt_rtx"


#: reduced-precision types: FP32 compute layers beside these are worth a finding
REDUCED = {"fp16", "bf16", "int8", "fp8", "int4", "fp4"}
_QDQ_NAME = re.compile(r"(?i)(quantize|dequantize)(linear)?")


def _is_compute(layer: EngineLayer, raw_type: str) -> bool:
    t = raw_type.lower()
    return any(k in t for k in ("convolution", "gemm", "matrixmultiply", "fullyconnected",
                                "deconvolution", "myelin"))


def _is_qdq_only(layer: EngineLayer) -> bool:
    ops = layer.fused_ops or [layer.name]
    return bool(ops) and all(_QDQ_NAME.search(op) for op in ops)


def lint_engine(insp: EngineInspection) -> list[Finding]:
    """TREx-style findings for an engine (codes ``engine-*``); see the module docstring
    for the sources of each rule and threshold."""
    # what reading the inspector JSON found (fields read as unknown) stays
    out: list[Finding] = [f for f in insp.lints if f.code == IGNORED_FIELD_CODE]
    if insp.layers and not insp.detailed:
        out.append(Finding(
            code="engine-not-detailed", severity="warning",
            message=f"the engine lists {len(insp.layers)} layers by name only: it was built "
                    "without detailed profiling verbosity, so types, precisions, tactics and "
                    "formats are unknown",
            remedy=REBUILD_DETAILED_RTX if _is_rtx(insp) else REBUILD_DETAILED))
        return out
    reformats = [layer for layer in insp.layers if is_reformat(layer)]
    if reformats:
        t = sum(layer.avg_time_ms or 0.0 for layer in reformats)
        tot = sum(layer.avg_time_ms or 0.0 for layer in insp.layers)
        share = f", {t:.3f} ms = {100 * t / tot:.1f}% of layer time" if tot > 0 else ""
        out.append(Finding(
            code="engine-reformats", severity="warning" if (tot and t / tot > 0.05) else "info",
            message=f"{len(reformats)} reformat layer(s) convert formats/types between "
                    f"layers{share}; e.g. {reformats[0].name}",
            remedy="feed inputs in the format the first layer wants (trtexec --inputIOFormats) "
                   "and keep precision uniform across neighbouring layers",
            where=reformats[0].name))
    out += precision_not_applied(insp)
    reduced = {p for p, n in insp.precision_mix.items() if p in REDUCED and n > 0}
    if reduced:
        fp32 = [layer for layer in insp.layers
                if layer.precision == "fp32" and not is_reformat(layer)
                and _is_compute(layer, layer.layer_type or "")]
        if fp32:
            names = ", ".join(layer.name for layer in fp32[:3])
            out.append(Finding(
                code="engine-fp32-layers", severity="warning",
                message=f"{len(fp32)} compute layer(s) stayed FP32 in an engine that runs "
                        f"{'/'.join(sorted(reduced)).upper()} elsewhere: {names}",
                remedy="check why TensorRT kept them in FP32 (unsupported tactic, precision "
                       "constraints, missing Q/DQ); in strongly typed builds cast them in "
                       "the ONNX graph",
                where=fp32[0].name))
    inputs = {t.name for t in insp.io_tensors if t.mode == "input"}
    outputs = {t.name for t in insp.io_tensors if t.mode == "output"}
    qdq = [layer for layer in insp.layers if _is_qdq_only(layer)
           and not any(t.name in inputs for t in layer.inputs)
           and not any(t.name in outputs for t in layer.outputs)]
    if qdq:
        out.append(Finding(
            code="engine-unfused-qdq", severity="warning",
            message=f"{len(qdq)} Quantize/Dequantize layer(s) were not fused into a compute "
                    f"layer: {', '.join(layer.name for layer in qdq[:3])}",
            remedy="place Q/DQ pairs where TensorRT can fuse them (before Conv/MatMul inputs "
                   "and weights, see the TensorRT Q/DQ placement recommendations)",
            where=qdq[0].name))
    for layer in insp.layers:
        ltype = (layer.layer_type or "").lower()
        if "convolution" not in ltype or "depthwise" in ltype:
            continue  # depthwise convolutions do not run on tensor cores
        prec = layer.precision
        need = {"fp16": 8, "bf16": 8, "int8": 16, "fp8": 16}.get(prec or "")
        if not need:
            continue
        chans = []
        if layer.inputs and len(layer.inputs[0].dims) >= 2:
            chans.append(("input", layer.inputs[0].dims[1]))
        if layer.outputs and len(layer.outputs[0].dims) >= 2:
            chans.append(("output", layer.outputs[0].dims[1]))
        bad = [(k, c) for k, c in chans if c > 4 and c % need != 0]
        if bad:
            desc = ", ".join(f"{k} channels {c}" for k, c in bad)
            out.append(Finding(
                code="engine-channel-alignment", severity="info",
                message=f"{layer.name}: {desc} not a multiple of {need} ({str(prec).upper()} "
                        "tensor cores); TensorRT pads, wasting compute",
                remedy=f"use channel counts that are multiples of {need}"
                       + (" (32 preferred on Ampere+)" if prec == "int8" else ""),
                where=layer.name))
    return out


def requested_precisions(insp: EngineInspection) -> list[str]:
    """The reduced precisions the build asked for, lower case (``["fp16", "int8"]``),
    from trtexec's recorded build option ``Precision`` (``"FP32+FP16+INT8"``); empty
    when the build options do not say."""
    text = insp.build_options.get("Precision", "")
    return [p for p in (t.strip().lower() for t in re.split(r"[+,\s]+", text))
            if p in REDUCED]


def precision_not_applied(insp: EngineInspection) -> list[Finding]:
    """``engine-precision-not-applied`` (warning): the build asked for a reduced
    precision (FP16, INT8, ...) and not one layer of the engine runs in it, e.g. FP16
    requested on a network TensorRT kept in FP32, or INT8 without calibration or Q/DQ
    (TensorRT then falls back to the other precisions allowed). Judged only on detailed
    layer information (the per-layer precisions of the engine inspector)."""
    if not insp.detailed or not insp.precision_mix:
        return []
    out = []
    for prec in requested_precisions(insp):
        if insp.precision_mix.get(prec, 0) > 0:
            continue
        mix = ", ".join(f"{n} {p.upper()}" for p, n in sorted(insp.precision_mix.items()))
        out.append(Finding(
            code="engine-precision-not-applied", severity="warning",
            message=f"{prec.upper()} was requested at build (Precision: "
                    f"{insp.build_options.get('Precision')}) but no layer runs in "
                    f"{prec.upper()} (layers: {mix}): the engine is not the {prec.upper()} "
                    "engine it was meant to be",
            remedy=("INT8 needs a calibrator or Q/DQ nodes in the ONNX (explicit "
                    "quantization); without them TensorRT keeps the layers in the other "
                    "precisions allowed" if prec == "int8" else
                    f"TensorRT chose faster {'/'.join(sorted(insp.precision_mix)).upper()} "
                    f"tactics or could not run these layers in {prec.upper()}: check the "
                    "build log (--verbose), and in strongly typed builds cast the ONNX "
                    "graph itself")))
    return out


def load_layer_info(path: str | Path) -> EngineInspection:
    """Read a layer-information JSON file, parse it
    (:func:`trtcheck.load.engine_json.read_layer_info`) and lint it.

    Raises:
        InputError: missing file, not JSON, not layer information.
    """
    insp = read_layer_info(path)
    return insp.model_copy(update={"lints": lint_engine(insp)})
