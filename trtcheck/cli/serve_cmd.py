"""``trtcheck serve``: serving measurement with the embedded dynamic batcher."""

from __future__ import annotations

from typing import Any

import click

from trtcheck.cli.common import (
    OutputFormat,
    check_output_file,
    emit_results,
    format_option,
    log,
    model_path_argument,
    overwrite_option,
    percentile_method_option,
    refuse_output_over_inputs,
)
from trtcheck.cli.options import option_given
from trtcheck.cli.options_serve import check_embedded_options, check_live_options, serve_options
from trtcheck.cli.progress_display import cli_progress
from trtcheck.cli.ray_options import ray_load
from trtcheck.report.text_tables import serve_table_text


@click.command("serve", epilog="Exit codes: 0 ok; 2 bad input; 3 environment (with --url, "
                               "a run broken by a server fault: the finished configurations "
                               "are written first, marked invalid); 4 internal; "
                               "130 interrupted (Ctrl-C/SIGTERM: the finished configurations "
                               "are written, marked incomplete).")
@model_path_argument(required=False)
@serve_options
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Save the results JSON here.")
@overwrite_option()
@percentile_method_option
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
def cli(model: str | None, output: str | None, overwrite: bool, output_format: str,
        **o: Any) -> None:
    """Measure MODEL behind an embedded dynamic batcher, or a live Triton model (--url).

    Sweeps --window-ms x --max-batch x --load, --repeats times each, and reports per
    load shape a table (window, mean batch, max batch, QPS, P50, P99), plus a
    per-request waterfall (queue, window, assembly, compute, dispatch, HTTP) in the
    results. Open-loop latency counts from the scheduled send time.

    With --url, measures a model on a live KServe v2 server (Triton) with the same
    load shapes, and records the server's own statistics (mean batch it formed,
    per-batch-size executions, queue and compute times) and model configuration.

    \b
    Examples:
      trtcheck serve model.onnx --window-ms 0,5 --max-batch 8 --load burst:64,open:500
      trtcheck serve --synthetic-curve 1:0.29,8:1.02 --per-request-overhead-ms 12
      trtcheck serve --url http://127.0.0.1:8000 --model resnet --load open:400 \\
          --duration-s 5 -o live.json
      trtcheck serve --url http://10.0.0.5:8000 --model resnet --load open:4000 \\
          --ray auto --ray-actors 3 -o live.json
    """
    if o["url"] is not None or o["live_model"] is not None:
        return _live(model, output, overwrite, output_format, o)
    from trtcheck.pipeline.serve import serve_embedded

    windows_us, mbs, n_instances, pref = check_embedded_options(model, o)
    _check_output(output, overwrite, [("MODEL", model)], o["loads"])
    run = serve_embedded(
        model, o["synthetic_curve"], spread=o["spread"], synthetic_mode=o["synthetic_mode"],
        per_request_overhead_ms=o["per_request_overhead_ms"], backend_name=o["backend_name"],
        providers=o["providers"], threads=o["threads"], shapes=o["shapes"], seed=o["seed"],
        windows_us=windows_us, max_batch_sizes=mbs, loads=o["loads"], repeats=o["repeats"],
        preferred_batch_sizes=pref, instances=n_instances, max_queue_size=o["max_queue"],
        on_full=o["on_full"], http=o["http"], use_uvloop=o["use_uvloop"],
        max_duration_s=o["duration_s"], drain_timeout_s=o["drain_timeout_s"],
        late_threshold_ms=o["late_threshold_ms"], warmup_requests=o["warmup_requests"],
        progress=cli_progress(), log=log)
    _emit(run, output, output_format)


def _check_output(output: str | None, overwrite: bool, inputs: list[tuple[str, Any]],
                  loads: list[str]) -> None:
    """-o is none of the inputs (trace files included) and follows every command's rules."""
    refuse_output_over_inputs(
        [("-o", output)], [*inputs, *[("--load", spec.partition(":")[2])
                                      for spec in loads if spec.startswith("trace:")]])
    check_output_file(output, overwrite)  # the same -o rules as every command


def _emit(run: Any, output: str | None, output_format: str,
          fault: BaseException | None = None) -> None:
    """Print/save the results of ``run``; then raise ``fault`` (a broken live run), or
    exit 130 when the run was cut short."""
    from trtcheck.measure.bench import new_results
    from trtcheck.report.sec_serve import serve_markdown

    results = new_results()
    results.serve = run
    results.incomplete = run.incomplete
    emit_results(results, output, output_format, lambda: serve_table_text(run),
                 lambda: serve_markdown(results))
    if fault is not None:
        raise fault
    if run.incomplete:
        log(f"{run.incomplete}; the results are marked incomplete")
        raise click.exceptions.Exit(130)


def _live(model: str | None, output: str | None, overwrite: bool, output_format: str,
          o: dict[str, Any]) -> None:
    """``trtcheck serve --url URL --model NAME``: a live KServe v2 target."""
    from trtcheck.measure.serving.live import measure_live
    from trtcheck.pipeline.serve import live_fault_error, live_inputs
    from trtcheck.units import ms_to_us

    endpoint = check_live_options(model, o)
    _check_output(output, overwrite, [("--inputs", o["inputs_npz"])], o["loads"])
    shape_map, arrays = live_inputs(endpoint, o["shapes"], o["inputs_npz"])
    # one run per shape unless asked: the server's statistics delta is the command's
    repeats = o["repeats"] if option_given("repeats") else 1
    log(f"serving {o['live_model']} at {o['url']}: {len(o['loads'])} load shape(s) x "
        f"{repeats} repeat(s) ...")
    windows = o["window_ms"]  # --window-ms is ms; trtcheck counts in us
    with ray_load(o["ray_address"], o["ray_actors"], log) as distributed:
        run = measure_live(endpoint, o["live_model"], model_version=o["model_version"],
                           windows_us=None if windows is None
                           else [ms_to_us(w) for w in windows],
                           max_batch_sizes=o["max_batch"], instances=o["instances"],
                           preferred_batch_sizes=o["preferred_batch"] or None,
                           loads=o["loads"], repeats=repeats, max_duration_s=o["duration_s"],
                           drain_timeout_s=o["drain_timeout_s"],
                           late_threshold_ms=o["late_threshold_ms"],
                           warmup_requests=o["warmup_requests"], seed=o["seed"],
                           shapes=shape_map, arrays=arrays,
                           client_processes=o["client_processes"], progress=cli_progress(),
                           distributed=distributed)
    _emit(run, output, output_format, live_fault_error(run, output))
