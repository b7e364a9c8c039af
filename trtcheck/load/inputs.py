"""Input data for runs: dtype-correct random data or user-given values.

Random data (seeded, reproducible): floating inputs uniform in ``[0, 1)`` (image-like,
never overflows FP16), integer inputs uniform in ``{0, 1}`` (valid as token ids, masks and
indices in almost every model), booleans uniform. Give real values with
``--inputs data.npz`` (arrays by input name) or ``--input-value name=3`` (a scalar
broadcast to the input's shape, for integer/scalar inputs such as lengths or flags).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from trtcheck.errors import InputError
from trtcheck.results.inspection import TensorInfo

_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16", "bool": "bool",
    "int": "int32", "long": "int64",
}


def numpy_dtype(name: str) -> np.dtype[Any]:
    """Numpy dtype for a trtcheck dtype name (``"float32"``, ``"int64"``, ``"bfloat16"`` ...).

    Raises:
        InputError: a dtype with no numpy equivalent (strings, complex).
    """
    n = _ALIASES.get(name, name)
    if n == "bfloat16":
        try:
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:  # pragma: no cover - ml_dtypes comes with onnx
            raise InputError("bfloat16 input needs the ml_dtypes package") from None
    try:
        dt = np.dtype(n)
    except TypeError:
        raise InputError(f"input dtype {name!r} is not supported for generated data",
                         "give the input's values with --inputs data.npz") from None
    if dt.kind in "OUSVc":
        raise InputError(f"input dtype {name!r} is not supported for generated data",
                         "give the input's values with --inputs data.npz")
    return dt


def parse_input_values(specs: Iterable[str] | None) -> dict[str, float | int | bool]:
    """Parse ``--input-value name=value`` options (int, float, true/false).

    Raises:
        InputError: a malformed entry.
    """
    out: dict[str, float | int | bool] = {}
    for spec in specs or ():
        name, sep, text = spec.rpartition("=")
        if not sep or not name:
            raise InputError(f"bad --input-value {spec!r}: expected NAME=VALUE",
                             "e.g. --input-value seq_len=128")
        low = text.strip().lower()
        if low in ("true", "false"):
            out[name] = low == "true"
            continue
        try:
            out[name] = int(text)
        except ValueError:
            try:
                out[name] = float(text)
            except ValueError:
                raise InputError(f"bad --input-value {spec!r}: {text!r} is not a number",
                                 "e.g. --input-value seq_len=128") from None
    return out


#: dtype kinds an input array may have: bool, signed/unsigned integers, floats
_NPZ_KINDS = {"b": "boolean", "i": "integer", "u": "unsigned integer", "f": "float"}
_NPZ_REFUSED = {"U": "text (str)", "S": "bytes", "O": "Python objects",
                "V": "structured records", "c": "complex numbers", "M": "datetimes",
                "m": "time deltas"}

MAX_NPZ_ARRAY_BYTES = 16 << 30
"""Largest total size of the arrays of one ``.npz`` (16 GiB, after decompression), checked
on the arrays' headers before any is read."""


def load_npz(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Arrays of an ``.npz`` file by name.

    Before reading any array, each member's ``.npy`` header is checked: its dtype must
    be boolean, integer or float (text, bytes, objects, structured records, complex
    numbers and datetimes are refused), and ``shape x itemsize`` must fit in the bytes
    the member holds and, over all members, within :data:`MAX_NPZ_ARRAY_BYTES` (a header
    that claims 10**13 floats is refused, never allocated).

    Raises:
        InputError: missing, not a regular file, not an npz file, an array of a refused
            dtype or with an impossible size, or no arrays at all.
    """
    import zipfile

    from trtcheck.safe_io import check_input_file

    hint = "write it with numpy.savez(path, input_name=array, ...)"
    p = check_input_file(path, "inputs file", "pass an .npz with one array per input")
    if not zipfile.is_zipfile(p):  # np.load would call any other file "pickled data"
        raise InputError(f"{p} is not an .npz file (an .npz is a zip archive of arrays)", hint)
    try:
        _check_npz_members(p)
        with np.load(p, allow_pickle=False) as data:
            arrays = {k: np.asarray(data[k]) for k in data.files}
    except InputError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile,
            NotImplementedError, RuntimeError) as exc:
        raise InputError(f"cannot read {p} as .npz: {' '.join(str(exc).split())[:160]}",
                         hint) from None
    if not arrays:
        raise InputError(f"{p} holds no arrays", hint)
    return arrays


def _check_npz_members(p: Path) -> None:
    """Check every ``.npy`` member's header of the archive ``p`` (see :func:`load_npz`)."""
    import zipfile

    total = 0
    with zipfile.ZipFile(p) as zf:
        members = [i for i in zf.infolist() if i.filename.endswith(".npy")]
        if not members:
            raise InputError(f"{p} holds no arrays (.npy members)",
                             "write it with numpy.savez(path, input_name=array, ...)")
        for info in members:
            name = info.filename[:-4]
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                read_header: Any = (np.lib.format.read_array_header_1_0
                                    if version == (1, 0)
                                    else np.lib.format.read_array_header_2_0)
                shape, _fortran, dtype = read_header(fh, max_header_size=10000)
                header_bytes = fh.tell()
            if dtype.kind not in _NPZ_KINDS:
                what = _NPZ_REFUSED.get(dtype.kind, f"dtype {dtype}")
                raise InputError(f"{p}: array {name!r} holds {what} ({dtype.str}); model "
                                 "inputs take booleans, integers or floats",
                                 "save numeric arrays (e.g. numpy.float32)")
            count = 1
            for d in shape:
                count *= int(d)
            need = count * dtype.itemsize
            have = info.file_size - header_bytes
            if need > have:
                raise InputError(f"{p}: array {name!r} claims shape {list(shape)} "
                                 f"({need:,} bytes) but holds {max(0, have):,} bytes",
                                 "the file is truncated or damaged; save it again")
            total += need
            if total > MAX_NPZ_ARRAY_BYTES:
                raise InputError(f"{p}: its arrays hold more than {MAX_NPZ_ARRAY_BYTES:,} "
                                 "bytes", "give one sample per array (it is repeated to "
                                 "every batch size)")


def make_feed(inputs: list[TensorInfo], shapes: dict[str, list[int]], seed: int | None = 0,
              arrays: dict[str, np.ndarray] | None = None,
              values: dict[str, float | int | bool] | None = None) -> dict[str, np.ndarray]:
    """Build one execution's feed.

    Args:
        inputs: model inputs (names and dtypes).
        shapes: concrete shape per input (from :func:`trtcheck.load.shapes.resolve_shapes`).
        seed: RNG seed for generated data (``None``: unseeded).
        arrays: user arrays by name (from :func:`load_npz`). An array whose shape equals the
            target is used as is; one with a batch of 1 (or no batch axis) is repeated
            along axis 0 to the target batch.
        values: user scalars by name, broadcast to the input's shape.

    Returns:
        ``{name: contiguous ndarray}`` with the model's dtypes.

    Raises:
        InputError: user data for an unknown input or with a shape that does not fit.
    """
    arrays = arrays or {}
    values = values or {}
    names = {t.name for t in inputs}
    for n in list(arrays) + list(values):
        if n not in names:
            raise InputError(f"input data names unknown input {n!r}; the model's inputs are "
                             f"{', '.join(sorted(names))}", None)
    rng = np.random.default_rng(seed)
    feed: dict[str, np.ndarray] = {}
    for t in inputs:
        shape = tuple(shapes[t.name])
        dt = numpy_dtype(t.dtype)
        if t.name in arrays:
            feed[t.name] = _fit_array(t.name, arrays[t.name].astype(dt, copy=False), shape)
        elif t.name in values:
            feed[t.name] = np.full(shape, _fit_value(t.name, values[t.name], dt), dtype=dt)
        elif dt.kind == "f" or t.dtype == "bfloat16":
            feed[t.name] = rng.random(shape, dtype=np.float32).astype(dt)
        elif dt.kind in "iu":
            feed[t.name] = rng.integers(0, 2, size=shape).astype(dt)
        elif dt.kind == "b":
            feed[t.name] = rng.integers(0, 2, size=shape).astype(bool)
        else:  # pragma: no cover - numpy_dtype rejects the rest
            raise InputError(f"cannot generate data for {t.name!r} of dtype {t.dtype}")
        feed[t.name] = np.ascontiguousarray(feed[t.name])
    return feed


def _fit_value(name: str, value: float | int | bool, dt: np.dtype[Any]) -> Any:
    """``value`` as ``dt`` when it is exactly representable there (integers in range and
    integral, booleans 0/1, floats finite within the type's range).

    Raises:
        InputError: the value would be truncated, wrap around or overflow.
    """
    bad = None
    if dt.kind == "b":
        if value not in (0, 1):  # True/False compare equal to 1/0
            bad = "booleans take true/false (or 1/0)"
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        if isinstance(value, float) and not value.is_integer():
            bad = "integer inputs take whole numbers"
        elif not info.min <= value <= info.max:
            bad = f"{dt.name} holds {info.min}..{info.max}"
    elif dt.kind == "f" or dt.name == "bfloat16":
        limit = float(np.finfo(np.float32 if dt.name == "bfloat16" else dt).max)
        if not np.isfinite(value) or abs(float(value)) > limit:
            bad = f"{dt.name} holds finite values up to {limit:g}"
    if bad:
        raise InputError(f"--input-value {name}={value} does not fit input {name!r} "
                         f"({dt.name}): {bad}", "give a value the input's dtype can hold")
    return value


def _fit_array(name: str, arr: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if arr.shape == shape:
        return arr
    if arr.ndim == len(shape) and arr.shape[1:] == shape[1:] and arr.shape[0] == 1:
        return np.repeat(arr, shape[0], axis=0)
    if arr.ndim == len(shape) - 1 and arr.shape == shape[1:]:
        return np.repeat(arr[None], shape[0], axis=0)
    hint = "give one sample (batch 1), which is repeated to every batch size"
    if arr.ndim == len(shape) and arr.shape[1:] == shape[1:]:
        hint += f", or run only the data's batch size: --batch {arr.shape[0]}"
    else:
        hint += ", or data of the run's shape"
    raise InputError(f"given data for {name!r} has shape {list(arr.shape)}, the run needs "
                     f"{list(shape)}", hint)
