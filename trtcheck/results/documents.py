"""Reading a results document the user names: a results JSON or a report folder (which
stands for its ``results.json``), with one clear line for what is not one."""

from __future__ import annotations

from pathlib import Path
from typing import Any


RESULTS_HINT = ("pass a results.json written by trtcheck (bench/serve/advise -o FILE) or the "
                "folder of `trtcheck report -o DIR`")


def results_input_kind(path: str) -> str | None:
    """``"report folder"`` for a folder holding ``results.json``, ``"results file"`` for
    a trtcheck results JSON (a JSON object whose first 4 KiB name ``schema_version``,
    which :func:`trtcheck.results.results_to_json` writes first), else ``None``."""
    p = Path(path)
    try:
        if p.is_dir():
            return "report folder" if (p / "results.json").is_file() else None
        if not p.is_file():
            return None
        with open(p, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    text = head.decode("utf-8", errors="replace").lstrip()
    return "results file" if text.startswith("{") and '"schema_version"' in text else None


def load_results_input(path: str, option: str = "--from") -> Any:
    """Read a results document the user named: a results JSON or a report folder (its
    ``results.json``), or another tool's measurements (a perf_analyzer CSV, a Triton
    statistics dump: :mod:`trtcheck.results.import_files`), with one clear line for what
    is not one.

    Raises:
        InputError: missing, a folder without results.json, unreadable, not UTF-8 text
            (a binary file), not JSON, or not a trtcheck results document.
        SchemaError: see :func:`trtcheck.results.results_from_json`.
    """
    from trtcheck.errors import InputError
    from trtcheck.results import results_from_json

    p = Path(path)
    if p.is_dir():
        if not (p / "results.json").is_file():
            raise InputError(f"{option} {p} is a folder without results.json", RESULTS_HINT)
        p = p / "results.json"
    from trtcheck.results.model import MAX_RESULTS_BYTES
    from trtcheck.safe_io import read_input_bytes

    data = read_input_bytes(p, "results file", MAX_RESULTS_BYTES, "check the path")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p} is not a results JSON (binary, not UTF-8 text)",
                         RESULTS_HINT) from None
    from trtcheck.results.import_files import imported_results

    imported = imported_results(text, str(p))  # a perf_analyzer CSV, Triton statistics
    return imported if imported is not None else results_from_json(text, source=str(p))


def results_input_file(path: str | None) -> str | None:
    """The file read for a results argument: ``DIR/results.json`` for a report folder,
    else ``path`` itself (``None`` stays ``None``)."""
    if path is not None and Path(path).is_dir():
        return str(Path(path) / "results.json")
    return path
