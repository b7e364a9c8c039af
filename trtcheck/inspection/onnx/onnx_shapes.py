"""Tensor types and shapes of an ONNX model's graph inputs and outputs, for inspection.

:func:`tensor_info` describes a graph input or output (dtype, dims with named dynamic dims);
:func:`validate_shapes` checks user-given ``--shapes`` against the model's inputs and
:func:`concrete_shapes` picks the input shapes the compute estimate uses. Parsing
``--shapes`` and resolving the shapes of a run live in :mod:`trtcheck.load.shapes`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from trtcheck.errors import InputError
from trtcheck.results.inspection import TensorInfo

if TYPE_CHECKING:  # pragma: no cover
    import onnx


#: TensorProto.DataType name -> (numpy-style name, bits per element; 0 = variable size)
_DTYPES: dict[str, tuple[str, int]] = {
    "FLOAT": ("float32", 32), "UINT8": ("uint8", 8), "INT8": ("int8", 8),
    "UINT16": ("uint16", 16), "INT16": ("int16", 16), "INT32": ("int32", 32),
    "INT64": ("int64", 64), "STRING": ("string", 0), "BOOL": ("bool", 8),
    "FLOAT16": ("float16", 16), "DOUBLE": ("float64", 64), "UINT32": ("uint32", 32),
    "UINT64": ("uint64", 64), "COMPLEX64": ("complex64", 64),
    "COMPLEX128": ("complex128", 128), "BFLOAT16": ("bfloat16", 16),
    "FLOAT8E4M3FN": ("float8e4m3fn", 8), "FLOAT8E4M3FNUZ": ("float8e4m3fnuz", 8),
    "FLOAT8E5M2": ("float8e5m2", 8), "FLOAT8E5M2FNUZ": ("float8e5m2fnuz", 8),
    "UINT4": ("uint4", 4), "INT4": ("int4", 4), "FLOAT4E2M1": ("float4e2m1", 4),
    "FLOAT8E8M0": ("float8e8m0", 8), "UINT2": ("uint2", 2), "INT2": ("int2", 2),
}


def dtype_name(elem_type: int) -> str:
    """Numpy-style name of an ONNX ``TensorProto.DataType`` value, e.g. 1 -> ``"float32"``.

    Unknown codes give ``"onnx_type_<n>"``; 0 (UNDEFINED) gives ``"undefined"``.
    """
    from onnx import TensorProto

    try:
        name = TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"onnx_type_{elem_type}"
    if name == "UNDEFINED":
        return "undefined"
    return _DTYPES.get(name, (name.lower(), 0))[0]


def elem_type_bits(elem_type: int) -> int:
    """Bits per element of an ONNX ``TensorProto`` element type (0: unknown or not sized)."""
    from onnx import TensorProto

    try:
        return _DTYPES.get(TensorProto.DataType.Name(elem_type), ("", 0))[1]
    except ValueError:
        return 0


def dims_of(type_proto: Any) -> list[int | str | None] | None:
    """Shape of a tensor TypeProto: int, dim_param str, or None; None if rank unknown."""
    tt = type_proto.tensor_type
    if not tt.HasField("shape"):
        return None
    out: list[int | str | None] = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            out.append(int(d.dim_value) if d.dim_value >= 0 else None)
        elif d.HasField("dim_param") and d.dim_param:
            out.append(d.dim_param)
        else:
            out.append(None)
    return out


def tensor_info(value_info: Any) -> TensorInfo:
    """A graph input/output ``ValueInfoProto`` as :class:`TensorInfo`.

    Non-tensor types (sequence, map, optional) get dtype ``"sequence"``/``"map"``/
    ``"optional"``/``"sparse_tensor"`` and an empty shape. A tensor of unknown rank gets an
    empty shape and ``rank_known=False``.
    """
    t = value_info.type
    kind = t.WhichOneof("value")
    if kind != "tensor_type":
        return TensorInfo(name=value_info.name, dtype=(kind or "undefined").replace("_type", ""),
                          shape=[])
    dims = dims_of(t)
    return TensorInfo(name=value_info.name, dtype=dtype_name(t.tensor_type.elem_type),
                      shape=dims or [], rank_known=dims is not None)


def numel(dims: Any) -> int:
    """Number of elements of a tensor with integer dimensions ``dims`` (1 for a scalar)."""
    return int(math.prod(int(d) for d in dims)) if len(dims) else 1


def fmt_shape(dims: list[int]) -> str:
    """A shape written as ``1x3x224x224``."""
    return "x".join(str(d) for d in dims)


# --------------------------------------------------------------------------- inputs


def graph_inputs(model: onnx.ModelProto) -> list[Any]:
    """Real graph inputs: IR < 4 models also list initializers as inputs; drop those."""
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _placeholder(t: TensorInfo, axis: int) -> str:
    if axis == 0:
        return "1"
    if len(t.shape) == 4 and axis in (2, 3):
        return "HW"[axis - 2]
    return f"D{axis}"


def example_shapes(inputs: list[TensorInfo], given: dict[str, list[int]] | None = None) -> str:
    """A ``--shapes`` example: given sizes, fixed dims, 1 for a dynamic axis 0 and a
    placeholder (``H``, ``W`` for axes 2, 3 of a 4-D input, else ``D<axis>``) for the
    other dynamic axes, followed by what to replace."""
    parts = []
    holes: list[str] = []
    for t in inputs:
        if given and t.name in given:
            dims: list[str] = [str(d) for d in given[t.name]]
        else:
            dims = [str(d) if isinstance(d, int) and d > 0 else _placeholder(t, i)
                    for i, d in enumerate(t.shape)]
            holes += [d for d in dims if not d.isdigit()]
        parts.append(f"{t.name}:{'x'.join(dims)}")
    text = "--shapes " + ",".join(parts)
    if holes:
        text += f" (replace {', '.join(dict.fromkeys(holes))} with sizes)"
    return text


def validate_shapes(inputs: list[TensorInfo], shapes: dict[str, list[int]]) -> None:
    """Check user-given shapes against the model's inputs.

    Raises:
        InputError: a name that is not an input, a rank mismatch, a non-positive dim, or a
            dim that contradicts a fixed dim of the model.
    """
    names = [t.name for t in inputs]
    unknown = [n for n in shapes if n not in names]
    if unknown:
        raise InputError(f"--shapes names unknown input(s) {', '.join(map(repr, unknown))}; "
                         f"the model's inputs are {', '.join(map(repr, names))}",
                         f"use {example_shapes(inputs)}")
    for t in inputs:
        if t.name not in shapes:
            continue
        dims = shapes[t.name]
        if len(dims) != len(t.shape):
            raise InputError(f"--shapes gives {t.name!r} {len(dims)} dims but the model input "
                             f"has {len(t.shape)} {t.shape_text()}",
                             f"use {example_shapes(inputs)}")
        for i, (d, m) in enumerate(zip(dims, t.shape)):
            if int(d) < 1:
                raise InputError(f"--shapes gives {t.name!r} axis {i} = {d}; dims must be >= 1",
                                 f"use {example_shapes(inputs)}")
            if isinstance(m, int) and m > 0 and int(d) != m:
                raise InputError(f"--shapes gives {t.name!r} axis {i} = {d}, but the model "
                                 f"fixes it to {m} {t.shape_text()}",
                                 f"use {example_shapes(inputs)}")


def dynamic_axes_of(t: TensorInfo) -> list[int]:
    """The axes of ``t`` without a fixed positive size (symbolic, unknown or not positive)."""
    return [i for i, d in enumerate(t.shape) if not (isinstance(d, int) and d > 0)]


def _dim_label(t: TensorInfo, axis: int) -> str:
    d = t.shape[axis]
    return f"{t.name} axis {axis} ({d})" if isinstance(d, str) else f"{t.name} axis {axis}"


def concrete_shapes(inputs: list[TensorInfo], shapes: dict[str, list[int]] | None
                    ) -> tuple[dict[str, list[int]] | None, str]:
    """The input shapes the compute estimate uses, and how they were chosen.

    User-given shapes win; static inputs keep their dims; when the only dims left
    dynamic are axis 0 (the batch axis) they are set to 1.

    Returns:
        ``(shapes, how)``; ``shapes`` is ``None`` when other dynamic dims are left
        (``how`` then names them).
    """
    shapes = shapes or {}
    out: dict[str, list[int]] = {}
    batch_set: list[str] = []
    missing: list[str] = []
    for t in inputs:
        if t.name in shapes:
            out[t.name] = [int(d) for d in shapes[t.name]]
            continue
        if not t.shape and t.dtype in ("sequence", "map", "optional", "sparse_tensor"):
            missing.append(f"{t.name} (a {t.dtype}, not a tensor)")
            continue
        dims = [d if isinstance(d, int) and d > 0 else None for d in t.shape]
        if dims and dims[0] is None:
            dims[0] = 1
            batch_set.append(t.name)
        gaps = [i for i, d in enumerate(dims) if d is None]
        missing.extend(_dim_label(t, i) for i in gaps)
        if not gaps:
            out[t.name] = [int(d) for d in dims if d is not None]
    if missing:
        return None, "dynamic dims without a size: " + ", ".join(missing)
    if shapes and not batch_set:
        how = "given with --shapes" if len(shapes) == len(inputs) else \
            "given with --shapes, the rest static"
    elif batch_set:
        how = ("batch axis (axis 0) set to 1 for " + ", ".join(batch_set)
               + ("; others given with --shapes" if shapes else ""))
    else:
        how = "static shapes of the model"
    return out, how
