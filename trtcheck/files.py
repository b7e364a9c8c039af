"""Writing files safely: every file trtcheck writes goes through one write-then-rename
(:func:`replace_atomically`), and every output path is checked before any work.

* :func:`replace_atomically` fills a temporary file in the destination's folder, gives it
  the mode a plain ``open(path, "w")`` would (:func:`umask_file_mode`), then renames it
  over the destination with :func:`os.replace`: a reader never sees half a file, an
  existing file stays intact until the new one is complete, and no temporary file is
  left behind, whatever failed (an interrupt included). Results JSON, gate and compare
  outputs, schemas, Triton configurations, copied models, built plans and the demo model
  are all written through it.
* :func:`check_output_file` checks ``-o FILE`` before any work (new or ``--overwrite``,
  in a folder that can really be written), and :func:`refuse_output_over_inputs` refuses
  an output that is one of the command's inputs, with ``--overwrite`` or not.
* :func:`output_parent` and :func:`made_folders_removed_on_failure` create missing
  folders and remove them again when the write fails, so a failed command leaves nothing.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from trtcheck.errors import InputError


def umask_file_mode() -> int:
    """The mode a plain ``open(path, "w")`` gives a new file: ``0o666`` less the umask
    (files written through :func:`tempfile.mkstemp` get 0600 and are set to this)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


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


def replace_atomically(path: str | os.PathLike[str], fill: Callable[[str], None], *,
                       fsync: bool = False) -> Path:
    """Write ``path`` through a temporary file in its folder and a rename.

    Args:
        path: the destination; its folder must exist.
        fill: writes the content into the temporary file whose path it is given
            (e.g. ``onnx.save_model(model, tmp)``).
        fsync: flush the temporary file to disk before the rename (large files that must
            survive a crash, such as a built plan).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OSError: the temporary file cannot be made, filled or renamed (the caller turns
            it into its one-line error); the temporary file is removed first.
    """
    p = Path(path)
    # a fixed-length name: a destination name near the file systems' limit still fits
    fd, tmp = tempfile.mkstemp(prefix=".trtcheck-", suffix=".tmp", dir=p.parent or ".")
    os.close(fd)
    done = False
    try:
        os.chmod(tmp, umask_file_mode())  # mkstemp makes 0600; a plain open() would not
        fill(tmp)
        if fsync:
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, p)
        done = True
    finally:
        if not done:  # failed or interrupted (KeyboardInterrupt) before the rename
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return p


def write_text_file(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8 to the file ``path`` (a fill for :func:`replace_atomically`);
    a lone surrogate (an undecodable file name) is written as its ``\\udXXX`` escape."""
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(text)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` with :func:`replace_atomically`, so a reader never sees
    half a file. Missing folders above ``path`` are created (:func:`output_parent`).

    Raises:
        InputError: the folder is not writable (one line, exit 2).
    """
    p = Path(path)
    with output_parent(p):
        try:
            replace_atomically(p, lambda tmp: write_text_file(tmp, text))
        except OSError as exc:
            raise InputError(f"cannot write {p}: {exc.strerror or exc}",
                             "choose a writable output path") from None


def check_output_file(output: str | None, overwrite: bool) -> None:
    """Before any work: ``-o FILE`` must be new (or ``--overwrite``) in a writable folder;
    missing folders on its path are allowed (they are created when the file is written,
    see :func:`output_parent`).

    The folders are created and a temporary file is made there, then both are removed
    again (:func:`_probe_output_folder`), so a path that only fails on writing (``/proc``,
    a read-only mount) is refused before any measurement.

    Raises:
        InputError: the file exists without ``overwrite``, is a directory, or its folder
            cannot be made or written.
    """
    if output is None:
        return
    if not output.strip():  # e.g. -o "$UNSET_VARIABLE": never the current folder
        raise InputError("-o is empty", "give a file name, e.g. -o results.json")
    if os.path.isdir(output):
        raise InputError(f"-o {output} is a directory", "give a file name, e.g. results.json")
    if os.path.exists(output) and not os.path.isfile(output):  # /dev/null, a FIFO, ...
        raise InputError(f"-o {output} exists and is not a regular file; --overwrite would "
                         "replace it", "give a file name, e.g. -o results.json (to print the "
                         "JSON, use --format json)")
    if os.path.exists(output) and not overwrite:
        raise InputError(f"{output} already exists", "pass --overwrite or choose another -o")
    # missing folders are created when the file is written (output_parent); here the
    # nearest existing folder above it must be a writable folder
    parent = os.path.dirname(os.path.abspath(output))
    while not os.path.exists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
        raise InputError(f"cannot write {output}: {parent} is not a writable folder",
                         "choose a writable -o path")
    _probe_output_folder(output)


def _probe_output_folder(output: str) -> None:
    """Create the folders above ``output`` and a temporary file in the innermost, then
    remove what was made: a folder the permission bits call writable can still refuse
    (``/proc``, a read-only mount, a full disk), and a command must learn that before it
    measures, not after.

    Raises:
        InputError: the folder cannot be created or a file cannot be made in it.
    """

    target = Path(os.path.abspath(output)).parent
    missing: list[Path] = []
    p = target
    while not p.exists() and p.parent != p:
        missing.append(p)  # innermost first
        p = p.parent
    try:
        probe_writable_dir(target)
    except OSError as exc:
        raise InputError(f"cannot write {output}: {exc.strerror or exc}",
                         "choose a writable -o path") from None
    finally:
        _remove_empty(missing)


@contextlib.contextmanager
def output_parent(path: str | os.PathLike[str]) -> Iterator[None]:
    """Create the missing folders above the output file ``path`` for the ``with`` body
    (which writes the file); if the body raises, remove the folders made here again when
    they are still empty, so a failed command leaves nothing behind.

    Raises:
        InputError: a folder cannot be created (a file in the way, permission denied).
    """
    parent = Path(os.path.abspath(path)).parent
    missing: list[Path] = []
    p = parent
    while not p.exists() and p.parent != p:
        missing.append(p)
        p = p.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _remove_empty(missing)
        raise InputError(f"cannot create the folder {parent}: {exc.strerror or exc}",
                         "choose a writable output path") from None
    try:
        yield
    except BaseException:
        _remove_empty(missing)
        raise


@contextlib.contextmanager
def made_folders_removed_on_failure(folder: str | os.PathLike[str]) -> Iterator[None]:
    """For a command that creates the output folder ``folder`` itself (``report -o DIR``):
    if the ``with`` body raises, remove ``folder`` and the folders above it that did not
    exist on entry, while they are empty. A folder that existed before is never removed.
    """
    missing: list[Path] = []
    p = Path(os.path.abspath(folder))
    while not p.exists() and p.parent != p:
        missing.append(p)  # innermost first
        p = p.parent
    try:
        yield
    except BaseException:
        _remove_empty(missing)
        raise


def _remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (innermost first) while they exist and are empty."""
    for d in folders:
        try:
            d.rmdir()
        except OSError:
            return


def input_files(path: str | os.PathLike[str] | None) -> list[str]:
    """The files a command reads for one input argument: the path itself, or for a folder
    the regular files directly in it (``--inputs-dir``, a report folder given to
    ``--from``); ``[]`` for ``None`` or an empty name."""
    if path is None or not str(path).strip():
        return []
    p = Path(path)
    if p.is_dir():
        try:
            return sorted(str(f) for f in p.iterdir() if f.is_file())
        except OSError:
            return []
    return [str(p)]


def _same_file(a: str, b: str) -> bool:
    """``a`` and ``b`` name one file: equal resolved paths (symbolic links, ``..``), or
    for two existing paths the same inode (:func:`os.path.samefile`: hard links, bind
    mounts)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except OSError:
        return False


def refuse_output_over_inputs(
        outputs: Sequence[tuple[str, str | os.PathLike[str] | None]],
        inputs: Sequence[tuple[str, str | os.PathLike[str] | None]]) -> None:
    """Before any work: no output a command writes may be one of the files it reads,
    with ``--overwrite`` or not (``bench model.onnx -o model.onnx --overwrite`` would
    replace the model with a results JSON).

    Args:
        outputs: ``(option, path)`` of each file the command will write, e.g.
            ``[("-o", "r.json")]``; ``None`` entries (not given) are skipped.
        inputs: ``(what, path)`` of each input, e.g. ``[("MODEL", "m.onnx"),
            ("--inputs", "x.npz")]``; a folder stands for the files directly in it
            (:func:`input_files`); ``None`` entries are skipped.

    Raises:
        InputError: an output is an input (same resolved path or same file).
    """
    for option, out in outputs:
        if out is None or not str(out).strip():
            continue
        for what, src in inputs:
            for f in input_files(src):
                if _same_file(str(out), f):
                    shown = "" if os.path.realpath(f) == os.path.realpath(str(src)) \
                        else f" (in {src})"
                    raise InputError(
                        f"refusing to write {option} {out} over the input file {f}{shown} "
                        f"given as {what}",
                        f"choose another {option} path: trtcheck never writes over a file "
                        "it reads, with --overwrite or not")


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file, hex (read in 1 MiB chunks)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_sha256(path: str | os.PathLike[str], expected: str, what: str) -> None:
    """Refuse a downloaded file whose SHA-256 is not the pinned one.

    Raises:
        RuntimeError: the hash differs (both shown), naming ``what``.
    """
    got = sha256_of(path)
    if got != expected.lower():
        raise RuntimeError(f"{what} ({Path(path).name}) has sha256 {got}, not the pinned "
                           f"{expected}: the download is not the file trtcheck expects")


def zip_member_target(dest: str | os.PathLike[str], name: str) -> Path:
    """Where a zip member named ``name`` may be written under ``dest``.

    Raises:
        RuntimeError: an absolute name (``/x``, ``C:\\x``), a ``..`` component, or a
            name that lands outside ``dest`` otherwise.
    """
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in parts:
        raise RuntimeError(f"refusing zip member {name!r}: an absolute name or one with '..'")
    root = Path(dest).resolve()
    out = (root / name).resolve()
    if out != root and root not in out.parents:
        raise RuntimeError(f"refusing zip member {name!r}: it lands outside {root}")
    return root / name
