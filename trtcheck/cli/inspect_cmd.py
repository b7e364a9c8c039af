"""``trtcheck inspect MODEL``: what a model is, read from its file without running it.

Dispatch: :func:`_detect_kind` sniffs the file; each kind has one inspector in
:data:`INSPECTORS` (``kind -> function(path, shapes, output_format)``). ONNX models are
handled here; TensorRT plans and trtexec exports are recognised so that their
inspectors can be added as entries of :data:`INSPECTORS` (the block marked
"extension point" below) without touching the ONNX path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from trtcheck.cli.common import OutputFormat, echo_json, echo_text, format_option
from trtcheck.load.onnx_model import plan_magic

KIND_ONNX = "onnx"
KIND_TRT_PLAN = "trt-plan"
KIND_TRTEXEC_EXPORT = "trtexec-export"

def _detect_kind(path: Path) -> str:
    """What ``path`` holds, from its first bytes (not its extension).

    Returns:
        ``"trt-plan"`` for a TensorRT / TensorRT-RTX plan (magic ``ftrt``/``vtrt`` at
        byte 0 or 4), ``"trtexec-export"`` for a JSON file (trtexec ``--exportLayerInfo``
        / ``--exportProfile`` / ``--exportTimes`` write JSON) or a folder of such exports,
        ``"trt-plan"`` too for any ``.plan``/``.engine``/``.trt`` file (the plan pre-flight
        names what it really is), else ``"onnx"``: missing files, other folders and
        anything else go to the ONNX loader, which names the problem.
    """
    if path.is_dir():  # branch `trt`: a folder of trtexec exports
        from trtcheck.inspection.engine import is_engine_input

        return KIND_TRTEXEC_EXPORT if is_engine_input(path) else KIND_ONNX
    if path.is_file() and path.suffix.lower() in (".plan", ".engine", ".trt"):
        return KIND_TRT_PLAN  # branch `trt`: the plan pre-flight names what the file is
    if not path.is_file():
        return KIND_ONNX
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return KIND_ONNX
    if plan_magic(head) is not None:
        return KIND_TRT_PLAN
    if head.lstrip()[:1] in (b"{", b"[") or path.suffix.lower() == ".json":
        return KIND_TRTEXEC_EXPORT
    return KIND_ONNX


def _parse_shapes(specs: tuple[str, ...]) -> dict[str, list[int]]:
    """``("x:1x3x224x224", "a:1x2,b:3")`` -> ``{"x": [1, 3, 224, 224], ...}``.

    Raises:
        InputError: see :func:`trtcheck.load.shapes.parse_shapes`.
    """
    from trtcheck.load.shapes import parse_shapes

    return parse_shapes(list(specs))


def _inspect_onnx(path: Path, shapes: dict[str, list[int]], output_format: str) -> None:
    from trtcheck.report.inspect_render import render_markdown, render_text
    from trtcheck.inspection.onnx import inspect_onnx

    insp = inspect_onnx(path, shapes or None)
    if output_format == OutputFormat.JSON.value:
        echo_json(insp, "inspect")
    elif output_format == OutputFormat.MD.value:
        echo_text(render_markdown(insp), nl=False)
    else:
        echo_text(render_text(insp), nl=False)


# ---- branch `trt`: TensorRT plans and trtexec exports (trtcheck/cli/engine_inspect.py) ----
def _inspect_engine(path: Path, shapes: dict[str, list[int]], output_format: str) -> None:
    from trtcheck.cli.engine_inspect import inspect_engine

    inspect_engine(path, shapes, output_format)


#: kind -> inspector.
INSPECTORS: dict[str, Callable[[Path, dict[str, list[int]], str], None]] = {
    KIND_ONNX: _inspect_onnx,
    KIND_TRT_PLAN: _inspect_engine,
    KIND_TRTEXEC_EXPORT: _inspect_engine,
}
# ---- end branch `trt` ----


@click.command("inspect", epilog="Exit codes: 0 ok (lints are reported, not failed); 2 bad "
                                  "input; 3 environment; 4 internal.")
@click.argument("model", type=click.Path(path_type=Path), nargs=-1, required=True)
@click.option("--shapes", "shapes", multiple=True, metavar="NAME:DIMS",
              help="Concrete sizes for dynamic inputs, e.g. x:1x3x224x224 (repeatable or "
                   "comma-separated); used for the MACs estimate and the lints.")
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
def cli(model: tuple[Path, ...], shapes: tuple[str, ...], output_format: str) -> None:
    """Inspect MODEL: inputs/outputs, dynamic dims, opsets, ops, parameters, MACs, lints.

    \b
    Examples:
      trtcheck inspect model.onnx
      trtcheck inspect det.onnx --shapes x:1x3x320x320
      trtcheck inspect model.onnx --format json > inspection.json
      trtcheck inspect model.graph.json model.profile.json   # trtexec exports of one engine
    """
    parsed = _parse_shapes(shapes)
    if len(model) > 1:
        # several files: the trtexec exports of one engine (graph, profile, timing, ...)
        from trtcheck.cli.engine_inspect import inspect_engine
        from trtcheck.errors import InputError

        odd = [p for p in model if _detect_kind(p) != KIND_TRTEXEC_EXPORT or p.is_dir()]
        if odd:
            raise InputError(f"several paths given and {odd[0]} is not a trtexec export file",
                             "pass one model, plan or folder, or the trtexec export files "
                             "of one engine (model.graph.json model.profile.json ...)")
        inspect_engine(list(model), parsed, output_format)  # type: ignore[arg-type]
        return
    INSPECTORS[_detect_kind(model[0])](model[0], parsed, output_format)


__all__ = ["INSPECTORS", "cli"]
