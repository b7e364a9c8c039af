"""Options of ``trtcheck serve``: the target (a model, a synthetic T(b) or a live server),
the batcher configurations swept, the load shapes and the run's bounds, with the checks
that run before anything is measured."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from trtcheck.cli.common import (
    BACKEND_NAMES,
    MAX_COUNT,
    MAX_DURATION_MS,
    MAX_DURATION_S,
    MAX_INSTANCES,
    MAX_SEED,
    FiniteFloatRange,
)
from trtcheck.cli.options import CommaList, apply_options, option_given
from trtcheck.cli.options_backend import backend_options
from trtcheck.cli.options_serving import (
    INSTANCES_LIST,
    MAX_BATCH_LIST,
    PREFERRED_BATCH_LIST,
    WINDOW_MS_LIST,
)
from trtcheck.cli.ray_options import check_ray_options, ray_options
from trtcheck.measure.serving.live import TARGETS

F = TypeVar("F", bound=Callable[..., Any])


def serve_options(f: F) -> F:
    """The options of ``trtcheck serve`` from ``--synthetic-curve`` to ``--seed``, in their
    ``--help`` order."""
    return apply_options(f, [
        click.option("--synthetic-curve", default=None, metavar="B:MS,...",
                     help="Serve a synthetic backend whose batch time follows these points "
                          "(linear interpolation), e.g. 1:0.29,8:1.02; T(b) must not decrease "
                          "with b (as for advise --latency-curve); no MODEL then."),
        click.option("--spread", type=FiniteFloatRange(min=0, max=100), default=0.0, show_default=True,
                     help="Synthetic: relative std of each batch time (seeded)."),
        click.option("--synthetic-mode", type=click.Choice(["async", "thread"]), default="async",
                     show_default=True, help="Synthetic: sleep on the loop or in an executor thread."),
        click.option("--per-request-overhead-ms", type=FiniteFloatRange(min=0, max=MAX_DURATION_MS),
                     default=0.0,
                     show_default=True,
                     help="Serial per-request front cost in ms before the queue (stands for a Python "
                          "HTTP layer, often ~12 ms)."),
        click.option("--url", default=None, metavar="URL",
                     help="Measure a live KServe v2 server (Triton) instead of the embedded "
                          "batcher: http://HOST:PORT or grpc://HOST:PORT; needs --model (extra "
                          "'triton'). Window/max batch/instances/preferred sizes then load the "
                          "model once per configuration (tritonserver "
                          "--model-control-mode=explicit); without them the model is measured "
                          "as loaded."),
        click.option("--protocol", default=None, type=click.Choice(list(TARGETS)),
                     help="With --url: the live target's protocol [default: by the URL's scheme]; "
                          "with it, --url may be HOST:PORT."),
        click.option("--model", "live_model", default=None, metavar="NAME",
                     help="With --url: the model's name on the server."),
        click.option("--model-version", default="", metavar="V",
                     help="With --url: the model version (default: the server's choice)."),
        click.option("--inputs", "inputs_npz", default=None, type=click.Path(dir_okay=False),
                     help="With --url: one request's tensors, an .npz with one array per input "
                          "(default: generated from the model's metadata)."),
        click.option("--client-processes", type=click.IntRange(min=1, max=64), default=1,
                     show_default=True,
                     help="With --url: load generator processes (an open-loop schedule is dealt "
                          "round-robin to them)."),
        ray_options,
        click.option("--window-ms", default=None, metavar="LIST", type=WINDOW_MS_LIST,
                     help="Batching windows (Triton max queue delay) in ms.  [default: 0,20,50,100; "
                          "with --url: the model's own]"),
        click.option("--max-batch", default=None, metavar="LIST", type=MAX_BATCH_LIST,
                     help="Max batch sizes.  [default: 1,8,32; with --url: the model's own]"),
        click.option("--preferred-batch", default=None, metavar="LIST", type=PREFERRED_BATCH_LIST,
                     help="Triton preferred batch sizes (dispatched as soon as formed)."),
        click.option("--load", "loads", default="burst:64,closed:32,open:3000", show_default=True,
                     metavar="LIST", type=CommaList(example="burst:64,open:500"),
                     help="Load shapes: burst:N, closed:C[:COUNT], "
                          "open:RATE[:poisson|constant][:COUNT], trace:PATH."),
        click.option("--repeats", type=click.IntRange(min=1, max=1000), default=3,
                     help="Runs per configuration (the median is reported).  [default: 3; with "
                          "--url: 1]"),
        click.option("--instances", default=None, metavar="N|LIST", type=INSTANCES_LIST,
                     help=f"Concurrent execution instances (1..{MAX_INSTANCES}); with --url a comma "
                          "list sweeps them (Triton instance_group count), e.g. 1,2.  [default: 1; "
                          "with --url: the model's own]"),
        click.option("--max-queue", type=click.IntRange(min=1, max=MAX_COUNT), default=65536,
                     show_default=True,
                     help="Most requests waiting in the batcher queue."),
        click.option("--on-full", type=click.Choice(["reject", "wait"]), default="reject",
                     show_default=True, help="Back-pressure when the queue is full."),
        click.option("--http", is_flag=True, help="Put a loopback aiohttp front (keep-alive, "
                                                  "pre-warmed) between load and batcher."),
        click.option("--duration-s", type=FiniteFloatRange(min=0.01, max=MAX_DURATION_S), default=2.0, show_default=True,
                     help="Stop sending after this many seconds per run."),
        click.option("--drain-timeout-s", type=FiniteFloatRange(min=0, max=MAX_DURATION_S), default=5.0,
                     show_default=True, help="Seconds allowed after sending for requests to finish."),
        click.option("--late-threshold-ms", type=FiniteFloatRange(min=0, max=MAX_DURATION_MS),
                     default=1.0,
                     show_default=True, help="Open loop: a send this late counts as late."),
        click.option("--warmup-requests", type=click.IntRange(min=0, max=MAX_COUNT), default=8, show_default=True,
                     help="Requests sent and discarded before each run."),
        click.option("--uvloop", "use_uvloop", is_flag=True, help="Run on uvloop (extra 'fast')."),
        click.option("--backend", "backend_name", default=None, type=click.Choice(BACKEND_NAMES),
                     help="Runtime for MODEL [default: onnxruntime for .onnx, tensorrt or "
                     "tensorrt_rtx for plans by their header]."),
        backend_options(("onnxruntime",)),
        click.option("--shapes", "shapes", multiple=True, metavar="NAME:DIMS",
                     help="Input shapes of one request, e.g. x:1x3x224x224. A request is one "
                     "sample: axis 0 of a batched input must be 1 (batch sizes, --max-batch and "
                     "QPS count requests = samples); use `trtcheck bench --batch N` to time "
                     "executions of N samples."),
        click.option("--seed", type=click.IntRange(min=0, max=MAX_SEED), default=0, show_default=True,
                     help="Seed of generated inputs, Poisson arrivals and synthetic spread."),
    ])

#: Options of the embedded batcher that a live server decides itself (refused with --url).
EMBEDDED_ONLY = (("spread", "--spread"), ("synthetic_mode", "--synthetic-mode"),
                 ("per_request_overhead_ms", "--per-request-overhead-ms"),
                 ("max_queue", "--max-queue"), ("on_full", "--on-full"), ("http", "--http"),
                 ("use_uvloop", "--uvloop"), ("backend_name", "--backend"),
                 ("providers", "--providers"), ("threads", "--threads"))


def _check_loads(loads: list[str], duration_s: float, example: str) -> None:
    """Every ``--load`` shape parses (before anything runs)."""
    from trtcheck.errors import UsageError
    from trtcheck.measure.serving import parse_load

    if not loads:  # e.g. --load "$UNSET": refuse before anything runs
        raise UsageError("--load is empty", f"give load shapes, e.g. --load {example}")
    for spec in loads:
        parse_load(spec, duration_s)  # validate before measuring anything


def check_embedded_options(model: str | None, o: dict[str, Any]
                           ) -> tuple[list[float], list[int], int, list[int]]:
    """Check the options of a run on the embedded batcher (``o``: the command's values by
    parameter name) before any work.

    Returns:
        ``(windows_us, max_batch_sizes, instances, preferred_batch_sizes)``: batching
        windows in us, the defaults filled in.

    Raises:
        UsageError: a live-only option, not exactly one of MODEL and
            ``--synthetic-curve``, several instance counts, a preferred size above every
            max batch, or an empty or malformed ``--load``.
        EnvironmentProblem: ``--uvloop`` without uvloop installed.
    """
    from trtcheck.errors import UsageError
    from trtcheck.units import ms_to_us

    for opt, given in (("--model-version", o["model_version"]), ("--inputs", o["inputs_npz"]),
                       ("--protocol", o["protocol"]),
                       ("--client-processes", option_given("client_processes")),
                       ("--ray", o["ray_address"]), ("--ray-actors", o["ray_actors"])):
        if given:
            raise UsageError(f"{opt} applies to live targets only", "add --url URL --model "
                             "NAME, or drop it")
    if o["use_uvloop"]:  # checked before any work, and before a coroutine exists to leak
        try:
            import uvloop  # noqa: F401
        except ImportError:
            from trtcheck.errors import EnvironmentProblem

            raise EnvironmentProblem("uvloop is not installed",
                                     "pip install uvloop or drop --uvloop"
                                     ) from None
    if (model is None) == (o["synthetic_curve"] is None):
        raise UsageError("give either MODEL or --synthetic-curve (exactly one)",
                         "e.g. trtcheck serve model.onnx, or trtcheck serve "
                         "--synthetic-curve 1:0.29,8:1.02 --per-request-overhead-ms 12")
    windows = [0.0, 20.0, 50.0, 100.0] if o["window_ms"] is None else o["window_ms"]
    mbs = [1, 8, 32] if o["max_batch"] is None else o["max_batch"]
    instance_list = [1] if o["instances"] is None else o["instances"]
    if len(instance_list) > 1:
        raise UsageError(f"--instances {','.join(map(str, instance_list))}: the embedded "
                         "batcher runs one instance count per command", "give one count, "
                         "e.g. --instances 2, or sweep instance counts on a live server "
                         "(--url)")
    pref = o["preferred_batch"] or []
    unused = sorted(p for p in set(pref) if p > max(mbs))
    if unused:  # each configuration uses the sizes <= its max batch; these fit none
        raise UsageError(f"--preferred-batch {','.join(map(str, unused))} is above every "
                         f"--max-batch ({','.join(map(str, mbs))}), so no configuration can "
                         "use it", "preferred sizes must be <= the max batch (as in Triton)")
    _check_loads(o["loads"], o["duration_s"], "burst:64,open:500")
    # --window-ms is ms; trtcheck counts in us
    return [ms_to_us(w) for w in windows], mbs, instance_list[0], pref


def check_live_options(model: str | None, o: dict[str, Any]) -> Any:
    """Check the options of a run against a live server (``--url``/``--model``; ``o``: the
    command's values by parameter name) before any work, and parse the URL (once).

    Returns:
        The :class:`~trtcheck.measure.serving.live.Endpoint` of ``--url``/``--protocol``.

    Raises:
        UsageError: ``--url`` or ``--model`` alone, MODEL or ``--synthetic-curve`` or an
            embedded-batcher option given, a bad URL, bad Ray options, a preferred size
            above every max batch, or an empty or malformed ``--load``.
    """
    from trtcheck.errors import UsageError
    from trtcheck.measure.serving.live import parse_endpoint

    if o["url"] is None or o["live_model"] is None:
        raise UsageError("a live target needs both --url and --model",
                         "e.g. trtcheck serve --url http://127.0.0.1:8000 --model NAME")
    if model is not None or o["synthetic_curve"] is not None:
        raise UsageError("--url measures a server's model; MODEL and --synthetic-curve do "
                         "not apply", "drop MODEL/--synthetic-curve, or drop --url")
    for param, opt in EMBEDDED_ONLY:
        if option_given(param):
            raise UsageError(f"{opt} applies to the embedded batcher, not to a live server "
                             "(the server decides it)", f"drop {opt} with --url")
    endpoint = parse_endpoint(o["url"], o["protocol"])  # the one parse: a bad URL first
    check_ray_options(o["ray_address"], o["ray_actors"], live=True,
                      client_processes_given=option_given("client_processes"))
    mbs, pref = o["max_batch"], o["preferred_batch"] or None
    if pref is not None and mbs is not None:
        unused = sorted(p for p in set(pref) if p > max(mbs))
        if unused:
            raise UsageError(f"--preferred-batch {','.join(map(str, unused))} is above "
                             f"every --max-batch ({','.join(map(str, mbs))})",
                             "preferred sizes must be <= the max batch (as in Triton)")
    _check_loads(o["loads"], o["duration_s"], "open:400")
    return endpoint
