"""Checks of user-provided input data (``--inputs FILE.npz``, ``--inputs-dir``), shared by
bench, report and precision so one file gets the same verdict and the same message in
every command.

* :func:`check_finite_data` refuses NaN and infinity in float arrays: a NaN input makes
  every output NaN in the reference and in each variant alike, so an accuracy comparison
  "passes" with max_abs 0 (NaN positions are skipped), and a timing of NaN data measures
  denormal/NaN paths, not the model's normal work. The same rule as
  ``--input-value x=nan``, which is refused already.
* :func:`check_data_fits` checks the arrays against the model's inputs before any shape is
  resolved: every input has an array (or an ``--input-value``), no array names an unknown
  input, and each array has the input's rank (or one less: one sample without its batch
  axis) with the model's fixed dims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from trtcheck.errors import InputError
from trtcheck.results.inspection import TensorInfo


def check_finite_data(arrays: Mapping[str, np.ndarray], where: str) -> None:
    """Refuse NaN or infinite values in the float arrays of one input file.

    Args:
        arrays: ``{input name: array}`` as read from an ``.npz``; integer and boolean
            arrays are always finite and pass.
        where: how the message names the file, e.g. ``"nan.npz"``.

    Raises:
        InputError: an array holds NaN or +-inf; the message names the file, each such
            input and its counts of NaN and infinite elements.
    """
    bad: list[str] = []
    for name, arr in arrays.items():
        a = np.asarray(arr)
        if a.dtype.kind not in "fc":
            continue
        nan = int(np.count_nonzero(np.isnan(a)))
        inf = int(np.count_nonzero(np.isinf(a)))
        if nan or inf:
            bad.append(f"{name!r} has {nan} NaN and {inf} infinite of {a.size} values")
    if bad:
        raise InputError(f"{where}: {'; '.join(bad)}",
                         "give finite input data (e.g. numpy.nan_to_num); NaN or infinite "
                         "inputs make every precision agree on NaN outputs and time "
                         "non-finite arithmetic")


def _fixed(d: Any) -> bool:
    return isinstance(d, int) and not isinstance(d, bool) and d > 0


def check_data_fits(inputs: Sequence[TensorInfo], arrays: Mapping[str, np.ndarray],
                    where: str, values: Mapping[str, Any] | None = None) -> None:
    """The arrays of one input file fit the model's inputs (before any shape is resolved).

    Args:
        inputs: the model's inputs (names, shapes with ``int`` fixed dims).
        arrays: ``{input name: array}`` from the file.
        where: how the message names the file, e.g. ``"bad.npz"``.
        values: ``--input-value`` scalars, which stand in for a missing array.

    Raises:
        InputError: an input with neither an array nor a value (the file's array names are
            listed), an array for an unknown input, an array whose rank is neither the
            input's nor one less (a sample without its batch axis), or one that
            contradicts a fixed dim of the model.
    """
    values = values or {}
    names = [t.name for t in inputs]
    missing = [n for n in names if n not in arrays and n not in values]
    if missing:
        raise InputError(f"{where} has no array for input(s) {', '.join(map(repr, missing))} "
                         f"(it holds {', '.join(map(repr, sorted(arrays))) or 'nothing'})",
                         "save one array per model input: numpy.savez(path, "
                         + ", ".join(f"{n}=..." for n in names) + ")")
    unknown = [n for n in arrays if n not in names]
    if unknown:
        raise InputError(f"{where} holds array(s) {', '.join(map(repr, unknown))} for no "
                         f"model input; the model's inputs are {', '.join(map(repr, names))}",
                         "save one array per model input: numpy.savez(path, "
                         + ", ".join(f"{n}=..." for n in names) + ")")
    for t in inputs:
        arr = arrays.get(t.name)
        if arr is None or not t.rank_known:
            continue
        rank, dims = len(t.shape), [int(d) for d in np.shape(arr)]
        if len(dims) == rank:
            model_dims = list(t.shape)
        elif len(dims) == rank - 1 and rank >= 1:
            model_dims = list(t.shape[1:])  # one sample without its batch axis
        else:
            model_dims = None
        if model_dims is None or any(_fixed(m) and d != m for d, m in zip(dims, model_dims)):
            raise InputError(f"{where} gives {t.name!r} shape {dims}, which fits neither the "
                             f"model's input {t.shape_text()} nor one sample of it "
                             f"(without axis 0)",
                             f"save {t.name!r} with the model's rank ({rank}) and its fixed "
                             "dims, e.g. of shape "
                             + "x".join(str(m) if _fixed(m) else "N" for m in t.shape))
    check_values_fit(inputs, arrays, where)


def check_values_fit(inputs: Sequence[TensorInfo], arrays: Mapping[str, np.ndarray],
                     where: str) -> None:
    """Every array's values survive the cast to its input's dtype: floats within the
    target float type's finite range (a float64 1e300 cast to float32 is ``inf``),
    integers within the target integer type (no wrap-around), no fractional values for
    an integer input.

    Raises:
        InputError: naming the input, the largest magnitude and the target type.
    """
    from trtcheck.load.inputs import numpy_dtype

    for t in inputs:
        arr = arrays.get(t.name)
        if arr is None or arr.size == 0 or arr.dtype.kind not in "biuf":
            continue
        try:
            target = numpy_dtype(t.dtype)
        except InputError:
            continue
        a = np.asarray(arr)
        if target.kind == "f" or t.dtype == "bfloat16":
            if a.dtype.kind != "f" and a.dtype.kind != "b" and a.dtype.itemsize < 8:
                continue
            limit = float(np.finfo(np.float32 if t.dtype == "bfloat16" else target).max)
            with np.errstate(all="ignore"):
                biggest = float(np.max(np.abs(a.astype(np.float64))))
            if biggest > limit:
                raise InputError(f"{where}: {t.name!r} holds {biggest:.4g}, beyond the "
                                 f"{t.dtype} range of the input (+-{limit:.4g}); it would "
                                 "become infinite", f"scale the data into the {t.dtype} range")
        elif target.kind in "iu":
            if a.dtype.kind == "f":
                if not np.all(np.floor(a) == a):
                    raise InputError(f"{where}: {t.name!r} holds fractional values but the "
                                     f"input is {t.dtype}",
                                     "save integer arrays for integer inputs")
            info = np.iinfo(target)
            lo, hi = float(np.min(a)), float(np.max(a))
            if lo < info.min or hi > info.max:
                raise InputError(f"{where}: {t.name!r} holds values in [{lo:.6g}, {hi:.6g}], "
                                 f"outside the {t.dtype} range of the input "
                                 f"[{info.min}, {info.max}]",
                                 f"save values the input's {t.dtype} can hold")

