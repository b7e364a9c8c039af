"""Reading files the user gave: regular files only, bounded in size, parsed with one clear
error for every malformed document, never an exception outside :mod:`trtcheck.errors`.

Every reader of a user file (results JSON, trtexec exports, engine-inspector JSON, arrival
traces, gate policies, TensorRT logs) goes through these helpers, so the same bad file gets
the same one-line :class:`~trtcheck.errors.InputError` (exit 2) in every command:

* a path that is missing, a folder, a FIFO, a device (``/dev/zero`` would be read without
  end, a FIFO blocks), or has a component longer than the file system allows
  (:data:`MAX_NAME_BYTES`);
* a file larger than the reader's bound (checked on the size before reading, and again
  while reading, so a file that grows is still bounded);
* JSON that is not JSON, nested deeper than Python's recursion limit (``RecursionError``)
  or holding an integer longer than Python converts (4,300 digits by default,
  ``sys.get_int_max_str_digits``; ``ValueError``).

Strings read from JSON may hold lone UTF-16 surrogates (``"\\ud800"`` is valid JSON), which
no UTF-8 writer accepts; :func:`escape_surrogates` turns each into its ``\\udXXX`` text.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from pathlib import Path
from typing import Any

from trtcheck.errors import InputError

MAX_NAME_BYTES = 255
"""Longest path component, in bytes, on the common file systems (ext4, XFS, Btrfs, APFS,
NTFS in UTF-16 units): a longer name can never exist, so it is bad input."""

MAX_JSON_BYTES = 2 << 30
"""Default bound on a JSON input file (2 GiB): far above any results file trtcheck writes
(a 10-million-request serving run) and below the machine's memory."""


def _show(path: str | os.PathLike[str]) -> str:
    """A path for a message: undecodable bytes and control characters escaped."""
    raw = os.fspath(path)
    return escape_surrogates(os.fsdecode(raw) if isinstance(raw, bytes) else raw)


def escape_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (U+D800..U+DFFF, as JSON ``\\udXXX`` escapes and
    undecodable file-name bytes produce) replaced by its escape text, so it can be
    encoded as UTF-8. Other characters are kept."""
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return text
    return "".join(c if not 0xD800 <= ord(c) <= 0xDFFF else f"\\u{ord(c):04x}" for c in text)


def check_name_lengths(path: str | os.PathLike[str], what: str) -> None:
    """Refuse a path with a component longer than :data:`MAX_NAME_BYTES` bytes.

    Raises:
        InputError: naming the component's length.
    """
    for part in Path(path).parts:
        size = len(os.fsencode(part))
        if size > MAX_NAME_BYTES:
            raise InputError(f"{what}: a path component is {size} bytes long (file systems "
                             f"allow {MAX_NAME_BYTES})", "use a shorter file or folder name")


def check_input_file(path: str | os.PathLike[str], what: str, hint: str | None = None,
                     max_bytes: int | None = None) -> Path:
    """``path`` as a :class:`~pathlib.Path` when it is a readable regular file.

    Args:
        path: the file.
        what: how the message names it, e.g. ``"results file"``.
        hint: the hint for a missing file (default: check the path).
        max_bytes: largest size accepted, or ``None`` for no bound.

    Raises:
        InputError: missing (or a dangling link), a folder, a FIFO/device/socket, too long
            a name, larger than ``max_bytes``, or not readable.
    """
    check_name_lengths(path, f"{what} {_show(path)}")
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        dangling = p.is_symlink()
        raise InputError(f"{what} not found: {_show(p)}"
                         + (" (a link to a missing file)" if dangling else ""),
                         hint or "check the path") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {_show(p)}: {exc.strerror or exc}",
                         "check the path and its permissions") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{what} {_show(p)} is a directory, not a file",
                         hint or "pass the file inside it")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else
                "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise InputError(f"{what} {_show(p)} is {kind}, not a regular file",
                         "save the data to a file and pass that file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise InputError(f"{what} {_show(p)} is {st.st_size:,} bytes, more than the "
                         f"{max_bytes:,} bytes it may have", "pass the right file")
    return p


def read_input_bytes(path: str | os.PathLike[str], what: str, max_bytes: int,
                     hint: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` bytes (see
    :func:`check_input_file` for the errors)."""
    p = check_input_file(path, what, hint, max_bytes)
    try:
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read {what} {_show(p)}: {exc.strerror or exc}",
                         "check the file's permissions") from None
    if len(data) > max_bytes:
        raise InputError(f"{what} {_show(p)} is larger than the {max_bytes:,} bytes it may "
                         "have", "pass the right file")
    return data


def _json_byte_escape(exc: UnicodeError) -> tuple[str, int]:
    r"""Codec error handler: each undecodable byte becomes the characters ``\\xNN``,
    which inside a JSON string decode to the text ``\xNN`` (a bare ``\xNN`` is no
    valid JSON escape)."""
    if not isinstance(exc, UnicodeDecodeError):  # pragma: no cover - decoding only
        raise exc
    bad = exc.object[exc.start:exc.end]
    return "".join("\\\\x%02x" % b for b in bad), exc.end


codecs.register_error("trtcheck-json-byte-escape", _json_byte_escape)


def read_input_text(path: str | os.PathLike[str], what: str, max_bytes: int,
                    hint: str | None = None, errors: str = "strict") -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` bytes.

    Args:
        errors: ``"strict"`` refuses invalid UTF-8 (one line, exit 2);
            ``"backslashreplace"`` keeps the file and shows each bad byte as ``\\xNN``
            (for files whose names come from elsewhere, e.g. layer names in exports).
    """
    data = read_input_bytes(path, what, max_bytes, hint)
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read {what} {_show(path)}: not a text file (not UTF-8 "
                         f"at byte {exc.start}: {data[exc.start:exc.start + 1]!r})",
                         hint or "pass the file trtcheck or the tool wrote") from None


def parse_json_text(text: str, where: str, hint: str | None, strict: bool = True) -> Any:
    """``json.loads`` with one :class:`InputError` for every way it can fail.

    Args:
        text: the document.
        where: how the message names it (a file name).
        hint: what to do.
        strict: ``False`` allows raw control characters inside strings (layer names
            in exports written by other tools); they stay in the strings.

    Returns:
        the parsed document; its strings have lone surrogates escaped
        (:func:`escape_surrogates`).

    Raises:
        InputError: not JSON, nested too deep, or an integer too long to convert.
    """
    try:
        doc = json.loads(text, strict=strict)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where} is not JSON ({exc.msg.removesuffix(' at')} at line "
                         f"{exc.lineno}, column {exc.colno})", hint) \
            from None
    except RecursionError:
        raise InputError(f"{where} is nested too deeply to be a document trtcheck reads",
                         hint) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise InputError(f"{where} holds a value JSON cannot convert ({str(exc)[:120]})",
                         hint) from None
    return clean_strings(doc)


def clean_strings(doc: Any) -> Any:
    """``doc`` (parsed JSON/YAML: dicts, lists, scalars) with lone surrogates escaped in
    every string, keys included; iterative, so any depth the parser accepted is fine.
    Returns the same object when nothing needed escaping in a container."""
    def fix(v: Any) -> Any:
        return escape_surrogates(v) if isinstance(v, str) else v

    if not isinstance(doc, (dict, list)):
        return fix(doc)
    stack: list[Any] = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, str):
                    node[i] = fix(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        else:
            for k in list(node):
                v = node[k]
                if isinstance(k, str) and escape_surrogates(k) != k:
                    del node[k]
                    k = escape_surrogates(k)
                    node[k] = v
                if isinstance(v, str):
                    node[k] = fix(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return doc


def read_json_file(path: str | os.PathLike[str], what: str, hint: str | None,
                   max_bytes: int = MAX_JSON_BYTES, lenient_text: bool = False) -> Any:
    """Read and parse a JSON file given by the user (see :func:`read_input_text` and
    :func:`parse_json_text`).

    Args:
        lenient_text: keep a file with invalid UTF-8 bytes (shown as ``\\xNN``) or raw
            control characters in strings instead of refusing it.
    """
    text = read_input_text(path, what, max_bytes, hint,
                           errors="trtcheck-json-byte-escape" if lenient_text else "strict")
    return parse_json_text(text, _show(path), hint, strict=not lenient_text)
