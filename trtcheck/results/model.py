"""The top-level results document, its schema version and JSON load/save.

The schema version is ``"MAJOR.MINOR"`` (:data:`SCHEMA_VERSION`). A change that only adds
optional fields bumps MINOR; one that removes, renames or retypes a field bumps MAJOR.
``python -m trtcheck.results.schema --write`` regenerates the shipped JSON Schema and
bumps the version when the model changed; docs/results-schema.md holds the history
(a test fails when the model, the shipped schema, the version and the history disagree).

Reading is forward-compatible (:func:`results_from_json`): fields this trtcheck does not
know (written by a newer minor version) are ignored with one note on the ``trtcheck``
logger; a newer major version is refused. An earlier major version is migrated on load
(:mod:`trtcheck.results.migrate`: schema 1.x held the batching window in milliseconds,
2.0 in microseconds). Files of the integer version ``1`` (before ``"1.1"``) read as
``"1.0"``.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from trtcheck.errors import InputError, SchemaError
from trtcheck.files import (  # noqa: F401  (probe_writable_dir, umask_file_mode re-exported)
    probe_writable_dir,
    replace_atomically,
    umask_file_mode,
    write_text_file,
)
from trtcheck.results.advice import Advice
from trtcheck.results.base import Record
from trtcheck.results.bench import BenchRun
from trtcheck.results.engine import EngineInspection
from trtcheck.results.environment import Environment
from trtcheck.results.imported import ImportedRun
from trtcheck.results.inspection import ModelInspection
from trtcheck.results.migrate import can_migrate, migrate
from trtcheck.results.precision import PrecisionResult
from trtcheck.results.serve import ServeRun
from trtcheck.results.tune import TuneResult
from trtcheck.results.verdict import Verdict

SCHEMA_VERSION = "3.8"
"""Current version of the results JSON schema, ``"MAJOR.MINOR"`` (rewritten by
``python -m trtcheck.results.schema --write``; history in docs/results-schema.md)."""

SCHEMA_HISTORY: dict[str, str] = {
    "1.0": "trtcheck 0.1.0: environment, model inspection, bench runs with raw samples, "
           "engine, precision, serve and advice sections (written as the integer 1)",
    "1.1": "schema_version as \"MAJOR.MINOR\", a kind on every JSON document, the "
           "percentile method of latency statistics",
}
"""Short history per version; the full one is docs/results-schema.md."""

RESULTS_KIND: Literal["results"] = "results"
TUNE_KIND = "tune"
"""The ``kind`` of a ``trtcheck tune -o`` document: a results document whose ``tune``
section holds the search (read wherever a results file is)."""
"""The ``kind`` of a results document; every JSON document trtcheck prints names its kind
(``results``, ``advise``, ``gate``, ``inspect``, ``compare`` ...)."""

_log = logging.getLogger("trtcheck.results")


def parse_schema_version(value: object) -> tuple[int, int]:
    """``(major, minor)`` of a ``schema_version`` value: ``"1.1"`` -> ``(1, 1)``; the
    integer ``1`` of older files -> ``(1, 0)``.

    Raises:
        ValueError: not a positive integer nor a ``"MAJOR.MINOR"`` string.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value, 0
    if isinstance(value, str):
        parts = value.split(".")
        if len(parts) == 2 and all(p.isdigit() for p in parts) and int(parts[0]) >= 1:
            return int(parts[0]), int(parts[1])
    raise ValueError(f"schema_version must be \"MAJOR.MINOR\" (e.g. {SCHEMA_VERSION!r}), "
                     f"got {value!r}")


class ToolInfo(Record):
    """Which trtcheck wrote the file and with which command line."""

    name: str = "trtcheck"
    version: str
    command: list[str] = []


class Results(Record):
    """Everything one trtcheck run produced; the only input of analysis, report and gate.

    Sections are ``None`` (or empty) when the stage that fills them did not run.
    ``incomplete`` says why the run stopped before the end (SIGINT/SIGTERM: what was
    finished is kept, what was running is dropped), ``None`` for a complete run.
    ``target`` is the deployment target the verdict and findings are judged for
    (``tensorrt``, ``tensorrt_rtx``, ``onnxruntime``, ``triton``; ``trtcheck report
    --target``), ``None`` when not given (judged for TensorRT).
    ``imported`` holds measurements read from another tool's file (a perf_analyzer CSV,
    a Triton statistics dump), its source named.
    """

    schema_version: str = Field(default_factory=lambda: SCHEMA_VERSION,
                                pattern=r"^[1-9][0-9]*\.[0-9]+$")
    kind: Literal["results", "tune"] = RESULTS_KIND
    tool: ToolInfo
    created_utc: str
    environment: Environment
    inspection: ModelInspection | None = None
    bench: list[BenchRun] = []
    engine: EngineInspection | None = None
    precision: PrecisionResult | None = None
    serve: ServeRun | None = None
    advice: Advice | None = None
    imported: ImportedRun | None = None
    incomplete: str | None = None
    target: Literal["tensorrt", "tensorrt_rtx", "onnxruntime", "triton"] | None = None
    verdict: Verdict | None = None
    tune: TuneResult | None = None

    @field_validator("schema_version", mode="before")
    @classmethod
    def _version_text(cls, value: object) -> object:
        """The integer ``1`` of older files reads as ``"1.0"``."""
        if isinstance(value, int) and not isinstance(value, bool):
            return "%d.%d" % parse_schema_version(value)
        return value

    @property
    def primary_bench(self) -> BenchRun | None:
        """The first bench run (the one gate paths ``bench.*`` refer to), or ``None``."""
        return self.bench[0] if self.bench else None


def utc_now_iso() -> str:
    """Current UTC time as ISO 8601 with seconds, e.g. ``2026-11-29T19:21:22Z``."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace(
        "+00:00", "Z")


def results_to_json(results: Results) -> str:
    """Serialise ``results`` to indented JSON text (stable key order, ends with newline).

    Strings with lone surrogates (undecodable bytes of a file name, ``"\\ud800"`` read
    from a JSON input) cannot be encoded as UTF-8; each is written as its ``\\udXXX``
    escape text instead (:func:`trtcheck.safe_io.escape_surrogates`), so a measurement is
    never lost to the name of a file.
    """
    from pydantic_core import PydanticSerializationError

    try:
        return results.model_dump_json(indent=2) + "\n"
    except PydanticSerializationError:
        from trtcheck.safe_io import clean_strings

        clean = clean_strings(results.model_dump(mode="python"))
        return Results.model_validate(clean).model_dump_json(indent=2) + "\n"


def _drop(data: Any, loc: tuple[Any, ...]) -> bool:
    """Delete the key at ``loc`` (a pydantic error location) from nested dicts/lists;
    location parts that are not keys (union member names) are skipped."""
    node = data
    for k, part in enumerate(loc):
        last = k == len(loc) - 1
        if isinstance(node, dict) and part in node:
            if last:
                del node[part]
                return True
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif last:
            return False
    return False


MAX_RESULTS_BYTES = 2 << 30
"""Largest results file read (2 GiB; a 10-million-request serving run writes less)."""


def results_from_json(text: str, source: str = "<string>") -> Results:
    """Parse and validate a results JSON document.

    Forward-compatible: fields the model does not know (from a newer minor version, or a
    hand edit) are ignored, with one note on the ``trtcheck.results`` logger naming them;
    everything else must match.

    Args:
        text: the JSON text.
        source: file name used in error messages.

    Raises:
        InputError: not JSON, or not a trtcheck results document (another kind, such as
            the JSON that ``advise`` prints).
        SchemaError: a newer major schema version, or an older one that cannot be
            migrated (both versions named), an unreadable
            ``schema_version``, or fields that do not match the model (the first problem
            is named with its JSON path).
    """
    from trtcheck.safe_io import parse_json_text

    data = parse_json_text(text, source, "pass a results.json written by trtcheck")
    if not isinstance(data, dict) or "schema_version" not in data:
        raise InputError(f"{source} is not a trtcheck results file (no schema_version)",
                         "pass a results.json written by trtcheck report/bench")
    kind = data.get("kind", RESULTS_KIND)
    if kind not in (RESULTS_KIND, TUNE_KIND):
        raise InputError(f"{source} is a trtcheck {kind!s:.40} document, not a results file",
                         "pass a results.json written by trtcheck report/bench/serve -o")
    try:
        major, minor = parse_schema_version(data["schema_version"])
    except ValueError as exc:
        raise SchemaError(f"{source}: {exc}") from None
    ours = parse_schema_version(SCHEMA_VERSION)
    if major < ours[0] and can_migrate(major, ours[0]):
        migrate(data, major, ours[0])  # e.g. 1.x windows in ms -> 2.0 windows in us
    elif major != ours[0]:
        newer = major > ours[0]
        raise SchemaError(
            f"{source} has results schema {major}.{minor}, "
            f"{'newer than' if newer else 'older than'} this trtcheck reads "
            f"({SCHEMA_VERSION}; major versions {ours[0]}.x)",
            "upgrade trtcheck (install a newer checkout or wheel)" if newer else
            "re-measure with this trtcheck, or read it with an older trtcheck")
    try:
        results = Results.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
    else:
        results.schema_version = SCHEMA_VERSION  # what it holds now, were it written again
        return results
    unknown = [e["loc"] for e in errors if e["type"] == "extra_forbidden"]
    others = [e for e in errors if e["type"] != "extra_forbidden"]
    if not others:
        for loc in unknown:
            _drop(data, tuple(loc))
        try:
            results = Results.model_validate(data)
        except ValidationError as exc:
            others = exc.errors()
        else:
            names = [".".join(str(p) for p in loc) for loc in unknown]
            why = (f"written by a newer trtcheck (schema {major}.{minor}; this one reads "
                   f"{SCHEMA_VERSION})" if (major, minor) > ours else
                   "fields of a newer trtcheck, or a hand edit")
            _log.warning("note: %s: ignored %d unknown field(s) (%s): %s%s", source,
                         len(names), why, ", ".join(names[:5]),
                         ", ..." if len(names) > 5 else "")
            results.schema_version = SCHEMA_VERSION
            return results
    err = others[0]
    where = ".".join(str(p) for p in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")  # a consistency check's text
    raise SchemaError(f"{source}: {where}: {msg} "
                      f"({len(errors)} problem(s) in all)",
                      "the file was edited by hand or written by another tool") from None


def load_results(path: str | os.PathLike[str]) -> Results:
    """Read a results JSON file (:func:`trtcheck.results.documents.load_results_input`
    also reads a report folder, a perf_analyzer CSV and a Triton statistics dump).

    Raises:
        InputError: missing file, a directory, unreadable, not a results file.
        SchemaError: see :func:`results_from_json`.
    """
    from trtcheck.safe_io import read_input_text

    p = Path(path)
    text = read_input_text(p, "results file", MAX_RESULTS_BYTES,
                           "pass a results.json written by trtcheck")
    return results_from_json(text, source=str(p))


def save_results(results: Results, path: str | os.PathLike[str]) -> Path:
    """Write ``results`` as JSON atomically (:func:`trtcheck.files.replace_atomically`:
    temp file + rename in the same folder, the mode a plain ``open()`` gives).

    Raises:
        InputError: the folder does not exist or is not writable, or ``path`` exists and
            is not a regular file (a device such as /dev/null, a FIFO, a folder).
    """
    p = Path(path)
    if p.exists() and not p.is_file():  # os.replace would swap a device/FIFO for a file
        raise InputError(f"cannot write {p}: it exists and is not a regular file",
                         "choose a file path for the results")
    text = results_to_json(results)
    try:
        replace_atomically(p, lambda tmp: write_text_file(tmp, text))
    except OSError as exc:
        raise InputError(f"cannot write {p}: {exc.strerror or exc}",
                         "choose a writable output path") from None
    return p
