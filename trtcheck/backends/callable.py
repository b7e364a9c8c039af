"""Wrap any Python function as a :class:`~trtcheck.backends.base.Backend` (public API).

The function takes one assembled batch and returns the batch's outputs::

    def my_model(batch):            # batch: dict name -> array [b, ...] (or an array, or a list)
        return {"y": run(batch["x"])}

    backend = CallableBackend(my_model)

``async def`` functions are supported: serving awaits them on the event loop
(:meth:`CallableBackend.infer_async`); sync ones run in an executor thread, as a Python
service would with ``run_in_executor``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from trtcheck.backends.base import Backend, InferOutput
from trtcheck.errors import UsageError
from trtcheck.results.bench import BackendInfo
from trtcheck.results.inspection import TensorInfo


def _is_async(fn: Callable[..., Any]) -> bool:
    import inspect

    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None))


class CallableBackend(Backend):
    """A backend around ``fn(batch) -> outputs`` (sync or async).

    Args:
        fn: the batch function. Outputs may be a dict of arrays, an array, or a list with
            one element per request; :func:`trtcheck.measure.serving.batcher.default_split`
            splits them.
        name: label recorded in results (default: the function's qualified name).
        inputs: optional input specs (for input generation and reports).
        device: human name of where it runs (recorded only).
        precision: recorded only.

    Raises:
        UsageError: ``fn`` is not callable.
    """

    def __init__(self, fn: Callable[[Any], Any], name: str | None = None,
                 inputs: list[TensorInfo] | None = None, device: str = "unknown",
                 precision: str = "unknown") -> None:
        if not callable(fn):
            raise UsageError(f"expected a callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", type(fn).__name__)
        self._inputs = list(inputs or [])
        self._device = device
        self._precision = precision
        self.is_async = _is_async(fn)

    @property
    def info(self) -> BackendInfo:
        return BackendInfo(name="callable", version="-", device=self._device,
                           precision=self._precision,
                           options={"function": self.name, "async": self.is_async})

    def activate(self) -> None:
        self._active = True

    def deactivate(self) -> None:
        self._active = False

    def input_specs(self) -> list[TensorInfo]:
        return list(self._inputs)

    def infer(self, feed: Any) -> InferOutput:
        """Call the function synchronously (an async one is run to completion with
        :func:`asyncio.run`; do not call this from inside a running loop)."""
        out = asyncio.run(self.fn(feed)) if self.is_async else self.fn(feed)
        return out if isinstance(out, InferOutput) else InferOutput(outputs=_as_dict(out))

    async def infer_async(self, feed: Any) -> Any:
        """Await the async function (raises UsageError for a sync one)."""
        if not self.is_async:
            raise UsageError("infer_async needs an async function")
        return await self.fn(feed)

    @property
    def prefers_async(self) -> bool:
        """Whether serving should await :meth:`infer_async` (the function is async)."""
        return self.is_async


def _as_dict(out: Any) -> dict[str, Any]:
    if isinstance(out, dict):
        return out
    return {"output": out}
