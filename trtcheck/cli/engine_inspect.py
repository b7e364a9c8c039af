"""``trtcheck inspect`` for TensorRT engines and trtexec exports (branch ``trt``).

:func:`inspect_engine` has the signature of the inspectors in
``trtcheck.cli.inspect_cmd.INSPECTORS`` (``path, shapes, output_format``), so the inspect
command dispatches plans (``.plan``/``.engine``/``.trt`` or a plan magic), trtexec
export folders and ``*.graph.json``/``*.profile.json``/``*.timing.json`` here.
"""

from __future__ import annotations

from pathlib import Path

from trtcheck.cli.common import OutputFormat, echo_json, echo_text


def inspect_engine(path: Path, shapes: dict[str, list[int]] | None = None,
                   output_format: str = OutputFormat.TEXT.value, top: int = 15,
                   runtime: str | None = None) -> None:
    """Inspect an engine plan or trtexec exports and print it in ``output_format``.

    ``shapes`` is accepted for the common signature; engines carry their own profiles.

    Raises:
        InputError: not found, or neither a plan nor an export.
    """
    from trtcheck.backends.tensorrt import inspect_plan_on_gpu
    from trtcheck.inspection.engine import inspect_engine_path
    from trtcheck.report.sec_engine import render_markdown, render_text

    insp = inspect_engine_path(path, runtime=runtime, load_engine=inspect_plan_on_gpu)
    if output_format == OutputFormat.JSON.value:
        echo_json(insp, "inspect")
    elif output_format == OutputFormat.MD.value:
        echo_text(render_markdown(insp, top), nl=False)
    else:
        echo_text(render_text(insp, top), nl=False)
