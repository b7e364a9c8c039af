"""What ``trtcheck report`` settles before it measures: the demo's defaults, whether the
model is a TensorRT engine (or a folder of trtexec exports), and how an error of one part
of a written report is raised again."""

from __future__ import annotations

import os
from typing import Any

from trtcheck.errors import UsageError

DEMO_BATCHES = [1, 2, 4, 8, 16]
"""Batch sizes the demo sweeps when ``--batch`` is not given."""

DEMO_ARRIVAL_RATE_PER_S = 200.0
"""Stands for "the demo advises" in the option checks, in req/s; the rate the demo
advises at comes from the measured capacity (:data:`trtcheck.pipeline.DEMO_LOAD_SHARE`)."""


def demo_stop_rule() -> Any:
    """The demo's :class:`~trtcheck.measure.bench.StopRule` (seconds and counts): shorter
    than the default rule, so that the whole demo runs in a few minutes."""
    from trtcheck.measure.bench import StopRule

    return StopRule(warmup_s=0.3, warmup_min_iterations=3, min_duration_s=1.0,
                    min_samples=30, max_duration_s=10.0, precision_bound_s=5.0)


def is_report_engine_input(model: str, arrival_rate_per_s: float | None) -> bool:
    """Whether ``model`` is a TensorRT engine input (a plan, or a folder of trtexec
    exports) rather than a model file.

    Raises:
        UsageError: a folder of trtexec exports with an arrival rate: its per-layer
            timings are of one engine at one shape, not the T(b) the advice needs.
    """
    from trtcheck.inspection.engine import is_engine_input

    engine_input = os.path.exists(model) and is_engine_input(model)
    if engine_input and arrival_rate_per_s is not None and os.path.isdir(model):
        raise UsageError(
            f"--arrival-rate needs T(b), which the trtexec exports in {model} do not hold "
            "(per-layer timings at one shape)",
            "measure the engine with `trtcheck bench PLAN --batch 1,8,32` and advise "
            "--from that, or run `trtcheck advise --latency-curve B:MS,...`")
    return engine_input


def raise_without(exc: BaseException, part: str) -> None:
    """Raise ``exc`` again after the report was written without ``part``: a typed error
    keeps its exit code with the message saying what the report lacks; anything else (a
    bug) is raised as it is (exit 4), the report being written all the same."""
    from trtcheck.errors import EnvironmentProblem, InputError, TrtcheckError

    if not isinstance(exc, TrtcheckError):
        raise exc
    cls = EnvironmentProblem if isinstance(exc, EnvironmentProblem) else InputError
    raise cls(f"the report was written without {part}: {exc.message}", exc.hint) from None


def demo_report_model(log: Any) -> str:
    """The path of the built-in ResNet-18 demo model, built and cached on first use
    (``log`` gets one progress line).

    Raises:
        EnvironmentProblem: ONNX Runtime, which the demo runs on, is missing (before any
            work).
    """
    from trtcheck.backends.onnxruntime import import_onnxruntime
    from trtcheck.load.demo import demo_model_path

    import_onnxruntime()
    log("building/loading the demo ResNet-18 ...")
    return str(demo_model_path())


def demo_lesson(results: Any) -> str | None:
    """The demo's note in the batching advice of ``results`` (the line starting with
    ``demo: ``), or ``None``."""
    if results.advice is None:
        return None
    return next((n for n in results.advice.curve.notes if n.startswith("demo: ")), None)


def without_advice_error(advice_error: Any, output: str, arrival_rate_per_s: float) -> Any:
    """The :class:`~trtcheck.errors.InputError` (exit 2) of a report written without the
    batching advice it was asked for, ``advice_error`` being why; the hint names the
    command that adds the advice to the written results (``output``/results.json)."""
    from trtcheck.errors import InputError

    hint = advice_error.hint or "re-measure on a quieter machine"
    return InputError(f"the report was written without batching advice: "
                      f"{advice_error.message}",
                      f"{hint}; then add the advice with "
                      f"`trtcheck report --from {os.path.join(output, 'results.json')} "
                      f"--arrival-rate {arrival_rate_per_s:g} -o NEW_DIR`")
