"""trtcheck: a health check for TensorRT engines and ONNX models.

The package is organised as a one-way pipeline (see docs/architecture.md)::

    load -> inspection -> measure -> analyze -> report / gate

with :mod:`trtcheck.results` (the versioned results model) as the shared bottom layer.
Heavy or GPU-only dependencies (tensorrt, tensorrt_rtx, cuda-python, onnxruntime) are
imported lazily, inside the functions that need them.


The public Python API is :mod:`trtcheck.api`, re-exported here (``trtcheck.bench(...)``,
``trtcheck.gate(...)``; the stability statement is in its docstring and docs/api.md).
It is imported on first use, so ``import trtcheck`` (and ``trtcheck --help``) stays light.
"""

from typing import Any

__version__ = "0.1.0"

API_NAMES = ("advise", "bench", "compare", "gate", "inspect", "load", "report", "serve",
             "BatchingPolicy", "DynamicBatcher")
"""The names of :mod:`trtcheck.api` this package re-exports."""

__all__ = ["__version__", *API_NAMES]


def __getattr__(name: str) -> Any:
    """The API's names, imported from :mod:`trtcheck.api` on first use (PEP 562)."""
    if name in API_NAMES:
        import importlib

        return getattr(importlib.import_module("trtcheck.api"), name)
    raise AttributeError(f"module 'trtcheck' has no attribute {name!r}")
