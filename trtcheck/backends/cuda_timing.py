"""CUDA timing primitives through cuda-python: streams, events, copies, graphs, memory.

The TensorRT backend times each execution with CUDA events recorded on its stream
(the method CUDA's Best Practices Guide, section "Using CUDA GPU Timers", recommends:
``cudaEventRecord`` before and after the work, ``cudaEventSynchronize`` on the end event,
``cudaEventElapsedTime`` for the difference in ms, resolution about 0.5 us), instead of a
host clock around copies as Polygraphy's runner does. This module is the only place that
talks to the CUDA runtime; everything is imported lazily so that importing trtcheck never
needs cuda-python.

Module lookup: ``cuda.bindings.runtime`` (cuda-python / cuda-bindings 12.6+ and 13.x),
falling back to the older ``cuda.cudart`` (cuda-python < 12.6). Every call returns a tuple
whose first element is a ``cudaError_t``; :func:`check` unpacks it and raises
:class:`CudaError` with CUDA's own error string.

Verified on real hardware: ``benchmarks/cuda_timing.py`` on an NVIDIA H200 (results in
``benchmarks/results/cuda_timing-h200-host.json``) times device copies, pinned H2D/D2H copies
and CUDA-graph replays of a PyTorch op with these events and with ``torch.cuda.Event``
on the same stream, and compares them.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from trtcheck.errors import EnvironmentProblem

INSTALL_HINT = ('install cuda-python for your CUDA major: pip install "cuda-python>=12,<13" '
                '(CUDA 12) or "cuda-python>=13" (CUDA 13)')


class CudaError(EnvironmentProblem):
    """A CUDA runtime call failed (exit code 3).

    Attributes:
        call: the CUDA function name, e.g. ``"cudaMalloc"``.
        code: the ``cudaError_t`` value as an int.
    """

    def __init__(self, call: str, code: int, text: str, hint: str | None = None) -> None:
        self.call = call
        self.code = code
        super().__init__(f"{call} failed: {text} (cudaError {code})", hint)


_CUDART: Any = None


def cudart() -> Any:
    """Return the cuda-python runtime module (imported once, lazily).

    Raises:
        EnvironmentProblem: cuda-python is not installed.
    """
    global _CUDART
    if _CUDART is None:
        try:
            from cuda.bindings import runtime as mod  # cuda-python >= 12.6
        except ImportError:
            try:
                from cuda import cudart as mod  # older cuda-python
            except ImportError:
                raise EnvironmentProblem("cuda-python is not installed (needed for CUDA "
                                         "streams, events and copies)", INSTALL_HINT) from None
        _CUDART = mod
    return _CUDART


def set_cudart(module: Any) -> None:
    """Replace the runtime module (tests pass a fake; ``None`` resets to lazy import)."""
    global _CUDART
    _CUDART = module


def _error_text(rt: Any, err: Any) -> str:
    try:
        res = rt.cudaGetErrorString(err)
        text = res[1] if isinstance(res, tuple) else res
        return text.decode() if isinstance(text, bytes) else str(text)
    except Exception:  # noqa: BLE001 - best effort for a message
        return str(err)


def check(result: Any, call: str = "CUDA call") -> Any:
    """Unpack a cuda-python result tuple ``(err, *values)``.

    Returns:
        ``None`` for no values, the value for one, a tuple for several.

    Raises:
        CudaError: ``err`` is not ``cudaSuccess``; "driver insufficient" and "no device"
            get a hint naming what to check.
    """
    rt = cudart()
    if isinstance(result, tuple):
        err, values = result[0], result[1:]
    else:
        err, values = result, ()
    code = int(err) if not hasattr(err, "value") else int(err.value)
    if code != 0:
        text = _error_text(rt, err)
        hint = None
        if code in (35, 100):  # cudaErrorInsufficientDriver, cudaErrorNoDevice
            hint = "no usable CUDA GPU here: run on a machine with an NVIDIA GPU and driver " \
                   "(nvidia-smi must work)"
        raise CudaError(call, code, text, hint)
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def device_count() -> int:
    """Number of CUDA devices visible (0 when there is no driver or no GPU; never raises
    for those two cases)."""
    rt = cudart()
    res = rt.cudaGetDeviceCount()
    code = int(res[0].value) if hasattr(res[0], "value") else int(res[0])
    if code != 0:
        return 0
    return int(res[1])


def mem_get_info() -> tuple[int, int]:
    """``(free_bytes, total_bytes)`` of the current device (``cudaMemGetInfo``)."""
    free, total = check(cudart().cudaMemGetInfo(), "cudaMemGetInfo")
    return int(free), int(total)


def device_name(index: int = 0) -> str:
    """Name of device ``index`` from ``cudaGetDeviceProperties``."""
    props = check(cudart().cudaGetDeviceProperties(index), "cudaGetDeviceProperties")
    name = props.name
    if isinstance(name, bytes):
        name = name.split(b"\0", 1)[0].decode(errors="replace")
    return str(name)


class Stream:
    """A non-blocking CUDA stream (``cudaStreamCreateWithFlags(cudaStreamNonBlocking)``).

    ``handle`` is the stream object cuda-python returns; ``ptr`` its integer value
    (what TensorRT's ``execute_async_v3(stream_handle)`` takes).
    """

    def __init__(self, handle: Any | None = None) -> None:
        rt = cudart()
        self._owned = handle is None
        if handle is None:
            handle = check(rt.cudaStreamCreateWithFlags(rt.cudaStreamNonBlocking),
                           "cudaStreamCreateWithFlags")
        self.handle = handle

    @classmethod
    def from_ptr(cls, ptr: int) -> Stream:
        """Wrap an existing stream (e.g. ``torch.cuda.current_stream().cuda_stream``)."""
        rt = cudart()
        return cls(handle=rt.cudaStream_t(ptr))

    @property
    def ptr(self) -> int:
        return int(self.handle)

    def synchronize(self) -> None:
        check(cudart().cudaStreamSynchronize(self.handle), "cudaStreamSynchronize")

    def destroy(self) -> None:
        if self._owned and self.handle is not None:
            check(cudart().cudaStreamDestroy(self.handle), "cudaStreamDestroy")
        self.handle = None


class Event:
    """A CUDA event with timing enabled (``cudaEventCreate``)."""

    def __init__(self) -> None:
        self.handle = check(cudart().cudaEventCreate(), "cudaEventCreate")

    def record(self, stream: Stream) -> None:
        check(cudart().cudaEventRecord(self.handle, stream.handle), "cudaEventRecord")

    def synchronize(self) -> None:
        check(cudart().cudaEventSynchronize(self.handle), "cudaEventSynchronize")

    def elapsed_ms_since(self, start: Event) -> float:
        """Milliseconds between ``start`` and this event (both recorded and complete)."""
        return float(check(cudart().cudaEventElapsedTime(start.handle, self.handle),
                           "cudaEventElapsedTime"))

    def destroy(self) -> None:
        if self.handle is not None:
            check(cudart().cudaEventDestroy(self.handle), "cudaEventDestroy")
        self.handle = None


class DeviceBuffer:
    """``nbytes`` of device memory from ``cudaMalloc`` (``ptr`` is the address)."""

    def __init__(self, nbytes: int) -> None:
        if nbytes < 0:
            raise ValueError(f"nbytes must be >= 0, got {nbytes}")
        self.nbytes = int(nbytes)
        self.ptr = int(check(cudart().cudaMalloc(max(1, self.nbytes)), "cudaMalloc"))

    def free(self) -> None:
        if self.ptr:
            check(cudart().cudaFree(self.ptr), "cudaFree")
        self.ptr = 0


class PinnedBuffer:
    """``nbytes`` of page-locked host memory (``cudaMallocHost``), with a numpy view.

    Pinned memory is what makes ``cudaMemcpyAsync`` asynchronous and full-bandwidth
    (CUDA C++ Best Practices Guide, "Pinned Memory").
    """

    def __init__(self, nbytes: int) -> None:
        self.nbytes = int(nbytes)
        self.ptr = int(check(cudart().cudaMallocHost(max(1, self.nbytes)), "cudaMallocHost"))

    def view(self, dtype: Any, shape: tuple[int, ...]) -> Any:
        """A numpy array of ``dtype``/``shape`` over this memory (no copy).

        Raises:
            ValueError: the array would not fit in the buffer.
        """
        import numpy as np

        dt = np.dtype(dtype)
        count = int(np.prod(shape)) if shape else 1
        if count * dt.itemsize > self.nbytes:
            raise ValueError(f"array of {count * dt.itemsize} bytes does not fit in "
                             f"{self.nbytes} pinned bytes")
        raw: Any = (ctypes.c_byte * max(1, count * dt.itemsize)).from_address(self.ptr)
        return np.frombuffer(raw, dtype=dt, count=count).reshape(shape)

    def free(self) -> None:
        if self.ptr:
            check(cudart().cudaFreeHost(self.ptr), "cudaFreeHost")
        self.ptr = 0


def memcpy_async(dst_ptr: int, src_ptr: int, nbytes: int, kind: str, stream: Stream) -> None:
    """``cudaMemcpyAsync`` of ``nbytes``; ``kind`` is ``"h2d"``, ``"d2h"`` or ``"d2d"``."""
    rt = cudart()
    kinds = {"h2d": rt.cudaMemcpyKind.cudaMemcpyHostToDevice,
             "d2h": rt.cudaMemcpyKind.cudaMemcpyDeviceToHost,
             "d2d": rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice}
    if kind not in kinds:
        raise ValueError(f"kind must be h2d, d2h or d2d, got {kind!r}")
    check(rt.cudaMemcpyAsync(dst_ptr, src_ptr, nbytes, kinds[kind], stream.handle),
          "cudaMemcpyAsync")


class CudaGraph:
    """A CUDA graph captured from the work ``fn`` enqueues on ``stream``, then replayed.

    Capture uses ``cudaStreamCaptureModeThreadLocal`` (other threads may keep using CUDA,
    as TensorRT's own ``trtexec --useCudaGraph`` does); ``launch`` replays it on a stream.

    Raises:
        CudaError: capture or instantiation failed (e.g. ``fn`` synchronised inside the
            capture, or an engine with data-dependent shapes).
    """

    def __init__(self, stream: Stream, fn: Callable[[], Any]) -> None:
        rt = cudart()
        check(rt.cudaStreamBeginCapture(
            stream.handle, rt.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal),
            "cudaStreamBeginCapture")
        try:
            fn()
        finally:
            graph = check(rt.cudaStreamEndCapture(stream.handle), "cudaStreamEndCapture")
        self.graph = graph
        self.exec = check(rt.cudaGraphInstantiate(graph, 0), "cudaGraphInstantiate")

    def launch(self, stream: Stream) -> None:
        check(cudart().cudaGraphLaunch(self.exec, stream.handle), "cudaGraphLaunch")

    def destroy(self) -> None:
        rt = cudart()
        if getattr(self, "exec", None) is not None:
            check(rt.cudaGraphExecDestroy(self.exec), "cudaGraphExecDestroy")
            self.exec = None
        if getattr(self, "graph", None) is not None:
            check(rt.cudaGraphDestroy(self.graph), "cudaGraphDestroy")
            self.graph = None


class EventTimer:
    """Times segments of work on one stream with reusable event pairs.

    Usage::

        timer = EventTimer(stream, ["h2d", "compute", "d2h"])
        timer.mark("h2d.start") ... timer.mark("h2d.end")
        stream.synchronize(); timer.elapsed_ms("h2d")

    Attributes:
        names: segment names; each has a ``start`` and an ``end`` event.
    """

    def __init__(self, stream: Stream, names: list[str]) -> None:
        self.stream = stream
        self.names = list(names)
        self.events = {n: (Event(), Event()) for n in self.names}

    def start(self, name: str) -> None:
        self.events[name][0].record(self.stream)

    def end(self, name: str) -> None:
        self.events[name][1].record(self.stream)

    def elapsed_ms(self, name: str) -> float:
        """GPU time of segment ``name`` in ms (synchronises on its end event)."""
        start, end = self.events[name]
        end.synchronize()
        return end.elapsed_ms_since(start)

    def destroy(self) -> None:
        for a, b in self.events.values():
            a.destroy()
            b.destroy()
        self.events = {}
