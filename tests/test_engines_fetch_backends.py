"""The python backend directory per Python version (``engines/fetch_triton.py``): a
server started from one Python keeps its stub while another Python fetches its own."""

from __future__ import annotations

import sys
from pathlib import Path

from trtcheck.files import sha256_of
from trtcheck.testing.triton_server import load_fetch_triton


def _fake_install(root: Path, versions: list[str]) -> None:
    """The wheel's layout: ``backends/python`` (library, utils, a stub of whatever
    version) and ``python_backend_stubs/3.X`` per version."""
    ts = root / "pytriton" / "tritonserver"
    (ts / "backends" / "python").mkdir(parents=True)
    (ts / "backends" / "python" / "libtriton_python.so").write_bytes(b"backend library")
    (ts / "backends" / "python" / "triton_python_backend_utils.py").write_text("# utils\n")
    (ts / "backends" / "python" / "triton_python_backend_stub").write_bytes(b"wheel stub")
    for v in versions:
        d = ts / "python_backend_stubs" / v
        d.mkdir(parents=True)
        (d / "triton_python_backend_stub").write_bytes(f"stub for {v}".encode())


def test_each_python_version_has_its_own_backend_directory(tmp_path):
    ft = load_fetch_triton()
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    _fake_install(tmp_path, [ver, "3.9"])
    ft._backends_for_running_python(tmp_path)
    d = ft.backends_dir(tmp_path)
    assert d.name == f"backends-py{ver}"
    stub = d / "python" / "triton_python_backend_stub"
    assert stub.read_bytes() == f"stub for {ver}".encode()
    assert stub.stat().st_mode & 0o111
    lib = d / "python" / "libtriton_python.so"
    assert lib.is_symlink() and lib.read_bytes() == b"backend library"
    assert (d / "python" / "triton_python_backend_utils.py").read_text() == "# utils\n"
    # the wheel's own directory is left as it was: no Python overwrites another's stub
    wheel_stub = tmp_path / "pytriton" / "tritonserver" / "backends" / "python" / \
        "triton_python_backend_stub"
    assert wheel_stub.read_bytes() == b"wheel stub"
    # made once: a second fetch keeps it (a server may be running from it)
    before = stub.stat().st_mtime_ns
    ft._backends_for_running_python(tmp_path)
    assert stub.stat().st_mtime_ns == before
    assert not list(d.parent.glob("*.part"))


def test_the_servers_backend_directory_is_the_running_pythons():
    ft = load_fetch_triton()
    inst = ft.fetch()
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert inst.backends == ft.backends_dir(inst.root)
    assert f"--backend-directory={inst.backends}" in inst.server_command("repo", 1, 2, 3)
    stub = inst.backends / "python" / "triton_python_backend_stub"
    built = inst.root / "pytriton" / "tritonserver" / "python_backend_stubs" / ver / \
        "triton_python_backend_stub"
    assert sha256_of(stub) == sha256_of(built)
