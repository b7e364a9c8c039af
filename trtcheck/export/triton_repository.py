"""A Triton model repository entry from a model file or a live run: the model's
:class:`~trtcheck.export.settings.TritonModelSpec` and the files
``REPO/NAME/config.pbtxt`` and ``REPO/NAME/1/<model file>`` (docs:
user_guide/model_repository.md), for ``trtcheck export triton`` and ``advise --export-dir``.
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path
from typing import Any

from trtcheck.files import made_folders_removed_on_failure, replace_atomically, write_text_atomic

PLAN_SUFFIXES = (".plan", ".engine", ".trt")
"""File endings taken as TensorRT plans (Triton platform ``tensorrt_plan``)."""



def _copy_to(src: str | os.PathLike[str], tmp: str | os.PathLike[str]) -> None:
    shutil.copyfile(src, tmp)

def _onnx_spec(model: str, device_kind: str | None, gpus: tuple[int, ...] | None) -> Any:
    """The ONNX Runtime backend entry: tensors from the graph; the batch axis is the first
    axis when every input and output has a dynamic one."""
    from trtcheck.export.settings import TritonModelSpec, triton_tensor
    from trtcheck.inspection.onnx import graph_inputs, tensor_info
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
    """The :class:`~trtcheck.export.settings.TritonModelSpec` for a model file, or for the
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
    from trtcheck.export.settings import TritonModelSpec, spec_from_triton_config
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


def check_repository_entry(repo: str, name: str, overwrite: bool,
                           instead: str = "another repository folder or --model-name") -> None:
    """Refuse, before any work, an export over an existing ``repo/name/config.pbtxt``
    (unless ``overwrite``): what :func:`write_model_repository` would refuse at the end.
    ``instead``: what the hint offers besides ``--overwrite``.

    Raises:
        InputError: the entry's ``config.pbtxt`` exists and ``overwrite`` is false.
    """
    from trtcheck.errors import InputError

    config = Path(repo) / name / "config.pbtxt"
    if not overwrite and config.exists():
        raise InputError(f"{config} exists", f"pass --overwrite to replace it, or choose "
                         f"{instead}")


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
                    replace_atomically(dst, functools.partial(_copy_to, src))
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


def live_config_from_results(results: Any) -> dict[str, Any] | None:
    """The Triton model configuration a live serving run recorded (the server's
    ``/v2/models/NAME/config`` answer: the first swept configuration's, with the model's
    own ``max_batch_size`` where that is larger), or a tune document's original
    configuration, or ``None``."""
    serve = getattr(results, "serve", None)
    tune = getattr(results, "tune", None)
    if serve is None and tune is not None:
        original = getattr(tune, "original_config", None)
        return original if isinstance(original, dict) and original else None
    live = getattr(serve, "live", None) if serve is not None else None
    cfg = getattr(live, "model_config_json", None) if live is not None else None
    if serve is not None and live is not None:  # the calibration config's own, when swept
        swept = next((c.server_model_config for c in serve.configs
                      if c.server_model_config), None)
        if swept:
            # a sweep may have loaded a smaller max batch than the model's own: the server
            # allows the model's (the export keeps it where larger sizes were not assessed)
            cfg = {**swept, "max_batch_size": max(
                int(str(swept.get("max_batch_size", 0) or 0)), live.model_max_batch_size)}
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
