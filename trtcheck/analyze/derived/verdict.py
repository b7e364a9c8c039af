"""The report's decision, computed from the results model alone (renders nothing).

:func:`judge` reads every section of a :class:`~trtcheck.results.Results` (and, when a
policy was given, the gate's checks) and returns a :class:`~trtcheck.results.verdict.Verdict`:
``ready``, ``ready_with_warnings``, ``cannot_tell`` or ``not_ready``, with the reasons that
decided it. The rules, strongest first (docs/verdict.md states them for users):

``not_ready`` when any of
  * the model or engine has a lint of severity ``error`` (``lint-error``; e.g. TensorRT
    cannot build the given shapes: ``onnx-shared-dim-name``);
  * a reduced-precision variant failed its tolerance (``precision-failed``);
  * a gate budget failed (``gate-failed``; only with a policy);
  * the serving advice found no configuration that carries the arrival rate
    (``advice-unstable``) or none that meets the P99 objective (``advice-slo``).

``cannot_tell`` (when not ``not_ready``) when any of
  * the advice says its measurements cannot decide (``advice-cannot-tell``): its
    bootstrap replicas of the measured T(b) chose different configurations, i.e. the
    noise is large enough to change the decision;
  * the run, a bench sweep or a serving sweep stopped before its end (``incomplete``);
  * the results hold nothing inspected or measured (``nothing-measured``).

``ready_with_warnings`` when any of
  * a timed batch size has a coefficient of variation above :data:`UNSTABLE_CV_LIMIT`
    (``measurement-unstable``: which batch sizes, and what to do). Noise alone is a
    warning: whether it changes a decision is judged where a decision is made (the
    advice's replicas, the gate's certification), so the verdict does not flip with the
    noise level of the machine;
  * findings of severity ``warning`` remain (one reason per finding code, listing where
    it applies: ``findings``; the advice's pitfalls stay in the advice);
  * a gate check warned.

``ready`` otherwise. The serving advice headline is added as an ``info`` reason
(``advice``) whatever the status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trtcheck.results.stats import Finding
from trtcheck.stats import CV_WARN
from trtcheck.results.verdict import REASON_EFFECTS, Verdict, VerdictReason

UNSTABLE_CV_LIMIT = 0.20
"""A timed batch size whose coefficient of variation (std / mean) exceeds this is named
too unstable to trust, with what to do (our threshold: twice the 10% level at which
:func:`trtcheck.stats.stability_findings` warns. Measured: a quiet GPU run stays under a
few percent, while demo runs on a 2-core host shared with other jobs read 6-16%,
21-44% and 40-65%, with batch-1 medians of 263, 118 and 58 ms across three runs)."""

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


def _lint_reasons(results: Any) -> list[VerdictReason]:
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
    for (section, code), fs in groups.items():
        if code in TENSORRT_BUILD_CODES:
            lead = "TensorRT cannot build it"
        elif section == "engine":
            lead = "the engine cannot be used"
        else:
            lead = "the model has an error"
        more = f" (and {len(fs) - 1} more like it)" if len(fs) > 1 else ""
        out.append(VerdictReason(kind="lint-error", effect="not_ready", section=section,
                                 title=lead, message=f"{lead}: {fs[0].message}{more}",
                                 remedy=fs[0].remedy, codes=[code],
                                 where=_where_list([f.where for f in fs])))
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
            message=(f"the best configuration found predicts P99 {pred.p99_ms:.3g} ms at "
                     f"{rate:g} req/s, over the {slo:g} ms objective"),
            remedy="add instances or hardware, or relax the objective", codes=[rec.kind]))
    out.append(VerdictReason(kind="advice", effect="info", section="advice",
                             title="serving advice",
                             message=f"serving advice at {rate:g} req/s: {rec.summary}",
                             codes=[rec.kind]))
    return out


def _unstable_reasons(results: Any, gpu: bool) -> list[VerdictReason]:
    out = []
    for run in results.bench:
        bad = [b for b in run.batches if b.stats.cv > UNSTABLE_CV_LIMIT]
        if not bad:
            continue
        worst = max(bad, key=lambda b: b.stats.cv)
        sizes = ", ".join(str(b.batch_size) for b in bad)
        remedy = ("re-measure on a quiet machine: close other programs, pin the process "
                  "(taskset) and the CPU frequency "
                  + ("(cpupower / nvidia-smi -lgc)" if gpu else "(cpupower frequency-set)")
                  + ", and raise --min-duration; decide on numbers whose CV stays under "
                  f"{UNSTABLE_CV_LIMIT:.0%}")
        out.append(VerdictReason(
            kind="measurement-unstable", effect="warning", section="bench",
            title=f"the latency at batch {sizes} is too unstable to trust",
            message=(f"latency of {run.label} varies too much to trust: coefficient of "
                     f"variation up to {worst.stats.cv:.0%} at batch {worst.batch_size} "
                     f"(the verdict's limit is {UNSTABLE_CV_LIMIT:.0%}; the bench section "
                     f"already flags a CV over {CV_WARN:.0%})"),
            remedy=remedy, codes=["unstable-cv"],
            where=[f"batch {b.batch_size}" for b in bad]))
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


def _nothing_reasons(results: Any) -> list[VerdictReason]:
    parts = (results.inspection, getattr(results, "engine", None), results.bench,
             getattr(results, "precision", None), getattr(results, "serve", None),
             getattr(results, "advice", None))
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


def _finding_reasons(results: Any, gpu: bool,
                     covered: set[str]) -> list[VerdictReason]:
    groups: dict[str, list[ShownFinding]] = {}
    for sf in collect_findings(results):
        # the advice's pitfalls are part of its answer (serving traps), not of the model
        if sf.finding.severity != "warning" or sf.finding.code in covered \
                or sf.section == "advice":
            continue
        groups.setdefault(sf.finding.code, []).append(sf)
    out = []
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
    return out


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
    reasons: list[VerdictReason] = []
    reasons += _lint_reasons(results)
    reasons += _precision_reasons(results)
    reasons += _gate_reasons(gate_report)
    advice = _advice_reasons(results)
    reasons += [r for r in advice if r.effect != "info"]
    unstable = _unstable_reasons(results, gpu)
    reasons += unstable  # warnings: sorted after every stronger reason below
    reasons += _incomplete_reasons(results)
    reasons += _nothing_reasons(results)
    # a warning already behind a stronger reason is not repeated
    covered = {"unstable-cv"} if unstable else set()
    reasons += _finding_reasons(results, gpu, covered)
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
                   gate_policy=policy_name, unstable_cv_limit=UNSTABLE_CV_LIMIT)


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
