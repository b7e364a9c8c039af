"""Judging a precision variant: its outputs against the FP32 reference's, its findings and
its verdict.

Pure functions of the outputs of both runs (``{output name: array}`` per sample) and the
variant's :class:`~trtcheck.results.precision.PrecisionTolerance`; running the models is
:mod:`trtcheck.measure.precision.precision`, the numerics of one output
:mod:`trtcheck.measure.precision.output_compare`.
"""

from __future__ import annotations

import math
import shlex
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from trtcheck.errors import InputError
from trtcheck.measure.precision.output_compare import compare_output
from trtcheck.results.precision import OutputComparison, PrecisionTolerance, RangeOverflow
from trtcheck.results.stats import Finding

def polygraphy_elemwise_verdicts(ref_runs: Sequence[dict[str, np.ndarray]],
                                 cand_runs: Sequence[dict[str, np.ndarray]],
                                 tol: PrecisionTolerance) -> dict[str, bool]:
    """Polygraphy's elementwise verdict per output over all samples.

    Builds a ``RunResults`` from our outputs (candidate first, reference second, so
    Polygraphy's relative error is relative to the reference) and runs
    ``Comparator.compare_accuracy`` with ``CompareFunc.simple(atol, rtol,
    check_error_stat="elemwise")``. Polygraphy's log goes nowhere (CRITICAL only).

    Returns:
        ``{output name: True when every element of every sample is within tolerance}``.
    """
    from polygraphy.comparator import Comparator, RunResults
    from polygraphy.logger import G_LOGGER

    try:  # Polygraphy >= 0.53 (CompareFunc.simple is deprecated there)
        from polygraphy.comparator import SimpleCompareFunc
    except ImportError:  # older Polygraphy
        from polygraphy.comparator import CompareFunc

        SimpleCompareFunc = CompareFunc.simple
    rr = RunResults()
    rr.add([{k: np.asarray(v) for k, v in o.items()} for o in cand_runs], runner_name="candidate")
    rr.add([{k: np.asarray(v) for k, v in o.items()} for o in ref_runs], runner_name="reference")
    func = SimpleCompareFunc(atol=tol.atol, rtol=tol.rtol, check_error_stat="elemwise")
    with G_LOGGER.verbosity(G_LOGGER.CRITICAL), np.errstate(all="ignore"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN/Inf outputs: judged by us
        acc = Comparator.compare_accuracy(rr, comparisons=[(0, 1)], compare_func=func)
    # Polygraphy >= 0.53 returns one AccuracyResult per compare function (AccuracyResults,
    # a list); older Polygraphy returns the one AccuracyResult itself, keyed by runner pair
    if not hasattr(acc, "keys"):
        acc = acc[0]
    verdict: dict[str, bool] = {}
    for per_iter in acc[("candidate", "reference")]:
        for name, res in per_iter.items():
            verdict[name] = verdict.get(name, True) and bool(res)
    return verdict


def compare_outputs(label: str, precision: str, ref_runs: Sequence[dict[str, np.ndarray]],
                    cand_runs: Sequence[dict[str, np.ndarray]],
                    tol: PrecisionTolerance) -> dict[str, OutputComparison]:
    """Compare every numeric output of a variant with the reference's, all samples pooled.

    Args:
        label, precision: the variant's label and precision (``"fp16"``, ...).
        ref_runs, cand_runs: per sample, ``{output name: array}`` of the reference and the
            candidate (same samples, same order).
        tol: the variant's tolerance.

    Returns:
        ``{output name: OutputComparison}`` in the reference's output order; outputs that
        are not numbers (strings, objects) are left out.

    Raises:
        InputError: the two runs return different output names.
    """
    ref_names, cand_names = set(ref_runs[0]), set(cand_runs[0])
    if ref_names != cand_names:
        raise InputError(f"reference and {label} candidate return different outputs: "
                         f"reference {sorted(ref_names)}, candidate {sorted(cand_names)}",
                         "compare variants of one model with the same output names")
    poly = polygraphy_elemwise_verdicts(ref_runs, cand_runs, tol)
    outputs: dict[str, OutputComparison] = {}
    for name in ref_runs[0]:
        refs = [r[name] for r in ref_runs]
        if refs[0].dtype.kind not in "fiub":
            continue
        outputs[name] = compare_output(name, refs, [c[name] for c in cand_runs], tol,
                                       poly.get(name), precision)
    return outputs


def precision_absent_finding(label: str, precision: str) -> Finding:
    """The error finding for a candidate with nothing in its requested precision."""
    return Finding(
        code="precision-not-in-candidate", severity="error", where=label,
        message=f"{precision.upper()} was requested, but the {label} candidate has no "
                f"{precision.upper()} layers or tensors: it computes in higher precision "
                f"(e.g. an FP32 model passed as the {label} candidate), so this "
                f"comparison says nothing about {precision.upper()} accuracy",
        remedy=f"pass the {precision.upper()} model or engine (build it with "
               f"{precision.upper()} enabled"
               + ("; calibrated or with Q/DQ nodes)" if precision == "int8" else ")"))


def flat_output_findings(label: str, outputs: dict[str, OutputComparison],
                         atol: float) -> list[Finding]:
    """``precision-inputs-not-exercising`` (warning) per output whose FP32 reference is
    within ``atol`` of zero everywhere on the inputs used (e.g. a detector's probability
    map of ~1e-5 on random inputs): cosine and relative L2 are not judged there and the
    elementwise rule passes almost anything, so the comparison proves little."""
    out = []
    for o in outputs.values():
        if o.element_count and o.reference_max_abs <= atol:
            out.append(Finding(
                code="precision-inputs-not-exercising", severity="warning",
                where=f"{label}:{o.name}",
                message=f"on these inputs the FP32 output {o.name!r} stays within atol "
                        f"{atol:g} of zero everywhere (max |ref| {o.reference_max_abs:.3g}): "
                        "the inputs do not exercise the model, so this PASS proves little "
                        "(cosine and relative L2 are not judged)",
                remedy="compare on real inputs (--inputs FILE.npz or --inputs-dir) that make "
                       "the model produce its normal outputs"))
    return out


def output_findings(label: str, outputs: dict[str, OutputComparison]) -> list[Finding]:
    """Error findings per output: NaN/Inf the reference does not have, and outputs out of
    tolerance (in output order, the NaN/Inf finding of an output first)."""
    findings: list[Finding] = []
    for o in outputs.values():
        new_nonfinite = (o.candidate_nan_count + o.candidate_inf_count
                         - o.reference_nan_count - o.reference_inf_count)
        if new_nonfinite > 0:
            findings.append(Finding(
                code="precision-nonfinite", severity="error", where=f"{label}:{o.name}",
                message=f"{label} output {o.name!r} has {o.candidate_nan_count} NaN and "
                        f"{o.candidate_inf_count} Inf where the FP32 reference has "
                        f"{o.reference_nan_count} NaN and {o.reference_inf_count} Inf",
                remedy="look at the localisation below; keep the overflowing nodes in FP32"))
        if not o.passed:
            findings.append(Finding(
                code="precision-out-of-tolerance", severity="error", where=f"{label}:{o.name}",
                message=f"{label} output {o.name!r}: " + "; ".join(o.failures),
                remedy="check the localisation; loosen tolerances only with a task-level "
                       "accuracy check (--atol/--rtol/--min-cosine)"))
    return findings


_ORT_CPU_NOTE = (
    "ONNX Runtime's CPU provider computes FP16 graphs with FP32 kernels (it casts FP16 "
    "tensors up around each op), so this variant measures FP16 rounding of weights and "
    "tensors, not FP16 arithmetic: an overflow inside the graph does not show in its "
    "outputs. The FP16 range check on the FP32 activations covers that.")


def ort_cpu_upcast_finding(label: str, precision: str, backend: Any) -> Finding | None:
    """The info finding for an FP16 variant run by ONNX Runtime without a GPU provider
    (``backend``: the run's :class:`~trtcheck.results.bench.BackendInfo`), else ``None``."""
    if precision == "fp16" and _ort_cpu_only(backend):
        return Finding(code="ort-cpu-fp16-upcast", severity="info", where=label,
                       message=_ORT_CPU_NOTE)
    return None


def _ort_cpu_only(backend: Any) -> bool:
    return backend.name == "onnxruntime" and not any(
        "CUDA" in p or "Tensorrt" in p for p in backend.providers)


def speedup_not_measurable(precision: str, backend: Any) -> str | None:
    """Why ``backend`` (a :class:`~trtcheck.results.bench.BackendInfo`) cannot measure the
    speed-up of ``precision``, or ``None`` when it can: ONNX Runtime without a GPU
    provider computes FP16 and BF16 graphs with FP32 kernels (casts around each op), so
    their timing measures the casts, not reduced-precision arithmetic."""
    if precision in ("fp16", "bf16") and _ort_cpu_only(backend):
        return (f"not measurable on this backend: ONNX Runtime's CPU provider runs "
                f"{precision.upper()} graphs with FP32 kernels, so its timing measures the "
                "casts, not the precision; measure on the target's GPU (TensorRT, or ONNX "
                "Runtime's CUDA provider)")
    return None


SPEEDUP_ABSENT_MAX = 1.0
"""A reduced-precision variant whose whole 95% speed-up interval is at or below this
(not faster than FP32) gets a ``precision-no-speedup`` warning."""


def speedup_findings(label: str, precision: str, latency: Any) -> list[Finding]:
    """``precision-no-speedup`` (warning): the variant's speed-up interval lies at or
    below :data:`SPEEDUP_ABSENT_MAX` on a backend that has the kernels, e.g. 0.92x: the
    reduced precision was requested but buys nothing (layers left in FP32, reformats
    around them, or a memory-bound model)."""
    if latency is None or latency.speedup_vs_reference is None:
        return []
    ci = latency.speedup_interval
    high = ci[1] if ci else latency.speedup_vs_reference
    if high > SPEEDUP_ABSENT_MAX:
        return []
    span = f" (95% interval {ci[0]:.2f}-{ci[1]:.2f}x)" if ci else ""
    return [Finding(
        code="precision-no-speedup", severity="warning", where=label,
        message=f"{precision.upper()} was requested but is not faster: "
                f"{latency.speedup_vs_reference:.2f}x the FP32 speed{span}",
        remedy="check how many layers run in the reduced precision (`trtcheck inspect` of "
               "the engine: layer precisions, reformats); a model bound by memory or "
               "host overhead gains nothing from it")]


def range_overflow_finding(label: str, overflows: Sequence[RangeOverflow], total: int,
                           consumers: dict[str, list[str]]) -> Finding:
    """The error finding for FP32 activations beyond FP16's largest finite value 65504.

    Args:
        label: the variant's label.
        overflows: the overflowing tensors, first in graph order first (non-empty).
        total: how many tensors overflow in all.
        consumers: ``{tensor name: nodes reading it}``; the remedy names the first three
            overflowing nodes and their consumers.
    """
    first = overflows[0]
    keep: list[str] = []
    for o in overflows[:3]:
        for n in [o.node, *consumers.get(o.tensor, [])]:
            if n not in keep:
                keep.append(n)
    names = shlex.quote(",".join(keep))  # pasted into a shell: quoted
    return Finding(
        code="fp16-range-overflow", severity="error", where=f"{label}:{first.node}",
        message=f"{total} FP32 activation(s) exceed FP16's range: the first is "
                f"{first.tensor!r} of node {first.node!r} ({first.op_type}), reaching "
                f"{first.reference_max_abs:.4g} > 65504 in {first.overflow_count} of "
                f"{first.element_count} elements; a runtime computing it in FP16 "
                "(e.g. a TensorRT FP16 engine) gives inf there",
        remedy=f"keep the overflowing nodes and their consumers in FP32 "
               f"(--keep-fp32-nodes {names}), or rescale the model (e.g. compute "
               "LayerNorm/variance in FP32)")


def variant_passed(outputs: dict[str, OutputComparison], findings: Sequence[Finding]) -> bool:
    """A variant passes when every output is within tolerance and no finding is an error."""
    return all(o.passed for o in outputs.values()) and not any(
        f.severity == "error" for f in findings)


def outputs_summary(outputs: dict[str, OutputComparison]) -> dict[str, Any]:
    """The worst values over a variant's outputs, as the fields of
    :class:`~trtcheck.results.precision.VariantResult`: ``min_cosine_similarity`` (NaN when
    any output's cosine is undefined), ``max_rel_l2_error``, ``max_abs_error``,
    ``max_outside_tolerance_fraction``, ``nonfinite_count`` (NaN/Inf the reference does not
    have), ``min_top1_agreement``; ``None`` where no output has the value."""
    worst_cos = [o.cosine_similarity for o in outputs.values() if o.cosine_similarity is not None]
    if any(math.isnan(x) for x in worst_cos):
        worst_cos = [math.nan]  # an undefined cosine (NaN/Inf outputs) is the worst one
    worst_top1 = [o.top1_agreement for o in outputs.values() if o.top1_agreement is not None]
    return {
        "min_cosine_similarity": min(worst_cos) if worst_cos else None,
        "max_rel_l2_error": max((o.rel_l2_error for o in outputs.values()
                                 if o.rel_l2_error is not None), default=None),
        "max_abs_error": max((o.max_abs_error for o in outputs.values()), default=0.0),
        "max_outside_tolerance_fraction": max((o.outside_tolerance_fraction
                                               for o in outputs.values()), default=0.0),
        "nonfinite_count": sum(max(0, o.candidate_nan_count + o.candidate_inf_count
                                   - o.reference_nan_count - o.reference_inf_count)
                               for o in outputs.values()),
        "min_top1_agreement": min(worst_top1) if worst_top1 else None,
    }
