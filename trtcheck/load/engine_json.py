"""Parse TensorRT engine-inspector JSON (``IEngineInspector`` / ``trtexec --exportLayerInfo``).

Two schemas are accepted:

* TensorRT 8.x-10.x: ``{"Layers": [...], "Bindings": ["input", ...]}``; each layer tensor
  has one ``"Format/Datatype"`` string such as ``"Channel major FP16 format where
  channel % 8 == 0"``. Verified on the real exports in ``tests/data/trtexec-exports``.
* TensorRT 11.x: ``{"Layers": [...], "I/O Tensors": [...]}``; tensors carry ``"Datatype"``
  and ``"Format"`` separately (TensorRT 11 release notes / environment notes; no real 11.x
  export was available, so this path is covered by synthetic documents in the tests).

An engine built without ``ProfilingVerbosity.DETAILED`` lists layers as bare names
(``"Layers": ["conv1 + relu1", ...]``): the result says ``detailed=False``, and the
engine lints (:func:`trtcheck.inspection.engine.engine_json.lint_engine`) say how to rebuild.

Parsing an exported document is loading: the engine inspection
(:mod:`trtcheck.inspection.engine.engine_json`, :mod:`trtcheck.inspection.engine.trtexec`) and the
TensorRT backend (the engine inspector of a deserialized engine) both parse with this
module, and the lints stay in inspection.
"""

from __future__ import annotations

import contextvars
import re
from pathlib import Path
from typing import Any

from trtcheck.errors import InputError
from trtcheck.results.engine import (
    EngineInspection,
    EngineLayer,
    EngineTensor,
    layer_is_reformat,
)
from trtcheck.results.stats import Finding
from trtcheck.safe_io import escape_surrogates

#: datatype words as they appear in TensorRT's format strings -> our names
_DTYPE_WORDS = {
    "fp32": "fp32", "float": "fp32", "fp16": "fp16", "half": "fp16", "bf16": "bf16",
    "int8": "int8", "fp8": "fp8", "int32": "int32", "int64": "int64", "bool": "bool",
    "uint8": "uint8", "int4": "int4", "fp4": "fp4",
}
_DTYPE_RE = re.compile(r"\b(FP32|FP16|BF16|FP8|FP4|Int8|INT8|Int32|INT32|Int64|INT64|"
                       r"Bool|BOOL|UInt8|UINT8|Int4|INT4|Half|Float)\b")
#: bytes per weight value by the inspector's ``Weights.Type``
WEIGHT_TYPE_BYTES = {"float": 4, "half": 2, "bf16": 2, "int8": 1, "fp8": 1, "int32": 4,
                     "int64": 8, "int4": 0.5, "fp4": 0.5}



def split_format_datatype(text: str | None) -> tuple[str | None, str | None]:
    """Split TensorRT's combined ``"Format/Datatype"`` string into ``(dtype, format)``.

    ``"Channel major FP16 format where channel % 8 == 0"`` ->
    ``("fp16", "Channel major format where channel % 8 == 0")``.
    """
    if not text:
        return None, None
    m = _DTYPE_RE.search(text)
    if not m:
        return None, text.strip()
    dtype = _DTYPE_WORDS.get(m.group(1).lower(), m.group(1).lower())
    fmt = (text[: m.start()] + text[m.end():]).replace("  ", " ").strip()
    return dtype, fmt or None


class MalformedField(Exception):
    """A field of an export that has the wrong type or value (turned into one
    :class:`InputError` naming the file by :func:`parse_layer_info`)."""


#: largest dimension or weight count accepted (2**63 - 1: TensorRT's int64 dims)
_MAX_INT = (1 << 63) - 1


def _text(value: Any, what: str) -> str | None:
    """A string field: ``None`` stays ``None``, numbers become their text, strings have
    lone surrogates escaped; containers are malformed."""
    if value is None:
        return None
    if isinstance(value, str):
        return escape_surrogates(value)
    if isinstance(value, (bool, int, float)):
        return str(value)
    raise MalformedField(f"{what} is a {type(value).__name__}, not text")


IGNORED_FIELD_CODE = "engine-json-field-ignored"
"""Finding code of descriptive inspector fields of the wrong type, read as unknown."""

#: while :func:`parse_layer_info` runs: the descriptive fields read as unknown
_IGNORED: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "trtcheck_engine_json_ignored", default=None)


def _label(value: Any, what: str) -> str | None:
    """A descriptive text field (a layer type, a tactic, a format, a location, a mode,
    a data type): as :func:`_text`, but a value of the wrong type is read as unknown
    (``None``) and noted, so one odd field does not refuse the whole file; names,
    lists, dimensions and weight counts stay strict (what the report rests on)."""
    try:
        return _text(value, what)
    except MalformedField as exc:
        seen = _IGNORED.get()
        if seen is None:
            raise
        seen.append(str(exc))
        return None


def _int(value: Any, what: str, low: int = -1) -> int:
    """An integer field (a dimension, a count): ``int`` or an integral ``float`` within
    ``[low, 2**63 - 1]``; anything else is malformed."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedField(f"{what} is {_short(value)}, not an integer")
    if isinstance(value, float):
        if not value.is_integer():
            raise MalformedField(f"{what} is {_short(value)}, not an integer")
        value = int(value)
    if not low <= value <= _MAX_INT:
        raise MalformedField(f"{what} is {_short(value)}, outside {low}..2**63-1")
    return value


def _dim(value: Any, what: str) -> int:
    """A dimension: an integer (:func:`_int`), or a named dynamic dimension written as
    text (``"N"``, ``"batch"``, as exporters and the TensorRT-RTX inspector write a
    dynamic axis), read as ``-1`` like trtexec's own ``-1``; a numeric string is its
    number. Only that one field is tolerated this way: other text still is malformed."""
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?[0-9]+", text):  # ASCII digits only ("²" is not a number)
            return _int(int(text), what)
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_ ]{0,63}", text):
            return -1
    return _int(value, what)


def _list(value: Any, what: str) -> list[Any]:
    """A list field (``None`` or missing is empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedField(f"{what} is a {type(value).__name__}, not a list")
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _dtype(value: Any, what: str = "a Datatype") -> str | None:
    v = _label(value, what)
    if v is None:
        return None
    v = v.strip()
    low = v.lower().replace("datatype.", "")
    return _DTYPE_WORDS.get(low) or split_format_datatype(v)[0] or low


def _tensor(d: Any, mode: str | None = None) -> EngineTensor:
    if isinstance(d, str):
        return EngineTensor(name=escape_surrogates(d), mode=mode)
    if not isinstance(d, dict):
        raise MalformedField(f"a tensor is a {type(d).__name__}, not a record or a name")
    name = _text(d.get("Name", ""), "a tensor Name") or ""
    where = f"tensor {name!r}"
    if "Format/Datatype" in d:
        dtype, fmt = split_format_datatype(_label(d.get("Format/Datatype"),
                                                  f"{where} Format/Datatype"))
    else:
        dtype = _dtype(d.get("Datatype") or d.get("DataType"), f"{where} Datatype")
        fmt = _label(d.get("Format"), f"{where} Format")
    dims = _list(d.get("Dimensions") or d.get("Shape"), f"{where} Dimensions")
    m = mode or (_label(d.get("Mode"), f"{where} Mode") or "").lower() or None
    return EngineTensor(name=name, dims=[_dim(x, f"{where} dimension") for x in dims],
                        dtype=dtype, format=fmt,
                        location=_label(d.get("Location"), f"{where} Location"), mode=m)


def _fused_ops(layer: dict[str, Any], name: str) -> list[str]:
    meta = layer.get("Metadata")
    if isinstance(meta, str) and "ONNX Layer:" in meta:
        ops = re.findall(r"\[ONNX Layer: ([^\]]+)\]", escape_surrogates(meta))
        if ops:
            return ops
    parts = [p.strip() for p in name.split(" + ")]
    out: list[str] = []
    for p in parts:
        m = re.fullmatch(r"PWN\((.*)\)", p)
        if m:
            out.extend(x.strip() for x in re.split(r",\s*", m.group(1)))
        else:
            out.append(p)
    return [p for p in out if p]


def _weights(layer: dict[str, Any], where: str) -> tuple[int | None, int | None]:
    count = 0
    nbytes: float | None = 0
    seen = False
    for key in ("Weights", "Bias"):
        w = layer.get(key)
        if isinstance(w, dict) and "Count" in w:
            seen = True
            c = _int(w["Count"], f"{where} {key} Count", low=0)
            count += c
            per = WEIGHT_TYPE_BYTES.get((_label(w.get("Type", ""), f"{where} {key} Type")
                                         or "").lower())
            nbytes = None if (per is None or nbytes is None) else nbytes + per * c
    if not seen:
        return None, None
    return count, (int(nbytes) if nbytes is not None else None)


def _compute_precision(d: dict[str, Any], inputs: list[EngineTensor],
                       outputs: list[EngineTensor]) -> str | None:
    """What a layer computes in: the weight type for layers with weights (a QAT conv
    reads INT8 and may write FP32), else the first output's type (reformats, pooling)."""
    w = d.get("Weights")
    if isinstance(w, dict) and w.get("Type"):
        t = _dtype(w["Type"], "a Weights Type")
        if t:
            return t
    if outputs and outputs[0].dtype:
        return outputs[0].dtype
    return inputs[0].dtype if inputs else None


def _layer(d: Any) -> EngineLayer:
    if isinstance(d, str):
        return EngineLayer(name=escape_surrogates(d))
    name = _text(d.get("Name", ""), "a layer Name") or ""
    where = f"layer {name!r}"
    inputs = [_tensor(t) for t in _list(d.get("Inputs"), f"{where} Inputs")]
    outputs = [_tensor(t) for t in _list(d.get("Outputs"), f"{where} Outputs")]
    count, nbytes = _weights(d, where)
    tactic = _label(d.get("TacticName") or d.get("Tactic Name"), f"{where} TacticName")
    value = d.get("TacticValue")
    if not tactic and value not in (None, "0x0000000000000000"):
        tactic = _label(value, f"{where} TacticValue")
    return EngineLayer(name=name, layer_type=_label(d.get("LayerType"), f"{where} LayerType"),
                       precision=_compute_precision(d, inputs, outputs), tactic=tactic,
                       origin=_label(d.get("Origin"), f"{where} Origin"),
                       fused_ops=_fused_ops(d, name), inputs=inputs, outputs=outputs,
                       weights_count=count, weights_bytes=nbytes)


def parse_layer_info(doc: Any, path: str = "<json>") -> EngineInspection:
    """Parse an engine-inspector document into an :class:`EngineInspection` (no lints yet:
    :func:`trtcheck.inspection.engine.engine_json.lint_engine` adds them).

    Every field is type-checked: names and types are text (numbers are accepted as their
    text), dimensions and weight counts integers (an integral float such as ``3.0`` is
    accepted), lists are lists. Names keep any character (control characters and
    undecodable bytes are shown escaped on output).

    Args:
        doc: the parsed JSON (a dict with ``Layers``; a bare list of layers is accepted).
        path: shown in messages.

    A descriptive field of the wrong type (a layer type, tactic, origin, format,
    location, mode or data type that is a list or a record) is read as unknown and named
    in one ``engine-json-field-ignored`` finding (:data:`IGNORED_FIELD_CODE`) instead of
    refusing the file.

    Raises:
        InputError: not an engine-inspector document, or a name, list, dimension or
            weight count of the wrong type (the message names the layer or tensor and
            the field).
    """
    if isinstance(doc, list):
        doc = {"Layers": doc}
    if not isinstance(doc, dict) or "Layers" not in doc:
        raise InputError(f"{path} is not TensorRT layer information (no 'Layers' key)",
                         "pass the file written by trtexec --exportLayerInfo or by "
                         "IEngineInspector.get_engine_information(LayerInformationFormat.JSON)")
    raw_layers = doc.get("Layers") or []
    bad = [x for x in (raw_layers if isinstance(raw_layers, list) else [raw_layers])
           if not isinstance(x, (str, dict))][:1] if raw_layers else []
    if not isinstance(raw_layers, list) or bad:
        raise InputError(f"{path} is not TensorRT layer information (a layer is "
                         f"{type(bad[0] if bad else raw_layers).__name__}, not a "
                         "record or a name)",
                         "pass the file written by trtexec --exportLayerInfo or by "
                         "IEngineInspector.get_engine_information(LayerInformationFormat.JSON)")
    ignored: list[str] = []
    token = _IGNORED.set(ignored)
    try:
        if "I/O Tensors" in doc:
            schema = "11.x"
            io = [_tensor(t) for t in _list(doc.get("I/O Tensors"), "'I/O Tensors'")]
        else:
            schema = "8.x/10.x"
            io = [_tensor(t) for t in _list(doc.get("Bindings"), "'Bindings'")]
        layers = [_layer(x) for x in raw_layers]
    except MalformedField as exc:
        raise InputError(f"{path} is malformed layer information: {exc}",
                         "re-export it with trtexec --exportLayerInfo "
                         "--profilingVerbosity=detailed") from None
    finally:
        _IGNORED.reset(token)
    detailed = bool(raw_layers) and all(isinstance(x, dict) for x in raw_layers)
    if not detailed and raw_layers and all(isinstance(x, dict) and set(x) <= {"Name"}
                                           for x in raw_layers):
        detailed = False
    # fill I/O tensor details from the layers that read/write them
    by_name: dict[str, EngineTensor] = {}
    for layer in layers:
        for t in layer.inputs + layer.outputs:
            by_name.setdefault(t.name, t)
    filled = []
    for t in io:
        src = by_name.get(t.name)
        if src is not None and not t.dims:
            t = t.model_copy(update={"dims": src.dims, "dtype": t.dtype or src.dtype,
                                     "format": t.format or src.format,
                                     "location": t.location or src.location})
        filled.append(t)
    filled = _io_modes(filled, layers)
    lints = []
    if ignored:
        more = f" (and {len(ignored) - 3} more)" if len(ignored) > 3 else ""
        lints.append(Finding(
            code=IGNORED_FIELD_CODE, severity="warning",
            message=f"{len(ignored)} descriptive field(s) of {path} have the wrong type and "
                    f"are read as unknown: {'; '.join(ignored[:3])}{more}",
            remedy="re-export it with trtexec --exportLayerInfo --profilingVerbosity="
                   "detailed; the findings that rest on those fields are incomplete"))
    insp = EngineInspection(source="plan", path=path, inspector_schema=schema,
                            detailed=detailed, layers=layers, io_tensors=filled, lints=lints)
    return summarize(insp)


def _io_modes(io: list[EngineTensor], layers: list[EngineLayer]) -> list[EngineTensor]:
    """Engine I/O tensors with ``mode`` filled where the document left it out: a tensor a
    layer writes is an output, one a layer reads is an input. Name-only exports (no
    layer tensors) leave it unknown (``None``) rather than calling everything an input."""
    produced = {t.name for layer in layers for t in layer.outputs}
    consumed = {t.name for layer in layers for t in layer.inputs}
    out = []
    for t in io:
        if t.mode:
            out.append(t)
            continue
        mode = ("output" if t.name in produced else "input" if t.name in consumed
                else None)
        out.append(t.model_copy(update={"mode": mode}))
    return out


def is_reformat(layer: EngineLayer) -> bool:
    """A format/type conversion inserted by TensorRT (``Reformat`` type or ``REFORMAT``
    origin)."""
    return layer_is_reformat(layer.layer_type, layer.origin)


def summarize(insp: EngineInspection) -> EngineInspection:
    """Fill ``precision_mix`` and ``reformat_count`` from the layers (returns a copy)."""
    mix: dict[str, int] = {}
    ref = 0
    for layer in insp.layers:
        if is_reformat(layer):
            ref += 1
            continue
        key = layer.precision or "unknown"
        mix[key] = mix.get(key, 0) + 1
    return insp.model_copy(update={"precision_mix": dict(sorted(mix.items())),
                                   "reformat_count": ref})


def read_layer_info(path: str | Path) -> EngineInspection:
    """Read and parse a layer-information JSON file (no lints: the inspection adds them,
    :func:`trtcheck.inspection.engine.engine_json.load_layer_info`).

    Raises:
        InputError: missing file, not JSON, not layer information.
    """
    from trtcheck.safe_io import read_json_file

    p = Path(path)
    doc = read_json_file(p, "layer information file",
                         "pass the file written by trtexec --exportLayerInfo",
                         lenient_text=True)
    return parse_layer_info(doc, str(p))
