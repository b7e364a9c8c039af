"""Records of a precision comparison: reduced-precision variants against an FP32 reference.

Gate paths resolve over these models by plain attribute / key names, e.g.
``precision.passed``, ``precision.variants.fp16.passed``,
``precision.variants.fp16.min_cosine_similarity``,
``precision.variants.fp16.outputs.output.max_abs_error``,
``precision.variants.fp16.latency.speedup_vs_reference``.
``variants`` is keyed by variant label (the precision name, e.g. ``"fp16"``) and
``outputs`` by output tensor name.

Error definitions (computed by :mod:`trtcheck.measure.precision.precision`, in float64, over all
samples together): ``d = |candidate - reference|``; relative error ``d / |reference|``
over elements with ``|reference| > 0`` (Polygraphy instead adds 2.2e-16 to zeros, which
makes its max relative error explode on ReLU outputs); an element is *outside
tolerance* when ``d > atol`` **and** ``d > rtol * |reference|`` (Polygraphy's
``elemwise`` rule: either tolerance suffices), or when either value is NaN/Inf.
"""

from __future__ import annotations

from trtcheck.results.base import Record
from trtcheck.results.bench import BackendInfo, BenchRun
from trtcheck.results.stats import Finding


class PrecisionTolerance(Record):
    """The bounds a variant of one precision is judged by.

    Attributes:
        precision: ``"fp16"``, ``"bf16"``, ``"int8"``, ``"fp8"`` (or another label).
        atol: absolute tolerance per element, in the output's units (>= 0).
        rtol: relative tolerance per element, a ratio of ``|reference|`` (>= 0).
        max_outside_fraction: largest share of elements (0..1) allowed outside
            ``atol``/``rtol`` per output.
        min_cosine_similarity: smallest cosine similarity (-1..1) allowed per output.
        max_rel_l2_error: largest relative L2 error ``||c - r|| / ||r||`` allowed per
            output (>= 0); the magnitude counterpart of the cosine bound.
        min_top1_agreement: smallest top-1 agreement (0..1) for classifier-like outputs,
            or ``None`` (recorded, not judged).
        source: where the defaults come from (one sentence), or ``"user"`` for overrides.
    """

    precision: str
    atol: float
    rtol: float
    max_outside_fraction: float
    min_cosine_similarity: float
    max_rel_l2_error: float
    min_top1_agreement: float | None = None
    source: str


class OutputComparison(Record):
    """Accuracy of one output of one variant against the FP32 reference, all samples pooled.

    Attributes:
        name: output tensor name.
        shape: shape of one sample's output (reference), e.g. ``[1, 1000]``.
        reference_dtype, candidate_dtype: dtypes as returned by the runtimes.
        element_count: elements compared (all samples).
        reference_max_abs: largest ``|reference|`` (scale of the output, same units).
        max_abs_error, mean_abs_error, p99_abs_error: absolute error statistics, output units.
            An element that is NaN/Inf on one side only (or NaN against Inf, or infinities
            of opposite sign) has an infinite error, so these are ``inf`` whenever the
            candidate has NaN/Inf where the reference is finite; never 0.
        max_rel_error, mean_rel_error: relative error statistics (ratios) over elements
            with a non-zero reference, plus the mismatched NaN/Inf elements (``inf``);
            ``None`` when every reference element is zero and nothing mismatches.
        cosine_similarity: of the flattened outputs (1.0 = same direction), over finite
            elements; ``None`` when either side is all zeros; NaN (undefined, fails every
            bound) when NaN/Inf elements mismatch.
        rel_l2_error: ``||candidate - reference||_2 / ||reference||_2`` over finite
            elements (a ratio; catches scale errors cosine cannot see); ``None`` when the
            reference is all zeros; ``inf`` when NaN/Inf elements mismatch.
        outside_tolerance_count, outside_tolerance_fraction: elements outside tolerance.
        candidate_nan_count, candidate_inf_count: non-finite elements in the candidate.
        reference_nan_count, reference_inf_count: non-finite elements in the reference.
        top1_agreement: for classifier-like outputs (2-D ``[N, C]``, ``C >= 2``), share of
            rows whose arg-max class is the same; ``None`` otherwise.
        top5_agreement: share of rows whose top-5 class sets are equal (order ignored);
            ``None`` unless classifier-like with ``C >= 5``.
        rows_compared: rows behind the top-k agreements (samples x batch).
        polygraphy_elemwise_passed: Polygraphy ``CompareFunc.simple`` verdict
            (``check_error_stat="elemwise"``, the same atol/rtol) over every sample: no
            element outside tolerance at all.
        rounding_floor_max_abs_error: max ``|reference - reference rounded to the variant's
            precision|``, output units: the error of merely storing the FP32 output in
            FP16/BF16, the fair baseline no output produced in that precision can beat
            (``max_abs_error`` of a few times this is healthy); ``None`` for INT8/FP8.
        passed: this output's verdict under the variant's :class:`PrecisionTolerance`.
        failures: why it failed (one sentence each with the numbers), empty when passed.
        not_judged: metrics whose number is shown but did not judge this output, each
            with why (``{"cosine_similarity": "not judged: every |ref| <= atol 0.01 ..."}``).
        required_atol: the smallest ``atol`` (at the same ``rtol`` and allowed share
            outside) with which the elementwise rule would pass, output units: the
            tolerance this output needs, shown beside a failure.
    """

    name: str
    shape: list[int]
    reference_dtype: str
    candidate_dtype: str
    element_count: int
    reference_max_abs: float
    max_abs_error: float
    mean_abs_error: float
    p99_abs_error: float
    max_rel_error: float | None = None
    mean_rel_error: float | None = None
    cosine_similarity: float | None = None
    rel_l2_error: float | None = None
    outside_tolerance_count: int
    outside_tolerance_fraction: float
    candidate_nan_count: int = 0
    candidate_inf_count: int = 0
    reference_nan_count: int = 0
    reference_inf_count: int = 0
    top1_agreement: float | None = None
    top5_agreement: float | None = None
    rows_compared: int | None = None
    polygraphy_elemwise_passed: bool | None = None
    rounding_floor_max_abs_error: float | None = None
    passed: bool
    failures: list[str] = []
    not_judged: dict[str, str] = {}
    required_atol: float | None = None


class LayerError(Record):
    """One intermediate tensor of a failing variant compared with the FP32 reference.

    Attributes:
        index: position of the producing node in the reference graph (topological order).
        node, op_type: producing node in the reference ONNX graph.
        tensor: tensor name (the same in both graphs; the FP16 converter keeps names).
        element_count, max_abs_error, outside_tolerance_fraction, cosine_similarity,
            rel_l2_error: as in :class:`OutputComparison`.
        reference_max_abs: largest ``|x|`` in the FP32 reference.
        range_rel_error: ``max_abs_error / reference_max_abs`` (error relative to the
            tensor's range, a ratio; recorded, not judged).
        candidate_nonfinite_count: NaN/Inf elements in the candidate where the reference
            is finite.
    """

    index: int
    node: str
    op_type: str
    tensor: str
    element_count: int
    reference_max_abs: float
    max_abs_error: float
    range_rel_error: float
    outside_tolerance_fraction: float
    cosine_similarity: float | None = None
    rel_l2_error: float | None = None
    candidate_nonfinite_count: int = 0


class RangeOverflow(Record):
    """An FP32 activation that leaves a precision's finite range.

    Attributes:
        index: node position in the reference graph (topological order).
        node, op_type, tensor: where.
        reference_max_abs: largest ``|x|`` of the FP32 activation.
        limit_abs: the precision's largest finite value (65504 for FP16, IEEE 754 binary16).
        overflow_count: elements with ``|x| > limit_abs``.
        element_count: elements checked.
    """

    index: int
    node: str
    op_type: str
    tensor: str
    reference_max_abs: float
    limit_abs: float
    overflow_count: int
    element_count: int


class Localization(Record):
    """Where the error of a variant starts.

    Attributes:
        method: how it was found, e.g. ``"onnxruntime: all node outputs marked in both
            graphs"``.
        tensors_compared: intermediate tensors compared (0 when only the range check ran).
        first_failing: up to 5 first tensors (topological order) where the computation
            breaks: new NaN/Inf, cosine similarity below the variant's minimum or relative
            L2 error above its maximum (see
            :func:`trtcheck.measure.precision.localize.compare_layers`).
        first_nonfinite: up to 5 first tensors where the candidate has NaN/Inf and the
            reference does not.
        range_overflows: up to 10 first FP32 activations beyond the precision's range
            (needs only the FP32 run).
        range_overflow_total: number of tensors beyond the range.
        notes: limits of what could be checked (one sentence each).
    """

    method: str
    tensors_compared: int = 0
    first_failing: list[LayerError] = []
    first_nonfinite: list[LayerError] = []
    range_overflows: list[RangeOverflow] = []
    range_overflow_total: int = 0
    notes: list[str] = []


class PrecisionLatency(Record):
    """Latency of one variant, measured with :func:`trtcheck.measure.bench.bench.run_bench`.

    Attributes:
        median_ms, p99_ms: per-execution latency, ms.
        throughput_samples_per_s: samples per second at the measured batch.
        batch_size: samples per execution.
        speedup_vs_reference: ``reference median_ms / this median_ms`` (> 1 is faster);
            ``None`` for the reference itself, when it was not measured, or when the
            backend cannot measure it (``speedup_not_measurable``).
        speedup_interval: ``[low, high]``, a 95% interval of the speed-up (the two
            medians' 95% intervals divided crosswise: ``ref_low / this_high`` to
            ``ref_high / this_low``), or ``None``.
        speedup_not_measurable: why this backend cannot measure the precision's speed-up
            (it has no kernels for it: ONNX Runtime's CPU provider runs FP16 graphs with
            FP32 kernels), or ``None``.
        bench: the full bench run (raw samples and statistics).
    """

    median_ms: float
    p99_ms: float
    throughput_samples_per_s: float
    batch_size: int
    speedup_vs_reference: float | None = None
    speedup_interval: list[float] | None = None
    speedup_not_measurable: str | None = None
    bench: BenchRun


class VariantResult(Record):
    """One reduced-precision variant judged against the FP32 reference.

    Attributes:
        label: key in :attr:`PrecisionResult.variants` (usually the precision).
        precision: ``"fp16"`` ...
        backend: runtime that executed it.
        model_path: what ran (a converted ONNX in a temporary folder, or an engine file).
        built_by: how the variant was built, one sentence.
        kept_fp32_nodes: nodes the builder kept in FP32 (converter block lists).
        tolerance: the bounds used.
        outputs: per-output comparison, keyed by output name.
        min_cosine_similarity, max_rel_l2_error, max_abs_error,
            max_outside_tolerance_fraction, nonfinite_count, min_top1_agreement: worst
            values over outputs (flat gate paths).
        passed: every output passed and no finding of severity ``"error"``.
        findings: NaN/Inf, range overflows, failed outputs (codes ``precision-nonfinite``,
            ``fp16-range-overflow``, ``precision-out-of-tolerance``).
        localization: where the error starts (when computed), or ``None``.
        latency: when measured (``--bench``), or ``None``.
    """

    label: str
    precision: str
    backend: BackendInfo
    model_path: str
    built_by: str
    kept_fp32_nodes: list[str] = []
    tolerance: PrecisionTolerance
    outputs: dict[str, OutputComparison]
    min_cosine_similarity: float | None = None
    max_rel_l2_error: float | None = None
    max_abs_error: float
    max_outside_tolerance_fraction: float
    nonfinite_count: int
    min_top1_agreement: float | None = None
    passed: bool
    findings: list[Finding] = []
    localization: Localization | None = None
    latency: PrecisionLatency | None = None


class PrecisionInputs(Record):
    """The inputs every variant ran on (identical for reference and candidates).

    Attributes:
        source: ``"random-uniform"`` (seeded), ``"npz"`` (one file) or ``"npz-dir"``.
        sample_count: executions compared per variant.
        seed: first seed of generated data (sample ``i`` uses ``seed + i``), or ``None``.
        shapes: concrete input shapes of one execution.
        files: the ``.npz`` files used, in order (empty for random data).
    """

    source: str
    sample_count: int
    seed: int | None = None
    shapes: dict[str, list[int]] = {}
    files: list[str] = []


class PrecisionResult(Record):
    """A precision comparison: the FP32 reference and each variant against it.

    Attributes:
        model_path: the FP32 model.
        reference: backend of the reference (always FP32; ONNX Runtime on CPU is an FP32
            reference, never an FP16 one).
        reference_latency: when measured.
        reference_repeat_max_abs_error: max ``|ref run 1 - ref run 2|`` on the first
            sample: the run-to-run noise floor of the reference itself (0.0 for a
            deterministic runtime), or ``None`` when not checked.
        inputs: what every variant ran on.
        variants: keyed by label (``"fp16"`` ...).
        passed: every variant passed.
        notes: caveats of this comparison (one sentence each).
    """

    model_path: str
    reference: BackendInfo
    reference_latency: PrecisionLatency | None = None
    reference_repeat_max_abs_error: float | None = None
    inputs: PrecisionInputs
    variants: dict[str, VariantResult] = {}
    passed: bool
    notes: list[str] = []
