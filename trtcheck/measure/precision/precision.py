"""Precision comparison: reduced-precision variants against an FP32 reference.

Flow (:func:`compare_variants`, on any :class:`~trtcheck.backends.base.Backend`):

1. check that reference and each candidate have the same input and output names and
   compatible shapes (:func:`check_compatible`, :class:`~trtcheck.errors.InputError`
   otherwise: exit code 2);
2. run the reference and every candidate on the **same** feeds (seeded random data,
   one ``.npz``, or a folder of ``.npz`` samples: :func:`prepare_samples`);
3. per output, pool all samples and compute our metrics (:func:`compare_output`), and
   Polygraphy's own verdict through ``Comparator.compare_accuracy`` with
   ``CompareFunc.simple(check_error_stat="elemwise")`` on the same tolerances;
4. judge each output against the variant's :class:`~trtcheck.results.precision.PrecisionTolerance`
   (defaults per precision in
   :data:`trtcheck.measure.precision.precision_tolerance.DEFAULT_TOLERANCES`, overridable;
   judging is :mod:`trtcheck.measure.precision.precision_judge`);
5. optionally localise (:mod:`trtcheck.measure.precision.localize`) and measure latency per
   variant with :func:`trtcheck.measure.bench.bench.run_bench` on the same input.

The reference is always FP32. ONNX Runtime on CPU is an FP32 reference, never an FP16
one: an FP16-converted ONNX run by its CPU provider is computed with FP32 kernels
(checked with onnxruntime 1.32: ``40000 * 2 / 2`` in an FP16 graph returns 40000, where
FP16 arithmetic overflows to inf), so that variant measures FP16 *rounding of weights
and tensors*, not FP16 arithmetic. That is why the FP16 range check on the FP32
activations (:func:`trtcheck.measure.precision.localize.range_overflows`) is part of every FP16
verdict: it finds what a true FP16 runtime (a TensorRT FP16 engine) would overflow.

:func:`compare_onnx_precisions` builds the variants of an ONNX model itself
(FP16 through ``onnxruntime.transformers.float16.convert_float_to_float16``,
:mod:`trtcheck.measure.bench.fp16`) or takes
candidate files (``--candidate fp16=model.plan``) opened with
:func:`trtcheck.backends.registry.open_backend`.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtcheck.backends.base import Backend
from trtcheck.errors import EnvironmentProblem, InputError
from trtcheck.load.inputs import make_feed
from trtcheck.measure.progress import begin_steps, step_done
from trtcheck.measure.bench import FP16_WEIGHT_MAX, FP16_WEIGHT_MIN
from trtcheck.load.shapes import resolve_shapes, shapes_with_data
from trtcheck.measure.precision.output_compare import (  # noqa: F401 - part of this module's API
    FP16_MAX,
    compare_output,
    rounding_floor,
)
from trtcheck.measure.precision.precision_judge import (  # noqa: F401 - part of this module's API
    compare_outputs,
    flat_output_findings,
    ort_cpu_upcast_finding,
    output_findings,
    outputs_summary,
    polygraphy_elemwise_verdicts,
    precision_absent_finding,
    range_overflow_finding,
    speedup_findings,
    variant_passed,
)
from trtcheck.measure.precision.precision_tolerance import (  # noqa: F401 - part of this module's API
    DEFAULT_TOLERANCES,
    PRECISIONS,
    tolerance_for,
)
from trtcheck.results.inspection import TensorInfo
from trtcheck.results.precision import (
    Localization,
    PrecisionInputs,
    PrecisionLatency,
    PrecisionResult,
    PrecisionTolerance,
    VariantResult,
)
from trtcheck.results.stats import Finding

# --------------------------------------------------------------------------- variants


@dataclass
class Variant:
    """A model to run in the comparison.

    Attributes:
        label: key in the results (``"fp32"`` for the reference, else the precision).
        precision: ``"fp32"``, ``"fp16"``, ``"bf16"``, ``"int8"``, ``"fp8"``.
        backend: any :class:`~trtcheck.backends.base.Backend`, constructed, not activated.
        model_path: what the backend runs (recorded).
        built_by: how it was built, one sentence.
        onnx_path: an ONNX file ONNX Runtime can run with all outputs marked (for
            layer-wise localisation), or ``None`` (engines).
        kept_fp32_nodes: nodes the builder kept in FP32.
        build_findings: what the builder noticed (e.g. weights clamped to FP16's range).
        built_by_trtcheck: trtcheck converted this variant itself; a runtime rejecting it
            is then trtcheck's conversion failing, not the user's model
            (:class:`~trtcheck.errors.EnvironmentProblem`, exit 3).
    """

    label: str
    precision: str
    backend: Backend
    model_path: str
    built_by: str
    onnx_path: str | None = None
    kept_fp32_nodes: list[str] = field(default_factory=list)
    build_findings: list[Finding] = field(default_factory=list)
    built_by_trtcheck: bool = False


#: ONNX element types (onnx.TensorProto values) of each reduced precision
_ONNX_TYPES = {"fp16": {10}, "bf16": {16}, "int8": {2, 3}, "fp8": {17, 18, 19, 20}}
#: ONNX ops that compute in INT8 (quantized graphs: QDQ or QOperator form)
_INT8_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "ConvInteger",
             "MatMulInteger", "QLinearConv", "QLinearMatMul", "QLinearAdd", "QLinearMul"}


def onnx_has_precision(path: str, precision: str) -> bool | None:
    """Whether the ONNX model at ``path`` holds anything in ``precision``: a tensor,
    initializer or Cast of that element type (FLOAT16=10, BFLOAT16=16, INT8/UINT8=2/3,
    FLOAT8*=17..20), or for ``int8`` a quantization op (Q/DQ, QLinear*, *Integer).

    Returns:
        ``True``/``False``, or ``None`` when the file cannot be read here (the runtime that
        opened it speaks for it) or the precision is unknown.
    """
    types = _ONNX_TYPES.get(precision)
    if types is None:
        return None
    try:
        import onnx

        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - the backend already opened it; unknown here
        return None
    g = model.graph
    if any(i.data_type in types for i in g.initializer):
        return True
    for vi in (*g.input, *g.output, *g.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type in types:
            return True
    for n in g.node:
        if precision == "int8" and n.op_type in _INT8_OPS:
            return True
        for a in n.attribute:
            if (a.name == "to" and a.i in types) or (a.HasField("t") and a.t.data_type in types):
                return True
    return False


def _candidate_has_precision(v: Variant, be: Backend) -> bool | None:
    """Whether the candidate computes anything in its requested precision (``None``:
    unknown, e.g. an engine built without detailed layer information)."""
    if v.onnx_path:
        return onnx_has_precision(v.onnx_path, v.precision)
    inspect = getattr(be, "engine_inspection", None)
    if inspect is None:
        return None
    try:
        mix = inspect().precision_mix
    except Exception:  # noqa: BLE001 - inspection is extra; the comparison stands alone
        return None
    if not mix:
        return None
    return mix.get(v.precision, 0) > 0


def _fixed(d: Any) -> bool:
    return isinstance(d, int) and d > 0


def check_compatible(ref_inputs: Sequence[TensorInfo], ref_outputs: Sequence[TensorInfo],
                     cand_inputs: Sequence[TensorInfo], cand_outputs: Sequence[TensorInfo],
                     label: str) -> None:
    """Reference and candidate must take the same inputs and give the same outputs.

    Names must match exactly (as sets); ranks must match; a dim fixed in both must agree.
    Outputs are checked only when both backends describe them.

    Raises:
        InputError: the first difference, naming both sides.
    """
    hint = ("compare variants of one model: export both from the same source, with the same "
            "input/output names and shapes")
    for kind, a, b in (("inputs", ref_inputs, cand_inputs), ("outputs", ref_outputs, cand_outputs)):
        if kind == "outputs" and (not a or not b):
            continue
        an, bn = {t.name: t for t in a}, {t.name: t for t in b}
        if set(an) != set(bn):
            raise InputError(f"reference and {label} candidate have different {kind}: "
                             f"reference {sorted(an)}, candidate {sorted(bn)}", hint)
        for name, t in an.items():
            u = bn[name]
            if len(t.shape) != len(u.shape):
                raise InputError(f"{kind[:-1]} {name!r} has rank {len(t.shape)} in the reference "
                                 f"{t.shape_text()} but {len(u.shape)} in the {label} candidate "
                                 f"{u.shape_text()}", hint)
            for i, (x, y) in enumerate(zip(t.shape, u.shape)):
                if _fixed(x) and _fixed(y) and x != y:
                    raise InputError(f"{kind[:-1]} {name!r} axis {i} is {x} in the reference "
                                     f"{t.shape_text()} but {y} in the {label} candidate "
                                     f"{u.shape_text()}", hint)


def load_npz_dir(folder: str | os.PathLike[str]) -> list[tuple[str, dict[str, np.ndarray]]]:
    """Every ``*.npz`` of ``folder`` (sorted by name), each one sample.

    Raises:
        InputError: not a folder, or no ``.npz`` in it, or an unreadable file.
    """
    from trtcheck.load.inputs import load_npz

    p = Path(folder)
    if not p.is_dir():
        raise InputError(f"--inputs-dir {p} is not a directory", "pass a folder of .npz files")
    files = sorted(f for f in p.iterdir() if f.suffix == ".npz" and f.is_file())
    if not files:
        raise InputError(f"no .npz files in {p}",
                         "write one sample per file with numpy.savez(path, input_name=array)")
    return [(str(f), load_npz(f)) for f in files]


def _default_shapes(inputs: Sequence[TensorInfo], given: dict[str, list[int]],
                    arrays: dict[str, np.ndarray] | None,
                    where: str = "the input data") -> dict[str, list[int]]:
    """Concrete shapes: user shapes, then a given array's shape, then batch 1 for a dynamic
    axis 0 when every other dim is fixed."""
    out = shapes_with_data(inputs, given, arrays, where)
    for t in inputs:
        if t.name in out:
            continue
        if t.shape and not _fixed(t.shape[0]) and all(_fixed(d) for d in t.shape[1:]):
            out[t.name] = [1, *[int(d) for d in t.shape[1:]]]  # type: ignore[arg-type]
    return resolve_shapes(inputs, out, None)


def prepare_samples(inputs: Sequence[TensorInfo], shapes: dict[str, list[int]] | None = None,
                    sample_count: int = 4, seed: int | None = 0,
                    array_sets: Sequence[tuple[str, dict[str, np.ndarray]]] | None = None,
                    values: dict[str, float | int | bool] | None = None,
                    source: str | None = None) -> tuple[list[dict[str, np.ndarray]], PrecisionInputs]:
    """The feeds every variant runs on.

    Args:
        inputs: the reference model's inputs.
        shapes: user shapes (``--shapes``); dynamic dims need them unless data gives them.
        sample_count: executions with random data (>= 1; ignored with ``array_sets``).
        seed: sample ``i`` of random data uses ``seed + i`` (uniform ``[0, 1)`` floats).
        array_sets: user data, ``[(file name, {input: array})]``, one entry per sample;
            every model input must be in every entry (or in ``values``).
        values: scalars for inputs (``--input-value``).
        source: recorded input source (default ``"npz"`` / ``"npz-dir"`` / random).

    Returns:
        ``(feeds, PrecisionInputs)``.

    Raises:
        InputError: an input missing from an ``.npz``, an unknown name, a shape that does
            not fit, ``sample_count < 1``.
    """
    shapes = dict(shapes or {})
    values = dict(values or {})
    feeds: list[dict[str, np.ndarray]] = []
    if array_sets:
        from trtcheck.load.input_checks import check_data_fits

        for fname, arrays in array_sets:
            check_data_fits(inputs, arrays, fname, values)  # as bench and report
            resolved = _default_shapes(inputs, shapes, arrays, fname)
            feeds.append(make_feed(list(inputs), resolved, seed=None, arrays=arrays, values=values))
        src = source or ("npz" if len(array_sets) == 1 else "npz-dir")
        info = PrecisionInputs(source=src, sample_count=len(feeds), seed=None,
                               shapes={k: list(v.shape) for k, v in feeds[0].items()},
                               files=[f for f, _ in array_sets])
        return feeds, info
    if sample_count < 1:
        raise InputError(f"--samples must be >= 1, got {sample_count}")
    resolved = _default_shapes(inputs, shapes, None)
    for i in range(sample_count):
        s = None if seed is None else seed + i
        feeds.append(make_feed(list(inputs), resolved, seed=s, values=values))
    info = PrecisionInputs(source=source or "random-uniform", sample_count=sample_count,
                           seed=seed, shapes=resolved)
    return feeds, info


def _run(backend: Backend, feeds: Sequence[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    return [{k: np.asarray(v) for k, v in backend.infer(f).outputs.items()} for f in feeds]


def _latency(backend: Backend, model_path: str, feed: dict[str, np.ndarray], rule: Any,
             label: str) -> PrecisionLatency:
    from trtcheck.measure.bench import run_bench

    shapes = {k: [int(d) for d in v.shape] for k, v in feed.items()}
    run = run_bench(backend, model_path, None, shapes=shapes, rule=rule, seed=None,
                    arrays=feed, label=label)
    b = run.batches[0]
    return PrecisionLatency(median_ms=b.stats.median_ms, p99_ms=b.stats.p99_ms,
                            throughput_samples_per_s=b.throughput_samples_per_s,
                            batch_size=b.batch_size, bench=run)


def set_speedup(latency: PrecisionLatency, ref_latency: PrecisionLatency, precision: str,
                backend: Any) -> None:
    """Fill ``latency``'s speed-up against ``ref_latency``: the ratio of medians and its
    95% interval (:func:`trtcheck.stats.median_interval` of each run, divided crosswise),
    or, when ``backend`` has no kernels for ``precision`` (ONNX Runtime's CPU provider
    for FP16: FP32 kernels around casts), no ratio and why it is not measurable."""
    from trtcheck.measure.precision.precision_judge import speedup_not_measurable
    from trtcheck.stats import median_interval

    why = speedup_not_measurable(precision, backend)
    if why is not None:
        latency.speedup_not_measurable = why
        latency.speedup_vs_reference = None
        return
    latency.speedup_vs_reference = ref_latency.median_ms / latency.median_ms
    ref_ci = median_interval(ref_latency.bench.batches[0].samples_ms)
    ci = median_interval(latency.bench.batches[0].samples_ms)
    if ref_ci is not None and ci is not None and ci[0] > 0:
        latency.speedup_interval = [ref_ci[0] / ci[1], ref_ci[1] / ci[0]]


@dataclass
class CompareSettings:
    """Knobs of :func:`compare_variants`.

    Attributes:
        tolerance_overrides: see :func:`tolerance_for`.
        bench_rule: a :class:`~trtcheck.measure.bench.bench.StopRule` to measure latency per
            variant (``None``: no latency).
        localize: run the FP16 range check and, for failing ONNX variants, the layer-wise
            comparison.
        reference_onnx: the FP32 ONNX model (for the range check), or ``None``.
        providers, threads: ONNX Runtime settings of the localisation runs.
        log: progress callback (one line each), or ``None``.
    """

    tolerance_overrides: dict[str, dict[str, float]] | None = None
    bench_rule: Any = None
    localize: bool = True
    reference_onnx: str | None = None
    providers: list[str] | None = None
    threads: int | None = None
    log: Callable[[str], None] | None = None


def compare_variants(reference: Variant, variants: Sequence[Variant], model_path: str,
                     feeds: Sequence[dict[str, np.ndarray]], inputs_info: PrecisionInputs,
                     settings: CompareSettings | None = None) -> PrecisionResult:
    """Run the reference and each variant on ``feeds`` and judge each variant.

    Args:
        reference: the FP32 reference (``precision`` must be ``"fp32"``).
        variants: candidates; their precisions must be in :data:`PRECISIONS`.
        model_path: recorded as the compared model.
        feeds: input feeds (from :func:`prepare_samples`), the same for everyone.
        inputs_info: how the feeds were made.
        settings: tolerances, latency, localisation.

    Returns:
        a :class:`~trtcheck.results.precision.PrecisionResult`; ``passed`` is false when any
        variant fails (the CLI turns that into exit code 1).

    Raises:
        InputError: incompatible I/O between reference and a candidate, or a failed run.
        EnvironmentProblem: a backend cannot start on this machine.
    """
    st = settings or CompareSettings()
    log = st.log or (lambda _m: None)
    if reference.precision != "fp32":
        raise InputError(f"the reference must be FP32, got {reference.precision}",
                         "compare reduced-precision variants against the FP32 model")
    tols = {v.label: tolerance_for(v.precision, st.tolerance_overrides) for v in variants}
    notes = ["The reference is always FP32; each variant is judged against it, never "
             "against another reduced-precision run."]
    begin_steps(st.log, 1 + len(variants), "model", "precision")
    with reference.backend as ref_be:
        ref_in, ref_out = ref_be.input_specs(), ref_be.output_specs()
        log(f"running the FP32 reference on {len(feeds)} sample(s) ...")
        ref_runs = _run(ref_be, feeds)
        repeat = _run(ref_be, feeds[:1])[0]
        noise = max((float(np.max(np.abs(repeat[k].astype(np.float64)
                                          - ref_runs[0][k].astype(np.float64))))
                     for k in repeat if repeat[k].size and repeat[k].dtype.kind in "fiu"),
                    default=0.0)
        ref_info = ref_be.info
        ref_latency = None
        if st.bench_rule is not None:
            log("measuring FP32 reference latency ...")
            ref_latency = _latency(ref_be, reference.model_path, feeds[0], st.bench_rule,
                                   f"{reference.label}-reference")
    step_done(st.log, f"precision: FP32 reference done ({len(feeds)} sample(s))")
    tmp = tempfile.TemporaryDirectory(prefix="trtcheck-localize-")
    cache: dict[str, Any] = {}

    def ref_acts() -> Any:
        """FP32 activations of every node (computed once, on first need), or None."""
        if not (st.localize and st.reference_onnx):
            return None
        if "acts" not in cache:
            from trtcheck.measure.precision.localize import collect_activations

            log("running the FP32 reference with every node output marked ...")
            cache["acts"] = collect_activations(st.reference_onnx, feeds, tmp.name,
                                                limit=FP16_MAX, providers=st.providers,
                                                threads=st.threads)
        return cache["acts"]

    try:
        results: dict[str, VariantResult] = {}
        for v in variants:
            results[v.label] = _judge_variant(v, ref_in, ref_out, ref_runs, feeds, tols[v.label],
                                              st, ref_acts, ref_latency, tmp.name, log)
            step_done(st.log, f"precision: {v.label} "
                              f"{'within' if results[v.label].passed else 'outside'} tolerance")
    finally:
        tmp.cleanup()
    if noise > 0:
        notes.append(f"The FP32 reference is not bit-exact from run to run (max difference "
                     f"{noise:.3g} on sample 0): errors near that size are runtime noise.")
    return PrecisionResult(model_path=str(model_path), reference=ref_info,
                           reference_latency=ref_latency, reference_repeat_max_abs_error=noise,
                           inputs=inputs_info, variants=results,
                           passed=all(r.passed for r in results.values()), notes=notes)


def _judge_variant(v: Variant, ref_in: list[TensorInfo], ref_out: list[TensorInfo],
                   ref_runs: list[dict[str, np.ndarray]], feeds: Sequence[dict[str, np.ndarray]],
                   tol: PrecisionTolerance, st: CompareSettings,
                   ref_acts: Callable[[], Any],
                   ref_latency: PrecisionLatency | None, workdir: str,
                   log: Callable[[str], None]) -> VariantResult:
    findings: list[Finding] = list(v.build_findings)
    try:
        with v.backend as be:
            check_compatible(ref_in, ref_out, be.input_specs(), be.output_specs(), v.label)
            log(f"running the {v.label} variant on {len(feeds)} sample(s) ...")
            cand_runs = _run(be, feeds)
            info = be.info
            present = _candidate_has_precision(v, be)
            latency = None
            if st.bench_rule is not None:
                log(f"measuring {v.label} latency ...")
                latency = _latency(be, v.model_path, feeds[0], st.bench_rule, v.label)
                if ref_latency is not None and latency.median_ms > 0:
                    set_speedup(latency, ref_latency, v.precision, be.info)
    except InputError as exc:
        if not v.built_by_trtcheck:
            raise
        raise EnvironmentProblem(
            f"trtcheck's own {v.precision.upper()} conversion of the model produced a graph "
            f"the runtime rejects ({exc.message[:300]})",
            f"this is a limit of the converter ({v.built_by.split(' with ')[0]}), not a fault "
            f"of your model: convert it yourself and pass --candidate {v.precision}=PATH, "
            "or keep the failing ops in FP32 (--keep-fp32-ops OP)") from None
    if present is False:
        findings.append(precision_absent_finding(v.label, v.precision))
    outputs = compare_outputs(v.label, v.precision, ref_runs, cand_runs, tol)
    findings += output_findings(v.label, outputs)
    findings += flat_output_findings(v.label, outputs, tol.atol)
    upcast = ort_cpu_upcast_finding(v.label, v.precision, info)
    if upcast is not None:
        findings.append(upcast)
    slower = speedup_findings(v.label, v.precision, latency)
    findings += slower
    localization = None
    acts = ref_acts() if v.precision == "fp16" else None
    if acts is not None:
        from trtcheck.measure.precision.localize import range_overflows

        overflows, total = range_overflows(acts, FP16_MAX, v.kept_fp32_nodes)
        localization = Localization(
            method="FP32 activations of every node (ONNX Runtime, all outputs marked) "
                   "checked against FP16's largest finite value 65504",
            range_overflows=overflows, range_overflow_total=total)
        if overflows:
            findings.append(range_overflow_finding(v.label, overflows, total, acts.consumers))
    passed = variant_passed(outputs, findings)
    if st.localize and not passed and v.onnx_path and ref_acts() is not None:
        from trtcheck.measure.precision.localize import collect_activations, compare_layers

        log(f"localising the {v.label} error layer by layer ...")
        cand_acts = collect_activations(v.onnx_path, feeds[:1], workdir,
                                        providers=st.providers, threads=st.threads)
        failing, nonfinite, n = compare_layers(ref_acts(), cand_acts, tol)
        method = ("all node outputs marked in both ONNX graphs (Polygraphy MARK_ALL), run by "
                  "ONNX Runtime, matched by tensor name, sample 0")
        if localization is None:
            localization = Localization(method=method)
        else:
            localization.method = method + "; plus the FP16 range check of the FP32 activations"
        localization.tensors_compared = n
        localization.first_failing = failing
        localization.first_nonfinite = nonfinite
    elif st.localize and not passed:
        why = (f"its layers cannot be marked here ({info.name})" if not v.onnx_path else
               "the reference is not an ONNX model ONNX Runtime can run with all outputs marked")
        note = f"layer-wise comparison is not available for this variant: {why}"
        if localization is None:
            localization = Localization(method="none", notes=[note])
        else:
            localization.notes.append(note + "; the FP16 range check speaks for it")
    return VariantResult(
        label=v.label, precision=v.precision, backend=info, model_path=v.model_path,
        built_by=v.built_by, kept_fp32_nodes=list(v.kept_fp32_nodes), tolerance=tol,
        outputs=outputs, **outputs_summary(outputs),
        passed=passed, findings=findings, localization=localization, latency=latency)


# --------------------------------------------------------------------------- ONNX variants


#: the bounds the FP16 conversion clamps constants to (trtcheck.measure.bench.fp16)
CONVERTER_MAX_FINITE = FP16_WEIGHT_MAX
CONVERTER_MIN_POSITIVE = FP16_WEIGHT_MIN


def clamped_weights(model: Any, blocked_nodes: set[str]) -> list[tuple[str, float, int, list[str]]]:
    """Float constants the FP16 converter will clamp: ``|w| >= 1e4`` becomes ``+-1e4``.

    Scans initializers and ``Constant`` nodes of an FP32 ONNX model (:func:`build_fp16_onnx`
    has moved float Constant nodes into initializers before this runs). An initializer
    read only by nodes kept in FP32 is left alone by the converter and skipped here.

    Returns:
        ``[(name, max |w|, elements clamped, nodes to keep in FP32: the Constant node
        if any, then the readers)]`` in graph order.
    """
    from onnx import TensorProto, numpy_helper

    consumers: dict[str, list[str]] = {}
    for i, n in enumerate(model.graph.node):
        for t in n.input:
            consumers.setdefault(t, []).append(n.name or f"node_{i}")
    tensors = [(t.name, t) for t in model.graph.initializer]
    for n in model.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                    tensors.append((n.output[0], a.t))
    producer = {n.output[0]: (n.name or f"node_{i}") for i, n in enumerate(model.graph.node)
                if n.op_type == "Constant" and n.output}
    out = []
    for name, t in tensors:
        if t.data_type != TensorProto.FLOAT:
            continue
        users = consumers.get(name, [])
        owners = [producer[name]] if name in producer else []
        if users and all(u in blocked_nodes for u in users + owners):
            continue
        arr = np.abs(numpy_helper.to_array(t).astype(np.float64))
        n_big = int(np.sum(np.isfinite(arr) & (arr >= CONVERTER_MAX_FINITE)))
        if n_big:
            out.append((name, float(arr[np.isfinite(arr)].max()), n_big, owners + users))
    return out


def _constants_to_initializers(model: Any) -> int:
    """Move top-level float ``Constant`` nodes into initializers (same semantics).

    Why: the converter keeps an *initializer* read only by FP32-kept nodes in FP32, but
    it casts a kept ``Constant`` node's output to FP16 and back (1e6 becomes inf on the
    way), so ``--keep-fp32-nodes`` could not protect a large constant otherwise.

    Returns:
        the number of nodes moved.
    """
    from onnx import TensorProto

    keep, moved = [], 0
    for n in model.graph.node:
        value = next((a for a in n.attribute if a.name == "value"), None)
        if (n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.attribute) == 1
                and value is not None and value.t.data_type == TensorProto.FLOAT):
            t = value.t
            t.name = n.output[0]
            model.graph.initializer.append(t)
            moved += 1
        else:
            keep.append(n)
    if moved:
        del model.graph.node[:]
        model.graph.node.extend(keep)
    return moved


def build_fp16_onnx(model_path: str | os.PathLike[str], out_path: str | os.PathLike[str],
                    keep_fp32_ops: Sequence[str] = (), keep_fp32_nodes: Sequence[str] = ()
                    ) -> tuple[str, list[str], list[Finding]]:
    """Convert an FP32 ONNX model to FP16 with ONNX Runtime's converter.

    :func:`trtcheck.measure.bench.fp16.convert_to_fp16` (``onnxruntime.transformers.float16.
    convert_float_to_float16(model, keep_io_types=True, op_block_list=...,
    node_block_list=...)``): inputs and outputs stay float32 (Casts inside), so the
    variant takes the same feeds as the reference. The op block list is
    :func:`trtcheck.measure.bench.fp16.fp16_op_block_list` (Resize, Upsample, Range, TopK,
    NonMaxSuppression, RoiAlign, CumSum, Min, Max and the ML ops: ops whose FP16 form is
    range- or index-sensitive or missing) plus ``keep_fp32_ops``; ``keep_fp32_nodes``
    keeps single nodes in FP32. Weights beyond FP16's range are clamped to +-1e4 and
    tiny ones to +-1e-7 (:data:`trtcheck.measure.bench.fp16.FP16_WEIGHT_MAX`).

    Returns:
        ``(written path, names of the nodes kept in FP32, findings)``; a finding
        ``fp16-weight-clamped`` (warning) names the constants of magnitude >= 1e4 the
        converter clamps to +-1e4 (e.g. BatchNorm running variances of 1e7 in PP-OCR det)
        and the nodes that read them.

    Raises:
        EnvironmentProblem: neither onnxruntime nor onnxruntime-gpu is installed.
        InputError: the model cannot be loaded or converted, or a kept node does not exist.
    """
    import onnx

    from trtcheck.measure.bench import convert_to_fp16, fp16_op_block_list

    block_ops = fp16_op_block_list(keep_fp32_ops)  # checks that ONNX Runtime is there
    try:
        model = onnx.load(str(model_path))
    except Exception as exc:
        raise InputError(f"cannot load {model_path}: {exc}", "check the file with trtcheck inspect") from None
    # name unnamed nodes as localisation does (node_<index>, indices of the FP32 graph) so
    # that --keep-fp32-nodes can name them: the converter blocks by name
    for i, n in enumerate(model.graph.node):
        if not n.name:
            n.name = f"node_{i}"
    _constants_to_initializers(model)
    node_names = {n.name for n in model.graph.node}
    unknown = [n for n in keep_fp32_nodes if n not in node_names]
    if unknown:
        import difflib

        near = sorted({m for u in unknown for m in difflib.get_close_matches(u, node_names, 3)})
        some = near or sorted(node_names)[:5]
        raise InputError(f"--keep-fp32-nodes names unknown node(s) {', '.join(map(repr, unknown))}",
                         f"{'did you mean' if near else 'the model has nodes such as'} "
                         f"{', '.join(map(repr, some))}? (unnamed nodes are node_<index>; "
                         "the localisation of `trtcheck precision` prints node names)")
    try:
        m16 = convert_to_fp16(model, Path(model_path).name, block_ops, keep_fp32_nodes)
    except InputError as exc:
        raise InputError(exc.message, "pass a converted model with --candidate fp16=PATH"
                         ) from None
    kept = [n.name for n in model.graph.node if n.op_type in set(block_ops)
            or n.name in set(keep_fp32_nodes)]
    findings: list[Finding] = []
    clamped = clamped_weights(model, set(kept))
    if clamped:
        users: list[str] = []
        for _n, _m, _c, us in clamped:
            users += [u for u in us if u not in users]
        worst = max(clamped, key=lambda c: c[1])
        findings.append(Finding(
            code="fp16-weight-clamped", severity="warning", where=worst[0],
            message=f"{len(clamped)} constant(s) hold values >= 1e4 that the FP16 converter "
                    f"clamps to +-1e4 (largest: {worst[0]!r} = {worst[1]:.4g}, nodes "
                    f"{', '.join(worst[3][:3])}); the FP16 ONNX computes with changed weights. "
                    "A TensorRT FP16 engine of the same ONNX may not be affected (it folds "
                    "BatchNorm into the convolution in FP32 before casting)",
            remedy=f"keep these nodes in FP32 (--keep-fp32-nodes "
                   f"{shlex.quote(','.join(users[:10]))}"
                   f"{' and more' if len(users) > 10 else ''}) or fold BatchNorm/constants "
                   "first"))
    onnx.save_model(m16, str(out_path))
    return str(out_path), kept, findings


def _ort_backend(path: str, precision: str, providers: list[str] | None,
                 threads: int | None) -> Backend:
    from trtcheck.backends.onnxruntime import OnnxRuntimeBackend

    return OnnxRuntimeBackend(path, providers=providers, intra_op_threads=threads,
                              precision=precision)


def compare_onnx_precisions(model_path: str | os.PathLike[str],
                            precisions: Sequence[str] = ("fp16",), *,
                            shapes: dict[str, list[int]] | None = None,
                            array_sets: Sequence[tuple[str, dict[str, np.ndarray]]] | None = None,
                            values: dict[str, float | int | bool] | None = None,
                            sample_count: int = 4, seed: int | None = 0,
                            candidates: dict[str, str] | None = None,
                            backend_name: str | None = None,
                            providers: list[str] | None = None, threads: int | None = None,
                            tolerance_overrides: dict[str, dict[str, float]] | None = None,
                            bench_rule: Any = None, localize: bool = True,
                            keep_fp32_ops: Sequence[str] = (), keep_fp32_nodes: Sequence[str] = (),
                            log: Callable[[str], None] | None = None) -> PrecisionResult:
    """Compare FP32 ``model_path`` with each precision in ``precisions``.

    The reference runs on ONNX Runtime (or ``backend_name``) in FP32. A precision's
    variant is ``candidates[precision]`` when given (any file
    :func:`~trtcheck.backends.registry.open_backend` opens: an FP16 ONNX, a TensorRT
    engine), else built: ``fp16`` by :func:`build_fp16_onnx` into a temporary folder and
    run by ONNX Runtime. Other precisions need a candidate file.

    Args:
        model_path: the FP32 ONNX model.
        precisions: labels from :data:`PRECISIONS`, each at most once.
        shapes, array_sets, values, sample_count, seed: see :func:`prepare_samples`.
        candidates: ``{precision: path}``.
        backend_name: backend of the reference (default by file suffix).
        providers, threads: ONNX Runtime settings for every ONNX run.
        tolerance_overrides: see :func:`tolerance_for`.
        bench_rule: a StopRule to measure latency per precision, or ``None``.
        localize: FP16 range check and layer-wise localisation of failures.
        keep_fp32_ops, keep_fp32_nodes: extra converter block lists for the FP16 build.
        log: progress callback.

    Raises:
        InputError: unknown or repeated precision, no way to build a precision, missing
            candidate file, incompatible I/O, bad input data.
        EnvironmentProblem: a runtime or the converter is missing.
    """
    from trtcheck.backends.registry import open_backend

    model_path = str(model_path)
    precs = list(precisions)
    if not precs:
        raise InputError("no precision to compare", "e.g. --precision fp16")
    for p in precs:
        if p not in PRECISIONS:
            raise InputError(f"unknown precision {p!r}", f"choose from {', '.join(PRECISIONS)}")
    if len(set(precs)) != len(precs):
        raise InputError("a precision is listed twice in --precision")
    candidates = dict(candidates or {})
    extra = [p for p in candidates if p not in precs]
    if extra:
        raise InputError(f"--candidate given for {', '.join(extra)}, which --precision does "
                         "not list", f"add it: --precision {','.join(precs + extra)}")
    for p in precs:
        if p in candidates and not Path(candidates[p]).is_file():
            raise InputError(f"candidate file not found: {candidates[p]}", "check the path")
        if p not in candidates and p != "fp16":
            raise InputError(f"trtcheck cannot build a {p} variant of an ONNX model on ONNX "
                             "Runtime", f"build a {p} engine and pass it: --candidate {p}=ENGINE")
    ort_kwargs: dict[str, Any] = {}
    if providers:
        ort_kwargs["providers"] = providers
    if threads:
        ort_kwargs["intra_op_threads"] = threads
    ref_backend = open_backend(model_path, backend_name, **ort_kwargs)
    with tempfile.TemporaryDirectory(prefix="trtcheck-precision-") as work:
        variants: list[Variant] = []
        for p in precs:
            if p in candidates:
                path = candidates[p]
                be = (_ort_backend(path, p, providers, threads) if path.lower().endswith(".onnx")
                      else open_backend(path))
                variants.append(Variant(p, p, be, path, f"given by the user: {path}",
                                        onnx_path=path if path.lower().endswith(".onnx") else None))
            else:
                if log:
                    log("converting the model to FP16 (ONNX Runtime's converter) ...")
                out = Path(work) / (Path(model_path).stem + ".fp16.onnx")
                path, kept, built = build_fp16_onnx(model_path, out, keep_fp32_ops,
                                                    keep_fp32_nodes)
                how = ("onnxruntime.transformers.float16.convert_float_to_float16(keep_io_types=True) "
                       f"with its default op block list + Resize{' + ' + ', '.join(keep_fp32_ops) if keep_fp32_ops else ''}"
                       f"{'; nodes kept in FP32: ' + ', '.join(keep_fp32_nodes) if keep_fp32_nodes else ''}"
                       "; run by ONNX Runtime")
                variants.append(Variant(p, p, _ort_backend(path, p, providers, threads), path,
                                        how, onnx_path=path, kept_fp32_nodes=kept,
                                        build_findings=built, built_by_trtcheck=True))
        with ref_backend as be:
            ref_inputs = be.input_specs()
        feeds, info = prepare_samples(ref_inputs, shapes, sample_count, seed, array_sets, values)
        reference = Variant("fp32", "fp32", ref_backend, model_path, "the FP32 model as given")
        settings = CompareSettings(
            tolerance_overrides=tolerance_overrides, bench_rule=bench_rule, localize=localize,
            reference_onnx=model_path if model_path.lower().endswith(".onnx") else None,
            providers=providers, threads=threads, log=log)
        result = compare_variants(reference, variants, model_path, feeds, info, settings)
    for v in result.variants.values():
        if v.model_path.startswith(tempfile.gettempdir()) and "trtcheck-precision-" in v.model_path:
            v.model_path = f"(temporary) {Path(v.model_path).name}"
    return result


def precision_section_for_report(model_path: str, run_options: Any,
                                 precisions: Sequence[str] = ("fp16",),
                                 sample_count: int = 4,
                                 log: Callable[[str], None] | None = None) -> PrecisionResult:
    """The precision comparison for ``trtcheck report --precision fp16``.

    Args:
        model_path: the FP32 ONNX model being reported on.
        run_options: the report's :class:`~trtcheck.measure.bench.runner.RunOptions` (shapes,
            input arrays and values, seed, providers, threads, stopping rule; the rule
            also measures latency per precision).
        precisions: precisions to compare.
        sample_count: random samples when no input arrays are given.
        log: progress callback.

    Returns:
        the :class:`PrecisionResult` to put into ``Results.precision``.

    Raises:
        InputError, EnvironmentProblem: see :func:`compare_onnx_precisions`.
    """
    shapes = dict(run_options.shapes or {})
    if run_options.batch_sizes:
        # one execution per sample at the smallest swept batch
        b = min(run_options.batch_sizes)
        shapes = {k: [b, *v[1:]] for k, v in shapes.items()}
    arrays = run_options.arrays
    return compare_onnx_precisions(
        model_path, precisions, shapes=shapes,
        array_sets=[(run_options.arrays_source, arrays)] if arrays else None,
        values=run_options.values,
        sample_count=sample_count, seed=run_options.seed if run_options.seed is not None else 0,
        backend_name=run_options.backend_name, providers=run_options.providers,
        threads=run_options.threads, bench_rule=run_options.rule, log=log)
