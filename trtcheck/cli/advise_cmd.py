"""``trtcheck advise``: batching advice from T(b), overheads and an arrival rate."""

from __future__ import annotations

from typing import Any

import click

from trtcheck.cli.common import (
    OutputFormat,
    echo_json,
    echo_text,
    format_option,
    log,
    save_results_file,
)
from trtcheck.cli.options_advise import (
    advise_options,
    advise_run_options,
    check_advise_options,
    check_curve_bound,
    model_input_values,
    parse_instances,
    parse_load_option,
    rate_from_load,
    what_if_configs,
)
from trtcheck.results.documents import load_results_input
from trtcheck.stats import quiet_numerics


@click.command("advise", epilog="Exit codes: 0 ok; 2 bad input (including a load no "
               "configuration can carry); 3 environment; 4 internal.")
@click.argument("model", required=False, type=click.Path(dir_okay=True, path_type=str))
@advise_options
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
def cli(model: str | None, output: str | None, output_format: str, **o: Any) -> None:
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
      trtcheck advise --latency-curve 1:0.29,8:0.4,32:1.0 --per-request-overhead-ms 12 \\
          --serial-overhead --load burst:64 --window-ms 0,20,50,100 --max-batch 32
      trtcheck advise model.onnx --shapes x:1x3x48x192 --arrival-rate 300
      trtcheck advise --from live.json --arrival-rate 800 --window-ms 1,5 --max-batch 16
      trtcheck advise --from live.json --arrival-rate 500 --export-dir repo \\
          --model-file model.py
    """
    from trtcheck.analyze.advice import parse_curve_text
    from trtcheck.analyze.objectives import DEFAULT_OBJECTIVE
    from trtcheck.pipeline import advise_from_source
    from trtcheck.pipeline.advice_request import (advise_settings, export_advice,
                                                  recorded_defaults)

    measure = model_input_values(o)
    gpu_list = check_advise_options(model, {**o, "output": output}, measure)
    results_in, notes = None, []
    if o["from_path"] is not None:  # a tune document knows its rate, P99 objective and
        wanted = [k for k, missing in (  # objective: defaults for those not given
            ("arrival_rate", o["arrival_rate"] is None and o["load_spec"] is None
             and not o["arrival"].startswith("trace:")),
            ("slo_p99_ms", o["slo_p99_ms"] is None), ("objective", o["objective"] is None),
            ("instances", o["instances_text"] is None))
            if missing]
        if wanted:
            results_in = load_results_input(o["from_path"])
            for key, (value, note) in recorded_defaults(results_in, str(o["from_path"]),
                                                        wanted).items():
                o[key] = value
                notes.append(note)
    o["objective"] = o["objective"] or DEFAULT_OBJECTIVE
    instances = o.get("instances") or parse_instances(o["instances_text"])
    load = parse_load_option(o["load_spec"], o["arrival_rate"], o["arrival"])
    arrival_rate, arrival, n_requests = rate_from_load(load, o["load_spec"], o["arrival_rate"],
                                                       o["arrival"], o["n_requests"])
    what_if = what_if_configs(o["what_if_windows"], o["what_if_batches"],
                              o["what_if_preferred"], instances)
    settings = advise_settings(
        load=load, instances=instances, what_if=what_if, rate_per_s=arrival_rate,
        arrival_process=arrival, requests=n_requests, slo_p99_ms=o["slo_p99_ms"],
        per_request_overhead_ms=o["per_request_overhead_ms"],
        serial_overhead=o["serial_overhead"], per_batch_overhead_ms=o["per_batch_overhead_ms"],
        per_item_overhead_ms=o["per_item_overhead_ms"], timer_slack_us=o["timer_slack_us"],
        max_utilisation=o["max_utilisation"], seed=o["seed"], replicas=o["replicas"],
        device_kind=o["device_kind"], objective=o["objective"],
        notes=notes)
    if o["latency_curve"] is not None:
        with quiet_numerics():
            curve = parse_curve_text(o["latency_curve"])
        check_curve_bound(curve)
        outcome = advise_from_source(settings, curve=curve)
    elif o["from_path"] is not None:
        if results_in is None:
            results_in = load_results_input(o["from_path"])
        outcome = advise_from_source(settings, results=results_in,
                                     results_source=str(o["from_path"]))
    else:
        assert model is not None
        run_options = advise_run_options(model, o["batch"], o["seed"], measure)
        outcome = advise_from_source(settings, model=model, run_options=run_options, log=log)
    adv, results = outcome.advice, outcome.results
    export_advice(adv, results, model=model, model_file=o["model_file"],
                  name=o["model_name"] or outcome.model_name, device_kind=o["device_kind"],
                  gpus=gpu_list, torchserve_version=o["torchserve_version"],
                  export_dir=o["export_dir"], overwrite=o["overwrite"], log=log)
    if output:
        if results is None:
            from trtcheck.measure.bench import new_results

            results = new_results()
        results.advice = adv
        save_results_file(results, output)  # mode as open() gives (umask), not 0600
        log(f"results with advice saved to {output}")
    _print(adv, output_format)


def _print(adv: Any, output_format: str) -> None:
    """The advice on stdout as JSON, Markdown or text."""
    if output_format == OutputFormat.JSON.value:
        echo_json(adv, "advise")
    elif output_format == OutputFormat.MD.value:
        from trtcheck.report.advise_text import advice_extras_markdown
        from trtcheck.report.sec_advice import advice_markdown

        extras = advice_extras_markdown(adv)
        echo_text(advice_markdown(adv) + ("\n" + extras if extras else ""))
    else:
        from trtcheck.report.advise_text import advice_text

        echo_text(advice_text(adv))
