"""``trtcheck precision``: accuracy of reduced-precision variants against the FP32 model."""

from __future__ import annotations

import click

from trtcheck.cli.common import (
    OutputFormat,
    check_output_file,
    emit_results,
    format_option,
    log,
    model_path_argument,
    overwrite_option,
    refuse_output_over_inputs,
)
from trtcheck.cli.options_precision import (
    npz_files,
    parse_candidates,
    parse_tolerance_options,
    precision_options,
)
from trtcheck.cli.progress_display import cli_progress
from trtcheck.load.model_file import check_model_path
from trtcheck.report.text_tables import precision_text  # noqa: F401  (re-exported)


@click.command("precision", epilog="Exit codes: 0 every variant within tolerance; 1 a variant "
                                   "failed its tolerances; 2 bad input; 3 environment; "
                                   "4 internal.")
@model_path_argument()
@precision_options
@click.option("-o", "--output", "output", default=None, type=click.Path(dir_okay=False),
              help="Save the results JSON here.")
@overwrite_option()
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
def cli(model: str, precision: list[str] | None, precisions_alias: list[str] | None, candidates: tuple[str, ...], shapes: tuple[str, ...],
        inputs_npz: str | None, inputs_dir: str | None, input_values: tuple[str, ...],
        sample_count: int, seed: int, atol: tuple[str, ...], rtol: tuple[str, ...],
        min_cosine: tuple[str, ...], max_outside_fraction: tuple[str, ...],
        max_rel_l2: tuple[str, ...], min_top1: tuple[str, ...], keep_fp32_ops: list[str] | None,
        keep_fp32_nodes: list[str] | None,
        bench: bool, no_localize: bool, backend_name: str | None, providers: list[str] | None,
        threads: int | None, output: str | None, overwrite: bool, output_format: str) -> None:
    """Compare reduced-precision variants of MODEL with its FP32 run.

    Builds the FP16 variant (ONNX Runtime's converter, I/O kept FP32) or takes --candidate
    files (e.g. TensorRT engines), runs the FP32 reference and every variant on the same
    inputs, and reports per output: max/mean absolute and relative error, cosine
    similarity, share of elements outside tolerance, NaN/Inf, top-1/top-5 agreement for
    classifier outputs, Polygraphy's elementwise verdict. FP16 variants also get a range
    check of the FP32 activations (|x| > 65504 overflows in FP16) and, on failure, the
    first layers where the error starts. The reference is always FP32: ONNX Runtime on
    CPU is not an FP16 reference.
    """

    from trtcheck.errors import GateFailed, UsageError
    from trtcheck.load.inputs import load_npz, parse_input_values
    from trtcheck.load.shapes import parse_shapes
    from trtcheck.measure.precision import compare_onnx_precisions
    from trtcheck.measure.bench import new_results

    refuse_output_over_inputs(
        [("-o", output)],
        [("MODEL", model), ("--inputs", inputs_npz),
         *[("--inputs-dir", str(f)) for f in npz_files(inputs_dir)],
         *[("--candidate", c.partition("=")[2]) for c in candidates]])
    check_model_path(model)
    if inputs_npz and inputs_dir:
        raise UsageError("give --inputs or --inputs-dir, not both")
    if precision is not None and precisions_alias is not None and precision != precisions_alias:
        raise UsageError("--precision and --precisions (its old spelling) disagree",
                         "give the list once, e.g. --precision fp16,int8")
    given = precision if precision is not None else precisions_alias
    if given is not None and not given:
        raise UsageError("--precision is empty", "name the precisions, e.g. --precision fp16")
    precs = given or ["fp16"]
    overrides = parse_tolerance_options(atol=atol, rtol=rtol, min_cosine=min_cosine,
                                        max_outside_fraction=max_outside_fraction,
                                        min_top1=min_top1, max_rel_l2=max_rel_l2)
    cands = parse_candidates(candidates)
    array_sets = None
    if inputs_npz:
        array_sets = [(inputs_npz, load_npz(inputs_npz))]
    elif inputs_dir:
        from trtcheck.measure.precision import load_npz_dir

        array_sets = load_npz_dir(inputs_dir)
    if array_sets:  # NaN/inf data would make every variant agree on NaN outputs
        from trtcheck.load.input_checks import check_finite_data

        for fname, arrays in array_sets:
            check_finite_data(arrays, fname)
    check_output_file(output, overwrite)
    rule = None
    if bench:
        from trtcheck.measure.bench import StopRule

        rule = StopRule(warmup_s=0.3, warmup_min_iterations=3, min_duration_s=1.0,
                        min_samples=20, max_duration_s=10.0)

    result = compare_onnx_precisions(
        model, precs, shapes=parse_shapes(shapes), array_sets=array_sets,
        values=parse_input_values(input_values) or None, sample_count=sample_count, seed=seed,
        candidates=cands, backend_name=backend_name,
        providers=providers or None, threads=threads, tolerance_overrides=overrides,
        bench_rule=rule, localize=not no_localize, keep_fp32_ops=keep_fp32_ops or [],
        keep_fp32_nodes=keep_fp32_nodes or [], log=cli_progress() or log)
    results = new_results()
    results.precision = result
    from trtcheck.report.sec_precision import precision_markdown

    emit_results(results, output, output_format, lambda: precision_text(result),
                 lambda: precision_markdown(results))
    if not result.passed:
        failed = [v for v in result.variants.values() if not v.passed]
        first = next((f for v in failed for f in v.findings if f.severity == "error"), None)
        raise GateFailed(f"precision check failed for {', '.join(v.label for v in failed)}"
                         + (f": {first.message}" if first else ""),
                         first.remedy if first and first.remedy else
                         "see the per-output table and localisation above")
