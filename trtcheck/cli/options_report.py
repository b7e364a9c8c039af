"""Options of ``trtcheck report``: what is reported (a model, the demo or a results
file), where, and the parts beside the batch sweep (serving, precision, advice, policy,
target), with the checks of the advice options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from trtcheck.cli.common import overwrite_option
from trtcheck.cli.options import CommaList, apply_options

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_OUTPUT = "trtcheck-report"


def report_options(f: F) -> F:
    """The options of ``trtcheck report`` from ``--demo`` to ``--target``, in their
    ``--help`` order (the measurement options follow them)."""
    return apply_options(f, [
        click.option("--demo", is_flag=True, help="Use the built-in ResNet-18 demo model (built and "
                                                  "cached on first use)."),
        click.option("--from", "from_json", default=None, type=click.Path(path_type=str),
                     help="Render from an existing results.json (or a report folder, a "
                          "perf_analyzer -f CSV, a Triton /v2/models/NAME/stats JSON); nothing is "
                          "measured."),
        click.option("-o", "--output", "output", default=DEFAULT_OUTPUT, show_default=True,
                     type=click.Path(file_okay=False, path_type=str),
                     help="Output directory for report.html, report.md, charts/ and results.json."),
        overwrite_option("Replace a report already in the output directory."),
        click.option("--no-bench", is_flag=True, help="Inspect only; skip the latency sweep."),
        click.option("--precision", "precisions", default=None, metavar="LIST",
                     type=CommaList(lower=True, example="fp16"),
                     help="Also compare reduced-precision variants of an ONNX model against FP32, "
                          "comma-separated, e.g. fp16 (see `trtcheck precision`)."),
        click.option("--serve/--no-serve", "serve", default=None,
                     help="Also measure serving through the embedded dynamic batcher: windows "
                          "0/2/10 ms at max batch 8 for a burst and open loops at 30% and 70% "
                          "of one instance's batch-1 capacity (for the demo 35 s, measured on a "
                          "shared 2-core VM at load 6-12; see `trtcheck serve` for full sweeps) "
                          "[default: on with --demo, else off]."),
        click.option("--arrival-rate", type=float, default=None, metavar="REQ_PER_S",
                     help="Add batching advice for this arrival rate (> 0, <= 1e9 req/s), from "
                          "the measured T(b) "
                          "(and serving overheads when measured); works with --from too "
                          "[default with --demo: 10% of one instance's measured batch-1 "
                          "capacity]."),
        click.option("--slo-p99-ms", type=float, default=None,
                     help="P99 latency objective for the advice, in ms (> 0, <= 1e7)."),
        click.option("--policy", "policy_path", default=None, type=click.Path(path_type=str),
                     help="Also judge the budgets of this gate policy (see `trtcheck gate`); a "
                          "failed budget makes the verdict 'not ready'. Baseline rules need "
                          "`trtcheck gate --baseline`."),
        click.option("--target", "target", default=None,
                     type=click.Choice(["tensorrt", "tensorrt_rtx", "onnxruntime", "triton"]),
                     help="The runtime you deploy on: the verdict and every finding are judged for "
                          "it, findings about another runtime become notes (e.g. 'TensorRT could "
                          "not build it' for --target onnxruntime). Recorded in results.json "
                          "(`target`). Default: tensorrt, or the target a --from file recorded."),
    ])


def check_advice_options(arrival_rate: float | None, slo_p99_ms: float | None) -> None:
    """Before anything is measured: the advice options are usable and none is ignored.

    Raises:
        UsageError: ``--slo-p99-ms`` without an arrival rate (it would be ignored), or a
            rate/objective that is not a finite number > 0 (InputError), or above
            :data:`~trtcheck.cli.common.MAX_ARRIVAL_RATE_PER_S` req/s /
            :data:`~trtcheck.cli.common.MAX_DURATION_MS` ms.
    """
    from trtcheck.cli.common import MAX_ARRIVAL_RATE_PER_S, MAX_DURATION_MS, check_number
    from trtcheck.errors import UsageError

    if slo_p99_ms is not None and arrival_rate is None:
        raise UsageError("--slo-p99-ms applies to the batching advice, which needs "
                         "--arrival-rate", "add --arrival-rate REQ_PER_S, or drop --slo-p99-ms")
    check_number("--arrival-rate", arrival_rate, low=0.0, low_open=True,
                 high=MAX_ARRIVAL_RATE_PER_S, unit=" req/s", example="200")
    check_number("--slo-p99-ms", slo_p99_ms, low=0.0, low_open=True, high=MAX_DURATION_MS,
                 unit=" ms", example="50")


def check_report_sources(model: str | None, demo: bool, from_json: str | None, output: str,
                         inputs_npz: str | None, policy_path: str | None) -> None:
    """Exactly one of MODEL, ``--demo`` and ``--from`` is given, and no report file in
    ``output`` would overwrite one of the inputs.

    Raises:
        UsageError: none or several of the three sources, a results document given as
            MODEL, or an output file that is an input.
    """
    from trtcheck.cli.common import refuse_output_over_inputs, refuse_results_as_model
    from trtcheck.errors import UsageError
    from trtcheck.report import report_output_files
    from trtcheck.results.documents import results_input_file

    refuse_results_as_model(model, "re-render its report")
    chosen = [x for x in (model is not None, demo, from_json is not None) if x]
    if len(chosen) != 1:
        raise UsageError("give exactly one of MODEL, --demo or --from results.json",
                         "e.g. trtcheck report --demo, or trtcheck report model.onnx -o out")
    refuse_output_over_inputs(
        [("-o", f) for f in report_output_files(output)],
        [("MODEL", model), ("--from", results_input_file(from_json)),
         ("--inputs", inputs_npz), ("--policy", policy_path)])


def refuse_measuring_options(measure_names: set[str]) -> None:
    """With ``--from`` nothing is measured: refuse the measuring options given (the
    command's own and ``measure_names``) rather than ignore them.

    Raises:
        UsageError: one of them was given.
    """
    from trtcheck.cli.options import given_options
    from trtcheck.errors import UsageError

    given = given_options({"no_bench", "precisions", "serve", "percentile_method",
                           *measure_names})
    if given:
        raise UsageError(f"{', '.join(given)} measure(s) a model, but --from only "
                         "re-renders a results file", "drop them, or run "
                         "`trtcheck report MODEL ...` to measure again")


def refuse_sweep_options() -> None:
    """With ``--no-bench`` and nothing else timed: refuse the batch sweep's options given
    rather than ignore them.

    Raises:
        UsageError: ``--batch``, a stop-rule option or ``--cuda-graph`` was given.
    """
    from trtcheck.cli.options import given_options
    from trtcheck.errors import UsageError

    given = given_options({"batch", "warmup_s", "min_duration_s", "min_samples",
                           "max_duration_s", "cuda_graph"})
    if given:
        raise UsageError(f"{', '.join(given)} set(s) the batch sweep, which --no-bench "
                         "skips", "drop them, or drop --no-bench")
