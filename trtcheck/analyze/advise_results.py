"""Advice from a results model: the bench curve and serve overheads it holds, the device
wording of where T(b) was measured, the export settings, and the demo's rate from the
measured capacity (``trtcheck report``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trtcheck.analyze.advise import advise, service_model
from trtcheck.analyze.inputs import build_request, inputs_from_results
from trtcheck.errors import InputError
from trtcheck.results.advice import Advice


DEMO_LOAD_SHARE = 0.1
"""The demo's arrival rate as a share of what one instance serves at batch 1 (1 / S(1),
the simulated mean execution time with the measured spread): a sparse-arrival case,
where no queue forms (lambda x S(1) = 0.1). Tied to the
measured capacity, so the demo answers the same question on a fast GPU and on a loaded
2-core CPU; at 0.3 a heavy-tailed CPU curve made batches of 2 win by 7% on P99 in some
runs and not in others (a tail effect, not the lesson)."""

DEMO_BUSY_SHARE = 9.0
"""The demo's second rate, in units of :data:`DEMO_LOAD_SHARE` (0.9 of one instance's
batch-1 capacity: a queue forms), to show where batching starts to matter."""


def advise_from_results(results: Any, rate_per_s: float | None = None,
                        slo_p99_ms: float | None = None, *, demo: bool = False) -> Advice:
    """Advice from the numbers in a results model (bench T(b), serve overheads), with the
    device wording of where T(b) was measured and the export settings.

    With ``demo`` and no ``rate_per_s`` the rate comes from the measured capacity:
    :data:`DEMO_LOAD_SHARE` of one instance's batch-1 capacity (``serve``'s default
    sweep also sets its rate from the measured T(1)); the advice carries a note with the
    sparse-arrival lesson and the headline at :data:`DEMO_BUSY_SHARE` times that rate.

    Raises:
        InputError: no T(b) in the results, or what :func:`advise` raises.
    """
    from trtcheck.analyze.export import device_kind_from_results, export_settings, safe_model_name

    try:
        curve, measured = inputs_from_results(results, source="this run")
    except InputError as exc:
        # the demo must advise on any machine: a bench disturbed beyond the usual
        # tolerance (a loaded 2-core CPU gave T(16) < T(4)) is flattened and said so
        run = getattr(results, "primary_bench", None)
        if not demo or run is None or "not monotone" not in exc.message:
            raise
        from trtcheck.analyze.curve import curve_from_bench
        from trtcheck.analyze.inputs import overheads_from_serve

        curve = curve_from_bench(run, noise_tolerance=1.0)
        curve = curve.with_notes([f"{exc.message}: this machine's measurement is too "
                                  "disturbed to trust T(b) beyond batch 1; re-measure on a "
                                  "quiet machine before batching on it"])
        measured = {"model_name": Path(run.model_path).stem}
        if getattr(results, "serve", None) is not None:
            measured.update(overheads_from_serve(results.serve, curve))
    device = device_kind_from_results(results)
    lesson = None
    if rate_per_s is None:
        if not demo:
            raise InputError("an arrival rate is needed", "pass --arrival-rate REQ_PER_S")
        probe = build_request(curve, measured, rate_per_s=1.0)
        s1 = service_model(probe).batch_time_ms(1, None)
        cap = 1000.0 / s1
        rate_per_s = float(f"{DEMO_LOAD_SHARE * cap:.2g}")
        busy = float(f"{DEMO_LOAD_SHARE * DEMO_BUSY_SHARE * cap:.2g}")
        breq = build_request(curve, measured, rate_per_s=busy)
        breq.device, breq.replicas = device, 0
        try:
            b_adv = advise(breq)
            b_head = b_adv.recommendation.summary.split(" Predicted:")[0]
        except InputError as exc:
            b_head = exc.message
        lesson = (f"demo: the arrival rate {rate_per_s:g} req/s is {DEMO_LOAD_SHARE:.0%} of "
                  f"what one instance serves at batch 1 here (1 / S(1) = {cap:.3g} req/s, "
                  "from this machine's measurement), a sparse-arrival case: no queue "
                  "forms, so a batching window only adds latency and the serving layer's "
                  f"per-request cost matters more. At {busy:g} req/s (a queue forms) the "
                  f"advice would be: {b_head}")
    req = build_request(curve, measured, rate_per_s=rate_per_s, slo_p99_ms=slo_p99_ms)
    req.device = device
    if lesson:
        req.notes.append(lesson)
    adv = advise(req)
    run = results.bench[0] if results.bench else results.serve
    adv.export = export_settings(adv.recommendation.prediction,
                                 safe_model_name(Path(run.model_path).stem), device)
    return adv
