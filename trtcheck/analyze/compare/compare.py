"""Side-by-side comparison of two results files (``trtcheck compare a.json b.json``).

Builds a :class:`Comparison` view-model from two :class:`trtcheck.results.Results`:
environments (which fields differ, whether the pair is comparable by
:meth:`~trtcheck.results.Environment.comparable_key`), model inspection differences, and
for every pair of bench runs (matched by label, the rest by position) the metric deltas
per batch size with bootstrap intervals of the ratio B/A
(:func:`trtcheck.analyze.gate.regression.ratio_interval`). Pure: no I/O, no printing.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel

from trtcheck.analyze.compare.compare_imported import compare_imported
from trtcheck.analyze.gate import regression as R
from trtcheck.analyze.gate.metricpath import HIGHER, LOWER, infer_direction
from trtcheck.analyze.gate.metricpath import MetricPath, parse_path
from trtcheck.analyze.gate.metricpath import evaluate_path
from trtcheck.units import metric_unit, us_to_ms

#: metrics shown per batch size: (name on BatchResult/stats, statistic of the raw samples)
BATCH_METRICS: tuple[str, ...] = ("median_ms", "p99_ms", "throughput_samples_per_s")

#: accuracy metrics of a precision variant shown A vs B: the worst-over-outputs fields of
#: :class:`trtcheck.results.precision.VariantResult`, with the direction that is better
PRECISION_METRICS: tuple[tuple[str, str], ...] = (
    ("max_abs_error", LOWER),
    ("max_outside_tolerance_fraction", LOWER),
    ("min_cosine_similarity", HIGHER),
    ("max_rel_l2_error", LOWER),
    ("nonfinite_count", LOWER),
    ("min_top1_agreement", HIGHER),
)


class FieldDiff(BaseModel):
    """One field of two records: values as text and whether they differ."""

    field: str
    a: str
    b: str
    differs: bool


class MetricDelta(BaseModel):
    """One metric of one batch size in runs A and B.

    Attributes:
        metric: name (``p99_ms``); unit: display unit; direction: lower/higher is better.
        a, b: values; ratio: ``b / a``; low, high: bootstrap interval of the ratio
            (``None`` without raw samples); confidence: its level.
        change: ``better``, ``worse`` (interval entirely on one side of 1) or
            ``no clear change``.
    """

    metric: str
    unit: str
    direction: str
    a: float
    b: float
    ratio: float | None
    low: float | None = None
    high: float | None = None
    confidence: float | None = None
    change: str


class BatchComparison(BaseModel):
    """Deltas at one batch size; ``samples_a``/``samples_b`` are the sample counts."""

    batch_size: int
    samples_a: int
    samples_b: int
    metrics: list[MetricDelta]


class RunComparison(BaseModel):
    """A pair of bench runs and their per-batch deltas."""

    label_a: str
    label_b: str
    matched_by: str
    backend: list[FieldDiff]
    batches: list[BatchComparison]
    only_in_a: list[int] = []
    only_in_b: list[int] = []


class LayerDelta(BaseModel):
    """One engine layer matched between A and B (times from per-layer profiles, ms).

    ``matched_by`` is ``name`` (identical names), ``similar-name`` (difflib ratio
    >= 0.8 among the layers left over, same layer type) or ``order-and-type`` (the rest,
    aligned by execution order on layer type and output dims, data-movement layers
    left out, e.g. a QAT graph whose nodes were renumbered).
    """

    name_a: str
    name_b: str
    layer_type: str | None = None
    precision_a: str | None = None
    precision_b: str | None = None
    time_a_ms: float | None = None
    time_b_ms: float | None = None
    delta_ms: float | None = None
    ratio: float | None = None
    matched_by: str


class LayerComparison(BaseModel):
    """Layer-level differences of two engines.

    Attributes:
        layers_a, layers_b: layer counts; matched: matched pairs (largest time change
        first); only_in_a / only_in_b: names without a partner; sum_a_ms / sum_b_ms:
        summed per-layer times of each engine (``None`` without profiles);
        precision_mix_a / _b: layers per precision.
    """

    layers_a: int
    layers_b: int
    matched: list[LayerDelta]
    only_in_a: list[str] = []
    only_in_b: list[str] = []
    sum_a_ms: float | None = None
    sum_b_ms: float | None = None
    precision_mix_a: dict[str, int] = {}
    precision_mix_b: dict[str, int] = {}


class ServeConfigDelta(BaseModel):
    """One serving configuration (load, window, max batch) measured in both files.

    Values are the configurations' headline medians over repeats (``trtcheck serve``);
    ratios are B/A. No interval: a serving run stores too few repeats per configuration
    for one, so these are point comparisons (``gate`` treats them as inconclusive past a
    limit). Imported measurements (perf_analyzer load levels, Triton statistics) are rows
    too (:mod:`trtcheck.analyze.compare.compare_imported`); a value the source lacks is ``None``.
    """

    config: str
    qps_a: float | None = None
    qps_b: float | None = None
    batch_a: float | None = None
    batch_b: float | None = None
    p50_a_ms: float | None = None
    p50_b_ms: float | None = None
    p99_a_ms: float | None = None
    p99_b_ms: float | None = None


class PrecisionMetricDelta(BaseModel):
    """One accuracy metric of one precision variant in files A and B.

    Attributes:
        metric: field of :class:`~trtcheck.results.precision.VariantResult`
            (``max_abs_error`` ...); direction: ``lower``/``higher`` is better.
        a, b: values (``None`` when that file does not hold it, e.g. no classifier output
            for ``min_top1_agreement``); difference: ``b - a`` when both are present.
            No interval and no verdict: the values are deterministic for given inputs and
            tolerances, and judging them is the gate's job.
    """

    metric: str
    direction: str
    a: float | None = None
    b: float | None = None
    difference: float | None = None


class PrecisionVariantDelta(BaseModel):
    """One precision variant (matched by label, e.g. ``fp16``) in both files.

    Attributes:
        variant: the label; passed_a, passed_b: each file's verdict against its own
            tolerances; setup: backend, model and tolerances side by side;
        metrics: :data:`PRECISION_METRICS` A vs B;
        speedup_a, speedup_b: ``speedup_vs_reference`` when latency was measured.
    """

    variant: str
    passed_a: bool
    passed_b: bool
    setup: list[FieldDiff] = []
    metrics: list[PrecisionMetricDelta] = []
    speedup_a: float | None = None
    speedup_b: float | None = None


class Comparison(BaseModel):
    """Everything ``trtcheck compare`` shows.

    Attributes:
        name_a, name_b: file names.
        comparable: environments agree on :meth:`Environment.comparable_key`.
        environment: environment fields side by side.
        inspection: model facts side by side (empty when neither has an inspection).
        runs: matched run pairs; runs_only_in_a / _b: labels without a partner.
        layers_note: why layer-level deltas are (not) shown.
        method: how intervals were computed.
        serve: serving configurations in both files; serve_only_in_a / _b: the rest.
        precision_setup: the precision comparisons' reference, inputs and verdict side
            by side (empty unless both files have a precision section); precision:
            variants in both files; precision_only_in_a / _b: labels without a partner.
        different_models: why A and B are different models (their graph inputs or
            outputs differ by name), or ``None``; then no latency change is called
            better or worse (a ratio of two models' latencies is no regression).
        holds_a, holds_b: what each file holds, in words (``a serving run (4
            configurations: ...)``, ``a tune search (measured pick W=1 ms B=2 I=3 at
            open:478)``).
        shares_nothing: neither file holds a section that compare can pair with one of
            the other's (a bench-only file and a tune document): ``trtcheck compare``
            refuses such a pair, exit 2.
        nothing_paired: one line when no row of any section was paired (what each file
            holds and what compare pairs), else ``None``; shown in every format.
    """

    name_a: str
    name_b: str
    comparable: bool
    environment: list[FieldDiff]
    inspection: list[FieldDiff] = []
    runs: list[RunComparison] = []
    runs_only_in_a: list[str] = []
    runs_only_in_b: list[str] = []
    layers: LayerComparison | None = None
    layers_note: str
    method: str
    serve: list[ServeConfigDelta] = []
    serve_only_in_a: list[str] = []
    serve_only_in_b: list[str] = []
    precision_setup: list[FieldDiff] = []
    precision: list[PrecisionVariantDelta] = []
    precision_only_in_a: list[str] = []
    precision_only_in_b: list[str] = []
    different_models: str | None = None
    holds_a: list[str] = []
    holds_b: list[str] = []
    shares_nothing: bool = False
    nothing_paired: str | None = None


#: what compare pairs, in words (the nothing-paired note and the nothing-to-compare hint)
PAIRS = ("compare pairs bench runs (by label), model inspections, engine layers, serving "
         "runs (configurations by load, window, max batch and instances), two tune searches "
         "(by pick), a tune pick with a serving run (the configuration of the pick's window, "
         "max batch and instances), precision sections (variants by label) and imported "
         "measurements (perf_analyzer levels, Triton statistics)")


def _io_names(res: Any) -> tuple[frozenset[str], frozenset[str]] | None:
    """(input names, output names) of the model a results file describes: from the ONNX
    inspection, else the engine's I/O tensors whose mode is known; ``None`` when
    neither is there."""
    if res.inspection is not None:
        return (frozenset(t.name for t in res.inspection.inputs),
                frozenset(t.name for t in res.inspection.outputs))
    eng = getattr(res, "engine", None)
    if eng is not None and eng.io_tensors and all(t.mode for t in eng.io_tensors):
        return (frozenset(t.name for t in eng.io_tensors if t.mode == "input"),
                frozenset(t.name for t in eng.io_tensors if t.mode == "output"))
    return None


def different_models(a: Any, b: Any) -> str | None:
    """Why results ``a`` and ``b`` describe different models, or ``None`` (same I/O, or
    not known). An FP16 copy or a rebuilt engine of one model keeps its input and output
    names; two different networks do not."""
    ia, ib = _io_names(a), _io_names(b)
    if ia is None or ib is None or ia == ib:
        return None
    parts = []
    for what, x, y in (("inputs", ia[0], ib[0]), ("outputs", ia[1], ib[1])):
        if x != y:
            parts.append(f"{what} {sorted(x)[:4]} vs {sorted(y)[:4]}")
    return "different models: " + "; ".join(parts)


def _s(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, list):
        return ", ".join(_s(x) for x in v) or "-"
    if isinstance(v, dict):
        return ", ".join(f"{k}={_s(x)}" for k, x in sorted(v.items())) or "-"
    return str(v)


def _diff(fields: list[tuple[str, Any, Any]]) -> list[FieldDiff]:
    return [FieldDiff(field=f, a=_s(a), b=_s(b), differs=_s(a) != _s(b)) for f, a, b in fields]


def _env_rows(a: Any, b: Any) -> list[FieldDiff]:
    ea, eb = a.environment, b.environment
    rows: list[tuple[str, Any, Any]] = [
        ("hostname", ea.hostname, eb.hostname),
        ("cpu_model", ea.cpu_model, eb.cpu_model),
        ("cpu_count", ea.cpu_count, eb.cpu_count),
        ("gpus", [g.name for g in ea.gpus], [g.name for g in eb.gpus]),
        ("driver", ea.cuda_driver_version, eb.cuda_driver_version),
        ("os", ea.os, eb.os),
        ("python", ea.python_version, eb.python_version),
        ("trtcheck", ea.trtcheck_version, eb.trtcheck_version),
    ]
    for pkg in sorted(set(ea.packages) | set(eb.packages)):
        rows.append((pkg, ea.packages.get(pkg), eb.packages.get(pkg)))
    rows.append(("git_commit", ea.git_commit, eb.git_commit))
    return _diff(rows)


def _inspection_rows(a: Any, b: Any) -> list[FieldDiff]:
    ia, ib = a.inspection, b.inspection
    if ia is None and ib is None:
        return []
    g = (lambda i, f: getattr(i, f) if i is not None else None)
    rows = [(f, g(ia, f), g(ib, f)) for f in ("path", "node_count", "parameter_count",
                                               "parameter_bytes", "file_size_bytes")]
    sha = (lambda i: i.sha256[:16] if i is not None else None)
    rows.insert(1, ("sha256 (first 16)", sha(ia), sha(ib)))
    ops = sorted(set(ia.op_histogram if ia else {}) | set(ib.op_histogram if ib else {}))
    for op in ops:
        ca = ia.op_histogram.get(op, 0) if ia else None
        cb = ib.op_histogram.get(op, 0) if ib else None
        if ca != cb:
            rows.append((f"ops.{op}", ca, cb))
    return _diff(rows)


def _pair_runs(a: Any, b: Any) -> tuple[list[tuple[Any, Any, str]], list[str], list[str]]:
    by_label_b = {r.label: r for r in b.bench}
    pairs: list[tuple[Any, Any, str]] = []
    left_a = []
    used_b = set()
    for ra in a.bench:
        rb = by_label_b.get(ra.label)
        if rb is not None and rb.label not in used_b:
            pairs.append((ra, rb, "label"))
            used_b.add(rb.label)
        else:
            left_a.append(ra)
    left_b = [r for r in b.bench if r.label not in used_b]
    for ra, rb in zip(left_a, left_b):
        pairs.append((ra, rb, "position"))
    n = min(len(left_a), len(left_b))
    return pairs, [r.label for r in left_a[n:]], [r.label for r in left_b[n:]]


def _delta(name: str, ba: Any, bb: Any, confidence: float, resamples: int, seed: int,
           run_to_run_cv: float) -> MetricDelta:
    path = parse_path(f"x.{name}")
    stat_a = evaluate_path(MetricPath(name, None, path.segments[1:]), ba)[0]
    stat_b = evaluate_path(MetricPath(name, None, path.segments[1:]), bb)[0]
    a, b = float(stat_a.value), float(stat_b.value)
    direction = infer_direction(name) or LOWER
    unit = metric_unit(name)
    ratio = b / a if a > 0 and math.isfinite(a) and math.isfinite(b) else None
    if ratio is not None and not math.isfinite(ratio):
        ratio = None
    low = high = conf = None
    if ratio is not None and stat_a.samples is not None and stat_b.samples is not None \
            and stat_a.stat is not None and stat_b.stat is not None \
            and stat_a.samples.size >= 2 and stat_b.samples.size >= 2:
        try:
            ci = R.ratio_interval(stat_a.samples, stat_b.samples, stat_b.stat,
                                  confidence=confidence, resamples=resamples,
                                  seed=R.interval_seed(seed, f"batch[{ba.batch_size}].{name}"),
                                  run_to_run_cv=run_to_run_cv)
            low, high, conf = min(ci.low, ratio), max(ci.high, ratio), confidence
        except ValueError:
            pass
    change = "no clear change"
    if low is not None and high is not None:
        if high < 1.0:
            change = "better" if direction == LOWER else "worse"
        elif low > 1.0:
            change = "worse" if direction == LOWER else "better"
    return MetricDelta(metric=name, unit=unit.name or "", direction=direction, a=a, b=b,
                       ratio=ratio, low=low, high=high, confidence=conf, change=change)


def _not_a_change(d: MetricDelta, models_differ: str | None) -> MetricDelta:
    """``d`` without interval and verdict when the two files are different models."""
    if models_differ is None:
        return d
    return d.model_copy(update={"low": None, "high": None, "confidence": None,
                                "ratio": None, "change": "different models"})


def _select_run(res: Any, label: str | None, which: str) -> Any:
    if label is None:
        return res
    from trtcheck.errors import InputError
    for r in res.bench:
        if r.label == label:
            return res.model_copy(update={"bench": [r]})
    present = ", ".join(r.label for r in res.bench) or "none"
    raise InputError(f"no bench run labelled {label!r} in {which} (present: {present})",
                     "pick one of the labels present")


def compare(a: Any, b: Any, name_a: str = "A", name_b: str = "B",
            confidence: float = R.DEFAULT_CONFIDENCE, resamples: int = R.DEFAULT_RESAMPLES,
            seed: int = 0, run_to_run_cv: float = R.DEFAULT_RUN_TO_RUN_CV,
            run_a: str | None = None, run_b: str | None = None) -> Comparison:
    """Compare results ``a`` (reference) and ``b``; ratios are ``b / a``.

    Args:
        a, b: :class:`trtcheck.results.Results`.
        name_a, name_b: names shown for them.
        confidence, resamples, seed, run_to_run_cv: see
            :func:`trtcheck.analyze.gate.regression.ratio_interval`.
        run_a, run_b: compare only the bench run with this label on that side (two runs
            of one file can be compared: ``compare(r, r, run_a="fp32", run_b="fp16")``).

    Returns:
        :class:`Comparison`.

    Raises:
        InputError: ``run_a``/``run_b`` names a label that is not there.
    """
    from trtcheck.analyze.gate import environment_differences
    a = _select_run(a, run_a, name_a)
    b = _select_run(b, run_b, name_b)
    models_differ = different_models(a, b)
    runs: list[RunComparison] = []
    pairs, only_a, only_b = _pair_runs(a, b)
    for ra, rb, how in pairs:
        sizes_a = {x.batch_size for x in ra.batches}
        sizes_b = {x.batch_size for x in rb.batches}
        batches = []
        for bs in sorted(sizes_a & sizes_b):
            ba, bb = ra.batch(bs), rb.batch(bs)
            batches.append(BatchComparison(
                batch_size=bs, samples_a=ba.stats.count, samples_b=bb.stats.count,
                metrics=[_not_a_change(_delta(m, ba, bb, confidence, resamples, seed,
                                              run_to_run_cv), models_differ)
                         for m in BATCH_METRICS]))
        backend = _diff([("backend", ra.backend.name, rb.backend.name),
                         ("version", ra.backend.version, rb.backend.version),
                         ("device", ra.backend.device, rb.backend.device),
                         ("precision", ra.backend.precision, rb.backend.precision),
                         ("providers", ra.backend.providers, rb.backend.providers),
                         ("model", ra.model_path, rb.model_path)])
        runs.append(RunComparison(label_a=ra.label, label_b=rb.label, matched_by=how,
                                  backend=backend, batches=batches,
                                  only_in_a=sorted(sizes_a - sizes_b),
                                  only_in_b=sorted(sizes_b - sizes_a)))
    layers = compare_layers(a, b)
    if layers is None:
        layers_note = ("no layer-level comparison: it needs an engine section in both files "
                       "(trtcheck report of a plan or of a trtexec export folder)")
    elif layers.sum_a_ms is None or layers.sum_b_ms is None:
        layers_note = ("layers matched by name; no per-layer times (profile the engines, "
                       "e.g. trtexec --exportProfile) so no latency deltas")
    else:
        layers_note = ("layers matched by name, then similar name and type, then execution "
                       "order and type; times are "
                       "per-layer profile averages, which run slower than unprofiled "
                       "inference: compare them with each other, not with bench latency")
    serve_rows, serve_a, serve_b = compare_serve(a, b)
    serve_rows += compare_tune(a, b)
    ts_rows, ts_a, ts_b = compare_tune_serve(a, b)
    serve_rows += ts_rows
    serve_a, serve_b = serve_a + ts_a, serve_b + ts_b
    imp_rows, imp_a, imp_b = compare_imported(a, b)
    serve_rows = serve_rows + [ServeConfigDelta(**r) for r in imp_rows]
    serve_a, serve_b = serve_a + imp_a, serve_b + imp_b
    prec_setup, prec_rows, prec_a, prec_b = compare_precision(a, b)
    kinds_a, holds_a = holdings(a)
    kinds_b, holds_b = holdings(b)
    paired = bool(runs or serve_rows or prec_setup or layers is not None
                  or (a.inspection is not None and b.inspection is not None))
    note = None if paired else (f"nothing paired: A holds {and_join(holds_a)}; B holds "
                                f"{and_join(holds_b)}; {PAIRS}")
    return Comparison(name_a=name_a, name_b=name_b,
                      holds_a=holds_a, holds_b=holds_b,
                      shares_nothing=not shared_kinds(kinds_a, kinds_b),
                      nothing_paired=note,
                      serve=serve_rows, serve_only_in_a=serve_a, serve_only_in_b=serve_b,
                      precision_setup=prec_setup, precision=prec_rows,
                      precision_only_in_a=prec_a, precision_only_in_b=prec_b,
                      comparable=not environment_differences(b, a),
                      environment=_env_rows(a, b), inspection=_inspection_rows(a, b),
                      runs=runs, runs_only_in_a=only_a, runs_only_in_b=only_b,
                      layers=layers, layers_note=layers_note,
                      different_models=models_differ,
                      method=(f"ratio B/A with a {confidence:.0%} interval from a circular block "
                              "bootstrap "
                              f"standard error ({resamples} resamples, assumed run-to-run "
                              f"variation {run_to_run_cv:.0%}); 'better'/'worse' only when "
                              "the whole interval is on one side of 1"))


def _serve_label(key: tuple[str, float, int, int | None]) -> str:
    load, window_us, max_batch, instances = key
    return f"{load} W={us_to_ms(window_us):g} ms B={max_batch}" + (
        f" I={instances}" if instances is not None else "")


def _serve_key(c: Any) -> tuple[str, float, int, int | None]:
    """(load, window, max batch, instances): a live sweep's configurations also differ in
    their instance count (``None``: the run's one setting)."""
    return (*c.key, c.instances)


def _pick_label(p: Any) -> str:
    """A tune pick's configuration: ``W=1 ms B=2 I=3``."""
    return f"W={us_to_ms(p.window_us):g} ms B={p.max_batch_size} I={p.instances}"


def _measured_pick(res: Any) -> Any:
    """The tune pick of ``res`` when it was measured, else ``None``."""
    pick = getattr(getattr(res, "tune", None), "pick", None)
    return pick if pick is not None and pick.measured is not None else None


def _pick_load(res: Any) -> Any:
    """The load (:class:`~trtcheck.results.serve.LoadSpec`) of the live run that measured
    the tune pick of ``res``, or ``None`` when that run is not in the document."""
    tune, pick = res.tune, res.tune.pick
    runs = tune.runs
    i = pick.measured.run
    if 0 <= i < len(runs) and runs[i].configs:
        return runs[i].configs[0].load
    return None


def compare_tune(a: Any, b: Any) -> list[ServeConfigDelta]:
    """The measured picks of two ``trtcheck tune`` documents as one row, paired by pick
    (labelled ``tune pick W=.. B=.. I=..``, both configurations named when they
    differ, and the target rates when they differ: two loads, not a change); empty
    unless both picks were measured."""
    pa, pb = _measured_pick(a), _measured_pick(b)
    if pa is None or pb is None:
        return []
    label = _pick_label

    from trtcheck.results.tune import tune_target_difference

    same = (pa.window_us, pa.max_batch_size, pa.instances) == (
        pb.window_us, pb.max_batch_size, pb.instances)
    ma, mb = pa.measured, pb.measured
    why = [] if same else ["different picks"]
    if (loads := tune_target_difference(a, b)) is not None:
        why.append(loads)
    return [ServeConfigDelta(
        config=f"tune pick {label(pa)}" + ("" if same else f" / {label(pb)}")
        + (f" ({', '.join(why)})" if why else ""),
        qps_a=ma.throughput_queries_per_s, qps_b=mb.throughput_queries_per_s,
        batch_a=ma.mean_batch, batch_b=mb.mean_batch, p50_a_ms=ma.p50_ms,
        p50_b_ms=mb.p50_ms, p99_a_ms=ma.p99_ms, p99_b_ms=mb.p99_ms)]


def compare_tune_serve(a: Any, b: Any) -> tuple[list[ServeConfigDelta], list[str], list[str]]:
    """A ``trtcheck tune`` document's measured pick against a serving run of the other
    file (``serve --url``, or the embedded batcher): the serving configurations with the
    pick's window, max batch and instance count (a configuration without its own count
    has its run's), under the load that measured the pick when the serving run has it,
    else under every load of the same kind (open, closed, burst), each a row naming both
    loads (``open:100 / tune pick open:478 W=1 ms B=2 I=3``). A closed or burst load is
    not paired with the pick's open load: their latencies answer different questions.

    Returns:
        ``(rows, labels only in a, labels only in b)``: without a partner the pick is
        listed on its side, and every serving configuration not paired on the other;
        all empty unless exactly one side is a tune document with a measured pick and the
        other holds a serving run.
    """
    if _measured_pick(a) is not None and _measured_pick(b) is None \
            and getattr(b, "serve", None) is not None:
        tune_res, serve_res, tune_is_a = a, b, True
    elif _measured_pick(b) is not None and _measured_pick(a) is None \
            and getattr(a, "serve", None) is not None:
        tune_res, serve_res, tune_is_a = b, a, False
    else:
        return [], [], []
    pick = tune_res.tune.pick
    m = pick.measured
    load = _pick_load(tune_res)
    run = serve_res.serve

    def instances(c: Any) -> int:
        return c.instances if c.instances is not None else run.settings.instances

    same = [c for c in run.configs if (float(c.window_us), c.max_batch_size, instances(c))
            == (float(pick.window_us), pick.max_batch_size, pick.instances)]
    chosen = [c for c in same if load is not None and c.load.label == load.label] or [
        c for c in same if load is not None and c.load.kind == load.kind]
    tune_text = "tune pick" + (f" {load.label}" if load is not None else "")
    rows = []
    for c in chosen:
        x = dict(qps=c.throughput_queries_per_s, batch=c.mean_batch_size, p50=c.p50_ms,
                 p99=c.p99_ms)
        y = dict(qps=m.throughput_queries_per_s, batch=m.mean_batch, p50=m.p50_ms,
                 p99=m.p99_ms)
        va, vb = (y, x) if tune_is_a else (x, y)
        first, second = (tune_text, c.load.label) if tune_is_a else (c.load.label, tune_text)
        rows.append(ServeConfigDelta(
            config=f"{first} / {second} {_pick_label(pick)}", qps_a=va["qps"],
            qps_b=vb["qps"], batch_a=va["batch"], batch_b=vb["batch"], p50_a_ms=va["p50"],
            p50_b_ms=vb["p50"], p99_a_ms=va["p99"], p99_b_ms=vb["p99"]))
    only_tune = [] if rows else [f"{tune_text} {_pick_label(pick)}"]
    paired = {id(c) for c in chosen}
    only_serve = [_serve_label(_serve_key(c)) for c in run.configs if id(c) not in paired]
    return (rows, only_tune, only_serve) if tune_is_a else (rows, only_serve, only_tune)


def _some(labels: list[str], most: int = 4) -> str:
    """``labels`` joined, the first ``most`` of them and how many more."""
    more = len(labels) - most
    return ", ".join(labels[:most]) + (f" and {more} more" if more > 0 else "")


def and_join(words: list[str]) -> str:
    """``a, b and c``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def holdings(res: Any) -> tuple[set[str], list[str]]:
    """What a results document holds that compare can pair: ``(kinds, words)``.

    ``kinds`` are ``bench``, ``inspection``, ``engine`` (with layers), ``serve``,
    ``tune`` (with a measured pick), ``precision``, ``imported``; ``words`` name every
    section the document holds, paired or not, for the nothing-paired note.
    """
    kinds: set[str] = set()
    words: list[str] = []
    if res.bench:
        kinds.add("bench")
        words.append(f"bench runs ({_some([r.label for r in res.bench])})")
    if res.inspection is not None:
        kinds.add("inspection")
        words.append("a model inspection")
    eng = getattr(res, "engine", None)
    if eng is not None:
        layers = list(getattr(eng, "layers", None) or [])
        if layers:
            kinds.add("engine")
        words.append(f"an engine ({len(layers)} layers)" if layers
                     else "an engine without layers")
    if res.serve is not None:
        kinds.add("serve")
        labels = [_serve_label(_serve_key(c)) for c in res.serve.configs]
        words.append(f"a serving run ({len(labels)} configuration(s): {_some(labels)})"
                     if labels else "a serving run without configurations")
    if res.tune is not None:
        pick = _measured_pick(res)
        if pick is not None:
            kinds.add("tune")
            load = _pick_load(res)
            words.append(f"a tune search (measured pick {_pick_label(pick)}"
                         + (f" at {load.label})" if load is not None else ")"))
        else:
            words.append("a tune search without a measured pick")
    if res.precision is not None:
        kinds.add("precision")
        words.append(f"a precision section ({_some(list(res.precision.variants))})")
    if res.imported is not None:
        kinds.add("imported")
        words.append(f"imported measurements ({len(res.imported.levels)} level(s), "
                     f"{len(res.imported.models)} model(s))")
    if res.advice is not None:
        words.append("advice (not compared)")
    if not words:
        words.append("nothing measured")
    return kinds, words


def shared_kinds(kinds_a: set[str], kinds_b: set[str]) -> set[str]:
    """The kinds of :func:`holdings` that compare pairs between two documents: those both
    hold, and ``tune-serve`` when one holds a measured tune pick and the other (no tune
    pick of its own) a serving run."""
    shared = kinds_a & kinds_b
    for x, y in ((kinds_a, kinds_b), (kinds_b, kinds_a)):
        if "tune" in x and "tune" not in y and "serve" in y:
            shared.add("tune-serve")
    return shared


def compare_serve(a: Any, b: Any) -> tuple[list[ServeConfigDelta], list[str], list[str]]:
    """Serving configurations of ``a`` and ``b`` matched by (load, window, max batch,
    instances); configurations left over are matched by the load's kind and position
    among the run's loads of that kind (both runs having as many), with both load labels
    named (``open:8.2:poisson:16 / open:8.9:poisson:16 W=0 ms B=8``).

    Returns:
        ``(matched rows, labels only in a, labels only in b)``; empty when either file has
        no serving run.
    """
    sa, sb = getattr(a, "serve", None), getattr(b, "serve", None)
    if sa is None or sb is None:
        return [], [], []
    ca = {_serve_key(c): c for c in sa.configs}
    cb = {_serve_key(c): c for c in sb.configs}

    def row(label: str, x: Any, y: Any) -> ServeConfigDelta:
        return ServeConfigDelta(config=label, qps_a=x.throughput_queries_per_s,
                                qps_b=y.throughput_queries_per_s,
                                batch_a=x.mean_batch_size, batch_b=y.mean_batch_size,
                                p50_a_ms=x.p50_ms, p50_b_ms=y.p50_ms,
                                p99_a_ms=x.p99_ms, p99_b_ms=y.p99_ms)

    rows = [row(_serve_label(k), ca[k], cb[k]) for k in ca if k in cb]
    only_a = [k for k in ca if k not in cb]
    only_b = [k for k in cb if k not in ca]
    # loads set from each run's own measurement (the demo's rates are shares of the
    # measured capacity) differ in their labels: pair the n-th load of a kind with the
    # n-th of the same kind when both runs have as many, and name both labels
    ra, rb = _load_ranks(sa), _load_ranks(sb)
    by_rank_b = {(rb.get(k[0]), *k[1:]): k for k in only_b if rb.get(k[0]) is not None}
    for k in list(only_a):
        kb = by_rank_b.get((ra.get(k[0]), *k[1:])) if ra.get(k[0]) is not None else None
        if kb is None or kb not in only_b:
            continue
        label = f"{k[0]} / {_serve_label(kb)}"
        rows.append(row(label, ca[k], cb[kb]))
        only_a.remove(k)
        only_b.remove(kb)
    return (rows, [_serve_label(k) for k in only_a], [_serve_label(k) for k in only_b])


def _load_ranks(run: Any) -> dict[str, tuple[str, int, int]]:
    """Each load label of a serving run -> (kind, its position among the run's loads of
    that kind, how many the run has), in the run's own order."""
    labels: list[str] = []
    kinds: dict[str, str] = {}
    for c in run.configs:
        if c.load.label not in kinds:
            labels.append(c.load.label)
            kinds[c.load.label] = c.load.kind
    out: dict[str, tuple[str, int, int]] = {}
    for kind in set(kinds.values()):
        same = [lb for lb in labels if kinds[lb] == kind]
        for i, lb in enumerate(same):
            out[lb] = (kind, i, len(same))
    return out


def compare_precision(a: Any, b: Any) -> tuple[list[FieldDiff], list[PrecisionVariantDelta],
                                               list[str], list[str]]:
    """Precision sections of ``a`` and ``b``: variants matched by label (``fp16`` ...).

    Reads ``results.precision`` (:class:`trtcheck.results.precision.PrecisionResult`):
    per variant the worst-over-outputs accuracy metrics (:data:`PRECISION_METRICS`),
    the verdict and, when measured, the speed-up over the FP32 reference.

    Returns:
        ``(setup rows, matched variants, labels only in a, labels only in b)``; all empty
        when either file has no precision section.
    """
    pa, pb = getattr(a, "precision", None), getattr(b, "precision", None)
    if pa is None or pb is None:
        return [], [], [], []
    setup = _diff([
        ("model", pa.model_path, pb.model_path),
        ("reference", f"{pa.reference.name} {pa.reference.version} ({pa.reference.precision})",
         f"{pb.reference.name} {pb.reference.version} ({pb.reference.precision})"),
        ("inputs", pa.inputs.source, pb.inputs.source),
        ("samples", pa.inputs.sample_count, pb.inputs.sample_count),
        ("seed", pa.inputs.seed, pb.inputs.seed),
        ("shapes", {k: "x".join(map(str, v)) for k, v in pa.inputs.shapes.items()},
         {k: "x".join(map(str, v)) for k, v in pb.inputs.shapes.items()}),
        ("passed", pa.passed, pb.passed),
    ])
    rows: list[PrecisionVariantDelta] = []
    for label, va in pa.variants.items():
        vb = pb.variants.get(label)
        if vb is None:
            continue
        metrics = []
        for name, direction in PRECISION_METRICS:
            xa, xb = getattr(va, name, None), getattr(vb, name, None)
            metrics.append(PrecisionMetricDelta(
                metric=name, direction=direction,
                a=None if xa is None else float(xa), b=None if xb is None else float(xb),
                difference=None if xa is None or xb is None else float(xb) - float(xa)))
        tol = (lambda v: f"atol {v.tolerance.atol:g}, rtol {v.tolerance.rtol:g}")
        rows.append(PrecisionVariantDelta(
            variant=label, passed_a=va.passed, passed_b=vb.passed,
            setup=_diff([("backend", f"{va.backend.name} {va.backend.version}",
                          f"{vb.backend.name} {vb.backend.version}"),
                         ("model", va.model_path, vb.model_path),
                         ("built by", va.built_by, vb.built_by),
                         ("tolerance", tol(va), tol(vb))]),
            metrics=metrics,
            speedup_a=va.latency.speedup_vs_reference if va.latency else None,
            speedup_b=vb.latency.speedup_vs_reference if vb.latency else None))
    return (setup, rows, [k for k in pa.variants if k not in pb.variants],
            [k for k in pb.variants if k not in pa.variants])


_DATA_MOVEMENT = ("Reformat", "NoOp", None)


def _signature(layer: Any) -> str:
    """Layer type and first output's dims: what stays the same when a graph is renumbered."""
    outs = getattr(layer, "outputs", None) or []
    dims = tuple(getattr(outs[0], "dims", ()) or ()) if outs else ()
    return f"{layer.layer_type}{dims}"


def compare_layers(a: Any, b: Any) -> LayerComparison | None:
    """Match the engine layers of ``a`` and ``b`` and give their time deltas.

    Reads ``results.engine.layers`` (fields ``name``, ``layer_type``, ``precision``,
    ``avg_time_ms``) when both files have an engine section with layers; returns
    ``None`` otherwise. Layers are matched by identical name first, then greedily by
    the most similar remaining name of the same layer type (difflib ratio >= 0.8),
    since precision changes rename fused layers only slightly, and the rest by aligning
    the two execution orders on layer type (longest matching blocks).
    """
    import difflib
    ea, eb = getattr(a, "engine", None), getattr(b, "engine", None)
    la = list(getattr(ea, "layers", None) or [])
    lb = list(getattr(eb, "layers", None) or [])
    if not la or not lb:
        return None
    by_name_b: dict[str, list[Any]] = {}
    for layer in lb:
        by_name_b.setdefault(layer.name, []).append(layer)
    pairs: list[tuple[Any, Any, str]] = []
    rest_a = []
    for layer in la:
        cands = by_name_b.get(layer.name)
        if cands:
            pairs.append((layer, cands.pop(0), "name"))
        else:
            rest_a.append(layer)
    rest_b = [x for v in by_name_b.values() for x in v]
    still_a = []
    for layer in rest_a:
        best, best_r = None, 0.8
        for cand in rest_b:
            if cand.layer_type != layer.layer_type:
                continue
            r = difflib.SequenceMatcher(None, layer.name, cand.name).ratio()
            if r >= best_r:
                best, best_r = cand, r
        if best is None:
            still_a.append(layer)
        else:
            rest_b.remove(best)
            pairs.append((layer, best, "similar-name"))
    # what is left (e.g. QAT graphs renumber every node): align the two execution orders
    # by layer type (difflib's longest matching blocks) and pair within matching runs
    ids_b = {id(y) for y in rest_b}
    ids_a = {id(x) for x in still_a}
    order_b = [x for x in lb if id(x) in ids_b and x.layer_type not in _DATA_MOVEMENT]
    order_a = [x for x in la if id(x) in ids_a and x.layer_type not in _DATA_MOVEMENT]
    sm = difflib.SequenceMatcher(None, [_signature(x) for x in order_a],
                                 [_signature(x) for x in order_b], autojunk=False)
    used_a: set[int] = set()
    used_b: set[int] = set()
    for blk in sm.get_matching_blocks():
        for k in range(blk.size):
            x, y = order_a[blk.a + k], order_b[blk.b + k]
            pairs.append((x, y, "order-and-type"))
            used_a.add(id(x))
            used_b.add(id(y))
    unmatched_a = [x.name for x in still_a if id(x) not in used_a]
    rest_b = [y for y in rest_b if id(y) not in used_b]
    deltas = []
    for x, y, how in pairs:
        ta, tb = x.avg_time_ms, y.avg_time_ms
        deltas.append(LayerDelta(
            name_a=x.name, name_b=y.name, layer_type=x.layer_type, precision_a=x.precision,
            precision_b=y.precision, time_a_ms=ta, time_b_ms=tb,
            delta_ms=(tb - ta) if ta is not None and tb is not None else None,
            ratio=(tb / ta) if ta and tb is not None else None, matched_by=how))
    deltas.sort(key=lambda d: -abs(d.delta_ms) if d.delta_ms is not None else 0.0)

    def total(layers: list[Any]) -> float | None:
        ts = [x.avg_time_ms for x in layers]
        return float(sum(ts)) if ts and all(t is not None for t in ts) else None

    return LayerComparison(layers_a=len(la), layers_b=len(lb), matched=deltas,
                           only_in_a=unmatched_a, only_in_b=[x.name for x in rest_b],
                           sum_a_ms=total(la), sum_b_ms=total(lb),
                           precision_mix_a=dict(getattr(ea, "precision_mix", {}) or {}),
                           precision_mix_b=dict(getattr(eb, "precision_mix", {}) or {}))
