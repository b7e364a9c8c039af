"""``trtcheck report``: inspect + measure a model and write HTML, Markdown and JSON."""

from __future__ import annotations

from typing import Any

import click

from trtcheck.cli.common import (
    check_model_file,
    comma_list,
    load_results_input,
    log,
    made_folders_removed_on_failure,
    measurement_options,
    model_path_argument,
    overwrite_option,
    refuse_results_as_model,
)

DEFAULT_OUTPUT = "trtcheck-report"
DEMO_BATCHES = [1, 2, 4, 8, 16]
DEMO_ARRIVAL_RATE = 200.0  # stands for "the demo advises" in option checks; the rate itself
# comes from the measured capacity (trtcheck.analyze.advise_results.DEMO_LOAD_SHARE)
DEFAULT_BATCHES = [1, 2, 4, 8]


@click.command("report", epilog="Exit codes: 0 ok; 2 bad input; 3 environment; 4 internal; "
                                "130 interrupted (Ctrl-C/SIGTERM: a sweep cut short is "
                                "reported as measured, marked incomplete).")
@model_path_argument(required=False)
@click.option("--demo", is_flag=True, help="Use the built-in ResNet-18 demo model (built and "
                                           "cached on first use).")
@click.option("--from", "from_json", default=None, type=click.Path(path_type=str),
              help="Render from an existing results.json (or a report folder); nothing is "
                   "measured.")
@click.option("-o", "--output", "output", default=DEFAULT_OUTPUT, show_default=True,
              type=click.Path(file_okay=False, path_type=str),
              help="Output directory for report.html, report.md, charts/ and results.json.")
@overwrite_option("Replace a report already in the output directory.")
@click.option("--no-bench", is_flag=True, help="Inspect only; skip the latency sweep.")
@click.option("--precision", "precisions", default=None, metavar="LIST",
              help="Also compare reduced-precision variants of an ONNX model against FP32, "
                   "comma-separated, e.g. fp16 (see `trtcheck precision`).")
@click.option("--serve/--no-serve", "serve", default=None,
              help="Also measure serving through the embedded dynamic batcher: windows "
                   "0/2/10 ms at max batch 8 for a burst and open loops at 30% and 70% "
                   "of one instance's batch-1 capacity (about 25 s; see `trtcheck serve` for full sweeps) "
                   "[default: on with --demo, else off].")
@click.option("--arrival-rate", type=float, default=None, metavar="REQ_PER_S",
              help="Add batching advice for this arrival rate (> 0, <= 1e9 req/s), from "
                   "the measured T(b) "
                   "(and serving overheads when measured); works with --from too "
                   "[default with --demo: 10% of one instance's measured batch-1 "
                   "capacity].")
@click.option("--slo-p99-ms", type=float, default=None,
              help="P99 latency objective for the advice, in ms (> 0, <= 1e7).")
@click.option("--policy", "policy_path", default=None, type=click.Path(path_type=str),
              help="Also judge the budgets of this gate policy (see `trtcheck gate`); a "
                   "failed budget makes the verdict 'not ready'. Baseline rules need "
                   "`trtcheck gate --baseline`.")
@measurement_options
def cli(model: str | None, demo: bool, from_json: str | None, output: str, overwrite: bool,
        no_bench: bool, precisions: str | None, serve: bool | None,
        arrival_rate: float | None, slo_p99_ms: float | None, policy_path: str | None,
        **measure: Any) -> None:
    """Write a health report for MODEL (or --demo, or --from results.json).

    Runs inspection and a batch-size sweep, then renders report.html (self-contained,
    works offline, with charts), report.md (charts as PNG files) and results.json, all
    from the results model alone: `trtcheck report --from results.json -o DIR`
    reproduces the report without running anything.

    \b
    Every report opens with a verdict (ready, ready with warnings, cannot tell, not
    ready) and the reasons that decided it; the verdict is printed on stdout too and
    stored in results.json (`verdict.status`, gateable). Rules: docs/verdict.md.

    \b
    --demo runs everything on the built-in ResNet-18 (22-34 s measured on 2 cores):
    inspection, batch sweep 1..16, serving sweep, FP16 comparison and batching advice
    at 200 req/s. Turn parts off with --no-serve and --precision none.
    """
    import os

    from trtcheck.errors import InputError, UsageError
    from trtcheck.report import check_output_dir, render_report

    refuse_results_as_model(model, "re-render its report")
    chosen = [x for x in (model is not None, demo, from_json is not None) if x]
    if len(chosen) != 1:
        raise UsageError("give exactly one of MODEL, --demo or --from results.json",
                         "e.g. trtcheck report --demo, or trtcheck report model.onnx -o out")
    from trtcheck.cli.common import refuse_output_over_inputs, results_input_file
    from trtcheck.report import report_output_files

    refuse_output_over_inputs(
        [("-o", f) for f in report_output_files(output)],
        [("MODEL", model), ("--from", results_input_file(from_json)),
         ("--inputs", measure.get("inputs_npz")), ("--policy", policy_path)])
    policy = _load_report_policy(policy_path)  # before any work: a bad policy exits 2
    _check_advice_options(arrival_rate if not demo else arrival_rate or DEMO_ARRIVAL_RATE,
                          slo_p99_ms)
    if from_json is not None:
        ctx = click.get_current_context()
        measuring = {"no_bench", "precisions", "serve", "percentile_method", *measure}
        given = [max(p.opts, key=len) for p in ctx.command.params if p.name in measuring
                 and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]
        if given:  # nothing is measured with --from: say so rather than ignore them
            raise UsageError(f"{', '.join(given)} measure(s) a model, but --from only "
                             "re-renders a results file", "drop them, or run "
                             "`trtcheck report MODEL ...` to measure again")

        results = load_results_input(from_json)  # a report folder: its results.json
        from trtcheck.measure.interrupt import sigterm_as_interrupt

        with sigterm_as_interrupt(), made_folders_removed_on_failure(output):
            check_output_dir(output, overwrite)  # before any work
            if arrival_rate is not None:  # analysis only: advice from the recorded numbers
                results.advice = _advice(results, arrival_rate, slo_p99_ms)
            results.verdict = _verdict(results, policy)
            written = render_report(results, output, overwrite=overwrite)
        _announce(written)
        _print_verdict(results, written)
        return

    from trtcheck.cli.options_build import run_options_from_cli
    from trtcheck.measure.bench import StopRule

    base_rule = StopRule(warmup_s=0.3, warmup_min_iterations=3, min_duration_s=1.0,
                         min_samples=30, max_duration_s=10.0) if demo else None
    opts = run_options_from_cli(**measure, base_rule=base_rule)
    explicit_rate = arrival_rate  # the demo's default rate is not the user's request
    if demo:
        from trtcheck.load.demo import demo_model_path

        from trtcheck.backends.onnxruntime import import_onnxruntime

        import_onnxruntime()  # the demo runs on ONNX Runtime: say so before any work
        log("building/loading the demo ResNet-18 ...")
        model = str(demo_model_path())
        if opts.batch_sizes is None:
            opts.batch_sizes = list(DEMO_BATCHES)
        serve = True if serve is None else serve
        precisions = "fp16" if precisions is None else precisions
        arrival_rate = DEMO_ARRIVAL_RATE if arrival_rate is None else arrival_rate
    if precisions is not None and precisions.strip().lower() in ("none", ""):
        precisions = None
    if precisions is not None:  # before anything is measured
        from trtcheck.cli.common import refuse_duplicates

        refuse_duplicates("--precision", comma_list(precisions, lower=True), "fp16")
    if arrival_rate is not None and no_bench:
        raise UsageError("--arrival-rate needs the batch sweep (T(b)), but --no-bench skips it",
                         "drop --no-bench, or run `trtcheck advise` with --latency-curve")
    if no_bench and not serve and not precisions:
        # nothing is timed: options of the batch sweep would be silently ignored
        ctx = click.get_current_context()
        sweep_only = {"batch", "warmup_s", "min_duration_s", "min_samples", "max_duration_s",
                      "cuda_graph"}
        given = [max(p.opts, key=len) for p in ctx.command.params if p.name in sweep_only
                 and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]
        if given:
            raise UsageError(f"{', '.join(given)} set(s) the batch sweep, which --no-bench "
                             "skips", "drop them, or drop --no-bench")
    assert model is not None
    from trtcheck.inspection.engine import is_engine_input

    engine_input = os.path.exists(model) and is_engine_input(model)
    if not engine_input:
        check_model_file(model)
    elif arrival_rate is not None and os.path.isdir(model):
        # trtexec exports hold per-layer timings of one engine at one shape, not T(b)
        raise UsageError(
            f"--arrival-rate needs T(b), which the trtexec exports in {model} do not hold "
            "(per-layer timings at one shape)",
            "measure the engine with `trtcheck bench PLAN --batch 1,8,32` and advise "
            "--from that, or run `trtcheck advise --latency-curve B:MS,...`")
    from trtcheck.measure.interrupt import sigterm_as_interrupt

    # Ctrl-C or SIGTERM: a sweep that was cut short is reported as it is (marked
    # incomplete); one cut short elsewhere leaves no output folder behind
    with sigterm_as_interrupt(), made_folders_removed_on_failure(output):
        check_output_dir(output, overwrite)  # fail before measuring anything
        results = _measure(model, opts, no_bench, engine_input)
        stopped = next((r.incomplete for r in results.bench if r.incomplete), None)
        if serve and stopped is None:
            results.serve = _serve(model, opts)
            stopped = results.serve.incomplete
        precision_error: BaseException | None = None
        if precisions and stopped is None:
            try:
                results.precision = _precision(model, opts, precisions, engine_input)
            except UsageError:
                raise
            except Exception as exc:  # keep every other measurement, then say why
                if not (results.bench or results.serve):  # nothing else was measured
                    raise
                precision_error = exc
        results.incomplete = stopped
        advice_error = None
        if arrival_rate is not None and stopped is None:
            try:
                if demo and explicit_rate is None:  # the rate from the measured capacity
                    from trtcheck.analyze.advise_results import advise_from_results

                    results.advice = advise_from_results(results, None, slo_p99_ms, demo=True)
                else:
                    results.advice = _advice(results, arrival_rate, slo_p99_ms)
            except InputError as exc:
                # keep every measurement: write the report without advice, then say why
                advice_error = exc
        results.verdict = _verdict(results, policy)
        written = render_report(results, output, overwrite=overwrite)
    _announce(written)
    if demo and explicit_rate is None and results.advice is not None:
        lesson = next((n for n in results.advice.curve.notes if n.startswith("demo: ")), None)
        if lesson:  # the demo's point, also where the user is looking
            log(lesson)
    _print_verdict(results, written)
    if stopped is not None:
        log(f"{stopped}; the report is marked incomplete")
        raise click.exceptions.Exit(130)
    if precision_error is not None:
        _raise_without(precision_error, "the precision comparison")
    if advice_error is not None:
        if demo and explicit_rate is None:
            log(f"warning: no batching advice in this report: {advice_error.message}")
            return
        hint = advice_error.hint or "re-measure on a quieter machine"
        raise InputError(f"the report was written without batching advice: "
                         f"{advice_error.message}",
                         f"{hint}; then add the advice with "
                         f"`trtcheck report --from {os.path.join(output, 'results.json')} "
                         f"--arrival-rate {arrival_rate:g} -o NEW_DIR`")


def _measure(model: str, opts: Any, no_bench: bool, engine_input: bool = False) -> Any:
    from trtcheck.measure.runner import bench_model, new_results

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
        from trtcheck.inspection.onnx_inspect import inspect_onnx

        log(f"inspecting {model} ...")
        first_shapes = {k: [1, *v[1:]] if opts.batch_sizes else v for k, v in opts.shapes.items()}
        results.inspection = inspect_onnx(model, shapes=first_shapes or None)
        if opts.batch_sizes is None and _batch_axis_dynamic(results.inspection):
            opts.batch_sizes = list(DEFAULT_BATCHES)
        if opts.batch_sizes and any(f.code == "onnx-dynamic-input-no-shape"
                                    for f in results.inspection.lints):
            # the sweep sets the batch axis: inspect at batch 1 with the shapes it will use
            from trtcheck.errors import InputError
            from trtcheck.load.shapes import resolve_shapes

            try:
                at_one = resolve_shapes(results.inspection.inputs, first_shapes or None, 1)
            except InputError:
                at_one = None  # the bench reports the missing dims in one line
            if at_one:
                results.inspection = inspect_onnx(model, shapes=at_one)
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


def _serve(model: str, opts: Any) -> Any:
    from trtcheck.backends.registry import open_backend
    from trtcheck.measure.runner import backend_kwargs
    from trtcheck.measure.serve import default_report_sweep

    log("measuring serving through the embedded dynamic batcher (about 25 s) ...")
    backend = open_backend(model, opts.backend_name, **backend_kwargs(model, opts))
    with backend:
        from trtcheck.cli.common import throttled

        return default_report_sweep(backend, progress=throttled(log) if opts.progress else None,
                                    shapes=opts.shapes or None, seed=opts.seed or 0)


def _raise_without(exc: BaseException, part: str) -> None:
    """Raise ``exc`` again after the report was written without ``part``: a typed error
    keeps its exit code with the message saying what the report lacks; anything else (a
    bug) is raised as it is (exit 4), the report being written all the same."""
    from trtcheck.errors import EnvironmentProblem, InputError, TrtcheckError

    if not isinstance(exc, TrtcheckError):
        raise exc
    cls = EnvironmentProblem if isinstance(exc, EnvironmentProblem) else InputError
    raise cls(f"the report was written without {part}: {exc.message}", exc.hint) from None


def _precision(model: str, opts: Any, precisions: str, engine_input: bool) -> Any:
    from trtcheck.errors import UsageError
    from trtcheck.measure.precision import precision_section_for_report

    if engine_input or not model.lower().endswith(".onnx"):
        raise UsageError("--precision compares variants of an ONNX model",
                         "use `trtcheck precision MODEL.onnx --candidate fp16=engine.plan` "
                         "for engines")
    precs = tuple(comma_list(precisions, lower=True))
    log(f"comparing precisions {', '.join(precs)} against fp32 ...")
    return precision_section_for_report(model, opts, precs, log=log)


def _check_advice_options(arrival_rate: float | None, slo_p99_ms: float | None) -> None:
    """Before anything is measured: the advice options are usable and none is ignored.

    Raises:
        UsageError: ``--slo-p99-ms`` without an arrival rate (it would be ignored), or a
            rate/objective that is not a finite number > 0 (InputError), or above
            :data:`~trtcheck.cli.common.MAX_ARRIVAL_RATE_PER_S` req/s /
            :data:`~trtcheck.cli.common.MAX_DURATION_MS` ms.
    """
    from trtcheck.cli.common import MAX_ARRIVAL_RATE_PER_S, MAX_DURATION_MS, check_number
    from trtcheck.errors import UsageError

    if slo_p99_ms is not None and arrival_rate is None:
        raise UsageError("--slo-p99-ms applies to the batching advice, which needs "
                         "--arrival-rate", "add --arrival-rate REQ_PER_S, or drop --slo-p99-ms")
    check_number("--arrival-rate", arrival_rate, low=0.0, low_open=True,
                 high=MAX_ARRIVAL_RATE_PER_S, unit=" req/s", example="200")
    check_number("--slo-p99-ms", slo_p99_ms, low=0.0, low_open=True, high=MAX_DURATION_MS,
                 unit=" ms", example="50")


def _advice(results: Any, arrival_rate: float, slo_p99_ms: float | None) -> Any:
    """Batching advice from the results alone (the bench curve, serve overheads if any)."""
    from pathlib import Path

    from trtcheck.analyze.advise import advise
    from trtcheck.analyze.export import (
        device_kind_from_results,
        export_settings,
        safe_model_name,
    )
    from trtcheck.analyze.inputs import advice_inputs, build_request
    from trtcheck.cli.common import quiet_numerics
    from trtcheck.errors import InputError

    if not arrival_rate > 0:
        raise InputError(f"--arrival-rate must be > 0 requests per second, got {arrival_rate:g}",
                         "e.g. --arrival-rate 200")
    if not results.bench and getattr(results, "serve", None) is None:
        raise InputError("--arrival-rate needs T(b): a batch sweep or a serving run in the "
                         "results",
                         "run `trtcheck report MODEL` with a bench, or `trtcheck advise "
                         "--latency-curve ...`")
    log(f"advising for {arrival_rate:g} req/s ...")
    with quiet_numerics():  # a live server's run is calibrated from its statistics
        curve, measured = advice_inputs(results, source="this run")
    req = build_request(curve, measured, rate_per_s=arrival_rate, slo_p99_ms=slo_p99_ms)
    req.device = device_kind_from_results(results)  # GPU or CPU wording
    adv = advise(req)
    src = results.bench[0].model_path if results.bench else results.serve.model_path
    name = safe_model_name(Path(src).stem)
    adv.export = export_settings(adv.recommendation.prediction, name,
                                 device_kind_from_results(results))
    return adv


def _load_report_policy(policy_path: str | None) -> Any:
    """The gate policy of ``--policy`` (budgets only), or ``None``.

    Raises:
        PolicyError: (exit 2) the policy cannot be read or has mistakes.
        UsageError: the policy has baseline rules (they need ``gate --baseline``).
    """
    if policy_path is None:
        return None
    from trtcheck.analyze.gate_policy import load_policy
    from trtcheck.errors import UsageError

    policy = load_policy(policy_path)
    if policy.has_baseline_rules:
        first = next(r for r in policy.rules if r.kind == "baseline")
        raise UsageError(f"{policy.source}:{first.line}: the report judges budgets only, "
                         "and this policy has baseline rules",
                         "run `trtcheck gate RESULTS --policy POLICY --baseline BASE.json` "
                         "for them, or give the report a policy of budgets")
    return policy


def _verdict(results: Any, policy: Any) -> Any:
    """The verdict on ``results`` (:func:`trtcheck.analyze.verdict.judge`), after the
    derived analyses are stored in them (:mod:`trtcheck.analyze.derived`), with the
    budgets of ``policy`` judged first when one is given. Budgets on ``verdict.*`` are
    judged against the verdict without gate checks (a verdict does not judge itself)."""
    from trtcheck.analyze.derived import add_enqueue_bound_findings, add_serve_predictions
    from trtcheck.analyze.verdict import judge

    add_enqueue_bound_findings(results)  # derived once, stored, read by the verdict
    add_serve_predictions(results)
    if policy is None:
        return judge(results)
    from trtcheck.analyze.gate_evaluate import evaluate

    results.verdict = judge(results)  # what budgets on verdict.* read
    gate_report = evaluate(policy, results, results_name="this report")
    return judge(results, gate_report=gate_report, policy_name=policy.source)


def _print_verdict(results: Any, written: list[Any]) -> None:
    """The verdict on stdout (the report files are announced on stderr)."""
    from trtcheck.cli.common import echo_text
    from trtcheck.report.verdict import render_verdict_text

    html = next((str(p) for p in written if p.name == "report.html"), None)
    echo_text(render_verdict_text(results.verdict, report_html=html), nl=False)


def _batch_axis_dynamic(inspection: Any) -> bool:
    """Sweep batch sizes by default: every input has a dynamic axis 0, or at least one
    input of rank >= 2 does (a batched tensor beside fixed-size parameter inputs)."""
    def dynamic0(t: Any) -> bool:
        return bool(t.shape) and not (isinstance(t.shape[0], int) and t.shape[0] > 0)

    ins = inspection.inputs
    return bool(ins) and (all(dynamic0(t) for t in ins)
                          or any(dynamic0(t) and len(t.shape) >= 2 for t in ins))


def _announce(written: list[Any]) -> None:
    for p in written:
        if p.name in ("report.html", "report.md", "results.json"):
            log(f"wrote {p}")
