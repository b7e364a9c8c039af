"""Inspection of ONNX models, TensorRT plans and trtexec exports (no GPU needed)."""
