"""What-if predictions of a live-Triton calibration with prediction intervals, and T(b)
at instance counts the calibration did not run.

Instances of one model that share a device contend for it (the cores of a CPU host,
one GPU): T(b) measured at ``n_cal`` instances does not hold at another count. Without a
calibration at that count, a what-if at ``n`` instances multiplies T(b) by
``(1 + k log2 n) / (1 + k log2 n_cal)`` with the assumed ``k`` of
:data:`trtcheck.analyze.tune_plan.ASSUMED_CONTENTION_PER_INSTANCE` (0.25 per doubling:
2 instances of eager ResNet-18 on one H200 ran each batch 1.1-1.3x slower, 4 instances
1.1-1.37x), says so in
a note naming the factor, and widens the interval by
:data:`~trtcheck.analyze.tune_plan.ASSUMED_CONTENTION_REL`. ``trtcheck tune`` measures
the factor instead.

The interval formula is :func:`trtcheck.analyze.tune_plan.interval` (docs/advise.md,
"Prediction intervals"), as ``trtcheck tune`` applies it: for a measurement as long as
one repeat of the calibration run, with the P50 and P99 run-to-run spreads of its
repeats and their halves (:func:`trtcheck.analyze.tune_plan.series_drifts`) at their
degrees of freedom, each carried to the configuration by its elasticity to T(b)
against the calibration configuration's
(:func:`trtcheck.analyze.tune_plan.drift_factors`). Without the calibration's latencies
(a typed curve, a bench run), the interval is for a measurement as long as the
simulation, with the P50 spread of the repeats (or the floor) for both. No interval at
the calibrated instance count or above starts below the calibration's fastest request
(what one request takes alone), as in tune.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from trtcheck.analyze import tune_plan as tp
from trtcheck.analyze.advice.simulator import make_arrivals, simulate
from trtcheck.stats import percentile


def contention_for(n: int, n_cal: int) -> float:
    """The assumed T(b) multiplier at ``n`` instances for a calibration at ``n_cal``:
    ``assumed_contention(n) / assumed_contention(n_cal)``
    (:func:`trtcheck.analyze.tune_plan.assumed_contention`: ``1 + 0.25 log2(n)``)."""
    return tp.assumed_contention(n) / tp.assumed_contention(n_cal)


def contention_of(req: Any, n: int) -> tuple[float, str]:
    """``(T(b) multiplier, source)`` at ``n`` instances for ``req``'s calibration at
    ``req.calibrated_instances``: the factors a tune search calibrated
    (``req.instance_contention``, relative to one instance: ``f_n / f_cal``) where it
    holds both counts; at a count it did not reach, along the curve of its largest
    measured count (:func:`trtcheck.analyze.tune_plan.contention_interp`, source
    ``"interpolated"`` or ``"extrapolated"``); else :func:`contention_for` with source
    ``"assumed"``."""
    n_cal = int(req.calibrated_instances)
    known = getattr(req, "instance_contention", None) or {}
    if n_cal in known and known[n_cal][0] > 0:
        if n in known:
            return known[n][0] / known[n_cal][0], known[n][1]
        # a count the search did not reach: along the curve of its largest measured
        # count, as the search itself interpolates (tune_plan.contention_interp)
        measured = {k: f for k, (f, src) in known.items() if src == "measured" and k > 1}
        if measured:
            top = max(measured)
            f = tp.contention_interp(measured[top], n, top)
            return f / known[n_cal][0], "interpolated" if n < top else "extrapolated"
    return contention_for(n, n_cal), "assumed"


def contention_note(req: Any, n: int) -> str:
    """The note for ``n`` instances on a calibration at another count (naming GPUs or
    CPU cores as the calibration's device is): the factor a tune search calibrated, or
    a warning naming the assumed one."""
    n_cal = int(req.calibrated_instances)
    f, source = contention_of(req, n)
    if source not in tp.INFERRED_CONTENTION:
        return (f"{n} instances: T(b) x {f:.3g} against {n_cal} instance"
                f"{'s' if n_cal != 1 else ''}, as the tune search measured it at {n} "
                f"instances")
    if source != "assumed":
        return (f"warning: {n} instances: T(b) x {f:.3g} against {n_cal} instance"
                f"{'s' if n_cal != 1 else ''}, {source} from the instance counts the tune "
                f"search measured; the prediction interval is widened by "
                f"{tp.ASSUMED_CONTENTION_REL:.0%}")
    share = ("share one GPU" if req.device == "gpu" else "share the host's CPU cores"
             if req.device == "cpu" else "share one device")
    return (f"warning: {n} instances: T(b) was calibrated at {n_cal} instance"
            f"{'s' if n_cal != 1 else ''} only; instances that {share} contend, so T(b) is "
            f"multiplied by an assumed contention factor {f:.3g} (1 + "
            f"{tp.ASSUMED_CONTENTION_PER_INSTANCE:g} x log2 of the instance count) and the prediction "
            f"interval widened by {tp.ASSUMED_CONTENTION_REL:.0%}; measure it with trtcheck "
            f"tune or serve --url ... --instances {n}")


def note_contention(req: Any, n: int) -> None:
    """Add :func:`contention_note` for ``n`` to ``req.notes`` once."""
    text = contention_note(req, n)
    if text not in req.notes:
        req.notes.append(text)


def factor_at(req: Any, n: int) -> float:
    """The T(b) multiplier ``n`` instances are simulated with: 1 without a live
    calibration (``req.calibrated_instances`` None) or at its own count, else
    :func:`contention_of`'s."""
    if req.calibrated_instances is None or n == int(req.calibrated_instances):
        return 1.0
    return float(contention_of(req, n)[0])


def service_at(req: Any, service: Any, n: int) -> Any:
    """``service`` with T(b) scaled for ``n`` instances when the calibration ran another
    count (noted), else ``service``."""
    if req.calibrated_instances is None or n == int(req.calibrated_instances):
        return service
    note_contention(req, n)
    return tp.scaled_service(service, factor_at(req, n))


def predict_with_intervals(req: Any, configs: list[Any], service: Any, arrivals: Any,
                           rate_per_s: float | None, warmup_fraction: float) -> list[Any]:
    """Each configuration simulated (T(b) scaled at an uncalibrated instance count) with
    its P50/P99 intervals; one note per uncalibrated count on ``req.notes``."""
    n_cal = int(req.calibrated_instances)
    series = [s for s in (req.calibration_latencies_ms or ()) if len(s) >= 10]
    if series:
        d50, d99 = tp.series_drifts(series)
        dof: int | None = d50.dof if len(series) >= 2 else None
        run_requests: int | None = int(np.median([len(s) for s in series]))
    else:
        level = max(tp.DRIFT_FLOOR_REL, float(req.run_to_run_rel or 0.0))
        d50 = d99 = tp.Drift(level)
        dof, run_requests = None, None
    # the fastest request the calibration measured: no interval starts below it
    floor_ms = min((min(x) for x in series), default=0.0)
    drift_at = None  # the elasticity where the drift was measured (tune_plan.drift_scale)
    if series and req.calibration_config is not None:
        cal_c, cal_rate = req.calibration_config
        cal_arrivals = make_arrivals("poisson", cal_rate, len(arrivals), req.seed)
        drift_at = tp.elasticity_of(lambda k: tp.simulated_quantiles(
            cal_c, tp.scaled_service(service, k), cal_arrivals, req.seed, cal_rate,
            warmup_fraction))
        drift_at = drift_at if drift_at is not None else (1.0, 1.0)
    out = []
    noted: set[int] = set()
    for c in configs:
        sv, extra, f, source = service, 0.0, None, "assumed"
        if c.instances != n_cal:
            f, source = contention_of(req, c.instances)
            sv = tp.scaled_service(service, f)
            extra = tp.ASSUMED_CONTENTION_REL if source in tp.INFERRED_CONTENTION else 0.0
            if c.instances not in noted:
                noted.add(c.instances)
                note_contention(req, c.instances)
        lat: list[float] = []
        p = simulate(c.policy(), c.instances, sv, arrivals, seed=req.seed,
                     warmup_fraction=warmup_fraction, rate_per_s=rate_per_s,
                     latencies_out=lat)
        if f is not None:
            p.contention_factor = round(f, 4)
            p.contention_source = source
        if p.stable and lat:
            arr = np.asarray(lat, dtype=np.float64)
            n = max(1, int(run_requests or p.requests))
            f50 = f99 = 1.0
            if drift_at is not None:
                base = (percentile(arr, 0.5), percentile(arr, 0.99))
                f50, f99 = tp.drift_factors(tp.elasticity_of(lambda k: tp.simulated_quantiles(
                    c, tp.scaled_service(sv, k), arrivals, req.seed, rate_per_s,
                    warmup_fraction), base), drift_at)
            t50, t99 = tp.scaled_drift_terms(d50.sd_log, d99.sd_log, f50, f99)
            i50 = tp.interval(arr, 0.5, n, math.sqrt(t50 ** 2 + extra ** 2), dof)
            i99 = tp.interval(arr, 0.99, n, math.sqrt(t99 ** 2 + extra ** 2), dof)
            if (c.instances >= n_cal and 0.0 < floor_ms <= i50.point_ms
                    and i50.lo_ms < floor_ms):
                # no request is faster than the calibration's fastest one alone (more
                # instances and windows only add to it; fewer instances contend less),
                # as tune bounds its intervals
                i50 = i50.model_copy(update={"lo_ms": floor_ms})
            if i99.lo_ms < i50.lo_ms:  # a run's P99 is never below its P50
                i99 = i99.model_copy(update={"lo_ms": i50.lo_ms})
            p.p50_interval_ms = [round(i50.lo_ms, 4), round(i50.hi_ms, 4)]
            p.p99_interval_ms = [round(i99.lo_ms, 4), round(i99.hi_ms, 4)]
        out.append(p)
    return out
