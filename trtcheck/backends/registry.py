"""The backends by name, and picking one for a model file.

``open_backend(path, backend_name=None, **options)``: ``backend_name`` is one of
:data:`BACKENDS`; ``None`` chooses by file (``.onnx`` -> ONNX Runtime, plans by their
header). Backends are constructed, not activated (call ``activate()`` or use ``with``).
Each entry names its factory and its option group (:mod:`trtcheck.backends.options`) as
``"module:attribute"``; a module is imported when one of them is asked for.

Adding a backend: a module with the backend class, a factory and ``OPTIONS``, and one
:class:`Registration` in :data:`BACKENDS` (the order of the entries is the order of the
option groups in ``--help``).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trtcheck.backends.base import Backend
from trtcheck.backends.options import OptionGroup, constructor_kwargs
from trtcheck.errors import InputError


@dataclass(frozen=True)
class Registration:
    """One backend: ``factory`` (``factory(model_path, **options) -> Backend``) and
    ``options`` (its :class:`~trtcheck.backends.options.OptionGroup`), each as
    ``"module:attribute"``."""

    factory: str
    options: str


#: backend name -> its registration (in the order of the option groups in --help)
BACKENDS: dict[str, Registration] = {
    "tensorrt": Registration("trtcheck.backends.tensorrt:tensorrt_backend",
                             "trtcheck.backends.tensorrt:OPTIONS"),
    "tensorrt_rtx": Registration("trtcheck.backends.tensorrt:tensorrt_rtx_backend",
                                 "trtcheck.backends.tensorrt:OPTIONS"),
    "onnxruntime": Registration("trtcheck.backends.onnxruntime:OnnxRuntimeBackend",
                                "trtcheck.backends.onnxruntime:OPTIONS"),
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


def _resolve(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _factory(name: str) -> Callable[..., Backend]:
    factory: Callable[..., Backend] = _resolve(BACKENDS[name].factory)
    return factory


def option_group(name: str) -> OptionGroup:
    """The option group of backend ``name`` (a key of :data:`BACKENDS`)."""
    group: OptionGroup = _resolve(BACKENDS[name].options)
    return group


def option_groups(names: tuple[str, ...] | None = None) -> list[OptionGroup]:
    """The distinct option groups of the backends ``names`` (default: all), in
    registration order (two backends of one runtime share one group)."""
    groups: list[OptionGroup] = []
    for name in BACKENDS if names is None else names:
        group = option_group(name)
        if group not in groups:
            groups.append(group)
    return groups


def backend_name_for(model_path: str | os.PathLike[str], backend_name: str | None = None) -> str:
    """The backend that runs ``model_path``: ``backend_name`` when given, else by the
    file's header, else by its suffix.

    Raises:
        InputError: unknown backend name, or no backend for this kind of file.
    """
    path = Path(model_path)
    name = backend_name or _by_magic(path) or DEFAULT_BY_SUFFIX.get(path.suffix.lower())
    if name is None:
        raise InputError(f"no backend runs {path.name!r} files of this kind",
                         f"pass --backend, one of: {', '.join(sorted(BACKENDS))}")
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}",
                         f"choose one of: {', '.join(sorted(BACKENDS))}")
    return name


def backend_kwargs(model_path: str | os.PathLike[str], backend_name: str | None,
                   values: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor keywords for the backend of ``model_path`` from the backend options
    a command received (``dest -> value``, e.g. ``{"cuda_graph": True, "threads": None}``).

    Raises:
        InputError: no backend for the file, or a given option of another backend
            (``--cuda-graph is a TensorRT option; the onnxruntime backend does not take
            it``), exit 2.
    """
    name = backend_name_for(model_path, backend_name)
    return constructor_kwargs(name, option_group(name), option_groups(), values)


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
    return _factory(backend_name_for(path, backend_name))(path, **options)
