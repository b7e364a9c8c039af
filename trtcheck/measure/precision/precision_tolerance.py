"""Default precision tolerances: one :class:`~trtcheck.results.precision.PrecisionTolerance`
per reduced precision, with the source of each bound, and user overrides of them
(:func:`tolerance_for`). Pure data and lookup; the reasoning is in docs/precision.md.
"""

from __future__ import annotations

import math

from trtcheck.errors import InputError
from trtcheck.results.precision import PrecisionTolerance

#: precisions trtcheck knows tolerances for
PRECISIONS = ("fp16", "bf16", "int8", "fp8")

_FP16_SOURCE = (
    "FP16 has 10 mantissa bits: unit roundoff u = 2^-11 = 4.9e-4 (IEEE 754 binary16); "
    "one FP16 op is good to ~1e-3 relative (torch.testing.assert_close uses rtol 1e-3 for "
    "float16), and a network output passes through tens of rounded ops, so ~20u = 1e-2 "
    "per element; Polygraphy's default atol = rtol = 1e-5 is below FP16's rounding of a "
    "single value and fails every healthy FP16 engine. Cosine >= 0.999 bounds the "
    "direction and relative L2 error <= 0.05 = sqrt(2 (1 - 0.999)) the magnitude (a pure "
    "direction error at the minimum cosine has that relative L2 error), so a scale error "
    "that atol hides in small outputs still fails")
_BF16_SOURCE = (
    "BF16 has 7 stored mantissa bits: u = 2^-8 = 3.9e-3; torch.testing uses rtol 1.6e-2 "
    "for one bfloat16 op; ~13u = 5e-2 per element for a network output")
_INT8_SOURCE = (
    "INT8 error depends on calibration (scale / 127 per quantised tensor), not on the "
    "output's magnitude, so elementwise bounds are loose sanity checks and the verdict "
    "rests on cosine similarity >= 0.99 and top-1 agreement >= 99% (trtcheck's judgement, "
    "tune with --min-cosine / --min-top1)")
_FP8_SOURCE = (
    "FP8 E4M3 has 3 mantissa bits: u = 2^-4 = 6.3e-2 per rounding; elementwise bounds are "
    "loose and the verdict rests on cosine similarity >= 0.98 and top-1 agreement >= 95% "
    "(trtcheck's judgement, tune with --min-cosine / --min-top1)")

#: default tolerances per precision (see docs/precision.md for the reasoning)
DEFAULT_TOLERANCES: dict[str, PrecisionTolerance] = {
    "fp16": PrecisionTolerance(precision="fp16", atol=1e-2, rtol=1e-2,
                               max_outside_fraction=1e-3, min_cosine_similarity=0.999,
                               max_rel_l2_error=0.05, min_top1_agreement=None,
                               source=_FP16_SOURCE),
    "bf16": PrecisionTolerance(precision="bf16", atol=5e-2, rtol=5e-2,
                               max_outside_fraction=1e-3, min_cosine_similarity=0.995,
                               max_rel_l2_error=0.1, min_top1_agreement=None,
                               source=_BF16_SOURCE),
    "int8": PrecisionTolerance(precision="int8", atol=0.1, rtol=0.1,
                               max_outside_fraction=0.05, min_cosine_similarity=0.99,
                               max_rel_l2_error=0.15, min_top1_agreement=0.99,
                               source=_INT8_SOURCE),
    "fp8": PrecisionTolerance(precision="fp8", atol=0.25, rtol=0.25,
                              max_outside_fraction=0.05, min_cosine_similarity=0.98,
                              max_rel_l2_error=0.2, min_top1_agreement=0.95,
                              source=_FP8_SOURCE),
}

_TOL_FIELDS = ("atol", "rtol", "max_outside_fraction", "min_cosine_similarity",
               "max_rel_l2_error", "min_top1_agreement")


def tolerance_for(precision: str, overrides: dict[str, dict[str, float]] | None = None
                  ) -> PrecisionTolerance:
    """The tolerance of ``precision`` with user overrides applied.

    Args:
        precision: one of :data:`PRECISIONS`.
        overrides: ``{precision or "*": {field: value}}``; fields are ``atol``, ``rtol``
            (>= 0), ``max_outside_fraction`` (0..1), ``min_cosine_similarity`` (-1..1),
            ``max_rel_l2_error`` (>= 0),
            ``min_top1_agreement`` (0..1). ``"*"`` applies to every precision; a
            precision's own entry wins.

    Raises:
        InputError: unknown precision, field or out-of-range value.
    """
    if precision not in DEFAULT_TOLERANCES:
        raise InputError(f"unknown precision {precision!r}",
                         f"choose from {', '.join(PRECISIONS)}")
    base = DEFAULT_TOLERANCES[precision]
    changes: dict[str, float] = {}
    for key in ("*", precision):
        changes.update((overrides or {}).get(key, {}))
    if not changes:
        return base
    for k, v in changes.items():
        if k not in _TOL_FIELDS:
            raise InputError(f"unknown tolerance field {k!r}", f"use one of {', '.join(_TOL_FIELDS)}")
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InputError(f"tolerance {k} must be a finite number, got {v!r}")
        if k in ("atol", "rtol", "max_rel_l2_error") and v < 0:
            raise InputError(f"{k} must be >= 0, got {v}")
        if k in ("max_outside_fraction", "min_top1_agreement") and not 0 <= v <= 1:
            raise InputError(f"{k} must be within 0..1, got {v}")
        if k == "min_cosine_similarity" and not -1 <= v <= 1:
            raise InputError(f"min cosine similarity must be within -1..1, got {v}")
    data = base.model_dump()
    data.update({k: float(v) for k, v in changes.items()})
    data["source"] = f"user override of {', '.join(sorted(changes))}; defaults: {base.source}"
    return PrecisionTolerance(**data)


__all__ = ["DEFAULT_TOLERANCES", "PRECISIONS", "tolerance_for"]
