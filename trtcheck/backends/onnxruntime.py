"""ONNX Runtime backend (any available execution provider).

``onnxruntime`` is imported in :meth:`OnnxRuntimeBackend.activate`, not at module import.
The timed region of :meth:`OnnxRuntimeBackend.infer` is a plain ``session.run`` on
pre-built numpy inputs, so trtcheck's numbers match a hand-written
``session.run`` loop (checked by ``benchmarks/bench_overhead.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trtcheck.backends.base import Backend, InferOutput
from trtcheck.backends.options import BackendOption, OptionGroup
from trtcheck.errors import EnvironmentProblem, InputError
from trtcheck.results.bench import BackendInfo
from trtcheck.results.inspection import TensorInfo

ORT_INSTALL_HINT = ("pip install onnxruntime (the CPU build, trtcheck's cpu extra), or "
                    "pip install onnxruntime-gpu on a GPU host")
"""What to install when neither ``onnxruntime`` nor ``onnxruntime-gpu`` is present (both
provide the ``onnxruntime`` module; installing both makes them overwrite each other)."""

OPTIONS = OptionGroup("ONNX Runtime", (
    BackendOption("--providers", "providers", "providers", "list", metavar="LIST",
                  help="ONNX Runtime execution providers, comma-separated."),
    BackendOption("--threads", "threads", "intra_op_threads", "int", min=1, max=1024,
                  help="ONNX Runtime intra-op threads (default: ORT's choice)."),
))
"""The command-line options of :class:`OnnxRuntimeBackend` (its constructor keywords)."""


def import_onnxruntime() -> Any:
    """Import and return the ``onnxruntime`` module (from ``onnxruntime`` or
    ``onnxruntime-gpu``, whichever is installed).

    Raises:
        EnvironmentProblem: neither distribution is installed (exit code 3).
    """
    try:
        import onnxruntime
    except ImportError:
        raise EnvironmentProblem("ONNX Runtime is not installed (neither onnxruntime nor "
                                 "onnxruntime-gpu)", ORT_INSTALL_HINT) from None
    return onnxruntime


_ORT_TYPES = {
    "tensor(float)": "float32", "tensor(float16)": "float16", "tensor(double)": "float64",
    "tensor(bfloat16)": "bfloat16",
    "tensor(int8)": "int8", "tensor(int16)": "int16", "tensor(int32)": "int32",
    "tensor(int64)": "int64", "tensor(uint8)": "uint8", "tensor(uint16)": "uint16",
    "tensor(uint32)": "uint32", "tensor(uint64)": "uint64", "tensor(bool)": "bool",
    "tensor(string)": "string",
}


def _tensor_info(arg: Any) -> TensorInfo:
    shape: list[int | str | None] = []
    for d in arg.shape or []:
        if isinstance(d, int) and d >= 0:
            shape.append(d)
        elif isinstance(d, str) and d:
            shape.append(d)
        else:
            shape.append(None)
    return TensorInfo(name=arg.name, dtype=_ORT_TYPES.get(arg.type, arg.type), shape=shape)


def _cpu_name() -> str:
    from trtcheck.fingerprint import cpu_model_name

    return cpu_model_name()


class OnnxRuntimeBackend(Backend):
    """Runs an ONNX model with ONNX Runtime.

    Args:
        model_path: path to the ``.onnx`` file (external data beside it is found by ORT).
        providers: execution providers in priority order; ``None`` picks CUDA/TensorRT
            providers when available, then CPU.
        intra_op_threads: ORT intra-op thread count (``None``: ORT's default, one per
            physical core).
        precision: label recorded in results (``"fp32"``, ``"fp16"``, ...); ORT runs the
            model's own dtypes.

    Raises:
        EnvironmentProblem: onnxruntime is not installed, or a requested provider is
            not available in this build.
        InputError: ORT cannot load the model, or a run's inputs are wrong.
    """

    def __init__(self, model_path: str | os.PathLike[str], providers: list[str] | None = None,
                 intra_op_threads: int | None = None, precision: str = "fp32") -> None:
        self.model_path = Path(model_path)
        self._requested = providers
        self._threads = intra_op_threads
        self._precision = precision
        self._sess: Any = None
        self._info: BackendInfo | None = None
        self._output_names: list[str] = []

    def activate(self) -> None:
        ort = import_onnxruntime()
        available = ort.get_available_providers()
        if self._requested:
            missing = [p for p in self._requested if p not in available]
            if missing:
                raise EnvironmentProblem(
                    f"execution provider(s) {', '.join(missing)} not available in this "
                    f"onnxruntime build (available: {', '.join(available)})",
                    "install onnxruntime-gpu for CUDA/TensorRT providers")
            providers = list(self._requested)
        else:
            preferred = ["CUDAExecutionProvider", "CPUExecutionProvider"]
            providers = [p for p in preferred if p in available] or available
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        if self._threads:
            opts.intra_op_num_threads = int(self._threads)
        try:
            self._sess = ort.InferenceSession(_ort_model_source(self.model_path),
                                              sess_options=opts, providers=providers)
        except Exception as exc:  # ORT raises its own exception types (Fail, InvalidGraph...)
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"ONNX Runtime cannot load {self.model_path}: {msg[:300]}",
                             "check the model with `trtcheck inspect`") from None
        used = self._sess.get_providers()
        device = "GPU (CUDA)" if "CUDAExecutionProvider" in used else f"CPU ({_cpu_name()})"
        options: dict[str, str | int | float | bool | None] = {
            "intra_op_threads": self._threads}
        self._info = BackendInfo(name="onnxruntime", version=ort.__version__, device=device,
                                 providers=used, precision=self._precision, options=options)
        self._output_names = [o.name for o in self._sess.get_outputs()]
        self._active = True

    def deactivate(self) -> None:
        self._sess = None
        self._active = False

    @property
    def info(self) -> BackendInfo:
        if self._info is None:
            raise RuntimeError("backend not activated")
        return self._info

    def _session(self) -> Any:
        if self._sess is None:
            raise RuntimeError("OnnxRuntimeBackend used before activate()")
        return self._sess

    def input_specs(self) -> list[TensorInfo]:
        return [_tensor_info(a) for a in self._session().get_inputs()]

    def output_specs(self) -> list[TensorInfo]:
        return [_tensor_info(a) for a in self._session().get_outputs()]

    def infer(self, feed: dict[str, Any]) -> InferOutput:
        sess = self._session()
        try:
            outs = sess.run(self._output_names, feed)
        except Exception as exc:
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"ONNX Runtime failed to run {self.model_path.name}: {msg[:300]}",
                             "check input shapes with `trtcheck inspect` and --shapes") from None
        return InferOutput(outputs=dict(zip(self._output_names, outs)))


def _ort_model_source(path: Any) -> str | bytes:
    """What ONNX Runtime is given for ``path``: the path itself, or the model's bytes when
    the path holds bytes that are not UTF-8 (ONNX Runtime takes paths as UTF-8 text only).

    Raises:
        InputError: such a path names a model with external-data files (they are found
            relative to the path, so the bytes alone cannot be loaded).
    """
    text = str(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    from trtcheck.load.onnx_model import external_data_refs, load_onnx

    if external_data_refs(load_onnx(text, load_external_data=False)):
        raise InputError(f"the path {ascii(text)} is not UTF-8 and the model keeps its weights "
                         "in external-data files, which ONNX Runtime then cannot find",
                         "rename the model's file or folder to UTF-8")
    with open(text, "rb") as fh:
        return fh.read()

