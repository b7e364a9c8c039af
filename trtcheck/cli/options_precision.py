"""Options of ``trtcheck precision``: the variants to compare, the inputs, the tolerances
(``--atol 1e-3`` or ``--atol fp16=1e-3``) and the FP16 build, with their parsers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from trtcheck.cli.common import BACKEND_NAMES
from trtcheck.cli.options import CommaList, apply_options
from trtcheck.cli.options_backend import backend_options

F = TypeVar("F", bound=Callable[..., Any])

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


def npz_files(folder: str | None) -> list[Path]:
    """The ``*.npz`` files ``--inputs-dir`` reads (none for a missing folder)."""
    if folder is None or not Path(folder).is_dir():
        return []
    return sorted(f for f in Path(folder).iterdir() if f.suffix == ".npz")


def precision_options(f: F) -> F:
    """The options of ``trtcheck precision`` from ``--precision`` to the backend options,
    in their ``--help`` order."""
    return apply_options(f, [
        click.option("--precision", "precision", default=None, metavar="LIST",
                     type=CommaList(example="fp16,int8"),
                     help="Precisions to compare with FP32, comma-separated (fp16, bf16, int8, fp8) "
                          "[default: fp16]."),
        click.option("--precisions", "precisions_alias", default=None, hidden=True,
                     type=CommaList(example="fp16,int8"),
                     help="Old spelling of --precision (kept for existing scripts)."),
        click.option("--candidate", "candidates", multiple=True, metavar="PREC=PATH",
                     help="Use this file as the PREC variant (an FP16 ONNX, a TensorRT engine) instead "
                          "of building it; repeatable. Only fp16 can be built here."),
        click.option("--shapes", "shapes", multiple=True, metavar="NAME:DIMS",
                     help="Input shapes, e.g. x:1x3x48x192 (repeatable or comma-separated)."),
        click.option("--inputs", "inputs_npz", default=None, type=click.Path(dir_okay=False),
                     help="Input values from one .npz (one array per input name)."),
        click.option("--inputs-dir", "inputs_dir", default=None, type=click.Path(file_okay=False),
                     help="A folder of .npz files, one sample each."),
        click.option("--input-value", "input_values", multiple=True, metavar="NAME=VALUE",
                     help="A scalar value for an input, repeatable."),
        click.option("--samples", "sample_count", type=click.IntRange(min=1, max=10**5), default=4,
                     show_default=True, help="Random samples when no --inputs/--inputs-dir is given."),
        click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=0, show_default=True,
                     help="Seed of the first random sample (sample i uses seed + i)."),
        click.option("--atol", multiple=True, metavar="[PREC=]VALUE",
                     help="Absolute tolerance per element (default per precision: fp16 1e-2)."),
        click.option("--rtol", multiple=True, metavar="[PREC=]VALUE",
                     help="Relative tolerance per element (default per precision: fp16 1e-2)."),
        click.option("--min-cosine", multiple=True, metavar="[PREC=]VALUE",
                     help="Smallest cosine similarity per output (default: fp16 0.999)."),
        click.option("--max-outside-fraction", multiple=True, metavar="[PREC=]VALUE",
                     help="Largest share of elements outside atol/rtol (default: fp16 0.001)."),
        click.option("--max-rel-l2", multiple=True, metavar="[PREC=]VALUE",
                     help="Largest relative L2 error ||c - r|| / ||r|| per output (default: fp16 0.05)."),
        click.option("--min-top1", multiple=True, metavar="[PREC=]VALUE",
                     help="Smallest top-1 agreement of classifier outputs (default: int8 0.99)."),
        click.option("--keep-fp32-ops", default=None, metavar="LIST", type=CommaList(unique=False),
                     help="Op types the FP16 build keeps in FP32, besides the converter's defaults "
                          "(Resize, Range, TopK, ...), comma-separated."),
        click.option("--keep-fp32-nodes", default=None, metavar="LIST", type=CommaList(unique=False),
                     help="Node names the FP16 build keeps in FP32, comma-separated."),
        click.option("--bench", is_flag=True, help="Also measure latency and throughput per precision."),
        click.option("--no-localize", is_flag=True,
                     help="Skip the FP16 range check and the layer-wise localisation."),
        click.option("--backend", "backend_name", default=None, type=click.Choice(BACKEND_NAMES),
                     help="Runtime of the FP32 reference [default by file: onnxruntime for .onnx]."),
        backend_options(("onnxruntime",)),
    ])
