"""``trtcheck report``: inspect + measure a model and write HTML, Markdown and JSON."""

from __future__ import annotations

from typing import Any

import click

from trtcheck.cli.common import (
    log,
    measurement_options,
    model_path_argument,
    overwrite_option,
    refuse_results_as_model,
)
from trtcheck.cli.options import CommaList
from trtcheck.load.model_file import check_model_path
from trtcheck.pipeline import load_report_policy, measure_report, report_from_results
from trtcheck.results.documents import load_results_input, results_input_file

DEFAULT_OUTPUT = "trtcheck-report"
DEMO_BATCHES = [1, 2, 4, 8, 16]
DEMO_ARRIVAL_RATE = 200.0  # stands for "the demo advises" in option checks; the rate itself
# comes from the measured capacity (trtcheck.pipeline.DEMO_LOAD_SHARE)


@click.command("report", epilog="Exit codes: 0 ok; 2 bad input; 3 environment; 4 internal; "
                                "130 interrupted (Ctrl-C/SIGTERM: a sweep cut short is "
                                "reported as measured, marked incomplete).")
@model_path_argument(required=False)
@click.option("--demo", is_flag=True, help="Use the built-in ResNet-18 demo model (built and "
                                           "cached on first use).")
@click.option("--from", "from_json", default=None, type=click.Path(path_type=str),
              help="Render from an existing results.json (or a report folder, a "
                   "perf_analyzer -f CSV, a Triton /v2/models/NAME/stats JSON); nothing is "
                   "measured.")
@click.option("-o", "--output", "output", default=DEFAULT_OUTPUT, show_default=True,
              type=click.Path(file_okay=False, path_type=str),
              help="Output directory for report.html, report.md, charts/ and results.json.")
@overwrite_option("Replace a report already in the output directory.")
@click.option("--no-bench", is_flag=True, help="Inspect only; skip the latency sweep.")
@click.option("--precision", "precisions", default=None, metavar="LIST",
              type=CommaList(lower=True, example="fp16"),
              help="Also compare reduced-precision variants of an ONNX model against FP32, "
                   "comma-separated, e.g. fp16 (see `trtcheck precision`).")
@click.option("--serve/--no-serve", "serve", default=None,
              help="Also measure serving through the embedded dynamic batcher: windows "
                   "0/2/10 ms at max batch 8 for a burst and open loops at 30% and 70% "
                   "of one instance's batch-1 capacity (for the demo 35 s, measured on a "
                   "shared 2-core VM at load 6-12; see `trtcheck serve` for full sweeps) "
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
@click.option("--target", "target", default=None,
              type=click.Choice(["tensorrt", "tensorrt_rtx", "onnxruntime", "triton"]),
              help="The runtime you deploy on: the verdict and every finding are judged for "
                   "it, findings about another runtime become notes (e.g. 'TensorRT could "
                   "not build it' for --target onnxruntime). Recorded in results.json "
                   "(`target`). Default: tensorrt, or the target a --from file recorded.")
@measurement_options
def cli(model: str | None, demo: bool, from_json: str | None, output: str, overwrite: bool,
        no_bench: bool, precisions: list[str] | None, serve: bool | None,
        arrival_rate: float | None, slo_p99_ms: float | None, policy_path: str | None,
        target: str | None, **measure: Any) -> None:
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
    --demo runs everything on the built-in ResNet-18 (144 s measured on a shared 2-core
    VM at load 6-12): inspection, batch sweep 1..16, serving sweep, FP16 comparison and
    batching advice at 10% of one instance's measured batch-1 capacity (0.84 req/s in
    that run). Turn parts off with --no-serve and --precision none.
    """
    import os

    from trtcheck.errors import InputError, UsageError

    refuse_results_as_model(model, "re-render its report")
    chosen = [x for x in (model is not None, demo, from_json is not None) if x]
    if len(chosen) != 1:
        raise UsageError("give exactly one of MODEL, --demo or --from results.json",
                         "e.g. trtcheck report --demo, or trtcheck report model.onnx -o out")
    from trtcheck.cli.common import refuse_output_over_inputs
    from trtcheck.report import report_output_files

    refuse_output_over_inputs(
        [("-o", f) for f in report_output_files(output)],
        [("MODEL", model), ("--from", results_input_file(from_json)),
         ("--inputs", measure.get("inputs_npz")), ("--policy", policy_path)])
    policy = load_report_policy(policy_path)  # before any work: a bad policy exits 2
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
        if target is not None:
            results.target = target
        from trtcheck.measure.interrupt import sigterm_as_interrupt

        with sigterm_as_interrupt():
            written = report_from_results(results, output, overwrite=overwrite,
                                          arrival_rate_per_s=arrival_rate,
                                          slo_p99_ms=slo_p99_ms, policy=policy, log=log)
        _announce(written)
        _print_verdict(results, written)
        return

    from trtcheck.cli.options_build import run_options_from_cli
    from trtcheck.measure.bench import StopRule

    base_rule = StopRule(warmup_s=0.3, warmup_min_iterations=3, min_duration_s=1.0,
                         min_samples=30, max_duration_s=10.0,
                         precision_bound_s=5.0) if demo else None
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
        precisions = ["fp16"] if precisions is None else precisions
        arrival_rate = DEMO_ARRIVAL_RATE if arrival_rate is None else arrival_rate
    if precisions in ([], ["none"]):
        precisions = None
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
        check_model_path(model)
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
    demo_advice = demo and explicit_rate is None  # the rate from the measured capacity
    with sigterm_as_interrupt():
        run = measure_report(model, opts, output, overwrite=overwrite, no_bench=no_bench,
                             serve=bool(serve),
                             precisions=precisions or (),
                             engine_input=engine_input,
                             arrival_rate_per_s=None if demo_advice else arrival_rate,
                             demo_advice=demo_advice, slo_p99_ms=slo_p99_ms, policy=policy,
                             target=target, log=log)
    results, written, stopped = run.results, run.written, run.stopped
    precision_error, advice_error = run.precision_error, run.advice_error
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


def _raise_without(exc: BaseException, part: str) -> None:
    """Raise ``exc`` again after the report was written without ``part``: a typed error
    keeps its exit code with the message saying what the report lacks; anything else (a
    bug) is raised as it is (exit 4), the report being written all the same."""
    from trtcheck.errors import EnvironmentProblem, InputError, TrtcheckError

    if not isinstance(exc, TrtcheckError):
        raise exc
    cls = EnvironmentProblem if isinstance(exc, EnvironmentProblem) else InputError
    raise cls(f"the report was written without {part}: {exc.message}", exc.hint) from None


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


def _print_verdict(results: Any, written: list[Any]) -> None:
    """The verdict on stdout (the report files are announced on stderr)."""
    from trtcheck.cli.common import echo_text
    from trtcheck.report.verdict import render_verdict_text

    html = next((str(p) for p in written if p.name == "report.html"), None)
    echo_text(render_verdict_text(results.verdict, report_html=html), nl=False)


def _announce(written: list[Any]) -> None:
    for p in written:
        if p.name in ("report.html", "report.md", "results.json"):
            log(f"wrote {p}")
