"""``trtcheck report``: inspect + measure a model and write HTML, Markdown and JSON."""

from __future__ import annotations

from typing import Any

import click

from trtcheck.cli.common import log, measurement_options, model_path_argument
from trtcheck.cli.options_report import (
    check_advice_options,
    check_report_sources,
    refuse_measuring_options,
    refuse_sweep_options,
    report_options,
)
from trtcheck.load.model_file import check_model_path
from trtcheck.measure.interrupt import sigterm_as_interrupt
from trtcheck.pipeline import load_report_policy, measure_report, report_from_results
from trtcheck.pipeline.report_inputs import (
    DEMO_ARRIVAL_RATE_PER_S,
    DEMO_BATCHES,
    demo_lesson,
    demo_report_model,
    demo_stop_rule,
    is_report_engine_input,
    raise_without,
    without_advice_error,
)
from trtcheck.results.documents import load_results_input


@click.command("report", epilog="Exit codes: 0 ok; 2 bad input; 3 environment; 4 internal; "
                                "130 interrupted (Ctrl-C/SIGTERM: a sweep cut short is "
                                "reported as measured, marked incomplete).")
@model_path_argument(required=False)
@report_options
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
    from trtcheck.errors import UsageError

    check_report_sources(model, demo, from_json, output, measure.get("inputs_npz"),
                         policy_path)
    policy = load_report_policy(policy_path)  # before any work: a bad policy exits 2
    check_advice_options(arrival_rate if not demo else arrival_rate or DEMO_ARRIVAL_RATE_PER_S,
                         slo_p99_ms)
    if from_json is not None:
        refuse_measuring_options(set(measure))
        results = load_results_input(from_json)  # a report folder: its results.json
        if target is not None:
            results.target = target
        with sigterm_as_interrupt():
            written = report_from_results(results, output, overwrite=overwrite,
                                          arrival_rate_per_s=arrival_rate,
                                          slo_p99_ms=slo_p99_ms, policy=policy, log=log)
        _show(results, written)
        return

    from trtcheck.cli.options_build import run_options_from_cli

    opts = run_options_from_cli(**measure, base_rule=demo_stop_rule() if demo else None)
    explicit_rate = arrival_rate  # the demo's default rate is not the user's request
    if demo:
        model = demo_report_model(log)  # ONNX Runtime missing: said before any work
        if opts.batch_sizes is None:
            opts.batch_sizes = list(DEMO_BATCHES)
        serve = True if serve is None else serve
        precisions = ["fp16"] if precisions is None else precisions
        arrival_rate = DEMO_ARRIVAL_RATE_PER_S if arrival_rate is None else arrival_rate
    if precisions in ([], ["none"]):
        precisions = None
    if arrival_rate is not None and no_bench:
        raise UsageError("--arrival-rate needs the batch sweep (T(b)), but --no-bench skips it",
                         "drop --no-bench, or run `trtcheck advise` with --latency-curve")
    if no_bench and not serve and not precisions:  # nothing is timed
        refuse_sweep_options()
    assert model is not None
    engine_input = is_report_engine_input(model, arrival_rate)
    if not engine_input:
        check_model_path(model)
    # Ctrl-C or SIGTERM: a sweep that was cut short is reported as it is (marked
    # incomplete); one cut short elsewhere leaves no output folder behind
    demo_advice = demo and explicit_rate is None  # the rate from the measured capacity
    with sigterm_as_interrupt():
        run = measure_report(model, opts, output, overwrite=overwrite, no_bench=no_bench,
                             serve=bool(serve), precisions=precisions or (),
                             engine_input=engine_input,
                             arrival_rate_per_s=None if demo_advice else arrival_rate,
                             demo_advice=demo_advice, slo_p99_ms=slo_p99_ms, policy=policy,
                             target=target, log=log)
    results, written, stopped = run.results, run.written, run.stopped
    precision_error, advice_error = run.precision_error, run.advice_error
    _announce(written)
    lesson = demo_lesson(results) if demo_advice else None
    if lesson:  # the demo's point, also where the user is looking
        log(lesson)
    _print_verdict(results, written)
    if stopped is not None:
        log(f"{stopped}; the report is marked incomplete")
        raise click.exceptions.Exit(130)
    if precision_error is not None:
        raise_without(precision_error, "the precision comparison")
    if advice_error is not None:
        if demo_advice:
            log(f"warning: no batching advice in this report: {advice_error.message}")
            return
        assert arrival_rate is not None  # the advice was asked for
        raise without_advice_error(advice_error, output, arrival_rate)


def _print_verdict(results: Any, written: list[Any]) -> None:
    """The verdict on stdout (the report files are announced on stderr)."""
    from trtcheck.cli.common import echo_text
    from trtcheck.report.verdict import render_verdict_text

    html = next((str(p) for p in written if p.name == "report.html"), None)
    echo_text(render_verdict_text(results.verdict, report_html=html), nl=False)


def _show(results: Any, written: list[Any]) -> None:
    """The written files on stderr, then the verdict on stdout."""
    _announce(written)
    _print_verdict(results, written)


def _announce(written: list[Any]) -> None:
    for p in written:
        if p.name in ("report.html", "report.md", "results.json"):
            log(f"wrote {p}")
