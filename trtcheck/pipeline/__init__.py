"""The pipelines of ``trtcheck report`` and ``trtcheck advise``, composed once.

A report runs load -> inspect -> measure -> analyze -> render; advice runs T(b) (measured
now, read from a results document, or given) -> an :class:`~trtcheck.analyze.advice.advise.
AdviseRequest` -> :func:`~trtcheck.analyze.advice.advise.advise`. The commands parse and check
their options, call one function here, and print what it returns; library users call the
same functions:

- :func:`measure_report`: measure a model and write its report (HTML, Markdown, JSON).
- :func:`report_from_results`: write the report of a results model (nothing measured).
- :func:`advice_from_results`: batching advice from the numbers in a results model.
- :func:`advise_from_source`: batching advice from a model, a results model or a curve.

This module is a layer above ``measure``, ``analyze`` and ``report`` and below ``cli``
(``.importlinter``); it prints nothing: progress lines go to the ``log`` callback each
function takes (default: the ``trtcheck`` logger at INFO).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtcheck.errors import InputError, UsageError
from trtcheck.units import sig

Log = Callable[[str], None]
"""A progress callback: one human-readable line per call."""

DEFAULT_BATCHES = [1, 2, 4, 8]
"""Batch sizes a report sweeps when none are given and the model's batch axis is
dynamic (see :func:`measure_report`)."""

DEMO_LOAD_SHARE = 0.1
"""The demo's arrival rate as a share of what one instance serves at batch 1 (1 / S(1),
the simulated mean execution time with the measured spread): a sparse-arrival case,
where no queue forms (lambda x S(1) = 0.1). Tied to the
measured capacity, so the demo answers the same question on a fast GPU and on a loaded
2-core CPU; at 0.3 a heavy-tailed CPU curve made batches of 2 win by 7% on P99 in some
runs and not in others (a tail effect, not the lesson)."""

DEMO_BUSY_SHARE = 9.0
"""The demo's second rate, in units of :data:`DEMO_LOAD_SHARE` (0.9 of one instance's
batch-1 capacity: the server keeps up on average, yet Poisson arrivals bunch, so a queue
of about 4 requests forms at batch 1, M/D/1), to show where batching starts to matter."""


def _log_info(message: str) -> None:
    """The default progress callback: ``message`` on the ``trtcheck`` logger at INFO."""
    logging.getLogger("trtcheck").info("%s", message)


# --------------------------------------------------------------------------- advice


@dataclass
class AdviseSettings:
    """What batching advice needs besides T(b) and the measured overheads: the load, the
    objective and the serving costs the user gives (``None``: as measured, else 0).

    Attributes:
        rate_per_s: arrival rate, requests/s (> 0); ``None`` for a trace (its own rate),
            a burst or a closed loop.
        arrival_process: ``poisson``, ``constant`` or ``trace:FILE``.
        slo_p99_ms: P99 latency objective, ms, or ``None``.
        per_request_overhead_ms: serving cost per request outside the queue, ms.
        serial_overhead: whether that cost runs on one thread (``None``: as measured).
        per_batch_overhead_ms: instance time added to every execution, ms.
        per_item_overhead_ms: instance time per request in a batch, ms.
        timer_slack_us: how late window timers fire, us.
        instances: instance counts to search (``None``: as many as needed).
        max_utilisation: highest utilisation a recommendation may run at, in (0, 1].
        requests: simulated requests per candidate (``None``: automatic).
        seed: simulation seed (>= 0).
        replicas: bootstrap replicas the choice is rerun on (0: nominal only).
        device_kind: ``"gpu"``, ``"cpu"`` or ``None``: as the results say (unknown when
            there are none).
        what_if: configurations (:class:`~trtcheck.analyze.advice.simulator.Candidate`) to
            predict next to the recommendation.
        burst_size: a burst of this many requests instead of an arrival rate.
        closed_loop: a :class:`~trtcheck.analyze.advice.simulator.ClosedLoop` instead of an
            arrival rate.
        notes: extra notes the advice carries.
        objective: the objective's name (:mod:`trtcheck.analyze.objectives`).

    The defaults are those of :class:`~trtcheck.analyze.advice.advise.AdviseRequest`.
    """

    rate_per_s: float | None = None
    arrival_process: str = "poisson"
    slo_p99_ms: float | None = None
    per_request_overhead_ms: float | None = None
    serial_overhead: bool | None = None
    per_batch_overhead_ms: float | None = None
    per_item_overhead_ms: float | None = None
    timer_slack_us: float | None = None
    instances: list[int] | None = None
    max_utilisation: float = 0.9
    requests: int | None = None
    seed: int = 0
    replicas: int = 12
    device_kind: str | None = None
    what_if: list[Any] = field(default_factory=list)
    burst_size: int | None = None
    closed_loop: Any = None
    notes: list[str] = field(default_factory=list)
    objective: str = "fewest-instances"


def advise_curve(curve: Any, measured: dict[str, Any], settings: AdviseSettings,
                 results: Any = None) -> Any:
    """Batching advice for T(b) ``curve`` with the ``measured`` overheads: the one place an
    :class:`~trtcheck.analyze.advice.advise.AdviseRequest` is assembled
    (:func:`~trtcheck.analyze.advice.inputs.build_request`) and advised on. NumPy's
    floating-point warnings are kept quiet: a bad number is one error.

    Args:
        curve: a :class:`~trtcheck.analyze.advice.curve.LatencyCurve`.
        measured: from :func:`~trtcheck.analyze.advice.inputs.advice_inputs` (may be
            empty).
        settings: the load, objective and given costs.
        results: the results T(b) came from, for the device wording when
            ``settings.device_kind`` is ``None``.

    Returns:
        A :class:`~trtcheck.results.advice.Advice` without export settings.

    Raises:
        InputError: what :func:`~trtcheck.analyze.advice.advise.advise` raises (no feasible
            configuration for the load, a bad curve).
    """
    from trtcheck.analyze.advice.advise import advise
    from trtcheck.export import device_kind_from_results
    from trtcheck.analyze.advice import build_request
    from trtcheck.stats import quiet_numerics

    s = settings
    with quiet_numerics():
        req = build_request(
            curve, measured, rate_per_s=s.rate_per_s, arrival_process=s.arrival_process,
            slo_p99_ms=s.slo_p99_ms, per_request_overhead_ms=s.per_request_overhead_ms,
            serial_overhead=s.serial_overhead, per_batch_overhead_ms=s.per_batch_overhead_ms,
            per_item_overhead_ms=s.per_item_overhead_ms, timer_slack_us=s.timer_slack_us,
            instances=s.instances, max_utilisation=s.max_utilisation, requests=s.requests,
            seed=s.seed)
        req.device = s.device_kind or (device_kind_from_results(results)
                                       if results is not None else None)
        req.target = getattr(results, "target", None) if results is not None else None
        req.what_if = list(s.what_if)
        req.replicas = s.replicas
        req.burst_size = s.burst_size
        req.closed_loop = s.closed_loop
        req.notes.extend(s.notes)
        req.objective = s.objective
        return advise(req)


def busy_queue_words(rho: float) -> str:
    """The demo's words for the queue at the busy rate, from the queue-formation ratio
    ``rho`` = lambda x S(1): at or above 1 the server falls behind and a queue forms by
    itself; below 1 it keeps up on average, yet Poisson arrivals bunch, so a queue does
    form, of the M/D/1 mean length at batch 1 (Pollaczek-Khinchine, as the decision path
    says): one plain statement, not "no queue forms, but requests wait"."""
    if rho >= 1.0:
        return f"lambda x S(1) = {rho:.2g}: a queue forms by itself"
    waiting = rho * rho / (2.0 * (1.0 - rho))
    return (f"lambda x S(1) = {rho:.2g} < 1: the server keeps up on average, yet Poisson "
            f"arrivals bunch, so a queue does form at batch 1, about {waiting:.2g} requests "
            "waiting on average (M/D/1)")


def _demo_rate(curve: Any, measured: dict[str, Any], device: str | None) -> tuple[float, str]:
    """The demo's arrival rate (:data:`DEMO_LOAD_SHARE` of one instance's batch-1
    capacity) and the note with its lesson and the headline at the busy rate."""
    from trtcheck.analyze.advice import service_model
    from trtcheck.analyze.advice import build_request

    probe = build_request(curve, measured, rate_per_s=1.0)
    s1 = service_model(probe).batch_time_ms(1, None)
    cap = 1000.0 / s1
    rate_per_s = float(f"{DEMO_LOAD_SHARE * cap:.2g}")
    busy = float(f"{DEMO_LOAD_SHARE * DEMO_BUSY_SHARE * cap:.2g}")
    try:
        # with the noise check, as `advise --from DIR --arrival-rate BUSY` answers
        # (0.2-0.5 s more on a loaded 2-core CPU, benchmarks: docs/advise.md)
        b_adv = advise_curve(curve, measured, AdviseSettings(rate_per_s=busy,
                                                             device_kind=device))
        b_head = b_adv.recommendation.summary.split(" Predicted:")[0]
    except InputError as exc:
        b_head = exc.message
    rho_busy = busy * s1 / 1000.0  # queue-formation ratio lambda x S(1) at the busy rate
    busy_queue = busy_queue_words(rho_busy)
    lesson = (f"demo: the arrival rate {rate_per_s:g} req/s is {DEMO_LOAD_SHARE:.0%} of "
              f"what one instance serves at batch 1 here (1 / S(1) = {sig(cap)} req/s, "
              "from this machine's measurement), a sparse-arrival case: no queue "
              "forms, so a batching window only adds latency and the serving layer's "
              f"per-request cost matters more. At {busy:g} req/s ({busy_queue}) the "
              f"advice would be: {b_head} (`trtcheck advise --from REPORT_DIR "
              f"--arrival-rate {busy:g}` shows why)")
    return rate_per_s, lesson


def advice_from_results(results: Any, rate_per_s: float | None = None,
                        slo_p99_ms: float | None = None, *, demo: bool = False,
                        log: Log = _log_info) -> Any:
    """Batching advice from the numbers in a results model (bench T(b), serve overheads),
    with the device wording of where T(b) was measured and the export settings (what
    ``trtcheck report --arrival-rate`` stores).

    With ``demo`` and no ``rate_per_s`` the rate comes from the measured capacity:
    :data:`DEMO_LOAD_SHARE` of one instance's batch-1 capacity (``serve``'s default
    sweep also sets its rate from the measured T(1)); the advice carries a note with the
    sparse-arrival lesson and the headline at :data:`DEMO_BUSY_SHARE` times that rate
    (with the bootstrap noise check, so it is what ``advise --arrival-rate`` at that rate
    answers).
    A demo bench too disturbed to give a monotone T(b) is flattened, and the advice
    says so.

    Args:
        results: a :class:`~trtcheck.results.Results` holding a bench run or a serve run.
        rate_per_s: arrival rate, requests/s (> 0).
        slo_p99_ms: P99 latency objective, ms, or ``None``.
        demo: take the rate from the measured capacity when ``rate_per_s`` is ``None``.
        log: progress callback.

    Returns:
        A :class:`~trtcheck.results.advice.Advice` with export settings.

    Raises:
        InputError: a rate that is not > 0, no T(b) in the results, or what
            :func:`~trtcheck.analyze.advice.advise.advise` raises.
    """
    from trtcheck.export import device_kind_from_results, export_settings, safe_model_name
    from trtcheck.analyze.advice import advice_inputs
    from trtcheck.stats import quiet_numerics

    if rate_per_s is not None:
        if not rate_per_s > 0:
            raise InputError(f"--arrival-rate must be > 0 requests per second, got "
                             f"{rate_per_s:g}", "e.g. --arrival-rate 200")
        if not results.bench and getattr(results, "serve", None) is None:
            raise InputError("--arrival-rate needs T(b): a batch sweep or a serving run in "
                             "the results",
                             "run `trtcheck report MODEL` with a bench, or `trtcheck advise "
                             "--latency-curve ...`")
        log(f"advising for {rate_per_s:g} req/s ...")
    elif not demo:
        raise InputError("an arrival rate is needed", "pass --arrival-rate REQ_PER_S")
    try:
        with quiet_numerics():  # a live server's run is calibrated from its statistics
            curve, measured = advice_inputs(results, source="this run")
    except InputError as exc:
        # the demo must advise on any machine: a bench disturbed beyond the usual
        # tolerance (a loaded 2-core CPU gave T(16) < T(4)) is flattened and said so
        run = getattr(results, "primary_bench", None)
        if not demo or run is None or "not monotone" not in exc.message:
            raise
        from trtcheck.analyze.advice import curve_from_bench
        from trtcheck.analyze.advice import overheads_from_serve

        curve = curve_from_bench(run, noise_tolerance=1.0)
        curve = curve.with_notes([f"{exc.message}: this machine's measurement is too "
                                  "disturbed to trust T(b) beyond batch 1; re-measure on a "
                                  "quiet machine before batching on it"])
        measured = {"model_name": Path(run.model_path).stem}
        if getattr(results, "serve", None) is not None:
            measured.update(overheads_from_serve(results.serve, curve))
    device = device_kind_from_results(results)
    notes = []
    if rate_per_s is None:
        rate_per_s, lesson = _demo_rate(curve, measured, device)
        notes.append(lesson)
    adv = advise_curve(curve, measured, AdviseSettings(rate_per_s=rate_per_s,
                                                       slo_p99_ms=slo_p99_ms,
                                                       device_kind=device, notes=notes))
    run = results.bench[0] if results.bench else results.serve
    name = safe_model_name(Path(run.model_path).stem)
    spec = None
    live = getattr(getattr(results, "serve", None), "live", None)
    if live is not None and isinstance(live.model_config_json, dict) and \
            live.model_config_json:  # a live server's model: its backend, tensors, max batch
        from trtcheck.export import spec_from_triton_config

        try:
            spec = spec_from_triton_config(live.model_config_json)
            name = safe_model_name(live.model_name or name)
        except InputError:
            spec = None  # an incomplete recorded configuration: settings only
    adv.export = export_settings(adv.recommendation.prediction, name, device, spec=spec,
                                 assessed_max_batch_size=max(adv.curve.points_ms, default=None))
    return adv


ADVISE_BENCH_RULE: dict[str, Any] = dict(warmup_s=0.2, warmup_min_iterations=2,
                                         min_duration_s=0.5, min_samples=20,
                                         max_duration_s=5.0)
"""The short bench ``trtcheck advise MODEL`` measures T(b) with
(:class:`~trtcheck.measure.bench.bench.StopRule` fields: seconds and counts)."""

ADVISE_RETRY_RULE: dict[str, Any] = dict(warmup_s=1.0, warmup_min_iterations=5,
                                         min_duration_s=1.0,
                                         min_samples=20, max_duration_s=10.0)
"""The longer bench measured once more when the short one gives no usable T(b)."""


def measure_latency_curve(model: str, run_options: Any, *, log: Log = _log_info
                          ) -> tuple[Any, Any]:
    """T(b) of ``model`` from a bench as ``run_options`` say (build them with
    ``base_rule=StopRule(**ADVISE_BENCH_RULE)`` for advise's short bench); a disturbed
    measurement (no monotone T(b)) is measured once more with
    :data:`ADVISE_RETRY_RULE`. Check the path first
    (:func:`trtcheck.load.model_file.check_model_path`) for one clear line on a missing
    or unreadable file.

    Returns:
        ``(curve, results)``: the :class:`~trtcheck.analyze.advice.curve.LatencyCurve` and a
        results model holding the bench run.

    Raises:
        InputError: the model cannot be run, or T(b) is still unusable.
        EnvironmentProblem: the runtime is missing.
    """
    from trtcheck.analyze.advice import curve_from_bench
    from trtcheck.measure.bench import StopRule
    from trtcheck.measure.bench import bench_model, new_results

    batch = ",".join(map(str, run_options.batch_sizes or []))
    log(f"measuring T(b) of {model} (short bench: batch {batch}) ...")
    run = bench_model(model, run_options)
    try:
        curve = curve_from_bench(run)
    except InputError as exc:  # a disturbed measurement (a busy machine): measure once more
        log(f"warning: {exc.message}; measuring again with a longer warm-up ...")
        run_options.rule = StopRule(**ADVISE_RETRY_RULE)
        run = bench_model(model, run_options)
        curve = curve_from_bench(run)
    results = new_results()
    results.bench.append(run)
    return curve, results


@dataclass
class AdviseOutcome:
    """What :func:`advise_from_source` made.

    Attributes:
        advice: the :class:`~trtcheck.results.advice.Advice` (no export settings yet).
        results: the results model T(b) came from (``None`` for a given curve).
        model_name: the model's name for the exports, made safe
            (:func:`~trtcheck.export.settings.safe_model_name`; ``"model"`` when unknown).
    """

    advice: Any
    results: Any
    model_name: str


def advise_from_source(settings: AdviseSettings, *, curve: Any = None, results: Any = None,
                       results_source: str = "results.json", model: str | None = None,
                       run_options: Any = None, log: Log = _log_info) -> AdviseOutcome:
    """Batching advice from exactly one source of T(b): a given ``curve``, a ``results``
    model (``results_source`` names it), or ``model`` measured now with ``run_options``
    (:func:`measure_latency_curve`).

    T(b) and the measured overheads of a results model come from
    :func:`~trtcheck.analyze.advice.inputs.advice_inputs` (a live Triton run without a bench is
    calibrated from the server's statistics, seeded by ``settings.seed``).

    Raises:
        UsageError: not exactly one source.
        InputError: no T(b) in the results, see also :func:`measure_latency_curve` and
            :func:`advise_curve`.
    """
    from trtcheck.export import safe_model_name
    from trtcheck.analyze.advice import advice_inputs
    from trtcheck.stats import quiet_numerics

    if sum(x is not None for x in (curve, results, model)) != 1:
        raise UsageError("give exactly one source of T(b): a model, results or a curve",
                         "pass one of curve=, results= or model= (with run_options=)")
    measured: dict[str, Any] = {}
    if curve is not None:
        name = "model"
    elif results is not None:
        with quiet_numerics():  # a live server's run is calibrated from its statistics
            curve, measured = advice_inputs(results, source=results_source,
                                            seed=settings.seed)
        name = safe_model_name(measured.get("model_name", "model"))
    else:
        assert model is not None
        curve, results = measure_latency_curve(model, run_options, log=log)
        name = safe_model_name(os.path.splitext(os.path.basename(model))[0])
    adv = advise_curve(curve, measured, settings, results)
    if results is not None and getattr(results, "serve", None) is not None \
            and model is None and not adv.serve_predictions:
        # the file's own serving run, predicted with the calibrated model beside what it
        # measured (a burst sweep included)
        from trtcheck.analyze.advice.serve_compare import predict_serve_configs

        with quiet_numerics():
            adv.serve_predictions = predict_serve_configs(results, adv)
    return AdviseOutcome(advice=adv, results=results, model_name=name)


# --------------------------------------------------------------------------- report


def load_report_policy(policy_path: str | None) -> Any:
    """The gate policy a report judges (budgets only), or ``None`` without a path.

    Raises:
        PolicyError: (exit 2) the policy cannot be read or has mistakes.
        UsageError: the policy has baseline rules (they need ``gate --baseline``).
    """
    if policy_path is None:
        return None
    from trtcheck.analyze.gate import load_policy

    policy = load_policy(policy_path)
    if policy.has_baseline_rules:
        first = next(r for r in policy.rules if r.kind == "baseline")
        raise UsageError(f"{policy.source}:{first.line}: the report judges budgets only, "
                         "and this policy has baseline rules",
                         "run `trtcheck gate RESULTS --policy POLICY --baseline BASE.json` "
                         "for them, or give the report a policy of budgets")
    return policy


def judge_results(results: Any, policy: Any = None) -> Any:
    """The verdict on ``results`` (:func:`trtcheck.analyze.derived.verdict.judge`), after the
    derived analyses are stored in them (:mod:`trtcheck.analyze.derived.derived`), with the
    budgets of ``policy`` (from :func:`load_report_policy`) judged first when one is
    given. Budgets on ``verdict.*`` are judged against the verdict without gate checks
    (a verdict does not judge itself)."""
    from trtcheck.analyze.derived import add_enqueue_bound_findings, add_serve_predictions
    from trtcheck.analyze.derived import judge

    add_enqueue_bound_findings(results)  # derived once, stored, read by the verdict
    add_serve_predictions(results)
    if policy is None:
        return judge(results)
    from trtcheck.analyze.gate import evaluate

    results.verdict = judge(results)  # what budgets on verdict.* read
    gate_report = evaluate(policy, results, results_name="this report")
    return judge(results, gate_report=gate_report, policy_name=policy.source)


def report_from_results(results: Any, output: str, *, overwrite: bool = False,
                        arrival_rate_per_s: float | None = None,
                        slo_p99_ms: float | None = None, policy: Any = None,
                        log: Log = _log_info) -> list[Path]:
    """Write the report of ``results`` into the folder ``output`` (nothing is measured):
    advice for ``arrival_rate_per_s`` when given (:func:`advice_from_results`), the
    verdict (:func:`judge_results`), then report.html, report.md, charts and
    results.json (:func:`trtcheck.report.render_report`). A folder this call made is
    removed again when it fails.

    Returns:
        The paths written.

    Raises:
        InputError: the folder cannot take a report (it holds one and ``overwrite`` is
            false, or cannot be written), or the advice failed.
    """
    from trtcheck.files import made_folders_removed_on_failure
    from trtcheck.report import check_output_dir, render_report

    with made_folders_removed_on_failure(output):
        check_output_dir(output, overwrite)  # before any work
        if arrival_rate_per_s is not None:  # analysis only: advice from the recorded numbers
            results.advice = advice_from_results(results, arrival_rate_per_s, slo_p99_ms,
                                                 log=log)
        results.verdict = judge_results(results, policy)
        return render_report(results, output, overwrite=overwrite)


@dataclass
class ReportRun:
    """What :func:`measure_report` made.

    Attributes:
        results: the results model written (with its verdict).
        written: the paths written.
        stopped: why measuring was cut short (Ctrl-C, SIGTERM), ``None`` when it was not;
            the report is then marked incomplete and has no later parts.
        precision_error: why the precision comparison is missing, when it failed after
            other parts were measured (the report was written without it).
        advice_error: why the batching advice is missing (the report was written
            without it).
    """

    results: Any
    written: list[Path]
    stopped: str | None = None
    precision_error: BaseException | None = None
    advice_error: InputError | None = None


def measure_report(model: str, run_options: Any, output: str, *, overwrite: bool = False,
                   no_bench: bool = False, serve: bool = False,
                   precisions: Sequence[str] = (), engine_input: bool = False,
                   arrival_rate_per_s: float | None = None, demo_advice: bool = False,
                   slo_p99_ms: float | None = None, policy: Any = None,
                   target: str | None = None, log: Log = _log_info) -> ReportRun:
    """Inspect and measure ``model``, then write its report into the folder ``output``.

    In order: inspection (ONNX graph, or engine/trtexec exports when ``engine_input``),
    the batch sweep (unless ``no_bench``; a dynamic batch axis sweeps
    :data:`DEFAULT_BATCHES` when ``run_options.batch_sizes`` is ``None``), the serving
    sweep (``serve``: :func:`trtcheck.measure.serving.serve.default_report_sweep`, about 25 s),
    the precision comparison (``precisions``, e.g. ``("fp16",)``, ONNX models only),
    batching advice (``arrival_rate_per_s`` in requests/s, or the demo's rate from the
    measured capacity with ``demo_advice``), the verdict and the report files. A part cut
    short by Ctrl-C/SIGTERM (:class:`KeyboardInterrupt` inside a sweep) is reported as
    measured and the later parts are skipped; a precision comparison or advice that fails
    after other parts were measured is left out and returned as the reason. A folder this
    call made is removed again when it fails.

    Args:
        model: path of an ONNX model, a TensorRT plan, or a folder of trtexec exports.
        run_options: a :class:`~trtcheck.measure.bench.runner.RunOptions` (batch sizes, shapes,
            inputs, runtime, stopping rule); its ``batch_sizes`` may be filled in.
        output: the report folder.
        target: the deployment target recorded and judged for (``tensorrt``,
            ``tensorrt_rtx``, ``onnxruntime``, ``triton``; ``None``: TensorRT).

    Raises:
        InputError: the folder cannot take a report, the model cannot be inspected or
            measured, or ``precisions`` with a model that is not ONNX (UsageError).
        EnvironmentProblem: a runtime is missing.
    """
    from trtcheck.files import made_folders_removed_on_failure
    from trtcheck.report import check_output_dir, render_report

    with made_folders_removed_on_failure(output):
        check_output_dir(output, overwrite)  # fail before measuring anything
        results = _measure(model, run_options, no_bench, engine_input, log)
        results.target = target
        stopped = next((r.incomplete for r in results.bench if r.incomplete), None)
        if serve and stopped is None:
            results.serve = _serve(model, run_options, log)
            stopped = results.serve.incomplete
        precision_error: BaseException | None = None
        if precisions and stopped is None:
            try:
                results.precision = _precision(model, run_options, precisions, engine_input,
                                               log)
            except UsageError:
                raise
            except Exception as exc:  # keep every other measurement, then say why
                if not (results.bench or results.serve):  # nothing else was measured
                    raise
                precision_error = exc
        results.incomplete = stopped
        advice_error = None
        if (arrival_rate_per_s is not None or demo_advice) and stopped is None:
            try:
                results.advice = advice_from_results(results, arrival_rate_per_s, slo_p99_ms,
                                                     demo=demo_advice, log=log)
            except InputError as exc:
                # keep every measurement: write the report without advice, then say why
                advice_error = exc
        results.verdict = judge_results(results, policy)
        written = render_report(results, output, overwrite=overwrite)
    return ReportRun(results=results, written=written, stopped=stopped,
                     precision_error=precision_error, advice_error=advice_error)


def _measure(model: str, opts: Any, no_bench: bool, engine_input: bool, log: Log) -> Any:
    """Inspection and the batch sweep of a report (the first parts of
    :func:`measure_report`)."""
    from trtcheck.measure.bench import bench_model, new_results

    results = new_results()
    if engine_input:
        from trtcheck.backends.tensorrt import inspect_plan_on_gpu
        from trtcheck.inspection.engine import inspect_engine_path

        log(f"inspecting engine {model} ...")
        runtime = opts.backend_name if opts.backend_name in ("tensorrt", "tensorrt_rtx") else None
        results.engine = inspect_engine_path(model, runtime=runtime,
                                             load_engine=inspect_plan_on_gpu)
        if results.engine.source != "plan":
            log("trtexec exports hold their own timings; nothing to benchmark")
            return results
    elif model.lower().endswith(".onnx"):
        from trtcheck.inspection.onnx import inspect_onnx

        log(f"inspecting {model} ...")
        first_shapes = {k: [1, *v[1:]] if opts.batch_sizes else v for k, v in opts.shapes.items()}
        given = frozenset(opts.values or {}) | frozenset(getattr(opts, "arrays", None) or {})
        results.inspection = inspect_onnx(model, shapes=first_shapes or None,
                                          given_inputs=given)
        if opts.batch_sizes is None and _batch_axis_dynamic(results.inspection):
            opts.batch_sizes = list(DEFAULT_BATCHES)
        if opts.batch_sizes and any(f.code == "onnx-dynamic-input-no-shape"
                                    for f in results.inspection.lints):
            # the sweep sets the batch axis: inspect at batch 1 with the shapes it will use
            from trtcheck.load.shapes import resolve_shapes

            try:
                at_one = resolve_shapes(results.inspection.inputs, first_shapes or None, 1)
            except InputError:
                at_one = None  # the bench reports the missing dims in one line
            if at_one:
                results.inspection = inspect_onnx(model, shapes=at_one, given_inputs=given)
        if opts.batch_sizes and len(opts.batch_sizes) > 1:
            from trtcheck.load.shapes import runnable_batch_sizes

            runnable, skipped = runnable_batch_sizes(results.inspection.inputs,
                                                     opts.shapes or None, opts.batch_sizes)
            if runnable and skipped:  # all refused: the bench says why in one line
                for b, why in skipped.items():
                    log(f"warning: skipping batch {b}: {why}")
                opts.batch_sizes = runnable
    if not no_bench:
        if engine_input:
            log("(a TensorRT plan runs only on a GPU with TensorRT; pass --no-bench for a "
                "header/inspection-only report)")
        log(f"benchmarking {model} at batch sizes "
            f"{','.join(map(str, opts.batch_sizes or [])) or 'as given'} ...")
        results.bench.append(bench_model(model, opts))
    return results


def _serve(model: str, opts: Any, log: Log) -> Any:
    """The report's serving sweep through the embedded dynamic batcher."""
    from trtcheck.backends.registry import open_backend
    from trtcheck.measure.bench import backend_kwargs
    from trtcheck.measure.progress import throttled
    from trtcheck.measure.serving import default_report_sweep

    log("measuring serving through the embedded dynamic batcher ...")
    backend = open_backend(model, opts.backend_name, **backend_kwargs(model, opts))
    with backend:
        progress = (opts.progress if callable(opts.progress)
                    else throttled(log) if opts.progress else None)
        return default_report_sweep(backend, progress=progress,
                                    shapes=opts.shapes or None, seed=opts.seed or 0)


def _precision(model: str, opts: Any, precisions: Sequence[str], engine_input: bool,
               log: Log) -> Any:
    """The report's precision comparison (ONNX models only)."""
    from trtcheck.measure.precision import precision_section_for_report

    if engine_input or not model.lower().endswith(".onnx"):
        raise UsageError("--precision compares variants of an ONNX model",
                         "use `trtcheck precision MODEL.onnx --candidate fp16=engine.plan` "
                         "for engines")
    precs = tuple(precisions)
    log(f"comparing precisions {', '.join(precs)} against fp32 ...")
    progress = opts.progress if callable(getattr(opts, "progress", None)) else log
    return precision_section_for_report(model, opts, precs, log=progress)


def _batch_axis_dynamic(inspection: Any) -> bool:
    """Sweep batch sizes by default: every input has a dynamic axis 0, or at least one
    input of rank >= 2 does (a batched tensor beside fixed-size parameter inputs)."""
    def dynamic0(t: Any) -> bool:
        return bool(t.shape) and not (isinstance(t.shape[0], int) and t.shape[0] > 0)

    ins = inspection.inputs
    return bool(ins) and (all(dynamic0(t) for t in ins)
                          or any(dynamic0(t) and len(t.shape) >= 2 for t in ins))
