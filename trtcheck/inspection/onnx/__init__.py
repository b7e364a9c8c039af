"""ONNX inspection: graph I/O types and shapes (``onnx_shapes``), the MACs estimate
(``onnx_compute``), the lints and their codes (``onnx_lints``), TensorRT's ONNX operator
support (``trt_onnx_support``) and the entry point (``onnx_inspect``).

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.inspection.onnx.onnx_inspect import inspect_onnx
from trtcheck.inspection.onnx.onnx_shapes import graph_inputs, tensor_info

__all__ = [
    "graph_inputs",
    "inspect_onnx",
    "tensor_info",
]
