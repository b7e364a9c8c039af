"""A real ONNX model behind the test Triton: a python-backend ``model.py`` that runs ONNX
Runtime (on CPU here; a user's server runs the same model with its onnxruntime or
TensorRT backend).

:func:`write_onnx_model` writes ``repo/NAME/config.pbtxt``, ``repo/NAME/1/model.py`` and
``repo/NAME/1/model.onnx`` (a copy of the given model). The wrapper opens one ONNX
Runtime session per Triton instance (``intra_op_num_threads`` from the config's
``threads`` parameter, default 1), stacks the requests of an execution along axis 0,
runs them as one batch and splits the outputs back per request. Instances of one model
on one host share its CPU cores, so they contend for real.

Inputs are read and outputs built with :mod:`trtcheck.testing.pb_numpy`'s helpers
(DLPack under numpy 2 in the stub, where ``.as_numpy()`` reads wrong values and
``pb_utils.Tensor(name, ndarray)`` answers empty tensors), so the model computes on the
request's data and answers it: the outputs equal ONNX Runtime's on the same input.

Used by the ``tune`` tests and ``benchmarks/tune_cpu.py`` (the demo ResNet-18 from
:func:`trtcheck.load.demo.demo_model_path`, the PP-OCR cls model).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from trtcheck.testing.pb_numpy import PB_NUMPY_PY

ONNX_MODEL_PY = '''\
import json
import os
import sys

# The python backend stub runs its interpreter isolated (sys.flags.isolated: PYTHONPATH
# is not read), so the server's PYTHONPATH (this checkout's virtual environment, where
# onnxruntime is) is added here.
for _p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    if _p and _p not in sys.path:
        sys.path.append(_p)

''' + PB_NUMPY_PY + '''

class TritonPythonModel:
    """Runs model.onnx with ONNX Runtime on the CPU, one batch per execution."""

    def initialize(self, args):
        import os

        import onnxruntime as ort

        cfg = json.loads(args["model_config"])
        params = cfg.get("parameters", {})
        threads = int(params.get("threads", {}).get("string_value", "1"))
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        path = os.path.join(args["model_repository"], args["model_version"], "model.onnx")
        self.sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.sess.get_inputs()]
        self.outputs = [o.name for o in self.sess.get_outputs()]

    def execute(self, requests):
        per = [[input_array(r, n) for n in self.inputs] for r in requests]
        sizes = [int(p[0].shape[0]) for p in per]
        feed = {n: np.concatenate([p[k] for p in per], axis=0)
                for k, n in enumerate(self.inputs)}
        outs = self.sess.run(self.outputs, feed)
        answers = []
        start = 0
        for s in sizes:
            tensors = [output_tensor(n, o[start:start + s]) for n, o in zip(self.outputs, outs)]
            answers.append(pb_utils.InferenceResponse(tensors))
            start += s
        return answers
'''


def _io(onnx_path: Path, shapes: dict[str, Sequence[int]]) -> tuple[list[tuple], list[tuple]]:
    """``([(name, triton type, dims without the batch axis)], [...])`` of the model's
    inputs and outputs; ``shapes`` fills dynamic non-batch dims of inputs."""
    import onnx

    m = onnx.load(str(onnx_path), load_external_data=False)
    init = {i.name for i in m.graph.initializer}

    def dims(vi) -> list[int]:
        return [d.dim_value if d.HasField("dim_value") else -1
                for d in vi.type.tensor_type.shape.dim][1:]

    def ttype(vi) -> str:
        from onnx import helper

        name = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type).name
        return {"float32": "TYPE_FP32", "float16": "TYPE_FP16", "float64": "TYPE_FP64",
                "int64": "TYPE_INT64", "int32": "TYPE_INT32", "uint8": "TYPE_UINT8",
                "int8": "TYPE_INT8", "bool": "TYPE_BOOL"}[name]

    ins = []
    for vi in m.graph.input:
        if vi.name in init:
            continue
        d = [int(x) for x in shapes[vi.name]][1:] if vi.name in shapes else dims(vi)
        ins.append((vi.name, ttype(vi), d))
    outs = [(vi.name, ttype(vi), dims(vi)) for vi in m.graph.output]
    return ins, outs


def write_onnx_model(repo: Path, name: str, onnx_path: Path, *, max_batch_size: int = 8,
                     max_queue_delay_us: int = 1000, instances: int = 1, threads: int = 1,
                     shapes: dict[str, Sequence[int]] | None = None) -> Path:
    """Write a python-backend model that serves ``onnx_path`` with ONNX Runtime.

    Args:
        repo: the model repository folder.
        name: the model name.
        onnx_path: an ONNX model whose axis 0 is the batch.
        max_batch_size: Triton ``max_batch_size`` (>= 1).
        max_queue_delay_us: dynamic batching window, µs.
        instances: ``instance_group [{count: N, kind: KIND_CPU}]``.
        threads: ONNX Runtime intra-op threads per instance.
        shapes: full input shapes (batch axis included, e.g. ``{"x": [1, 3, 48, 192]}``)
            for inputs whose non-batch dims are dynamic in the model.

    Returns:
        the model's folder.

    Raises:
        ValueError: a dynamic non-batch input dim without a shape.
    """
    ins, outs = _io(Path(onnx_path), dict(shapes or {}))
    for n, _, d in ins:
        if any(x < 0 for x in d):
            raise ValueError(f"input {n!r} has dynamic dims {d}: give its shape in shapes")
    d = repo / name
    (d / "1").mkdir(parents=True, exist_ok=True)
    (d / "1" / "model.py").write_text(ONNX_MODEL_PY)
    shutil.copyfile(onnx_path, d / "1" / "model.onnx")

    def block(kind: str, items: list[tuple]) -> str:
        rows = ",\n".join(f'  {{ name: "{n}" data_type: {t} dims: [ {", ".join(map(str, dd))} ] }}'
                          for n, t, dd in items)
        return f"{kind} [\n{rows}\n]\n"

    (d / "config.pbtxt").write_text(
        f'name: "{name}"\nbackend: "python"\nmax_batch_size: {max_batch_size}\n'
        + block("input", ins) + block("output", outs)
        + f"instance_group [ {{ count: {instances} kind: KIND_CPU }} ]\n"
        f"dynamic_batching {{\n  max_queue_delay_microseconds: {max_queue_delay_us}\n}}\n"
        f'parameters {{ key: "threads" value: {{ string_value: "{threads}" }} }}\n')
    return d
