#!/usr/bin/env python3
"""Fetch and cache a real Triton Inference Server (CPU) and perf_analyzer.

* ``tritonserver`` 2.51 with its python backend ships inside the public wheel
  ``nvidia-pytriton==0.7.0`` (Apache-2.0; 55 MB, manylinux_2_35). The wheel is downloaded
  with ``pip download --no-deps`` and only its files are unpacked into the trtcheck cache
  (``trtcheck.load.cache.cache_dir("triton", ...)``); pytriton itself is never installed
  (it pins numpy < 2). Each Python version gets a backend directory of its own,
  ``backends-py3.X/python/``: links to the wheel's python backend and a copy of the stub
  built for that Python (``python_backend_stubs/3.X/triton_python_backend_stub``), where
  the backend looks for it; servers of several Python versions run side by side.
* ``perf_analyzer``, Triton's reference load generator, ships inside the
  ``tritonclient==2.41.0`` manylinux1 wheel (``tritonclient-2.41.0.data/data/bin/``). It
  needs the Debian package ``libb64-0d`` (``apt-get install libb64-0d``) and a
  ``libcudart.so.12`` on the library path: a symlink to the ``libcudart-*.so.12*`` inside
  ``nvidia_pytriton.libs`` is made in the perf_analyzer folder.

Several processes may fetch at once (``pytest -n auto`` workers): each step runs under
a file lock in the cache folder (``filelock``, in the ``test`` extra), so one downloads and
the others wait and then find the files.

How to start the server (see :meth:`TritonInstall.server_command` and
:meth:`TritonInstall.server_env`): ``LD_LIBRARY_PATH=<python LIBDIR>:<libs>``,
``PYTHONHOME=<sys.base_prefix>`` (the stub links ``libpython3.X.so.1.0`` and imports numpy
from that Python). ``PYTHONPATH`` carries this interpreter's site-packages; the stub runs
its interpreter isolated and does not read it, so a model that needs a package of a
virtual environment adds those entries to ``sys.path`` itself (as the ONNX wrapper of
``trtcheck/testing/onnx_model.py`` does).

Usage: ``python engines/fetch_triton.py [--force] [--perf-analyzer]`` prints the paths of
``tritonserver`` (and ``perf_analyzer``), one per line. Nothing is committed. Without
the ``test`` extra (``filelock``) it prints one line ``error: ...; hint: ...`` on stderr and
exits with trtcheck's environment code, 3.
"""

from __future__ import annotations

import importlib
import os
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

SERVER_PACKAGE = "nvidia-pytriton==0.7.0"
SERVER_VERSION = "2.51"
PERF_PACKAGE = "tritonclient==2.41.0"
#: SHA-256 of the pinned wheels and of the executables taken from them (computed from the
#: downloads of 2026-12-02 and the cache they filled).
SERVER_WHEEL_SHA256 = "21f063ff93bb426d0c06b7a55e7eb9efcfe62c0dddd9a908e9877e18710128df"
SERVER_BINARY_SHA256 = "01f1d4a777fea48f8e62a3df0403bcbd858c7a0be203e032a795032555f3e3f4"
PERF_WHEEL_SHA256 = "cf4ed5df836fa99937678a9fd852f86ba05c7b83656dd0a540e20afdb9ab4629"
PERF_BINARY_SHA256 = "f1e1becf820f0b116d8d1745c50569e30d42ddace5a8bccf610914738bdacc8c"
_SERVER_PREFIXES = ("pytriton/tritonserver/", "nvidia_pytriton.libs/")
_PERF_MEMBER = "tritonclient-2.41.0.data/data/bin/perf_analyzer"
#: The modules this script imports that only the ``test`` extra installs (pyproject.toml).
_TEST_EXTRA_MODULES = ("filelock",)


def _repo_on_path() -> None:
    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)


def _cache(*parts: str) -> Path:
    _repo_on_path()
    from trtcheck.load.cache import cache_dir

    return cache_dir(*parts)


def _lock(name: str):
    """An inter-process lock on ``<cache>/triton/<name>.lock`` (``filelock.FileLock``)."""
    from filelock import FileLock

    return FileLock(str(_cache("triton") / f"{name}.lock"))


def _checked_download(package: str, sha256: str, dest: str, *extra: str) -> Path:
    """``pip download`` the pinned wheel and check its SHA-256.

    Raises:
        RuntimeError: pip failed, or the wheel is not the pinned one.
    """
    _repo_on_path()
    from trtcheck.files import check_sha256

    wheel = _pip_download(package, dest, *extra)
    check_sha256(wheel, sha256, package)
    return wheel


def _pip_download(package: str, dest: str, *extra: str) -> Path:
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                           "--disable-pip-version-check", "-q", *extra, package, "-d", dest],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"pip download {package} failed: {proc.stderr.strip()[-500:]}")
    wheels = list(Path(dest).glob("*.whl"))
    if not wheels:
        raise RuntimeError(f"pip download {package} produced no wheel")
    return wheels[0]


def _extract(zf: zipfile.ZipFile, member: zipfile.ZipInfo, dest: Path) -> None:
    """Write one member under ``dest``; a name that is absolute or holds ``..`` is refused
    (RuntimeError)."""
    _repo_on_path()
    from trtcheck.files import zip_member_target

    out = zip_member_target(dest, member.filename)
    if member.is_dir():
        out.mkdir(parents=True, exist_ok=True)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    with zf.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    mode = (member.external_attr >> 16) & 0o777
    # wheels often drop the executable bit: binaries and shared libraries need it
    executable = (mode & 0o111 or member.filename.endswith(("/tritonserver", "_stub"))
                  or ".so" in Path(member.filename).name)
    os.chmod(out, 0o755 if executable else 0o644)


@dataclass(frozen=True)
class TritonInstall:
    """A cached tritonserver (from the pytriton wheel) and how to start it.

    Attributes:
        root: the unpacked wheel files (``pytriton/``, ``nvidia_pytriton.libs/``).
    """

    root: Path

    @property
    def server(self) -> Path:
        """The ``tritonserver`` binary."""
        return self.root / "pytriton" / "tritonserver" / "bin" / "tritonserver"

    @property
    def backends(self) -> Path:
        """The ``--backend-directory`` of the running Python (holds ``python/``: the
        wheel's python backend with this Python's stub, made by :func:`fetch`)."""
        return backends_dir(self.root)

    @property
    def libs(self) -> Path:
        """The wheel's bundled shared libraries."""
        return self.root / "nvidia_pytriton.libs"

    def server_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """Environment for ``tritonserver``: the running Python's LIBDIR first on
        ``LD_LIBRARY_PATH`` (the stub links ``libpython3.X.so.1.0``), ``PYTHONHOME`` its
        ``sys.base_prefix``, and ``PYTHONPATH`` this interpreter's site-packages (the stub
        runs isolated: a model reads it from ``os.environ`` to import from them)."""
        env = dict(os.environ if base is None else base)
        libdir = sysconfig.get_config_var("LIBDIR") or ""
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (libdir, str(self.libs), env.get("LD_LIBRARY_PATH", "")) if p)
        env["PYTHONHOME"] = sys.base_prefix
        paths = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(
            [p for p in paths if p] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])))
        return env

    def server_command(self, model_repository: str | os.PathLike[str], http_port: int,
                       grpc_port: int, metrics_port: int, *,
                       explicit: bool = True, extra: tuple[str, ...] = ()) -> list[str]:
        """The ``tritonserver`` argument list (``--model-control-mode=explicit`` unless
        ``explicit`` is false: then every model in the repository loads at start)."""
        cmd = [str(self.server), f"--model-repository={model_repository}",
               f"--backend-directory={self.backends}",
               f"--http-port={http_port}", f"--grpc-port={grpc_port}",
               f"--metrics-port={metrics_port}", "--log-verbose=0",
               "--http-address=127.0.0.1", "--grpc-address=127.0.0.1",
               "--allow-metrics=false", "--allow-gpu-metrics=false", "--exit-timeout-secs=3"]
        if explicit:
            cmd.append("--model-control-mode=explicit")
        return cmd + list(extra)


def backends_dir(root: Path) -> Path:
    """The backend directory of the running Python's version under the install ``root``:
    ``pytriton/tritonserver/backends-py3.X``."""
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    return root / "pytriton" / "tritonserver" / f"backends-py{ver}"


def _backends_for_running_python(root: Path) -> None:
    """Make :func:`backends_dir` for the running Python once: ``python/`` holds links to
    the wheel's python backend files and a copy of this Python's stub. One directory per
    Python version, so a server started from one Python keeps its stub while another
    Python (a second virtual environment, a test run) starts its own; a single stub that
    each fetch overwrote broke a running 3.12 server's next model load (numpy's C
    extensions for 3.11)."""
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    tritonserver = root / "pytriton" / "tritonserver"
    stub = tritonserver / "python_backend_stubs" / ver / "triton_python_backend_stub"
    if not stub.is_file():
        raise RuntimeError(f"{SERVER_PACKAGE} has no python backend stub for Python {ver}")
    dest = backends_dir(root)
    if (dest / "python" / "triton_python_backend_stub").is_file():
        return
    wheel_python = tritonserver / "backends" / "python"
    # built aside and renamed into place: several processes (test workers) may build it
    part = dest.with_name(f"{dest.name}.{os.getpid()}.{threading.get_ident()}.part")
    shutil.rmtree(part, ignore_errors=True)
    (part / "python").mkdir(parents=True)
    for f in wheel_python.iterdir():
        if f.name != "triton_python_backend_stub" and f.name != "__pycache__":
            (part / "python" / f.name).symlink_to(f.resolve())
    copy = part / "python" / "triton_python_backend_stub"
    shutil.copyfile(stub, copy)
    os.chmod(copy, copy.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    try:
        part.rename(dest)
    except OSError:  # another process made it first
        shutil.rmtree(part, ignore_errors=True)
        if not (dest / "python" / "triton_python_backend_stub").is_file():
            raise


def fetch(force: bool = False) -> TritonInstall:
    """Download (once) the tritonserver files and return the :class:`TritonInstall`.

    Each Python version gets a backend directory of its own with its python backend stub
    (:func:`backends_dir`), so one cache serves several Python versions, also at once.

    Raises:
        RuntimeError: pip could not download the wheel, or it lacks the server or a stub.
    """
    with _lock("tritonserver"):
        return _fetch_server(force)


def _fetch_server(force: bool) -> TritonInstall:
    base = _cache("triton")
    root = base / "pytriton-0.7.0"
    inst = TritonInstall(root)
    done = root / ".complete"
    if force or not done.is_file() or not inst.server.is_file():
        part = base / "pytriton-0.7.0.part"
        shutil.rmtree(part, ignore_errors=True)
        with tempfile.TemporaryDirectory() as tmp:
            wheel = _checked_download(SERVER_PACKAGE, SERVER_WHEEL_SHA256, tmp)
            with zipfile.ZipFile(wheel) as zf:
                members = [m for m in zf.infolist() if m.filename.startswith(_SERVER_PREFIXES)]
                if not any(m.filename.endswith("bin/tritonserver") for m in members):
                    raise RuntimeError(f"{wheel.name} holds no tritonserver binary")
                for m in members:
                    _extract(zf, m, part)
        from trtcheck.files import check_sha256

        check_sha256(TritonInstall(part).server, SERVER_BINARY_SHA256, "tritonserver")
        (part / ".complete").write_text(SERVER_PACKAGE + "\n")
        shutil.rmtree(root, ignore_errors=True)
        part.replace(root)
    _backends_for_running_python(root)
    return inst


def fetch_perf_analyzer(force: bool = False) -> Path:
    """Download (once) ``perf_analyzer`` and return its path.

    Its folder also holds a ``libcudart.so.12`` symlink to the CUDA runtime inside the
    pytriton wheel's libraries; run it with that folder first on ``LD_LIBRARY_PATH``
    (:func:`perf_analyzer_env`). It also needs ``libb64.so.0d`` (Debian ``libb64-0d``).

    Raises:
        RuntimeError: pip could not download the wheel, or it lacks perf_analyzer or
            the CUDA runtime library.
    """
    inst = fetch()
    with _lock("perf_analyzer"):
        return _fetch_perf_analyzer(inst, force)


def _fetch_perf_analyzer(inst: TritonInstall, force: bool) -> Path:
    dest = _cache("triton", "perf_analyzer-2.41.0")
    exe = dest / "perf_analyzer"
    if force or not exe.is_file():
        with tempfile.TemporaryDirectory() as tmp:
            wheel = _checked_download(PERF_PACKAGE, PERF_WHEEL_SHA256, tmp,
                                      "--only-binary=:all:", "--platform",
                                      "manylinux1_x86_64")
            with zipfile.ZipFile(wheel) as zf:
                try:
                    data = zf.read(_PERF_MEMBER)
                except KeyError:
                    raise RuntimeError(f"{wheel.name} holds no perf_analyzer") from None
        tmp_exe = exe.with_suffix(".part")
        tmp_exe.write_bytes(data)
        from trtcheck.files import check_sha256

        check_sha256(tmp_exe, PERF_BINARY_SHA256, "perf_analyzer")
        os.chmod(tmp_exe, 0o755)
        tmp_exe.replace(exe)
    cudart = sorted(inst.libs.glob("libcudart-*.so.12*"))
    if not cudart:
        raise RuntimeError(f"no libcudart-*.so.12* in {inst.libs}")
    link = dest / "libcudart.so.12"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(os.path.relpath(cudart[0], dest))  # relative: the cache can move
    # a copy of the system's libb64 makes the folder self-contained: it then runs on a
    # machine without the Debian package (e.g. an offline GPU host the cache is copied to)
    b64 = dest / "libb64.so.0d"
    if not b64.is_file():
        for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"):
            src = Path(d) / "libb64.so.0d"
            if src.is_file():
                shutil.copyfile(src, b64)
                break
    return exe


def perf_analyzer_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for ``perf_analyzer``: its folder (``libcudart.so.12``) and the
    pytriton libraries on ``LD_LIBRARY_PATH``."""
    env = dict(os.environ if base is None else base)
    inst = TritonInstall(_cache("triton") / "pytriton-0.7.0")
    dest = _cache("triton", "perf_analyzer-2.41.0")
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(dest), str(inst.libs), env.get("LD_LIBRARY_PATH", "")) if p)
    return env


def _missing_test_extra() -> list[str]:
    """The modules of :data:`_TEST_EXTRA_MODULES` that cannot be imported."""
    missing = []
    for name in _TEST_EXTRA_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def main(argv: list[str]) -> int:
    """The script: print the paths; a missing ``test`` extra is one line, exit code 3."""
    _repo_on_path()
    from trtcheck.errors import EXIT_ENVIRONMENT, EXIT_OK

    missing = _missing_test_extra()
    if missing:
        print(f"error: engines/fetch_triton.py needs {', '.join(missing)} (the test extra); "
              'hint: pip install -e ".[test]"', file=sys.stderr)
        return EXIT_ENVIRONMENT
    print(fetch(force="--force" in argv).server)
    if "--perf-analyzer" in argv:
        print(fetch_perf_analyzer(force="--force" in argv))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
