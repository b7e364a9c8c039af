"""trtcheck: a health check for TensorRT engines and ONNX models.

The package is organised as a one-way pipeline (see docs/architecture.md)::

    load -> inspection -> measure -> analyze -> report / gate

with :mod:`trtcheck.results` (the versioned results model) as the shared bottom layer.
Heavy or GPU-only dependencies (tensorrt, tensorrt_rtx, cuda-python, onnxruntime) are
imported lazily, inside the functions that need them.


The public Python API is :mod:`trtcheck.api` (``from trtcheck import api``;
``api.bench(...)``, ``api.report(...)``; the stability statement is in its docstring and
docs/api.md). Its names are re-exported here too (``trtcheck.bench(...)``), except
``report`` and ``load``, which at this level are the subpackages
:mod:`trtcheck.report` and :mod:`trtcheck.load`. It is imported on first use, so
``import trtcheck`` (and ``trtcheck --help``) stays light.
"""

from typing import Any

__version__ = "0.1.0"

API_NAMES = ("advise", "bench", "compare", "gate", "inspect", "serve", "BatchingPolicy",
             "DynamicBatcher")
"""The names of :mod:`trtcheck.api` this package re-exports (all but ``report`` and
``load``, the names of subpackages)."""

__all__ = ["__version__", "api", *API_NAMES]


def __getattr__(name: str) -> Any:
    """:mod:`trtcheck.api` and its names, imported on first use (PEP 562)."""
    if name in API_NAMES or name == "api":
        import importlib

        module = importlib.import_module("trtcheck.api")
        return module if name == "api" else getattr(module, name)
    raise AttributeError(f"module 'trtcheck' has no attribute {name!r}")
