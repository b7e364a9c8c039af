"""``trtcheck advise``: batching advice from T(b), overheads and an arrival rate."""

from __future__ import annotations

from typing import Any

import click

from trtcheck.cli.common import (
    MAX_ARRIVAL_RATE_PER_S,
    MAX_DURATION_MS,
    FiniteFloatRange,
    OutputFormat,
    check_number,
    check_output_file,
    echo_json,
    echo_text,
    format_option,
    log,
    quiet_numerics,
    refuse_output_over_inputs,
    refuse_results_as_model,
    results_input_file,
    save_results_file,
)

MAX_INSTANCES = 100_000
"""Largest instance count ``--instances`` may name (a range is searched one count at a
time; beyond this it is no single deployment)."""


def _instances(text: str | None) -> list[int] | None:
    """``"4"`` -> [4]; ``"1..8"`` -> [1..8]; ``None`` -> automatic."""
    from trtcheck.errors import InputError

    if text is None:
        return None
    t = text.strip()
    hint = "give a count (--instances 2) or a range (--instances 1..8)"
    try:
        if ".." in t:
            lo, hi = (int(x) for x in t.split("..", 1))
            if lo < 1 or hi < lo:
                raise ValueError
        else:
            lo = hi = int(t)
            if lo < 1:
                raise ValueError
    except ValueError:
        raise InputError(f"cannot read --instances {text!r}", hint) from None
    if hi > MAX_INSTANCES:
        raise InputError(f"--instances {text} goes above {MAX_INSTANCES:,} instances",
                         f"give at most {MAX_INSTANCES}, e.g. --instances 1..64")
    return list(range(lo, hi + 1))


MAX_CURVE_BATCH = 65536
"""Largest batch size a ``--latency-curve`` point may have (2^16; the simulator holds
arrays proportional to the largest batch)."""


def _check_curve_bound(curve: Any) -> None:
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


@click.command("advise", epilog="Exit codes: 0 ok; 2 bad input (including a load no "
               "configuration can carry); 3 environment; 4 internal.")
@click.argument("model", required=False, type=click.Path(dir_okay=True, path_type=str))
@click.option("--from", "from_path", default=None, type=click.Path(dir_okay=True),
              help="Take T(b) (bench) and overheads (serve) from a results JSON (or a "
                   "report folder).")
@click.option("--latency-curve", default=None, metavar="B:MS,...",
              help="T(b) in ms (b <= 65536, each time > 0 and <= 1e7 ms), e.g. "
                   "1:0.29,8:1.02,16:1.73.")
@click.option("--arrival-rate", type=float, default=None, metavar="REQ_PER_S",
              help="Arrival rate in requests per second, > 0 and <= 1e9 (a trace: its own "
                   "rate if omitted).")
@click.option("--arrival", default="poisson", show_default=True,
              metavar="poisson|constant|trace:FILE",
              help="Arrival process; a trace file holds one arrival time (s) per line.")
@click.option("--slo-p99-ms", type=float, default=None, help="P99 latency objective in ms (> 0, <= 1e7).")
@click.option("--per-request-overhead-ms", type=float, default=None,
              help="Serving cost per request outside the queue (HTTP, serialisation), ms "
                   "(0 to 1e7).")
@click.option("--serial-overhead/--parallel-overhead", default=None,
              help="Whether the per-request overhead runs on one thread (a single Python "
                   "process: it then caps the rate) [default: parallel, or as measured].")
@click.option("--per-batch-overhead-ms", type=float, default=None,
              help="Instance time added to every execution (executor hop, launch), ms "
                   "(0 to 1e7).")
@click.option("--per-item-overhead-ms", type=float, default=None,
              help="Instance time per request in a batch (gather/scatter), ms (0 to 1e7).")
@click.option("--timer-slack-us", type=float, default=None,
              help="How late window timers fire, us, 0 to 1e10 [default: 0, or as "
                   "measured].")
@click.option("--instances", "instances_text", default=None, metavar="N|LO..HI",
              help="Instance count or range to search, at most 100000 [default: as many "
                   "as needed].")
@click.option("--max-utilisation", type=FiniteFloatRange(0.01, 1.0), default=0.9,
              show_default=True, help="Highest utilisation a recommended setting may run at.")
@click.option("--requests", "n_requests", type=click.IntRange(min=100, max=10**7), default=None,
              help="Simulated requests per candidate [default: ~2 s of traffic, 3,000-6,000].")
@click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=0, show_default=True,
              help="Simulation seed (an integer >= 0).")
@click.option("--batch", default="1,2,4,8,16,32", show_default=True, metavar="LIST",
              help="Batch sizes to measure when MODEL is given (only with MODEL).")
@click.option("--model-name", default=None,
              help="Model name in the exported settings: ASCII letters, digits, _ - . (not "
                   "first), at most 128 characters (a Triton model folder name) [default: "
                   "the model file's name, other characters as _].")
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Save a results JSON with the advice section here.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --output file.")
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
def cli(model: str | None, from_path: str | None, latency_curve: str | None,
        arrival_rate: float | None, arrival: str, slo_p99_ms: float | None,
        per_request_overhead_ms: float | None, serial_overhead: bool | None,
        per_batch_overhead_ms: float | None, per_item_overhead_ms: float | None,
        timer_slack_us: float | None, instances_text: str | None, max_utilisation: float,
        n_requests: int | None, seed: int, batch: str, model_name: str | None,
        output: str | None, overwrite: bool, output_format: str) -> None:
    """Recommend a batching configuration (or none) for an arrival rate.

    T(b) comes from exactly one of: MODEL (measured now, a short bench), --from
    results.json, or --latency-curve. The answer is a decision path (thin HTTP ->
    replace the Python layer -> execution contexts -> batching -> scale out), each step
    citing the number that decided it; the recommendation with simulated P50/P99,
    throughput and batch size, and the runner-up; the pitfalls that apply; and ready
    settings for Triton, Ray Serve and TorchServe.

    \b
    Examples:
      trtcheck advise --latency-curve 1:0.29 --per-request-overhead-ms 12 --arrival-rate 200
      trtcheck advise --latency-curve 1:20,8:40,32:110 --arrival-rate 3000
      trtcheck advise --from results.json --arrival-rate 500 --slo-p99-ms 20
    """
    import os

    from trtcheck.analyze.advise import advise
    from trtcheck.analyze.curve import parse_curve_text
    from trtcheck.analyze.export import (
        check_model_name,
        device_kind_from_results,
        export_settings,
        safe_model_name,
    )
    from trtcheck.analyze.inputs import build_request, inputs_from_results
    from trtcheck.errors import UsageError

    refuse_results_as_model(model, "advise from the numbers in it")
    sources = [s for s in (model, from_path, latency_curve) if s is not None]
    if len(sources) != 1:
        raise UsageError("give exactly one source of T(b): MODEL, --from results.json or "
                         "--latency-curve" + (f" (got {len(sources)})" if sources else ""),
                         "e.g. trtcheck advise --latency-curve 1:0.29,8:1.02 --arrival-rate 200")
    ctx = click.get_current_context()
    if model is None and ctx.get_parameter_source("batch") is not \
            click.core.ParameterSource.DEFAULT:  # as report --from: never ignore an option
        given = "--from" if from_path is not None else "--latency-curve"
        raise UsageError(f"--batch sets the batch sizes MODEL is measured at, but T(b) "
                         f"comes from {given} here", "drop --batch, or pass MODEL (and no "
                         f"{given}) to measure T(b) now")
    refuse_output_over_inputs(
        [("-o", output)],
        [("MODEL", model), ("--from", results_input_file(from_path)),
         ("--arrival", arrival.partition(":")[2] if arrival.startswith("trace:") else None)])
    check_output_file(output, overwrite)  # the same -o rules as every command
    if model_name is not None:
        check_model_name(model_name)
    check_number("--arrival-rate", arrival_rate, low=0.0, low_open=True,
                 high=MAX_ARRIVAL_RATE_PER_S, unit=" req/s", example="200")
    check_number("--slo-p99-ms", slo_p99_ms, low=0.0, low_open=True, high=MAX_DURATION_MS,
                 unit=" ms", example="50")
    if arrival_rate is None and not arrival.startswith("trace:"):
        raise UsageError("--arrival-rate is required (requests per second)",
                         "e.g. --arrival-rate 200, or --arrival trace:FILE")
    for name, v in (("--per-request-overhead-ms", per_request_overhead_ms),
                    ("--per-batch-overhead-ms", per_batch_overhead_ms),
                    ("--per-item-overhead-ms", per_item_overhead_ms)):
        check_number(name, v, high=MAX_DURATION_MS, unit=" ms", example="0 (for none)")
    check_number("--timer-slack-us", timer_slack_us, high=MAX_DURATION_MS * 1000.0,
                 unit=" us", example="0 (for none)")
    instances = _instances(instances_text)

    results = None
    measured: dict[str, Any] = {}
    if latency_curve is not None:
        with quiet_numerics():
            curve = parse_curve_text(latency_curve)
        _check_curve_bound(curve)
        name = model_name or "model"
    elif from_path is not None:
        from trtcheck.cli.common import load_results_input

        results = load_results_input(from_path)  # a report folder: its results.json
        curve, measured = inputs_from_results(results, source=str(from_path))
        name = model_name or safe_model_name(measured.get("model_name", "model"))
    else:
        curve, results = _measure(model, batch, seed)  # type: ignore[arg-type]
        name = model_name or safe_model_name(
            os.path.splitext(os.path.basename(model))[0])  # type: ignore[arg-type]

    with quiet_numerics():  # a bad number is one error line, never a NumPy warning
        req = build_request(
            curve, measured, rate_per_s=arrival_rate, arrival_process=arrival,
            slo_p99_ms=slo_p99_ms, per_request_overhead_ms=per_request_overhead_ms,
            serial_overhead=serial_overhead, per_batch_overhead_ms=per_batch_overhead_ms,
            per_item_overhead_ms=per_item_overhead_ms, timer_slack_us=timer_slack_us,
            instances=instances, max_utilisation=max_utilisation, requests=n_requests,
            seed=seed)
        adv = advise(req)
    kind = device_kind_from_results(results) if results is not None else None
    adv.export = export_settings(adv.recommendation.prediction, name, kind)

    if output:
        if results is None:
            from trtcheck.measure.runner import new_results

            results = new_results()
        results.advice = adv  # type: ignore[attr-defined]
        save_results_file(results, output)  # mode as open() gives (umask), not 0600
        log(f"results with advice saved to {output}")
    if output_format == OutputFormat.JSON.value:
        echo_json(adv)
    elif output_format == OutputFormat.MD.value:
        from trtcheck.report.sec_advice import advice_markdown

        echo_text(advice_markdown(adv))
    else:
        from trtcheck.analyze.advice_text import advice_text

        echo_text(advice_text(adv))


def _measure(model: str, batch: str, seed: int) -> tuple[Any, Any]:
    """A short bench of MODEL (0.2 s warm-up, >= 0.5 s and 20 runs per batch size)."""
    from trtcheck.analyze.curve import curve_from_bench
    from trtcheck.cli.common import batch_list, check_model_file, progress_enabled
    from trtcheck.measure.bench import StopRule
    from trtcheck.measure.runner import RunOptions, bench_model, new_results

    check_model_file(model)
    rule = StopRule(warmup_s=0.2, warmup_min_iterations=2, min_duration_s=0.5,
                    min_samples=20, max_duration_s=5.0)
    opts = RunOptions(batch_sizes=batch_list(batch), rule=rule, seed=seed,
                      progress=progress_enabled())
    from trtcheck.errors import InputError

    log(f"measuring T(b) of {model} (short bench: batch {batch}) ...")
    run = bench_model(model, opts)
    try:
        curve = curve_from_bench(run)
    except InputError as exc:  # a disturbed measurement (a busy machine): measure once more
        log(f"warning: {exc.message}; measuring again with a longer warm-up ...")
        opts.rule = StopRule(warmup_s=1.0, warmup_min_iterations=5, min_duration_s=1.0,
                             min_samples=20, max_duration_s=10.0)
        run = bench_model(model, opts)
        curve = curve_from_bench(run)
    results = new_results()
    results.bench.append(run)
    return curve, results
