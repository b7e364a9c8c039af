"""trtcheck: a health check for TensorRT engines and ONNX models.

The package is organised as a one-way pipeline (see docs/architecture.md)::

    load -> inspection -> measure -> analyze -> report / gate

with :mod:`trtcheck.results` (the versioned results model) as the shared bottom layer.
Heavy or GPU-only dependencies (tensorrt, tensorrt_rtx, cuda-python, onnxruntime) are
imported lazily, inside the functions that need them.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
