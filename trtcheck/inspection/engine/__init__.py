"""TensorRT engine (plan) inspection: the entry point (``engine``), lints of the engine
inspector's layers (``engine_json``), device memory estimates (``engine_memory``) and
``trtexec`` exports and logs (``trtexec``).

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.inspection.engine.engine import inspect_engine_path, is_engine_input
from trtcheck.inspection.engine.engine_json import lint_engine
from trtcheck.inspection.engine.trtexec import parse_profile, timing_from_times

__all__ = [
    "inspect_engine_path",
    "is_engine_input",
    "lint_engine",
    "parse_profile",
    "timing_from_times",
]
