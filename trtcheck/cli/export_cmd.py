"""``trtcheck export``: serving settings as files a server loads.

``trtcheck export triton MODEL -o REPO`` writes a Triton model repository entry,
``REPO/NAME/config.pbtxt`` and ``REPO/NAME/1/<model file>`` (docs:
user_guide/model_repository.md); the repository entry is written by
:mod:`trtcheck.export` (shared with ``advise --export-dir``).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from trtcheck.cli.common import (
    BATCH_LIST,
    FiniteFloatRange,
    log,
    overwrite_option,
    refuse_output_over_inputs,
    refuse_results_as_model,
)
from trtcheck.cli.options import GPU_IDS, gpu_ids
from trtcheck.export import (
    live_config_from_results,
    model_spec,
    repository_outputs,
    settings_from,
    write_model_repository,
)
from trtcheck.load.model_file import check_model_path
from trtcheck.results.documents import load_results_input, results_input_file
from trtcheck.units import ms_to_us

@click.group("export", epilog="Exit codes: 0 ok; 2 bad input; 3 environment; 4 internal.")
def cli() -> None:
    """Write serving settings as files a server loads."""


@cli.command("triton", epilog="Exit codes: 0 ok; 2 bad input; 3 environment; 4 internal.")
@click.argument("model", required=False, type=click.Path(dir_okay=False, path_type=str))
@click.option("-o", "--output", "repo", required=True, type=click.Path(file_okay=False),
              help="Model repository folder; the model goes in REPO/NAME/.")
@click.option("--from", "from_path", default=None, type=click.Path(dir_okay=True),
              help="Take the settings from a results JSON: its advice's recommendation, or "
                   "the configuration a live Triton run recorded (backend, tensors, kind).")
@click.option("--model-name", default=None,
              help="Folder and model name: ASCII letters, digits, _ - . (not first), at most "
                   "128 characters [default: the model file's name].")
@click.option("--max-batch", type=click.IntRange(0, 65536), default=None,
              help="max_batch_size (0: no batch axis) [default: from --from, else 1].")
@click.option("--window-ms", type=FiniteFloatRange(0.0, 1e7), default=None,
              help="max_queue_delay in ms (0 to 1e7) [default: from --from, else 0].")
@click.option("--preferred-batch", default=None, metavar="LIST", type=BATCH_LIST,
              help="preferred_batch_size list, each <= --max-batch [default: max batch].")
@click.option("--instances", type=click.IntRange(1, 100_000), default=None,
              help="instance_group count in one server (1 to 100000) [default: from "
                   "--from, else 1].")
@click.option("--device-kind", type=click.Choice(["cpu", "gpu"]), default=None,
              help="KIND_CPU or KIND_GPU [default: as measured; a plan: gpu; unknown: gpu, "
                   "said in a comment].")
@click.option("--gpus", default=None, metavar="IDS", type=GPU_IDS,
              help="GPU ids to list in instance_group, e.g. 0,1 [default: none, every "
                   "visible GPU].")
@overwrite_option("Replace an existing config.pbtxt and model "
                  "file in REPO/NAME (other files there are kept).")
def triton(model: str | None, repo: str, from_path: str | None, model_name: str | None,
           max_batch: int | None, window_ms: float | None, preferred_batch: list[int] | None,
           instances: int | None, device_kind: str | None, gpus: list[int] | None,
           overwrite: bool) -> None:
    """Write a Triton model repository entry: REPO/NAME/config.pbtxt and
    REPO/NAME/1/<model file> (model.onnx for the onnxruntime backend, model.plan for
    tensorrt_plan, model.py for a live run's python backend).

    \b
    Examples:
      trtcheck export triton model.onnx -o repo --device-kind cpu
      trtcheck export triton model.onnx -o repo --from advice.json
      trtcheck export triton model.py -o repo --from live.json --window-ms 2 --max-batch 16
    """
    from trtcheck.export import check_model_name, safe_model_name, triton_config
    from trtcheck.errors import UsageError

    refuse_results_as_model(model, "export the settings in it")
    if model is None and from_path is None:
        raise UsageError("nothing to export", "pass MODEL (an .onnx or .plan file), e.g. "
                         "trtcheck export triton model.onnx -o repo")
    if model is not None:
        check_model_path(model)
    if model_name is not None:
        check_model_name(model_name)
    ids = gpu_ids(gpus)
    if ids is not None and device_kind == "cpu":
        raise UsageError("--gpus lists GPU ids, but --device-kind cpu puts the instances on "
                         "CPUs", "drop one of them")
    pref = preferred_batch

    results = None
    if from_path is not None:
        results = load_results_input(from_path)
    live = live_config_from_results(results)
    if device_kind is None and results is not None and live is None:
        from trtcheck.export import device_kind_from_results

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
    explicit = any(v is not None for v in (max_batch, window_ms, instances))
    pred = pred.model_copy(update={k: v for k, v in (
        ("max_batch_size", max_batch if max_batch is None else max(max_batch, 1)),
        ("window_us", None if window_ms is None else ms_to_us(window_ms)),
        ("instances", instances)) if v is not None})
    if max_batch and max_batch > 1 and not spec.batch_axis:
        raise UsageError(f"--max-batch {max_batch}: the model has no batch axis Triton can "
                         "batch on (a fixed first axis)", "export the model with a dynamic "
                         "first axis, or drop --max-batch")
    if max_batch == 0:
        from dataclasses import replace

        spec = replace(spec, batch_axis=False)
    if instances is not None or co_located:
        from dataclasses import replace

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
    for path in write_model_repository(repo, name, text, model, model_file, overwrite):
        log(f"wrote {path}")
