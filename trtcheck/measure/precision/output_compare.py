"""Elementwise comparison of one output: a candidate's values against the FP32 reference's.

Pure NumPy on arrays already computed (no runtime, no model): the error metrics of
:class:`~trtcheck.results.precision.OutputComparison` (absolute, relative, cosine
similarity, relative L2, share outside ``atol``/``rtol``, NaN/Inf counts, top-1/top-5
agreement, the rounding floor of the variant's precision) and the verdict against a
:class:`~trtcheck.results.precision.PrecisionTolerance`. Used per output by
:mod:`trtcheck.measure.precision.precision` and per intermediate tensor by
:mod:`trtcheck.measure.precision.localize`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from trtcheck.errors import InputError
from trtcheck.results.precision import OutputComparison, PrecisionTolerance

#: largest finite FP16 value (IEEE 754 binary16: (2 - 2^-10) * 2^15)
FP16_MAX = 65504.0


def _outside_mask(r: np.ndarray, c: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """Elements outside tolerance (float64 arrays of equal shape)."""
    rf, cf = np.isfinite(r), np.isfinite(c)
    both = rf & cf
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(c - r)
        bad = both & (d > atol) & (d > rtol * np.abs(r))
    # a non-finite value on one side only, or infinities of different sign
    bad |= rf ^ cf
    inf_both = np.isinf(r) & np.isinf(c)
    bad |= inf_both & (np.sign(r) != np.sign(c))
    return bad


def _topk_agreement(refs: list[np.ndarray], cands: list[np.ndarray]
                    ) -> tuple[float | None, float | None, int | None]:
    """Top-1 / top-5 agreement over the rows of 2-D ``[N, C]`` outputs (``C >= 2``)."""
    if not refs or any(a.ndim != 2 or a.shape[1] < 2 for a in refs):
        return None, None, None
    r = np.concatenate([a.astype(np.float64) for a in refs])
    c = np.concatenate([a.astype(np.float64) for a in cands])
    r = np.nan_to_num(r, nan=-np.inf)
    c = np.nan_to_num(c, nan=-np.inf)
    top1 = float(np.mean(np.argmax(r, axis=1) == np.argmax(c, axis=1)))
    top5 = None
    if r.shape[1] >= 5:
        rk = np.argpartition(-r, 4, axis=1)[:, :5]
        ck = np.argpartition(-c, 4, axis=1)[:, :5]
        same = [set(a.tolist()) == set(b.tolist()) for a, b in zip(rk, ck)]
        top5 = float(np.mean(same))
    return top1, top5, int(r.shape[0])


def rounding_floor(ref: np.ndarray, precision: str) -> float | None:
    """Max ``|ref - round(ref)|`` when ``ref`` itself is stored in ``precision``.

    The fair baseline of an output produced in FP16/BF16: even a perfect computation
    whose result is stored in that precision is this far from FP32 (about half a unit in
    the last place of the largest values: ``|x| * 2^-11`` for FP16, ``|x| * 2^-8`` for
    BF16). Elements beyond the precision's range are ignored here (the range check and
    the NaN/Inf counts speak for them).

    Returns:
        the floor in output units, or ``None`` for other precisions (INT8/FP8 outputs are
        scaled per engine, so there is no fixed floor).
    """
    r = np.asarray(ref, dtype=np.float64)
    r = r[np.isfinite(r)]
    if precision == "fp16":
        r = r[np.abs(r) <= FP16_MAX]
        rounded = r.astype(np.float16).astype(np.float64)
    elif precision == "bf16":
        try:
            import ml_dtypes
        except ImportError:  # pragma: no cover - ml_dtypes comes with onnx
            return None
        rounded = r.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)
    else:
        return None
    return float(np.max(np.abs(rounded - r))) if r.size else 0.0


def compare_output(name: str, refs: Sequence[np.ndarray], cands: Sequence[np.ndarray],
                   tol: PrecisionTolerance, polygraphy_passed: bool | None = None,
                   precision: str | None = None) -> OutputComparison:
    """Compare one output over all samples (pooled) and judge it.

    Args:
        name: output name.
        refs, cands: one array per sample, reference and candidate, equal shapes per
            sample (any numeric dtype; compared in float64).
        tol: the variant's tolerance.
        polygraphy_passed: Polygraphy's elemwise verdict, recorded as is.
        precision: the variant's precision, for :func:`rounding_floor` (``None``: skip).

    Returns:
        an :class:`OutputComparison` (definitions in :mod:`trtcheck.results.precision`).

    Raises:
        InputError: a shape mismatch between reference and candidate.
    """
    for i, (a, b) in enumerate(zip(refs, cands)):
        if np.shape(a) != np.shape(b):
            raise InputError(f"reference and candidate give output {name!r} different shapes "
                             f"(sample {i}: {list(np.shape(a))} vs {list(np.shape(b))})",
                             "compare models with the same outputs (same export, same shapes)")
    r = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in refs])
    c = np.concatenate([np.asarray(b, dtype=np.float64).ravel() for b in cands])
    with np.errstate(all="ignore"):
        return _judge_output(name, refs, cands, r, c, tol, polygraphy_passed, precision)


def _quantile_with_inf(d: np.ndarray, q: float) -> float:
    """Linear-interpolation quantile (NumPy's default) of errors that may hold ``inf``:
    ``inf`` as soon as an infinite element takes part in the interpolation (NumPy's own
    interpolation turns ``inf - inf`` into NaN)."""
    s = np.sort(d)
    pos = q * (s.size - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, s.size - 1)
    t = pos - lo
    if math.isinf(s[lo]) or (t > 0 and math.isinf(s[hi])):
        return math.inf
    return float(s[lo] + (s[hi] - s[lo]) * t)


def mismatched_nonfinite(r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Elements where reference ``r`` and candidate ``c`` disagree about being finite:
    one side NaN/Inf and the other not, NaN against Inf, or infinities of opposite sign.
    Their error is infinite: no finite tolerance covers them."""
    rf, cf = np.isfinite(r), np.isfinite(c)
    same = (np.isnan(r) & np.isnan(c)) | (np.isinf(r) & np.isinf(c) & (np.sign(r) == np.sign(c)))
    return ~(rf & cf) & ~same


def _judge_output(name: str, refs: Sequence[np.ndarray], cands: Sequence[np.ndarray],
                  r: np.ndarray, c: np.ndarray, tol: PrecisionTolerance,
                  polygraphy_passed: bool | None, precision: str | None) -> OutputComparison:
    """The metrics and verdict of :func:`compare_output` on the pooled float64 arrays."""
    rf, cf = np.isfinite(r), np.isfinite(c)
    both = rf & cf
    mism = mismatched_nonfinite(r, c)
    n_mism = int(mism.sum())
    d = np.abs(c[both] - r[both])
    rb, cb = r[both], c[both]
    nz = rb != 0
    rel = d[nz] / np.abs(rb[nz]) if nz.any() else np.empty(0)
    # every error statistic counts the mismatched elements as infinitely wrong: a NaN or
    # Inf where the reference is finite must never read as "no error"
    d_all = np.concatenate([d, np.full(n_mism, np.inf)])
    rel_all = np.concatenate([rel, np.full(n_mism, np.inf)]) if (rel.size or n_mism) else rel
    nr, nc = float(np.linalg.norm(rb)), float(np.linalg.norm(cb))
    cos = float(np.dot(rb, cb) / (nr * nc)) if nr > 0 and nc > 0 else None
    if cos is not None:
        cos = max(-1.0, min(1.0, cos))
    rel_l2 = float(np.linalg.norm(cb - rb) / nr) if nr > 0 else None
    if n_mism:
        cos = math.nan  # undefined over NaN/Inf: fails every comparison, as it must
        rel_l2 = math.inf
    outside = _outside_mask(r, c, tol.atol, tol.rtol)
    n_out = int(outside.sum())
    frac = n_out / r.size if r.size else 0.0
    new_nan = int((rf & np.isnan(c)).sum())
    new_inf = int((rf & np.isinf(c)).sum())
    top1, top5, rows = _topk_agreement([np.asarray(a) for a in refs],
                                       [np.asarray(b) for b in cands])
    failures: list[str] = []
    if new_nan or new_inf:
        failures.append(f"{new_nan} NaN and {new_inf} Inf where the FP32 reference is finite")
    elif n_mism:
        failures.append(f"{n_mism} element(s) are NaN/Inf on one side only, or infinities "
                        "of opposite sign")
    if frac > tol.max_outside_fraction:
        failures.append(f"{frac:.2%} of elements ({n_out}/{r.size}) outside atol={tol.atol:g} "
                        f"and rtol={tol.rtol:g} (allowed {tol.max_outside_fraction:.2%})")
    # cosine and relative L2 judge an output only when some reference value is beyond
    # atol: an output entirely within atol of zero (e.g. a sigmoid map of ~1e-8 that FP16
    # flushes to 0) is judged by the elementwise rule alone
    meaningful = bool(rb.size) and float(np.max(np.abs(rb))) > tol.atol
    not_judged: dict[str, str] = {}
    if not meaningful and rb.size:
        why = (f"not judged: every |ref| <= atol {tol.atol:g} (max "
               f"{float(np.max(np.abs(rb))):.3g}), so the elementwise rule alone judges this "
               "output")
        if cos is not None and cos < tol.min_cosine_similarity:
            not_judged["cosine_similarity"] = why
        if rel_l2 is not None and rel_l2 > tol.max_rel_l2_error:
            not_judged["rel_l2_error"] = why
    required_atol = _required_atol(d, rb, tol.rtol, tol.max_outside_fraction) \
        if d.size else None
    if frac > tol.max_outside_fraction and required_atol is not None:
        failures[-1] += (f"; it would pass with atol >= {required_atol:.3g} at rtol "
                         f"{tol.rtol:g}")
    if meaningful and cos is not None and cos < tol.min_cosine_similarity:
        failures.append(f"cosine similarity {cos:.6f} < {tol.min_cosine_similarity:g}")
    if meaningful and rel_l2 is not None and rel_l2 > tol.max_rel_l2_error:
        failures.append(f"relative L2 error {rel_l2:.3g} > {tol.max_rel_l2_error:g}")
    if top1 is not None and tol.min_top1_agreement is not None and top1 < tol.min_top1_agreement:
        failures.append(f"top-1 agreement {top1:.2%} < {tol.min_top1_agreement:.2%} "
                        f"over {rows} rows")
    return OutputComparison(
        name=name, shape=[int(s) for s in np.shape(refs[0])],
        reference_dtype=str(np.asarray(refs[0]).dtype),
        candidate_dtype=str(np.asarray(cands[0]).dtype),
        element_count=int(r.size),
        reference_max_abs=float(np.max(np.abs(rb))) if rb.size else 0.0,
        max_abs_error=float(d_all.max()) if d_all.size else 0.0,
        mean_abs_error=float(d_all.mean()) if d_all.size else 0.0,
        p99_abs_error=_quantile_with_inf(d_all, 0.99) if d_all.size else 0.0,
        max_rel_error=float(rel_all.max()) if rel_all.size else None,
        mean_rel_error=float(rel_all.mean()) if rel_all.size else None,
        cosine_similarity=cos, rel_l2_error=rel_l2,
        outside_tolerance_count=n_out, outside_tolerance_fraction=frac,
        candidate_nan_count=int(np.isnan(c).sum()), candidate_inf_count=int(np.isinf(c).sum()),
        reference_nan_count=int(np.isnan(r).sum()), reference_inf_count=int(np.isinf(r).sum()),
        top1_agreement=top1, top5_agreement=top5, rows_compared=rows,
        polygraphy_elemwise_passed=polygraphy_passed,
        rounding_floor_max_abs_error=rounding_floor(r, precision) if precision else None,
        passed=not failures, failures=failures, not_judged=not_judged,
        required_atol=required_atol)


def _required_atol(d: np.ndarray, r: np.ndarray, rtol: float, allowed_share: float) -> float:
    """The smallest ``atol`` with which at most ``allowed_share`` of the elements are
    outside tolerance at ``rtol`` (``d``: absolute errors, ``r``: the reference, finite
    elements only): the ``1 - allowed_share`` quantile of the errors that ``rtol`` alone
    does not cover (0 for those it covers)."""
    need = np.where(d > rtol * np.abs(r), d, 0.0)
    allowed = int(np.floor(allowed_share * need.size))
    if allowed >= need.size:
        return 0.0
    return float(np.sort(need)[need.size - 1 - allowed])


