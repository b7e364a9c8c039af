"""Collect the environment fingerprint stored with every results file.

Fast and side-effect free: no heavy module is imported (package versions come from
``importlib.metadata``); GPUs come from ``nvidia-smi`` when it is on PATH (2 s timeout).
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from trtcheck import __version__
from trtcheck.results.environment import Environment, GpuInfo

#: distributions whose versions are recorded (distribution name -> key in results)
TRACKED_PACKAGES: dict[str, tuple[str, ...]] = {
    "onnxruntime": ("onnxruntime", "onnxruntime-gpu"),
    "onnx": ("onnx",),
    "numpy": ("numpy",),
    "tensorrt": ("tensorrt", "tensorrt-cu12", "tensorrt-cu13", "tensorrt_libs",
                 "tensorrt-cu12-bindings", "tensorrt-cu13-bindings"),
    "tensorrt_rtx": ("tensorrt-rtx-cu13", "tensorrt-rtx", "tensorrt_rtx"),
    "polygraphy": ("polygraphy",),
    "cuda_python": ("cuda-python", "cuda-bindings"),
    "torch": ("torch",),
}


def cpu_model_name() -> str:
    """The CPU model name (``model name`` in ``/proc/cpuinfo``; else the platform's processor
    or machine name; ``"unknown"`` when none is known)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _memory_total_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _package_versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for key, dists in TRACKED_PACKAGES.items():
        for dist in dists:
            try:
                out[key] = metadata.version(dist)
                break
            except metadata.PackageNotFoundError:
                continue
    return out


def _run(cmd: list[str], cwd: str | None = None) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=2.0, cwd=cwd,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def query_gpus() -> tuple[list[GpuInfo], str | None]:
    """GPUs and the driver version from ``nvidia-smi`` (empty list when unavailable)."""
    if shutil.which("nvidia-smi") is None:
        return [], None
    out = _run(["nvidia-smi", "--query-gpu=index,name,driver_version,memory.total,uuid,"
                "compute_cap", "--format=csv,noheader,nounits"])
    if not out:
        return [], None
    gpus: list[GpuInfo] = []
    driver = None
    cuda = None
    smi = _run(["nvidia-smi"]) or ""
    for token in smi.split("CUDA Version:")[1:2]:
        cuda = token.split()[0].strip("|") if token.split() else None
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 6:
            continue
        driver = parts[2]
        try:
            mem = int(float(parts[3]) * 1024 * 1024)
        except ValueError:
            mem = None
        gpus.append(GpuInfo(index=int(parts[0]), name=parts[1], driver_version=parts[2],
                            memory_total_bytes=mem, uuid=parts[4],
                            compute_capability=parts[5], cuda_version=cuda))
    return gpus, driver


def _git(cwd: str | None) -> tuple[str | None, bool | None]:
    if shutil.which("git") is None:
        return None, None
    commit = _run(["git", "rev-parse", "HEAD"], cwd=cwd)
    if not commit:
        return None, None
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd)
    return commit, bool(status) if status is not None else None


@functools.lru_cache(maxsize=4)
def collect_environment(git_dir: str | None = None) -> Environment:
    """Fingerprint of this machine and process.

    Args:
        git_dir: folder whose git commit is recorded (default: the current directory);
            the commit is ``None`` outside a git work tree.

    Returns:
        an :class:`~trtcheck.results.Environment` (cached per ``git_dir``).
    """
    gpus, driver = query_gpus()
    commit, dirty = _git(git_dir or os.getcwd())
    return Environment(
        hostname=socket.gethostname(),
        os=f"{platform.system()} {platform.release()}",
        machine=platform.machine(),
        cpu_model=cpu_model_name(),
        cpu_count=os.cpu_count() or 1,
        memory_total_bytes=_memory_total_bytes(),
        python_version=platform.python_version(),
        python_implementation=sys.implementation.name,
        trtcheck_version=__version__,
        packages=_package_versions(),
        gpus=gpus,
        cuda_driver_version=driver,
        git_commit=commit,
        git_dirty=dirty,
    )
