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


def triton_config(p: SimPrediction, model_name: str = "model") -> str:
    """``config.pbtxt`` fragment: batching and instance groups (one instance per GPU)."""
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
    if n <= TRITON_GPUS_PER_SERVER:
        gpus = ", ".join(str(i) for i in range(n))
        lines += ["instance_group [",
                  f"  {{ count: 1, kind: KIND_GPU, gpus: [ {gpus} ] }}",
                  "]"]
        if n > 1:
            lines.append(f"# {n} instances: one on each of {n} GPUs (each with the "
                         "measured T(b) to itself)")
    else:
        servers = math.ceil(n / TRITON_GPUS_PER_SERVER)
        lines += ["instance_group [",
                  f"  {{ count: 1, kind: KIND_GPU, gpus: [ "
                  f"{', '.join(str(i) for i in range(TRITON_GPUS_PER_SERVER))} ] }}",
                  "]",
                  f"# {n} instances in all: {servers} servers behind a load balancer, "
                  "one instance per GPU"]
    return "\n".join(lines) + "\n"


def ray_serve_code(p: SimPrediction) -> str:
    """Python snippet for Ray Serve: replicas and ``@serve.batch``."""
    if p.max_batch_size > 1:
        body = (f"    @serve.batch(max_batch_size={p.max_batch_size}, "
                f"batch_wait_timeout_s={p.window_us / 1e6:g})\n"
                "    async def __call__(self, requests):\n"
                "        return self.run_batch(requests)  # one result per request\n")
    else:
        body = ("    async def __call__(self, request):  # no @serve.batch: batching "
                "does not pay here\n"
                "        return self.run_one(request)\n")
    return ("from ray import serve\n\n\n"
            f"@serve.deployment(num_replicas={p.instances}, "
            "ray_actor_options={\"num_gpus\": 1})\n"
            "class Model:\n" + body)


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


def export_settings(p: SimPrediction, model_name: str = "model") -> ExportedSettings:
    """All three exports for the recommended configuration ``p``.

    ``model_name`` is written escaped for each format (a protobuf string in
    ``config.pbtxt``, JSON inside a ``.properties`` value and a percent-encoded URL for
    TorchServe); the CLI also restricts it with :func:`check_model_name`."""
    return ExportedSettings(triton_config_pbtxt=triton_config(p, model_name),
                            ray_serve_python=ray_serve_code(p),
                            torchserve_config=torchserve_config(p, model_name))
