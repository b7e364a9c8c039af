"""Parse ``--shapes`` and resolve the concrete input shapes of a run.

Syntax (the same as trtexec's ``--shapes`` with ``x`` separators, plus repetition)::

    --shapes x:1x3x224x224                 one input
    --shapes x:1x3x224x224,mask:1x128      several, comma-separated
    --shapes x:1x3x224x224 --shapes mask:1x128

Input names may contain ``:``; the last ``:`` separates name and dims.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from trtcheck.errors import InputError
from trtcheck.results.inspection import TensorInfo

SHAPES_SYNTAX = "--shapes NAME:1x3x224x224[,NAME2:...]"

MAX_DIM = 2**31 - 1
"""Largest dimension ``--shapes`` accepts (TensorRT and ONNX Runtime take 32-bit-range
sizes for any realistic tensor; beyond it a tensor could not be allocated)."""


def parse_shapes(specs: str | Iterable[str] | None) -> dict[str, list[int]]:
    """Parse one or more ``--shapes`` values into ``{name: [dims]}``.

    Raises:
        InputError: malformed entry, a dim that is not an integer in 1..MAX_DIM, or a
            name given twice.
    """
    if specs is None:
        return {}
    items = [specs] if isinstance(specs, str) else list(specs)
    out: dict[str, list[int]] = {}
    for spec in items:
        for entry in (e.strip() for e in spec.split(",")):
            if not entry:
                continue
            name, sep, dims_text = entry.rpartition(":")
            if not sep or not name or not dims_text:
                raise InputError(f"bad --shapes entry {entry!r}: expected NAME:DIMS",
                                 f"use {SHAPES_SYNTAX}")
            try:
                dims = [int(d) for d in dims_text.lower().split("x")]
            except ValueError:
                raise InputError(f"bad --shapes entry {entry!r}: dims must be integers "
                                 "separated by 'x'", f"use {SHAPES_SYNTAX}") from None
            if any(not 1 <= d <= MAX_DIM for d in dims):
                raise InputError(f"bad --shapes entry {entry[:80]!r}: every dim must be in "
                                 f"1..{MAX_DIM}", f"use {SHAPES_SYNTAX}")
            if name in out:
                raise InputError(f"--shapes gives input {name!r} twice", None)
            out[name] = dims
    return out


def format_shape(dims: Sequence[int]) -> str:
    """``[1, 3, 224, 224]`` -> ``"1x3x224x224"``."""
    return "x".join(str(int(d)) for d in dims)


def _example(inputs: Sequence[TensorInfo]) -> str:
    parts = []
    for t in inputs:
        if not t.shape:  # a scalar input takes no --shapes entry
            continue
        dims = [d if isinstance(d, int) and d > 0 else (1 if i == 0 else 224)
                for i, d in enumerate(t.shape)]
        parts.append(f"{t.name}:{format_shape(dims)}")
    return "--shapes " + ",".join(parts)


def kept_size_inputs(inputs: Sequence[TensorInfo], shapes: dict[str, list[int]],
                     batch_size: int) -> list[str]:
    """Inputs that keep their size at ``batch_size`` in ``shapes`` (from
    :func:`resolve_shapes`): no axis of theirs was set to the batch size, although other
    inputs were batched. Named in a failed batch's message: a state tensor whose batch
    axis is not axis 0 and not named like the batch axis keeps batch 1 and fails at any
    other batch size."""
    out = []
    for t in inputs:
        dims = shapes.get(t.name) or []
        if dims and batch_size not in dims and batch_size != 1:
            out.append(f"{t.name} {'x'.join(map(str, dims))}")
    return out


def resolve_shapes(inputs: Sequence[TensorInfo], given: dict[str, list[int]] | None,
                   batch_size: int | None = None) -> dict[str, list[int]]:
    """Concrete shape of every input for one execution.

    Rules: a user-given shape wins (its rank must match the model and fixed dims must
    agree); then, when ``batch_size`` is given, axis 0 of every input is set to it if
    that axis is dynamic in the model; an input with a fixed axis 0 keeps it when some
    other input is batched (a fixed-size parameter input), except an axis that carries
    the dim name of the batched inputs' axis 0 (a recurrent state ``[2, batch, 128]``
    beside ``input [batch, 512]``): that axis is set to ``batch_size``; otherwise (a
    model with a fixed batch) axis 0 must equal ``batch_size``; every other dynamic dim
    must come from ``given``. :func:`kept_size_inputs` names the inputs that keep their
    size at a batch size.

    Args:
        inputs: the model's inputs (from inspection or the backend).
        given: user shapes from :func:`parse_shapes` (may be ``None``).
        batch_size: samples per execution, >= 1, or ``None`` to use shapes as given.

    Raises:
        InputError: an unknown name in ``given``, a rank or fixed-dim mismatch, a model
            with a fixed batch that cannot take ``batch_size``, or dynamic dims left
            unset (the message names each one and shows the ``--shapes`` syntax).
    """
    given = dict(given or {})
    names = {t.name for t in inputs}
    unknown = [n for n in given if n not in names]
    if unknown:
        raise InputError(f"--shapes names unknown input(s) {', '.join(map(repr, unknown))}; "
                         f"the model's inputs are {', '.join(map(repr, sorted(names)))}",
                         _example(inputs))
    out: dict[str, list[int]] = {}
    missing: list[str] = []
    # --batch sets axis 0 of inputs whose axis 0 is dynamic; inputs with a fixed axis 0
    # (e.g. a [1] scale factor beside a batched image) keep it, unless no input is batched
    batched = [t for t in inputs if t.shape and not (isinstance(t.shape[0], int)
                                                     and t.shape[0] > 0)]
    batch_names = {t.shape[0] for t in batched if isinstance(t.shape[0], str) and t.shape[0]}
    for t in inputs:
        if t.name in given:
            dims = list(given[t.name])
            if len(dims) != len(t.shape):
                raise InputError(f"--shapes gives {t.name!r} {len(dims)} dims but the model "
                                 f"input has {len(t.shape)} {t.shape_text()}", _example(inputs))
            for i, (d, m) in enumerate(zip(dims, t.shape)):
                if isinstance(m, int) and m > 0 and d != m and not (i == 0 and batch_size):
                    raise InputError(f"--shapes gives {t.name!r} axis {i} = {d}, but the model "
                                     f"fixes it to {m} {t.shape_text()}", _example(inputs))
        else:
            dims = [d if isinstance(d, int) and d > 0 else -1 for d in t.shape]
        if batch_size is not None and dims:
            model_axis0 = t.shape[0]
            fixed0 = isinstance(model_axis0, int) and model_axis0 > 0
            if fixed0 and not batched and model_axis0 != batch_size:
                raise InputError(f"input {t.name!r} has a fixed batch dimension of "
                                 f"{model_axis0} {t.shape_text()}; batch size {batch_size} "
                                 "cannot run", "export the model with a dynamic batch axis "
                                 "or use --batch " + str(model_axis0))
            if not (fixed0 and batched):  # a fixed-size input beside batched ones keeps it
                dims[0] = batch_size
            else:
                # a state tensor whose batch axis is not axis 0 ([2, batch, 128]): follow
                # the dim name the batched inputs give their axis 0
                for i, m in enumerate(t.shape):
                    if i > 0 and isinstance(m, str) and m in batch_names:
                        dims[i] = batch_size
        unset = [i for i, d in enumerate(dims) if d < 1]
        for i in unset:
            label = t.shape[i] if isinstance(t.shape[i], str) else "?"
            missing.append(f"{t.name} axis {i} ({label!s})")
        out[t.name] = dims
    if missing:
        raise InputError("dynamic dims need sizes: " + ", ".join(missing),
                         f"give them with {_example(inputs)}")
    return out


def runnable_batch_sizes(inputs: Sequence[TensorInfo], given: dict[str, list[int]] | None,
                         batch_sizes: Sequence[int]) -> tuple[list[int], dict[int, str]]:
    """Split a batch-size sweep into the sizes the model's declared shapes allow and the
    ones they refuse (an input whose fixed axis 0 cannot take the size), so a sweep skips
    a size instead of aborting on it.

    Args:
        inputs: the model's inputs.
        given: user shapes (``--shapes``), or ``None``.
        batch_sizes: the sweep, each >= 1.

    Returns:
        ``(runnable, skipped)``: the runnable sizes in the given order, and for each
        refused size the one-line reason (from :func:`resolve_shapes`).
    """
    runnable: list[int] = []
    skipped: dict[int, str] = {}
    for b in batch_sizes:
        try:
            resolve_shapes(inputs, given, b)
        except InputError as exc:
            if "dynamic dims need sizes" in exc.message:  # not about the batch size
                runnable.append(b)
            else:
                skipped[b] = exc.message
        else:
            runnable.append(b)
    return runnable, skipped


def shapes_with_data(inputs: Sequence[TensorInfo], given: dict[str, list[int]] | None,
                     arrays: dict[str, Any] | None, where: str = "the input data"
                     ) -> dict[str, list[int]]:
    """``given`` (``--shapes``) plus the shape of each user array of the model's rank for
    an input that ``given`` does not name: data fixes its own dynamic dims.

    Args:
        inputs: the model's inputs.
        given: user shapes (they win over the data).
        arrays: user arrays by input name (``.npz``), or ``None``.
        where: how the error names the data (e.g. the .npz file name).

    Raises:
        InputError: an array of the model's rank that contradicts a fixed dim (named as
            data, not as ``--shapes``).
    """
    out = dict(given or {})
    for t in inputs:
        arr = (arrays or {}).get(t.name)
        if t.name in out or arr is None or not t.shape or arr.ndim != len(t.shape):
            continue
        dims = [int(d) for d in arr.shape]
        for i, (d, m) in enumerate(zip(dims, t.shape)):
            if isinstance(m, int) and m > 0 and d != m:
                raise InputError(f"{where} gives {t.name!r} shape {dims}, but the model fixes "
                                 f"axis {i} to {m} {t.shape_text()}",
                                 "save arrays of the model's shape, e.g. "
                                 f"{t.name} of shape {_example([t]).split(':')[-1]}")
        out[t.name] = dims
    return out


def build_profiles(min_s: tuple[str, ...], opt_s: tuple[str, ...], max_s: tuple[str, ...],
                   shapes: tuple[str, ...]) -> dict[str, tuple[list[int], list[int], list[int]]]:
    """The optimization profile of ``trtcheck build``: input name -> (min, opt, max) dims,
    from ``--shapes`` (fixed: all three equal) and ``--min-shapes``/``--opt-shapes``/
    ``--max-shapes`` (opt defaults to max).

    Raises:
        InputError: an input with only one of min/max, or dims not min <= opt <= max of
            one rank.
    """
    fixed = parse_shapes(list(shapes))
    mn, op, mx = parse_shapes(list(min_s)), parse_shapes(list(opt_s)), parse_shapes(list(max_s))
    out = {k: (v, v, v) for k, v in fixed.items()}
    for name in set(mn) | set(op) | set(mx):
        if not (name in mn and name in mx):
            raise InputError(f"input {name!r} needs both --min-shapes and --max-shapes",
                             "e.g. --min-shapes x:1x3x320x320 --opt-shapes x:1x3x640x640 "
                             "--max-shapes x:1x3x960x960")
        out[name] = (mn[name], op.get(name, mx[name]), mx[name])
    for name, (lo, mid, hi) in out.items():  # TensorRT would only fail after a long parse
        if not len(lo) == len(mid) == len(hi) or not all(
                a <= b <= c for a, b, c in zip(lo, mid, hi)):
            raise InputError(f"profile of {name!r} is not min <= opt <= max on every axis: "
                             f"min {'x'.join(map(str, lo))}, opt {'x'.join(map(str, mid))}, "
                             f"max {'x'.join(map(str, hi))}",
                             "give shapes of one rank with --min-shapes <= --opt-shapes <= "
                             "--max-shapes")
    return out


def check_profile_names(proto: object, profile: Mapping[str, object],
                        **given: tuple[str, ...]) -> None:
    """Every name in the shape options is an input of the model (before any runtime is
    imported: TensorRT would only say that some other input lacks a profile).

    Raises:
        InputError: a name that is not a graph input; the message names the option(s)
            and lists the model's inputs.
    """
    graph = proto.graph  # type: ignore[attr-defined]
    inits = {t.name for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in inits]
    unknown = [n for n in profile if n not in names]
    if not unknown:
        return
    options = [f"--{opt.replace('_', '-')}" for opt, specs in given.items()
               if any(n in parse_shapes(list(specs)) for n in unknown)]
    raise InputError(f"{'/'.join(options) or '--shapes'} name(s) unknown input(s) "
                     f"{', '.join(map(repr, unknown))}; the model's inputs are "
                     f"{', '.join(map(repr, names)) or '(none)'}",
                     f"use the model's input names, e.g. --shapes "
                     f"{names[0] if names else 'NAME'}:DIMS (`trtcheck inspect MODEL` lists "
                     "them with their dims)")
