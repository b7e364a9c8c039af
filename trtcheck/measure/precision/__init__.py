"""Precision comparison: the default tolerance per precision (``precision_tolerance``),
the numerics of one output (``output_compare``), the verdict of a variant against the
FP32 reference (``precision_judge``), localising the first diverging layer
(``localize``) and running the reference and the variants (``precision``).

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.measure.precision.precision import (
    compare_onnx_precisions,
    load_npz_dir,
    precision_section_for_report,
)
from trtcheck.measure.precision.precision_tolerance import PRECISIONS

__all__ = [
    "PRECISIONS",
    "compare_onnx_precisions",
    "load_npz_dir",
    "precision_section_for_report",
]
