"""The report's decision, computed from the results model alone (renders nothing).

:func:`judge` reads every section of a :class:`~trtcheck.results.Results` (and, when a
policy was given, the gate's checks) and returns a :class:`~trtcheck.results.verdict.Verdict`:
``ready``, ``ready_with_warnings``, ``cannot_tell`` or ``not_ready``, judged for the
deployment target ``results.target`` (``tensorrt`` by default), with the reasons that
decided it. docs/verdict.md states the rules for users; in short, strongest first:

``not_ready`` when any of
  * the model or engine has a lint of severity ``error`` for the target (``lint-error``;
    e.g. TensorRT cannot build the given shapes: ``onnx-shared-dim-name``). For a target
    that does not build TensorRT engines (``onnxruntime``, ``triton`` with an ONNX) those
    findings are notes (``other-runtime``, ``info``);
  * a reduced-precision variant failed its tolerance (``precision-failed``);
  * a gate budget failed (``gate-failed``; only with a policy);
  * the serving advice found no configuration that carries the arrival rate
    (``advice-unstable``) or none that meets the P99 objective (``advice-slo``).

``cannot_tell`` (when not ``not_ready``): measurement validity decides first
  * an invalid measurement (``measurement-invalid``): an implausible timing, or serving
    runs limited by the load generator with no valid open-loop run left;
  * a median known only to worse than +-:data:`MEDIAN_CI_LIMIT` (its 95% interval) that a
    claim rests on (``measurement-unstable``; a warning when the decision it feeds was
    made on bootstrap replicas of the same samples and held);
  * the advice says its measurements cannot decide (``advice-cannot-tell``);
  * the run, a bench sweep or a serving sweep stopped before its end (``incomplete``);
  * the results hold nothing inspected or measured (``nothing-measured``).

``ready_with_warnings`` when any of
  * the machine was noisy (``noisy-machine``: one reason listing every symptom);
  * batch sizes could not run (``failed-batches``);
  * other findings of severity ``warning`` remain (one reason per finding code, listing
    where it applies: ``findings``; the advice's pitfalls stay in the advice);
  * a gate check warned.

``ready`` otherwise. The serving advice headline is added as an ``info`` reason
(``advice``) whatever the status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trtcheck.analyze.tune_plan import CONFIRM_MIN_REQUESTS
from trtcheck.results.stats import Finding
from trtcheck.results.tune import live_run_labels, load_short_runs
from trtcheck.stats import CV_WARN
from trtcheck.results.verdict import DEPLOYMENT_TARGETS, REASON_EFFECTS, Verdict, VerdictReason
from trtcheck.units import sig

MEDIAN_CI_LIMIT = 0.10
"""A timed batch size whose median is known only to worse than +-10% (half the width of
its 95% interval, :func:`trtcheck.stats.median_interval`, over the median) cannot support
a claim: the verdict says *cannot tell*. The bench measures adaptively until +-5%
(:attr:`trtcheck.measure.bench.StopRule.median_precision`) within its time bound, so a
run reaches this limit only when the bound stopped it with the median still that
uncertain. Twice the adaptive target: a run that met the target is not judged on the
noise of the interval's own estimate."""

TARGETS = DEPLOYMENT_TARGETS
"""Deployment targets a verdict is judged for (``trtcheck report --target``)."""

TARGET_WORDS = {"tensorrt": "TensorRT", "tensorrt_rtx": "TensorRT-RTX",
                "onnxruntime": "ONNX Runtime", "triton": "Triton Inference Server"}
"""Each target in words."""

NOISE_CODES = ("unstable-cv", "outliers", "min-far-below-median", "too-few-samples", "drift",
               "late-sends", "unstable-repeats")
"""Finding codes whose one cause is a noisy or loaded machine: they make one verdict
reason (``noisy-machine``) that lists them as its symptoms."""

STATUS_WORDS = {"ready": "Ready", "ready_with_warnings": "Ready with warnings",
                "cannot_tell": "Cannot tell", "not_ready": "Not ready"}
"""Each status in words, as reports print it."""

TENSORRT_BUILD_CODES = ("onnx-shared-dim-name", "onnx-trt-unsupported-op",
                        "onnx-trt-op-restriction", "onnx-trt-constant-attr",
                        "onnx-string-tensor")
"""Lint codes whose ``error`` means TensorRT cannot build an engine from the model."""

_NOISE_REMEDY_GPU = "(cpupower / nvidia-smi -lgc)"
_NOISE_REMEDY_CPU = "(cpupower frequency-set)"


@dataclass(frozen=True)
class ShownFinding:
    """A finding and the report section that shows it (``inspection``, ``bench``, ...)."""

    section: str
    finding: Finding


def on_gpu(results: Any) -> bool:
    """Whether the timed runs ran on a GPU: a bench or serve backend whose device names
    CUDA or a GPU, or an engine section (TensorRT plans run on GPUs only)."""
    devices = [r.backend.device for r in results.bench]
    serve = getattr(results, "serve", None)
    if serve is not None:
        devices.append(serve.backend.device)
    if not devices:
        return getattr(results, "engine", None) is not None or bool(results.environment.gpus)
    return any(("cuda" in d.lower() or "gpu" in d.lower()) for d in devices)


def fit_remedy(remedy: str | None, gpu: bool) -> str | None:
    """A finding's remedy for the device the run used: on a CPU run, GPU-only tools
    (``nvidia-smi``) are left out of it."""
    if remedy is None or gpu:
        return remedy
    return remedy.replace(_NOISE_REMEDY_GPU, _NOISE_REMEDY_CPU)


def bench_findings(run: Any) -> list[Finding]:
    """Every finding stored on one bench run, in batch order (the ``enqueue-bound``
    warning among them once :func:`trtcheck.analyze.derived.derived.add_enqueue_bound_findings`
    has run)."""
    return [w for b in run.batches for w in b.warnings]


def collect_findings(results: Any) -> list[ShownFinding]:
    """Every finding of the results with the section that shows it, in report order:
    inspection lints, bench warnings (with the enqueue-bound finding), engine lints,
    precision findings per variant, serving warnings, advice pitfalls."""
    out: list[ShownFinding] = []
    if results.inspection is not None:
        out += [ShownFinding("inspection", f) for f in results.inspection.lints]
    for run in results.bench:
        out += [ShownFinding("bench", f) for f in bench_findings(run)]
    engine = getattr(results, "engine", None)
    if engine is not None:
        out += [ShownFinding("engine", f) for f in engine.lints]
    precision = getattr(results, "precision", None)
    if precision is not None:
        for v in precision.variants.values():
            out += [ShownFinding("precision", f) for f in v.findings]
    serve = getattr(results, "serve", None)
    if serve is not None:
        out += [ShownFinding("serve", w) for c in serve.configs for w in c.warnings]
        out += [ShownFinding("serve", w) for w in serve.warnings]
    advice = getattr(results, "advice", None)
    if advice is not None:
        out += [ShownFinding("advice", f) for f in advice.pitfalls]
    return out


def _where_list(items: list[str | None]) -> list[str]:
    seen: list[str] = []
    for w in items:
        if w and w not in seen:
            seen.append(w)
    return seen


def results_target(results: Any) -> str:
    """The deployment target the results are judged for: ``results.target`` when
    recorded, else ``tensorrt`` (the runtime trtcheck checks a model for by default)."""
    target = getattr(results, "target", None)
    if target in TARGETS:
        return target
    serve = getattr(results, "serve", None)
    if getattr(results, "tune", None) is not None or getattr(serve, "live", None) is not None:
        return "triton"  # measured on a live Triton (KServe v2) server
    return "tensorrt"


def _tensorrt_blocks(target: str) -> bool:
    """Whether a TensorRT build or engine problem blocks deployment on ``target``:
    TensorRT and TensorRT-RTX build engines from the ONNX; ONNX Runtime runs the ONNX
    itself; Triton serves an ONNX with its onnxruntime backend (a plan only when one is
    given, which then has an engine section)."""
    return target in ("tensorrt", "tensorrt_rtx")


def _lint_reasons(results: Any, target: str = "tensorrt") -> list[VerdictReason]:
    out = []
    groups: dict[tuple[str, str], list[Finding]] = {}
    if results.inspection is not None:
        for f in results.inspection.lints:
            if f.severity == "error":
                groups.setdefault(("inspection", f.code), []).append(f)
    engine = getattr(results, "engine", None)
    if engine is not None:
        for f in engine.lints:
            if f.severity == "error":
                groups.setdefault(("engine", f.code), []).append(f)
    engine_is_target = engine is not None and target != "onnxruntime"
    for (section, code), fs in groups.items():
        more = f" (and {len(fs) - 1} more like it)" if len(fs) > 1 else ""
        where = _where_list([f.where for f in fs])
        other_runtime = (code in TENSORRT_BUILD_CODES and not _tensorrt_blocks(target)
                         and not engine_is_target) or \
            (section == "engine" and target == "onnxruntime")
        if other_runtime:
            lead = ("TensorRT could not build it" if code in TENSORRT_BUILD_CODES
                    else "the TensorRT engine cannot be used")
            out.append(VerdictReason(
                kind="other-runtime", effect="info", section=section, title=lead,
                message=(f"{lead} (a note: the target is {TARGET_WORDS[target]}, which "
                         f"{'serves the ONNX with its onnxruntime backend' if target == 'triton' else 'runs the ONNX itself'}"
                         f"): {fs[0].message}{more}"),
                remedy=fs[0].remedy, codes=[code], where=where))
            continue
        if code in TENSORRT_BUILD_CODES:
            lead = ("TensorRT-RTX cannot build it" if target == "tensorrt_rtx"
                    else "TensorRT cannot build it")
        elif section == "engine":
            lead = "the engine cannot be used"
        else:
            lead = "the model has an error"
        out.append(VerdictReason(kind="lint-error", effect="not_ready", section=section,
                                 title=lead, message=f"{lead}: {fs[0].message}{more}",
                                 remedy=fs[0].remedy, codes=[code], where=where))
    return out


def _precision_reasons(results: Any) -> list[VerdictReason]:
    precision = getattr(results, "precision", None)
    if precision is None:
        return []
    out = []
    for name, v in precision.variants.items():
        if v.passed:
            continue
        bad = [f for f in v.findings if f.severity in ("error", "warning")]
        why = bad[0].message if bad else "an output is outside the tolerance"
        out.append(VerdictReason(
            kind="precision-failed", effect="not_ready", section="precision",
            title=f"{name} fails its accuracy tolerance",
            message=f"{name} fails its accuracy tolerance: {why}",
            remedy=(bad[0].remedy if bad and bad[0].remedy else
                    "keep the failing layers in FP32, or serve the FP32 model"),
            codes=_where_list([f.code for f in bad]), where=[name]))
    return out


def _is_verdict_check(check: Any) -> bool:
    return str(getattr(check, "metric", "")).startswith("verdict.")


def _gate_reasons(gate_report: Any) -> list[VerdictReason]:
    if gate_report is None:
        return []
    checks = [c for c in gate_report.checks if not _is_verdict_check(c)]
    failed = [c for c in checks if c.outcome == "fail"]
    warned = [c for c in checks if c.outcome == "warn"]
    out = []
    if failed:
        out.append(VerdictReason(
            kind="gate-failed", effect="not_ready", section="verdict",
            title=f"{len(failed)} gate check(s) failed",
            message=(f"{len(failed)} of {len(checks)} gate check(s) failed: "
                     + "; ".join(f"{c.metric}: {c.message}" for c in failed[:3])
                     + ("; ..." if len(failed) > 3 else "")),
            remedy="run `trtcheck gate` with the same policy for every check and its numbers",
            codes=_where_list([c.verdict for c in failed]),
            where=_where_list([c.source for c in failed])))
    if warned:
        out.append(VerdictReason(
            kind="gate-warned", effect="warning", section="verdict",
            title=f"{len(warned)} gate check(s) warned",
            message=f"{len(warned)} gate check(s) warned: "
                    + "; ".join(f"{c.metric}: {c.verdict}" for c in warned[:3])
                    + ("; ..." if len(warned) > 3 else ""),
            codes=_where_list([c.verdict for c in warned]),
            where=_where_list([c.source for c in warned])))
    return out


def advice_cannot_tell(advice: Any) -> str | None:
    """Why the advice says its measurements cannot decide, or ``None`` when it decided.

    Read from the advice record: ``recommendation.stability.status == "cannot-tell"``
    (the bootstrap replicas of the measurements chose different configurations;
    :mod:`trtcheck.analyze.advice.advise_noise`), or a recommendation of kind ``cannot-tell``.
    The reason is the recommendation's summary, which names what to re-measure. A
    ``likely`` recommendation (60-80% of replicas) decided, like a ``stable`` one."""
    rec = advice.recommendation
    stability = getattr(rec, "stability", None)
    if stability is not None and getattr(stability, "status", "") == "cannot-tell":
        return rec.summary
    if rec.kind.replace("_", "-") == "cannot-tell":
        return rec.summary
    return None


def _remeasure(rec: Any) -> str:
    stability = getattr(rec, "stability", None)
    what = list(getattr(stability, "remeasure", []) or [])
    if what:
        return "re-measure " + "; ".join(what)
    return "re-measure on a quiet machine (the advice section says which numbers)"


def _advice_reasons(results: Any) -> list[VerdictReason]:
    adv = getattr(results, "advice", None)
    if adv is None:
        return []
    rate = adv.inputs.arrival_rate_per_s
    rec = adv.recommendation
    pred = rec.prediction
    out = []
    cannot = advice_cannot_tell(adv)
    if cannot is not None:
        out.append(VerdictReason(kind="advice-cannot-tell", effect="cannot_tell",
                                 section="advice",
                                 title="the serving advice cannot decide",
                                 message=f"serving advice at {rate:g} req/s: {cannot}",
                                 remedy=_remeasure(rec), codes=[rec.kind]))
        return out
    if not pred.stable:
        out.append(VerdictReason(
            kind="advice-unstable", effect="not_ready", section="advice",
            title=f"no configuration searched carries {rate:g} req/s",
            message=(f"no configuration searched carries {rate:g} req/s "
                     f"(utilisation {pred.utilisation:.2f} at the best one)"),
            remedy="add instances or hardware, or lower the arrival rate",
            codes=[rec.kind]))
    slo = adv.inputs.slo_p99_ms
    if pred.stable and slo is not None and pred.p99_ms is not None and pred.p99_ms > slo:
        out.append(VerdictReason(
            kind="advice-slo", effect="not_ready", section="advice",
            title=f"the P99 objective of {slo:g} ms is missed",
            message=(f"the best configuration found predicts P99 {sig(pred.p99_ms)} ms at "
                     f"{rate:g} req/s, over the {slo:g} ms objective"),
            remedy="add instances or hardware, or relax the objective", codes=[rec.kind]))
    iv = pred.p99_interval_ms
    if getattr(rec, "certified", None) is False and iv and slo is not None \
            and pred.p99_ms is not None and pred.p99_ms <= slo:
        # chosen on the intervals: the point meets the objective, the interval does not
        out.append(VerdictReason(
            kind="advice-uncertified", effect="warning", section="advice",
            title="the serving advice's P99 interval reaches above the objective",
            message=(f"the recommendation's P99 prediction interval reaches {sig(iv[1])} ms "
                     f"at {rate:g} req/s, above the {slo:g} ms objective (its point "
                     f"{sig(pred.p99_ms)} ms meets it)"),
            remedy=("measure it before relying on it (trtcheck tune measures its pick), or "
                    "calibrate from a longer run to narrow the interval"),
            codes=["p99-interval-above-objective"]))
    out.append(VerdictReason(kind="advice", effect="info", section="advice",
                             title="serving advice",
                             message=f"serving advice at {rate:g} req/s: {rec.summary}",
                             codes=[rec.kind]))
    return out


def _remeasure_remedy(gpu: bool) -> str:
    return ("re-measure on a quiet machine: close other programs, pin the process "
            "(taskset) and the CPU frequency "
            + ("(cpupower / nvidia-smi -lgc)" if gpu else "(cpupower frequency-set)")
            + ", and raise --max-duration so the bench can sample until the median is "
            f"known to +-{UNSTABLE_TARGET:.0%}")


UNSTABLE_TARGET = 0.05
"""The bench's adaptive target for the median (mirrors
:attr:`trtcheck.measure.bench.StopRule.median_precision`; analysis imports no stage)."""


def _advice_decided_on_replicas(results: Any) -> str | None:
    """When the serving advice made its decision on bootstrap replicas of these very
    samples (so the medians' uncertainty is already inside it) and it held: how it held,
    in words; else ``None``."""
    adv = getattr(results, "advice", None)
    if adv is None or advice_cannot_tell(adv) is not None:
        return None
    st = getattr(adv.recommendation, "stability", None)
    if st is None or not getattr(st, "replicas", 0):
        return None
    return (f"the serving advice's choice held in {st.share:.0%} of {st.replicas} bootstrap "
            "replicas of these samples, so the decision stands")


def _unstable_reasons(results: Any, gpu: bool) -> list[VerdictReason]:
    """``measurement-unstable``: batch sizes whose median's 95% interval is wider than
    +-:data:`MEDIAN_CI_LIMIT` of the median. The claims resting on those medians
    (throughput, T(b), latency budgets) are undecided: *cannot tell*, unless the
    decision they feed was made on bootstrap replicas of the same samples and held
    (the serving advice's stability check): then the decision stands and the reason is
    a warning that says which numbers are not decided."""
    from trtcheck.stats import median_interval

    out = []
    for run in results.bench:
        bad = []
        for b in run.batches:
            ci = median_interval(b.samples_ms) if b.samples_ms else None
            med = b.stats.median_ms
            if ci is None or med <= 0:
                continue
            hw = (ci[1] - ci[0]) / 2.0 / med
            if hw > MEDIAN_CI_LIMIT:
                bad.append((b, hw, ci))
        if not bad:
            continue
        worst, hw, ci = max(bad, key=lambda x: x[1])
        sizes = ", ".join(str(b.batch_size) for b, _, _ in bad)
        head = (f"the median latency of {run.label} at batch {worst.batch_size} is "
                f"{sig(worst.stats.median_ms)} ms with a 95% interval of "
                f"{sig(ci[0])}-{sig(ci[1])} ms (+-{hw:.0%}, the limit is "
                f"+-{MEDIAN_CI_LIMIT:.0%}) after {worst.stats.count} runs in "
                f"{worst.measured_duration_s:.1f} s")
        held = _advice_decided_on_replicas(results)
        if held is not None:
            out.append(VerdictReason(
                kind="measurement-unstable", effect="warning", section="bench",
                title=f"the throughput at batch {sizes} is not decided",
                message=(f"{head}: the throughput and latency numbers at batch {sizes} are "
                         f"not decided, but {held}"),
                remedy=_remeasure_remedy(gpu), codes=["median-uncertain"],
                where=[f"batch {b.batch_size}" for b, _, _ in bad]))
            continue
        out.append(VerdictReason(
            kind="measurement-unstable", effect="cannot_tell", section="bench",
            title=f"the median latency at batch {sizes} is too uncertain to decide on",
            message=(f"{head}: the claims resting on it (throughput, T(b) for the advice, "
                     "latency budgets) cannot be decided"),
            remedy=_remeasure_remedy(gpu), codes=["median-uncertain"],
            where=[f"batch {b.batch_size}" for b, _, _ in bad]))
    return out


IMPLAUSIBLE_CODES = ("implausible-latency",)
"""Bench validity codes meaning a timing the work cannot be done in."""


def _validity_reasons(results: Any) -> list[VerdictReason]:
    """Invalid measurements (rule table in docs/verdict.md): implausible timings of a
    bench batch size (cannot tell), generator-limited serving configurations (cannot
    tell when nothing valid is left to rest the serving claims on, a warning naming
    them otherwise)."""
    out: list[VerdictReason] = []
    for run in results.bench:
        bad = [(b, f) for b in run.batches for f in getattr(b, "validity", [])
               if f.code in IMPLAUSIBLE_CODES]
        if bad:
            b, f = bad[0]
            out.append(VerdictReason(
                kind="measurement-invalid", effect="cannot_tell", section="bench",
                title="the timing is implausible",
                message=(f"the timing of {run.label} is implausible: {f.message}"
                         + (f" (and {len(bad) - 1} more like it)" if len(bad) > 1 else "")),
                remedy=f.remedy, codes=["implausible-latency"],
                where=_where_list([f"batch {x.batch_size}" for x, _ in bad])))
    serve = getattr(results, "serve", None)
    if serve is None:
        return out
    limited = [c for c in serve.configs
               if any(f.code == "generator-limited" for f in c.validity)]
    if not limited:
        return out
    open_loop = [c for c in serve.configs if c.load.kind == "open"]
    counts = {c.instances for c in serve.configs}
    names = [f"{c.load.label} window {c.window_us / 1000:g} ms max batch {c.max_batch_size}"
             + (f" instances {c.instances}" if len(counts) > 1 else "") for c in limited]
    first = next(f for f in limited[0].validity if f.code == "generator-limited")
    # valid open-loop configurations left decide the serving numbers, with or without a
    # bench run beside them
    nothing_left = len(limited) >= len(open_loop)
    out.append(VerdictReason(
        kind="measurement-invalid", effect="cannot_tell" if nothing_left else "warning",
        section="serve", title="the load generator limited the serving runs",
        message=(f"the load generator limited {len(limited)} of {len(serve.configs)} serving "
                 f"configuration(s): {first.message}"
                 + ("; no valid open-loop configuration is left, so the serving numbers "
                    "cannot be decided on" if nothing_left else
                    "; those rows decide nothing (the advice's calibration and the gate "
                    "leave them out)")),
        remedy=first.remedy, codes=["generator-limited"], where=names))
    return out


def _failed_parts_reasons(results: Any) -> list[VerdictReason]:
    """Batch sizes that could not run (``failed-batches``, a warning naming them and
    why) and a precision variant that could not be run or built."""
    out = []
    for run in results.bench:
        failed = list(getattr(run, "failed_batches", []) or [])
        if not failed:
            continue
        oom = [f for f in failed if f.reason == "out-of-memory"]
        words = ", ".join(f"{f.batch_size} ({'out of memory' if f.reason == 'out-of-memory' else 'failed'})"
                          for f in failed)
        out.append(VerdictReason(
            kind="failed-batches", effect="warning", section="bench",
            title=f"batch {', '.join(str(f.batch_size) for f in failed)} could not run",
            message=(f"{len(failed)} batch size(s) of {run.label} could not run: {words}; "
                     f"first: {failed[0].message}"),
            remedy=("use smaller --batch values or --shapes that fit the device" if oom
                    else "see the bench section's failed batches for each error"),
            codes=["out-of-memory" if oom else "batch-failed"],
            where=[f"batch {f.batch_size}" for f in failed]))
    return out


def _incomplete_reasons(results: Any) -> list[VerdictReason]:
    """The run, a bench sweep or a serving sweep stopped before its end."""
    parts = [("summary", getattr(results, "incomplete", None))]
    parts += [("bench", getattr(run, "incomplete", None)) for run in results.bench]
    serve = getattr(results, "serve", None)
    if serve is not None:
        parts.append(("serve", getattr(serve, "incomplete", None)))
    stopped = [(sec, why) for sec, why in parts if why]
    if not stopped:
        return []
    section, why = stopped[0]
    return [VerdictReason(kind="incomplete", effect="cannot_tell", section=section,
                          title="the run did not finish",
                          message=f"the run stopped before its end: {why}",
                          remedy="run it again to the end; what was measured before the "
                                 "stop is shown, the rest is missing",
                          where=[sec for sec, _ in stopped])]


def _tune_reasons(results: Any) -> list[VerdictReason]:
    """A ``trtcheck tune`` document: no pick (nothing met the objective) is *not ready*
    (a search stopped before it predicted anything is judged by its ``incomplete``);
    a pick that was not measured is *cannot tell*; a pick measured outside its predicted
    interval is a warning (the prediction did not hold for it), and so is a pick no
    interval certified (one measurement met the objective); a pick measured above the
    P99 objective is *not ready*."""
    tune = getattr(results, "tune", None)
    if tune is None:
        return []
    remedy = "run `trtcheck tune` again (a longer --duration-s, or more --max-runs)"
    pick = tune.pick
    if pick is None and results.incomplete and not tune.predictions:
        # stopped (interrupted, or a server fault) before anything was predicted: the
        # incomplete reason says why; nothing was judged against the objective
        return []
    if pick is None:
        return [VerdictReason(kind="tune-no-pick", effect="not_ready", section="tune",
                              title="no configuration met the objective",
                              message=f"tune found no configuration for: {tune.objective_rule}",
                              remedy="raise --slo-p99-ms, allow more --max-instances, or "
                                     "lower the rate")]
    if pick.measured is None:
        return _tune_load_short_reasons(tune, None) + [VerdictReason(
            kind="tune-not-confirmed", effect="cannot_tell", section="tune",
            title="the pick was not measured",
            message="tune's pick rests on its prediction alone", remedy=remedy)]
    m = pick.measured
    out = _tune_load_short_reasons(tune, m.run)
    if tune.slo_p99_ms is not None and m.p99_ms > tune.slo_p99_ms:
        out.append(VerdictReason(
            kind="tune-pick-misses-objective", effect="not_ready", section="tune",
            title="the pick measured above the P99 objective",
            message=f"measured P99 {sig(m.p99_ms)} ms against the objective "
                    f"{tune.slo_p99_ms:g} ms (predicted {sig(pick.predicted.p99_ms)} ms): "
                    "the search's live runs were spent before a configuration met it",
            remedy="run `trtcheck tune` again with more --max-runs, raise --slo-p99-ms, "
                   "or lower the rate"))
    if not pick.certified:
        out.append(VerdictReason(
            kind="tune-not-certified", effect="warning", section="tune",
            title="the pick met the objective in one measurement; no prediction interval "
                  "certified it",
            message=f"measured P99 {sig(m.p99_ms)} ms against the objective "
                    f"{tune.slo_p99_ms:g} ms; the run-to-run drift left every P99 interval "
                    "above it",
            remedy="measure the pick again (`trtcheck serve --url ...`), or run `trtcheck "
                   "tune` with a longer --duration-s"))
    if m.requests < CONFIRM_MIN_REQUESTS:
        above = max(1, round(0.01 * m.requests))
        out.append(VerdictReason(
            kind="tune-pick-short-run", effect="warning", section="tune",
            title="the pick's P99 rests on a short run",
            message=f"the run that measured the pick held {m.requests} requests, about "
                    f"{above} of them above its P99 (tune aims at "
                    f"{CONFIRM_MIN_REQUESTS:,}): a rare stall may be missing from it",
            remedy="measure the pick again with more requests (`trtcheck serve --url ... "
                   "--duration-s`), or run `trtcheck tune` with a longer --duration-s"))
    if not (m.p50_inside and m.p99_inside):
        off = " and ".join(q for q, ok in (("P50", m.p50_inside), ("P99", m.p99_inside))
                           if not ok)
        return out + [VerdictReason(kind="tune-outside-interval", effect="warning", section="tune",
                              title=f"the pick's measured {off} fell outside its prediction "
                                    "interval",
                              message=f"measured P50 {sig(m.p50_ms)} ms, P99 {sig(m.p99_ms)} ms "
                                      "against the predicted intervals: the measurement, "
                                      "not the prediction, is what the pick is known by",
                              remedy=remedy)]
    return out


def _tune_load_short_reasons(tune: Any, pick_run: int | None) -> list[VerdictReason]:
    """Live runs of a tune document that did not send their schedule: the run that
    measured the pick (index ``pick_run`` into ``tune.runs``) cannot certify it
    (*cannot tell*); calibration runs calibrated another rate than the target (a
    warning)."""
    short = load_short_runs(tune.runs)
    if not short:
        return []
    labels = live_run_labels(tune.runs)
    remedy = ("run `trtcheck tune` again with the load generator on a less loaded machine, "
              "more --client-processes, or a lower rate")
    out = []
    if pick_run is not None and pick_run in short:
        out.append(VerdictReason(
            kind="tune-pick-load-short", effect="cannot_tell", section="tune",
            title="the run that measured the pick did not send its schedule",
            message=f"live run {labels[pick_run]} fell short of the target rate's schedule "
                    "(tune's notes give the finding): its latencies cannot certify the pick",
            remedy=remedy))
    others = [i for i in short if i != pick_run]
    if others:
        names = ", ".join(labels[i] for i in others)
        many = len(others) > 1 or "-" in names
        runs = f"live run{'s' if many else ''} {names}"
        out.append(VerdictReason(
            kind="tune-calibration-load-short", effect="warning", section="tune",
            title=f"{runs} of the search did not send {'their' if many else 'its'} schedule",
            message=f"{runs} fell short of the target rate's schedule (tune's notes give "
                    f"the finding): what {'they' if many else 'it'} calibrated or measured "
                    "is another rate than the target, and the predictions rest on it",
            remedy=remedy))
    return out


def _nothing_reasons(results: Any) -> list[VerdictReason]:
    parts = (results.inspection, getattr(results, "engine", None), results.bench,
             getattr(results, "precision", None), getattr(results, "serve", None),
             getattr(results, "advice", None), getattr(results, "tune", None))
    if any(p for p in parts):
        return []
    imported = getattr(results, "imported", None)
    if imported is not None:
        tool = ("perf_analyzer" if imported.source == "perf_analyzer-csv"
                else "Triton's statistics")
        return [VerdictReason(kind="nothing-measured", effect="cannot_tell", section="summary",
                              title=f"measured by {tool}, not judged",
                              message=f"the results hold {tool}'s numbers read from "
                                      f"{imported.file}; the verdict needs trtcheck's own "
                                      "inspection and measurements (gate the imported "
                                      "numbers with a policy)",
                              remedy="gate them with `trtcheck gate FILE --policy P`, or run "
                                     "`trtcheck report MODEL`")]
    return [VerdictReason(kind="nothing-measured", effect="cannot_tell", section="summary",
                          title="nothing was inspected or measured",
                          message="the results hold nothing inspected or measured",
                          remedy="run `trtcheck report MODEL`")]


def _finding_reasons(results: Any, gpu: bool, covered: set[str],
                     target: str = "tensorrt",
                     medians_precise: bool = True) -> list[VerdictReason]:
    groups: dict[str, list[ShownFinding]] = {}
    noise: list[ShownFinding] = []
    notes: dict[str, list[ShownFinding]] = {}
    for sf in collect_findings(results):
        # the advice's pitfalls are part of its answer (serving traps), not of the model
        if sf.finding.severity != "warning" or sf.finding.code in covered \
                or sf.section == "advice":
            continue
        if sf.finding.code in NOISE_CODES:
            noise.append(sf)
        elif sf.section == "engine" and target == "onnxruntime":
            notes.setdefault(sf.finding.code, []).append(sf)
        else:
            groups.setdefault(sf.finding.code, []).append(sf)
    out = []
    if noise:
        out.append(_noise_reason(noise, gpu, medians_precise))
    for code, sfs in groups.items():
        first = sfs[0].finding
        where = _where_list([s.finding.where for s in sfs])
        n = len(sfs)
        message = first.message if n == 1 else f"{first.message} (and {n - 1} more like it)"
        out.append(VerdictReason(kind="findings", effect="warning", section=sfs[0].section,
                                 title=code,
                                 message=f"{code}: {message}",
                                 remedy=fit_remedy(first.remedy, gpu), codes=[code],
                                 where=where))
    for code, sfs in notes.items():
        out.append(VerdictReason(
            kind="other-runtime", effect="info", section=sfs[0].section, title=code,
            message=(f"{code} (a note: the target is {TARGET_WORDS[target]}, not the "
                     f"TensorRT engine): {sfs[0].finding.message}"),
            remedy=sfs[0].finding.remedy, codes=[code],
            where=_where_list([x.finding.where for x in sfs])))
    return out


_NOISE_WORDS = {"unstable-cv": "a coefficient of variation over 10%",
                "outliers": "outliers", "min-far-below-median": "a minimum far below the median",
                "too-few-samples": "too few samples", "drift": "a drifting median",
                "late-sends": "late sends of the load generator",
                "unstable-repeats": "throughput varying across repeats"}


def _noise_reason(noise: list[ShownFinding], gpu: bool,
                  medians_precise: bool = True) -> VerdictReason:
    """One ``noisy-machine`` warning for every finding whose cause is a noisy machine,
    its symptoms listed (code, where, the first message of each)."""
    codes = _where_list([sf.finding.code for sf in noise])
    symptoms = []
    for code in codes:
        of = [sf for sf in noise if sf.finding.code == code]
        where = compact_places([sf.finding.where for sf in of])
        symptoms.append(f"{_NOISE_WORDS.get(code, code)} ({where})" if where
                        else _NOISE_WORDS.get(code, code))
    sections = _where_list([sf.section for sf in noise])
    # the medians' precision and --min-duration are the bench runs'; a serving run is
    # lengthened with --duration-s
    bench = "bench" in sections
    longer = (["raise --min-duration"] if bench else []) + (
        ["give serve a longer --duration-s"] if any(x != "bench" for x in sections) else [])
    return VerdictReason(
        kind="noisy-machine", effect="warning", section=sections[0],
        title="the machine was noisy",
        message=("the machine was noisy while measuring: " + "; ".join(symptoms)
                 + (f". The bench medians are still known to +-{MEDIAN_CI_LIMIT:.0%} or "
                    "better" if medians_precise and bench else "")),
        remedy=fit_remedy("close other programs, pin the process (taskset) and CPU "
                          f"frequency {_NOISE_REMEDY_GPU}, and " + " and ".join(longer), gpu),
        codes=codes, where=_where_list([sf.finding.where for sf in noise]))


def compact_places(places: list[str | None]) -> str:
    """``batch 1, batch 8`` -> ``batch 1, 8``; other places joined, at most 4 shown."""
    items = _where_list(places)
    batches = [p.split(" ", 1)[1] for p in items if p.startswith("batch ")]
    others = [p for p in items if not p.startswith("batch ")]
    parts = (["batch " + ", ".join(batches)] if batches else [])
    if others:
        parts.append(f"{len(others)} serving configuration(s)" if len(others) > 2
                     else "; ".join(others))
    return "; ".join(parts)


def judge(results: Any, gate_report: Any = None, policy_name: str | None = None) -> Verdict:
    """The verdict on ``results`` (rules in the module docstring and docs/verdict.md).

    Args:
        results: a :class:`trtcheck.results.Results`; its own ``verdict`` is ignored.
        gate_report: the :class:`trtcheck.analyze.gate.gate_evaluate.GateReport` of a policy on these
            results, or ``None``; checks on ``verdict.*`` metrics are left out (a
            verdict does not judge itself).
        policy_name: the policy file name, recorded in the verdict.

    Returns:
        the :class:`~trtcheck.results.verdict.Verdict`, reasons ordered by effect
        (``not_ready``, ``cannot_tell``, ``warning``, ``info``), then by rule order.
    """
    gpu = on_gpu(results)
    target = results_target(results)
    reasons: list[VerdictReason] = []
    reasons += _lint_reasons(results, target)
    reasons += _precision_reasons(results)
    reasons += _gate_reasons(gate_report)
    advice = _advice_reasons(results)
    reasons += [r for r in advice if r.effect != "info"]
    reasons += _validity_reasons(results)
    unstable = _unstable_reasons(results, gpu)
    reasons += unstable
    reasons += _incomplete_reasons(results)
    reasons += _tune_reasons(results)
    reasons += _nothing_reasons(results)
    reasons += _failed_parts_reasons(results)
    reasons += _finding_reasons(results, gpu, set(), target, medians_precise=not unstable)
    reasons += [r for r in advice if r.effect == "info"]
    order = {e: i for i, e in enumerate(REASON_EFFECTS)}
    reasons.sort(key=lambda r: order[r.effect])  # stable: rule order within an effect
    effects = {r.effect for r in reasons}
    if "not_ready" in effects:
        status = "not_ready"
    elif "cannot_tell" in effects:
        status = "cannot_tell"
    elif "warning" in effects:
        status = "ready_with_warnings"
    else:
        status = "ready"
    return Verdict(status=status, headline=_headline(status, reasons), reasons=reasons,
                   gate_policy=policy_name, unstable_cv_limit=CV_WARN,
                   median_ci_limit=MEDIAN_CI_LIMIT, target=target)


def _headline(status: str, reasons: list[VerdictReason]) -> str:
    word = STATUS_WORDS[status]
    deciding = [r for r in reasons if r.effect == status
                or (status == "ready_with_warnings" and r.effect == "warning")]
    if status == "ready":
        return ("Ready: no errors, no failed checks, no warnings, and the measurements are "
                "stable enough to decide on.")
    if status == "ready_with_warnings":
        titles = [r.title for r in deciding]
        kinds = (f"{len(deciding)} kind of warning remains" if len(deciding) == 1
                 else f"{len(deciding)} kinds of warning remain")
        return (f"{word}: nothing blocks it, but {kinds} "
                f"({', '.join(titles[:4])}{', ...' if len(titles) > 4 else ''}).")
    titles = [r.title for r in deciding]
    more = f" (+{len(titles) - 3} more)" if len(titles) > 3 else ""
    return f"{word}: {'; '.join(titles[:3])}{more}."
