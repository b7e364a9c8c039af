"""One entry point for TensorRT engine inspection: ``inspect_engine_path(path)``.

Accepts a serialized plan (``.plan``/``.engine``/``.trt`` or anything with a plan magic),
a trtexec export folder, or export files (``*.graph.json``, ``*.profile.json``,
``*.timing.json``), or a bare engine-inspector JSON. For a plan, the header is always
pre-flighted; the layer list needs a deserialized engine, i.e. TensorRT (or TensorRT-RTX)
and a GPU: when both are present the engine inspector is used, otherwise the result
says how to get layer information (``trtexec --exportLayerInfo`` on the GPU machine).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trtcheck.errors import InputError, TrtcheckError
from trtcheck.inspection.engine.engine_json import lint_engine, load_layer_info
from trtcheck.inspection.engine.engine_memory import memory_summary
from trtcheck.load.plan_header import read_plan_info
from trtcheck.inspection.engine.trtexec import export_kind, load_trtexec_export
from trtcheck.results.engine import EngineInspection, EngineMemory
from trtcheck.results.stats import Finding

PLAN_SUFFIXES = (".plan", ".engine", ".trt")
NON_PLAN_KINDS = ("onnx", "text", "empty", "unknown")
#: pre-flight problems that make the file itself unusable (bad input, exit 2); a plan
#: for another TensorRT version or runtime is still inspected from its header
DAMAGED_PLAN_CODES = ("plan-bad-header", "plan-truncated", "plan-prefix", "plan-text-mode",
                      "plan-text-decoded", "plan-text-reencoded")


def is_engine_input(path: str | Path) -> bool:
    """Whether ``path`` is something :func:`inspect_engine_path` handles (a plan by suffix
    or magic, a trtexec export folder or file, engine-inspector JSON), as opposed to an
    ONNX model. Reads at most the first 4 bytes of a file."""
    p = Path(path)
    if p.is_dir():
        return any(export_kind(f) for f in p.glob("*.json"))
    if not p.is_file():  # missing, a FIFO or a device: never opened here (a FIFO blocks)
        return p.suffix.lower() in PLAN_SUFFIXES or export_kind(p) is not None
    if p.suffix.lower() in PLAN_SUFFIXES or export_kind(p):
        return True
    if p.suffix.lower() == ".onnx":
        return False
    if p.suffix.lower() == ".json":
        from trtcheck.errors import InputError
        from trtcheck.safe_io import read_json_file

        try:  # a sniff: anything unreadable is "not an engine document"
            doc = read_json_file(p, "JSON file", None, lenient_text=True)
        except InputError:
            return False
        return isinstance(doc, dict) and "Layers" in doc
    try:
        with p.open("rb") as fh:
            return fh.read(4) in (b"ftrt", b"vtrt", b"ptrt")
    except OSError:
        return False


def layer_info_remedy(kind: str | None) -> str:
    """How to get a plan's layer information on the machine that can load it, in the
    runtime's own CLI: ``tensorrt_rtx`` for a TensorRT-RTX plan (TensorRT-RTX ships its
    own command-line tool, not trtexec), ``trtexec`` otherwise. Layer detail (types,
    precisions, tactics) is fixed when the engine is built (the builder's profiling
    verbosity; TensorRT ``IEngineInspector`` docs), so a plan built without detailed
    verbosity must be rebuilt with it; loading it with the flag adds nothing."""
    cli = "tensorrt_rtx" if kind == "tensorrt_rtx" else "trtexec"
    gpu = "an RTX GPU machine" if kind == "tensorrt_rtx" else "the GPU machine"
    return (f"on {gpu} run `{cli} --loadEngine=PLAN --exportLayerInfo=PLAN.graph.json "
            f"--exportProfile=PLAN.profile.json --exportTimes=PLAN.timing.json` and "
            f"inspect those files here, or run trtcheck there; layer types and precisions "
            f"are there only if the plan was built with `{cli} --onnx=MODEL "
            f"--profilingVerbosity=detailed --saveEngine=PLAN` (the detail is fixed at "
            "build time)")


def inspect_engine_path(path: str | Path | list[str | Path], runtime: str | None = None,
                        load_engine: Callable[[Path, str], EngineInspection] | None = None
                        ) -> EngineInspection:
    """Inspect an engine plan, trtexec exports or inspector JSON.

    Args:
        path: the file or folder, or a list of trtexec export files of one engine.
        runtime: ``"tensorrt"``/``"tensorrt_rtx"`` to load a plan with (default: the
            plan's own kind).
        load_engine: ``(plan_path, runtime) -> EngineInspection`` that deserializes the
            plan and runs the engine inspector, unlinted (the CLI passes
            :func:`trtcheck.backends.tensorrt.inspect_plan_on_gpu`; this layer may not
            import backends). ``None``: header only.

    Returns:
        :class:`EngineInspection` (``source`` ``"plan"`` or ``"trtexec"``).

    Raises:
        InputError: missing path; a file that is neither a plan nor an export.
    """
    if isinstance(path, (list, tuple)):
        if len(path) == 1:
            path = path[0]
        else:  # several files: one trtexec export set (graph, profile, timing, ...)
            return load_trtexec_export([Path(x) for x in path])
    p = Path(path)
    if not p.exists():
        raise InputError(f"not found: {p}", "check the path")
    if p.is_dir() or export_kind(p):
        return load_trtexec_export(p)
    if p.suffix.lower() == ".json":
        return load_layer_info(p)
    plan = read_plan_info(p, prefer_runtime=runtime)
    if plan.kind in NON_PLAN_KINDS or (plan.can_load is False and plan.problems and
                                       plan.problems[0].code in DAMAGED_PLAN_CODES):
        raise InputError(f"{p}: {plan.verdict}", plan.problems[0].remedy if plan.problems
                         else None)
    base = EngineInspection(source="plan", path=str(p), plan=plan, detailed=False,
                            built_with_version=plan.built_with_version,
                            runtime_name=plan.runtime_name,
                            runtime_version=plan.runtime_version,
                            memory=EngineMemory(plan_size_bytes=plan.file_size_bytes))
    lints: list[Finding] = list(plan.problems)
    why = "header only was read"
    if load_engine is not None and plan.can_load is not False:
        try:
            deep = load_engine(p, runtime or plan.kind)
        except TrtcheckError as exc:
            why = exc.message
        else:
            mem = memory_summary(deep, plan_size_bytes=plan.file_size_bytes,
                                 recorded=deep.memory)
            return deep.model_copy(update={"plan": plan, "memory": mem,
                                           "built_with_version": plan.built_with_version,
                                           "lints": lints + lint_engine(deep)})
    lints.append(Finding(
        code="engine-not-loaded", severity="info",
        message=f"layer information needs the engine deserialized ({why})",
        remedy=layer_info_remedy(plan.kind)))
    return base.model_copy(update={"lints": lints})
