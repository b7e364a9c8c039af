"""The top-level results document, its schema version and JSON load/save.

Schema history (also in docs/results-schema.md; bump :data:`SCHEMA_VERSION` and add a
line here and there for every change to any record):

* ``1`` (trtcheck 0.1.0): environment, model inspection, bench runs with raw samples.
"""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from trtcheck.errors import InputError, SchemaError
from trtcheck.results.advice import Advice
from trtcheck.results.base import Record
from trtcheck.results.bench import BenchRun
from trtcheck.results.engine import EngineInspection
from trtcheck.results.environment import Environment
from trtcheck.results.inspection import ModelInspection
from trtcheck.results.precision import PrecisionResult
from trtcheck.results.serve import ServeRun

SCHEMA_VERSION = 1
"""Current version of the results JSON schema (an integer, bumped on every change)."""

SCHEMA_HISTORY: dict[int, str] = {
    1: "trtcheck 0.1.0: environment, model inspection, bench runs with raw samples",
}


class ToolInfo(Record):
    """Which trtcheck wrote the file and with which command line."""

    name: str = "trtcheck"
    version: str
    command: list[str] = []


class Results(Record):
    """Everything one trtcheck run produced; the only input of analysis, report and gate.

    Sections are ``None`` (or empty) when the stage that fills them did not run.
    """

    schema_version: int = SCHEMA_VERSION
    tool: ToolInfo
    created_utc: str
    environment: Environment
    inspection: ModelInspection | None = None
    bench: list[BenchRun] = []
    engine: EngineInspection | None = None
    precision: PrecisionResult | None = None
    serve: ServeRun | None = None
    advice: Advice | None = None

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


MAX_RESULTS_BYTES = 2 << 30
"""Largest results file read (2 GiB; a 10-million-request serving run writes less)."""


def results_from_json(text: str, source: str = "<string>") -> Results:
    """Parse and validate a results JSON document.

    Args:
        text: the JSON text.
        source: file name used in error messages.

    Raises:
        InputError: not JSON, or not a trtcheck results document.
        SchemaError: a schema version this trtcheck cannot read, or fields that do not
            match the model (the first problem is named with its JSON path).
    """
    from trtcheck.safe_io import parse_json_text

    data = parse_json_text(text, source, "pass a results.json written by trtcheck")
    if not isinstance(data, dict) or "schema_version" not in data:
        raise InputError(f"{source} is not a trtcheck results file (no schema_version)",
                         "pass a results.json written by trtcheck report/bench")
    version = data.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise SchemaError(f"{source}: schema_version must be a positive integer, "
                          f"got {version!r}")
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"{source} has results schema {version}, newer than this trtcheck reads "
            f"({SCHEMA_VERSION})", "upgrade trtcheck (pip install -U trtcheck-tool)")
    try:
        return Results.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")  # a consistency check's text
        raise SchemaError(f"{source}: {loc}: {msg} "
                          f"({exc.error_count()} problem(s) in all)",
                          "the file was edited by hand or written by another tool") from None


def load_results(path: str | os.PathLike[str]) -> Results:
    """Read a results JSON file.

    Raises:
        InputError: missing file, a directory, unreadable, not a results file.
        SchemaError: see :func:`results_from_json`.
    """
    from trtcheck.safe_io import read_input_text

    p = Path(path)
    text = read_input_text(p, "results file", MAX_RESULTS_BYTES,
                           "pass a results.json written by trtcheck")
    return results_from_json(text, source=str(p))


def probe_writable_dir(folder: str | os.PathLike[str]) -> None:
    """Create ``folder`` (and its parents) if missing and check that a file can be
    created in it, by creating and removing a temporary one.

    Raises:
        OSError: the folder cannot be created or written.
    """
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(prefix=".trtcheck-probe-", dir=target)
    os.close(fd)
    os.unlink(probe)


def umask_file_mode() -> int:
    """The mode a plain ``open(path, "w")`` gives a new file: ``0o666`` less the umask
    (files written through :func:`tempfile.mkstemp` get 0600 and are set to this)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def save_results(results: Results, path: str | os.PathLike[str]) -> Path:
    """Write ``results`` as JSON atomically (temp file + rename in the same folder).

    Raises:
        InputError: the folder does not exist or is not writable, or ``path`` exists and
            is not a regular file (a device such as /dev/null, a FIFO, a folder).
    """
    p = Path(path)
    if p.exists() and not p.is_file():  # os.replace would swap a device/FIFO for a file
        raise InputError(f"cannot write {p}: it exists and is not a regular file",
                         "choose a file path for the results")
    text = results_to_json(results)
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=p.parent or ".")
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
        os.chmod(tmp, umask_file_mode())  # mkstemp makes 0600; a plain open() would not
        os.replace(tmp, p)
        tmp = None
    except OSError as exc:
        raise InputError(f"cannot write {p}: {exc.strerror or exc}",
                         "choose a writable output path") from None
    finally:
        if tmp is not None:  # never a temporary file left behind, whatever failed
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return p
