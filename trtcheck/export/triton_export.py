"""``trtcheck export triton``: a Triton model repository entry from a model file and
the settings of a results document (an advice's recommendation, or a live run's recorded
configuration), explicit values overriding them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from trtcheck.errors import UsageError
from trtcheck.export.settings import (
    check_model_name,
    device_kind_from_results,
    safe_model_name,
    triton_config,
)
from trtcheck.export.triton_repository import (
    live_config_from_results,
    model_spec,
    repository_outputs,
    settings_from,
    write_model_repository,
)
from trtcheck.files import refuse_output_over_inputs
from trtcheck.load.model_file import check_model_path
from trtcheck.results.documents import load_results_input, results_input_file


def export_triton_entry(model: str | None, repo: str, *, from_path: str | None = None,
                        model_name: str | None = None, max_batch: int | None = None,
                        window_us: float | None = None,
                        preferred_batch: list[int] | None = None,
                        instances: int | None = None, device_kind: str | None = None,
                        gpus: tuple[int, ...] | None = None, overwrite: bool = False,
                        log: Callable[[str], None] = lambda _line: None) -> list[str]:
    """Write ``REPO/NAME/config.pbtxt`` and ``REPO/NAME/1/<model file>``; return the paths
    written.

    Args:
        model: the model file (``.onnx``, ``.plan``, a live run's ``model.py``), or
            ``None`` to write the configuration alone (needs ``from_path``).
        from_path: a results JSON or report folder whose settings are used.
        max_batch, window_us, preferred_batch, instances: explicit settings (the window
            in microseconds) overriding those of ``from_path``.
        device_kind: ``"cpu"`` or ``"gpu"`` (``None``: as measured).
        gpus: GPU ids for ``instance_group``.
        log: called with notes for the user.

    Raises:
        UsageError, InputError: nothing to export, a bad name, settings that contradict
            the model or each other, an output over an input, an existing entry without
            ``overwrite`` (exit 2).
    """

    if model is None and from_path is None:
        raise UsageError("nothing to export", "pass MODEL (an .onnx or .plan file), e.g. "
                         "trtcheck export triton model.onnx -o repo")
    if model is not None:
        check_model_path(model)
    if model_name is not None:
        check_model_name(model_name)
    ids = gpus
    if ids is not None and device_kind == "cpu":
        raise UsageError("--gpus lists GPU ids, but --device-kind cpu puts the instances on "
                         "CPUs", "drop one of them")
    pref = preferred_batch

    results = None
    if from_path is not None:
        results = load_results_input(from_path)
    live = live_config_from_results(results)
    if device_kind is None and results is not None and live is None:
        device_kind = device_kind_from_results(results)  # where the advice's T(b) ran
    spec = model_spec(model, device_kind=device_kind, gpus=ids, live_config=live)
    if model is None and live is None:
        raise UsageError("nothing to export", "pass MODEL (an .onnx or .plan file)")
    name = model_name or (str(live.get("name")) if live and not model else None) or \
        safe_model_name(os.path.splitext(os.path.basename(model or "model"))[0])
    check_model_name(name)
    model_file = spec.model_file
    if model is not None and live is not None and \
            os.path.splitext(model)[1].lower() != os.path.splitext(model_file)[1]:
        raise UsageError(f"the live run's server ran a {spec.platform or spec.backend} model "
                         f"({model_file}), but MODEL is {os.path.basename(model)}",
                         f"pass the served model file ({model_file}), or drop --from")
    refuse_output_over_inputs(repository_outputs(repo, name, model_file),
                              [("MODEL", model), ("--from", results_input_file(from_path))])

    pred, pref_from, co_located = settings_from(results, live)
    explicit = any(v is not None for v in (max_batch, window_us, instances))
    pred = pred.model_copy(update={k: v for k, v in (
        ("max_batch_size", max_batch if max_batch is None else max(max_batch, 1)),
        ("window_us", window_us),
        ("instances", instances)) if v is not None})
    if max_batch and max_batch > 1 and not spec.batch_axis:
        raise UsageError(f"--max-batch {max_batch}: the model has no batch axis Triton can "
                         "batch on (a fixed first axis)", "export the model with a dynamic "
                         "first axis, or drop --max-batch")
    if max_batch == 0:
        spec = replace(spec, batch_axis=False)
    if instances is not None or co_located:
        spec = replace(spec, co_located=True)
    pref = pref if pref is not None else pref_from
    if pref and any(b > pred.max_batch_size for b in pref):
        raise UsageError(f"--preferred-batch {preferred_batch} has a size above max batch "
                         f"{pred.max_batch_size}", "give sizes up to --max-batch")
    advice = getattr(results, "advice", None)
    if advice is None and live is None and not explicit:
        log("no batching settings given" + (f" ({from_path} holds no advice)" if results
                                             is not None else "")
            + ": max_batch_size 1, no dynamic batching (pass --from advice.json, or "
            "--max-batch/--window-ms/--instances)")
    if model is None:
        log(f"no model file given: copy the served model into {Path(repo) / name / '1'} "
            f"as {model_file}")
    assessed = (max(advice.curve.points_ms, default=None)  # what the advice measured
                if advice is not None and max_batch is None else None)
    text = triton_config(pred, name, spec.device_kind, spec=spec, preferred_batch_sizes=pref,
                         advised=advice is not None, settings_given=explicit,
                         assessed_max_batch_size=assessed)
    return write_model_repository(repo, name, text, model, model_file, overwrite)
