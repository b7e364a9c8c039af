"""``trtcheck precision``: accuracy of reduced-precision variants against the FP32 model."""

from __future__ import annotations

from pathlib import Path

import click

from trtcheck.cli.common import (
    BACKEND_NAMES,
    OutputFormat,
    check_output_file,
    emit_results,
    format_option,
    log,
    model_path_argument,
    overwrite_option,
    refuse_output_over_inputs,
)
from trtcheck.cli.options import CommaList
from trtcheck.cli.options_backend import backend_options
from trtcheck.cli.progress_display import cli_progress
from trtcheck.load.model_file import check_model_path
from trtcheck.report.text_tables import precision_text  # noqa: F401  (re-exported)

_TOL_OPTIONS = {
    "atol": "atol", "rtol": "rtol", "min_cosine": "min_cosine_similarity",
    "max_outside_fraction": "max_outside_fraction", "min_top1": "min_top1_agreement",
    "max_rel_l2": "max_rel_l2_error",
}


def parse_tolerance_options(**given: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """``--atol 1e-3`` (every precision) or ``--atol fp16=1e-3`` (one) -> overrides.

    Returns:
        ``{precision or "*": {tolerance field: value}}`` for
        :func:`trtcheck.measure.precision.precision_tolerance.tolerance_for`.

    Raises:
        InputError: a value that is not a number, or an unknown precision.
    """
    from trtcheck.errors import InputError
    from trtcheck.measure.precision import PRECISIONS

    out: dict[str, dict[str, float]] = {}
    for opt, entries in given.items():
        field = _TOL_OPTIONS[opt]
        flag = "--" + opt.replace("_", "-")
        for entry in entries or ():
            prec, sep, text = entry.rpartition("=")
            prec = prec.strip() if sep else "*"
            if sep and prec not in PRECISIONS:
                raise InputError(f"bad {flag} {entry!r}: unknown precision {prec!r}",
                                 f"use {flag} VALUE or {flag} PRECISION=VALUE with one of "
                                 f"{', '.join(PRECISIONS)}")
            try:
                value = float(text)
            except ValueError:
                raise InputError(f"bad {flag} {entry!r}: {text!r} is not a number",
                                 f"e.g. {flag} fp16=1e-3") from None
            out.setdefault(prec, {})[field] = value
    return out


def parse_candidates(entries: tuple[str, ...]) -> dict[str, str]:
    """``--candidate fp16=model_fp16.onnx`` (repeatable) -> ``{precision: path}``.

    Raises:
        InputError: malformed entry or a precision given twice.
    """
    from trtcheck.errors import InputError

    out: dict[str, str] = {}
    for entry in entries or ():
        prec, sep, path = entry.partition("=")
        if not sep or not prec or not path:
            raise InputError(f"bad --candidate {entry!r}: expected PRECISION=PATH",
                             "e.g. --candidate fp16=model.fp16.onnx")
        if prec in out:
            raise InputError(f"--candidate gives {prec} twice")
        out[prec.strip()] = path
    return out


def _npz_files(folder: str | None) -> list[Path]:
    """The ``*.npz`` files ``--inputs-dir`` reads (none for a missing folder)."""
    if folder is None or not Path(folder).is_dir():
        return []
    return sorted(f for f in Path(folder).iterdir() if f.suffix == ".npz")


@click.command("precision", epilog="Exit codes: 0 every variant within tolerance; 1 a variant "
                                   "failed its tolerances; 2 bad input; 3 environment; "
                                   "4 internal.")
@model_path_argument()
@click.option("--precision", "precision", default=None, metavar="LIST",
              type=CommaList(example="fp16,int8"),
              help="Precisions to compare with FP32, comma-separated (fp16, bf16, int8, fp8) "
                   "[default: fp16].")
@click.option("--precisions", "precisions_alias", default=None, hidden=True,
              type=CommaList(example="fp16,int8"),
              help="Old spelling of --precision (kept for existing scripts).")
@click.option("--candidate", "candidates", multiple=True, metavar="PREC=PATH",
              help="Use this file as the PREC variant (an FP16 ONNX, a TensorRT engine) instead "
                   "of building it; repeatable. Only fp16 can be built here.")
@click.option("--shapes", "shapes", multiple=True, metavar="NAME:DIMS",
              help="Input shapes, e.g. x:1x3x48x192 (repeatable or comma-separated).")
@click.option("--inputs", "inputs_npz", default=None, type=click.Path(dir_okay=False),
              help="Input values from one .npz (one array per input name).")
@click.option("--inputs-dir", "inputs_dir", default=None, type=click.Path(file_okay=False),
              help="A folder of .npz files, one sample each.")
@click.option("--input-value", "input_values", multiple=True, metavar="NAME=VALUE",
              help="A scalar value for an input, repeatable.")
@click.option("--samples", "sample_count", type=click.IntRange(min=1, max=10**5), default=4,
              show_default=True, help="Random samples when no --inputs/--inputs-dir is given.")
@click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=0, show_default=True,
              help="Seed of the first random sample (sample i uses seed + i).")
@click.option("--atol", multiple=True, metavar="[PREC=]VALUE",
              help="Absolute tolerance per element (default per precision: fp16 1e-2).")
@click.option("--rtol", multiple=True, metavar="[PREC=]VALUE",
              help="Relative tolerance per element (default per precision: fp16 1e-2).")
@click.option("--min-cosine", multiple=True, metavar="[PREC=]VALUE",
              help="Smallest cosine similarity per output (default: fp16 0.999).")
@click.option("--max-outside-fraction", multiple=True, metavar="[PREC=]VALUE",
              help="Largest share of elements outside atol/rtol (default: fp16 0.001).")
@click.option("--max-rel-l2", multiple=True, metavar="[PREC=]VALUE",
              help="Largest relative L2 error ||c - r|| / ||r|| per output (default: fp16 0.05).")
@click.option("--min-top1", multiple=True, metavar="[PREC=]VALUE",
              help="Smallest top-1 agreement of classifier outputs (default: int8 0.99).")
@click.option("--keep-fp32-ops", default=None, metavar="LIST", type=CommaList(unique=False),
              help="Op types the FP16 build keeps in FP32, besides the converter's defaults "
                   "(Resize, Range, TopK, ...), comma-separated.")
@click.option("--keep-fp32-nodes", default=None, metavar="LIST", type=CommaList(unique=False),
              help="Node names the FP16 build keeps in FP32, comma-separated.")
@click.option("--bench", is_flag=True, help="Also measure latency and throughput per precision.")
@click.option("--no-localize", is_flag=True,
              help="Skip the FP16 range check and the layer-wise localisation.")
@click.option("--backend", "backend_name", default=None, type=click.Choice(BACKEND_NAMES),
              help="Runtime of the FP32 reference [default by file: onnxruntime for .onnx].")
@backend_options(("onnxruntime",))
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
         *[("--inputs-dir", str(f)) for f in _npz_files(inputs_dir)],
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
