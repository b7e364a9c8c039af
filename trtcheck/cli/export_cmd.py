"""``trtcheck export``: serving settings as files a server loads.

``trtcheck export triton MODEL -o REPO`` writes a Triton model repository entry,
``REPO/NAME/config.pbtxt`` and ``REPO/NAME/1/<model file>`` (docs:
user_guide/model_repository.md). :func:`write_model_repository` is shared with
``advise --export-dir``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import click

from trtcheck.cli.common import (
    BATCH_LIST,
    FiniteFloatRange,
    log,
    made_folders_removed_on_failure,
    overwrite_option,
    refuse_output_over_inputs,
    refuse_results_as_model,
    write_text_atomic,
)
from trtcheck.cli.options import CommaList
from trtcheck.files import replace_atomically
from trtcheck.load.model_file import check_model_path
from trtcheck.results.documents import load_results_input, results_input_file
from trtcheck.units import ms_to_us

PLAN_SUFFIXES = (".plan", ".engine", ".trt")
"""File endings taken as TensorRT plans (Triton platform ``tensorrt_plan``)."""


GPU_IDS = CommaList(int, min=0, unique=False, noun="GPU ids", example="0,1")
"""``--gpus 0,1``: GPU ids (integers >= 0); :func:`gpu_ids` checks them distinct."""


def gpu_ids(ids: list[int] | None) -> tuple[int, ...] | None:
    """``--gpus 0,1`` (read by :data:`GPU_IDS`) -> ``(0, 1)``; ``None`` -> ``None`` (no
    ids written).

    Raises:
        UsageError: no id, or an id given twice.
    """
    from trtcheck.errors import UsageError

    if ids is None:
        return None
    if not ids or len(set(ids)) != len(ids):
        raise UsageError(f"--gpus {','.join(map(str, ids))!r} must list distinct GPU ids >= 0",
                         "e.g. --gpus 0,1")
    return tuple(ids)


def _onnx_spec(model: str, device_kind: str | None, gpus: tuple[int, ...] | None) -> Any:
    """The ONNX Runtime backend entry: tensors from the graph; the batch axis is the first
    axis when every input and output has a dynamic one."""
    from trtcheck.analyze.export import TritonModelSpec, triton_tensor
    from trtcheck.inspection.onnx_shapes import graph_inputs, tensor_info
    from trtcheck.load.onnx_model import load_onnx

    m = load_onnx(model, load_external_data=False)
    ins = [tensor_info(v) for v in graph_inputs(m)]
    outs = [tensor_info(v) for v in m.graph.output]
    batch_axis = all(t.rank_known and t.shape and not isinstance(t.shape[0], int)
                     for t in ins + outs)
    return TritonModelSpec(
        backend="onnxruntime",
        inputs=tuple(triton_tensor(t.name, t.dtype, t.shape, batch_axis) for t in ins),
        outputs=tuple(triton_tensor(t.name, t.dtype, t.shape, batch_axis) for t in outs),
        batch_axis=batch_axis, device_kind=device_kind, gpus=gpus)


def _external_data_files(model: str) -> list[str]:
    """Relative paths of an ONNX model's external-data files (copied beside it)."""
    from onnx.external_data_helper import ExternalDataInfo, uses_external_data

    from trtcheck.load.onnx_model import load_onnx

    m = load_onnx(model, load_external_data=False)
    out: list[str] = []
    for t in m.graph.initializer:
        if uses_external_data(t):
            loc = ExternalDataInfo(t).location
            if loc not in out:
                out.append(loc)
    return out


def _refuse_rtx_plan(model: str) -> None:
    """Refuse a TensorRT-RTX plan (magic ``vtrt``): Triton's ``tensorrt_plan`` platform
    deserializes with TensorRT, which cannot load a TensorRT-RTX plan."""
    from trtcheck.errors import InputError
    from trtcheck.load.plan_header import MAGIC_RTX

    try:
        with open(model, "rb") as fh:
            magic = fh.read(4)
    except OSError:
        return  # the copy step reports an unreadable file
    if magic == MAGIC_RTX:
        raise InputError(
            f"{model} is a TensorRT-RTX plan: Triton's tensorrt_plan platform loads it with "
            "TensorRT, which cannot deserialize TensorRT-RTX plans",
            "export the ONNX model instead (Triton's onnxruntime backend, or build a "
            "TensorRT plan with trtexec on the serving GPU), or serve the RTX plan from a "
            "python-backend model that loads it with tensorrt_rtx")


def model_spec(model: str | None, *, device_kind: str | None, gpus: tuple[int, ...] | None,
               live_config: dict[str, Any] | None = None) -> Any:
    """The :class:`~trtcheck.analyze.export.TritonModelSpec` for a model file, or for the
    model a live Triton run served (``live_config``: the configuration the server
    reported, which then decides backend, tensors, kind and placement).

    * ``.onnx``: ``backend: "onnxruntime"``, tensors from the graph.
    * ``.plan``/``.engine``/``.trt``: ``platform: "tensorrt_plan"``, tensors left to
      Triton's auto-complete (reading them needs TensorRT); GPU only.
    * ``.py``: the python backend; its tensors must come from ``live_config``.

    Raises:
        InputError: a plan with ``--device-kind cpu``, a TensorRT-RTX plan (Triton's
            ``tensorrt_plan`` platform loads TensorRT plans only), a python model without
            a live run's configuration, a file of another kind.
    """
    from trtcheck.analyze.export import TritonModelSpec, spec_from_triton_config
    from trtcheck.errors import InputError

    if live_config is not None:
        spec = spec_from_triton_config(live_config)
        if device_kind is not None or gpus is not None:
            from dataclasses import replace

            spec = replace(spec, device_kind=device_kind or spec.device_kind,
                           gpus=gpus if gpus is not None else spec.gpus)
        return spec
    if model is None:
        raise InputError("no model file to put in the repository",
                         "pass MODEL (an .onnx or .plan file)")
    low = model.lower()
    if low.endswith(".onnx"):
        return _onnx_spec(model, device_kind, gpus)
    if low.endswith(PLAN_SUFFIXES):
        if device_kind == "cpu":
            raise InputError("a TensorRT plan runs on a GPU only; --device-kind cpu cannot "
                             "serve it", "drop --device-kind cpu, or export the ONNX model "
                             "for the onnxruntime backend")
        _refuse_rtx_plan(model)
        return TritonModelSpec(platform="tensorrt_plan", device_kind="gpu", gpus=gpus)
    if low.endswith(".py"):
        raise InputError(f"{model} is a python-backend model: its inputs and outputs are "
                         "not in the file", "export it with --from a live run "
                         "(trtcheck serve --url ... -o live.json) that recorded its config")
    raise InputError(f"cannot tell what kind of model {model} is",
                     "pass an .onnx, .plan (or .engine) file, or a python backend model.py "
                     "with --from live.json")


def write_model_repository(repo: str, name: str, config_text: str, model: str | None,
                           model_file: str, overwrite: bool) -> list[str]:
    """Write ``repo/name/config.pbtxt`` and copy ``model`` to ``repo/name/1/model_file``
    (with an ONNX model's external-data files beside it).

    Nothing is replaced unless ``overwrite``: an existing ``config.pbtxt`` or model file
    is an error; other files in the folder are never touched. A folder this call
    created is removed again when it fails.

    Returns:
        the paths written.

    Raises:
        InputError: a file exists (without ``overwrite``), the model cannot be read, or
            the folder is not writable.
    """
    from trtcheck.errors import InputError

    entry = Path(repo) / name
    config = entry / "config.pbtxt"
    version = entry / "1"
    targets = [config] + ([version / model_file] if model else [])
    extra: list[str] = []
    if model and model.lower().endswith(".onnx"):
        extra = _external_data_files(model)
        targets += [version / e for e in extra]
    if model and os.path.exists(version / model_file) and \
            os.path.samefile(model, version / model_file):
        raise InputError(f"the model {model} is the file the repository entry would write",
                         "export to another repository folder or --model-name")
    if not overwrite:
        for t in targets:
            if t.exists():
                raise InputError(f"{t} exists", "pass --overwrite to replace it, or choose "
                                 "another repository folder or --model-name")
    written: list[str] = []
    with made_folders_removed_on_failure(entry):
        try:
            version.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create {version}: {exc.strerror or exc}",
                             "choose a writable repository folder") from None
        if model:
            pairs = [(model, version / model_file)]
            base = Path(model).parent
            pairs += [(str(base / e), version / e) for e in extra]
            for src, dst in pairs:
                try:
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    replace_atomically(dst, lambda tmp, src=src: shutil.copyfile(src, tmp))
                except OSError as exc:
                    raise InputError(f"cannot copy {src} to {dst}: {exc.strerror or exc}",
                                     "check the model file and the repository folder") \
                        from None
                written.append(str(dst))
        write_text_atomic(str(config), config_text)
        written.insert(0, str(config))
    return written


def repository_outputs(repo: str, name: str, model_file: str) -> list[tuple[str, str]]:
    """``(option, path)`` of the files :func:`write_model_repository` writes, for
    :func:`~trtcheck.cli.common.refuse_output_over_inputs`."""
    entry = Path(repo) / name
    return [("-o", str(entry / "config.pbtxt")), ("-o", str(entry / "1" / model_file))]


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
    from trtcheck.analyze.export import check_model_name, safe_model_name, triton_config
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
        from trtcheck.analyze.export import device_kind_from_results

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
    if results is None and not explicit:
        log("no batching settings given: max_batch_size 1, no dynamic batching (pass --from "
            "advice.json, or --max-batch/--window-ms/--instances)")
    if model is None:
        log(f"no model file given: copy the served model into {Path(repo) / name / '1'} "
            f"as {model_file}")
    advice = getattr(results, "advice", None)
    assessed = (max(advice.curve.points_ms, default=None)  # what the advice measured
                if advice is not None and max_batch is None else None)
    text = triton_config(pred, name, spec.device_kind, spec=spec, preferred_batch_sizes=pref,
                         advised=results is not None, settings_given=explicit,
                         assessed_max_batch_size=assessed)
    for path in write_model_repository(repo, name, text, model, model_file, overwrite):
        log(f"wrote {path}")


def live_config_from_results(results: Any) -> dict[str, Any] | None:
    """The Triton model configuration a live serving run recorded (the server's
    ``/v2/models/NAME/config`` answer), or ``None``."""
    serve = getattr(results, "serve", None)
    live = getattr(serve, "live", None) if serve is not None else None
    cfg = getattr(live, "model_config_json", None) if live is not None else None
    if serve is not None and live is not None:  # the calibration config's own, when swept
        for c in serve.configs:
            if c.server_model_config:
                cfg = c.server_model_config
                break
    return cfg if isinstance(cfg, dict) and cfg else None


def settings_from(results: Any, live: dict[str, Any] | None) -> tuple[Any, list[int], bool]:
    """Batching settings to start from: the advice's recommendation, else the live run's
    own configuration, else max batch 1 and no window. Returns ``(prediction, preferred
    sizes, co-located)``."""
    from trtcheck.results.advice import SimPrediction

    advice = getattr(results, "advice", None)
    if advice is not None:
        return advice.recommendation.prediction, [], live is not None
    if live is not None:
        db = live.get("dynamic_batching") or {}
        groups = live.get("instance_group") or [{}]
        count = sum(int(g.get("count", 1) or 1) for g in groups)
        pred = SimPrediction(
            window_us=float(db.get("max_queue_delay_microseconds", 0) or 0),
            max_batch_size=max(1, int(live.get("max_batch_size", 1) or 1)), instances=count,
            arrival_rate_per_s=1.0, stable=True, utilisation=0.0)
        return pred, [int(b) for b in db.get("preferred_batch_size", []) or []], True
    return (SimPrediction(window_us=0.0, max_batch_size=1, instances=1, arrival_rate_per_s=1.0,
                          stable=True, utilisation=0.0), [], False)
