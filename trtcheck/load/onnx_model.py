"""Load an ONNX model from disk with one clear error for every kind of bad input.

:func:`load_onnx` is the only place trtcheck parses an ``.onnx`` file. Before and after
parsing it checks, in this order, and raises :class:`trtcheck.errors.InputError`
(exit code 2) naming the problem:

* the path is missing, a directory, or empty;
* the file is a TensorRT plan (magic ``ftrt`` for TensorRT 8.6+ / ``vtrt`` for
  TensorRT-RTX at byte 0, or at byte 4 for older layouts), a Git LFS pointer, or text;
* protobuf cannot decode it (a truncated or corrupt file), or it decodes into something
  that is not a model (no graph, no ``ir_version``, no opset for IR >= 3: what a file
  truncated between top-level fields or a stray protobuf looks like);
* the model cannot be measured: its graph has no nodes, or a graph input declares a
  fixed size of 0 (an empty tensor, not a dynamic axis);
* external-data files that the model names are missing, outside the model folder or
  shorter than the model says (every missing file is named).

``onnx.checker.check_model`` is deliberately **not** a load gate: real exported models
fail it for reasons that do not stop ONNX Runtime or TensorRT (an opset newer than the
installed ``onnx``, custom domains, loose value_info); :mod:`trtcheck.inspection` reports
its verdict as a lint instead.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trtcheck.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import onnx

#: TensorRT plan magics (4 bytes). TensorRT 8.6+ plans start with the little-endian u32
#: 0x74727466 ("ftrt"); TensorRT-RTX plans with "vtrt" (seen on TensorRT-RTX 1.7 here,
#: docs/environment.md). Older plan layouts carry the tag at byte 4.
PLAN_MAGICS = (b"ftrt", b"vtrt")

_LFS_POINTER = b"version https://git-lfs"
_SNIFF_BYTES = 4096


def sha256_file(path: str | os.PathLike[str], chunk_bytes: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, as 64 lower-case hex digits.

    Reads in ``chunk_bytes`` chunks (default 1 MiB), so memory stays flat for
    multi-GB models.

    Raises:
        InputError: the file cannot be read.
    """
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(chunk_bytes), b""):
                h.update(block)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", None) from None
    return h.hexdigest()


def plan_magic(head: bytes) -> str | None:
    """The TensorRT plan magic in the first bytes of a file, or ``None``.

    Args:
        head: at least the first 8 bytes of the file.

    Returns:
        ``"ftrt"`` or ``"vtrt"`` when found at byte 0 or byte 4, else ``None``.
    """
    for magic in PLAN_MAGICS:
        if head[:4] == magic or head[4:8] == magic:
            return magic.decode("ascii")
    return None


def _looks_like_text(head: bytes) -> bool:
    """True when ``head`` decodes as UTF-8 text with no control bytes but tab/CR/LF.

    A binary ONNX file starts with the protobuf tag 0x08 (``ir_version``), a control
    byte, so it never passes.
    """
    if not head:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        # a multi-byte character cut at the end of the sniffed block
        try:
            text = head[:-3].decode("utf-8")
        except UnicodeDecodeError:
            return False
    return all(ch.isprintable() or ch in "\t\r\n" for ch in text)


def check_model_file(path: str | os.PathLike[str]) -> Path:
    """Check that ``path`` is a non-empty regular file that is not obviously non-ONNX.

    Returns:
        the path as :class:`~pathlib.Path`.

    Raises:
        InputError: missing, a directory, empty, unreadable, a TensorRT plan, a Git LFS
            pointer, or a text file.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"model file not found: {p}", "check the path")
    if p.is_dir():
        try:
            found = sorted(c.name for c in p.iterdir() if c.suffix.lower() == ".onnx")
        except OSError:
            found = []
        hint = ("pass the .onnx file inside it" if not found else
                f"pass one of the models inside it: {', '.join(found[:5])}"
                + (", ..." if len(found) > 5 else ""))
        raise InputError(f"{p} is a directory, not an ONNX model", hint)
    from trtcheck.safe_io import check_input_file

    check_input_file(p, "model file")  # a regular file (a FIFO would block the read)
    try:
        size = p.stat().st_size
        with open(p, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror or exc}",
                         "check the file's permissions") from None
    if size == 0:
        raise InputError(f"{p} is empty (0 bytes), not an ONNX model",
                         "re-export or re-download the model")
    magic = plan_magic(head)
    if magic is not None:
        raise InputError(f"{p} is a TensorRT plan (engine, magic {magic!r}), not an ONNX model",
                         f"inspect it as an engine: trtcheck inspect {p}")
    if head.startswith(_LFS_POINTER):
        raise InputError(f"{p} is a Git LFS pointer ({size} bytes), not the model itself",
                         "fetch the real file with `git lfs pull`")
    if _looks_like_text(head):
        first = head.decode("utf-8", "replace").strip().splitlines()[0][:60] if head.strip() else ""
        raise InputError(f"{p} is a text file (starts with {first!r}), not a binary ONNX model",
                         "pass the exported .onnx file (ONNX's protobuf format)")
    return p


def iter_graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """Yield ``graph`` and every subgraph (If/Loop/Scan bodies), depth first."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from iter_graphs(attr.g)
            for g in attr.graphs:
                yield from iter_graphs(g)


def iter_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every stored tensor of a model: initializers, sparse initializers' values and
    indices, and tensor attributes (``Constant`` values and the like), in all graphs and
    local functions."""
    graphs = list(iter_graphs(model.graph))
    for fn in model.functions:
        for node in fn.node:
            for attr in node.attribute:
                if attr.HasField("g"):
                    graphs.extend(iter_graphs(attr.g))
    for g in graphs:
        yield from g.initializer
        for sp in g.sparse_initializer:
            yield sp.values
            yield sp.indices
        for node in g.node:
            for attr in node.attribute:
                if attr.HasField("t"):
                    yield attr.t
                yield from attr.tensors
                if attr.HasField("sparse_tensor"):
                    yield attr.sparse_tensor.values
                    yield attr.sparse_tensor.indices
    for fn in model.functions:
        for node in fn.node:
            for attr in node.attribute:
                if attr.HasField("t"):
                    yield attr.t


def external_data_refs(model: onnx.ModelProto) -> dict[str, int]:
    """External-data files a model references and the bytes it needs from each.

    Returns:
        ``{location: required_length_bytes}`` where ``required_length_bytes`` is the
        largest ``offset + length`` over the tensors stored in that file (0 when the
        model gives no length, as ``onnx`` allows).
    """
    from onnx import TensorProto

    out: dict[str, int] = {}
    for t in iter_tensors(model):
        if t.data_location != TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        loc = info.get("location", "")
        try:
            end = int(info.get("offset", 0) or 0) + int(info.get("length", 0) or 0)
        except ValueError:
            end = 0
        out[loc] = max(out.get(loc, 0), end)
    return out


def check_external_data(model: onnx.ModelProto, base_dir: Path) -> list[str]:
    """Verify every external-data file exists, stays inside ``base_dir`` and is long enough.

    Returns:
        the referenced locations, sorted.

    Raises:
        InputError: naming every missing file, an unsafe location (absolute or leaving
            the model's folder) or a file shorter than the tensors it must hold.
    """
    refs = external_data_refs(model)
    missing: list[str] = []
    short: list[str] = []
    base = base_dir.resolve()
    for loc, need in sorted(refs.items()):
        if not loc or os.path.isabs(loc) or ".." in Path(loc).parts:
            raise InputError(f"the model names an unsafe external-data location {loc!r}",
                             "external data must be a relative path inside the model's folder")
        f = (base / loc)
        if not f.is_file():
            missing.append(loc)
        elif need and f.stat().st_size < need:
            short.append(f"{loc} ({f.stat().st_size} bytes, needs {need})")
    if missing:
        raise InputError(f"external-data file(s) missing next to the model in {base_dir}: "
                         + ", ".join(missing),
                         "copy the weight files that were saved with the model into that folder")
    if short:
        raise InputError("external-data file(s) shorter than the model says (truncated?): "
                         + ", ".join(short), "re-copy or re-export the model's weight files")
    return sorted(refs)


def _structure_problem(model: onnx.ModelProto) -> str | None:
    """What makes a decoded protobuf not a usable model, or ``None``.

    These are the checks a truncated file fails: protobuf serialises fields in field
    number order (ir_version=1 ... graph=7, opset_import=8), so a cut between top-level
    fields loses the graph or the opset list.
    """
    if model.ir_version <= 0:
        return "it has no ir_version"
    if not model.HasField("graph"):
        return "it has no graph"
    if model.ir_version >= 3 and len(model.opset_import) == 0:
        return "it has no opset_import (an IR >= 3 model must name its opsets)"
    g = model.graph
    if len(g.output) == 0:
        return "its graph has no outputs"
    if len(g.node) == 0 and not any(o.name in {i.name for i in g.input} for o in g.output):
        return "its graph has no nodes"
    return None


def pb_text(value: str | bytes) -> str:
    """A protobuf string field as text: protobuf hands over ``bytes`` when a field is not
    valid UTF-8; each bad byte is then shown as ``\\xNN``."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return value


def escape_text_fields(message: Any) -> int:
    """Replace, in place, every string field of a protobuf message (recursively: the graph,
    its nodes, attributes, subgraphs, value infos, metadata) that holds ``bytes`` (not
    valid UTF-8) by its escaped text (:func:`pb_text`). Equal names stay equal, so the
    graph keeps its meaning; every later reader sees text.

    Returns:
        how many fields were replaced.
    """
    from google.protobuf.descriptor import FieldDescriptor

    n = 0
    stack = [message]
    while stack:
        msg = stack.pop()
        for fd, value in msg.ListFields():
            repeated = (fd.is_repeated if hasattr(fd, "is_repeated")
                        else fd.label == FieldDescriptor.LABEL_REPEATED)
            if callable(repeated):
                repeated = repeated()
            if fd.type == FieldDescriptor.TYPE_MESSAGE:
                if repeated:
                    stack.extend(value)
                else:
                    stack.append(value)
            elif fd.type == FieldDescriptor.TYPE_STRING:
                if repeated:
                    for i, v in enumerate(value):
                        if isinstance(v, bytes):
                            value[i] = pb_text(v)
                            n += 1
                elif isinstance(value, bytes):
                    setattr(msg, fd.name, pb_text(value))
                    n += 1
    return n


def _usability_problem(model: onnx.ModelProto) -> tuple[str, str] | None:
    """``(what, hint)`` for a well-formed model that cannot be measured, or ``None``.

    * no nodes at all: the outputs are the inputs, nothing runs (a bench of it times a
      copy; a build gives an engine of no layers);
    * a graph input with a fixed dimension of 0: ONNX ``dim_value: 0`` is a fixed
      *empty* axis, not a dynamic one (dynamic axes use ``dim_param`` or no value), so
      TensorRT builds for an empty tensor and no ``--shapes`` can change it;
    * a size below -1 (-1 itself is read as dynamic, the convention of PaddlePaddle
      exports), or fixed sizes whose product exceeds ``2**63 - 1`` elements (the int64
      element count of every runtime).
    """
    g = model.graph
    if len(g.node) == 0:
        return ("its graph has no nodes: the outputs are copies of the inputs and there is "
                "nothing to measure",
                "export the model again; check that the exporter traced the computation")
    inits = {t.name for t in g.initializer}
    for vi in g.input:
        if vi.name in inits or not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            continue
        dims = tt.shape.dim
        shown = ", ".join(str(d.dim_value) if d.HasField("dim_value")
                          else (pb_text(d.dim_param) or "?") for d in dims)
        name = ascii(pb_text(vi.name))[1:-1]
        fixed = [(i, int(d.dim_value)) for i, d in enumerate(dims) if d.HasField("dim_value")]
        # -1 marks a dynamic axis in many exports (PaddlePaddle's): read as dynamic; any
        # other negative size is no shape at all
        negative = [i for i, v in fixed if v < -1]
        if negative:
            return (f"input {name!r} declares axis {negative[0]} with a negative size "
                    f"([{shown}]), which ONNX does not allow",
                    "export dynamic axes as named dim_params (e.g. 'batch')")
        zero = [i for i, v in fixed if v == 0]
        if zero:
            return (f"input {name!r} declares axis {zero[0]} with size 0 ([{shown}]): a "
                    "fixed empty axis in ONNX, not a dynamic one, so the model only runs on "
                    "empty tensors",
                    "export that axis as dynamic (a named dim_param, e.g. 'batch') or with "
                    "its real size")
        count = 1
        for _, v in fixed:
            count *= max(v, 1)
        if count > MAX_TENSOR_ELEMENTS:
            return (f"input {name!r} declares [{shown}]: {count:.3g} elements, more than "
                    f"any runtime indexes (2**63 - 1)", "check the exported input shape")
    return None


MAX_TENSOR_ELEMENTS = 2**63 - 1
"""Most elements a tensor may have: TensorRT and ONNX Runtime count them in int64."""


def load_onnx(path: str | os.PathLike[str], load_external_data: bool = True) -> onnx.ModelProto:
    """Read an ONNX model, or raise one clear :class:`InputError`.

    Args:
        path: the ``.onnx`` file (any extension is accepted; the content decides).
        load_external_data: read tensors stored in external-data files into the model.
            When ``False`` the files are still checked (exist, inside the model folder,
            long enough) but not read, which keeps memory small for multi-GB models;
            inspection uses this.

    Returns:
        the parsed ``onnx.ModelProto``.

    Raises:
        InputError: (exit code 2) see the module docstring for the cases.
    """
    import onnx
    from google.protobuf.message import DecodeError

    p = check_model_file(path)
    try:
        model = onnx.load(str(p), load_external_data=False)
    except (DecodeError, RuntimeWarning) as exc:
        raise InputError(f"{p} is not a valid ONNX model: protobuf cannot decode it "
                         f"(truncated or corrupt file: {exc})",
                         "re-export or re-download the model") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {p} as ONNX: {exc}", "re-export the model") from None
    escape_text_fields(model)  # names that are not UTF-8: escaped text from here on
    problem = _structure_problem(model)
    if problem is not None:
        raise InputError(f"{p} is not a valid ONNX model: {problem} "
                         "(truncated or corrupt file?)", "re-export or re-download the model")
    usability = _usability_problem(model)
    if usability is not None:
        raise InputError(f"{p} cannot be measured: {usability[0]}", usability[1])
    check_external_data(model, p.parent)
    if load_external_data and external_data_refs(model):
        from onnx.external_data_helper import load_external_data_for_model

        try:
            load_external_data_for_model(model, str(p.parent))
        except (OSError, ValueError, onnx.checker.ValidationError) as exc:
            raise InputError(f"cannot read the external data of {p}: {exc}",
                             "re-copy the weight files saved with the model") from None
    return model
