"""trtcheck's public Python API: the commands as functions that return the results model.

Each function does what its command does, without printing or writing anything unless
it is asked to (``report`` writes its folder), and returns the records the command's
``--format json`` prints: :class:`~trtcheck.results.Results` (``bench``, ``serve``,
``report``, ``load``), :class:`~trtcheck.results.advice.Advice` (``advise``),
:class:`~trtcheck.results.inspection.ModelInspection` or
:class:`~trtcheck.results.engine.EngineInspection` (``inspect``),
:class:`~trtcheck.analyze.gate.GateReport` (``gate``) and
:class:`~trtcheck.analyze.compare.Comparison` (``compare``). Every one is a pydantic
model: ``.model_dump_json()`` gives the JSON of the matching ``trtcheck schema KIND``.

Stability: the names in :data:`__all__`, their parameters and the fields of what they
return follow the results schema's versions (docs/results-schema.md, docs/api.md):
within a MAJOR version parameters and fields are only added (keyword-only, with
defaults); a removal or a change of meaning comes with a MAJOR version. Everything else
in the package (``trtcheck.pipeline``, ``trtcheck.measure`` ...) is internal and may
change in any release.

Errors are the typed errors of :mod:`trtcheck.errors` (each with the command line's exit
code in ``exit_code``): :class:`~trtcheck.errors.InputError` for bad input,
:class:`~trtcheck.errors.EnvironmentProblem` for a missing runtime; ``gate`` does not
raise on a failed check (read ``GateReport.passed`` / ``exit_code``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PathLike = str | os.PathLike[str]

from trtcheck.measure.serving import DynamicBatcher
from trtcheck.policy import BatchingPolicy

__all__ = ["BatchingPolicy", "DynamicBatcher", "advise", "bench", "compare", "gate",
           "inspect", "load", "report", "serve"]
"""The public names (also re-exported by the package root, ``trtcheck.__all__``):
the functions below, and the embedded dynamic batcher with its dispatch policy
(:class:`~trtcheck.measure.serving.DynamicBatcher`,
:class:`~trtcheck.policy.BatchingPolicy`) for use inside a service."""
# `tune` joins these when the tune command lands: one function here returning its
# results document, and one name in __all__ (and in trtcheck.__all__).


def _results(source: Any) -> Any:
    """A Results model, from itself or from a file (results.json, a report folder, a
    perf_analyzer CSV, a Triton statistics dump)."""
    from trtcheck.results import Results

    if isinstance(source, Results):
        return source
    return load(source)


def load(path: PathLike) -> Any:
    """Read a results document: a ``results.json``, a report folder (its results.json),
    a perf_analyzer CSV (``perf_analyzer -f``) or a Triton statistics dump
    (``GET /v2/models/NAME/stats``), as ``report --from``, ``gate`` and ``compare`` do.

    Returns:
        :class:`~trtcheck.results.Results`; fields of a newer MINOR version are dropped
        with a note on the ``trtcheck.results`` logger.

    Raises:
        InputError: missing, unreadable or malformed; SchemaError: another MAJOR version
            or fields of the wrong type.
    """
    from trtcheck.results.documents import load_results_input

    return load_results_input(str(path), option="path")


def inspect(model: PathLike | Sequence[PathLike], *,
            shapes: Mapping[str, Sequence[int]] | None = None) -> Any:
    """Inspect an ONNX model, a TensorRT plan, or trtexec exports (``trtcheck inspect``).

    Args:
        model: an ``.onnx`` file; a plan (``.plan``/``.engine``/``.trt``); a folder of
            trtexec exports, or a list of the export files of one engine.
        shapes: concrete sizes of dynamic ONNX inputs (``{"x": [1, 3, 224, 224]}``),
            for the MACs estimate and the lints.

    Returns:
        :class:`~trtcheck.results.inspection.ModelInspection` (ONNX) or
        :class:`~trtcheck.results.engine.EngineInspection`.

    Raises:
        InputError: not found, not a model, or bad shapes.
    """
    if not isinstance(model, (str, os.PathLike)):
        from trtcheck.backends.tensorrt import inspect_plan_on_gpu
        from trtcheck.inspection.engine import inspect_engine_path

        return inspect_engine_path([Path(p) for p in model], load_engine=inspect_plan_on_gpu)
    p = Path(model)
    from trtcheck.inspection.engine import is_engine_input

    if p.suffix.lower() in (".plan", ".engine", ".trt", ".json") or \
            (p.is_dir() and is_engine_input(p)):
        from trtcheck.backends.tensorrt import inspect_plan_on_gpu
        from trtcheck.inspection.engine import inspect_engine_path

        return inspect_engine_path(p, load_engine=inspect_plan_on_gpu)
    from trtcheck.inspection.onnx import inspect_onnx

    return inspect_onnx(p, {k: list(v) for k, v in shapes.items()} if shapes else None)


def _run_options(batch_sizes: Sequence[int] | None, shapes: Mapping[str, Sequence[int]] | None,
                 backend: str | None, providers: Sequence[str] | None, threads: int | None,
                 warmup_s: float | None, min_duration_s: float | None,
                 min_samples: int | None, max_duration_s: float | None, seed: int) -> Any:
    from trtcheck.measure.bench import RunOptions, rule_from_options

    return RunOptions(batch_sizes=list(batch_sizes) if batch_sizes else None,
                      shapes={k: list(v) for k, v in (shapes or {}).items()},
                      backend_name=backend,
                      backend_options={"providers": list(providers) if providers else None,
                                       "threads": threads}, seed=seed,
                      rule=rule_from_options(warmup_s, min_duration_s, min_samples,
                                             max_duration_s))


def bench(model: PathLike, *, batch_sizes: Sequence[int] | None = None,
          shapes: Mapping[str, Sequence[int]] | None = None, backend: str | None = None,
          providers: Sequence[str] | None = None, threads: int | None = None,
          warmup_s: float | None = None, min_duration_s: float | None = None,
          min_samples: int | None = None, max_duration_s: float | None = None,
          seed: int = 0) -> Any:
    """Measure latency and throughput per batch size (``trtcheck bench``).

    Args:
        model: an ONNX model or a TensorRT plan.
        batch_sizes: e.g. ``[1, 8]`` (axis 0 of every input whose axis 0 is dynamic);
            ``None``: batch 1.
        shapes: concrete sizes for other dynamic dims.
        backend: ``"onnxruntime"`` or ``"tensorrt"`` (``None``: from the file).
        providers, threads: ONNX Runtime execution providers and intra-op threads.
        warmup_s, min_duration_s, min_samples, max_duration_s: the stopping rule
            (``None``: the command's defaults), seconds and samples.
        seed: seed of the generated inputs.

    Returns:
        :class:`~trtcheck.results.Results` with one bench run (``results.bench[0]``: raw
        samples in ms, statistics, findings).

    Raises:
        InputError, EnvironmentProblem: as the command.
    """
    from trtcheck.analyze.derived import add_enqueue_bound_findings
    from trtcheck.load.model_file import check_model_path
    from trtcheck.measure.bench import bench_model, new_results

    check_model_path(str(model))
    opts = _run_options(batch_sizes, shapes, backend, providers, threads, warmup_s,
                        min_duration_s, min_samples, max_duration_s, seed)
    run = bench_model(str(model), opts)
    results = new_results(["trtcheck.api.bench", str(model)])
    results.bench.append(run)
    results.incomplete = run.incomplete
    add_enqueue_bound_findings(results)
    return results


def serve(model: Any, *, windows_ms: Sequence[float] = (0.0, 2.0),
          max_batch_sizes: Sequence[int] = (1, 8), loads: Sequence[str] = ("burst:64",),
          repeats: int = 1, instances: int = 1, duration_s: float = 2.0,
          shapes: Mapping[str, Sequence[int]] | None = None, backend: str | None = None,
          payload: Any = None, seed: int = 0) -> Any:
    """Measure the model behind the embedded dynamic batcher (``trtcheck serve``).

    Args:
        model: an ONNX model or a TensorRT plan, or a function ``fn(batch) -> outputs``
            (sync or ``async``; the batch is the requests' ``payload`` stacked on axis 0
            for dicts of arrays and arrays, else a list; outputs one row or item per
            request).
        windows_ms: batching windows, ms (Triton ``max_queue_delay_microseconds`` / 1000).
        max_batch_sizes: Triton ``max_batch_size`` values.
        loads: load specs: ``burst:N``, ``closed:C[:COUNT]``,
            ``open:RATE[:poisson|constant][:COUNT]``, ``trace:PATH``.
        repeats: runs per configuration (headline = median).
        instances: concurrent execution instances.
        duration_s: bound on each run's sending time, s.
        shapes: concrete sizes of dynamic dims (axis 0 of batched inputs must be 1).
        backend: ``"onnxruntime"`` or ``"tensorrt"`` (``None``: from the file).
        payload: one request's payload (required for a function; a model file gets
            generated inputs by default).
        seed: Poisson and input seed.

    Returns:
        :class:`~trtcheck.results.Results` with ``results.serve`` (every configuration,
        raw per-request latencies in ms).

    Raises:
        InputError, EnvironmentProblem: as the command.
    """
    from trtcheck.backends.registry import open_backend
    from trtcheck.load.model_file import check_model_path
    from trtcheck.measure.serving import parse_load
    from trtcheck.measure.bench import new_results
    from trtcheck.measure.serving import measure_serving
    from trtcheck.units import ms_to_us

    for spec in loads:
        parse_load(spec, duration_s)  # every load checked before anything runs
    if callable(model):
        target, label = model, getattr(model, "__name__", "function")
    else:
        check_model_path(str(model))
        target, label = open_backend(str(model), backend), str(model)
    extra = {"payload": payload} if payload is not None else {}
    run = measure_serving(target, windows_us=[ms_to_us(w) for w in windows_ms],
                          max_batch_sizes=list(max_batch_sizes), loads=list(loads),
                          repeats=repeats, instances=instances, max_duration_s=duration_s,
                          shapes={k: list(v) for k, v in shapes.items()} if shapes else None,
                          seed=seed, model_path=label, **extra)
    results = new_results(["trtcheck.api.serve", label])
    results.serve = run
    results.incomplete = run.incomplete
    return results


def advise(source: Any, *, arrival_rate_per_s: float, slo_p99_ms: float | None = None,
           per_request_overhead_ms: float | None = None,
           per_batch_overhead_ms: float | None = None,
           instances: Sequence[int] | None = None, seed: int = 0, replicas: int = 12,
           model_name: str | None = None) -> Any:
    """Batching advice: window, max batch and instances (``trtcheck advise``), with the
    settings for Triton, Ray Serve and TorchServe in ``advice.export``.

    Args:
        source: where T(b) comes from: a :class:`~trtcheck.results.Results` or a file
            :func:`load` reads (a bench or serve results.json, a live Triton run, a Triton
            statistics dump), or a latency curve ``{batch_size: T_ms}``.
        arrival_rate_per_s: Poisson arrival rate, requests/s (> 0).
        slo_p99_ms: P99 latency objective, ms.
        per_request_overhead_ms, per_batch_overhead_ms: serving costs, ms (``None``: as
            measured in the source, else 0).
        instances: instance counts to search (``None``: as many as needed).
        seed, replicas: simulation seed and bootstrap replicas of the choice.
        model_name: the name in the exported settings (default: from the source).

    Returns:
        :class:`~trtcheck.results.advice.Advice`.

    Raises:
        InputError: the source holds no T(b) (what it lacks is named), bad numbers.
    """
    from trtcheck.export import check_model_name, device_kind_from_results, export_settings
    from trtcheck.pipeline import AdviseSettings, advise_from_source

    settings = AdviseSettings(rate_per_s=arrival_rate_per_s, slo_p99_ms=slo_p99_ms,
                              per_request_overhead_ms=per_request_overhead_ms,
                              per_batch_overhead_ms=per_batch_overhead_ms,
                              instances=list(instances) if instances else None, seed=seed,
                              replicas=replicas)
    if isinstance(source, Mapping):
        from trtcheck.analyze.advice import make_curve

        curve = make_curve(sorted((int(b), float(t)) for b, t in source.items()),
                           source="trtcheck.api.advise curve")
        outcome = advise_from_source(settings, curve=curve)
    else:
        results = _results(source)
        outcome = advise_from_source(settings, results=results,
                                     results_source=str(source) if not hasattr(
                                         source, "model_dump") else "results")
    adv = outcome.advice
    name = check_model_name(model_name) if model_name else outcome.model_name
    kind = device_kind_from_results(outcome.results) if outcome.results is not None else None
    adv.export = export_settings(adv.recommendation.prediction, name, kind,
                                 assessed_max_batch_size=max(adv.curve.points_ms,
                                                             default=None))
    return adv


def report(source: Any, output: PathLike, *, overwrite: bool = False,
           arrival_rate_per_s: float | None = None, slo_p99_ms: float | None = None,
           batch_sizes: Sequence[int] | None = None, serve: bool = False,
           precisions: Sequence[str] = (), warmup_s: float | None = None,
           min_duration_s: float | None = None, min_samples: int | None = None,
           seed: int = 0) -> Any:
    """Write a report folder (report.html, report.md, charts, results.json), as
    ``trtcheck report``.

    Args:
        source: a model to inspect and measure (an ``.onnx`` file or a plan), or results
            (a :class:`~trtcheck.results.Results`, or a file :func:`load` reads) to
            report without measuring (``report --from``).
        output: the report folder (refused when it holds a report, unless ``overwrite``).
        arrival_rate_per_s, slo_p99_ms: add batching advice for this load.
        batch_sizes, serve, precisions, seed: what to measure for a model (batch sweep,
            the serving sweep, e.g. ``precisions=("fp16",)``); not with results.
        warmup_s, min_duration_s, min_samples: the bench stopping rule (``None``: the
            command's defaults).

    Returns:
        the :class:`~trtcheck.results.Results` written (with its verdict).

    Raises:
        InputError: the folder cannot take a report, bad input; UsageError: measuring
            options with results.
    """
    from trtcheck.errors import UsageError
    from trtcheck.pipeline import measure_report, report_from_results
    from trtcheck.results import Results

    is_model = not isinstance(source, Results) and Path(source).suffix.lower() in (
        ".onnx", ".plan", ".engine", ".trt")
    if not is_model:
        if batch_sizes or serve or precisions or any(
                v is not None for v in (warmup_s, min_duration_s, min_samples)):
            raise UsageError("batch_sizes, serve, precisions and the stopping rule measure "
                             "a model; the source is results", "pass a model path to "
                             "measure it")
        results = _results(source)
        report_from_results(results, str(output), overwrite=overwrite,
                            arrival_rate_per_s=arrival_rate_per_s, slo_p99_ms=slo_p99_ms)
        return results
    opts = _run_options(batch_sizes, None, None, None, None, warmup_s, min_duration_s,
                        min_samples, None, seed)
    run = measure_report(str(source), opts, str(output), overwrite=overwrite, serve=serve,
                         precisions=tuple(precisions), arrival_rate_per_s=arrival_rate_per_s,
                         slo_p99_ms=slo_p99_ms)
    return run.results


def gate(results: Any, policy: PathLike, *, baseline: Any = None) -> Any:
    """Check results against a YAML policy and a baseline (``trtcheck gate``).

    Args:
        results: a :class:`~trtcheck.results.Results` or a file :func:`load` reads.
        policy: the YAML policy file (docs/gate.md).
        baseline: results of the engine in production, for the policy's baseline rules.

    Returns:
        :class:`~trtcheck.analyze.gate.GateReport` (``passed``, ``exit_code``:
        0 pass, 1 a check failed, 3 the environments differ and the policy fails on it;
        every check). A failed check is not raised.

    Raises:
        PolicyError: a bad policy; InputError: unreadable results.
    """
    from trtcheck.analyze.gate import evaluate
    from trtcheck.analyze.gate import load_policy

    res = _results(results)
    base = _results(baseline) if baseline is not None else None
    return evaluate(load_policy(str(policy)), res, base,
                    results_name=str(results) if not hasattr(results, "model_dump")
                    else "results",
                    baseline_name=None if baseline is None else (
                        str(baseline) if not hasattr(baseline, "model_dump") else "baseline"))


def compare(a: Any, b: Any, *, confidence: float = 0.95, run_to_run_cv: float = 0.01,
            seed: int = 0, run_a: str | None = None, run_b: str | None = None) -> Any:
    """Compare results A (reference) and B side by side (``trtcheck compare``).

    Args:
        a, b: :class:`~trtcheck.results.Results` or files :func:`load` reads.
        confidence: two-sided level of the ratio intervals, in (0.5, 1).
        run_to_run_cv: assumed run-to-run variation (fraction) folded into the intervals.
        seed: bootstrap seed.
        run_a, run_b: compare only these bench runs (labels).

    Returns:
        :class:`~trtcheck.analyze.compare.Comparison`.
    """
    from trtcheck.analyze.compare.compare import compare as compare_results

    ra, rb = _results(a), _results(b)
    name = (lambda x, d: str(x) if not hasattr(x, "model_dump") else d)
    return compare_results(ra, rb, name_a=name(a, "A"), name_b=name(b, "B"),
                           confidence=confidence, seed=seed, run_to_run_cv=run_to_run_cv,
                           run_a=run_a, run_b=run_b)
