"""``trtcheck bench``: latency and throughput across batch sizes."""

from __future__ import annotations

from typing import Any

import click

from trtcheck.cli.common import (
    OutputFormat,
    check_output_file,
    emit_results,
    format_option,
    log,
    measurement_options,
    model_path_argument,
    overwrite_option,
    refuse_output_over_inputs,
)
from trtcheck.load.model_file import check_model_path
from trtcheck.report.text_tables import bench_table_text  # noqa: F401  (re-exported)


@click.command("bench", epilog="Exit codes: 0 ok; 2 bad input; 3 environment; 4 internal; "
                               "130 interrupted (Ctrl-C/SIGTERM: what finished is written, "
                               "marked incomplete).")
@model_path_argument()
@measurement_options
@click.option("-o", "--output", "output", default=None, type=click.Path(dir_okay=False),
              help="Save the results JSON here.")
@overwrite_option()
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
def cli(model: str, output: str | None, overwrite: bool, output_format: str,
        **measure: Any) -> None:
    """Measure latency and throughput of MODEL at each batch size.

    Per batch size: warm up, then measure until both --min-duration and --min-samples
    are reached; report median, p90/p95/p99, spread, throughput in queries/s (executions)
    and samples/s, scaling vs batch 1, and stability warnings with a remedy.
    """

    from trtcheck.cli.options_build import run_options_from_cli
    from trtcheck.measure.bench import bench_model, new_results

    refuse_output_over_inputs([("-o", output)], [("MODEL", model),
                                                  ("--inputs", measure.get("inputs_npz"))])
    check_model_path(model)
    opts = run_options_from_cli(**measure)
    check_output_file(output, overwrite)
    from trtcheck.measure.interrupt import sigterm_as_interrupt

    log(f"benchmarking {model} ...")
    with sigterm_as_interrupt():
        run = bench_model(model, opts)  # Ctrl-C / SIGTERM: the finished batch sizes
    results = new_results()
    results.bench.append(run)
    results.incomplete = run.incomplete
    from trtcheck.analyze.derived import add_enqueue_bound_findings
    from trtcheck.report.sec_bench import bench_markdown

    add_enqueue_bound_findings(results)  # stored in the results, gateable

    emit_results(results, output, output_format, lambda: bench_table_text(run),
                 lambda: bench_markdown(results))
    if run.incomplete:
        log(f"{run.incomplete}; the results are marked incomplete")
        raise click.exceptions.Exit(130)
