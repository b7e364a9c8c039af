"""``trtcheck tune``: calibrate -> predict -> confirm a serving configuration on a live
Triton (:func:`trtcheck.pipeline.tune.run_tune`)."""

from __future__ import annotations

import click

from trtcheck.cli.common import (
    MAX_ARRIVAL_RATE_PER_S,
    MAX_DURATION_MS,
    MAX_DURATION_S,
    MAX_SEED,
    FiniteFloatRange,
    OutputFormat,
    check_number,
    check_output_file,
    echo_json,
    echo_text,
    format_option,
    log,
    overwrite_option,
    refuse_output_over_inputs,
    save_results_file,
)
from trtcheck.cli.options import objective_option, option_given
from trtcheck.cli.ray_options import check_ray_options, ray_load, ray_options

MAX_TUNE_INSTANCES = 16
"""Largest ``--max-instances`` (each count is a candidate; the calibration measures 1 and
the largest)."""


@click.command("tune", epilog="Exit codes: 0 ok; 2 bad input (including an objective no "
               "configuration meets, a configuration the server refuses); 3 environment (a "
               "live run broken by a server fault: every finished run is written first, "
               "marked invalid); "
               "4 internal; 130 interrupted (Ctrl-C/SIGTERM: the original configuration is "
               "loaded again and every finished run is written).")
@click.option("--url", required=True, metavar="URL",
              help="The live Triton (KServe v2), http://HOST:PORT or grpc://HOST:PORT; it "
                   "must run with --model-control-mode=explicit.")
@click.option("--model", "model", required=True, metavar="NAME", help="The model's name.")
@click.option("--model-version", default="", help="Model version (default: the server's).")
@click.option("--arrival-rate", type=float, required=True,
              metavar="REQ_PER_S", help="Target Poisson rate, requests per second.")
@click.option("--slo-p99-ms", type=float, default=None,
              help="P99 latency objective, ms.")
@objective_option("the configuration")
@click.option("--max-instances", type=click.IntRange(1, MAX_TUNE_INSTANCES), default=2,
              show_default=True, help="Largest instance count searched.")
@click.option("--max-batch", type=click.IntRange(1, 65536), default=None,
              help="Largest max batch searched [default: the server's max_batch_size].")
@click.option("--duration-s", type=FiniteFloatRange(min=0.5, max=MAX_DURATION_S), default=3.0,
              show_default=True, help="Sending time of each live run, s (a run that measures a pick sends up to 4x longer, for 1,000 requests or when the calibration's P99 moved between its repeats).")
@click.option("--max-runs", type=click.IntRange(4, 50), default=6, show_default=True,
              help="Live runs the search may use (a repeat counts; at least 4, 5 with more than one instance).")
@click.option("--shapes", "shapes", multiple=True, metavar="NAME:DIMS",
              help="One request's input shapes, e.g. x:1x3x224x224 (as serve --url).")
@click.option("--client-processes", type=click.IntRange(min=1, max=64), default=1,
              show_default=True, help="Load generator processes.")
@ray_options
@click.option("--seed", type=click.IntRange(min=0, max=MAX_SEED), default=0, show_default=True,
              help="Seed of Poisson arrivals, generated inputs and the simulation.")
@click.option("--warm-batch-sizes/--no-warm-batch-sizes", default=True, show_default=True,
              help="Load each configuration with Triton's model_warmup at every batch size up "
                   "to its max batch, so one-time costs of new shapes stay out of the runs.")
@click.option("--export-dir", default=None, type=click.Path(file_okay=False),
              help="Also write the pick as a Triton model repository entry "
                   "(DIR/NAME/config.pbtxt).")
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Write the search as a tune document (kind tune; every live run, the "
                   "pick predicted and measured).")
@overwrite_option("Replace an existing -o file and --export-dir entry.")
@format_option()
def cli(url: str, model: str, model_version: str, arrival_rate: float,
        slo_p99_ms: float | None, objective: str, max_instances: int, max_batch: int | None,
        duration_s: float, max_runs: int, shapes: tuple[str, ...], client_processes: int,
        ray_address: str | None, ray_actors: int | None, seed: int, warm_batch_sizes: bool,
        export_dir: str | None, output: str | None, overwrite: bool,
        output_format: str) -> None:
    """Find a serving configuration for a live Triton model in a few live runs: calibrate
    T(b) at each instance count and the run-to-run drift, predict every window x max
    batch x instance count with an interval, pick by the objective, measure the pick."""
    from trtcheck.errors import InputError
    from trtcheck.measure.serving.live.kserve import import_client, parse_url
    from trtcheck.export.triton_repository import check_repository_entry, write_model_repository

    check_number("--arrival-rate", arrival_rate, low=0.0, low_open=True,
                 high=MAX_ARRIVAL_RATE_PER_S, unit=" req/s", example="200")
    check_number("--slo-p99-ms", slo_p99_ms, low=0.0, low_open=True, high=MAX_DURATION_MS,
                 unit=" ms", example="50")
    ep = parse_url(url)
    import_client(ep.protocol)
    check_ray_options(ray_address, ray_actors, live=True,
                      client_processes_given=option_given("client_processes"))
    refuse_output_over_inputs([("-o", output)], [])
    if output:
        check_output_file(output, overwrite)
    if export_dir is not None:  # refused now, not after the live runs
        check_repository_entry(export_dir, model, overwrite, "another --export-dir")
    from trtcheck.load.shapes import parse_shapes

    shape_map = parse_shapes(list(shapes)) if shapes else None
    from trtcheck.pipeline.tune import (TuneSettings, broken_search_error,
                                        export_config_text, interrupted_line, run_tune)

    with ray_load(ray_address, ray_actors, log) as distributed:
        outcome = run_tune(TuneSettings(
            url=url, model=model, model_version=model_version, rate_per_s=arrival_rate,
            slo_p99_ms=slo_p99_ms, objective=objective, max_instances=max_instances,
            max_batch=max_batch, duration_s=duration_s, max_runs=max_runs, seed=seed,
            shapes=shape_map, client_processes=client_processes,
            warm_batch_sizes=warm_batch_sizes, distributed=distributed), progress=log)
    res = outcome.result
    from trtcheck.measure.bench import new_results

    results = new_results()
    results.kind = "tune"
    results.tune = res
    results.incomplete = outcome.incomplete or (
        f"invalid: {outcome.invalid} ({res.live_runs} live run(s) finished and kept)"
        if outcome.invalid else None)
    if output:
        save_results_file(results, output)
        log(f"tune results saved to {output} ({res.live_runs} live run(s))")
    if outcome.incomplete:
        log(interrupted_line(outcome, model, output))
        raise click.exceptions.Exit(130)
    if outcome.invalid is not None:
        raise broken_search_error(outcome, output)
    if outcome.error is not None:
        raise outcome.error
    if export_dir is not None and res.pick is not None:
        text, spec = export_config_text(res)
        for path in write_model_repository(export_dir, model, text, None, spec.model_file,
                                           overwrite):
            log(f"wrote {path}")
    if output_format == OutputFormat.JSON.value:
        echo_json(results, "tune")
    elif output_format == OutputFormat.MD.value:
        from trtcheck.report.tune_text import tune_markdown

        echo_text(tune_markdown(res))
    else:
        from trtcheck.report.tune_text import tune_text

        echo_text(tune_text(res))
    if res.pick is None:
        raise InputError("tune picked no configuration", "see the notes above")
