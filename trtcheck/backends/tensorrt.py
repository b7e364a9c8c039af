"""TensorRT / TensorRT-RTX backend: deserialize a plan and time executions with CUDA events.

Kept thin on purpose and modelled on Polygraphy's ``TrtRunner``
(``polygraphy/backend/trt/runner.py``): one execution context, the optimization profile
set with ``set_optimization_profile_async(index, stream)``, ``set_input_shape`` for each
input, ``set_tensor_address`` for **every** I/O tensor, ``execute_async_v3(stream)``, then
copies back and one stream synchronisation. What differs from Polygraphy: timing. Each
:meth:`TensorRTBackend.infer` records CUDA events on the stream around the H2D copies,
the execution and the D2H copies (``h2d_ms``, ``gpu_compute_ms``, ``d2h_ms``) and takes
the host time of the enqueue call (``host_enqueue_ms``), instead of a host clock around
everything. Host staging buffers are pinned (``cudaMallocHost``), so copies are
asynchronous and run at full PCIe bandwidth. With ``use_cuda_graph=True`` the execution
is captured once per input-shape set (after one ordinary enqueue, as TensorRT requires
after a shape change) and replayed with ``cudaGraphLaunch``, as ``trtexec --useCudaGraph``.

Verified on what hardware: the CUDA primitives (events, streams, copies, graph capture)
on an NVIDIA H200 (``benchmarks/cuda_timing.py``); the TensorRT calls only through the
contract tests (``tests/test_tensorrt_backend_contract.py``) with a fake that enforces the
real API's rules, because no machine here can run a TensorRT engine (see
``docs/tensorrt.md``).

Errors: a file that is not a loadable plan -> the pre-flight's verdict (InputError for a
non-plan, EnvironmentProblem for another version/runtime); TensorRT or cuda-python not
importable, or no GPU -> EnvironmentProblem naming the extra to install;
``deserialize_cuda_engine`` returning ``None`` -> the captured log translated
(:func:`trtcheck.load.plan_header.load_failure_error`); shapes outside the
profile -> InputError with the profile's min/opt/max; a batch whose buffers do not fit
in GPU memory -> InputError with the free memory.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from trtcheck.backends import cuda_timing as ct
from trtcheck.backends.base import Backend, InferOutput
from trtcheck.backends.options import BackendOption, OptionGroup
from trtcheck.errors import EnvironmentProblem, InputError
from trtcheck.results.bench import BackendInfo
from trtcheck.results.engine import (
    EngineInspection,
    EngineMemory,
    OptimizationProfile,
    ProfileShape,
)
from trtcheck.results.inspection import TensorInfo

RUNTIMES = ("tensorrt", "tensorrt_rtx")
NON_PLAN_KINDS = ("onnx", "text", "empty", "unknown")

OPTIONS = OptionGroup("TensorRT", (
    BackendOption("--cuda-graph", "cuda_graph", "use_cuda_graph", "flag",
                  help="TensorRT: replay executions from a captured CUDA graph."),
    BackendOption("--profile-index", "profile_index", "profile_index", "int", min=0, max=1023,
                  help="TensorRT: optimization profile to run [default: 0]."),
))
"""The command-line options of :class:`TensorRTBackend` (``tensorrt`` and ``tensorrt_rtx``)."""

_NP_NAMES = {"FLOAT": "float32", "HALF": "float16", "INT8": "int8", "INT32": "int32",
             "INT64": "int64", "BOOL": "bool", "UINT8": "uint8", "BF16": "bfloat16",
             "FP8": "float8"}


def _dims(d: Any) -> list[int]:
    return [int(x) for x in d]


def default_runtime() -> str:
    """``"tensorrt_rtx"`` when ``POLYGRAPHY_USE_TENSORRT_RTX`` is set (not ``"0"``), as
    Polygraphy decides, else ``"tensorrt"``."""
    return "tensorrt_rtx" if os.environ.get("POLYGRAPHY_USE_TENSORRT_RTX", "0") != "0" \
        else "tensorrt"


class TensorRTBackend(Backend):
    """Runs a serialized TensorRT (or TensorRT-RTX) engine on the GPU.

    Args:
        plan_path: the ``.plan``/``.engine`` file.
        runtime: ``"tensorrt"`` or ``"tensorrt_rtx"`` (``None``: :func:`default_runtime`).
        profile_index: optimization profile to use (0-based).
        use_cuda_graph: replay executions from a captured CUDA graph.
        device_index: CUDA device ordinal.
        trt_module / cudart_module: injected modules (tests); ``None`` imports the real
            ones inside :meth:`activate`.
    """

    def __init__(self, plan_path: str | os.PathLike[str], runtime: str | None = None,
                 profile_index: int = 0, use_cuda_graph: bool = False, device_index: int = 0,
                 precision: str | None = None, trt_module: Any = None,
                 cudart_module: Any = None) -> None:
        runtime = runtime or default_runtime()
        if runtime not in RUNTIMES:
            raise InputError(f"unknown TensorRT runtime {runtime!r}",
                             f"choose one of: {', '.join(RUNTIMES)}")
        if profile_index < 0:
            raise InputError(f"profile index must be >= 0, got {profile_index}", None)
        self.plan_path = Path(plan_path)
        self.runtime = runtime
        self.profile_index = int(profile_index)
        self.use_cuda_graph = bool(use_cuda_graph)
        self.device_index = int(device_index)
        self._precision = precision
        self._trt = trt_module
        if cudart_module is not None:
            ct.set_cudart(cudart_module)
        self.log_lines: list[str] = []
        self._info: BackendInfo | None = None
        self.engine: Any = None
        self.context: Any = None
        self.stream: ct.Stream | None = None
        self._dev: dict[str, ct.DeviceBuffer] = {}
        self._host: dict[str, ct.PinnedBuffer] = {}
        self._timer: ct.EventTimer | None = None
        self._graphs: dict[tuple, ct.CudaGraph] = {}
        self._warm_shapes: tuple | None = None
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.profile: dict[str, ProfileShape] = {}

    # ------------------------------------------------------------------ lifecycle
    def _import_trt(self) -> Any:
        if self._trt is not None:
            return self._trt
        import importlib

        try:
            self._trt = importlib.import_module(self.runtime)
        except ImportError as exc:
            from trtcheck.load.plan_header import INSTALL_HINTS

            other = "tensorrt_rtx" if self.runtime == "tensorrt" else "tensorrt"
            raise EnvironmentProblem(
                f"the {self.runtime} module is not importable ({exc})",
                INSTALL_HINTS[self.runtime] + f" (or pass --runtime {other} if that is "
                "installed)") from None
        return self._trt

    def _logger(self, trt: Any) -> Any:
        lines = self.log_lines

        class _Logger(trt.ILogger):
            def __init__(self) -> None:
                trt.ILogger.__init__(self)

            def log(self, severity: Any, msg: str) -> None:
                lines.append(str(msg))

        return _Logger()

    def activate(self) -> None:
        """Pre-flight, import, check the GPU, deserialize, create context and stream.

        Raises:
            InputError / EnvironmentProblem: see the module docstring.
        """
        if self._active:
            return
        from trtcheck.load.plan_header import (
            UNUSABLE_CODES,
            load_failure_error,
            read_plan_info,
        )

        pre = read_plan_info(self.plan_path, prefer_runtime=self.runtime)
        if pre.can_load is False:
            cls = InputError if pre.kind in NON_PLAN_KINDS or any(
                p.code in UNUSABLE_CODES for p in pre.problems) else EnvironmentProblem
            hint = pre.problems[0].remedy if pre.problems else None
            raise cls(f"{self.plan_path}: {pre.verdict}", hint)
        trt = self._import_trt()
        ct.cudart()  # raises EnvironmentProblem naming the extra when cuda-python is absent
        if ct.device_count() == 0:
            raise EnvironmentProblem("no CUDA GPU is visible (cudaGetDeviceCount returned 0 "
                                     "or no driver)", "run on a machine with an NVIDIA GPU; "
                                     "check nvidia-smi and CUDA_VISIBLE_DEVICES")
        ct.check(ct.cudart().cudaSetDevice(self.device_index), "cudaSetDevice")
        self.log_lines.clear()
        runtime = trt.Runtime(self._logger(trt))
        engine = runtime.deserialize_cuda_engine(self.plan_path.read_bytes())
        if engine is None:
            raise load_failure_error(self.log_lines, str(self.plan_path))
        n_profiles = int(engine.num_optimization_profiles)
        if self.profile_index >= n_profiles:
            raise InputError(f"profile {self.profile_index} does not exist: the engine has "
                             f"{n_profiles} optimization profile(s)",
                             f"pass --profile 0..{n_profiles - 1}")
        context = engine.create_execution_context()
        if context is None:
            raise load_failure_error(self.log_lines or ["could not create an execution "
                                                        "context (out of memory?)"],
                                     str(self.plan_path))
        self._runtime_obj, self.engine, self.context = runtime, engine, context
        self.stream = ct.Stream()
        if not context.set_optimization_profile_async(self.profile_index, self.stream.ptr):
            raise InputError(f"could not select optimization profile {self.profile_index}",
                             None)
        self.inputs, self.outputs, self.profile = [], [], {}
        for i in range(engine.num_io_tensors):
            name = engine.get_tensor_name(i)
            if engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT:
                self.inputs.append(name)
                mn, op, mx = engine.get_tensor_profile_shape(name, self.profile_index)
                self.profile[name] = ProfileShape(min=_dims(mn), opt=_dims(op), max=_dims(mx))
            else:
                self.outputs.append(name)
        self._timer = ct.EventTimer(self.stream, ["h2d", "compute", "d2h"])
        self._info = BackendInfo(
            name=self.runtime, version=str(getattr(trt, "__version__", "unknown")),
            device=ct.device_name(self.device_index), precision=self._precision or "engine",
            options={"profile_index": self.profile_index,
                     "use_cuda_graph": self.use_cuda_graph, "plan": self.plan_path.name})
        self._active = True

    def deactivate(self) -> None:
        """Free graphs, buffers, events and the stream, then the context and engine."""
        for g in self._graphs.values():
            g.destroy()
        self._graphs.clear()
        for b in self._dev.values():
            b.free()
        for h in self._host.values():
            h.free()
        self._dev.clear()
        self._host.clear()
        if self._timer is not None:
            self._timer.destroy()
            self._timer = None
        if self.stream is not None:
            self.stream.destroy()
            self.stream = None
        self.context = None
        self.engine = None
        self._warm_shapes = None
        self._active = False

    # ------------------------------------------------------------------ description
    @property
    def info(self) -> BackendInfo:
        if self._info is None:
            return BackendInfo(name=self.runtime, version="not activated", device="unknown")
        return self._info

    def _np_dtype(self, name: str) -> np.dtype:
        trt = self._trt
        dt = self.engine.get_tensor_dtype(name)
        try:
            return np.dtype(trt.nptype(dt))
        except (TypeError, AttributeError, KeyError):
            raw = str(dt).rsplit(".", 1)[-1]
            if raw in ("BF16", "FP8"):
                raise InputError(f"tensor {name!r} is {raw}; numpy has no such type",
                                 "build the engine with FP32/FP16 I/O (keep_io_types)") \
                    from None
            return np.dtype(_NP_NAMES.get(raw, "float32"))

    def _specs(self, names: list[str]) -> list[TensorInfo]:
        out = []
        for n in names:
            shape: list[int | str | None] = [
                d if d >= 0 else None for d in _dims(self.engine.get_tensor_shape(n))]
            out.append(TensorInfo(name=n, dtype=self._np_dtype(n).name, shape=shape))
        return out

    def input_specs(self) -> list[TensorInfo]:
        self._require_active()
        return self._specs(self.inputs)

    def output_specs(self) -> list[TensorInfo]:
        self._require_active()
        return self._specs(self.outputs)

    def _require_active(self) -> None:
        if not self._active:
            raise RuntimeError("TensorRTBackend used before activate()")

    # ------------------------------------------------------------------ execution
    def _check_shape(self, name: str, shape: tuple[int, ...]) -> None:
        prof = self.profile[name]
        ok = len(shape) == len(prof.min) and all(
            lo <= s <= hi for s, lo, hi in zip(shape, prof.min, prof.max))
        if not ok:
            raise InputError(
                f"input {name!r} shape {list(shape)} is outside optimization profile "
                f"{self.profile_index}: min {prof.min}, opt {prof.opt}, max {prof.max}",
                "use shapes within the profile (e.g. --batch up to "
                f"{prof.max[0] if prof.max else '?'}), or rebuild the engine with a larger "
                "profile (trtexec --minShapes/--optShapes/--maxShapes)")

    def _buffer(self, store: dict, cls: type, name: str, nbytes: int) -> Any:
        buf = store.get(name)
        if buf is not None and buf.nbytes >= nbytes:
            return buf
        if buf is not None:
            buf.free()
            del store[name]
        try:
            buf = cls(nbytes)
        except ct.CudaError as exc:
            if exc.code == 2:  # cudaErrorMemoryAllocation
                free = None
                try:
                    free = ct.mem_get_info()[0]
                except ct.CudaError:
                    pass
                raise InputError(
                    f"this batch does not fit in GPU memory: {nbytes / 2**20:.1f} MiB more "
                    f"needed for {name!r}"
                    + (f", {free / 2**20:.1f} MiB free" if free is not None else ""),
                    "use a smaller batch; `trtcheck inspect PLAN` estimates the largest "
                    "batch that fits") from None
            raise
        store[name] = buf
        return buf

    def _enqueue(self) -> None:
        assert self.context is not None and self.stream is not None
        if not self.context.execute_async_v3(self.stream.ptr):
            from trtcheck.load.plan_header import load_failure_error

            err = load_failure_error(self.log_lines, str(self.plan_path))
            raise EnvironmentProblem("execute_async_v3 failed: " + err.message.split(": ", 1)
                                     [-1], err.hint)

    def infer(self, feed: dict[str, Any]) -> InferOutput:
        """Run one execution on ``feed`` (input name -> numpy array), wait, return outputs
        (numpy arrays) and ``components_ms`` (``h2d_ms``, ``gpu_compute_ms``, ``d2h_ms``,
        ``host_enqueue_ms``).

        Raises:
            InputError: missing/unknown inputs, shapes outside the profile, a batch that
                does not fit in GPU memory, data-dependent output shapes.
        """
        self._require_active()
        assert self.context is not None and self.stream is not None and self._timer
        missing = [n for n in self.inputs if n not in feed]
        extra = [n for n in feed if n not in self.inputs]
        if missing or extra:
            raise InputError(
                "inputs do not match the engine: "
                + (f"missing {', '.join(missing)}" if missing else "")
                + ("; " if missing and extra else "")
                + (f"unknown {', '.join(extra)}" if extra else ""),
                f"engine inputs: {', '.join(self.inputs)}")
        arrays: dict[str, np.ndarray] = {}
        for name in self.inputs:
            arr = np.ascontiguousarray(feed[name], dtype=self._np_dtype(name))
            self._check_shape(name, arr.shape)
            arrays[name] = arr
            if tuple(_dims(self.context.get_tensor_shape(name))) != arr.shape:
                if not self.context.set_input_shape(name, arr.shape):
                    raise InputError(f"TensorRT refused shape {list(arr.shape)} for {name!r}",
                                     f"profile: min {self.profile[name].min}, max "
                                     f"{self.profile[name].max}")
        out_shapes: dict[str, tuple[int, ...]] = {}
        for name in self.outputs:
            shape = tuple(_dims(self.context.get_tensor_shape(name)))
            if any(d < 0 for d in shape):
                raise InputError(f"output {name!r} has a data-dependent shape {list(shape)}",
                                 "engines with data-dependent output shapes need an output "
                                 "allocator; run them with Polygraphy or trtexec")
            out_shapes[name] = shape
        for name, arr in arrays.items():
            dev = self._buffer(self._dev, ct.DeviceBuffer, name, arr.nbytes)
            host = self._buffer(self._host, ct.PinnedBuffer, name, arr.nbytes)
            host.view(arr.dtype, arr.shape)[...] = arr
            self.context.set_tensor_address(name, dev.ptr)
        out_views: dict[str, np.ndarray] = {}
        for name, shape in out_shapes.items():
            dt = self._np_dtype(name)
            nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
            dev = self._buffer(self._dev, ct.DeviceBuffer, name, nbytes)
            host = self._buffer(self._host, ct.PinnedBuffer, name, nbytes)
            self.context.set_tensor_address(name, dev.ptr)
            out_views[name] = host.view(dt, shape)
        s, timer = self.stream, self._timer
        timer.start("h2d")
        for name, arr in arrays.items():
            ct.memcpy_async(self._dev[name].ptr, self._host[name].ptr, arr.nbytes, "h2d", s)
        timer.end("h2d")
        shapes_key = tuple(arrays[n].shape for n in self.inputs)
        timer.start("compute")
        t0 = time.perf_counter()
        if self.use_cuda_graph and self._warm_shapes == shapes_key:
            graph = self._graphs.get(shapes_key)
            if graph is None:
                graph = ct.CudaGraph(s, self._enqueue)
                self._graphs[shapes_key] = graph
            graph.launch(s)
        else:
            self._enqueue()  # TensorRT: one plain enqueue after a shape change, before capture
            self._warm_shapes = shapes_key
        host_enqueue_ms = (time.perf_counter() - t0) * 1000.0
        timer.end("compute")
        timer.start("d2h")
        for name, view in out_views.items():
            ct.memcpy_async(self._host[name].ptr, self._dev[name].ptr, view.nbytes, "d2h", s)
        timer.end("d2h")
        s.synchronize()
        outputs = {name: view.copy() for name, view in out_views.items()}
        comps = {"h2d_ms": timer.elapsed_ms("h2d"), "gpu_compute_ms": timer.elapsed_ms("compute"),
                 "d2h_ms": timer.elapsed_ms("d2h"), "host_enqueue_ms": host_enqueue_ms}
        return InferOutput(outputs=outputs, components_ms=comps)

    # ------------------------------------------------------------------ inspection
    def profiles(self) -> list[OptimizationProfile]:
        """All optimization profiles of the engine (min/opt/max per input)."""
        self._require_active()
        out = []
        for p in range(int(self.engine.num_optimization_profiles)):
            shapes = {}
            for name in self.inputs:
                mn, op, mx = self.engine.get_tensor_profile_shape(name, p)
                shapes[name] = ProfileShape(min=_dims(mn), opt=_dims(op), max=_dims(mx))
            out.append(OptimizationProfile(index=p, shapes=shapes))
        return out

    def memory(self) -> EngineMemory:
        """Memory figures from the engine's own APIs (``*_v2`` from TensorRT 10.1,
        ``get_engine_stat`` from 10.14, weight streaming from 10.0) and the GPU."""
        self._require_active()
        trt, e = self._trt, self.engine
        mem: dict[str, Any] = {"plan_size_bytes": self.plan_path.stat().st_size, "notes": []}
        if hasattr(e, "get_device_memory_size_for_profile_v2"):
            mem["device_memory_bytes_per_profile"] = {
                p: int(e.get_device_memory_size_for_profile_v2(p))
                for p in range(int(e.num_optimization_profiles))}
        if hasattr(e, "device_memory_size_v2"):
            mem["device_memory_bytes"] = int(e.device_memory_size_v2)
        if hasattr(e, "get_engine_stat") and hasattr(trt, "EngineStat"):
            mem["weights_bytes"] = int(e.get_engine_stat(trt.EngineStat.TOTAL_WEIGHTS_SIZE))
            mem["weights_source"] = "engine_stat"
        if hasattr(e, "streamable_weights_size") and int(e.streamable_weights_size) > 0:
            mem["weight_streaming_min_budget_bytes"] = int(
                getattr(e, "minimum_weight_streaming_budget", 0) or 0) or None
            if hasattr(e, "get_weight_streaming_automatic_budget"):
                mem["weight_streaming_automatic_budget_bytes"] = int(
                    e.get_weight_streaming_automatic_budget())
        try:
            mem["gpu_free_bytes"], mem["gpu_total_bytes"] = ct.mem_get_info()
        except ct.CudaError:
            mem["notes"].append("cudaMemGetInfo failed; GPU memory unknown")
        return EngineMemory(**mem)

    def engine_inspection(self) -> EngineInspection:
        """Layers from the engine inspector (JSON, parsed by
        :func:`trtcheck.load.engine_json.parse_layer_info`), profiles and memory; not
        linted (:func:`trtcheck.inspection.engine.engine.inspect_engine_path` lints it)."""
        from trtcheck.load.engine_json import parse_layer_info, summarize

        self._require_active()
        import json

        trt = self._trt
        insp = self.engine.create_engine_inspector()
        insp.execution_context = self.context
        doc = json.loads(insp.get_engine_information(trt.LayerInformationFormat.JSON))
        result = parse_layer_info(doc, str(self.plan_path))
        return summarize(result.model_copy(update={
            "source": "plan", "runtime_name": self.runtime,
            "runtime_version": self.info.version, "device_name": self.info.device,
            "profiles": self.profiles(), "memory": self.memory()}))

    def profile_layers(self, feed: dict[str, Any], iterations: int = 10) -> dict[str, float]:
        """Average per-layer time in ms over ``iterations`` executions, through TensorRT's
        ``IProfiler`` (``report_layer_time``), as ``trtexec --dumpProfile`` does. The
        profiler serialises layers, so the sum exceeds a normal execution's time."""
        self._require_active()
        trt = self._trt
        totals: dict[str, float] = {}

        class _Profiler(trt.IProfiler):  # type: ignore[name-defined]
            def __init__(self) -> None:
                trt.IProfiler.__init__(self)

            def report_layer_time(self, layer_name: str, ms: float) -> None:
                totals[layer_name] = totals.get(layer_name, 0.0) + float(ms)

        graph = self.use_cuda_graph
        self.use_cuda_graph = False  # the profiler cannot see inside a graph replay
        self.context.profiler = _Profiler()
        try:
            for _ in range(max(1, iterations)):
                self.infer(feed)
        finally:
            self.context.profiler = None
            self.use_cuda_graph = graph
        return {k: v / max(1, iterations) for k, v in totals.items()}


def inspect_plan_on_gpu(plan_path: Path, runtime: str) -> EngineInspection:
    """Deserialize ``plan_path`` and return its engine inspection (layers, profiles,
    memory; not linted); the ``load_engine`` hook of
    :func:`trtcheck.inspection.engine.engine.inspect_engine_path`.

    Raises:
        EnvironmentProblem / InputError: see :meth:`TensorRTBackend.activate`.
    """
    backend = TensorRTBackend(plan_path, runtime=runtime)
    with backend:
        return backend.engine_inspection()


def tensorrt_backend(plan_path: str | os.PathLike[str], **options: Any) -> TensorRTBackend:
    """Registry factory ``tensorrt``: a TensorRT plan (``runtime`` option overrides)."""
    options.setdefault("runtime", "tensorrt")
    return TensorRTBackend(plan_path, **options)


def tensorrt_rtx_backend(plan_path: str | os.PathLike[str], **options: Any) -> TensorRTBackend:
    """Registry factory ``tensorrt_rtx``: a TensorRT-RTX plan."""
    options["runtime"] = "tensorrt_rtx"
    return TensorRTBackend(plan_path, **options)
