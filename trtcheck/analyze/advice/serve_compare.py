"""Predicted vs measured: simulate each configuration a serving measurement ran.

For every open-loop configuration in the results' serve section, the simulator runs the
same window, max batch, instance count and arrival process (the same Poisson seed as
the load generator, so the very same arrival times) with the advice's service model,
and the two are put side by side (stored as ``advice.serve_predictions``). Burst
configurations are simulated as a burst (every request at t=0); closed-loop ones are
skipped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trtcheck.analyze.advice.curve import make_curve
from trtcheck.analyze.advice.simulator import ServiceModel, simulate
from trtcheck.arrivals import open_loop_offsets_s
from trtcheck.policy import BatchingPolicy
from trtcheck.results.advice import Advice, ServePrediction
from trtcheck.units import us_to_ms


def service_from_advice(adv: Advice) -> ServiceModel:
    """The service model the advice used (curve points, overheads; no raw spread)."""
    i = adv.inputs
    curve = make_curve(sorted(adv.curve.points_ms.items()), source=adv.curve.source)
    # the advice records given + mean measured excess; the excess can be negative when the
    # serving run's executions were faster than the bench medians (a disturbed bench)
    neg = min(0.0, i.per_batch_overhead_ms)
    return ServiceModel(curve, per_batch_overhead_ms=max(0.0, i.per_batch_overhead_ms),
                        batch_excess_ms=(neg,) if neg < 0 else (),
                        per_item_overhead_ms=i.per_item_overhead_ms,
                        per_request_overhead_ms=(0.0 if i.ingress_per_request_us > 0
                                                 else i.per_request_overhead_ms),
                        ingress_per_request_us=i.ingress_per_request_us,
                        timer_slack_us=i.timer_slack_us, spread="none")


def service_from_results(results: Any, adv: Advice) -> ServiceModel:
    """The service model the advice simulated, rebuilt from the results it was made from.

    When the advice was calibrated on the serve section of ``results``, the same
    calibration (measured per-execution excess and per-request delay distributions,
    interpreter-lock contention; :func:`trtcheck.analyze.advice.inputs.inputs_from_results`)
    and :func:`trtcheck.analyze.advice.advise.service_model` rebuild it, so the report's
    predicted-vs-measured table and the advice's candidates come from one model.
    Otherwise (given overheads, or a bench too disturbed to rebuild its T(b) from)
    :func:`service_from_advice`. Timer slack and per-item
    overhead come from the advice's inputs.
    """
    from trtcheck.analyze.advice.advise import service_model
    from trtcheck.analyze.advice.inputs import advice_inputs, build_request

    if adv.inputs.overheads_source == "given" or getattr(results, "serve", None) is None:
        return service_from_advice(adv)
    from trtcheck.errors import InputError

    try:
        curve, measured = advice_inputs(results)  # a live run: its server's statistics
    except InputError:
        # T(b) too disturbed to rebuild (the demo flattened it to advise at all): the
        # advice's own recorded overheads are the model it simulated
        return service_from_advice(adv)
    if not measured.get("batch_excess_ms") and \
            measured.get("calibrated_per_batch_overhead_ms") is None:
        return service_from_advice(adv)
    i = adv.inputs
    req = build_request(curve, measured, rate_per_s=i.arrival_rate_per_s,
                        per_item_overhead_ms=i.per_item_overhead_ms or None,
                        timer_slack_us=i.timer_slack_us or None)
    return service_model(req)


def open_loop_schedule(rate_per_s: float, count: int, arrival: str, seed: int) -> np.ndarray:
    """The load generator's open-loop send offsets (s), shape ``[count]``: the same
    function the load generator calls (:func:`trtcheck.arrivals.open_loop_offsets_s`)."""
    return open_loop_offsets_s(arrival, rate_per_s, count, seed)


def predict_serve_configs(results: Any, adv: Advice) -> list[ServePrediction]:
    """One :class:`~trtcheck.results.advice.ServePrediction` per open-loop or burst serve
    configuration of ``results``: measured and predicted QPS, mean batch, P50 and P99
    (ms), the prediction simulated with the arrival times the load generator used (a
    burst: every request at t=0, behind the run's serial front when it had one).
    Closed-loop configurations are skipped. ``[]`` without a serve section."""
    serve = getattr(results, "serve", None)
    if serve is None or not serve.configs:
        return []
    service = service_from_results(results, adv)
    run_inst = int(getattr(serve.settings, "instances", 1))
    seed = int(getattr(serve.settings, "seed", 0))
    rows = []
    for cfg in serve.configs:
        load = cfg.load
        burst = load.kind == "burst" and load.count >= 2
        if not burst and (load.kind != "open" or load.arrival not in ("poisson", "constant")):
            continue
        # a live sweep records each configuration's instance count
        inst = cfg.instances if cfg.instances is not None else run_inst
        arr = (np.zeros(load.count) if burst else  # a burst: every request at t=0
               open_loop_schedule(load.rate_per_s, load.count, load.arrival,
                                  seed + cfg.median_repeat))
        # a live run records the preferred sizes its server used per configuration
        pol = BatchingPolicy(max_batch_size=cfg.max_batch_size,
                             max_queue_delay_us=cfg.window_us,
                             preferred_batch_sizes=tuple(
                                 p for p in (cfg.preferred_batch_sizes or ())
                                 if p <= cfg.max_batch_size))
        p = simulate(pol, inst, service, arr, rate_per_s=None if burst else load.rate_per_s,
                     seed=seed + cfg.median_repeat, finite=burst)
        rows.append(ServePrediction(
            config=f"W={us_to_ms(cfg.window_us):g} ms B={cfg.max_batch_size}"
                   + (f" I={cfg.instances}" if cfg.instances is not None else ""),
            load=load.label,
            window_us=cfg.window_us, max_batch_size=cfg.max_batch_size, instances=inst,
            measured_throughput_queries_per_s=cfg.throughput_queries_per_s,
            predicted_throughput_queries_per_s=p.throughput_queries_per_s,
            measured_mean_batch=cfg.mean_batch_size, predicted_mean_batch=p.mean_batch,
            measured_p50_ms=cfg.p50_ms, predicted_p50_ms=p.p50_ms,
            measured_p99_ms=cfg.p99_ms, predicted_p99_ms=p.p99_ms))
    return rows
