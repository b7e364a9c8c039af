"""Inputs of the advice taken from a results document: T(b) from the bench section, the
serving overheads from the serve section (when present)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from trtcheck.analyze.advice.curve import LatencyCurve, curve_from_bench
from trtcheck.errors import InputError
from trtcheck.stats import AUTOCORRELATION_WARN, lag1_autocorrelation
from trtcheck.units import int_ranges, us_to_ms


def inputs_from_results(results: Any, source: str = "results.json"
                        ) -> tuple[LatencyCurve, dict[str, Any]]:
    """T(b) from the primary bench run and overheads measured by the serve section.

    Args:
        results: a :class:`trtcheck.results.Results`.
        source: the file name, for messages.

    Returns:
        ``(curve, measured)`` where ``measured`` may hold ``per_batch_overhead_ms``,
        ``per_request_overhead_ms``, ``serial_overhead``, ``timer_slack_us``,
        ``model_name`` and ``source`` (see :func:`overheads_from_serve`).

    Raises:
        InputError: no bench run in the file.
    """
    run = results.primary_bench
    serve = getattr(results, "serve", None)
    prior = getattr(results, "advice", None)
    if run is None and serve is None and prior is not None:
        # a file written by `trtcheck advise -o`: its curve, without the measurements
        from trtcheck.analyze.advice.curve import make_curve

        curve = make_curve(sorted((int(b), float(t)) for b, t in prior.curve.points_ms.items()),
                           source=f"the curve of an earlier advice ({source}; from "
                           f"{prior.curve.source})")
        curve = curve.with_notes([
            f"{source} holds an earlier advice, not measurements: its T(b) is reused, its "
            "overheads are not (give them with --per-request-overhead-ms etc., or advise "
            "from the results file that advice came from)"])
        return curve, {"model_name": "model"}
    if run is None:
        if serve is None:
            raise InputError(f"{source} holds no bench run and no serving run, so T(b) is "
                             "unknown", "run trtcheck bench MODEL -o results.json first, "
                             "or pass --latency-curve")
        curve = curve_from_serve(serve)
        measured: dict[str, Any] = {"model_name": _safe_name(Path(serve.model_path).stem)}
        measured.update(overheads_from_serve(serve, curve))
        return curve, measured
    curve = curve_from_bench(run)
    measured = {"model_name": _safe_name(Path(run.model_path).stem)}
    if serve is not None:
        measured.update(overheads_from_serve(serve, curve))
    return curve, measured


MIN_SERVE_CURVE_EXECUTIONS = 5
"""Executions a batch size needs in a serving run to get a point in T(b) from it: the
batcher forms sizes by chance, and one that ran once or twice (often during a stall)
carries a single noisy time (our threshold)."""


def advice_inputs(results: Any, source: str = "results.json", *, seed: int = 0
                  ) -> tuple[LatencyCurve, dict[str, Any]]:
    """T(b) and the measured inputs of ``advise`` from any results file: a live server's
    run without a bench run is calibrated from the server's own statistics
    (:func:`trtcheck.analyze.advice.live_calibration.inputs_from_live`, ``seed`` seeds its
    simulations); imported measurements (a Triton statistics dump) by
    :func:`trtcheck.analyze.advice.inputs_imported.inputs_from_imported`; everything else
    as :func:`inputs_from_results`.

    Raises:
        InputError: as those two functions.
    """
    tune = getattr(results, "tune", None)
    if tune is not None and getattr(results, "serve", None) is None \
            and results.primary_bench is None:
        i = tune_calibration_run(tune)
        if i is None:
            raise InputError(f"{source} is a tune search without a finished run at the "
                             "target rate, so there is nothing to calibrate from",
                             "run trtcheck tune again until its calibration finishes")
        from trtcheck.analyze.advice.live_calibration import inputs_from_live
        from trtcheck.results.tune import live_run_labels

        curve, measured = inputs_from_live(
            results.model_copy(update={"serve": tune.runs[i]}),
            source=f"{source}, tune live run {live_run_labels(tune.runs)[i]} "
                   f"({tune.run_purposes[i]})", seed=seed)
        curve, note = tune_extended_curve(tune, curve, source)
        labels = live_run_labels(tune.runs)
        measured["tune_measured"] = {
            (float(c.window_us), int(c.max_batch_size), int(c.instances)): (
                c.measured.p50_ms, c.measured.p99_ms, c.measured.throughput_queries_per_s,
                labels[c.measured.run] if 0 <= c.measured.run < len(labels)
                else str(c.measured.run + 1))
            for c in [*tune.rounds, *([tune.pick] if tune.pick is not None else [])]
            if c.measured is not None}
        if tune.pick is not None:
            measured["tune_pick"] = ((float(tune.pick.window_us), int(tune.pick.max_batch_size),
                                      int(tune.pick.instances)),
                                     float(tune.arrival_rate_per_s))
        cal = getattr(tune, "calibration", None)
        if cal is not None and cal.per_instances:
            # T(b) per instance count as the search calibrated it (relative to one
            # instance): a what-if at a count the search ran uses its factor
            measured["instance_contention"] = {
                int(c.instances): (float(c.contention_factor), str(c.source))
                for c in cal.per_instances}
        return (curve.with_notes([note]) if note else curve), measured
    imported = getattr(results, "imported", None)
    if imported is not None and results.primary_bench is None and \
            getattr(results, "serve", None) is None:
        from trtcheck.analyze.advice.inputs_imported import inputs_from_imported

        return inputs_from_imported(imported, source, MIN_SERVE_CURVE_EXECUTIONS)
    if getattr(getattr(results, "serve", None), "live", None) is not None \
            and results.primary_bench is None:
        from trtcheck.analyze.advice.live_calibration import inputs_from_live

        return inputs_from_live(results, source=source, seed=seed)
    return inputs_from_results(results, source=source)


TUNE_CURVE_POINTS_SHOWN = 6
"""Batch sizes of the search's T(b) that the note of :func:`tune_extended_curve` names."""


def tune_extended_curve(tune: Any, curve: LatencyCurve, source: str
                        ) -> tuple[LatencyCurve, str | None]:
    """T(b) of ``advise --from tune.json``: ``curve`` (calibrated from the search's run at
    the rate) extended with the batch sizes above its largest that the search measured
    at one instance (its closed-loop calibration, ``tune.calibration.per_instances``),
    and a note saying so; ``(curve, None)`` when the search measured nothing above.

    The search's T(b) is that of a busy instance; the run at the rate may run each
    execution slower (idle gaps between executions), so the added points are the
    search's values times ``k = T_rate(top) / T_search(top)`` (``top`` the largest size
    the run at the rate formed, ``T_search(top)`` interpolated on the search's points):
    the shape the search measured, at the level of the run the advice calibrates from.

    Raises:
        InputError: the extended curve decreases beyond the noise tolerance (as
            :func:`~trtcheck.analyze.advice.curve.make_curve`).
    """
    from trtcheck.analyze.advice.curve import MONOTONE_NOISE_TOLERANCE, make_curve

    cal = getattr(tune, "calibration", None)
    per = [p for p in (getattr(cal, "per_instances", None) or [])
           if int(getattr(p, "instances", 0)) == 1]
    if not per or not per[0].batch_sizes:
        return curve, None
    top = curve.max_batch_measured
    bs = np.asarray(per[0].batch_sizes, dtype=np.float64)
    ts = np.asarray(per[0].t_ms, dtype=np.float64)
    above = [(int(b), float(t)) for b, t in zip(bs, ts) if int(b) > top]
    if not above:
        return curve, None
    t_search_top = float(np.interp(top, bs, ts))
    t_rate_top = float(curve.t_ms(top))
    k = t_rate_top / t_search_top if t_search_top > 0 else 1.0
    added = [(b, t * k) for b, t in above]
    extended = make_curve(curve.points() + added, source=curve.source,
                          samples_ms={b: list(v) for b, v in curve.samples_ms.items()},
                          noise_tolerance=MONOTONE_NOISE_TOLERANCE)
    extended = replace(extended, notes=tuple(curve.notes) + tuple(extended.notes))
    shown = added if len(added) <= TUNE_CURVE_POINTS_SHOWN else (
        added[:TUNE_CURVE_POINTS_SHOWN - 1] + added[-1:])
    pts = ", ".join(f"T({b}) = {t:.4g} ms" for b, t in shown)
    note = (f"T(b) above batch {top} (the largest the run at the rate formed) comes from "
            f"{source}'s search, which measured batch sizes up to {above[-1][0]} at 1 "
            f"instance (its closed-loop calibration): its values times {k:.3f}, the ratio "
            f"of this run's T({top}) {t_rate_top:.4g} ms to the search's "
            f"{t_search_top:.4g} ms ({pts})")
    return extended, note


def tune_calibration_run(tune: Any) -> int | None:
    """Index into ``tune.runs`` of the run ``advise --from tune.json`` calibrates from:
    the repeated run at the target rate (its purpose starts with "calibration at the
    rate"), else the last open-loop run that finished with a live record; ``None`` when
    there is none (``tune``: a :class:`~trtcheck.results.tune.TuneResult`)."""
    runs = list(getattr(tune, "runs", []) or [])
    purposes = list(getattr(tune, "run_purposes", []) or [])

    def usable(i: int) -> bool:
        r = runs[i]
        return (getattr(r, "live", None) is not None and bool(r.configs)
                and r.configs[0].load.kind == "open" and bool(r.configs[0].repeats))

    for i, why in enumerate(purposes[:len(runs)]):
        if why.startswith("calibration at the rate") and usable(i):
            return i
    opened = [i for i in range(len(runs)) if usable(i)]
    return opened[-1] if opened else None


def curve_from_serve(serve: Any) -> LatencyCurve:
    """T(b) from a serving run: per batch size, the median ``compute`` time of its
    executions over every configuration and repeat.

    The batcher times ``compute`` around the model call of each batch and every request
    of a batch carries it; each execution counts once. Batch sizes with fewer than
    :data:`MIN_SERVE_CURVE_EXECUTIONS` executions are left out (noted), and dips are
    removed as for a bench curve (:func:`~trtcheck.analyze.advice.curve.make_curve`: weighted
    isotonic regression, weights = executions): sizes the batcher formed by chance are
    noisy, and the curve they came from cannot fall with the batch size.
    A bench run (``trtcheck bench``) measures T(b) back to back with warm-up and a
    stopping rule and is preferred when the file has one.

    Raises:
        InputError: the serving run holds no successful request with a compute time.
    """
    from trtcheck.analyze.advice.curve import MONOTONE_NOISE_TOLERANCE, make_curve

    by_b: dict[int, list[float]] = {}
    for cfg in serve.configs:
        for rep in cfg.repeats:
            comp = rep.parts_ms.get("compute_ms") or []
            prev = None
            for b, c in zip(rep.batch_sizes, comp):
                if (b, c) != prev:  # the requests of one batch share its compute time
                    by_b.setdefault(int(b), []).append(float(c))
                    prev = (b, c)
    by_b = {b: v for b, v in by_b.items() if v and b >= 1}
    if not by_b:
        raise InputError("the serving run holds no request with a compute time, so T(b) is "
                         "unknown", "run trtcheck bench MODEL -o results.json, or pass "
                         "--latency-curve")
    notes: list[str] = []
    kept = {b: v for b, v in by_b.items() if len(v) >= MIN_SERVE_CURVE_EXECUTIONS}
    if not kept:
        top = max(by_b, key=lambda b: len(by_b[b]))
        kept = {top: by_b[top]}
    dropped = sorted(set(by_b) - set(kept))
    if dropped:
        notes.append(f"batch sizes executed fewer than {MIN_SERVE_CURVE_EXECUTIONS} times in "
                     f"the serving run are left out of T(b): {int_ranges(dropped)}")
    bs = sorted(kept)
    curve = make_curve([(b, float(np.median(kept[b]))) for b in bs],
                       source=f"serving run compute times ({serve.model_path})",
                       samples_ms=kept, noise_tolerance=MONOTONE_NOISE_TOLERANCE)
    return curve.with_notes(notes) if notes else curve


def _safe_name(text: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)[:64]
    return out or "model"


def overheads_from_serve(serve: Any, curve: LatencyCurve) -> dict[str, Any]:
    """Serving overheads for ``advise`` from a serve run in the same results file.

    Uses :func:`calibration_from_serve` (the measured distributions, without the load
    generator's send lag) and adds, when the run had a serial per-request front stage
    (``settings.per_request_overhead_ms > 0``), that stage as a serial overhead.

    Returns:
        keys ``batch_excess_ms``, ``request_delay_ms`` (sample tuples),
        ``per_batch_overhead_ms`` and ``per_request_overhead_ms`` (medians, for display;
        the per-batch one clamped at 0), ``serial_overhead``/``serial_front_ms`` when a
        front stage ran, ``source``, and ``calibration_notes`` (why configurations were
        left out, see :func:`calibration_exclusion`); empty when the run has no
        open-loop data, only ``calibration_notes`` when none of it is usable.
    """
    cal = calibration_from_serve(serve, curve)
    if not cal["batch_excess_ms"]:
        if cal["skipped"]:
            return {"calibration_notes": [
                "no serving overheads from the serving run: none of its open-loop "
                "configurations is usable for calibration (" + "; ".join(cal["skipped"])
                + "); the advice assumes no serving overhead beyond T(b) (re-measure "
                "with `trtcheck serve` at rates below one instance's capacity)"]}
        return {}
    out: dict[str, Any] = {
        "batch_excess_ms": cal["batch_excess_ms"], "request_delay_ms": cal["request_delay_ms"],
        "per_batch_overhead_ms": max(0.0, cal.get("per_batch_overhead_ms", 0.0)),
        "per_request_overhead_ms": cal.get("per_request_overhead_ms", 0.0),
        "contention_per_arrival_ms": cal.get("contention_per_arrival_ms", 0.0),
        "source": cal["source"]}
    if cal["skipped"]:
        out["calibration_notes"] = [
            "serving overheads calibrated without the serving run's configuration(s) "
            "unusable for calibration: " + "; ".join(cal["skipped"])]
    front = float(getattr(getattr(serve, "settings", None), "per_request_overhead_ms", 0.0))
    if front > 0:
        out["serial_overhead"] = True
        out["serial_front_ms"] = front
    return out


MAX_CALIBRATION_SAMPLES = 65536
"""Samples kept per calibrated distribution; beyond this, evenly spaced runs of
:data:`THIN_BLOCK` consecutive samples are kept. Large on purpose: thinning keeps a stall
(a run of consecutive slow samples) whole while shrinking the series around it, so a
simulated run meets it far more often than a measured run of the same length did (a pool
of 33,000 requests thinned to 4,096 turned one 150 ms stall into a P99 of 100-178 ms in
every leave-one-out prediction of the GPU validation)."""

THIN_BLOCK = 64
"""Length of the consecutive runs kept when thinning: the series stay in time order
(stalls and drift span consecutive samples; the simulator resamples them in blocks, see
:attr:`trtcheck.analyze.advice.simulator.ServiceModel.resample_block`)."""


def thin_samples(values: list[float]) -> tuple[float, ...]:
    """At most :data:`MAX_CALIBRATION_SAMPLES` of ``values``: evenly spaced blocks of
    :data:`THIN_BLOCK` consecutive samples, in time order (stalls and drift span
    consecutive samples)."""
    if len(values) <= MAX_CALIBRATION_SAMPLES:
        return tuple(values)
    nb = MAX_CALIBRATION_SAMPLES // THIN_BLOCK
    starts = np.linspace(0, len(values) - THIN_BLOCK, nb).astype(int)
    return tuple(float(values[s + j]) for s in starts for j in range(THIN_BLOCK))


CALIBRATION_MAX_BUSY_SHARE = 0.95
"""With full batches (mean batch at least :data:`CALIBRATION_FULL_BATCH_SHARE` of the max
batch), an open-loop configuration whose instance computed for at least this share of
the run (its executions' ``compute + assembly + executor_hop`` over the repeat's
duration) could not catch up: batches could not grow, a queue grew (our threshold). A
busy instance with batches below the max is not at capacity: the batcher forms larger
batches as the load rises (an eager PyTorch model on an H200 at 900 req/s was busy 97%
of the run at mean batch 5 of 16, and kept up)."""

CALIBRATION_MIN_SERVED_SHARE = 0.9
"""An open-loop run that served fewer than this share of the rate its sender achieved
(ok requests over first send to last completion) fell behind its arrivals; with an
offered rate above the capacity T(b) implies, its queue grew (our threshold: a short run
below capacity loses a few percent to the last requests' latency)."""

CALIBRATION_FULL_BATCH_SHARE = 0.9
"""Mean batch over max batch from which batches count as full (see
:data:`CALIBRATION_MAX_BUSY_SHARE`)."""


def calibration_exclusion(cfg: Any, curve: LatencyCurve | None = None) -> str | None:
    """Why an open-loop serve configuration must not calibrate serving overheads, or
    ``None`` when it may.

    Left out, because its overheads describe an overloaded host (on a CPU host the model
    then competes with the load generator and the event loop), not the serving overhead
    at a sustainable rate:

    * a configuration marked ``generator-limited`` (see
      :func:`trtcheck.measure.serving.serve.generator_validity`: the sender, not the schedule,
      shaped the arrivals);
    * one whose offered rate is at or above one instance's capacity from ``curve``
      (utilisation ``rate x min_{b <= max batch} T(b) / b >= 1``) and that served less
      than :data:`CALIBRATION_MIN_SERVED_SHARE` of the rate its sender achieved (the
      queue grew; a bench disturbed by other load can understate the capacity, so the
      run's own throughput must confirm it);
    * one whose median repeat kept the instance busy for at least
      :data:`CALIBRATION_MAX_BUSY_SHARE` of its duration with full batches (it ran at
      capacity with the serving overheads included).
    """
    where = f"{cfg.load.label} window {us_to_ms(cfg.window_us):g} ms"
    if any(f.code == "generator-limited" for f in getattr(cfg, "validity", [])):
        return f"{where}: generator-limited"
    try:
        rep = cfg.repeats[cfg.median_repeat]
    except (IndexError, AttributeError):
        return None
    rate = float(getattr(cfg.load, "rate_per_s", 0.0) or 0.0)
    sent_rate = rep.achieved_send_rate_per_s or rate
    if curve is not None and rate > 0 and getattr(cfg.load, "arrival", "") != "trace" \
            and rep.throughput_queries_per_s < CALIBRATION_MIN_SERVED_SHARE * sent_rate:
        per_request_ms = min(float(curve.t_ms(b)) / b for b in range(1, cfg.max_batch_size + 1))
        utilisation = rate * per_request_ms / 1e3
        if utilisation >= 1.0:
            return (f"{where}: offered {rate:g} req/s, above one instance's capacity "
                    f"({1e3 / per_request_ms:.3g} req/s from T(b) at max batch "
                    f"{cfg.max_batch_size}: utilisation {utilisation:.2f}; it served "
                    f"{rep.throughput_queries_per_s:.3g} req/s, so a queue grew)")
    comp = rep.parts_ms.get("compute_ms") or []
    if not comp or rep.duration_s <= 0 \
            or cfg.mean_batch_size < CALIBRATION_FULL_BATCH_SHARE * cfg.max_batch_size:
        return None
    asm = rep.parts_ms.get("assembly_ms", [0.0] * len(comp))
    hop = rep.parts_ms.get("executor_hop_ms", [0.0] * len(comp))
    busy_ms, prev = 0.0, None
    for i, c in enumerate(comp):
        key = (rep.batch_sizes[i] if i < len(rep.batch_sizes) else 1, c, asm[i])
        if key != prev:  # the requests of one batch share its times
            busy_ms += c + asm[i] + hop[i]
            prev = key
    busy_ms *= max(1, rep.raw_stride)  # thinned lists keep every raw_stride-th request
    share = busy_ms / (rep.duration_s * 1e3)
    if share >= CALIBRATION_MAX_BUSY_SHARE:
        return (f"{where}: ran at capacity (the instance was busy {min(share, 1.0):.0%} of "
                f"the run with full batches, mean {cfg.mean_batch_size:.2f} of "
                f"{cfg.max_batch_size}, so a queue grew)")
    return None


def calibration_from_serve(serve: Any, curve: LatencyCurve, *,
                           include_send_lag: bool = False,
                           screen: bool = True) -> dict[str, Any]:
    """Measured distributions of the serving overheads, for the simulator.

    From every open-loop configuration's median repeat (every burst configuration's when
    the run has no open-loop one) of a serve run (raw per-request
    waterfall parts, see :mod:`trtcheck.results.serve`):

    * ``batch_excess_ms``: per execution, ``compute + assembly + executor_hop`` minus the
      bench median ``T(b)`` of its batch size: what an execution costs in the serving
      process beyond the isolated benchmark (GIL and event-loop hand-back, executor
      hop, stacking inputs, preemption by other processes). Requests of one batch share
      these values and are consecutive (FIFO), so each run of equal values is counted
      once.
    * ``request_delay_ms``: per request, ``front + result_dispatch + residual`` (the
      submission, the future being resolved and the event-loop turn back to the caller;
      the residual is latency minus the sum of parts), plus ``http`` when the run had
      the HTTP front. ``front`` is left out when the run had a serial front stage (its
      queueing is simulated as that stage).
    * ``send_lag_ms`` (only with ``include_send_lag``): per request, how late the load
      generator sent it; a property of the measuring client, used to replay a
      measurement, not for advice.

    With ``screen`` (the default, for advice) configurations that
    :func:`calibration_exclusion` rejects (generator-limited, or above capacity) are
    left out and listed in ``skipped``; ``screen=False`` keeps every configuration (for
    replaying a measurement configuration by configuration).

    Returns:
        a dict with those tuples (``()`` when absent) and their medians
        ``per_batch_overhead_ms`` / ``per_request_overhead_ms`` (for display),
        ``source``, and ``skipped`` (one line per configuration left out).
    """
    excess: list[float] = []
    arrivals_during: list[float] = []  # per execution, when the run has enqueue times
    arrivals_window: list[float] = []  # ... in its first T_bench(b) ms (the instrument)
    delay: list[float] = []
    lag: list[float] = []
    n_cfg = 0
    # with a serial front stage, front_ms is queueing in that stage (simulated apart)
    serial_front = float(getattr(getattr(serve, "settings", None),
                                 "per_request_overhead_ms", 0.0) or 0.0) > 0
    skipped: list[str] = []
    configs = list(getattr(serve, "configs", []))
    # open-loop runs calibrate; a file with none (a burst sweep) calibrates from its
    # bursts: their executions and per-request costs are measured the same way (no
    # capacity screen: a burst is a queue on purpose; no contention fit: every request
    # arrives at once, so arrivals during an execution say nothing about its cost)
    kind = "open" if any(getattr(c.load, "kind", "") == "open" for c in configs) else "burst"
    for cfg in configs:
        if getattr(cfg.load, "kind", "") != kind:
            continue
        why = calibration_exclusion(cfg, curve) if screen and kind == "open" else None
        if why is not None:
            skipped.append(why)
            continue
        try:
            rep = cfg.repeats[cfg.median_repeat]
        except (IndexError, AttributeError):
            continue
        parts = rep.parts_ms
        if "compute_ms" not in parts or not rep.latencies_ms:
            continue
        n_cfg += 1
        comp = parts["compute_ms"]
        asm = parts.get("assembly_ms", [0.0] * len(comp))
        hop = parts.get("executor_hop_ms", [0.0] * len(comp))
        bs = rep.batch_sizes
        enq = (rep.enqueue_offsets_ms if kind == "open"
               and len(rep.enqueue_offsets_ms) == len(comp) else None)
        if enq is not None:
            enq_sorted = np.sort(np.asarray(enq, dtype=np.float64))
            qw = parts.get("queue_wait_ms", [0.0] * len(comp))
            ww = parts.get("window_wait_ms", [0.0] * len(comp))
        prev = None
        for i in range(len(comp)):
            key = (bs[i], comp[i], asm[i])
            if key != prev:
                excess.append(comp[i] + asm[i] + hop[i] - float(curve.t_ms(bs[i])))
                if enq is not None:  # requests enqueued while this execution ran
                    start = enq[i] + qw[i] + ww[i] + asm[i] + hop[i]
                    lo = np.searchsorted(enq_sorted, start, side="right")
                    arrivals_during.append(float(
                        np.searchsorted(enq_sorted, start + comp[i], side="right") - lo))
                    arrivals_window.append(float(np.searchsorted(
                        enq_sorted, start + float(curve.t_ms(bs[i])), side="right") - lo))
                prev = key
        for i, lat in enumerate(rep.latencies_ms):
            covered = sum(parts[k][i] for k in parts)
            d = lat - covered  # residual
            if not serial_front:
                d += parts.get("front_ms", [0.0] * len(comp))[i]
            d += parts.get("result_dispatch_ms", [0.0] * len(comp))[i]
            d += parts.get("http_ms", [0.0] * len(comp))[i]
            delay.append(d)
        if include_send_lag and "send_lag_ms" in parts:
            lag.extend(parts["send_lag_ms"])
    contention = 0.0
    if len(arrivals_during) == len(excess):
        contention, excess = fit_contention(excess, arrivals_during, arrivals_window)
    out: dict[str, Any] = {
        "contention_per_arrival_ms": contention,
        "batch_excess_ms": thin_samples(excess), "request_delay_ms": thin_samples(delay),
        "send_lag_ms": thin_samples(lag), "skipped": skipped,
        "source": f"calibrated on a serving measurement ({n_cfg} "
                  f"{'open-loop' if kind == 'open' else 'burst'} configuration(s))"}
    if excess:
        out["per_batch_overhead_ms"] = float(np.median(excess))
    if delay:
        out["per_request_overhead_ms"] = float(np.median(delay))
    return out


MIN_DRIFT_CHECK_SAMPLES = 30
"""Executions needed before the drift of the per-execution excess is judged."""

CONTENTION_MIN_T = 3.0
"""The per-arrival contention is kept only when its least-squares slope is positive and
at least this many standard errors from 0 (our threshold; a t-statistic of 3 keeps
noise in runs with few executions, e.g. a drifting host, from inventing an effect)."""

MIN_CONTENTION_FIT_EXECUTIONS = 30
"""Executions needed to fit the per-arrival contention."""


def fit_contention(excess: list[float], arrivals: list[float],
                    instrument: list[float] | None = None) -> tuple[float, list[float]]:
    """Fit ``excess = e0 + c * arrivals_during + noise`` over executions.

    ``c`` (ms per request that arrived while the execution ran) is what the serving
    process's own per-request work costs a running execution that needs the interpreter
    lock (see :attr:`trtcheck.analyze.advice.simulator.ServiceModel.contention_per_arrival_ms`).

    Least squares is biased here: an execution that is slow for any other reason (a
    loaded CPU) sees more arrivals because it lasts longer, so slowness alone makes the
    slope positive (a serving run of ONNX Runtime on a loaded 2-core CPU gave 6.3 ms per
    arrival; ONNX Runtime releases the lock). With ``instrument`` (per execution, the
    arrivals in its first ``T_bench(b)`` ms: a window whose length does not depend on
    the execution's own noise) the slope is the instrumental-variables estimate
    ``cov(z, excess) / cov(z, arrivals)`` (Wald 1940; Angrist & Pischke, "Mostly
    Harmless Econometrics", ch. 4) with its usual standard error.

    Returns:
        ``(c, residual_excess)``: ``c`` >= 0 (0 unless significant, see
        :data:`CONTENTION_MIN_T`) and the excess with ``c * arrivals`` taken out, in the
        same (time) order, so the simulator adds it back for its own arrivals.
    """
    n = len(excess)
    if n < MIN_CONTENTION_FIT_EXECUTIONS:
        return 0.0, excess
    x = np.asarray(arrivals, dtype=np.float64)
    y = np.asarray(excess, dtype=np.float64)
    z = np.asarray(instrument if instrument is not None else arrivals, dtype=np.float64)
    xc, zc, yc = x - x.mean(), z - z.mean(), y - y.mean()
    szx = float(np.dot(zc, xc))
    szz = float(np.dot(zc, zc))
    if szx <= 0.0 or szz <= 0.0:
        return 0.0, excess
    slope = float(np.dot(zc, yc) / szx)
    resid = yc - slope * xc
    se = math.sqrt(float(np.dot(resid, resid)) / (n - 2) * szz) / szx
    if slope <= 0.0 or (se > 0 and slope / se < CONTENTION_MIN_T):
        return 0.0, excess
    return slope, (y - slope * x).tolist()


IMPLAUSIBLE_NEGATIVE_EXCESS = 0.5
"""A mean measured per-execution excess below ``-0.5 x T(1)`` means the serving run's
executions took less than half the bench's batch-1 time: the bench, not the serving run,
is off (our threshold; an execution cannot be faster than the model's compute)."""


def build_request(curve: LatencyCurve, measured: dict[str, Any], *,
                  rate_per_s: float | None, arrival_process: str = "poisson",
                  slo_p99_ms: float | None = None,
                  per_request_overhead_ms: float | None = None,
                  serial_overhead: bool | None = None,
                  per_batch_overhead_ms: float | None = None,
                  per_item_overhead_ms: float | None = None,
                  timer_slack_us: float | None = None, instances: list[int] | None = None,
                  max_utilisation: float = 0.9, requests: int | None = None,
                  seed: int = 0) -> Any:
    """An :class:`~trtcheck.analyze.advice.advise.AdviseRequest` from T(b), measured overheads
    (from :func:`inputs_from_results`, may be empty) and the user's numbers.

    Given numbers win; measured distributions (from a serve run) fill in what the user did
    not give; anything else is 0. Used by ``trtcheck advise`` and ``trtcheck report``.
    """
    from trtcheck.analyze.advice.advise import AdviseRequest

    excess = measured.get("batch_excess_ms", ()) if per_batch_overhead_ms is None else ()
    fitted = (measured.get("calibrated_per_batch_overhead_ms")
              if per_batch_overhead_ms is None else None)
    delay = measured.get("request_delay_ms", ()) if per_request_overhead_ms is None else ()
    notes: list[str] = []
    if excess and float(np.mean(excess)) < -IMPLAUSIBLE_NEGATIVE_EXCESS * curve.t1_ms:
        # executions in the serving run were much faster than the bench said: the bench
        # medians were inflated (a disturbed run), not the executions negative
        notes.append(f"the serving run's executions were {-float(np.mean(excess)):.3g} ms "
                     f"faster on average than the bench's T(b) (T(1) = {curve.t1_ms:.3g} ms): "
                     "the bench looks disturbed; its measured per-execution excess is ignored "
                     "(re-measure on a quieter machine)")
        excess = ()
    ac1 = lag1_autocorrelation(excess) if len(excess) >= MIN_DRIFT_CHECK_SAMPLES else None
    if ac1 is not None and ac1 > AUTOCORRELATION_WARN:
        notes.append(f"the serving run's execution times drifted (lag-1 autocorrelation "
                     f"{ac1:.2f} of the per-execution time beyond T(b), over {len(excess)} "
                     "executions): the host's speed was not steady, and latency "
                     "predictions assume it stays as measured (measure pinned with "
                     "taskset on a quiet host, or expect P50/P99 to move with the drift)")
    contention = float(measured.get("contention_per_arrival_ms", 0.0)) if excess else 0.0
    if contention > 0:
        notes.append(f"in the serving run, every request that arrived while a batch ran made "
                     f"that execution {contention:.3g} ms longer: the serving process's "
                     "work for each arrival (the event loop) competes with the model call "
                     "for the one Python interpreter (the interpreter lock for Python model "
                     "code such as eager PyTorch; the loop itself for an async model "
                     "function); the predictions include it, and a model call that "
                     "releases the lock (TensorRT, ONNX Runtime) or a C++ server such as "
                     "Triton avoids most of it")
    serial = serial_overhead if serial_overhead is not None else measured.get(
        "serial_overhead", False)
    if per_request_overhead_ms is not None:
        c_req = per_request_overhead_ms
    else:
        c_req = measured.get("serial_front_ms", 0.0) if measured.get("serial_overhead") else 0.0
    return AdviseRequest(
        curve=curve, rate_per_s=rate_per_s, arrival_process=arrival_process,
        slo_p99_ms=slo_p99_ms, per_request_overhead_ms=c_req, serial_overhead=serial,
        per_batch_overhead_ms=(per_batch_overhead_ms or 0.0) + float(fitted or 0.0),
        per_batch_overhead_calibrated=fitted is not None,
        per_item_overhead_ms=per_item_overhead_ms or 0.0,
        timer_slack_us=timer_slack_us or 0.0,
        instances=instances, max_utilisation=max_utilisation, requests=requests, seed=seed,
        overheads_source=(measured.get("source", "measured")
                          if excess or delay or fitted or measured.get("serial_overhead")
                          else "not calibrated: the serving run had no usable configuration"
                          if measured.get("calibration_notes") and per_batch_overhead_ms is None
                          and per_request_overhead_ms is None else "given"),
        batch_excess_ms=tuple(excess), request_delay_ms=tuple(delay),
        contention_per_arrival_ms=contention, batcher=measured.get("batcher", "embedded"),
        delay_per_execution=bool(measured.get("delay_per_execution", False)),
        server_max_batch_size=measured.get("server_max_batch_size"),
        calibration_command=measured.get("calibration_command"),
        client_network_ms=measured.get("client_network_ms"),
        calibrated_instances=measured.get("calibrated_instances"),
        run_to_run_rel=measured.get("run_to_run_rel"),
        calibration_latencies_ms=tuple(measured.get("calibration_latencies_ms") or ()),
        calibration_config=measured.get("calibration_config"),
        instance_contention=dict(measured.get("instance_contention") or {}),
        tune_measured=dict(measured.get("tune_measured") or {}),
        tune_pick=measured.get("tune_pick"),
        per_request_overhead_recorded=(per_request_overhead_ms is None
                                       and bool(measured.get("serial_overhead"))
                                       and c_req > 0),
        notes=list(measured.get("calibration_notes", [])) + notes)
