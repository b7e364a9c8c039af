"""The runs of ``trtcheck serve``: a model or a synthetic T(b) behind the embedded dynamic
batcher (:func:`serve_embedded`), and what a live run needs before it starts
(:func:`live_inputs`) and how its fault is reported (:func:`live_fault_error`). The
options are checked by the caller; this module prints nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def _shape_map(shapes: Sequence[str]) -> dict[str, list[int]] | None:
    if not shapes:
        return None
    from trtcheck.load.shapes import parse_shapes

    return parse_shapes(list(shapes))


def serve_embedded(model: str | None, synthetic_curve: str | None, *, spread: float,
                   synthetic_mode: str, per_request_overhead_ms: float,
                   backend_name: str | None, providers: list[str] | None,
                   threads: int | None, shapes: Sequence[str], seed: int,
                   windows_us: list[float], max_batch_sizes: list[int], loads: list[str],
                   repeats: int, preferred_batch_sizes: list[int], instances: int,
                   max_queue_size: int, on_full: str, http: bool, use_uvloop: bool,
                   max_duration_s: float, drain_timeout_s: float, late_threshold_ms: float,
                   warmup_requests: int, progress: Any, log: Callable[[str], None]) -> Any:
    """Measure ``model`` (or a synthetic backend following ``synthetic_curve``, ``B:MS``
    points) behind the embedded batcher: every window (us) x max batch x load shape,
    ``repeats`` times (:func:`trtcheck.measure.serving.measure_serving`).

    ``shapes`` (``NAME:DIMS``) are one request's shapes, checked before any measurement
    (one sample per request). ``log`` gets one line before the sweep.

    Returns:
        The :class:`~trtcheck.results.ServeRun` of the sweep.

    Raises:
        InputError: a decreasing synthetic curve, a bad model or request shapes.
    """
    from trtcheck.load.model_file import check_model_path
    from trtcheck.measure.serving import measure_serving

    shape_map = _shape_map(shapes)
    if synthetic_curve is not None:
        from trtcheck.analyze.advice import check_monotone
        from trtcheck.backends.synthetic import SyntheticBackend, parse_curve

        # the same shape rule as advise --latency-curve: T(b) must not decrease with b
        check_monotone(parse_curve(synthetic_curve).items(), source="--synthetic-curve")
        backend: Any = SyntheticBackend(synthetic_curve, spread=spread, seed=seed,
                                        per_request_overhead_ms=per_request_overhead_ms,
                                        mode=synthetic_mode)
        target_desc = f"synthetic T(b) {synthetic_curve}"
    else:
        from trtcheck.backends.registry import backend_kwargs, open_backend

        assert model is not None
        check_model_path(model)
        kwargs = backend_kwargs(model, backend_name, {"providers": providers,
                                                      "threads": threads})
        backend = open_backend(model, backend_name, **kwargs)
        target_desc = model
    activated_here = False
    if shape_map is not None:
        # before any measurement: one sample per request (axis 0 = 1), never a silent 1
        from trtcheck.measure.serving import request_shapes

        if not backend.is_active:
            backend.activate()
            activated_here = True
        try:
            request_shapes(backend, shape_map)
        except BaseException:
            if activated_here:
                backend.deactivate()
            raise
    n = len(windows_us) * len(max_batch_sizes) * len(loads)
    log(f"serving {target_desc}: {n} configuration(s) x {repeats} repeat(s) ...")
    try:
        return measure_serving(
            backend, use_uvloop=use_uvloop, windows_us=windows_us,
            max_batch_sizes=max_batch_sizes, loads=loads, repeats=repeats,
            preferred_batch_sizes=preferred_batch_sizes, instances=instances,
            max_queue_size=max_queue_size, on_full=on_full,
            per_request_overhead_ms=per_request_overhead_ms, http=http,
            max_duration_s=max_duration_s, drain_timeout_s=drain_timeout_s,
            late_threshold_ms=late_threshold_ms, warmup_requests=warmup_requests, seed=seed,
            shapes=shape_map, model_path=target_desc, progress=progress)
    finally:
        if activated_here:
            backend.deactivate()


def live_inputs(endpoint: Any, shapes: Sequence[str], inputs_npz: str | None
                ) -> tuple[dict[str, list[int]] | None, dict[str, Any] | None]:
    """What a live run sends, read before any work: the request shapes (``NAME:DIMS``)
    and the tensors of ``inputs_npz`` (finite values), after checking that the client
    library of ``endpoint``'s protocol is installed.

    Returns:
        ``(shapes by input name or None, arrays by input name or None)``.

    Raises:
        InputError: bad shapes, an unreadable .npz or non-finite data.
        EnvironmentProblem: the target's client library is missing.
    """
    from trtcheck.measure.serving.live import check_target_client

    shape_map = _shape_map(shapes)
    arrays = None
    if inputs_npz:
        from trtcheck.load.input_checks import check_finite_data
        from trtcheck.load.inputs import load_npz

        arrays = load_npz(inputs_npz)
        check_finite_data(arrays, inputs_npz)
    check_target_client(endpoint)  # the client library present, before any work
    return shape_map, arrays


def live_fault_error(run: Any, output: str | None) -> Any:
    """The :class:`~trtcheck.errors.EnvironmentProblem` (exit 3) of a live run that a
    server fault broke, or ``None`` when it did not break; the message says where the
    finished configurations went (``output``, or printed)."""
    from trtcheck.errors import EnvironmentProblem
    from trtcheck.measure.serving.live import run_fault

    if (fault := run_fault(run)) is None:
        return None
    kept = (f"{len(run.configs)} finished configuration(s) written to {output}"
            if output else f"{len(run.configs)} finished configuration(s) printed")
    return EnvironmentProblem(f"the run broke: {fault}",
                              f"{kept}, marked invalid; check the server, then run again")
