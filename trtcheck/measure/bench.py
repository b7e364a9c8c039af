"""Latency/throughput sweep across batch sizes on any :class:`~trtcheck.backends.Backend`.

Per batch size: build the feed once (outside the timed region), warm up by time, then
time each ``backend.infer(feed)`` with ``time.perf_counter_ns`` until both the minimum
duration and the minimum sample count are reached (or a maximum stops it). All raw
samples are kept in the results (pyperf / pytest-benchmark practice), next to the
statistics computed by :mod:`trtcheck.stats`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trtcheck.backends.base import Backend
from trtcheck.errors import InputError
from trtcheck.load.inputs import make_feed
from trtcheck.load.shapes import format_shape, resolve_shapes, shapes_with_data
from trtcheck.results.bench import BatchResult, BenchRun, BenchSettings
from trtcheck.stats import stability_findings, summarize


@dataclass(frozen=True)
class StopRule:
    """When to stop warming up and measuring one batch size.

    Attributes:
        warmup_s: warm-up time in seconds (>= 0).
        warmup_min_iterations: at least this many warm-up runs (>= 0).
        min_duration_s: measure for at least this long (seconds, >= 0) ...
        min_samples: ... and at least this many executions (>= 1).
        max_duration_s: stop after this long even if ``min_samples`` is not reached
            (seconds, > 0; at least one sample is always taken).
        max_samples: stop after this many executions (>= min_samples).

    Raises:
        InputError: values out of range.
    """

    warmup_s: float = 0.5
    warmup_min_iterations: int = 3
    min_duration_s: float = 2.0
    min_samples: int = 50
    max_duration_s: float = 30.0
    max_samples: int = 100_000

    def __post_init__(self) -> None:
        for flag, value in (("--warmup", self.warmup_s), ("--min-duration", self.min_duration_s),
                            ("--max-duration", self.max_duration_s)):
            if not math.isfinite(value):
                raise InputError(f"{flag} must be a finite number of seconds, got {value}",
                                 f"e.g. {flag} 2")
        if self.warmup_s < 0 or self.min_duration_s < 0 or self.warmup_min_iterations < 0:
            raise InputError("warm-up and durations must be >= 0")
        if self.min_samples < 1:
            raise InputError("--min-samples must be >= 1")
        if self.max_duration_s <= 0:
            raise InputError("--max-duration must be > 0")
        if self.max_samples < self.min_samples:
            raise InputError("--max-samples must be >= --min-samples")


def _time_loop(backend: Backend, feed: dict[str, Any], rule: StopRule
               ) -> tuple[list[float], dict[str, list[float]], float, str]:
    samples: list[float] = []
    components: dict[str, list[float]] = {}
    infer = backend.infer
    clock = time.perf_counter_ns
    start = clock()
    min_ns = int(rule.min_duration_s * 1e9)
    max_ns = int(rule.max_duration_s * 1e9)
    stopped = "min_reached"
    while True:
        t0 = clock()
        out = infer(feed)
        t1 = clock()
        samples.append((t1 - t0) / 1e6)
        if out.components_ms:
            for k, v in out.components_ms.items():
                components.setdefault(k, []).append(float(v))
        elapsed = t1 - start
        n = len(samples)
        if n >= rule.min_samples and elapsed >= min_ns:
            break
        if n >= rule.max_samples:
            stopped = "max_samples"
            break
        if elapsed >= max_ns:
            stopped = "max_duration"
            break
    return samples, components, (clock() - start) / 1e9, stopped


def _warmup(backend: Backend, feed: dict[str, Any], rule: StopRule) -> list[float]:
    out: list[float] = []
    start = time.perf_counter_ns()
    limit = int(rule.warmup_s * 1e9)
    while len(out) < rule.warmup_min_iterations or time.perf_counter_ns() - start < limit:
        t0 = time.perf_counter_ns()
        backend.infer(feed)
        out.append((time.perf_counter_ns() - t0) / 1e6)
        if len(out) >= 10_000:
            break
    return out


def run_bench(backend: Backend, model_path: str, batch_sizes: Sequence[int] | None,
              shapes: dict[str, list[int]] | None = None, rule: StopRule | None = None,
              seed: int | None = 0, arrays: dict[str, np.ndarray] | None = None,
              values: dict[str, float | int | bool] | None = None, label: str | None = None,
              progress: bool = False, data_source: str = "--inputs data") -> BenchRun:
    """Measure ``backend`` at each batch size.

    Args:
        backend: an **activated** backend.
        model_path: recorded in the results.
        batch_sizes: batch sizes (each >= 1, run in the given order, duplicates removed);
            ``None`` runs once with the shapes as given (batch = axis 0 of the shapes).
        shapes: user shapes (``--shapes``); needed for dynamic dims other than batch.
        rule: warm-up and stopping rule (default :class:`StopRule`).
        seed: seed of generated input data.
        arrays, values: user input data (see :func:`trtcheck.load.inputs.make_feed`);
            ``arrays`` must fit the inputs as in ``trtcheck precision``
            (:func:`trtcheck.load.input_checks.check_data_fits`).
        data_source: how messages name ``arrays``, e.g. the ``.npz`` file name.
        label: run label in the results (default ``"<backend>-<precision>"``).
        progress: log one line per batch size (its median, p99 and run count) on the
            ``trtcheck.bench`` logger, which the CLI sends to stderr.

    Returns:
        a :class:`~trtcheck.results.BenchRun`.

    Raises:
        InputError: bad batch sizes or shapes (resolved before anything runs), a failed
            execution, or a batch that does not fit in memory.
    """
    rule = rule or StopRule()
    inputs = backend.input_specs()
    if arrays:
        from trtcheck.load.input_checks import check_data_fits

        check_data_fits(inputs, arrays, data_source, values)
    shapes = shapes_with_data(inputs, shapes, arrays, data_source)
    plan: list[tuple[int, dict[str, list[int]]]] = []
    if batch_sizes:
        seen: list[int] = []
        for b in batch_sizes:
            if not isinstance(b, int) or b < 1:
                raise InputError(f"batch sizes must be integers >= 1, got {b!r}")
            if b not in seen:
                seen.append(b)
        for b in seen:  # resolve all shapes first: fail before measuring anything
            plan.append((b, resolve_shapes(inputs, shapes, b)))
    else:
        resolved = resolve_shapes(inputs, shapes, None)
        first = next(iter(resolved.values()), [1])
        plan.append((int(first[0]) if first else 1, resolved))

    results: list[BatchResult] = []
    log = logging.getLogger("trtcheck.bench")
    for i, (b, shp) in enumerate(plan, 1):
        if progress:
            log.debug("bench: batch %d (%d/%d) starts", b, i, len(plan))
        try:
            feed = make_feed(inputs, shp, seed=seed, arrays=arrays, values=values)
            warm = _warmup(backend, feed, rule)
            samples, comps, duration, stopped = _time_loop(backend, feed, rule)
        except MemoryError:
            given = ",".join(f"{n}:{format_shape(d)}" for n, d in shp.items())
            raise InputError(f"batch size {b} with input shapes {given} does not fit in "
                             "memory", "use smaller --batch values or smaller --shapes"
                             ) from None
        st = summarize(samples)
        qps = 1000.0 / st.median_ms if st.median_ms > 0 else float("inf")
        results.append(BatchResult(
            batch_size=b, input_shapes=shp, samples_ms=samples, warmup_samples_ms=warm,
            components_ms=comps, stats=st,
            component_stats={k: summarize(v) for k, v in comps.items() if v},
            throughput_queries_per_s=qps, throughput_samples_per_s=qps * b,
            measured_duration_s=duration, stopped_by=stopped,
            warnings=stability_findings(samples, st, where=f"batch {b}")))
        if progress:
            log.info("bench: batch %d (%d/%d): median %.3f ms, p99 %.3f ms, %d runs in "
                     "%.1f s", b, i, len(plan), st.median_ms, st.p99_ms, st.count,
                     duration)
    base = next((r for r in results if r.batch_size == 1), None)
    if base is not None:
        for r in results:
            gain = r.throughput_samples_per_s / base.throughput_samples_per_s
            r.throughput_gain_vs_batch1 = gain
            r.scaling_efficiency = gain / r.batch_size
    info = backend.info
    settings = BenchSettings(
        warmup_s=rule.warmup_s, warmup_min_iterations=rule.warmup_min_iterations,
        min_duration_s=rule.min_duration_s, min_samples=rule.min_samples,
        max_duration_s=rule.max_duration_s, max_samples=rule.max_samples,
        batch_sizes=[b for b, _ in plan],
        input_source=("npz" if arrays else "values+random" if values else "random-uniform"),
        seed=seed, shapes=dict(shapes or {}))
    return BenchRun(label=label or f"{info.name}-{info.precision}", model_path=str(model_path),
                    backend=info, settings=settings, batches=results)
