"""Options of ``trtcheck advise``: the source of T(b), the load, the serving overheads,
the search, the what-if grid and the exports, with their parsers and the checks that
run before any work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from trtcheck.cli.common import (
    MAX_DURATION_MS,
    FiniteFloatRange,
    batch_option,
    model_input_options,
    overwrite_option,
)
from trtcheck.cli.options import GPU_IDS, apply_options, objective_option
from trtcheck.cli.options_serving import MAX_BATCH_LIST, PREFERRED_BATCH_LIST, WINDOW_MS_LIST
from trtcheck.units import ms_to_us

F = TypeVar("F", bound=Callable[..., Any])


def advise_options(f: F) -> F:
    """The options of ``trtcheck advise`` from ``--from`` to ``--objective``, in their
    ``--help`` order."""
    return apply_options(f, [
        click.option("--from", "from_path", default=None, type=click.Path(dir_okay=True),
                     help="Take T(b) (bench) and overheads (serve) from a results JSON (or a "
                          "report folder; or T(b) from a Triton /v2/models/NAME/stats JSON)."),
        click.option("--latency-curve", default=None, metavar="B:MS,...",
                     help="T(b) in ms (b <= 65536, each time > 0 and <= 1e7 ms), e.g. "
                          "1:0.29,8:1.02,16:1.73."),
        click.option("--arrival-rate", type=float, default=None, metavar="REQ_PER_S",
                     help="Arrival rate in requests per second, > 0 and <= 1e9 (if omitted: "
                          "a trace's own rate, or the target rate --from tune.json recorded)."),
        click.option("--arrival", default="poisson", show_default=True,
                     metavar="poisson|constant|trace:FILE",
                     help="Arrival process; a trace file holds one arrival time (s) per line."),
        click.option("--slo-p99-ms", type=float, default=None, help="P99 latency objective in ms (> 0, <= 1e7)."),
        click.option("--per-request-overhead-ms", type=float, default=None,
                     help="Serving cost per request outside the queue (HTTP, serialisation), ms "
                          "(0 to 1e7)."),
        click.option("--serial-overhead/--parallel-overhead", default=None,
                     help="Whether the per-request overhead runs on one thread (a single Python "
                          "process: it then caps the rate) [default: parallel, or as measured]."),
        click.option("--per-batch-overhead-ms", type=float, default=None,
                     help="Instance time added to every execution (executor hop, launch), ms "
                          "(0 to 1e7)."),
        click.option("--per-item-overhead-ms", type=float, default=None,
                     help="Instance time per request in a batch (gather/scatter), ms (0 to 1e7)."),
        click.option("--timer-slack-us", type=float, default=None,
                     help="How late window timers fire, us, 0 to 1e10 [default: 0, or as "
                          "measured]."),
        click.option("--instances", "instances_text", default=None, metavar="N|LO..HI|N,M",
                     help="Instance counts to search: a count, a range or a list (1,2,4), "
                          "at most 100000 [default: as many as needed]."),
        click.option("--max-utilisation", type=FiniteFloatRange(0.01, 1.0), default=0.9,
                     show_default=True, help="Highest utilisation a recommended setting may run at."),
        click.option("--requests", "n_requests", type=click.IntRange(min=100, max=10**7), default=None,
                     help="Simulated requests per candidate [default: ~2 s of traffic, 3,000-6,000]."),
        click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=0, show_default=True,
                     help="Simulation seed (an integer >= 0)."),
        click.option("--replicas", type=click.IntRange(min=0, max=64), default=12,
                     show_default=True,
                     help="Bootstrap replicas of the measurements the choice is rerun on, 0-64 "
                          "(0: no stability check)."),
        click.option("--load", "load_spec", default=None,
                     metavar="open:RATE[:poisson|constant][:COUNT]|burst:N|closed:C[:COUNT]",
                     help="The load as trtcheck serve takes it (one shape); burst and closed "
                          "loops replace --arrival-rate."),
        click.option("--window-ms", "what_if_windows", default=None, metavar="LIST",
                     type=WINDOW_MS_LIST,
                     help="What-if: predict these windows (ms, >= 0) x --max-batch x --instances "
                          "next to the recommendation."),
        click.option("--max-batch", "what_if_batches", default=None, metavar="LIST",
                     type=MAX_BATCH_LIST,
                     help="What-if: max batch sizes to predict (integers >= 1) [default: 1]."),
        click.option("--preferred-batch", "what_if_preferred", default=None, metavar="LIST",
                     type=PREFERRED_BATCH_LIST,
                     help="What-if: Triton preferred batch sizes (those <= each max batch are "
                          "used)."),
        batch_option(default="1,2,4,8,16,32",
                     help="Batch sizes to measure when MODEL is given (only with MODEL)."),
        model_input_options,
        click.option("--model-name", default=None,
                     help="Model name in the exported settings: ASCII letters, digits, _ - . (not "
                          "first), at most 128 characters (a Triton model folder name) [default: "
                          "the model file's name, other characters as _]."),
        click.option("--device-kind", type=click.Choice(["cpu", "gpu"]), default=None,
                     help="Where the instances run, for the exports (KIND_CPU/KIND_GPU) [default: "
                          "as measured; unknown: gpu, said in a comment]."),
        click.option("--gpus", default=None, metavar="IDS", type=GPU_IDS,
                     help="GPU ids the Triton export lists per server, e.g. 0,1 [default: none, "
                          "every visible GPU]."),
        click.option("--torchserve-version", default="1.0", show_default=True,
                     help="Model version of the TorchServe .mar archive in its export."),
        click.option("--export-dir", default=None, type=click.Path(file_okay=False),
                     help="Also write a Triton model repository entry for the recommendation: "
                          "DIR/NAME/config.pbtxt and DIR/NAME/1/<model file>."),
        click.option("--model-file", default=None, type=click.Path(dir_okay=False),
                     help="With --export-dir: the model file to copy into the repository [default: "
                          "MODEL, or the model the results were measured with; a live run's "
                          "model.py must be given]."),
        click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
                     help="Save a results JSON with the advice section here."),
        overwrite_option("Replace an existing --output file (and the "
                         "files --export-dir writes)."),
        objective_option("the recommendation", recorded="--from tune.json"),
    ])


MAX_INSTANCES = 100_000
"""Largest instance count ``--instances`` may name (a range is searched one count at a
time; beyond this it is no single deployment)."""


def parse_instances(text: str | None) -> list[int] | None:
    """``"4"`` -> [4]; ``"1..8"`` -> [1..8]; ``"1,2"`` / ``"1..4,8"`` -> those counts,
    sorted (as ``serve --instances`` takes them); ``None`` -> automatic.

    Raises:
        InputError: a part that is no count or range, a count below 1, or above
            :data:`MAX_INSTANCES`.
    """
    from trtcheck.errors import InputError

    if text is None:
        return None
    hint = ("give a count (--instances 2), a range (--instances 1..8) or a list "
            "(--instances 1,2,4)")
    counts: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        try:
            lo, hi = ((int(x) for x in part.split("..", 1)) if ".." in part
                      else (int(part), int(part)))
        except ValueError:
            raise InputError(f"cannot read --instances {text!r}", hint) from None
        if lo < 1 or hi < 1:
            raise InputError(f"--instances {text} holds a count below 1", hint)
        if hi < lo:
            raise InputError(f"--instances {text}: the range {part} runs backwards", hint)
        if hi > MAX_INSTANCES:
            raise InputError(f"--instances {text} goes above {MAX_INSTANCES:,} instances",
                             f"give at most {MAX_INSTANCES}, e.g. --instances 1..64")
        counts.update(range(lo, hi + 1))
    return sorted(counts)


MAX_CURVE_BATCH = 65536
"""Largest batch size a ``--latency-curve`` point may have (2^16; the simulator holds
arrays proportional to the largest batch)."""


def check_curve_bound(curve: Any) -> None:
    """Every point of a hand-given curve within bounds: b <= :data:`MAX_CURVE_BATCH`,
    T(b) <= :data:`MAX_DURATION_MS`.

    Raises:
        InputError: a point above a bound (it would only overflow the fit and the
            simulated percentiles, or exhaust memory).
    """
    from trtcheck.errors import InputError

    for b, t in curve.points():
        if b > MAX_CURVE_BATCH:
            raise InputError(f"batch size {b} in --latency-curve is above {MAX_CURVE_BATCH}",
                             "give batch sizes a server can run, e.g. --latency-curve "
                             "1:0.29,8:1.02,16:1.73")
        if t > MAX_DURATION_MS:
            raise InputError(f"T({b}) = {t:g} ms in --latency-curve is above "
                             f"{MAX_DURATION_MS:g} ms (2.8 hours), no serving latency",
                             "give milliseconds per batch, e.g. --latency-curve "
                             "1:0.29,8:1.02,16:1.73")


def parse_load_option(load_spec: str | None, arrival_rate: float | None,
                  arrival: str) -> Any:
    """``--load`` parsed (``None`` when not given), refusing a second load option.

    Raises:
        UsageError: ``--load`` together with ``--arrival-rate`` or ``--arrival``, or a
            trace load (use ``--arrival trace:FILE``).
        InputError: an unreadable spec (as ``serve --load``).
    """
    from trtcheck.errors import UsageError
    from trtcheck.measure.serving import parse_load

    if load_spec is None:
        return None
    if "," in load_spec:
        raise UsageError(f"--load takes one load shape here, got {load_spec!r}",
                         "run advise once per load, e.g. --load burst:64")
    ctx = click.get_current_context()
    if arrival_rate is not None or ctx.get_parameter_source("arrival") is not \
            click.core.ParameterSource.DEFAULT:
        given = "--arrival-rate" if arrival_rate is not None else "--arrival"
        raise UsageError(f"--load and {given} both give the load", f"drop {given}, or "
                         "give the rate in --load open:RATE[:poisson|constant]")
    if load_spec.strip().startswith("trace:"):
        raise UsageError("--load trace:PATH is not taken by advise",
                         "use --arrival trace:PATH")
    return parse_load(load_spec)


MAX_WHAT_IF = 256
"""Most configurations one what-if may ask for (each is simulated in full)."""


def what_if_configs(windows: list[float] | None, batches: list[int] | None,
                     preferred: list[int] | None, instances: list[int] | None) -> list[Any]:
    """The what-if grid ``windows x max batches x instances`` (``[]`` when none of
    ``--window-ms/--max-batch/--preferred-batch`` is given). Defaults: window 0, max
    batch 1, 1 instance; preferred sizes above a max batch are left out for it.

    Raises:
        UsageError: preferred sizes above every max batch, or more than
            :data:`MAX_WHAT_IF` configurations.
    """
    from trtcheck.analyze.advice import Candidate
    from trtcheck.errors import UsageError

    if windows is None and batches is None and preferred is None:
        return []
    ws = windows if windows is not None else [0.0]
    bs = batches if batches is not None else [1]
    ps = preferred if preferred is not None else []
    if preferred is not None and not any(p <= b for p in ps for b in bs):
        raise UsageError(f"--preferred-batch {','.join(map(str, ps))} is above every "
                         "--max-batch", "give preferred sizes up to the max batch, e.g. "
                         "--max-batch 32 --preferred-batch 8,16")
    inst = sorted(set(instances or [1]))
    n = len(ws) * len(bs) * len(inst)
    if n > MAX_WHAT_IF:
        raise UsageError(f"the what-if asks for {n} configurations, more than {MAX_WHAT_IF}",
                         "give fewer windows, max batch sizes or instance counts")
    # --window-ms is ms; trtcheck counts the window in us
    return [Candidate(ms_to_us(w), b, k, tuple(p for p in ps if p <= b))
            for k in inst for b in bs for w in ws]


def advise_run_options(model: str, batch: list[int], seed: int, measure: dict[str, Any]) -> Any:
    """How ``advise MODEL`` measures T(b): a short bench
    (:data:`trtcheck.pipeline.ADVISE_BENCH_RULE`), fed and run as ``measure`` says
    (bench's ``--shapes``, ``--inputs``, ``--input-value``, ``--backend``, ``--providers``,
    ``--threads``...); the model file is checked first."""
    from trtcheck.cli.options_build import run_options_from_cli
    from trtcheck.load.model_file import check_model_path
    from trtcheck.measure.bench import StopRule
    from trtcheck.pipeline import ADVISE_BENCH_RULE

    check_model_path(model)
    return run_options_from_cli(batch=batch, warmup_s=None, min_duration_s=None,
                                min_samples=None, max_duration_s=None, seed=seed,
                                base_rule=StopRule(**ADVISE_BENCH_RULE), **measure)


def model_input_values(o: dict[str, Any]) -> dict[str, Any]:
    """The values of :func:`~trtcheck.cli.common.model_input_options` (how MODEL is fed
    and run) among the command's values ``o``, in the order ``o`` has them."""
    from trtcheck.cli.options_backend import backend_option_dests

    names = {"shapes", "inputs_npz", "input_values", "backend_name", *backend_option_dests()}
    return {k: v for k, v in o.items() if k in names}


def check_advise_options(model: str | None, o: dict[str, Any], measure: dict[str, Any]
                         ) -> tuple[int, ...] | None:
    """Check the options of ``trtcheck advise`` (``o``: the command's values by parameter
    name; ``measure``: :func:`model_input_values`) before any work.

    Raises:
        UsageError: not exactly one source of T(b), an option of MODEL's measurement
            without MODEL, a bad ``--torchserve-version``, ``--model-file`` without
            ``--export-dir``, or an output file that is an input.
        InputError: a bad ``--model-file``/``--model-name``, or a number out of range.

    Returns:
        The GPU ids of ``--gpus`` (:func:`~trtcheck.cli.options.gpu_ids`).
    """
    from trtcheck.cli.common import (
        MAX_ARRIVAL_RATE_PER_S,
        check_number,
        check_output_file,
        refuse_output_over_inputs,
        refuse_results_as_model,
    )
    from trtcheck.errors import UsageError
    from trtcheck.export import check_model_name
    from trtcheck.load.model_file import check_model_path
    from trtcheck.results.documents import results_input_file

    refuse_results_as_model(model, "advise from the numbers in it")
    from_path, latency_curve = o["from_path"], o["latency_curve"]
    sources = [s for s in (model, from_path, latency_curve) if s is not None]
    if len(sources) != 1:
        raise UsageError("give exactly one source of T(b): MODEL, --from results.json or "
                         "--latency-curve" + (f" (got {len(sources)})" if sources else ""),
                         "e.g. trtcheck advise --latency-curve 1:0.29,8:1.02 --arrival-rate 200")
    ctx = click.get_current_context()
    model_only = ["--batch"] + [f"--{k.replace('_npz', '').replace('_name', '').replace('input_values', 'input-value').replace('_', '-')}"
                                for k, v in measure.items() if v not in (None, (), False)]
    if model is None and (ctx.get_parameter_source("batch") is not
                          click.core.ParameterSource.DEFAULT or len(model_only) > 1):
        # as report --from: never ignore an option
        given = "--from" if from_path is not None else "--latency-curve"
        opt = model_only[1] if len(model_only) > 1 else "--batch"
        raise UsageError(f"{opt} sets how MODEL is measured, but T(b) comes from {given} "
                         "here", f"drop {opt}, or pass MODEL (and no {given}) to measure "
                         "T(b) now")
    from trtcheck.cli.options import gpu_ids

    gpu_list = gpu_ids(o["gpus"])
    torchserve_version, model_file = o["torchserve_version"], o["model_file"]
    if not torchserve_version.strip() or any(c.isspace() for c in torchserve_version):
        raise UsageError(f"--torchserve-version {torchserve_version!r} is no model version",
                         "give the version the .mar archive was made with, e.g. 1.0")
    if model_file is not None and o["export_dir"] is None:
        raise UsageError("--model-file names the model to copy into --export-dir",
                         "add --export-dir DIR, or drop --model-file")
    if o["export_dir"] is not None and model_file is not None:
        check_model_path(model_file)
    arrival = o["arrival"]
    refuse_output_over_inputs(
        [("-o", o["output"])],
        [("MODEL", model), ("--from", results_input_file(from_path)),
         ("--model-file", model_file),
         ("--arrival", arrival.partition(":")[2] if arrival.startswith("trace:") else None)])
    check_output_file(o["output"], o["overwrite"])  # the same -o rules as every command
    if o["model_name"] is not None:
        check_model_name(o["model_name"])
    check_number("--arrival-rate", o["arrival_rate"], low=0.0, low_open=True,
                 high=MAX_ARRIVAL_RATE_PER_S, unit=" req/s", example="200")
    check_number("--slo-p99-ms", o["slo_p99_ms"], low=0.0, low_open=True,
                 high=MAX_DURATION_MS, unit=" ms", example="50")
    for name in ("per_request_overhead_ms", "per_batch_overhead_ms", "per_item_overhead_ms"):
        check_number("--" + name.replace("_", "-"), o[name], high=MAX_DURATION_MS,
                     unit=" ms", example="0 (for none)")
    check_number("--timer-slack-us", o["timer_slack_us"], high=MAX_DURATION_MS * 1000.0,
                 unit=" us", example="0 (for none)")
    return gpu_list


def rate_from_load(load: Any, load_spec: str | None, arrival_rate: float | None,
                   arrival: str, n_requests: int | None
                   ) -> tuple[float | None, str, int | None]:
    """The arrival rate (req/s), process and simulated request count of the request: an
    open ``--load`` gives them (its explicit COUNT the request count), else the options.

    Raises:
        UsageError: an open-loop COUNT together with ``--requests``, or no arrival rate
            at all (no ``--arrival-rate``, trace or load).
    """
    from trtcheck.errors import UsageError

    if load is not None and load.kind == "open":
        arrival_rate = load.rate_per_s
        arrival = load.arrival
        if any(p.isdigit() for p in str(load_spec).split(":")[2:]):  # an explicit COUNT
            if n_requests is not None:
                raise UsageError("--load open:RATE:...:COUNT and --requests both give the "
                                 "number of simulated requests", "drop one of them")
            n_requests = max(2, load.count)
    elif arrival_rate is None and not arrival.startswith("trace:") and load is None:
        raise UsageError("--arrival-rate is required (requests per second)",
                         "e.g. --arrival-rate 200, --load burst:64, or --arrival trace:FILE")
    return arrival_rate, arrival, n_requests
