"""The backend protocol: load a model, describe its I/O, run one batch, report timings.

Every runtime (ONNX Runtime, TensorRT, TensorRT-RTX, a synthetic latency curve, a user's
Python callable) implements :class:`Backend`. Measurement code (bench, serving) only
talks to this protocol, so a new runtime plugs in without touching it.

Lifecycle (after Polygraphy's runners): construct (cheap, nothing loaded) ->
:meth:`Backend.activate` (load, allocate) -> any number of :meth:`Backend.infer` ->
:meth:`Backend.deactivate` (free). Backends are context managers doing the same.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from trtcheck.results.bench import BackendInfo
from trtcheck.results.inspection import TensorInfo


@dataclass
class InferOutput:
    """What one execution returns.

    Attributes:
        outputs: output name -> array (batch on axis 0 when the model is batched).
        components_ms: per-execution timing parts the backend measured itself, in ms,
            under the standard names ``h2d_ms``, ``gpu_compute_ms``, ``d2h_ms``,
            ``host_enqueue_ms`` (empty when the backend cannot split its time).
    """

    outputs: dict[str, Any]
    components_ms: dict[str, float] = field(default_factory=dict)


class Backend(abc.ABC):
    """Abstract runtime. Subclasses implement the four abstract methods.

    Raises (from any method): :class:`trtcheck.errors.InputError` for a bad model or
    feed, :class:`trtcheck.errors.EnvironmentProblem` for a missing runtime or device.
    """

    _active: bool = False

    @property
    @abc.abstractmethod
    def info(self) -> BackendInfo:
        """Name, version, device and precision of this backend (valid after activate)."""

    @abc.abstractmethod
    def activate(self) -> None:
        """Load the model and allocate what :meth:`infer` needs."""

    @abc.abstractmethod
    def deactivate(self) -> None:
        """Free everything :meth:`activate` allocated; safe to call twice."""

    @abc.abstractmethod
    def input_specs(self) -> list[TensorInfo]:
        """Model inputs with dtypes and (possibly dynamic) shapes."""

    def output_specs(self) -> list[TensorInfo]:
        """Model outputs (empty list when the backend cannot tell)."""
        return []

    @abc.abstractmethod
    def infer(self, feed: dict[str, Any]) -> InferOutput:
        """Run one execution on ``feed`` (input name -> numpy array) and wait for it.

        The call returns only when outputs are ready on the host, so timing it from the
        outside measures end-to-end host latency.
        """

    @property
    def is_active(self) -> bool:
        """Whether :meth:`activate` has run without a matching :meth:`deactivate`."""
        return self._active

    def __enter__(self) -> Backend:
        self.activate()
        return self

    def __exit__(self, *exc: object) -> None:
        self.deactivate()
