"""The recommendation as ready settings for Triton, Ray Serve and TorchServe.

Vocabulary and field names are each server's documented ones:

* Triton model configuration (``config.pbtxt``, docs: user_guide/model_configuration.md
  and user_guide/batcher.md): ``max_batch_size``, ``dynamic_batching {
  preferred_batch_size, max_queue_delay_microseconds }``, ``instance_group [ { count,
  kind, gpus } ]`` (``count`` instances on *each* GPU listed in ``gpus``).
* Ray Serve (docs: serve/advanced-guides/dyn-req-batch): ``@serve.batch(max_batch_size,
  batch_wait_timeout_s)`` on an async method and ``@serve.deployment(num_replicas,
  ray_actor_options={"num_gpus": 1})``.
* TorchServe (docs: batch_inference_with_ts.md, management API): ``batch_size``,
  ``max_batch_delay`` (integer milliseconds) and workers per model; in
  ``config.properties`` the ``models`` JSON keys ``batchSize``, ``maxBatchDelay``,
  ``minWorkers``, ``maxWorkers``.

The simulated semantics are Triton's (the window bounds the oldest request's wait). Ray
Serve's and TorchServe's timeouts also start with the first request of a batch, so the
same numbers carry over; TorchServe's delay is whole milliseconds and is rounded up
(a note says so).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from trtcheck.export.export_plan import ExportPlan, plan_export
from trtcheck.errors import InputError
from trtcheck.results.advice import ExportedSettings, SimPrediction
from trtcheck.units import ms_to_us, us_to_ms, us_to_s

MODEL_NAME_MAX_CHARS = 128
"""Longest model name accepted by :func:`check_model_name`."""

_MODEL_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def check_model_name(name: str) -> str:
    """A model name for the exported settings, as the user gave it (``--model-name``).

    Triton names a model by its folder in the model repository and puts the name in URLs
    (``/v2/models/<name>``); TorchServe puts it in a ``.mar`` file name and a URL. The
    rule kept here is one that is a valid folder name and needs no quoting anywhere:
    ASCII letters, digits, ``_``, ``-`` and ``.``, not starting with ``.`` or ``-``, at
    most :data:`MODEL_NAME_MAX_CHARS` characters.

    Returns:
        ``name`` unchanged.

    Raises:
        InputError: ``name`` breaks the rule.
    """
    if len(name) <= MODEL_NAME_MAX_CHARS and _MODEL_NAME_RE.fullmatch(name):
        return name
    raise InputError(f"model name {name!r} cannot name a Triton model folder",
                     "use ASCII letters, digits, '_', '-' and '.' (not first), at most "
                     f"{MODEL_NAME_MAX_CHARS} characters, e.g. --model-name resnet18_fp16")


def safe_model_name(text: str) -> str:
    """A name that passes :func:`check_model_name`, made from a file stem: every other
    character becomes ``_``, a leading ``.``/``-`` is dropped, cut to
    :data:`MODEL_NAME_MAX_CHARS`; ``"model"`` when nothing is left."""
    out = re.sub(r"[^A-Za-z0-9_.-]", "_", text).lstrip(".-")[:MODEL_NAME_MAX_CHARS]
    return out or "model"


def pbtxt_string(text: str) -> str:
    """``text`` as a protobuf text-format string literal (double quotes; backslash, quote
    and control characters escaped), as ``config.pbtxt`` parses it."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\%03o" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


TRITON_GPUS_PER_SERVER = 8
"""GPUs per Triton server when no GPU ids are given (8-GPU hosts are the common size)."""

DEVICE_KINDS = ("gpu", "cpu")
"""Values of ``device_kind``: where the instances run (``None``: not recorded, GPU assumed)."""

TRITON_DATA_TYPES: dict[str, str] = {
    "bool": "TYPE_BOOL", "uint8": "TYPE_UINT8", "uint16": "TYPE_UINT16",
    "uint32": "TYPE_UINT32", "uint64": "TYPE_UINT64", "int8": "TYPE_INT8",
    "int16": "TYPE_INT16", "int32": "TYPE_INT32", "int64": "TYPE_INT64",
    "float16": "TYPE_FP16", "float32": "TYPE_FP32", "float64": "TYPE_FP64",
    "string": "TYPE_STRING", "bfloat16": "TYPE_BF16",
}
"""Numpy-style dtype name -> Triton ``DataType`` (docs: user_guide/model_configuration.md,
"Datatypes")."""

TRITON_DEFAULT_MODEL_FILES: dict[str, str] = {
    "tensorrt_plan": "model.plan", "onnxruntime": "model.onnx", "python": "model.py",
}
"""Triton's default model file name in the version folder, per platform or backend."""


@dataclass(frozen=True)
class TritonTensor:
    """One ``input`` or ``output`` entry of a Triton model configuration.

    Attributes:
        name: tensor name as the model has it.
        data_type: Triton type, e.g. ``"TYPE_FP32"`` (see :data:`TRITON_DATA_TYPES`).
        dims: shape without the batch axis when ``max_batch_size > 0``; ``-1`` for a
            variable size.
    """

    name: str
    data_type: str
    dims: tuple[int, ...]


@dataclass(frozen=True)
class TritonModelSpec:
    """What a model repository entry needs beside the batching settings.

    Attributes:
        platform: ``"tensorrt_plan"`` or ``""`` (Triton's ``platform``).
        backend: ``"onnxruntime"``, ``"python"``, ... or ``""`` (Triton's ``backend``);
            exactly one of ``platform`` and ``backend`` is set.
        inputs, outputs: the tensors (empty: left to Triton's auto-complete, which the
            TensorRT and ONNX Runtime backends support).
        batch_axis: whether the model's first axis is a batch axis Triton may batch on
            (``False``: ``max_batch_size: 0``, no dynamic batching).
        device_kind: ``"gpu"``/``"cpu"`` where the instances run (``None``: not known,
            GPU assumed and said so in a comment).
        co_located: all instances in one server (a live Triton's instance group:
            ``count: N`` on the same host) rather than one instance per GPU or host.
        gpus: GPU ids each server lists (``gpus: [...]``); ``None`` writes no ids, so
            Triton places ``count`` instances on every GPU the server sees.
        parameters: backend ``parameters`` (string values) to keep, e.g. the python
            backend's ``EXECUTION_ENV_PATH``.
        configured_max_batch_size: the ``max_batch_size`` the served model had (a live
            Triton's configuration); ``None``: not known. An advice that did not assess
            batches above its recommendation never lowers it.
    """

    platform: str = ""
    backend: str = ""
    inputs: tuple[TritonTensor, ...] = ()
    outputs: tuple[TritonTensor, ...] = ()
    batch_axis: bool = True
    device_kind: str | None = None
    co_located: bool = False
    gpus: tuple[int, ...] | None = None
    parameters: tuple[tuple[str, str], ...] = ()
    configured_max_batch_size: int | None = None

    @property
    def model_file(self) -> str:
        """Default file name of the model in the version folder."""
        return TRITON_DEFAULT_MODEL_FILES.get(self.platform or self.backend, "model")


def triton_tensor(name: str, dtype: str, shape: Sequence[int | str | None],
                  batch_axis: bool) -> TritonTensor:
    """A model tensor (numpy-style ``dtype``, ``shape`` as inspection reports it: ints,
    or a name/``None`` for a dynamic size) as a Triton ``input``/``output`` entry.

    With ``batch_axis`` the first axis is dropped (Triton adds it back up to
    ``max_batch_size``); dynamic sizes become ``-1``.

    Raises:
        InputError: a dtype Triton has no type for (sequences, maps, float8, int4), or a
            tensor of rank 0 when a batch axis is wanted.
    """
    data_type = TRITON_DATA_TYPES.get(dtype)
    if data_type is None:
        raise InputError(f"tensor {name!r} has type {dtype}, which Triton cannot serve",
                         "export a model whose inputs and outputs are plain tensors of "
                         f"{', '.join(sorted(TRITON_DATA_TYPES))}")
    dims = [int(d) if isinstance(d, int) and d >= 0 else -1 for d in shape]
    if batch_axis:
        if not dims:
            raise InputError(f"tensor {name!r} has no axes, so no batch axis",
                             "export the model with a leading batch axis, or pass "
                             "--max-batch 0 (no batching)")
        dims = dims[1:]
    return TritonTensor(name, data_type, tuple(dims))


def server_split(instances: int, per_server: int) -> list[int]:
    """Instances per server when each server holds at most ``per_server``: full servers
    first, the rest on the last one (12 over 8 -> ``[8, 4]``). Both >= 1."""
    full, rest = divmod(instances, per_server)
    return [per_server] * full + ([rest] if rest else [])


def device_kind_from_results(results: object) -> str | None:
    """Where the advice's T(b) was measured, from the results the curve came from: the
    primary bench run's backend, else the serving run's (the order
    :func:`trtcheck.analyze.advice.inputs.inputs_from_results` takes T(b) in).

    ``"gpu"`` for a TensorRT backend or a device named ``GPU ...``/``NVIDIA ...``;
    ``"cpu"`` for a device named ``CPU ...`` (ONNX Runtime on the CPU provider);
    ``None`` when the results hold neither run, or the backend names no device (the
    synthetic backend). A live Triton run: the kind of its recorded instance groups.
    """
    serve = getattr(results, "serve", None)
    live = getattr(serve, "live", None) if serve is not None else None
    if live is not None and getattr(results, "primary_bench", None) is None:
        groups = (getattr(live, "model_config_json", None) or {}).get("instance_group") or []
        kinds = {str(g.get("kind", "")) for g in groups if isinstance(g, dict)}
        return "cpu" if kinds == {"KIND_CPU"} else "gpu" if "KIND_GPU" in kinds else None
    run = getattr(results, "primary_bench", None) or serve
    backend = getattr(run, "backend", None)
    if backend is None:
        return None
    name = str(getattr(backend, "name", "")).lower()
    device = str(getattr(backend, "device", "")).strip().lower()
    if name in ("tensorrt", "tensorrt_rtx") or device.startswith(("gpu", "nvidia")):
        return "gpu"
    if device.startswith("cpu"):
        return "cpu"
    return None


def _check_kind(device_kind: str | None) -> str | None:
    if device_kind is not None and device_kind not in DEVICE_KINDS:
        raise ValueError(f"device_kind must be one of {DEVICE_KINDS} or None, "
                         f"got {device_kind!r}")
    return device_kind


def _tensor_lines(key: str, tensors: Sequence[TritonTensor]) -> list[str]:
    if not tensors:
        return []
    out = [f"{key} ["]
    for i, t in enumerate(tensors):
        dims = ", ".join(str(d) for d in t.dims)
        out += ["  {", f"    name: {pbtxt_string(t.name)}", f"    data_type: {t.data_type}",
                f"    dims: [ {dims} ]", "  }" + ("," if i < len(tensors) - 1 else "")]
    return out + ["]"]


def _gpu_groups(n: int, gpus: tuple[int, ...] | None) -> list[str]:
    """``instance_group`` lines for ``n`` instances, one per GPU, split over servers."""
    if gpus is None:
        split = server_split(n, TRITON_GPUS_PER_SERVER)
        lines = ["instance_group [", "  { count: 1, kind: KIND_GPU }", "]",
                 "# count: 1 on every GPU the server sees (no GPU ids written; "
                 "restrict with CUDA_VISIBLE_DEVICES)"]
        if len(split) == 1:
            if n > 1:
                lines.append(f"# {n} instances: run this server with {n} GPUs visible, "
                             "one instance on each (each with the measured T(b) to itself)")
            else:
                lines.append("# 1 instance: run this server with 1 GPU visible")
            return lines
        arithmetic = " + ".join(str(k) for k in split)
        lines.append(f"# {n} instances = {arithmetic}: {len(split)} servers behind a load "
                     "balancer, one instance per GPU: "
                     + ", ".join(f"server {i + 1} with {k} GPU{'s' if k > 1 else ''} visible"
                                 for i, k in enumerate(split)))
        return lines
    per = len(gpus)
    split = server_split(n, per)

    def group(k: int, prefix: str = "") -> list[str]:
        ids = ", ".join(str(i) for i in gpus[:k])
        return [f"{prefix}instance_group [",
                f"{prefix}  {{ count: 1, kind: KIND_GPU, gpus: [ {ids} ] }}",
                f"{prefix}]"]

    if len(split) == 1:
        lines = group(split[0])
        if n > 1:
            lines.append(f"# {n} instances: one on each of {n} GPUs (each with the "
                         "measured T(b) to itself)")
        return lines
    full = n // per
    rest = n - full * per
    sums = f"{full} x {per}" if full > 1 else f"{per}"
    arithmetic = f"{sums} + {rest}" if rest else f"{full} x {per}"
    lines = [f"# {n} instances = {arithmetic}: {len(split)} servers behind a load "
             "balancer, one instance per GPU (count: 1 on each GPU listed)"]
    if not rest:
        lines.append(f"# each of the {full} servers: {per} GPUs")
        return lines + group(per)
    first = "server 1" if full == 1 else f"servers 1-{full}"
    lines.append(f"# {first}: {per} GPUs each" if full > 1 else f"# {first}: {per} GPUs")
    lines += group(per)
    lines.append(f"# server {len(split)}: {rest} GPU{'s' if rest > 1 else ''}, with this "
                 "instance_group instead")
    return lines + group(rest, prefix="# ")


def triton_config(p: SimPrediction, model_name: str = "model",
                  device_kind: str | None = None, *, spec: TritonModelSpec | None = None,
                  preferred_batch_sizes: Sequence[int] = (), advised: bool = True,
                  settings_given: bool = False,
                  assessed_max_batch_size: int | None = None,
                  measured_batcher: bool = False) -> str:
    """A whole ``config.pbtxt`` for the configuration ``p``.

    Fields (docs: user_guide/model_configuration.md): ``name``; ``platform`` or
    ``backend`` and ``input``/``output`` from ``spec`` (none: the batching and instance
    fragment only); ``max_batch_size`` (``0`` when the model has no batch axis);
    ``dynamic_batching { preferred_batch_size, max_queue_delay_microseconds }`` when
    batching pays (``preferred_batch_size`` only when ``preferred_batch_sizes`` are
    given: without it Triton forms batches up to ``max_batch_size``, which is what the
    advice simulated); ``instance_group``:

    ``max_batch_size`` is never lowered below ``spec.configured_max_batch_size`` (the
    live server's own) when the advice assessed no larger size
    (``assessed_max_batch_size``, the largest batch of its T(b), at most ``p``'s max
    batch): those sizes were not found worse, only not measured. The server's value is
    kept with a comment saying why (:func:`~trtcheck.export.export_plan.plan_export`,
    the rule every target's export follows).

    * GPU (``device_kind`` ``"gpu"`` or ``None``), one instance per GPU: without GPU ids
      (``spec.gpus`` ``None``) ``{ count: 1, kind: KIND_GPU }``, which Triton places on
      every visible GPU, with a comment saying how many GPUs each server needs (at most
      :data:`TRITON_GPUS_PER_SERVER` per server; 12 = 8 + 4); with ids, ``gpus: [...]``
      per server as given.
    * CPU: ``kind: KIND_CPU``, one instance per host (T(b) used the host's cores).
    * ``spec.co_located`` (a live Triton's own instance group): ``count: N`` of the
      recorded kind in one server.

    ``measured_batcher``: ``p`` was measured behind Triton's dynamic batcher (``trtcheck
    tune``'s pick): the ``dynamic_batching`` block is written at max batch 1 too, so the
    export is the configuration that was measured.

    ``advised`` says whether ``p`` came from an advice or a measurement (the comments
    then give its reasons); ``False`` (defaults or the user's flags, nothing analysed)
    makes the comments say only what was given (``settings_given``: the user's batching
    flags) and what the defaults are.

    Raises:
        ValueError: ``device_kind`` is not ``"gpu"``, ``"cpu"`` or ``None``.
    """
    spec = spec or TritonModelSpec(device_kind=device_kind)
    kind = _check_kind(device_kind if device_kind is not None else spec.device_kind)
    plan = plan_export(p, batch_axis=spec.batch_axis,
                       configured_max_batch_size=spec.configured_max_batch_size,
                       assessed_max_batch_size=assessed_max_batch_size,
                       preferred_batch_sizes=tuple(preferred_batch_sizes))
    p = plan.prediction
    batching = spec.batch_axis and p.max_batch_size > 1
    mbs = p.max_batch_size if spec.batch_axis else 0
    lines = [f"name: {pbtxt_string(model_name)}"]
    if spec.platform:
        lines.append(f"platform: {pbtxt_string(spec.platform)}")
    if spec.backend:
        lines.append(f"backend: {pbtxt_string(spec.backend)}")
    lines.append(f"max_batch_size: {mbs}")
    lines += [f"# {n}" for n in plan.notes_for("triton") if spec.batch_axis]
    lines += _tensor_lines("input", spec.inputs)
    lines += _tensor_lines("output", spec.outputs)
    if batching:
        pref = sorted({int(b) for b in preferred_batch_sizes if 1 <= b <= mbs})
        lines += ["dynamic_batching {"]
        if pref:
            lines.append(f"  preferred_batch_size: [ {', '.join(str(b) for b in pref)} ]")
        lines += [f"  max_queue_delay_microseconds: {int(round(p.window_us))}", "}"]
    elif not spec.batch_axis:
        lines.append("# max_batch_size 0: the model has no batch axis Triton can batch on")
    elif measured_batcher:
        lines += ["# max batch 1 behind the dynamic batcher, as measured",
                  "dynamic_batching {",
                  f"  max_queue_delay_microseconds: {int(round(p.window_us))}", "}"]
    elif advised:
        lines.append("# no dynamic_batching block: batching does not pay here")
    elif settings_given:
        lines.append("# no dynamic_batching block: max batch 1 as given")
    else:
        lines.append("# no dynamic_batching block: no batching settings given (advise "
                     "--export-dir writes them)")
    for key, value in spec.parameters:
        lines += ["parameters {", f"  key: {pbtxt_string(key)}",
                  f"  value: {{ string_value: {pbtxt_string(value)} }}", "}"]
    n = p.instances
    if spec.co_located:
        k = "KIND_CPU" if kind == "cpu" else "KIND_GPU"
        ids = (f", gpus: [ {', '.join(str(i) for i in spec.gpus)} ]"
               if spec.gpus is not None and k == "KIND_GPU" else "")
        lines += ["instance_group [", f"  {{ count: {n}, kind: {k}{ids} }}", "]"]
        return "\n".join(lines) + "\n"
    if kind == "cpu":
        lines += ["instance_group [", "  { count: 1, kind: KIND_CPU }", "]"]
        if n > 1:
            lines.append(f"# {n} instances in all: {n} hosts behind a load balancer, one CPU "
                         "instance each (T(b) was measured with a whole host's cores; "
                         "instances on one host would share them)")
        return "\n".join(lines) + "\n"
    if kind is None and not advised:
        lines.append("# KIND_GPU: the default; --device-kind cpu for a CPU host")
    elif kind is None:
        lines.append("# KIND_GPU assumed: the latency curve records no device "
                     "(use kind: KIND_CPU for a model served on CPUs, or --device-kind cpu)")
    lines += _gpu_groups(n, spec.gpus)
    return "\n".join(lines) + "\n"


def instances_per_server(p: SimPrediction, device_kind: str | None,
                         spec: TritonModelSpec | None = None) -> list[int]:
    """How :func:`triton_config` splits ``p.instances`` over servers: all in one server
    when ``spec.co_located``; one per host on a CPU; else one per GPU, at most
    :data:`TRITON_GPUS_PER_SERVER` (or the number of GPU ids given) per server."""
    spec = spec or TritonModelSpec(device_kind=device_kind)
    kind = device_kind if device_kind is not None else spec.device_kind
    if spec.co_located:
        return [p.instances]
    if kind == "cpu":
        return [1] * p.instances
    per = len(spec.gpus) if spec.gpus else TRITON_GPUS_PER_SERVER
    return server_split(p.instances, per)


RAY_ONGOING_BATCHES = 2
"""Ray Serve ``max_ongoing_requests`` is set to this many batches of ``max_batch_size``:
one running and one forming. Ray's default (5 in Ray 2.x, docs:
serve/advanced-guides/performance "max_ongoing_requests") caps every batch at 5 requests,
whatever ``@serve.batch`` allows."""


def ray_serve_code(p: SimPrediction, device_kind: str | None = None, *,
                   plan: ExportPlan | None = None, advised: bool = True) -> str:
    """Python snippet for Ray Serve: replicas, ``max_ongoing_requests`` and
    ``@serve.batch`` (one GPU per replica; on a CPU curve no GPU is requested).

    ``max_ongoing_requests`` is :data:`RAY_ONGOING_BATCHES` x ``max_batch_size`` (at least
    ``max_batch_size``, so a replica can be sent a whole batch); without batching Ray's
    default is left alone. ``plan`` (:func:`~trtcheck.export.export_plan.plan_export`)
    settles the max batch all targets deploy and adds its notes (default: ``p`` as it
    is); ``advised`` false (settings given, nothing analysed) says so instead of "batching
    does not pay here".

    Raises:
        ValueError: ``device_kind`` is not ``"gpu"``, ``"cpu"`` or ``None``.
    """
    kind = _check_kind(device_kind)
    plan = plan or plan_export(p)
    p = plan.prediction
    args = [f"num_replicas={p.instances}"]
    if p.max_batch_size > 1:
        args.append(f"max_ongoing_requests={RAY_ONGOING_BATCHES * p.max_batch_size}")
        body = (f"    @serve.batch(max_batch_size={p.max_batch_size}, "
                f"batch_wait_timeout_s={us_to_s(p.window_us):g})\n"
                "    async def __call__(self, requests):\n"
                "        return self.run_batch(requests)  # one result per request\n")
    else:
        why = ("batching does not pay here" if advised and plan.batch_axis else
               "the model has no batch axis" if not plan.batch_axis else "max batch 1")
        body = ("    async def __call__(self, request):  # no @serve.batch: "
                f"{why}\n"
                "        return self.run_one(request)\n")
    note = "".join(f"# {n}\n" for n in plan.notes_for("ray"))
    if p.max_batch_size > 1:
        note += (f"# max_ongoing_requests {RAY_ONGOING_BATCHES * p.max_batch_size}: one batch "
                f"of {p.max_batch_size} running and one forming (Ray's default of 5 would cap "
                "every batch at 5)\n")
    if kind == "cpu":
        deployment = ("# T(b) was measured on a CPU: give each replica the cores that "
                      "measurement used (ray_actor_options num_cpus)\n" + note
                      + f"@serve.deployment({', '.join(args)})\n")
    else:
        args.append('ray_actor_options={"num_gpus": 1}')
        deployment = note + f"@serve.deployment({', '.join(args)})\n"
    return "from ray import serve\n\n\n" + deployment + "class Model:\n" + body


TORCHSERVE_DEFAULT_VERSION = "1.0"
"""TorchServe model version written when none is given (``torch-model-archiver
--version``'s usual value); ``--torchserve-version`` sets it."""


def torchserve_config(p: SimPrediction, model_name: str = "model", *,
                      version: str = TORCHSERVE_DEFAULT_VERSION,
                      servers: Sequence[int] | None = None,
                      plan: ExportPlan | None = None) -> str:
    """``config.properties`` ``models=`` entry and the equivalent management-API call.

    Args:
        p: the configuration.
        model_name: the model's name (JSON-escaped, percent-encoded in the URL).
        version: the model version the ``.mar`` archive was made with.
        servers: workers per server, as the Triton export splits the instances (see
            :func:`instances_per_server`); ``None``: all on one server. The entry gets
            the first server's count; a comment lists the others.
        plan: the settings all targets deploy and their notes
            (:func:`~trtcheck.export.export_plan.plan_export`; default: ``p`` as it is).
    """
    plan = plan or plan_export(p)
    p = plan.prediction
    delay_ms = int(math.ceil(us_to_ms(p.window_us) - 1e-9))
    note = "".join(f"# {n}\n" for n in plan.notes_for("torchserve"))
    if p.window_us > 0 and abs(ms_to_us(delay_ms, None) - p.window_us) > 1e-6:
        note += (f"# max_batch_delay is whole ms: {us_to_ms(p.window_us):g} ms rounded up "
                f"to {delay_ms} ms\n")
    split = list(servers) if servers else [p.instances]
    workers = split[0]
    if len(split) > 1:
        counts = ", ".join(f"server {i + 1}: {k}" for i, k in enumerate(split))
        note += (f"# {p.instances} workers in all over {len(split)} servers, as the Triton "
                 f"export splits them ({counts}); this entry is server 1's"
                 + (", set minWorkers/maxWorkers to the server's count on the others\n"
                    if len(set(split)) > 1 else "\n"))
    entry = {model_name: {version: {"batchSize": p.max_batch_size, "maxBatchDelay": delay_ms,
                                    "minWorkers": workers, "maxWorkers": workers}}}
    # the JSON goes in a Java .properties value, where a backslash escapes: double it
    models = "models=" + json.dumps(entry).replace("\\", "\\\\")
    curl = ("# or: curl -X POST \"http://localhost:8081/models?url=%s.mar&batch_size=%d"
            "&max_batch_delay=%d&initial_workers=%d\"" % (quote(model_name, safe=""),
                                                          p.max_batch_size, delay_ms,
                                                          workers))
    return note + models + "\n" + curl + "\n"


def export_settings(p: SimPrediction, model_name: str = "model",
                    device_kind: str | None = None, *, spec: TritonModelSpec | None = None,
                    preferred_batch_sizes: Sequence[int] | None = None,
                    torchserve_version: str = TORCHSERVE_DEFAULT_VERSION,
                    assessed_max_batch_size: int | None = None) -> ExportedSettings:
    """All three exports for the recommended configuration ``p``.

    ``model_name`` is written escaped for each format (a protobuf string in
    ``config.pbtxt``, JSON inside a ``.properties`` value and a percent-encoded URL for
    TorchServe); the CLI also restricts it with :func:`check_model_name`.
    ``device_kind`` (``"gpu"``, ``"cpu"`` or ``None``: not recorded, GPU assumed; see
    :func:`device_kind_from_results`) picks Triton's instance kind and Ray's resources;
    ``spec`` the platform/backend, tensors, GPU ids and placement of the Triton config.
    TorchServe's workers per server follow the Triton split. ``preferred_batch_sizes``
    ``None`` takes ``p``'s own (what the advice chose; empty: none written);
    ``assessed_max_batch_size``: see :func:`triton_config`.

    Raises:
        ValueError: ``device_kind`` is not one of those.
    """
    kind = device_kind if device_kind is not None else (spec.device_kind if spec else None)
    pref = p.preferred_batch_sizes if preferred_batch_sizes is None else preferred_batch_sizes
    plan = plan_export(p, batch_axis=spec.batch_axis if spec is not None else True,
                       configured_max_batch_size=(spec.configured_max_batch_size
                                                  if spec is not None else None),
                       assessed_max_batch_size=assessed_max_batch_size,
                       preferred_batch_sizes=tuple(pref or ()))
    return ExportedSettings(
        triton_config_pbtxt=triton_config(
            p, model_name, kind, spec=spec, preferred_batch_sizes=pref or (),
            assessed_max_batch_size=assessed_max_batch_size),
        ray_serve_python=ray_serve_code(p, kind, plan=plan),
        torchserve_config=torchserve_config(
            p, model_name, version=torchserve_version,
            servers=instances_per_server(plan.prediction, kind, spec), plan=plan))


def spec_from_triton_config(config: dict[str, Any]) -> TritonModelSpec:
    """The repository entry of the model a live Triton served, from the configuration the
    server reported (``GET /v2/models/NAME/config``: Triton's ``ModelConfig`` as JSON,
    int64 fields as numbers or strings).

    Kept: ``platform``/``backend``, ``input``/``output`` (name, ``data_type``, ``dims``),
    whether the model batches (``max_batch_size > 0``), the instance kind of the first
    ``instance_group`` and its GPU ids, and string ``parameters``. The instances stay in
    one server (``co_located``), as the measured server ran them.

    Raises:
        InputError: the configuration fails its check
            (:func:`trtcheck.results.kserve_answers.check_model_config`), names neither a
            platform nor a backend, or has a tensor without a name or type.
    """
    from trtcheck.results.kserve_answers import BadAnswer, check_model_config

    try:
        config = check_model_config(config)
    except BadAnswer as exc:
        raise InputError(f"the recorded Triton model configuration has a bad "
                         f"{exc.field or 'value'}: {exc.reason}",
                         "record the run again against the server") from None
    platform = str(config.get("platform") or "")
    backend = str(config.get("backend") or "")
    if not platform and not backend:
        raise InputError("the recorded Triton model configuration names no platform or "
                         "backend", "record the run again against a server that reports "
                         "its model configuration (GET /v2/models/NAME/config)")
    if platform and backend:  # Triton fills both for some platforms: the backend decides
        platform = "" if backend not in ("tensorrt", "onnxruntime") else platform
        backend = "" if platform else backend
    batch_axis = int(str(config.get("max_batch_size", 0) or 0)) > 0

    def tensors(key: str) -> tuple[TritonTensor, ...]:
        out = []
        for t in config.get(key) or []:
            if not isinstance(t, dict) or not t.get("name") or not t.get("data_type"):
                raise InputError(f"a recorded {key} tensor has no name or data_type",
                                 "record the run again")
            out.append(TritonTensor(str(t["name"]), str(t["data_type"]),
                                    tuple(int(str(d)) for d in t.get("dims") or [])))
        return tuple(out)

    groups = [g for g in (config.get("instance_group") or []) if isinstance(g, dict)]
    kind_text = str(groups[0].get("kind", "KIND_GPU")) if groups else "KIND_GPU"
    kind = "cpu" if kind_text == "KIND_CPU" else "gpu"
    ids = groups[0].get("gpus") if groups else None
    gpus = tuple(int(str(i)) for i in ids) if isinstance(ids, list) and ids else None
    params: list[tuple[str, str]] = []
    raw = config.get("parameters") or {}
    if isinstance(raw, dict):
        for k, v in sorted(raw.items()):
            if isinstance(v, dict) and isinstance(v.get("string_value"), str):
                params.append((str(k), v["string_value"]))
    return TritonModelSpec(platform=platform, backend=backend, inputs=tensors("input"),
                           outputs=tensors("output"), batch_axis=batch_axis,
                           configured_max_batch_size=int(str(config.get("max_batch_size", 0)
                                                             or 0)) or None,
                           device_kind=kind, co_located=True, gpus=gpus,
                           parameters=tuple(params))
