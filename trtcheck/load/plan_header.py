"""Plan pre-flight: read a serialized TensorRT engine's header without a GPU or TensorRT.

Answers, before anyone calls ``deserialize_cuda_engine``: is this a plan at all, which
runtime built it (TensorRT or TensorRT-RTX) and which version, is it complete, and can the
runtime installed here load it -- and if not, why, in one line with the fix.

Header layout and where each fact comes from
--------------------------------------------
Verified on real bytes (plans built here with TensorRT-RTX 1.7.1.116 on CPU: a hand-built
Conv+ReLU network, a tiny ONNX conv net and PP-OCRv4 det through Polygraphy; see
``tests/test_rtx_build.py``), all little-endian:

======  ======  ======================================================================
offset  size    TensorRT-RTX plan
======  ======  ======================================================================
0       4       magic ``b"vtrt"``
16      8       u64: total plan length in bytes (equal to the file size)
24      4       building version, one byte each: major, minor, patch, build
                (``01 07 01 74`` = 1.7.1.116)
======  ======  ======================================================================

Full TensorRT (8.6 and later), not verifiable here (no full TensorRT installs on any
machine we have):

* magic: u32 ``0x74727466`` little-endian, i.e. the bytes ``b"ftrt"``. Source: TensorRT's
  own error text "Serialization assertion header.magicTag == rt::PlanMagicTag::
  kPLAN_MAGIC_TAG failed ... (1953657968 != 1953657958)" (quoted in a public issue;
  1953657958 == 0x74727466), and the project environment notes.
* building version in bytes 24..27 (major, minor, patch, build): an NVIDIA engineer's
  answer in NVIDIA/TensorRT issue #3073, used in production by Autoware's
  ``autoware_tensorrt_common`` (PR autowarefoundation/autoware_universe#10320, constant
  ``TRT_MAJOR_IDX = 24``).
* the length field at 16..23 is assumed to follow the RTX layout. A file shorter than
  the length it claims cannot be a complete plan whatever the layout, so it is refused
  as truncated; a length field below the header size is only trusted when the bytes
  after the header are also almost all zero (a file allocated but never written).
* ``b"ptrt"`` (0x74727470, the other value in the error above) is another TensorRT plan
  variant whose meaning NVIDIA does not document; reported as such.
* before 8.6 there was no magic; the u32 at byte 8 was a serialization version (205 for
  8.2, 213 for 8.4, 232 for 8.5, per the same issue #3073). Reported as "probably a
  TensorRT 8.5 or older plan" when it matches.

Load rules (TensorRT developer guide, "Version Compatibility" / "Hardware
Compatibility"): a plan loads only in the TensorRT version that built it (major.minor.
patch; trtexec says "expecting library version X got Y") unless it was built
version-compatible (then a same-major, same-or-newer runtime, usually the lean/dispatch
runtime, loads it); and only on the GPU architecture it was built for unless built
hardware-compatible (Ampere+). TensorRT and TensorRT-RTX plans are not interchangeable.
"""

from __future__ import annotations

from typing import Any

import importlib.metadata as md
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from trtcheck.errors import EnvironmentProblem, InputError
from trtcheck.results.engine import PlanInfo
from trtcheck.results.stats import Finding

MAGIC_TRT = b"ftrt"
"""TensorRT 8.6+ plan magic (u32 0x74727466 little-endian)."""
MAGIC_RTX = b"vtrt"
"""TensorRT-RTX plan magic (observed on plans built here)."""
MAGIC_TRT_OTHER = b"ptrt"
"""Another TensorRT serialization tag seen in TensorRT's own error text (undocumented)."""
HEADER_BYTES = 28
"""Bytes the header needs for the version field (24..27)."""

#: pre-8.6 serialization version (u32 at byte 8) -> TensorRT version (NVIDIA/TensorRT#3073)
LEGACY_SERIALIZATION_VERSIONS = {205: "8.2", 213: "8.4", 232: "8.5"}

#: distribution names that install the ``tensorrt`` module, most specific first
TRT_DISTRIBUTIONS = ("tensorrt-cu13", "tensorrt-cu12", "tensorrt-cu11", "tensorrt",
                     "tensorrt-cu13-libs", "tensorrt-cu12-libs", "tensorrt-lean-cu13",
                     "tensorrt-lean-cu12", "tensorrt-lean", "tensorrt-dispatch-cu13",
                     "tensorrt-dispatch-cu12", "tensorrt-dispatch")
RTX_DISTRIBUTIONS = ("tensorrt-rtx-cu13", "tensorrt-rtx-cu12", "tensorrt-rtx",
                     "tensorrt_rtx")

INSTALL_HINTS = {
    "tensorrt": 'pip install tensorrt-cu12 "cuda-python>=12,<13" (CUDA 12, the trt-cu12 '
                'extra) or tensorrt-cu13 "cuda-python>=13" (CUDA 13) on the GPU machine',
    "tensorrt_rtx": 'pip install tensorrt-rtx-cu13 "cuda-python>=13" (the rtx extra) on the '
                    'GPU machine',
}


#: problem codes meaning "this file is not a usable plan" (bad input, exit 2), as opposed to
#: "a plan for another runtime/version" (environment, exit 3)
UNUSABLE_CODES = frozenset({
    "plan-empty", "plan-is-onnx", "plan-is-text", "plan-lfs-pointer", "plan-unknown-format",
    "plan-legacy", "plan-prefix", "plan-truncated", "plan-text-mode", "plan-text-decoded",
    "plan-text-reencoded", "plan-bad-header"})


@dataclass(frozen=True)
class Runtime:
    """An installed runtime found through package metadata (no import).

    Attributes:
        name: ``"tensorrt"`` or ``"tensorrt_rtx"``.
        version: its version string, e.g. ``"10.8.0.43"``.
        distribution: the pip distribution that provided it.
        lean: ``True`` for the lean/dispatch runtimes (version-compatible plans only).
    """

    name: str
    version: str
    distribution: str
    lean: bool = False


def installed_runtimes() -> dict[str, Runtime]:
    """Runtimes installed in this environment, keyed by module name, read from package
    metadata with :mod:`importlib.metadata` (nothing is imported; works without a GPU)."""
    found: dict[str, Runtime] = {}
    for name, dists in (("tensorrt", TRT_DISTRIBUTIONS), ("tensorrt_rtx", RTX_DISTRIBUTIONS)):
        for dist in dists:
            try:
                ver = md.version(dist)
            except md.PackageNotFoundError:
                continue
            found[name] = Runtime(name, ver, dist, lean=("lean" in dist or "dispatch" in dist))
            break
    return found


def _version_tuple(text: str) -> tuple[int, ...]:
    out = []
    for part in re.split(r"[.+]", text):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group()))
    return tuple(out)


def _magic_text(b: bytes) -> str:
    if b and all(32 <= c < 127 for c in b):
        return b.decode("ascii")
    return b.hex(" ")


def _looks_like_onnx(head: bytes) -> bool:
    """ModelProto starts with field 1 (ir_version, varint, tag 0x08) holding 1..30,
    followed by another ModelProto field tag (producer_name 0x12, producer_version 0x1a,
    domain 0x22, model_version 0x28, doc_string 0x32, graph 0x3a, opset_import 0x42)."""
    return (len(head) >= 3 and head[0] == 0x08 and 1 <= head[1] <= 30
            and head[2] in (0x12, 0x1A, 0x22, 0x28, 0x32, 0x3A, 0x42))


def _looks_like_text(head: bytes) -> bool:
    if not head or b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        # a multi-byte character cut at the end of the window is still text
        try:
            head[:-3].decode("utf-8")
        except UnicodeDecodeError:
            return False
    printable = sum(1 for c in head if c >= 32 or c in (9, 10, 13))
    return printable / len(head) > 0.95


ZERO_FILLED_FRACTION = 0.9
"""Share of zero bytes after the header from which a plan counts as never written: real
plans carry kernels and weights; a file preallocated and cut short (a crashed copy, a
sparse download) is zeros."""


ZERO_FILLED_MIN_BYTES = 256
"""Bytes after the header needed before the zero-filled rule applies (a shorter file is
judged by its header alone)."""


REENCODED_MIN_PAIRS = 16
"""Bytes >= 0x80 that must all be Latin-1-as-UTF-8 pairs before a plan counts as
re-encoded (a real plan's weights and kernels hold high bytes of every value)."""

_HIGH_BYTE = re.compile(rb"[\x80-\xff]")
_LATIN1_PAIR = re.compile(rb"[\xc2\xc3][\x80-\xbf]")


def latin1_reencoded_pairs(data: bytes) -> int:
    """How many Latin-1-as-UTF-8 pairs ``data`` holds when it went through a Latin-1
    decode and a UTF-8 encode (every byte >= 0x80 became 0xC2/0xC3 followed by one
    continuation byte, so every high byte of the file is part of such a pair), else 0.
    A binary plan's high bytes take every value; after that round trip no byte above
    0xC3 and no lone continuation byte is left."""
    high = len(_HIGH_BYTE.findall(data))
    if high < 2 * REENCODED_MIN_PAIRS or high % 2:
        return 0
    pairs = len(_LATIN1_PAIR.findall(data))
    if 2 * pairs != high:
        return 0
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return pairs


def _zero_fraction(body: bytes) -> float:
    """Share of zero bytes in ``body`` (0.0 for no bytes)."""
    return body.count(0) / len(body) if body else 0.0


def _metadata_keys(blob: bytes) -> list[str] | None:
    """Top-level keys of a JSON object ``blob`` (printable, at most 64 characters each),
    or ``None`` when it is not a JSON object. Never raises: the prefix is untrusted."""
    import json

    try:
        obj = json.loads(blob.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    return [_printable(str(k))[:64] for k in list(obj)[:100]]


def _printable(text: str) -> str:
    """``text`` with control characters and lone surrogates escaped (safe to print)."""
    return "".join(c if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF
                   else ascii(c)[1:-1] for c in text)


def _find_magic(data: bytes) -> tuple[int, bytes] | None:
    best: tuple[int, bytes] | None = None
    for magic in (MAGIC_TRT, MAGIC_RTX):
        i = data.find(magic)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, magic)
    return best


def read_plan_info(path: str | Path, runtimes: dict[str, Runtime] | None = None,
                   prefer_runtime: str | None = None) -> PlanInfo:
    """Pre-flight a plan file: kind, building version, completeness, loadability.

    Args:
        path: the file to examine.
        runtimes: installed runtimes to compare with (default: :func:`installed_runtimes`);
            tests pass their own.
        prefer_runtime: ``"tensorrt"`` or ``"tensorrt_rtx"`` when the user named one.

    Returns:
        :class:`PlanInfo`; ``can_load`` is ``False`` with a ``verdict`` starting
        "cannot load because" for every problem found, ``None`` when no runtime is
        installed to compare with (the building version is still reported).

    Raises:
        InputError: the path does not exist or is a directory.
    """
    from trtcheck.safe_io import check_input_file

    p = Path(path)
    if p.is_dir():
        raise InputError(f"{p} is a directory, not a plan file",
                         "pass the .plan/.engine file (or a trtexec export folder to "
                         "`trtcheck inspect`)")
    check_input_file(p, "plan file", "check the path")  # a regular file: no FIFO/device
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror or exc}",
                         "check the file's permissions") from None
    return plan_info_from_bytes(data, str(p), runtimes=runtimes, prefer_runtime=prefer_runtime)


def _problem(code: str, message: str, remedy: str | None, severity: str = "error") -> Finding:
    return Finding(code=code, severity=severity, message=message, remedy=remedy)


def plan_info_from_bytes(data: bytes, path: str = "<bytes>",
                         runtimes: dict[str, Runtime] | None = None,
                         prefer_runtime: str | None = None) -> PlanInfo:
    """Same as :func:`read_plan_info` for bytes already in memory (no file access)."""
    if runtimes is None:
        runtimes = installed_runtimes()
    size = len(data)
    head = data[:4096]
    problems: list[Finding] = []
    base: dict[str, Any] = {"path": path, "file_size_bytes": size, "magic": _magic_text(data[:4])}

    def bad(kind: str, code: str, why: str, remedy: str, **kw: object) -> PlanInfo:
        problems.append(_problem(code, why, remedy))
        return PlanInfo(kind=kind, can_load=False, verdict=f"cannot load because {why}",
                        problems=problems, **base, **kw)  # type: ignore[arg-type]

    if size == 0:
        return bad("empty", "plan-empty", "the file is empty (0 bytes)",
                   "rebuild the engine; the file was not written completely")
    magic = data[:4]
    offset = 0
    if magic not in (MAGIC_TRT, MAGIC_RTX, MAGIC_TRT_OTHER):
        found = _find_magic(data[:1 << 20])
        if found is not None and found[0] > 0:
            offset, magic = found
            prefix = data[:offset]
            if len(prefix) >= 5 and prefix[4:5] == b"{" and \
                    struct.unpack_from("<i", prefix, 0)[0] == offset - 4:
                what = (f"a {offset}-byte JSON metadata block (4-byte length + JSON, the "
                        f"layout Ultralytics' exporter writes) precedes the plan")
                keys = _metadata_keys(prefix[4:])
                if keys is not None:
                    base["prefix_metadata_keys"] = keys
                    shown = ", ".join(keys[:12]) + (", ..." if len(keys) > 12 else "")
                    what += f"; its keys: {shown or '(none)'}"
            elif prefix.lstrip()[:1] in (b"{", b"["):
                what = f"{offset} bytes of JSON text precede the plan"
            else:
                what = f"{offset} unknown bytes precede the plan"
            problems.append(_problem(
                "plan-prefix", what,
                f"TensorRT reads only the plan: strip the first {offset} bytes "
                f"(`trtcheck preflight {Path(path).name} --strip-prefix -o clean.plan`) or "
                "load it with the exporter's own loader"))
        elif _looks_like_onnx(head):
            return bad("onnx", "plan-is-onnx", "this is an ONNX model, not a TensorRT plan",
                       "run `trtcheck inspect` on it as a model, or build an engine first "
                       "(`trtcheck build MODEL.onnx` or `trtexec --onnx=MODEL.onnx "
                       "--saveEngine=model.plan`)")
        elif head.startswith(b"version https://git-lfs"):
            return bad("text", "plan-lfs-pointer",
                       "this is a Git LFS pointer file, not the plan itself",
                       "fetch the real file with `git lfs pull`")
        elif _looks_like_text(head):
            first = head.split(b"\n", 1)[0][:60].decode("utf-8", "replace")
            return bad("text", "plan-is-text",
                       f"this is a text file (starts with {first!r}), not a TensorRT plan",
                       "pass the binary .plan/.engine written by trtexec --saveEngine or "
                       "by serializing the engine in binary mode ('wb')")
        else:
            legacy = None
            if size >= 12:
                legacy = LEGACY_SERIALIZATION_VERSIONS.get(struct.unpack_from("<I", data, 8)[0])
            if legacy:
                return bad("tensorrt", "plan-legacy",
                           f"it looks like a plan from TensorRT {legacy} or older (no "
                           "magic tag; serialization version at byte 8), which TensorRT "
                           "8.6+ cannot load",
                           "rebuild the engine with the TensorRT installed here",
                           built_with_version=legacy)
            return bad("unknown", "plan-unknown-format",
                       f"the file does not start with a TensorRT plan magic "
                       f"(got {_magic_text(data[:4])!r}; TensorRT plans start with 'ftrt', "
                       "TensorRT-RTX plans with 'vtrt')",
                       "check that this is a serialized engine (trtexec --saveEngine)")
    plan = data[offset:]
    kind = {MAGIC_TRT: "tensorrt", MAGIC_RTX: "tensorrt_rtx",
            MAGIC_TRT_OTHER: "tensorrt"}[magic]
    base["magic"] = magic.decode("ascii")
    if len(plan) < HEADER_BYTES:
        return bad(kind, "plan-truncated",
                   f"the plan is truncated: {len(plan)} bytes, shorter than its header",
                   "copy or rebuild the engine again; the file was cut short",
                   plan_offset_bytes=offset)
    reencoded = latin1_reencoded_pairs(plan)
    if reencoded:
        return bad(kind, "plan-text-reencoded",
                   f"the plan is damaged: re-encoded as text (read as Latin-1 and written "
                   f"as UTF-8: each of its {reencoded} bytes >= 0x80 became two bytes, "
                   "0xC2/0xC3 + one)",
                   "copy the original binary again; the bytes can also be recovered "
                   "exactly with data.decode('utf-8').encode('latin-1')", plan_offset_bytes=offset)
    built = ".".join(str(b) for b in plan[24:28])
    header_size = struct.unpack_from("<Q", plan, 16)[0]
    extra: dict[str, Any] = {"plan_offset_bytes": offset, "built_with_version": built,
             "header_size_bytes": header_size}
    zero_fraction = _zero_fraction(plan[HEADER_BYTES:])
    if (header_size < HEADER_BYTES and len(plan) - HEADER_BYTES >= ZERO_FILLED_MIN_BYTES
            and zero_fraction >= ZERO_FILLED_FRACTION):
        return bad(kind, "plan-truncated",
                   f"the plan is truncated or was never fully written: its length field "
                   f"says {header_size} bytes and {zero_fraction:.0%} of the "
                   f"{len(plan) - HEADER_BYTES} bytes after the header are zero",
                   "copy or rebuild the engine again; the file was not written completely",
                   **extra)
    if plan[24] == 0:  # no TensorRT or TensorRT-RTX release has major version 0
        label = "TensorRT-RTX" if kind == "tensorrt_rtx" else "TensorRT"
        return bad(kind, "plan-bad-header",
                   f"the {label} plan header is damaged (version field {built})",
                   "rebuild the engine or copy it again in binary mode", **extra)
    if magic == MAGIC_TRT_OTHER:
        problems.append(_problem(
            "plan-variant", "the plan carries the tag 'ptrt', a TensorRT serialization "
            "variant (e.g. safety runtime or another OS) the standard runtime rejects",
            "rebuild with the standard TensorRT runtime on this OS", severity="warning"))
    if header_size < HEADER_BYTES and kind == "tensorrt_rtx":
        return bad(kind, "plan-bad-header",
                   f"the TensorRT-RTX plan header is damaged (length field {header_size}, "
                   f"smaller than the {HEADER_BYTES}-byte header)",
                   "rebuild the engine or copy it again in binary mode", **extra)
    replacement = plan.count(b"\xef\xbf\xbd")
    if replacement > 16 and replacement * 3 > len(plan) // 200:
        return bad(kind, "plan-text-decoded",
                   f"the plan went through a text decode/encode ({replacement} UTF-8 "
                   "replacement characters U+FFFD)",
                   "transfer and store the plan as binary (bytes), never as str", **extra)
    # completeness and text-mode damage, from the header's length field
    if header_size >= HEADER_BYTES and header_size != len(plan):
        lf = plan.count(b"\n")
        if len(plan) > header_size and len(plan.replace(b"\r\n", b"\n")) == header_size:
            return bad(kind, "plan-text-mode",
                       f"the plan was written in text mode: every LF byte became CR LF "
                       f"({len(plan) - header_size} bytes added)",
                       "write the serialized engine with open(path, 'wb') and rebuild or "
                       "re-copy it in binary mode (FTP/ASCII transfers do this too)", **extra)
        if len(plan) < header_size:
            why = (f"the plan is truncated: {len(plan)} of {header_size} bytes "
                   f"({header_size - len(plan)} missing)")
            remedy = "copy or rebuild the engine again; the file was cut short"
            if header_size - len(plan) <= lf and len(plan) > header_size // 2:
                remedy += ("; if it passed through a text-mode read/write (CR LF -> LF), "
                           "copy it in binary mode")
            return bad(kind, "plan-truncated", why, remedy, **extra)
        elif kind == "tensorrt_rtx":
            trailing = len(plan) - header_size
            problems.append(_problem(
                "plan-trailing-bytes", f"{trailing} bytes follow the end of the plan",
                "something appended data to the file; TensorRT ignores or rejects it",
                severity="warning"))
    # compare with the runtime installed here
    want = kind
    if prefer_runtime and prefer_runtime != want:
        other = "TensorRT-RTX" if want == "tensorrt_rtx" else "TensorRT"
        asked = "TensorRT-RTX" if prefer_runtime == "tensorrt_rtx" else "TensorRT"
        return bad(kind, "plan-wrong-runtime",
                   f"it is a {other} {built} plan and the {asked} runtime was chosen "
                   "(by --backend/--runtime, or the default for the file); "
                   "the two plan formats are not interchangeable",
                   f"load it with {other} (`--backend {want}` for bench, `--runtime {want}` "
                   f"for preflight/build), or rebuild the engine with {asked}", **extra)
    rt = runtimes.get(want)
    if rt is None:
        label = "TensorRT-RTX" if want == "tensorrt_rtx" else "TensorRT"
        others = ", ".join(f"{r.name} {r.version}" for r in runtimes.values()) or "none"
        problems.append(_problem("plan-no-runtime",
                                 f"no {label} runtime is installed here (installed: {others})",
                                 INSTALL_HINTS[want], severity="warning"))
        errors = [p for p in problems if p.severity == "error"]
        if errors:
            # a plan that can never load (a prefix in front) cannot load here either,
            # whatever runtime is or is not installed
            return PlanInfo(kind=kind, can_load=False, problems=problems,
                            verdict=f"cannot load because {errors[0].message} (and no "
                                    f"{label} runtime is installed here)", **base, **extra)
        return PlanInfo(kind=kind, can_load=None, problems=problems,
                        verdict=f"{label} {built} plan; cannot tell whether it loads: no "
                                f"{label} runtime installed here", **base, **extra)
    have = _version_tuple(rt.version)
    got = _version_tuple(built)
    label = "TensorRT-RTX" if want == "tensorrt_rtx" else "TensorRT"
    if have[:3] != got[:3]:
        if rt.lean and have[:1] == got[:1] and have[:3] >= got[:3]:
            problems.append(_problem(
                "plan-version-compatible-needed",
                f"plan built by {label} {built}, lean/dispatch runtime {rt.version} "
                "loads it only if it was built version-compatible",
                "build with --versionCompatible (BuilderFlag.VERSION_COMPATIBLE)",
                severity="warning"))
            errors = [p for p in problems if p.severity == "error"]
            return PlanInfo(kind=kind, can_load=False if errors else None, problems=problems,
                            runtime_name=rt.name, runtime_version=rt.version,
                            verdict=(f"cannot load because {errors[0].message}" if errors
                                     else "loads only if built version-compatible"),
                            **base, **extra)
        return bad(kind, "plan-version-mismatch",
                   f"it was built by {label} {built} and the installed runtime is "
                   f"{rt.version} ({rt.distribution}); plans load only in the version "
                   "that built them",
                   f"rebuild the engine with {label} {rt.version}, or install "
                   f"{rt.distribution}=={built}",
                   runtime_name=rt.name, runtime_version=rt.version, **extra)
    if have[3:4] != got[3:4] and len(have) > 3:
        problems.append(_problem(
            "plan-build-mismatch",
            f"build number differs: plan {built}, runtime {rt.version}",
            "usually loads; rebuild if deserialization fails", severity="info"))
    if offset:
        return PlanInfo(kind=kind, can_load=False, problems=problems,
                        runtime_name=rt.name, runtime_version=rt.version,
                        verdict=f"cannot load because {problems[0].message}; the plan inside "
                                f"({label} {built}) matches the installed runtime once "
                                "the prefix is removed", **base, **extra)
    return PlanInfo(kind=kind, can_load=True, problems=problems,
                    runtime_name=rt.name, runtime_version=rt.version,
                    verdict=f"can load ({label} {built} plan, runtime {rt.version}; "
                            "the GPU is checked at deserialization)",
                    **base, **extra)


def strip_prefix(src: str | Path, dst: str | Path) -> int:
    """Write the plan found inside ``src`` (after a prepended prefix) to ``dst``.

    Returns:
        number of bytes removed.

    Raises:
        InputError: no plan magic in ``src``, no prefix to strip, or ``dst`` exists.
    """
    from trtcheck.safe_io import check_input_file

    s, d = Path(src), Path(dst)
    if d.exists():
        raise InputError(f"{d} exists; not overwriting it", "choose a new output path")
    data = check_input_file(s, "plan file").read_bytes()
    found = _find_magic(data[:1 << 20])
    if found is None:
        raise InputError(f"{s} holds no TensorRT plan magic", None)
    if found[0] == 0:
        raise InputError(f"{s} has no prefix to strip: the plan starts at byte 0", None)
    d.write_bytes(data[found[0]:])
    return found[0]


# ---------------------------------------------------------------------------------------
# translating TensorRT's load-failure log lines

@dataclass(frozen=True)
class LoadDiagnosis:
    """One clear line for a failed deserialization.

    Attributes:
        code: stable id (``"version-mismatch"``, ``"gpu-mismatch"``, ...).
        message: what happened, with the versions/GPUs involved.
        hint: the fix.
        fatal: ``False`` for warnings that do not stop loading.
    """

    code: str
    message: str
    hint: str
    fatal: bool = True


_PATTERNS: list[tuple[re.Pattern[str], object]] = [
    (re.compile(r"expecting library version ([\w.]+?) got ([\w.]+?)(?:[,.]?\s|,|$)"),
     lambda m: _library_version_diagnosis(m.group(1), m.group(2))),
    (re.compile(r"Current Version: (\d+), Serialized Engine Version: (\d+)"),
     lambda m: LoadDiagnosis(
         "version-mismatch",
         f"the plan's serialization version is {m.group(2)}, this runtime's is "
         f"{m.group(1)} (built by another TensorRT version)",
         "rebuild the engine with the TensorRT installed here")),
    (re.compile(r"expecting compute ([\d.]+) got compute ([\d.]+)"),
     lambda m: _gpu_mismatch_diagnosis(built=m.group(2), here=m.group(1))),
    (re.compile(r"across different models of devices is not recommended"),
     lambda m: LoadDiagnosis(
         "cross-device",
         "the plan was built on another GPU model; it loads but may be slower or fail",
         "rebuild the engine on this GPU model for reliable timings", fatal=False)),
    (re.compile(r"magicTag.*\((\d+) != (\d+)\)|Magic tag does not match"),
     lambda m: _magic_diagnosis(m)),
]


AMPERE_COMPUTE_CAPABILITY = (8, 0)
"""The first compute capability of NVIDIA Ampere: hardware compatibility
(``--hardwareCompatibilityLevel=ampere+``, ``HardwareCompatibilityLevel.AMPERE_PLUS``)
is supported only for engines built on Ampere or later and covers only GPUs of Ampere or
later (TensorRT developer guide, "Hardware Compatibility"; ``nvinfer1::
HardwareCompatibilityLevel::kAMPERE_PLUS``: "only supported for engines built on NVIDIA
Ampere and later GPUs")."""


def _gpu_mismatch_diagnosis(built: str, here: str) -> LoadDiagnosis:
    """A plan built for compute capability ``built`` loaded on a GPU of ``here``. The
    remedy names hardware compatibility only where it can help: both GPUs Ampere (8.0)
    or later; otherwise the engine must be rebuilt on (a GPU like) the target."""
    def cc(text: str) -> tuple[int, ...]:
        return _version_tuple(text)[:2] or (0,)

    message = f"the plan was built for compute capability {built}; this GPU is {here}"
    if cc(built) >= AMPERE_COMPUTE_CAPABILITY and cc(here) >= AMPERE_COMPUTE_CAPABILITY:
        hint = ("rebuild the engine on this GPU, or build it once with hardware "
                "compatibility (trtexec --hardwareCompatibilityLevel=ampere+; it covers "
                "engines built and run on Ampere or later GPUs, at some speed cost)")
    else:
        older = built if cc(built) < AMPERE_COMPUTE_CAPABILITY else here
        hint = (f"rebuild the engine on a GPU of compute capability {here} (on this one): "
                f"hardware compatibility (--hardwareCompatibilityLevel=ampere+) covers only "
                f"engines built and run on Ampere (8.0) or later, and {older} is older")
    return LoadDiagnosis("gpu-mismatch", message, hint)


def _library_version_diagnosis(runtime_version: str, plan_version: str) -> LoadDiagnosis:
    """"expecting library version R got P": a version mismatch, unless P has major
    version 0, which no TensorRT release has: then the header the runtime read is zeros
    or garbage, i.e. a corrupt or truncated plan."""
    if _version_tuple(plan_version)[:1] in ((0,), ()):
        return LoadDiagnosis(
            "corrupt-plan",
            f"the plan header is corrupt or truncated (the runtime read version "
            f"{plan_version}, which no TensorRT release has)",
            "run `trtcheck preflight PLAN`; copy the engine again in binary mode or "
            "rebuild it")
    return LoadDiagnosis(
        "version-mismatch",
        f"the plan was built by TensorRT {plan_version}; this runtime is {runtime_version}",
        f"rebuild the engine with TensorRT {runtime_version} here, or run it where "
        f"TensorRT {plan_version} is installed")


#: the largest metadata prefix length recognised in a magic-tag mismatch
_MAX_PREFIX_LENGTH = 1 << 20


def _magic_diagnosis(m: re.Match[str]) -> LoadDiagnosis:
    """A magic-tag mismatch "(READ != EXPECTED)". READ is the file's first four bytes as a
    little-endian u32; a small READ where the expected value is a plan magic is the
    4-byte length of a metadata block written before the plan (Ultralytics' exporter
    writes ``<i32 length><JSON><plan>``)."""
    read_tag = int(m.group(1)) if m.group(1) else None
    want_tag = int(m.group(2)) if m.group(2) else None
    plan_tags = {struct.unpack("<I", t)[0] for t in (MAGIC_TRT, MAGIC_RTX, MAGIC_TRT_OTHER)}
    if read_tag is not None and 0 < read_tag < _MAX_PREFIX_LENGTH and want_tag in plan_tags:
        return LoadDiagnosis(
            "plan-prefix",
            f"the file starts with a {read_tag}-byte metadata block (a 4-byte length "
            f"{read_tag} + {read_tag} bytes, e.g. Ultralytics' exporter metadata), not "
            "with the plan",
            f"strip the first {read_tag + 4} bytes (`trtcheck preflight FILE "
            "--strip-prefix -o clean.plan`) or load it with the exporter's own loader")

    def tag(v: int) -> str:
        return _magic_text(struct.pack("<I", v % (1 << 32)))

    return LoadDiagnosis(
        "not-a-plan",
        "the file is not a plan this runtime understands (magic tag mismatch"
        + (f": {tag(read_tag)} vs {tag(want_tag or 0)}" if read_tag is not None else "")
        + ")",
        "run `trtcheck preflight PLAN` to see what the file is; TensorRT and "
        "TensorRT-RTX plans are not interchangeable")


_PATTERNS_TAIL: list[tuple[re.Pattern[str], object]] = [
    (re.compile(r"CUDA driver version is insufficient"),
     lambda m: LoadDiagnosis(
         "no-driver",
         "no usable CUDA driver: the driver is missing (no GPU) or older than the CUDA "
         "this runtime needs",
         "run on a machine with an NVIDIA GPU; update the driver (nvidia-smi shows its "
         "CUDA version)")),
    (re.compile(r"cannot run on this GPU, which has compute capability ([\d.]+)"),
     lambda m: LoadDiagnosis(
         "rtx-unsupported-gpu",
         f"TensorRT-RTX does not support this GPU (compute capability {m.group(1)})",
         "use full TensorRT on this GPU (--backend tensorrt for bench/report, --runtime "
         "tensorrt for preflight/build), or a GPU TensorRT-RTX "
         "supports (compute 8.0, 8.6, 8.9, 12.x)")),
    (re.compile(r"(?i)out of memory|cudaErrorMemoryAllocation"),
     lambda m: LoadDiagnosis(
         "out-of-memory",
         "the GPU ran out of memory while loading the engine",
         "free GPU memory (other processes, nvidia-smi) or use a smaller engine")),
    (re.compile(r"(?i)no CUDA-capable device|cudaErrorNoDevice"),
     lambda m: LoadDiagnosis("no-gpu", "no CUDA GPU is visible",
                             "check nvidia-smi and CUDA_VISIBLE_DEVICES")),
]


def explain_load_log(lines: list[str] | str) -> list[LoadDiagnosis]:
    """Translate TensorRT log lines from a failed (or suspicious) deserialization.

    Args:
        lines: captured log messages (or one text blob).

    Returns:
        diagnoses in order of appearance, one per known cause (duplicates removed);
        empty when nothing known was found (callers fall back to the first error line).
    """
    text_lines = lines.splitlines() if isinstance(lines, str) else list(lines)
    patterns = _PATTERNS + _PATTERNS_TAIL
    out: list[LoadDiagnosis] = []
    seen: set[str] = set()
    for line in text_lines:
        for pat, make in patterns:
            m = pat.search(line)
            if m:
                d = make(m)  # type: ignore[operator]
                if d.code not in seen:
                    seen.add(d.code)
                    out.append(d)
                break
    return out


#: load diagnoses that mean the file itself is damaged (bad input, exit 2), not this machine
BAD_FILE_DIAGNOSES = frozenset({"corrupt-plan", "plan-prefix"})


def load_failure_error(lines: list[str], path: str) -> EnvironmentProblem | InputError:
    """The error to raise when ``deserialize_cuda_engine`` returned ``None``.

    Uses the first fatal diagnosis from :func:`explain_load_log`, else the first error
    line TensorRT logged, else a generic message. Exit code 3 (:class:`EnvironmentProblem`),
    except 2 (:class:`InputError`) when the log shows a damaged file
    (:data:`BAD_FILE_DIAGNOSES`).
    """
    diags = [d for d in explain_load_log(lines) if d.fatal]
    if diags:
        cls = InputError if diags[0].code in BAD_FILE_DIAGNOSES else EnvironmentProblem
        return cls(f"cannot load {path}: {diags[0].message}", diags[0].hint)
    errors = [ln for ln in lines if ln.strip()]
    first = errors[0].strip() if errors else "TensorRT gave no reason"
    return EnvironmentProblem(f"cannot load {path}: deserialization failed ({first[:300]})",
                              "run `trtcheck preflight PLAN`; rebuild the engine with the "
                              "TensorRT and GPU used here")
