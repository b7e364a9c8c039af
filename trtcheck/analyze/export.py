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
from urllib.parse import quote

from trtcheck.errors import InputError
from trtcheck.results.advice import ExportedSettings, SimPrediction

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
"""Largest ``gpus`` list written for one Triton server (8-GPU hosts are the common size)."""

DEVICE_KINDS = ("gpu", "cpu")
"""Values of ``device_kind``: where the instances run (``None``: not recorded, GPU assumed)."""


def device_kind_from_results(results: object) -> str | None:
    """Where the advice's T(b) was measured, from the results the curve came from: the
    primary bench run's backend, else the serving run's (the order
    :func:`trtcheck.analyze.inputs.inputs_from_results` takes T(b) in).

    ``"gpu"`` for a TensorRT backend or a device named ``GPU ...``/``NVIDIA ...``;
    ``"cpu"`` for a device named ``CPU ...`` (ONNX Runtime on the CPU provider);
    ``None`` when the results hold neither run, or the backend names no device (the
    synthetic backend).
    """
    run = getattr(results, "primary_bench", None) or getattr(results, "serve", None)
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


def triton_config(p: SimPrediction, model_name: str = "model",
                  device_kind: str | None = None) -> str:
    """``config.pbtxt`` fragment: batching and instance groups.

    GPU (``device_kind`` ``"gpu"`` or ``None``): one instance per GPU (``count: 1`` on
    each GPU in ``gpus``), at most :data:`TRITON_GPUS_PER_SERVER` GPUs per server; for
    more instances the servers are listed with their GPU counts, which add up to
    ``p.instances`` (e.g. 12 = 8 + 4: server 1 lists GPUs 0-7, server 2 GPUs 0-3).
    CPU: ``kind: KIND_CPU``, one instance per host, since the measured T(b) used the
    host's cores and instances on one host would share them.

    Raises:
        ValueError: ``device_kind`` is not ``"gpu"``, ``"cpu"`` or ``None``.
    """
    kind = _check_kind(device_kind)
    lines = [f"name: {pbtxt_string(model_name)}",
             f"max_batch_size: {p.max_batch_size}"]
    if p.max_batch_size > 1:
        lines += ["dynamic_batching {",
                  f"  preferred_batch_size: [ {p.max_batch_size} ]",
                  f"  max_queue_delay_microseconds: {int(round(p.window_us))}",
                  "}"]
    else:
        lines.append("# no dynamic_batching block: batching does not pay here")
    n = p.instances
    if kind == "cpu":
        lines += ["instance_group [", "  { count: 1, kind: KIND_CPU }", "]"]
        if n > 1:
            lines.append(f"# {n} instances in all: {n} hosts behind a load balancer, one CPU "
                         "instance each (T(b) was measured with a whole host's cores; "
                         "instances on one host would share them)")
        return "\n".join(lines) + "\n"
    if kind is None:
        lines.append("# KIND_GPU assumed: the latency curve records no device "
                     "(use kind: KIND_CPU for a model served on CPUs)")

    def group(n_gpus: int, prefix: str = "") -> list[str]:
        gpus = ", ".join(str(i) for i in range(n_gpus))
        return [f"{prefix}instance_group [",
                f"{prefix}  {{ count: 1, kind: KIND_GPU, gpus: [ {gpus} ] }}",
                f"{prefix}]"]

    per = TRITON_GPUS_PER_SERVER
    if n <= per:
        lines += group(n)
        if n > 1:
            lines.append(f"# {n} instances: one on each of {n} GPUs (each with the "
                         "measured T(b) to itself)")
        return "\n".join(lines) + "\n"
    full, rest = divmod(n, per)
    servers = full + (1 if rest else 0)
    sums = f"{full} x {per}" if full > 1 else f"{per}"
    arithmetic = f"{sums} + {rest}" if rest else f"{full} x {per}"
    lines.append(f"# {n} instances = {arithmetic}: {servers} servers behind a load "
                 "balancer, one instance per GPU (count: 1 on each GPU listed)")
    if not rest:
        lines.append(f"# each of the {servers} servers: {per} GPUs")
        lines += group(per)
        return "\n".join(lines) + "\n"
    first = "server 1" if full == 1 else f"servers 1-{full}"
    lines.append(f"# {first}: {per} GPUs each" if full > 1 else f"# {first}: {per} GPUs")
    lines += group(per)
    lines.append(f"# server {servers}: {rest} GPU{'s' if rest > 1 else ''}, with this "
                 "instance_group instead")
    lines += group(rest, prefix="# ")
    return "\n".join(lines) + "\n"


def ray_serve_code(p: SimPrediction, device_kind: str | None = None) -> str:
    """Python snippet for Ray Serve: replicas and ``@serve.batch`` (one GPU per replica;
    on a CPU curve no GPU is requested).

    Raises:
        ValueError: ``device_kind`` is not ``"gpu"``, ``"cpu"`` or ``None``.
    """
    kind = _check_kind(device_kind)
    if p.max_batch_size > 1:
        body = (f"    @serve.batch(max_batch_size={p.max_batch_size}, "
                f"batch_wait_timeout_s={p.window_us / 1e6:g})\n"
                "    async def __call__(self, requests):\n"
                "        return self.run_batch(requests)  # one result per request\n")
    else:
        body = ("    async def __call__(self, request):  # no @serve.batch: batching "
                "does not pay here\n"
                "        return self.run_one(request)\n")
    if kind == "cpu":
        deployment = (f"# T(b) was measured on a CPU: give each replica the cores that "
                      "measurement used (ray_actor_options num_cpus)\n"
                      f"@serve.deployment(num_replicas={p.instances})\n")
    else:
        deployment = (f"@serve.deployment(num_replicas={p.instances}, "
                      "ray_actor_options={\"num_gpus\": 1})\n")
    return "from ray import serve\n\n\n" + deployment + "class Model:\n" + body


def torchserve_config(p: SimPrediction, model_name: str = "model") -> str:
    """``config.properties`` ``models=`` entry and the equivalent management-API call."""
    delay_ms = int(math.ceil(p.window_us / 1000.0 - 1e-9))
    note = ""
    if p.window_us > 0 and abs(delay_ms * 1000 - p.window_us) > 1e-6:
        note = (f"# max_batch_delay is whole ms: {p.window_us / 1000:g} ms rounded up "
                f"to {delay_ms} ms\n")
    entry = {model_name: {"1.0": {"batchSize": p.max_batch_size, "maxBatchDelay": delay_ms,
                                  "minWorkers": p.instances, "maxWorkers": p.instances}}}
    # the JSON goes in a Java .properties value, where a backslash escapes: double it
    models = "models=" + json.dumps(entry).replace("\\", "\\\\")
    curl = ("# or: curl -X POST \"http://localhost:8081/models?url=%s.mar&batch_size=%d"
            "&max_batch_delay=%d&initial_workers=%d\"" % (quote(model_name, safe=""),
                                                          p.max_batch_size, delay_ms,
                                                          p.instances))
    return note + models + "\n" + curl + "\n"


def export_settings(p: SimPrediction, model_name: str = "model",
                    device_kind: str | None = None) -> ExportedSettings:
    """All three exports for the recommended configuration ``p``.

    ``model_name`` is written escaped for each format (a protobuf string in
    ``config.pbtxt``, JSON inside a ``.properties`` value and a percent-encoded URL for
    TorchServe); the CLI also restricts it with :func:`check_model_name`.
    ``device_kind`` (``"gpu"``, ``"cpu"`` or ``None``: not recorded, GPU assumed; see
    :func:`device_kind_from_results`) picks Triton's instance kind and Ray's resources.

    Raises:
        ValueError: ``device_kind`` is not one of those.
    """
    return ExportedSettings(triton_config_pbtxt=triton_config(p, model_name, device_kind),
                            ray_serve_python=ray_serve_code(p, device_kind),
                            torchserve_config=torchserve_config(p, model_name))
