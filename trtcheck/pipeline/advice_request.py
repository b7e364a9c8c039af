"""The request of ``trtcheck advise`` built from its parsed options
(:func:`advise_settings`), and the exports of the advice it returns
(:func:`export_advice`: settings for Triton, Ray Serve and TorchServe, and a Triton model
repository entry). The options are checked by the caller; this module prints nothing:
progress lines go to the ``log`` callback."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any


def advise_settings(*, load: Any, instances: list[int] | None, what_if: list[Any],
                    **settings: Any) -> Any:
    """The :class:`~trtcheck.pipeline.AdviseSettings` of one advice request.

    ``load`` is the parsed ``--load`` (:func:`trtcheck.measure.serving.parse_load`, or
    ``None``): a burst gives its size, a closed loop its clients and count (a loop with
    no COUNT: at least 20 requests per client); an open loop's rate is in ``settings``
    already. ``what_if`` configurations replace the instance search. ``settings`` are
    the other :class:`~trtcheck.pipeline.AdviseSettings` fields as they are.
    """
    from trtcheck.pipeline import AdviseSettings

    burst_size = closed_loop = None
    if load is not None and load.kind == "burst":
        burst_size = load.count
    elif load is not None and load.kind == "closed":
        from trtcheck.analyze.advice import CLOSED_LOOP_DEFAULT_REQUESTS, ClosedLoop

        count = load.count if load.count < 10**9 else max(
            CLOSED_LOOP_DEFAULT_REQUESTS, 20 * load.concurrency)
        closed_loop = ClosedLoop(load.concurrency, count)
    return AdviseSettings(instances=None if what_if else instances, what_if=what_if,
                          burst_size=burst_size, closed_loop=closed_loop, **settings)


def recorded_arrival_rate(results: Any, source: str) -> tuple[float, str] | None:
    """``(rate, note)``: the target rate a tune document recorded
    (``tune.arrival_rate_per_s``), the default of ``advise --from tune.json`` without
    ``--arrival-rate``, and the note the advice carries about it; ``None`` for any other
    document (its rate stays required)."""
    import math

    tune = getattr(results, "tune", None)
    if getattr(results, "kind", None) != "tune" or tune is None:
        return None
    rate = float(getattr(tune, "arrival_rate_per_s", 0.0) or 0.0)
    if not (math.isfinite(rate) and rate > 0):
        return None
    return rate, (f"arrival rate {rate:g} req/s: the tune search's target rate recorded in "
                  f"{source} (tune.arrival_rate_per_s), as no --arrival-rate was given")


def recorded_slo_p99_ms(results: Any, source: str) -> tuple[float, str] | None:
    """``(objective ms, note)``: the P99 objective a tune document recorded
    (``tune.slo_p99_ms``), the default of ``advise --from tune.json`` without
    ``--slo-p99-ms``, and the note the advice carries about it; ``None`` for any other
    document or a search without one."""
    import math

    tune = getattr(results, "tune", None)
    if getattr(results, "kind", None) != "tune" or tune is None:
        return None
    slo = getattr(tune, "slo_p99_ms", None)
    if slo is None or not (math.isfinite(float(slo)) and float(slo) > 0):
        return None
    return float(slo), (f"P99 objective {float(slo):g} ms: the tune search's recorded in "
                        f"{source} (tune.slo_p99_ms), as no --slo-p99-ms was given")


def recorded_objective(results: Any, source: str) -> tuple[str, str] | None:
    """``(objective name, note)``: the objective a tune document's search used
    (``tune.objective``), the default of ``advise --from tune.json`` without
    ``--objective``, and the note the advice carries about it; ``None`` for any other
    document or an objective this version does not know."""
    from trtcheck.analyze.objectives import OBJECTIVES

    tune = getattr(results, "tune", None)
    if getattr(results, "kind", None) != "tune" or tune is None:
        return None
    name = str(getattr(tune, "objective", "") or "")
    if name not in OBJECTIVES:
        return None
    return name, (f"objective {name}: the tune search's recorded in {source} "
                  "(tune.objective), as no --objective was given")


def recorded_instances(results: Any, source: str) -> tuple[list[int], str] | None:
    """``(instance counts, note)``: 1 to the search's ``tune.max_instances``, the default
    of ``advise --from tune.json`` without ``--instances`` (so the advice searches the
    counts the search did, its pick's among them); ``None`` for any other document."""
    tune = getattr(results, "tune", None)
    if getattr(results, "kind", None) != "tune" or tune is None:
        return None
    top = int(getattr(tune, "max_instances", 0) or 0)
    if top < 1:
        return None
    return list(range(1, top + 1)), (
        f"instance counts 1-{top}: the tune search's in {source} (tune.max_instances), as "
        "no --instances was given" if top > 1 else
        f"1 instance: the tune search's in {source} (tune.max_instances), as no "
        "--instances was given")


def recorded_defaults(results: Any, source: str, keys: list[str]
                      ) -> dict[str, tuple[Any, str]]:
    """The defaults a tune document gives ``advise --from`` for the options not given,
    ``keys`` among ``"arrival_rate"`` (:func:`recorded_arrival_rate`), ``"slo_p99_ms"``
    (:func:`recorded_slo_p99_ms`), ``"objective"`` (:func:`recorded_objective`) and
    ``"instances"`` (:func:`recorded_instances`): ``{key: (value, note)}`` for those the
    document records, in that order."""
    readers = {"arrival_rate": recorded_arrival_rate, "slo_p99_ms": recorded_slo_p99_ms,
               "objective": recorded_objective, "instances": recorded_instances}
    out: dict[str, tuple[Any, str]] = {}
    for key, read in readers.items():
        if key in keys and (got := read(results, source)) is not None:
            out[key] = got
    return out


def export_advice(adv: Any, results: Any, *, model: str | None, model_file: str | None,
                  name: str, device_kind: str | None, gpus: tuple[int, ...] | None,
                  torchserve_version: str, export_dir: str | None, overwrite: bool,
                  log: Callable[[str], None]) -> None:
    """Set ``adv.export`` (the recommendation's settings for Triton, Ray Serve and
    TorchServe, model ``name``) and, with ``export_dir``, write the Triton model
    repository entry ``export_dir/name/config.pbtxt`` (+ the model file).

    ``device_kind`` ``None``: as the results measured it. ``log`` gets one line per file
    written, and one when no model file was copied.
    """
    from trtcheck.export import device_kind_from_results, export_settings

    kind = device_kind or (device_kind_from_results(results) if results is not None
                           else None)
    spec = _export_spec(results, model, model_file, kind, gpus)
    adv.export = export_settings(adv.recommendation.prediction, name, kind, spec=spec,
                                 torchserve_version=torchserve_version,
                                 assessed_max_batch_size=max(adv.curve.points_ms, default=None))
    if export_dir is not None:
        _write_export_dir(export_dir, name, adv, spec, _export_model(model, model_file, results),
                          overwrite, log)


def _export_spec(results: Any, model: str | None, model_file: str | None,
                 kind: str | None, gpus: tuple[int, ...] | None) -> Any:
    """The Triton model spec of the exports: a live run's own configuration (backend,
    tensors, kind), else the model file's (ONNX tensors, plan platform), else settings
    only."""
    from dataclasses import replace

    from trtcheck.export import TritonModelSpec, live_config_from_results, model_spec

    live = live_config_from_results(results)
    if live is not None:
        return model_spec(None, device_kind=kind, gpus=gpus, live_config=live)
    path = _export_model(model, model_file, results)
    if path is not None and path.lower().endswith((".onnx", ".plan", ".engine", ".trt")):
        spec = model_spec(path, device_kind=kind, gpus=gpus)
        return replace(spec, device_kind=kind or spec.device_kind)
    return TritonModelSpec(device_kind=kind, gpus=gpus)


def _export_model(model: str | None, model_file: str | None, results: Any) -> str | None:
    """The model file to copy into ``--export-dir``: ``--model-file``, MODEL, or the
    model the results were measured with when that file is still there."""
    if model_file is not None:
        return model_file
    if model is not None:
        return model
    run = getattr(results, "primary_bench", None) or getattr(results, "serve", None)
    path = getattr(run, "model_path", None)
    if getattr(getattr(results, "serve", None), "live", None) is not None:
        return None  # a live server's model is on the server, not here
    return path if isinstance(path, str) and os.path.isfile(path) else None


def _write_export_dir(export_dir: str, name: str, adv: Any, spec: Any, model: str | None,
                      overwrite: bool, log: Callable[[str], None]) -> None:
    """Write the recommendation as ``export_dir/name/config.pbtxt`` (+ the model)."""
    from trtcheck.export import write_model_repository

    if model is not None and spec.backend == "python" and not model.endswith(".py"):
        model = None
    for path in write_model_repository(export_dir, name, adv.export.triton_config_pbtxt,
                                       model, spec.model_file, overwrite):
        log(f"wrote {path}")
    if model is None:
        log(f"no model file copied: put the model in {os.path.join(export_dir, name, '1')} as "
            f"{spec.model_file} (or pass --model-file)")
