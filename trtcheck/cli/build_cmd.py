"""``trtcheck build MODEL.onnx``: build TensorRT / TensorRT-RTX engines per precision."""

from __future__ import annotations

from pathlib import Path

import click

from trtcheck.cli.common import (
    OutputFormat,
    echo_json,
    echo_text,
    format_option,
    log,
    overwrite_option,
    refuse_output_over_inputs,
)
from trtcheck.cli.options import CommaList
from trtcheck.errors import InputError
from trtcheck.load.model_file import check_model_path
from trtcheck.load.shapes import build_profiles, check_profile_names


@click.command("build", epilog="Exit codes: 0 ok; 2 bad input (or a model TensorRT cannot "
                                "parse or build); 3 environment (no TensorRT); 4 internal.")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("--precision", default="fp32", show_default=True, metavar="TEXT",
              type=CommaList(lower=True, example="fp32,fp16"),
              help="Comma-separated: fp32, fp16, bf16, int8, fp8 (int8/fp8 need a Q/DQ model).")
@click.option("--runtime", type=click.Choice(["tensorrt", "tensorrt_rtx"]), default=None,
              help="Builder to use (default: tensorrt; tensorrt_rtx when "
                   "POLYGRAPHY_USE_TENSORRT_RTX=1).")
@click.option("-o", "--output-dir", "output_dir_text", type=click.Path(), required=True,
              help="Folder for <model>.<precision>.plan (existing plans are not overwritten).")
@click.option("--shapes", multiple=True, metavar="NAME:DIMS",
              help="Fixed shape for a dynamic input (min = opt = max).")
@click.option("--min-shapes", multiple=True, metavar="NAME:DIMS", help="Profile minimum.")
@click.option("--opt-shapes", multiple=True, metavar="NAME:DIMS", help="Profile optimum.")
@click.option("--max-shapes", multiple=True, metavar="NAME:DIMS", help="Profile maximum.")
@overwrite_option("Replace existing plans in the folder.")
@format_option(OutputFormat.TEXT, OutputFormat.JSON)
def cli(model: Path, precision: list[str], runtime: str | None, output_dir_text: str,
        shapes: tuple[str, ...], min_shapes: tuple[str, ...], opt_shapes: tuple[str, ...],
        max_shapes: tuple[str, ...], overwrite: bool, output_format: str) -> None:
    """Build one engine per precision from MODEL (ONNX), with detailed profiling verbosity
    and an optimization profile from the given shapes; print each plan's pre-flight.

    \b
    Examples:
      trtcheck build model.onnx --precision fp32,fp16 -o engines/
      trtcheck build det.onnx --runtime tensorrt_rtx -o out/ \\
          --min-shapes x:1x3x320x320 --opt-shapes x:1x3x640x640 --max-shapes x:1x3x960x960
    """
    from trtcheck.backends.tensorrt import default_runtime
    from trtcheck.load.onnx_model import load_onnx
    from trtcheck.measure.bench import PRECISIONS, build_engine

    precs = precision
    bad = [p for p in precs if p not in PRECISIONS]
    if bad or not precs:
        raise InputError(f"unknown precision {', '.join(bad) or '(none)'}",
                         f"choose from: {', '.join(PRECISIONS)}")
    profile = build_profiles(min_shapes, opt_shapes, max_shapes, shapes)
    if not output_dir_text.strip():
        raise InputError("-o is empty", "pass a folder for the plans, e.g. -o engines/")
    output_dir = Path(output_dir_text)
    # the model must be an ONNX model whatever its name, before any runtime is imported
    check_model_path(str(model))
    proto = load_onnx(model, load_external_data=False)
    check_profile_names(proto, profile, shapes=shapes, min_shapes=min_shapes,
                        opt_shapes=opt_shapes, max_shapes=max_shapes)
    if output_dir.exists() and not output_dir.is_dir():
        raise InputError(f"-o {output_dir} exists and is not a directory",
                         "pass a folder for the plans")
    outs = [(p, output_dir / f"{model.stem}.{p}.plan") for p in precs]
    refuse_output_over_inputs([("-o", str(out)) for _, out in outs], [("MODEL", str(model))])
    existing = [str(out) for _, out in outs if out.exists()]
    if existing and not overwrite:  # refuse before building any plan
        raise InputError(f"{', '.join(existing)} exists; not overwriting it",
                         "pass --overwrite, or choose another -o folder")
    created = not output_dir.exists()
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {output_dir}: {exc.strerror or exc}",
                         "choose a writable -o folder") from None
    rt = runtime or default_runtime()
    results = []
    try:
        for p, out in outs:
            log(f"building {out} ({rt}, {p}) ...")
            r = build_engine(model, out, runtime=rt, precision=p, shapes=profile,
                             overwrite=overwrite)
            results.append(r)
            if output_format == OutputFormat.TEXT.value:
                echo_text(f"{out}: {r.plan_size_bytes:,} bytes, built in {r.build_s:.2f} s "
                           f"with {r.runtime} {r.runtime_version}; {len(r.network_layers)} "
                           f"network layers; {r.plan.verdict}")
                for pr in r.profiles:
                    for name, sh in pr.shapes.items():
                        echo_text(f"  profile {pr.index}: {name} min "
                                  f"{'x'.join(map(str, sh.min))} opt "
                                  f"{'x'.join(map(str, sh.opt))} max "
                                  f"{'x'.join(map(str, sh.max))}")
                for n in r.notes:
                    echo_text(f"  note: {n}")
    except BaseException:
        if created and output_dir.is_dir() and not any(output_dir.iterdir()):
            output_dir.rmdir()  # leave no empty folder we made behind
        raise
    if output_format == OutputFormat.JSON.value:
        echo_json({"engines": [
            {"plan_path": str(r.plan_path), "precision": r.precision,
             "runtime": r.runtime, "runtime_version": r.runtime_version,
             "build_s": r.build_s, "plan_size_bytes": r.plan_size_bytes,
             "onnx_path": str(r.onnx_path), "network_layer_count": len(r.network_layers),
             "plan": r.plan.model_dump(mode="json"), "notes": r.notes,
             "profiles": [pr.model_dump(mode="json") for pr in r.profiles]}
            for r in results]},
            "build")
