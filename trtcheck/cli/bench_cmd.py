"""``trtcheck bench``: latency and throughput across batch sizes."""

from __future__ import annotations

from typing import Any

import click

from trtcheck.cli.common import (
    OutputFormat,
    check_model_file,
    check_output_file,
    emit_results,
    format_option,
    log,
    measurement_options,
    model_path_argument,
    refuse_output_over_inputs,
)


def bench_table_text(run: Any) -> str:
    """A plain-text table of a :class:`~trtcheck.results.BenchRun`."""
    head = (f"{'batch':>5} {'median_ms':>10} {'p90_ms':>9} {'p99_ms':>9} {'cv':>6} "
            f"{'queries/s':>10} {'samples/s':>10} {'gain':>6} {'eff':>5} {'n':>6}")
    lines = [f"model:   {run.model_path}",
             f"backend: {run.backend.name} {run.backend.version} on {run.backend.device} "
             f"({run.backend.precision}; {', '.join(run.backend.providers) or '-'})",
             head, "-" * len(head)]
    warnings: list[str] = []
    for b in run.batches:
        s = b.stats
        gain = f"{b.throughput_gain_vs_batch1:.2f}" if b.throughput_gain_vs_batch1 else "-"
        eff = f"{b.scaling_efficiency:.2f}" if b.scaling_efficiency else "-"
        lines.append(f"{b.batch_size:>5} {s.median_ms:>10.3f} {s.p90_ms:>9.3f} {s.p99_ms:>9.3f} "
                     f"{s.cv:>6.1%} {b.throughput_queries_per_s:>10.1f} "
                     f"{b.throughput_samples_per_s:>10.1f} {gain:>6} {eff:>5} {s.count:>6}")
        for w in b.warnings:
            if w.severity != "info":
                warnings.append(f"warning [{w.where}] {w.message}; {w.remedy or ''}".rstrip("; "))
    for f in getattr(run, "failed_batches", []):
        what = "out of memory" if f.reason == "out-of-memory" else "failed"
        lines.append(f"{f.batch_size:>5} {what} at batch {f.batch_size}: {f.message}")
    firsts = [(b.batch_size, b.first_call_ms) for b in run.batches if b.first_call_ms is not None]
    if firsts:
        lines.append("warm-up (not in the samples): first call " + ", ".join(
            f"{ms:.3f} ms at batch {bs}" for bs, ms in firsts))
    for b in run.batches:
        for v in b.validity:
            if v.severity == "error":
                warnings.append(f"error [{v.where}] {v.message}; {v.remedy or ''}".rstrip("; "))
    if getattr(run, "incomplete", None):
        warnings.append(f"incomplete: {run.incomplete}")
    infos = sorted({w.message.split(' samples')[0] for b in run.batches for w in b.warnings
                    if w.code == "p99-not-certified"})
    if infos:
        warnings.append("info: p99 is not certified at these sample counts (MLPerf early "
                        "stopping needs >= 459); raise --min-samples to gate on p99")
    return "\n".join(lines + warnings)


@click.command("bench", epilog="Exit codes: 0 ok; 2 bad input; 3 environment; 4 internal; "
                               "130 interrupted (Ctrl-C/SIGTERM: what finished is written, "
                               "marked incomplete).")
@model_path_argument()
@measurement_options
@click.option("-o", "--output", "output", default=None, type=click.Path(dir_okay=False),
              help="Save the results JSON here.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --output file.")
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
def cli(model: str, output: str | None, overwrite: bool, output_format: str,
        **measure: Any) -> None:
    """Measure latency and throughput of MODEL at each batch size.

    Per batch size: warm up, then measure until both --min-duration and --min-samples
    are reached; report median, p90/p95/p99, spread, throughput in queries/s (executions)
    and samples/s, scaling vs batch 1, and stability warnings with a remedy.
    """

    from trtcheck.cli.options_build import run_options_from_cli
    from trtcheck.measure.runner import bench_model, new_results

    refuse_output_over_inputs([("-o", output)], [("MODEL", model),
                                                  ("--inputs", measure.get("inputs_npz"))])
    check_model_file(model)
    opts = run_options_from_cli(**measure)
    check_output_file(output, overwrite)
    from trtcheck.measure.interrupt import sigterm_as_interrupt

    log(f"benchmarking {model} ...")
    with sigterm_as_interrupt():
        run = bench_model(model, opts)  # Ctrl-C / SIGTERM: the finished batch sizes
    results = new_results()
    results.bench.append(run)
    results.incomplete = run.incomplete
    from trtcheck.report.sec_bench import bench_markdown

    emit_results(results, output, output_format, lambda: bench_table_text(run),
                 lambda: bench_markdown(results))
    if run.incomplete:
        log(f"{run.incomplete}; the results are marked incomplete")
        raise click.exceptions.Exit(130)
