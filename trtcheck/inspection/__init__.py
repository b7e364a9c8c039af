"""Inspection of models, TensorRT plans and trtexec exports (no execution)."""
