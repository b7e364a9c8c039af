"""``trtcheck serve``: serving measurement with the embedded dynamic batcher."""

from __future__ import annotations

from typing import Any

import click

from trtcheck.cli.common import (
    BACKEND_NAMES,
    MAX_COUNT,
    MAX_DURATION_MS,
    MAX_DURATION_S,
    MAX_INSTANCES,
    MAX_SEED,
    FiniteFloatRange,
    OutputFormat,
    check_output_file,
    format_option,
    log,
    model_path_argument,
    overwrite_option,
    percentile_method_option,
    refuse_output_over_inputs,
)
from trtcheck.cli.options import CommaList
from trtcheck.cli.options_backend import backend_options
from trtcheck.cli.options_serving import (
    INSTANCES_LIST,
    MAX_BATCH_LIST,
    PREFERRED_BATCH_LIST,
    WINDOW_MS_LIST,
)
from trtcheck.cli.ray_options import check_ray_options, ray_load, ray_options
from trtcheck.measure.serving.live import TARGETS
from trtcheck.cli.progress_display import cli_progress
from trtcheck.report.text_tables import serve_table_text
from trtcheck.units import ms_to_us


@click.command("serve", epilog="Exit codes: 0 ok; 2 bad input; 3 environment (with --url, "
                               "a run broken by a server fault: the finished configurations "
                               "are written first, marked invalid); 4 internal; "
                               "130 interrupted (Ctrl-C/SIGTERM: the finished configurations "
                               "are written, marked incomplete).")
@model_path_argument(required=False)
@click.option("--synthetic-curve", default=None, metavar="B:MS,...",
              help="Serve a synthetic backend whose batch time follows these points "
                   "(linear interpolation), e.g. 1:0.29,8:1.02; T(b) must not decrease "
                   "with b (as for advise --latency-curve); no MODEL then.")
@click.option("--spread", type=FiniteFloatRange(min=0, max=100), default=0.0, show_default=True,
              help="Synthetic: relative std of each batch time (seeded).")
@click.option("--synthetic-mode", type=click.Choice(["async", "thread"]), default="async",
              show_default=True, help="Synthetic: sleep on the loop or in an executor thread.")
@click.option("--per-request-overhead-ms", type=FiniteFloatRange(min=0, max=MAX_DURATION_MS),
              default=0.0,
              show_default=True,
              help="Serial per-request front cost in ms before the queue (stands for a Python "
                   "HTTP layer, often ~12 ms).")
@click.option("--url", default=None, metavar="URL",
              help="Measure a live KServe v2 server (Triton) instead of the embedded "
                   "batcher: http://HOST:PORT or grpc://HOST:PORT; needs --model (extra "
                   "'triton'). Window/max batch/instances/preferred sizes then load the "
                   "model once per configuration (tritonserver "
                   "--model-control-mode=explicit); without them the model is measured "
                   "as loaded.")
@click.option("--protocol", default=None, type=click.Choice(list(TARGETS)),
              help="With --url: the live target's protocol [default: by the URL's scheme]; "
                   "with it, --url may be HOST:PORT.")
@click.option("--model", "live_model", default=None, metavar="NAME",
              help="With --url: the model's name on the server.")
@click.option("--model-version", default="", metavar="V",
              help="With --url: the model version (default: the server's choice).")
@click.option("--inputs", "inputs_npz", default=None, type=click.Path(dir_okay=False),
              help="With --url: one request's tensors, an .npz with one array per input "
                   "(default: generated from the model's metadata).")
@click.option("--client-processes", type=click.IntRange(min=1, max=64), default=1,
              show_default=True,
              help="With --url: load generator processes (an open-loop schedule is dealt "
                   "round-robin to them).")
@ray_options
@click.option("--window-ms", default=None, metavar="LIST", type=WINDOW_MS_LIST,
              help="Batching windows (Triton max queue delay) in ms.  [default: 0,20,50,100; "
                   "with --url: the model's own]")
@click.option("--max-batch", default=None, metavar="LIST", type=MAX_BATCH_LIST,
              help="Max batch sizes.  [default: 1,8,32; with --url: the model's own]")
@click.option("--preferred-batch", default=None, metavar="LIST", type=PREFERRED_BATCH_LIST,
              help="Triton preferred batch sizes (dispatched as soon as formed).")
@click.option("--load", "loads", default="burst:64,closed:32,open:3000", show_default=True,
              metavar="LIST", type=CommaList(example="burst:64,open:500"),
              help="Load shapes: burst:N, closed:C[:COUNT], "
                   "open:RATE[:poisson|constant][:COUNT], trace:PATH.")
@click.option("--repeats", type=click.IntRange(min=1, max=1000), default=3,
              help="Runs per configuration (the median is reported).  [default: 3; with "
                   "--url: 1]")
@click.option("--instances", default=None, metavar="N|LIST", type=INSTANCES_LIST,
              help=f"Concurrent execution instances (1..{MAX_INSTANCES}); with --url a comma "
                   "list sweeps them (Triton instance_group count), e.g. 1,2.  [default: 1; "
                   "with --url: the model's own]")
@click.option("--max-queue", type=click.IntRange(min=1, max=MAX_COUNT), default=65536,
              show_default=True,
              help="Most requests waiting in the batcher queue.")
@click.option("--on-full", type=click.Choice(["reject", "wait"]), default="reject",
              show_default=True, help="Back-pressure when the queue is full.")
@click.option("--http", is_flag=True, help="Put a loopback aiohttp front (keep-alive, "
                                           "pre-warmed) between load and batcher.")
@click.option("--duration-s", type=FiniteFloatRange(min=0.01, max=MAX_DURATION_S), default=2.0, show_default=True,
              help="Stop sending after this many seconds per run.")
@click.option("--drain-timeout-s", type=FiniteFloatRange(min=0, max=MAX_DURATION_S), default=5.0,
              show_default=True, help="Seconds allowed after sending for requests to finish.")
@click.option("--late-threshold-ms", type=FiniteFloatRange(min=0, max=MAX_DURATION_MS),
              default=1.0,
              show_default=True, help="Open loop: a send this late counts as late.")
@click.option("--warmup-requests", type=click.IntRange(min=0, max=MAX_COUNT), default=8, show_default=True,
              help="Requests sent and discarded before each run.")
@click.option("--uvloop", "use_uvloop", is_flag=True, help="Run on uvloop (extra 'fast').")
@click.option("--backend", "backend_name", default=None, type=click.Choice(BACKEND_NAMES),
              help="Runtime for MODEL [default: onnxruntime for .onnx, tensorrt or "
              "tensorrt_rtx for plans by their header].")
@backend_options(("onnxruntime",))
@click.option("--shapes", "shapes", multiple=True, metavar="NAME:DIMS",
              help="Input shapes of one request, e.g. x:1x3x224x224. A request is one "
              "sample: axis 0 of a batched input must be 1 (batch sizes, --max-batch and "
              "QPS count requests = samples); use `trtcheck bench --batch N` to time "
              "executions of N samples.")
@click.option("--seed", type=click.IntRange(min=0, max=MAX_SEED), default=0, show_default=True,
              help="Seed of generated inputs, Poisson arrivals and synthetic spread.")
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Save the results JSON here.")
@overwrite_option()
@percentile_method_option
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
def cli(model: str | None, synthetic_curve: str | None, spread: float, synthetic_mode: str,
        per_request_overhead_ms: float, url: str | None, protocol: str | None,
        live_model: str | None, model_version: str, inputs_npz: str | None,
        client_processes: int, ray_address: str | None, ray_actors: int | None,
        window_ms: list[float] | None, max_batch: list[int] | None,
        preferred_batch: list[int] | None, loads: list[str], repeats: int,
        instances: list[int] | None,
        max_queue: int, on_full: str, http: bool, duration_s: float, drain_timeout_s: float,
        late_threshold_ms: float, warmup_requests: int, use_uvloop: bool,
        backend_name: str | None, providers: list[str] | None, threads: int | None,
        shapes: tuple[str, ...], seed: int, output: str | None, overwrite: bool,
        output_format: str) -> None:
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

    from trtcheck.load.model_file import check_model_path
    from trtcheck.errors import UsageError
    from trtcheck.measure.serving import parse_load
    from trtcheck.measure.bench import new_results
    from trtcheck.measure.serving import measure_serving

    if url is not None or live_model is not None:
        return _live(url=url, protocol=protocol, live_model=live_model, model=model,
                     synthetic_curve=synthetic_curve, model_version=model_version,
                     inputs_npz=inputs_npz, client_processes=client_processes,
                     ray_address=ray_address, ray_actors=ray_actors,
                     window_ms=window_ms, max_batch=max_batch,
                     preferred_batch=preferred_batch, loads=loads, repeats=repeats,
                     instances=instances, duration_s=duration_s,
                     drain_timeout_s=drain_timeout_s, late_threshold_ms=late_threshold_ms,
                     warmup_requests=warmup_requests, shapes=shapes, seed=seed,
                     output=output, overwrite=overwrite, output_format=output_format)
    for opt, given in (("--model-version", model_version), ("--inputs", inputs_npz),
                       ("--protocol", protocol),
                       ("--client-processes", _given("client_processes")),
                       ("--ray", ray_address), ("--ray-actors", ray_actors)):
        if given:
            raise UsageError(f"{opt} applies to live targets only", "add --url URL --model "
                             "NAME, or drop it")
    if use_uvloop:  # checked before any work, and before a coroutine exists to leak
        try:
            import uvloop  # noqa: F401
        except ImportError:
            from trtcheck.errors import EnvironmentProblem

            raise EnvironmentProblem("uvloop is not installed",
                                     "pip install uvloop or drop --uvloop"
                                     ) from None
    if (model is None) == (synthetic_curve is None):
        raise UsageError("give either MODEL or --synthetic-curve (exactly one)",
                         "e.g. trtcheck serve model.onnx, or trtcheck serve "
                         "--synthetic-curve 1:0.29,8:1.02 --per-request-overhead-ms 12")
    windows = [0.0, 20.0, 50.0, 100.0] if window_ms is None else window_ms
    mbs = [1, 8, 32] if max_batch is None else max_batch
    instance_list = [1] if instances is None else instances
    if len(instance_list) > 1:
        raise UsageError(f"--instances {','.join(map(str, instance_list))}: the embedded "
                         "batcher runs one instance count per command", "give one count, "
                         "e.g. --instances 2, or sweep instance counts on a live server "
                         "(--url)")
    n_instances = instance_list[0]
    pref = preferred_batch or []
    windows_us = [ms_to_us(w) for w in windows]  # --window-ms is ms; trtcheck counts in us
    unused = sorted(p for p in set(pref) if p > max(mbs))
    if unused:  # each configuration uses the sizes <= its max batch; these fit none
        raise UsageError(f"--preferred-batch {','.join(map(str, unused))} is above every "
                         f"--max-batch ({','.join(map(str, mbs))}), so no configuration can "
                         "use it", "preferred sizes must be <= the max batch (as in Triton)")
    load_list = loads
    if not load_list:  # e.g. --load "$UNSET": refuse before anything runs
        raise UsageError("--load is empty", "give load shapes, e.g. --load burst:64,open:500")
    for spec in load_list:
        parse_load(spec, duration_s)  # validate before measuring anything
    refuse_output_over_inputs(
        [("-o", output)], [("MODEL", model), *[("--load", spec.partition(":")[2])
                                             for spec in load_list
                                             if spec.startswith("trace:")]])
    check_output_file(output, overwrite)  # the same -o rules as every command
    shape_map: dict[str, list[int]] | None = None
    if shapes:
        from trtcheck.load.shapes import parse_shapes

        shape_map = parse_shapes(list(shapes))
    if synthetic_curve is not None:
        from trtcheck.analyze.advice import check_monotone
        from trtcheck.backends.synthetic import SyntheticBackend, parse_curve

        # the same shape rule as advise --latency-curve: T(b) must not decrease with b
        check_monotone(parse_curve(synthetic_curve).items(), source="--synthetic-curve")
        backend: Any = SyntheticBackend(synthetic_curve, spread=spread, seed=seed,
                                        per_request_overhead_ms=per_request_overhead_ms,
                                        mode=synthetic_mode)
        target_desc = f"synthetic T(b) {synthetic_curve}"
    else:
        from trtcheck.backends.registry import backend_kwargs, open_backend

        assert model is not None
        check_model_path(model)
        kwargs = backend_kwargs(model, backend_name, {"providers": providers,
                                                      "threads": threads})
        backend = open_backend(model, backend_name, **kwargs)
        target_desc = model
    activated_here = False
    if shape_map is not None:
        # before any measurement: one sample per request (axis 0 = 1), never a silent 1
        from trtcheck.measure.serving import request_shapes

        if not backend.is_active:
            backend.activate()
            activated_here = True
        try:
            request_shapes(backend, shape_map)
        except BaseException:
            if activated_here:
                backend.deactivate()
            raise
    n = len(windows_us) * len(mbs) * len(load_list)
    log(f"serving {target_desc}: {n} configuration(s) x {repeats} repeat(s) ...")
    try:
        run = measure_serving(
            backend, use_uvloop=use_uvloop, windows_us=windows_us, max_batch_sizes=mbs,
            loads=load_list, repeats=repeats, preferred_batch_sizes=pref,
            instances=n_instances,
            max_queue_size=max_queue, on_full=on_full,
            per_request_overhead_ms=per_request_overhead_ms, http=http,
            max_duration_s=duration_s, drain_timeout_s=drain_timeout_s,
            late_threshold_ms=late_threshold_ms, warmup_requests=warmup_requests, seed=seed,
            shapes=shape_map, model_path=target_desc, progress=cli_progress())
    finally:
        if activated_here:
            backend.deactivate()
    results = new_results()
    results.serve = run
    results.incomplete = run.incomplete
    from trtcheck.cli.common import emit_results
    from trtcheck.report.sec_serve import serve_markdown

    emit_results(results, output, output_format, lambda: serve_table_text(run),
                 lambda: serve_markdown(results))
    if run.incomplete:
        log(f"{run.incomplete}; the results are marked incomplete")
        raise click.exceptions.Exit(130)



def _given(param: str) -> bool:
    """Whether the user gave option ``param`` on the command line (not its default)."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    return ctx.get_parameter_source(param) not in (ParameterSource.DEFAULT, None)


#: Options of the embedded batcher that a live server decides itself (refused with --url).
_EMBEDDED_ONLY = (("spread", "--spread"), ("synthetic_mode", "--synthetic-mode"),
                  ("per_request_overhead_ms", "--per-request-overhead-ms"),
                  ("max_queue", "--max-queue"), ("on_full", "--on-full"), ("http", "--http"),
                  ("use_uvloop", "--uvloop"), ("backend_name", "--backend"),
                  ("providers", "--providers"), ("threads", "--threads"))


def _live(*, url: str | None, protocol: str | None, live_model: str | None,
          model: str | None,
          synthetic_curve: str | None, model_version: str, inputs_npz: str | None,
          client_processes: int, ray_address: str | None, ray_actors: int | None,
          window_ms: list[float] | None, max_batch: list[int] | None,
          preferred_batch: list[int] | None, loads: list[str],
          repeats: int, instances: list[int] | None,
          duration_s: float, drain_timeout_s: float, late_threshold_ms: float,
          warmup_requests: int, shapes: tuple[str, ...], seed: int, output: str | None,
          overwrite: bool, output_format: str) -> None:
    """``trtcheck serve --url URL --model NAME``: a live KServe v2 target."""
    from trtcheck.errors import UsageError
    from trtcheck.measure.serving import parse_load

    if url is None or live_model is None:
        raise UsageError("a live target needs both --url and --model",
                         "e.g. trtcheck serve --url http://127.0.0.1:8000 --model NAME")
    if model is not None or synthetic_curve is not None:
        raise UsageError("--url measures a server's model; MODEL and --synthetic-curve do "
                         "not apply", "drop MODEL/--synthetic-curve, or drop --url")
    for param, opt in _EMBEDDED_ONLY:
        if _given(param):
            raise UsageError(f"{opt} applies to the embedded batcher, not to a live server "
                             "(the server decides it)", f"drop {opt} with --url")
    from trtcheck.measure.serving.live import parse_endpoint

    endpoint = parse_endpoint(url, protocol)  # the one parse: a bad URL is one line first
    check_ray_options(ray_address, ray_actors, live=True,
                      client_processes_given=_given("client_processes"))
    windows, mbs, pref = window_ms, max_batch, preferred_batch or None
    instance_list = instances
    # --window-ms is ms; trtcheck counts in us
    windows_us = None if windows is None else [ms_to_us(w) for w in windows]
    if pref is not None:
        if mbs is not None:
            unused = sorted(p for p in set(pref) if p > max(mbs))
            if unused:
                raise UsageError(f"--preferred-batch {','.join(map(str, unused))} is above "
                                 f"every --max-batch ({','.join(map(str, mbs))})",
                                 "preferred sizes must be <= the max batch (as in Triton)")
    load_list = loads
    if not load_list:
        raise UsageError("--load is empty", "give load shapes, e.g. --load open:400")
    for spec in load_list:
        parse_load(spec, duration_s)
    refuse_output_over_inputs(
        [("-o", output)], [("--inputs", inputs_npz),
                           *[("--load", spec.partition(":")[2]) for spec in load_list
                             if spec.startswith("trace:")]])
    check_output_file(output, overwrite)
    shape_map = None
    if shapes:
        from trtcheck.load.shapes import parse_shapes

        shape_map = parse_shapes(list(shapes))
    arrays = None
    if inputs_npz:
        from trtcheck.load.input_checks import check_finite_data
        from trtcheck.load.inputs import load_npz

        arrays = load_npz(inputs_npz)
        check_finite_data(arrays, inputs_npz)
    from trtcheck.measure.serving.live import check_target_client

    check_target_client(endpoint)  # the client library present, before any work
    from trtcheck.measure.serving.live import measure_live
    from trtcheck.measure.bench import new_results

    if not _given("repeats"):
        repeats = 1  # one run per shape: the server's statistics delta is the command's
    log(f"serving {live_model} at {url}: {len(load_list)} load shape(s) x {repeats} "
        f"repeat(s) ...")
    with ray_load(ray_address, ray_actors, log) as distributed:
        run = measure_live(endpoint, live_model, model_version=model_version,
                           windows_us=windows_us, max_batch_sizes=mbs,
                           instances=instance_list, preferred_batch_sizes=pref,
                           loads=load_list, repeats=repeats, max_duration_s=duration_s,
                           drain_timeout_s=drain_timeout_s,
                           late_threshold_ms=late_threshold_ms,
                           warmup_requests=warmup_requests, seed=seed, shapes=shape_map,
                           arrays=arrays, client_processes=client_processes,
                           progress=cli_progress(),
                           distributed=distributed)
    results = new_results()
    results.serve = run
    results.incomplete = run.incomplete
    from trtcheck.cli.common import emit_results
    from trtcheck.report.sec_serve import serve_markdown

    emit_results(results, output, output_format, lambda: serve_table_text(run),
                 lambda: serve_markdown(results))
    from trtcheck.measure.serving.live import run_fault

    if (fault := run_fault(run)) is not None:
        from trtcheck.errors import EnvironmentProblem

        kept = (f"{len(run.configs)} finished configuration(s) written to {output}"
                if output else f"{len(run.configs)} finished configuration(s) printed")
        raise EnvironmentProblem(f"the run broke: {fault}",
                                 f"{kept}, marked invalid; check the server, then run again")
    if run.incomplete:
        log(f"{run.incomplete}; the results are marked incomplete")
        raise click.exceptions.Exit(130)
