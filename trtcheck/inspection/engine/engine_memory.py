"""Engine memory estimates as pure functions over recorded numbers (no GPU needed).

Inputs come from the engine (``device_memory_size_v2``,
``get_device_memory_size_for_profile_v2``, ``get_engine_stat(TOTAL_WEIGHTS_SIZE)``;
recorded by :meth:`trtcheck.backends.tensorrt.TensorRTBackend.memory`), from
engine-inspector layers (weights), from ONNX initializers, and from ``cudaMemGetInfo``.

Model of what one execution context needs on the GPU (TensorRT developer guide,
"Memory": weights are loaded once per engine; each context allocates activation/scratch
memory; with the default *static* allocation strategy that is the size for the profile's
max shapes, whatever batch runs; I/O buffers are the application's)::

    need(b) = weights + contexts * (activation(b) + io_bytes_per_sample * b)
    activation(b) = device_memory_at_profile_max                       for b <= max_batch
                  = device_memory_at_profile_max * b / max_batch       for b >  max_batch

The second line extrapolates linearly for an engine rebuilt with a larger profile; since
part of the scratch memory does not grow with the batch, this over-estimates (errs on the
safe side). ``HEADROOM_FRACTION`` of free memory is kept back for the CUDA context,
library workspaces and fragmentation (our rule of thumb, not a TensorRT figure).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from trtcheck.results.engine import EngineInspection, EngineMemory, EngineTensor

HEADROOM_FRACTION = 0.10
"""Share of free GPU memory kept back (CUDA context, cuBLAS/cuDNN workspaces,
fragmentation); a rule of thumb."""

DTYPE_BYTES = {"fp32": 4, "float32": 4, "fp16": 2, "float16": 2, "bf16": 2, "bfloat16": 2,
               "int8": 1, "uint8": 1, "fp8": 1, "int32": 4, "int64": 8, "bool": 1,
               "float64": 8}


def tensor_bytes(dims: Iterable[int], dtype: str | None) -> int | None:
    """Bytes of a dense tensor; ``None`` for an unknown dtype or a dynamic (<0) dim."""
    dims = list(dims)
    size = DTYPE_BYTES.get((dtype or "").lower())
    if size is None or any(d < 0 for d in dims):
        return None
    return int(math.prod(dims)) * size


def io_bytes_per_sample(io: list[EngineTensor]) -> int | None:
    """Bytes of all I/O tensors for one batch item (axis 0 is the batch); ``None`` if any
    tensor's per-sample size is unknown."""
    total = 0
    for t in io:
        b = tensor_bytes(t.dims[1:], t.dtype)
        if b is None:
            return None
        total += b
    return total


def weights_from_layers(insp: EngineInspection) -> int | None:
    """Sum of the engine-inspector weight sizes; ``None`` when no layer reports any."""
    vals = [la.weights_bytes for la in insp.layers if la.weights_bytes is not None]
    return sum(vals) if vals else None


def onnx_initializer_bytes(path: str | Path) -> int:
    """Bytes of all initializers of an ONNX model (external data included by size)."""
    import onnx
    from onnx import helper

    model = onnx.load(str(path), load_external_data=False)
    total = 0
    for init in model.graph.initializer:
        itemsize = helper.tensor_dtype_to_np_dtype(init.data_type).itemsize
        total += int(math.prod(init.dims)) * itemsize
    return total


def activation_bytes(batch: int, device_memory_at_max: int, max_batch: int) -> int:
    """Activation/scratch memory for ``batch`` (see the module docstring's model).

    Raises:
        ValueError: ``batch`` or ``max_batch`` < 1, or negative memory.
    """
    if batch < 1 or max_batch < 1 or device_memory_at_max < 0:
        raise ValueError("batch and max_batch must be >= 1, memory >= 0")
    if batch <= max_batch:
        return device_memory_at_max
    return math.ceil(device_memory_at_max * batch / max_batch)


def need_bytes(batch: int, *, weights: int, device_memory_at_max: int, max_batch: int,
               io_per_sample: int, contexts: int = 1) -> int:
    """GPU bytes to run ``batch`` with ``contexts`` execution contexts."""
    return weights + contexts * (activation_bytes(batch, device_memory_at_max, max_batch)
                                 + io_per_sample * batch)


@dataclass(frozen=True)
class BatchFit:
    """Result of :func:`largest_batch_that_fits`.

    Attributes:
        batch: largest batch that fits (0: not even batch 1).
        limited_by: ``"memory"``, ``"profile"`` (the engine's max batch; a rebuild with a
            larger profile would allow more) or ``"search_limit"``.
        need_bytes: estimated need at ``batch`` (at batch 1 when ``batch`` is 0).
        budget_bytes: free memory minus headroom.
    """

    batch: int
    limited_by: str
    need_bytes: int
    budget_bytes: int


def largest_batch_that_fits(free_bytes: int, *, weights: int, device_memory_at_max: int,
                            max_batch: int, io_per_sample: int, contexts: int = 1,
                            headroom_fraction: float = HEADROOM_FRACTION,
                            within_profile: bool = True, search_limit: int = 1 << 20
                            ) -> BatchFit:
    """Largest batch whose estimated need fits in ``free_bytes`` minus headroom.

    Args:
        free_bytes: free GPU memory (``cudaMemGetInfo``), bytes.
        weights: engine weights, bytes.
        device_memory_at_max: activation memory of the profile at its max shapes.
        max_batch: the profile's max batch (axis 0).
        io_per_sample: I/O bytes per batch item.
        contexts: execution contexts running at once (each has its own activations).
        headroom_fraction: share of free memory kept back, in [0, 1).
        within_profile: cap at ``max_batch`` (the engine cannot run more); ``False``
            extrapolates for a rebuilt engine.
        search_limit: upper bound of the search.

    Raises:
        ValueError: invalid arguments.
    """
    if not 0 <= headroom_fraction < 1 or contexts < 1 or max_batch < 1 or free_bytes < 0:
        raise ValueError("invalid arguments to largest_batch_that_fits")
    budget = int(free_bytes * (1 - headroom_fraction))
    kw = dict(weights=weights, device_memory_at_max=device_memory_at_max,
              max_batch=max_batch, io_per_sample=io_per_sample, contexts=contexts)
    if need_bytes(1, **kw) > budget:
        return BatchFit(0, "memory", need_bytes(1, **kw), budget)
    hi_cap = max_batch if within_profile else search_limit
    lo, hi = 1, hi_cap
    while lo < hi:  # need() is non-decreasing in the batch
        mid = (lo + hi + 1) // 2
        if need_bytes(mid, **kw) <= budget:
            lo = mid
        else:
            hi = mid - 1
    if lo == hi_cap:
        limited = "profile" if within_profile else "search_limit"
    else:
        limited = "memory"
    return BatchFit(lo, limited, need_bytes(lo, **kw), budget)


def memory_summary(insp: EngineInspection, *, plan_size_bytes: int | None = None,
                   recorded: EngineMemory | None = None, onnx_path: str | Path | None = None,
                   profile_index: int = 0) -> EngineMemory:
    """Combine what is known into one :class:`EngineMemory` with notes saying how.

    Weights: the engine stat when recorded, else layer weights, else ONNX initializers.
    The largest batch is computed only when device memory and free memory are known.
    """
    base = recorded.model_copy() if recorded is not None else EngineMemory()
    notes = list(base.notes)
    upd: dict = {}
    if plan_size_bytes is not None:
        upd["plan_size_bytes"] = plan_size_bytes
    if base.weights_bytes is None:
        w = weights_from_layers(insp)
        if w is not None:
            upd["weights_bytes"], upd["weights_source"] = w, "layer weights"
        elif onnx_path is not None:
            upd["weights_bytes"] = onnx_initializer_bytes(onnx_path)
            upd["weights_source"] = "onnx initializers"
    io = io_bytes_per_sample(insp.io_tensors)
    if io is not None:
        upd["io_bytes_per_sample"] = io
    weights = upd.get("weights_bytes", base.weights_bytes)
    dev = base.device_memory_bytes_per_profile.get(profile_index, base.device_memory_bytes)
    max_batch = None
    if insp.profiles and profile_index < len(insp.profiles):
        maxes = [s.max[0] for s in insp.profiles[profile_index].shapes.values() if s.max]
        max_batch = min(maxes) if maxes else None
    if (dev is not None and base.gpu_free_bytes is not None and weights is not None
            and io is not None and max_batch is not None):
        fit = largest_batch_that_fits(base.gpu_free_bytes, weights=weights,
                                      device_memory_at_max=dev, max_batch=max_batch,
                                      io_per_sample=io)
        upd["largest_batch_fits"] = fit.batch
        notes.append(f"largest batch {fit.batch} (limited by {fit.limited_by}; need "
                     f"{fit.need_bytes / 2**20:.1f} MiB of {fit.budget_bytes / 2**20:.1f} MiB "
                     f"usable, {HEADROOM_FRACTION:.0%} headroom kept)")
    else:
        notes.append("largest batch not estimated: needs device memory per profile and "
                     "free GPU memory (run `trtcheck inspect PLAN` on the GPU machine)")
    upd["notes"] = notes
    return base.model_copy(update=upd)
