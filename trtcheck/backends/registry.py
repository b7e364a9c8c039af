"""Pick a backend for a model file: ``open_backend(path, backend_name=None, **options)``.

``backend_name`` is one of :data:`BACKENDS`; ``None`` chooses by file: ``.onnx`` ->
ONNX Runtime. Backends are constructed, not activated (call ``activate()`` or use
``with``). Each entry imports its module lazily.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trtcheck.backends.base import Backend
from trtcheck.errors import InputError

#: backend name -> "module:factory" (factory(model_path, **options) -> Backend)
BACKENDS: dict[str, str] = {
    "onnxruntime": "trtcheck.backends.onnxruntime:OnnxRuntimeBackend",
    "tensorrt": "trtcheck.backends.tensorrt:tensorrt_backend",
    "tensorrt_rtx": "trtcheck.backends.tensorrt:tensorrt_rtx_backend",
}

#: file suffix -> default backend name
DEFAULT_BY_SUFFIX: dict[str, str] = {
    ".onnx": "onnxruntime",
    ".plan": "tensorrt",
    ".engine": "tensorrt",
    ".trt": "tensorrt",
}

#: first four bytes -> default backend name (plans with any suffix)
DEFAULT_BY_MAGIC: dict[bytes, str] = {
    b"ftrt": "tensorrt",
    b"vtrt": "tensorrt_rtx",
}


def _by_magic(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            return DEFAULT_BY_MAGIC.get(fh.read(4))
    except OSError:
        return None


def _factory(name: str) -> Callable[..., Backend]:
    target = BACKENDS[name]
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def open_backend(model_path: str | os.PathLike[str], backend_name: str | None = None,
                 **options: Any) -> Backend:
    """Construct the backend for ``model_path``.

    Raises:
        InputError: unknown backend name, or no backend for this kind of file.
    """
    path = Path(model_path)
    if path.is_dir():
        raise InputError(f"{path} is a folder: it holds no model to run (a folder of trtexec "
                         "exports has per-layer timings, not an engine)",
                         "give the ONNX model or the engine plan to measure")
    name = backend_name or _by_magic(path) or DEFAULT_BY_SUFFIX.get(path.suffix.lower())
    if name is None:
        raise InputError(f"no backend runs {path.name!r} files of this kind",
                         f"pass --backend, one of: {', '.join(sorted(BACKENDS))}")
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}",
                         f"choose one of: {', '.join(sorted(BACKENDS))}")
    return _factory(name)(path, **options)
