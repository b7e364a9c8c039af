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
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trtcheck.backends.base import Backend
from trtcheck.errors import InputError, TrtcheckError
from trtcheck.load.inputs import make_feed
from trtcheck.load.shapes import kept_size_inputs, resolve_shapes, shapes_with_data
from trtcheck.measure.interrupt import interrupt_name
from trtcheck.measure.progress import ProgressCallback, begin_steps, step_done
from trtcheck.results.bench import BatchResult, BenchRun, BenchSettings, FailedBatch
from trtcheck.results.stats import Finding, LatencyStats
from trtcheck.stats import median_relative_halfwidth, stability_findings, summarize

#: Largest input read rate any single device reaches, bytes/s: twice the HBM bandwidth of
#: the fastest current accelerators (NVIDIA H200 4.8 TB/s, B200 8 TB/s). An execution
#: must read its inputs at least once, so ``input_bytes / median latency`` above this
#: means the backend returned before its work completed (e.g. an enqueue timed without
#: a synchronisation).
MAX_PLAUSIBLE_INPUT_BYTES_PER_S = 1.6e13

MIN_GPU_ROUND_TRIP_MS = 0.005
"""The shortest end-to-end execution a GPU run can time, ms (5 us): launching one kernel
and synchronising on its completion costs a few microseconds of driver and PCIe latency
each (NVIDIA documents kernel launch overheads of about 2-5 us, and a synchronisation
waits for the device to signal the host), so a median below it (the issue's 0.0033 ms)
timed an enqueue that returned before the work, not the work. Our floor, below every
real single-kernel round trip."""

#: Stability warnings that make a batch's numbers unfit to certify a budget.
_UNSTABLE_CODES = ("unstable-cv", "drift")

#: How runtimes word an allocation failure (ORT "Failed to allocate memory", CUDA
#: "out of memory" / cudaErrorMemoryAllocation, C++ std::bad_alloc, trtcheck's TensorRT
#: backend "does not fit in GPU memory").
_OOM_RE = re.compile(r"out of memory|does not fit in|memory allocation|failed to allocate|"
                     r"cudaerrormemoryallocation|bad_alloc|\boom\b", re.IGNORECASE)


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
        median_precision: once both minimums are reached, go on measuring until the
            95% interval of the median (:func:`trtcheck.stats.median_interval`) is within
            this share of the median (0.05: +-5%; 0 turns it off) ...
        precision_bound_s: ... but for at most this long in all (seconds, never beyond
            ``max_duration_s``): the stated time bound of the adaptive part.

    Raises:
        InputError: values out of range.
    """

    warmup_s: float = 0.5
    warmup_min_iterations: int = 3
    min_duration_s: float = 2.0
    min_samples: int = 50
    max_duration_s: float = 30.0
    max_samples: int = 100_000
    median_precision: float = 0.05
    precision_bound_s: float = 10.0

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
        if not (math.isfinite(self.median_precision) and 0 <= self.median_precision < 1) \
                or not (math.isfinite(self.precision_bound_s) and self.precision_bound_s >= 0):
            raise InputError("the median precision must be in [0, 1) and its time bound "
                             ">= 0 seconds")


_log = logging.getLogger("trtcheck.bench")


def _precise_enough(samples: list[float], target: float) -> bool:
    hw = median_relative_halfwidth(samples)
    return hw is not None and hw <= target


def _time_loop(backend: Backend, feed: dict[str, Any], rule: StopRule
               ) -> tuple[list[float], dict[str, list[float]], float, str]:
    """Time executions until the rule stops: both minimums reached and, when
    ``rule.median_precision > 0``, the median's interval that narrow, or the time bound
    of that adaptive part (``precision_bound_s``, at most ``max_duration_s``), or a
    maximum. ``stopped`` is ``min_reached``, ``precision_reached`` (extra samples made
    the median precise enough), ``precision_bound`` (the bound stopped it first),
    ``max_duration`` or ``max_samples``."""
    samples: list[float] = []
    components: dict[str, list[float]] = {}
    infer = backend.infer
    clock = time.perf_counter_ns
    start = clock()
    min_ns = int(rule.min_duration_s * 1e9)
    max_ns = int(rule.max_duration_s * 1e9)
    bound_ns = min(max_ns, int(max(rule.precision_bound_s, rule.min_duration_s) * 1e9))
    stopped = "min_reached"
    adaptive = False
    next_check = 0
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
            if rule.median_precision <= 0:
                break
            if n >= next_check:  # re-check every ~5% more samples: O(n log n) in all
                if _precise_enough(samples, rule.median_precision):
                    stopped = "precision_reached" if adaptive else "min_reached"
                    break
                adaptive = True
                next_check = n + max(1, n // 20)
            if elapsed >= bound_ns:
                stopped = ("precision_reached"
                           if _precise_enough(samples, rule.median_precision)
                           else "precision_bound")
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


def runs_on_gpu(info: Any) -> bool:
    """Whether a backend's :class:`~trtcheck.results.bench.BackendInfo` says it executes on
    a GPU: a TensorRT or TensorRT-RTX backend, a device named ``GPU ...``/``NVIDIA ...``,
    or a CUDA/TensorRT execution provider (ONNX Runtime)."""
    name = str(getattr(info, "name", "")).lower()
    device = str(getattr(info, "device", "")).strip().lower()
    providers = [str(p).lower() for p in (getattr(info, "providers", None) or [])]
    return (name in ("tensorrt", "tensorrt_rtx") or device.startswith(("gpu", "nvidia"))
            or any(p.startswith(("cudaexecution", "tensorrtexecution")) for p in providers[:1]))


def plausibility_findings(stats: LatencyStats, input_bytes: int,
                          component_stats: dict[str, LatencyStats], where: str,
                          gpu: bool = False) -> list[Finding]:
    """Validity marks of one batch size: latencies the work cannot be done in.

    Three rules, each needing no model knowledge: (1) the inputs must be read at least
    once, so ``input_bytes / median`` may not exceed
    :data:`MAX_PLAUSIBLE_INPUT_BYTES_PER_S`; (2) an execution timed end to end includes
    its GPU work, so its median may not be shorter than the median ``gpu_compute_ms`` the
    backend measured with CUDA events (10% + 0.01 ms margin for timer granularity);
    (3) on a GPU (``gpu``) the median may not be shorter than one kernel launch and
    synchronisation, :data:`MIN_GPU_ROUND_TRIP_MS` (ms).
    A zero median is implausible by either rule.

    Returns:
        ``implausible-latency`` error findings (empty when plausible).
    """
    out: list[Finding] = []
    med = stats.median_ms
    remedy = ("the backend probably returns before its work completes (an enqueue timed "
              "without a synchronisation): synchronise before returning from infer()")
    if med <= 0:
        out.append(Finding(code="implausible-latency", severity="error", where=where,
                           message=f"median latency {med:g} ms: no execution takes no time",
                           remedy=remedy))
        return out
    rate = input_bytes / (med / 1e3)
    if rate > MAX_PLAUSIBLE_INPUT_BYTES_PER_S:
        out.append(Finding(
            code="implausible-latency", severity="error", where=where,
            message=f"median {med:.4g} ms for {input_bytes:,} input bytes means reading "
                    f"{rate / 1e12:.3g} TB/s, beyond any device's memory "
                    f"({MAX_PLAUSIBLE_INPUT_BYTES_PER_S / 1e12:g} TB/s is twice the fastest)",
            remedy=remedy))
    if gpu and med < MIN_GPU_ROUND_TRIP_MS:
        out.append(Finding(
            code="implausible-latency", severity="error", where=where,
            message=f"median {med:.4g} ms on a GPU is shorter than one kernel launch and "
                    f"synchronisation ({MIN_GPU_ROUND_TRIP_MS:g} ms, the fastest physically "
                    "possible GPU round trip)",
            remedy=remedy))
    gpu_compute = component_stats.get("gpu_compute_ms")
    if gpu_compute is not None and gpu_compute.median_ms > med * 1.1 + 0.01:
        out.append(Finding(
            code="implausible-latency", severity="error", where=where,
            message=f"median end-to-end latency {med:.4g} ms is shorter than the GPU compute "
                    f"time {gpu_compute.median_ms:.4g} ms the same executions took",
            remedy=remedy))
    return out


_BYTES_RE = re.compile(r"(?<![\d.])(\d{4,})(?:\s*bytes)?(?![\d.])")
#: Failure messages are kept to this many characters (one line in a table).
FAILURE_MESSAGE_CHARS = 300


def _failure_row(b: int, shp: dict[str, list[int]], exc: BaseException) -> FailedBatch:
    """The row of a batch size that could not run. The whole message is searched for an
    allocation failure (:data:`_OOM_RE`) and for the byte count it asked for before it is
    cut to :data:`FAILURE_MESSAGE_CHARS` (ONNX Runtime's "Failed to allocate memory for
    requested buffer of size 68719476736" comes after a long stack of context); the
    byte count is kept in ``requested_bytes`` and in the message."""
    full = (exc.message if isinstance(exc, TrtcheckError) else
            str(exc) or type(exc).__name__)
    full = " ".join(full.split())
    oom = isinstance(exc, MemoryError) or _OOM_RE.search(full) is not None
    requested = None
    if oom:
        m = _OOM_RE.search(full)
        tail = full[m.start():] if m else full
        sizes = [int(x) for x in _BYTES_RE.findall(tail)]
        requested = max(sizes) if sizes else None
    msg = full[:FAILURE_MESSAGE_CHARS]
    if requested is not None and str(requested) not in msg:
        msg = (f"{msg[:FAILURE_MESSAGE_CHARS - 60]} ... requested {requested:,} bytes "
               f"({requested / 2**30:.3g} GiB)")
    if isinstance(exc, MemoryError):
        msg = "host memory allocation failed (MemoryError)" + (f": {msg}" if str(exc) else "")
    return FailedBatch(batch_size=b, input_shapes=shp,
                       reason="out-of-memory" if oom else "failed", message=msg,
                       requested_bytes=requested)


def random_control_inputs(inputs: Sequence[Any], values: dict[str, Any] | None,
                          arrays: dict[str, Any] | None) -> list[str]:
    """Integer inputs of one element (rank 0 or all dims 1: a sample rate, a length, a
    flag) that neither ``values`` (``--input-value``) nor ``arrays`` (``--inputs``) feed:
    generated data gives them 0 or 1 at random."""
    out = []
    for t in inputs:
        if t.name in (values or {}) or t.name in (arrays or {}):
            continue
        shape = list(getattr(t, "shape", []) or [])
        if not str(getattr(t, "dtype", "")).startswith(("int", "uint")):
            continue
        if getattr(t, "rank_known", True) and all(isinstance(d, int) and d == 1
                                                   for d in shape):
            out.append(t.name)
    return out


def run_bench(backend: Backend, model_path: str, batch_sizes: Sequence[int] | None,
              shapes: dict[str, list[int]] | None = None, rule: StopRule | None = None,
              seed: int | None = 0, arrays: dict[str, np.ndarray] | None = None,
              values: dict[str, float | int | bool] | None = None, label: str | None = None,
              progress: bool | ProgressCallback | None = False,
              data_source: str = "--inputs data") -> BenchRun:
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
        progress: a progress callback (:mod:`trtcheck.measure.progress`: one step per
            batch size, its line the median, p99 and run count), or ``True`` to log those
            lines on the ``trtcheck.bench`` logger, which the CLI sends to stderr.

    Returns:
        a :class:`~trtcheck.results.BenchRun`. A batch size that runs out of memory or
        whose execution fails becomes a :class:`~trtcheck.results.bench.FailedBatch`
        row and the sweep goes on. On :class:`KeyboardInterrupt` (Ctrl-C, or SIGTERM
        under :func:`~trtcheck.measure.interrupt.sigterm_as_interrupt`) the batch sizes
        finished are returned with ``incomplete`` set; the one running is dropped.

    Raises:
        InputError: bad batch sizes or shapes (resolved before anything runs), or every
            batch size failed (the first failure, "out of memory at batch N" for an
            allocation failure).
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

    control = random_control_inputs(inputs, values, arrays)
    results: list[BatchResult] = []
    failed: list[FailedBatch] = []
    first_error: BaseException | None = None
    incomplete: str | None = None
    emit: ProgressCallback | None = (
        progress if callable(progress)
        else (lambda line: _log.info("%s", line)) if progress else None)
    begin_steps(emit, len(plan), "batch size", "bench")
    try:
        for i, (b, shp) in enumerate(plan, 1):
            if progress:
                _log.debug("bench: batch %d (%d/%d) starts", b, i, len(plan))
            try:
                feed = make_feed(inputs, shp, seed=seed, arrays=arrays, values=values)
                warm = _warmup(backend, feed, rule)
                samples, comps, duration, stopped = _time_loop(backend, feed, rule)
            except (MemoryError, TrtcheckError) as exc:
                first_error = first_error or exc
                row = _failure_row(b, shp, exc)
                kept = kept_size_inputs(inputs, shp, b)
                if kept and row.reason == "failed":
                    row.message = (f"{row.message[:FAILURE_MESSAGE_CHARS - 80]} (inputs that "
                                   f"kept their size at batch {b}: {', '.join(kept[:4])}; a "
                                   "state's batch axis may not be axis 0: give its shape "
                                   "per batch with --shapes)")
                failed.append(row)
                _log.warning("warning: batch %d %s, the sweep goes on: %s", b,
                             "ran out of memory" if row.reason == "out-of-memory"
                             else "could not run", row.message)
                step_done(emit, f"bench: batch {b} ({i}/{len(plan)}): failed")
                continue
            st = summarize(samples)
            qps = 1000.0 / st.median_ms if st.median_ms > 0 else float("inf")
            nbytes = int(sum(getattr(a, "nbytes", 0) for a in feed.values()))
            comp_stats = {k: summarize(v) for k, v in comps.items() if v}
            warnings = stability_findings(samples, st, where=f"batch {b}")
            warnings += [Finding(
                code="random-control-input", severity="warning", where=f"batch {b}",
                message=f"input {name!r} is an integer scalar (a rate, length, count or flag?) "
                        "fed a random 0 or 1: these timings may measure a degenerate run",
                remedy=f"give its real value: --input-value {name}=VALUE (e.g. "
                       f"{name}=16000 for a sample rate), or --inputs data.npz")
                for name in control]
            validity = plausibility_findings(st, nbytes, comp_stats, f"batch {b}",
                                             gpu=runs_on_gpu(backend.info))
            unstable = [w for w in warnings if w.code in _UNSTABLE_CODES]
            if unstable:
                validity.append(Finding(
                    code="unstable", severity="warning", where=f"batch {b}",
                    message="; ".join(w.message for w in unstable),
                    remedy=unstable[0].remedy))
            results.append(BatchResult(
                batch_size=b, input_shapes=shp, samples_ms=samples, warmup_samples_ms=warm,
                components_ms=comps, stats=st,
                component_stats=comp_stats,
                throughput_queries_per_s=qps, throughput_samples_per_s=qps * b,
                measured_duration_s=duration, stopped_by=stopped,
                warnings=warnings, first_call_ms=warm[0] if warm else None,
                input_bytes=nbytes, validity=validity))
            step_done(emit, f"bench: batch {b} ({i}/{len(plan)}): median {st.median_ms:.3f} "
                            f"ms, p99 {st.p99_ms:.3f} ms, {st.count} runs in {duration:.1f} s")
    except KeyboardInterrupt as exc:
        done = len(results) + len(failed)
        incomplete = (f"interrupted by {interrupt_name(exc)} at batch {plan[done][0]}: "
                      f"{len(results)} of {len(plan)} batch size(s) measured")
    if not results and first_error is not None and incomplete is None:
        row = failed[0]
        if row.reason == "out-of-memory":
            tried = " ".join(f"{k}:{'x'.join(map(str, v))}"
                             for k, v in row.input_shapes.items())
            raise InputError(f"out of memory at batch {row.batch_size}: {row.message}",
                             "use smaller --batch values, or smaller dynamic dims in "
                             f"--shapes (tried {tried}); `trtcheck inspect` estimates the "
                             "memory a batch needs") from None
        raise first_error
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
        median_precision=rule.median_precision, precision_bound_s=rule.precision_bound_s,
        batch_sizes=[b for b, _ in plan],
        input_source=("npz" if arrays else "values+random" if values else "random-uniform"),
        seed=seed, shapes=dict(shapes or {}))
    return BenchRun(label=label or f"{info.name}-{info.precision}", model_path=str(model_path),
                    backend=info, settings=settings, batches=results, failed_batches=failed,
                    incomplete=incomplete,
                    first_call_ms=results[0].first_call_ms if results else None)
