"""Glue used by the commands: open a backend, run inspection + bench, assemble Results."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any

from trtcheck import __version__
from trtcheck.fingerprint import collect_environment
from trtcheck.measure.bench.bench import StopRule, run_bench
from trtcheck.results import Results, ToolInfo, utc_now_iso
from trtcheck.results.bench import BenchRun


@dataclass
class RunOptions:
    """Everything a measured run needs from the command line (``progress``: a progress
    callback of :mod:`trtcheck.measure.progress`, ``True`` for log lines, or ``False``)."""

    batch_sizes: list[int] | None = None
    shapes: dict[str, list[int]] = field(default_factory=dict)
    arrays: dict[str, Any] | None = None
    arrays_source: str = "--inputs data"
    values: dict[str, float | int | bool] | None = None
    backend_name: str | None = None
    #: the backend options as the command received them (``dest -> value``, e.g.
    #: ``{"cuda_graph": True, "threads": None}``), declared by the backends
    #: (:mod:`trtcheck.backends.options`); checked against the chosen backend by
    #: :func:`backend_kwargs`
    backend_options: dict[str, Any] = field(default_factory=dict)
    rule: StopRule = field(default_factory=StopRule)
    seed: int | None = 0
    progress: Any = False

    @property
    def providers(self) -> list[str] | None:
        """``--providers`` (ONNX Runtime execution providers), or ``None``."""
        value: list[str] | None = self.backend_options.get("providers") or None
        return value

    @property
    def threads(self) -> int | None:
        """``--threads`` (ONNX Runtime intra-op threads), or ``None``."""
        value: int | None = self.backend_options.get("threads")
        return value


def rule_from_options(warmup_s: float | None, min_duration_s: float | None,
                      min_samples: int | None, max_duration_s: float | None,
                      base: StopRule | None = None) -> StopRule:
    """A :class:`StopRule` from CLI values, ``None`` keeping ``base``'s (or the default).

    A ``min_duration_s`` above the base's ``max_duration_s`` raises the maximum to it
    (the user asked to measure that long), as ``min_samples`` raises ``max_samples``.

    Raises:
        InputError: ``max_duration_s`` given and shorter than ``min_duration_s``, or a
            value :class:`StopRule` rejects (negative, NaN, infinite).
    """
    rule = base or StopRule()
    changes: dict[str, Any] = {k: v for k, v in dict(warmup_s=warmup_s, min_duration_s=min_duration_s,
                                     min_samples=min_samples,
                                     max_duration_s=max_duration_s).items() if v is not None}
    if "min_samples" in changes and changes["min_samples"] > rule.max_samples:
        changes["max_samples"] = changes["min_samples"]
    min_s = changes.get("min_duration_s", rule.min_duration_s)
    max_s = changes.get("max_duration_s", rule.max_duration_s)
    if min_s > max_s:
        if "max_duration_s" in changes:
            from trtcheck.errors import InputError

            raise InputError(f"--max-duration {max_s:g} s is shorter than --min-duration "
                             f"{min_s:g} s", "raise --max-duration or lower --min-duration")
        changes["max_duration_s"] = min_s  # asked to measure this long: let it
    return replace(rule, **changes)


def new_results(argv: list[str] | None = None) -> Results:
    """An empty results document with the tool info and environment fingerprint."""
    command = list(argv if argv is not None else sys.argv)
    if command and os.path.basename(command[0]) in ("trtcheck", "__main__.py"):
        command[0] = "trtcheck"  # the console script or `python -m trtcheck`: rerunnable
    return Results(tool=ToolInfo(version=__version__, command=command),
                   created_utc=utc_now_iso(), environment=collect_environment())


def backend_kwargs(model_path: str, opts: RunOptions) -> dict[str, Any]:
    """Backend constructor options from ``opts``; an option the chosen backend does not
    declare is an :class:`~trtcheck.errors.InputError`, not silently dropped
    (:func:`trtcheck.backends.registry.backend_kwargs`)."""
    from trtcheck.backends.registry import backend_kwargs as registry_kwargs

    return registry_kwargs(model_path, opts.backend_name, opts.backend_options)


def bench_model(model_path: str, opts: RunOptions) -> BenchRun:
    """Open the backend for ``model_path``, run the batch sweep, close the backend.

    Raises:
        InputError, EnvironmentProblem: from the backend or shape resolution.
    """
    from trtcheck.backends.registry import open_backend

    backend = open_backend(model_path, opts.backend_name, **backend_kwargs(model_path, opts))
    with backend:
        return run_bench(backend, model_path, opts.batch_sizes, shapes=opts.shapes,
                         rule=opts.rule, seed=opts.seed, arrays=opts.arrays,
                         values=opts.values, progress=opts.progress,
                         data_source=opts.arrays_source)
