"""``trtcheck tune``: calibrate -> predict -> confirm against a live Triton.

:func:`run_tune` runs the loop (the design is :mod:`trtcheck.analyze.tune_plan`):

1. **Calibrate** (live, through the model-repository API with a config override):
   a closed loop of ``B`` clients at 1 instance and at the largest instance count
   searched (T(b) up to the search's max batch ``B``; how instances sharing a device
   slow each other), then the target Poisson rate at the fewest instances that carry
   it, twice (per-request delay, batcher overhead, run-to-run drift).
2. **Predict** every candidate (window x max batch x instances) with the simulator and
   T(b) at its own instance count, with prediction intervals; **pick** by the objective
   on the intervals (:mod:`trtcheck.analyze.objectives`).
3. **Confirm**: measure the pick at the target rate. When P50 or P99 falls outside its
   interval, that run joins the calibration (it is at the target rate and the picked
   configuration) and the search picks again; a changed pick is measured (bounded by
   :attr:`TuneSettings.max_runs` and :attr:`TuneSettings.max_rounds`).

Every live run goes through :func:`trtcheck.measure.serving.live.live.measure_live`, which loads the
configuration, measures, and loads the model's original configuration again (also on
Ctrl-C/SIGTERM). An interrupt between runs stops the search with every finished run
kept.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from trtcheck.analyze import tune_plan as tp
from trtcheck.analyze.advice import MIN_CALIBRATION_OK, Candidate
from trtcheck.analyze.advice.live_calibration import OverloadedCalibration
from trtcheck.analyze.objectives import DEFAULT_OBJECTIVE, get_objective
from trtcheck.errors import EnvironmentProblem, InputError, TrtcheckError
from trtcheck.measure.interrupt import interrupt_name, interrupts_held, sigterm_as_interrupt
from trtcheck.results.tune import (
    LOAD_SHORTFALL_CODES, RUN_NOISE_CODES, TuneChoice, TuneMeasured, TunePrediction, TuneResult)
from trtcheck.units import MAX_DURATION_S, us_to_ms
from trtcheck.units import sig

T = TypeVar("T")

DEFAULT_MAX_RUNS = 6
"""Live runs a search may use (a repeat counts as a run)."""

DEFAULT_MAX_ROUNDS = 2
"""Confirmation rounds: the first pick and at most one re-pick."""

CLOSED_WINDOW_US = 1000.0
"""Window of the closed-loop calibration runs (µs): a full batch goes at once, a
partial one waits at most 1 ms."""

OVERLOAD_REFUSE_FACTOR = 1.5
"""tune stops after its first calibration run when the target rate is above this many
times what ``--max-instances`` instances serve by that run's T(b) at the max batch (a
closed loop's batches; the margin covers contention and T(b) the closed loop
overstated): a run at such a rate only builds a backlog."""


@dataclass
class TuneSettings:
    """Inputs of :func:`run_tune`.

    Attributes:
        url, model, model_version: the live server and model.
        rate_per_s: target Poisson rate, req/s.
        slo_p99_ms: the P99 objective (ms) or ``None``.
        objective: an objective name (:data:`trtcheck.analyze.objectives.OBJECTIVES`).
        max_instances: largest instance count searched (>= 1).
        max_batch: largest max batch searched (``None``: the server's).
        duration_s: sending time of each live run, s.
        max_runs, max_rounds: the budget (live runs; confirmation rounds).
        max_utilisation: the busiest a picked configuration may run.
        seed: Poisson seed (each run its own offset) and request data.
        shapes, arrays: one request's shapes / data (as ``serve --url``).
        client_processes, warmup_requests, drain_timeout_s: as ``serve --url``.
        warm_batch_sizes: load each configuration with Triton's model warm-up at every
            batch size up to its max batch
            (:func:`trtcheck.measure.serving.live.live.with_batch_warmup`).
        distributed: a connected :class:`trtcheck.measure.serving.live.distributed.RayLoad`
            (``serve --url ... --ray``): every live run's schedule is split across its
            actors; ``None``: the load runs on this machine.
    """

    url: str
    model: str
    rate_per_s: float
    slo_p99_ms: float | None = None
    objective: str = DEFAULT_OBJECTIVE
    max_instances: int = 2
    max_batch: int | None = None
    model_version: str = ""
    duration_s: float = 3.0
    max_runs: int = DEFAULT_MAX_RUNS
    max_rounds: int = DEFAULT_MAX_ROUNDS
    max_utilisation: float = tp.DEFAULT_MAX_UTILISATION
    seed: int = 0
    shapes: dict[str, list[int]] | None = None
    arrays: dict[str, Any] | None = None
    client_processes: int = 1
    warmup_requests: int = 8
    drain_timeout_s: float = 5.0
    warm_batch_sizes: bool = True
    distributed: Any = None


@dataclass
class TuneOutcome:
    """What :func:`run_tune` returns.

    Attributes:
        result: the search (every finished run kept).
        incomplete: why it stopped early (an interrupt), else ``None``.
        error: the search's failure (no configuration meets the objective, a
            configuration the server refused, the server gone), raised by the caller
            after writing ``result``; ``None`` when it picked.
        invalid: a live run broken by a server fault after at least one run finished
            (the server killed or restarted, the model unloaded or loaded again by
            someone else): which run and what happened. ``error`` then holds the
            fault (exit 3) and every finished run is kept in ``result``.
    """

    result: TuneResult
    incomplete: str | None = None
    error: Exception | None = None
    invalid: str | None = None


def read_model(url: str, model: str, version: str = "", metadata: bool = True
               ) -> tuple[dict, dict, dict]:
    """``(server metadata, model metadata, model config)`` of a live model (the model
    metadata ``{}`` unless ``metadata``).

    Raises:
        InputError / EnvironmentProblem: as :class:`trtcheck.measure.serving.live.kserve.KServeClient`.
    """
    from trtcheck.measure.serving.live.kserve import KServeClient, parse_url

    ep = parse_url(url)

    async def go() -> tuple[dict, dict, dict]:
        async with KServeClient(ep) as c:
            smd = await c.server_metadata()
            await c.model_ready(model, version)
            md = await c.model_metadata(model, version) if metadata else {}
            return smd, md, await c.model_config(model, version)

    return asyncio.run(go())


def read_model_config(url: str, model: str, version: str = "") -> tuple[dict, dict]:
    """``(server metadata, model config)`` of a live model (:func:`read_model`)."""
    smd, _md, cfg = read_model(url, model, version, metadata=False)
    return smd, cfg


RESTORE_CHECK_S = 30.0
"""Longest tune waits for the original configuration to be back when its sweep's own
restore was cut short (s): a second load of it included."""


def ensure_restored(url: str, model: str, version: str, base: dict[str, Any],
                    ours: list[dict[str, Any]]) -> bool:
    """Whether ``model`` runs its original configuration ``base`` again after a search
    (window, max batch and instances as :func:`_same_config` compares them). When it
    still runs one of the search's own configurations (``ours``: a restore cut short by
    a second Ctrl-C, or one whose answer came late), ``base`` is loaded again (bounded
    by :data:`RESTORE_CHECK_S`) and checked once more; a configuration that is neither
    (someone else's) is left alone and is not the original: ``False``.

    Raises:
        InputError / EnvironmentProblem: the server or model cannot be read.
    """
    from trtcheck.measure.serving.live import open_target, parse_endpoint

    now = read_model_config(url, model, version)[1]
    if _same_config(now, base):
        return True
    if not any(_same_config(now, c) for c in ours):
        return False

    async def load() -> None:
        async with open_target(parse_endpoint(url)) as c:
            await asyncio.wait_for(c.load_model(model, base), RESTORE_CHECK_S)

    asyncio.run(load())
    return _same_config(read_model_config(url, model, version)[1], base)


def _same_config(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two Triton configs agree on what tune changes."""
    from trtcheck.measure.serving.live.live import instances_of, window_us_of

    return (int(a.get("max_batch_size", 0) or 0) == int(b.get("max_batch_size", 0) or 0)
            and window_us_of(a) == window_us_of(b) and instances_of(a) == instances_of(b))


@sigterm_as_interrupt()
def run_tune(s: TuneSettings, progress: Callable[[str], None] | None = None) -> TuneOutcome:
    """Run the search (see the module text).

    Returns:
        a :class:`TuneOutcome`; every finished live run is in ``result.runs``.

    Raises:
        InputError: bad settings, a server without the repository API or explicit model
            control (before any run), a model without dynamic batching dimension.
        EnvironmentProblem: the server or model is unreachable or not ready.
    """
    from trtcheck.measure.serving.live.live import (
        WARMUP_PREFIX,
        measure_live,
        request_tensors,
        without_batch_warmup,
    )

    say = progress or (lambda _m: None)
    objective = get_objective(s.objective)
    if s.rate_per_s <= 0 or not math.isfinite(s.rate_per_s):
        raise InputError(f"--arrival-rate {s.rate_per_s:g} is not a positive rate",
                         "give the target rate in requests per second")
    need = MIN_CALIBRATION_OK
    if s.rate_per_s * s.duration_s < need:
        raise InputError(
            f"--arrival-rate {s.rate_per_s:g} req/s for --duration-s {s.duration_s:g} sends "
            f"about {s.rate_per_s * s.duration_s:.0f} requests per run, too few to calibrate "
            f"from (at least {need})",
            f"raise --duration-s to {math.ceil(need / s.rate_per_s)} or more"
            if need / s.rate_per_s <= MAX_DURATION_S else
            f"even --duration-s {MAX_DURATION_S:g}, its largest, is too short: tune a rate "
            f"of at least {sig(need / MAX_DURATION_S)} req/s")
    t0 = time.monotonic()
    smd, md, base = read_model(s.url, s.model, s.model_version)
    base, leftover = without_batch_warmup(base)
    # the request the runs will send, checked before any run (--shapes, --inputs)
    request_tensors(md, base, s.shapes, s.arrays, s.seed)
    exts = [str(x) for x in smd.get("extensions", [])]
    if exts and "model_repository" not in exts:
        raise InputError(f"the server at {s.url} has no model-repository API (its extensions: "
                         f"{', '.join(exts)}), so tune cannot change the configuration",
                         "start tritonserver with --model-control-mode=explicit")
    server_mb = int(base.get("max_batch_size", 0) or 0)
    if server_mb < 1:
        raise InputError(f"{s.model!r} has max_batch_size 0 (no batch axis): there is no "
                         "batching to tune", "give the model a batch dimension "
                         "(max_batch_size > 0 in config.pbtxt)")
    B = int(s.max_batch or server_mb)
    N = int(s.max_instances)
    device, devices = tp.device_of(base)
    unit = "instance"
    res = TuneResult(url=s.url, model=s.model, arrival_rate_per_s=s.rate_per_s,
                     slo_p99_ms=s.slo_p99_ms, objective=objective.name,
                     objective_rule=objective.describe(s.slo_p99_ms), max_instances=N,
                     max_batch_size=B, max_batch_source="user" if s.max_batch else "server",
                     original_config=base)
    out = TuneOutcome(res)
    if leftover:
        res.notes.append(
            f"the model's configuration held {leftover} warm-up entries named "
            f"{WARMUP_PREFIX}* that an earlier trtcheck run left behind (it was stopped "
            "before it could load the original configuration again); the configuration "
            "recorded and restored as the original leaves them out")
    if s.max_batch and s.max_batch > server_mb:
        res.notes.append(f"searching max batch up to {B} (--max-batch), above the server's "
                         f"configured {server_mb}")
    share = (f"{N} instances share {devices} GPU{'s' if devices != 1 else ''}"
             if device == "GPU" else f"{N} instances share the host's CPU cores")
    if N > 1:
        res.notes.append(f"{share} (instance_group of the model config)")

    def live(purpose: str, *, window_us: float, mb: int, instances: list[int], load: str,
             repeats: int = 1, seed_off: int = 0, duration_s: float | None = None
             ) -> list[int]:
        """Measure; append one run per configuration; return their indices
        (``duration_s``: sending time, default ``--duration-s``)."""
        k = res.live_runs + 1
        dur = s.duration_s if duration_s is None else duration_s
        say(f"tune: run {k}/{s.max_runs} ({purpose}): {load}, window "
            f"{us_to_ms(window_us):g} ms, max batch {mb}, "
            f"{'/'.join(map(str, instances))} instance(s)"
            + (f", {repeats} repeats" if repeats > 1 else "")
            + (f", {sig(dur)} s" if dur != s.duration_s else "") + " ...")
        run = measure_live(s.url, s.model, model_version=s.model_version,
                           windows_us=[window_us], max_batch_sizes=[mb],
                           instances=instances, loads=[load], repeats=repeats,
                           max_duration_s=dur, drain_timeout_s=s.drain_timeout_s,
                           warmup_requests=s.warmup_requests, seed=s.seed + seed_off,
                           shapes=s.shapes, arrays=s.arrays,
                           client_processes=s.client_processes,
                           distributed=s.distributed, warm_batch_sizes=s.warm_batch_sizes)
        idx = []
        for c in run.configs:
            res.runs.append(run.model_copy(update={"configs": [c], "incomplete": None}))
            res.run_purposes.append(purpose)
            res.live_runs += len(c.repeats)
            idx.append(len(res.runs) - 1)
        for w in run.warnings:
            if w.code == "config-not-loaded":
                raise InputError(f"{w.message} ({w.where})", w.remedy)
            if w.code in ("cold-batch-sizes", "warmup-not-possible"):  # the user should know
                say(f"{w.severity}: {purpose}: {w.message}; {w.remedy}")
        # a run that did not send its schedule calibrates a rate other than the target,
        # and one whose sends ran late or whose repeats disagreed is noisier than it looks
        for w in [*run.warnings, *(f for c in run.configs for f in (*c.warnings, *c.validity))]:
            if w.code in LOAD_SHORTFALL_CODES or w.code in RUN_NOISE_CODES:
                note = f"run {k} ({purpose}): {w.message}; {w.remedy}"
                if note in res.notes:
                    continue
                # the search goes on with it: a warning here, whatever the run's own
                # finding says (an error would make two error lines when a search ends)
                say(f"warning: {note}")
                res.notes.append(note)
        if run.incomplete and run.incomplete.startswith("invalid: "):
            raise EnvironmentProblem(run.incomplete.removeprefix("invalid: "),
                                     "check the server, then run again")
        if run.incomplete:
            # "interrupted by SIGINT: 0 of 1 configuration(s) measured" counts the
            # configurations of one live run; the search counts live runs
            raise KeyboardInterrupt(run.incomplete.split(":")[0] + " " + interrupted_where(
                k, sum(len(c.repeats) for c in run.configs), repeats * len(instances),
                purpose))
        return idx

    def calibrated(step: Callable[[], T]) -> T:
        """A calibration step on the live runs: the server's statistics that cannot
        calibrate (no execution counted) are the server's problem (exit 3), not bad
        input."""
        try:
            return step()
        except OverloadedCalibration as exc:  # the target rate is more than it serves
            raise InputError(
                f"{exc.message} (--arrival-rate {s.rate_per_s:g})",
                "lower --arrival-rate, or raise --max-instances so tune can calibrate at "
                "an instance count that carries the rate") from None
        except InputError as exc:
            raise EnvironmentProblem(
                f"the live runs cannot calibrate tune: {exc.message}",
                "check that the server's statistics (GET /v2/models/NAME/stats) count "
                "the model's requests and executions") from None

    needed = 4 + (1 if N > 1 else 0)  # closed loop, repeat pair, contention, confirm
    if s.max_runs < needed:
        raise InputError(
            f"--max-runs {s.max_runs} is below the {needed} live runs a search needs "
            f"(calibration: a closed loop and a repeated run at the rate"
            + (", a run at the largest instance count" if N > 1 else "")
            + "; one confirming run of the pick)",
            f"use --max-runs {needed} or more" + (", or --max-instances 1" if N > 1 else ""))
    clip_note: str | None = None
    try:
        # 1. calibrate: T(b) up to B at 1 instance (closed loop of B clients)
        live("calibration", window_us=CLOSED_WINDOW_US, mb=B, instances=[1],
             load=f"closed:{tp.closed_loop_clients(B)}")
        curves = calibrated(lambda: tp.instance_curves(res.runs, N))
        floor = tp.latency_floor_ms(res.runs[0])
        if s.slo_p99_ms is not None and floor is not None and floor[0] > s.slo_p99_ms:
            # no window, instance count or rate makes one request faster: stop now
            res.notes.append(f"stopped after the first calibration run: one request takes "
                             f"at least {sig(floor[0])} ms ({floor[1]}), above the P99 "
                             f"objective {s.slo_p99_ms:g} ms")
            raise InputError(
                f"no configuration searched meets the objective ({objective.describe(s.slo_p99_ms)})"
                f": one request alone takes at least {sig(floor[0])} ms (the first "
                f"calibration run: {floor[1]})",
                f"raise --slo-p99-ms above {sig(floor[0])} ms, or make the model faster "
                "(more instances or a lower rate cannot)")
        # the fewest instances whose capacity at B carries the rate with headroom
        n0 = N
        for n in range(1, N + 1):
            cv = curves.curve(n)
            cap = n * max(1000.0 * b / float(cv.t_ms(b)) for b in range(1, B + 1))
            if s.rate_per_s <= 0.8 * cap:
                n0 = n
                break
        if s.rate_per_s > OVERLOAD_REFUSE_FACTOR * cap:
            # a run at the rate would only queue (and its backlog outlast the run):
            # nothing to calibrate, and the server is not at fault
            res.notes.append(f"stopped after the first calibration run: {N} instance(s) "
                             f"serve about {sig(cap)} req/s by its T(b), below the rate")
            raise InputError(
                f"--arrival-rate {s.rate_per_s:g} req/s is more than {N} instance(s) serve: "
                f"about {sig(cap)} req/s at max batch {B} by the first calibration run's "
                "T(b)" + (" and the assumed contention between instances" if N > 1 else ""),
                f"lower --arrival-rate below {sig(cap)}, or raise --max-instances")
        w_cal = tp.calibration_window_us(s.rate_per_s, B)
        open_idx = live("calibration at the rate, with a repeat", window_us=w_cal, mb=B,
                        instances=[n0], load=f"open:{s.rate_per_s:g}", repeats=2,
                        seed_off=1)[0]
        cont_idx: int | None = None
        if N > 1 and N != n0:
            # contention at the target load: instances overlap as often as the rate
            # makes them (a saturating closed loop keeps all of them busy at once and
            # overstates it: 1.97x at 4 instances on an H200 against 1.1-1.37x under
            # Poisson load)
            cont_idx = live("contention at the rate", window_us=w_cal, mb=B, instances=[N],
                            load=f"open:{s.rate_per_s:g}", seed_off=3)[0]
        reps = res.runs[open_idx].configs[0].repeats
        dr50, dr99 = calibrated(lambda: tp.repeat_drifts(reps))
        d50, d99, dof = dr50.sd_log, dr99.sd_log, dr99.dof
        tail = tp.tail_drift(reps)
        confirm_s = tp.confirm_duration_s(tail, s.duration_s, s.rate_per_s)
        spread_note = tp.p99_spread_note(tail, s.duration_s)
        if spread_note:
            res.notes.append(spread_note)
        # said once a run of that length was made (a search that measures no pick makes none)
        length_note = tp.confirm_length_note(tail, s.duration_s, s.rate_per_s)
        resid_log: list[float] = []
        n_req = max(50, int(s.rate_per_s * confirm_s))
        # 2. predict and pick; 3. confirm
        excluded: list[tuple[float, int, int]] = []  # measured above the objective
        round_preds: dict[int, list[TunePrediction]] = {}  # each round's predictions
        fallback: TuneChoice | None = None  # measured within it, not certified
        for rnd in range(1, s.max_rounds + 1):
            curves = calibrated(lambda: tp.instance_curves(res.runs, N))
            queueing, stall = calibrated(lambda: tp.queueing_and_stalls(
                res.runs, open_idx, seed=s.seed, curves=curves))
            # every run so far bounds what one request takes (a mean T(1) under one load
            # is no floor under another)
            low = tp.lowest_latency_floor_ms(res.runs)
            search = tp.Search(queueing, curves, d50, d99, s.rate_per_s, n_req, B, N,
                               drift_dof=dof, stall=stall,
                               floor_ms=low[0] if low is not None else 0.0,
                               drift_at=(Candidate(w_cal, B, n0), s.rate_per_s))
            obs = queueing.observation
            transient = (f"{obs.transient_share:.0%} of the calibration run's requests fell in "
                         "a transient (a backlog the server worked off); they are left out of "
                         "the per-request delay and the queue-time fit")
            if obs.transient_share > 0 and transient not in res.notes:
                res.notes.append(transient)
            bound_note = tp.overhead_bound_note(queueing)
            if bound_note is not None and bound_note not in res.notes:
                res.notes.append(bound_note)
            res.calibration = tp.calibration_record(search, device, devices)
            clip_note = tp.idle_clip_note(curves)
            preds = tp.predict_all(search, seed=s.seed)
            res.predictions = preds
            round_preds[rnd] = preds
            pick, runner = tp.choose(preds, objective, s.slo_p99_ms, s.max_utilisation,
                                     excluded)
            if pick is None:
                # no interval is within the objective: measure the configuration that
                # comes closest, if its point prediction meets it (the run also narrows
                # the drift estimate); a measurement within the objective is kept
                probe = (None if fallback is not None or res.live_runs >= s.max_runs
                         else tp.probe_candidate(preds, s.slo_p99_ms, s.max_utilisation,
                                                 excluded, objective))
                if probe is None:
                    break
                closest = tp.probe_candidate(preds, s.slo_p99_ms, s.max_utilisation,
                                             excluded)
                assert probe.p50 is not None and probe.p99 is not None
                assert probe.p50_ms is not None and probe.p99_ms is not None
                assert closest is not None and closest.p99 is not None
                say(f"tune: round {rnd}: no configuration's P99 interval is within "
                    f"{s.slo_p99_ms:g} ms (the closest reaches {sig(closest.p99.hi_ms)} ms); "
                    f"measuring {tp.config_text(probe, unit)}, the objective's choice among "
                    "those whose point prediction meets it: "
                    f"P50 {sig(probe.p50_ms)} ms, P99 {sig(probe.p99_ms)} ms "
                    f"[{sig(probe.p99.lo_ms)}, {sig(probe.p99.hi_ms)}]")
                choice = TuneChoice(window_us=probe.window_us,
                                    max_batch_size=probe.max_batch_size,
                                    instances=probe.instances, predicted=probe, round=rnd,
                                    certified=False)
                res.rounds.append(choice)
                idx = live("measure the closest", window_us=probe.window_us,
                           mb=probe.max_batch_size, instances=[probe.instances],
                           load=f"open:{s.rate_per_s:g}", seed_off=10 + rnd,
                           duration_s=confirm_s)[0]
                m = tp.measured_of(res.runs[idx])
                choice.measured = _measured(m, idx, probe)
                met = m["p99_ms"] <= float(s.slo_p99_ms)  # type: ignore[arg-type]
                say(f"tune: measured P50 {sig(m['p50_ms'])} ms, P99 {sig(m['p99_ms'])} ms, "
                    f"{m['throughput_queries_per_s']:.4g} q/s, mean batch "
                    f"{sig(m['mean_batch'])}: "
                    + ("within the objective" if met else "above the objective"))
                if met:
                    fallback = choice
                else:
                    excluded.append((probe.window_us, probe.max_batch_size,
                                     probe.instances))
                resid_log.append(tp.log_ratio(m["p50_ms"], probe.p50_ms))
                dr50, dr99 = tp.repeat_drifts(reps, resid_log)
                d50, d99, dof = dr50.sd_log, dr99.sd_log, dr99.dof
                continue
            # a feasible prediction is stable, so it has its intervals
            assert pick.p50 is not None and pick.p99 is not None
            assert pick.p50_ms is not None and pick.p99_ms is not None
            say(f"tune: round {rnd}: picked {tp.config_text(pick, unit)}: predicted P50 "
                f"{sig(pick.p50_ms)} ms [{sig(pick.p50.lo_ms)}, {sig(pick.p50.hi_ms)}], P99 "
                f"{sig(pick.p99_ms)} ms [{sig(pick.p99.lo_ms)}, {sig(pick.p99.hi_ms)}]")
            choice = TuneChoice(window_us=pick.window_us, max_batch_size=pick.max_batch_size,
                                instances=pick.instances, predicted=pick, round=rnd)
            if take_round(res, choice, runner):
                break
            if res.live_runs >= s.max_runs:
                res.notes.append(f"the pick was not measured: the budget of {s.max_runs} "
                                 "live runs is spent")
                break
            idx = live("confirm", window_us=pick.window_us, mb=pick.max_batch_size,
                       instances=[pick.instances], load=f"open:{s.rate_per_s:g}",
                       seed_off=10 + rnd, duration_s=confirm_s)[0]
            m = tp.measured_of(res.runs[idx])
            choice.measured = _measured(m, idx, pick)
            say(f"tune: measured P50 {sig(m['p50_ms'])} ms, P99 {sig(m['p99_ms'])} ms, "
                f"{m['throughput_queries_per_s']:.4g} q/s, mean batch {sig(m['mean_batch'])}"
                + ("" if choice.measured.p50_inside and choice.measured.p99_inside else
                   ": outside the predicted interval"))
            if choice.measured.p50_inside and choice.measured.p99_inside:
                break
            if rnd == s.max_rounds or res.live_runs >= s.max_runs:
                res.notes.append("the measurement fell outside the predicted interval and "
                                 "the budget allows no further round")
                break
            # the run joins the calibration: its batch sizes pool into T(b) at its
            # instance count (instance_curves reads every run), and its miss is a drift
            # sample, pooled with the repeat pair's estimate; the queueing calibration
            # stays the repeated run's (one run's mean queue time carries its stalls)
            resid_log.append(tp.log_ratio(m["p50_ms"], pick.p50_ms))
            dr50, dr99 = tp.repeat_drifts(reps, resid_log)
            d50, d99, dof = dr50.sd_log, dr99.sd_log, dr99.dof
            if s.slo_p99_ms is not None and m["p99_ms"] > s.slo_p99_ms:
                # a measurement above the objective outweighs an interval refitted with
                # it (VGG-16 on an H100 at 1,074 req/s: w0ms b2 x4 measured P99 27 ms
                # against 17.9 ms, and its refitted interval was 2-15 ms): the next
                # round picks another
                excluded.append((pick.window_us, pick.max_batch_size, pick.instances))
        if length_note and any(c.measured is not None for c in res.rounds):
            res.notes.append(length_note)
        if res.pick is not None and res.pick.predicted is not None and cont_idx is not None:
            load_note = tp.contention_load_note(res.pick.predicted, s.rate_per_s,
                                                res.runs[cont_idx], unit)
            if load_note is not None:
                res.notes.append(load_note)
        above = (res.pick is not None and res.pick.measured is not None
                 and s.slo_p99_ms is not None and res.pick.measured.p99_ms > s.slo_p99_ms)
        if res.pick is None or (above and fallback is not None):
            # no round certified a configuration, or the certified one measured above
            # the objective while another measured within it
            if fallback is None:
                out.error = _nothing_meets(res, objective, s.slo_p99_ms,
                                           tp.best_p99(res.predictions), unit,
                                           s.max_utilisation)
            else:  # one measured within the objective
                take_uncertified(res, fallback, round_preds.get(fallback.round, res.predictions),
                                 excluded, s.slo_p99_ms, s.max_utilisation, objective)
                res.notes.append(_uncertified_note(fallback, s.slo_p99_ms, d99, unit))
        elif fallback is not None and res.pick is not None and _key(fallback) != _key(
                res.pick):
            res.notes.append(passed_over_note(fallback, unit))
    except KeyboardInterrupt as exc:
        why = exc.args[0] if exc.args and str(exc.args[0]).startswith("interrupted") else \
            f"interrupted by {interrupt_name(exc)}"
        out.incomplete = f"{why}; {res.live_runs} live run(s) finished and kept"
    except TrtcheckError as exc:  # bad input or the environment: keep what finished
        out.error = exc
        if isinstance(exc, EnvironmentProblem) and res.runs:
            # a fault broke a run after others finished: they are kept, the document
            # says which run broke and why
            out.invalid = exc.message
    finally:
        if clip_note is not None:  # the last calibration's
            res.notes.append(clip_note)
        res.wall_s = round(time.monotonic() - t0, 3)
        # a check, never the search's error; a second Ctrl-C during it must not record
        # a restored configuration as lost
        with interrupts_held() as held:
            try:
                res.restored = ensure_restored(
                    s.url, s.model, s.model_version, base,
                    [c.server_model_config for r in res.runs for c in r.configs
                     if c.server_model_config])
            except Exception:  # noqa: BLE001
                res.restored = False
        del held  # a signal during the check: the search is over either way
    if res.pick is not None:
        res.why = _why(res, objective, unit)
    return out


def _nothing_meets(res: TuneResult, objective: Any, slo_p99_ms: float | None,
                   best: TunePrediction | None, unit: str,
                   max_utilisation: float = tp.DEFAULT_MAX_UTILISATION) -> InputError:
    """The error of a search that found nothing within the objective: when no
    configuration keeps up with the rate at most ``max_utilisation`` busy, that (the
    objective is not what stops it), with the most any carries; else the configurations
    it measured for it and their P99, else the closest prediction."""
    rate = res.arrival_rate_per_s
    top = tp.none_keeps_up(res.predictions, max_utilisation)
    if top is not None:
        cap = float(top.capacity_queries_per_s or 0.0)
        headroom = ("" if not any(p.stable for p in res.predictions) else
                    f" at most {max_utilisation:.0%} busy")
        return InputError(
            f"no configuration searched keeps up with {sig(rate)} req/s{headroom}: the most "
            f"any carries is about {sig(cap)} req/s ({tp.config_text(top, unit)}, by the "
            "calibration's T(b))",
            f"lower --arrival-rate below {sig(max_utilisation * cap)}, or allow more "
            "--max-instances")
    tried = "".join(f"; measured {tp.config_text(c, unit)}: P99 {sig(c.measured.p99_ms)} ms"
                    for c in res.rounds if not c.certified and c.measured is not None)
    near = (f"; the closest: {tp.config_text(best, unit)}, P99 up to {sig(best.p99.hi_ms)} ms"
            if best is not None and best.p99 else "")
    return InputError(
        f"no configuration searched meets the objective ({objective.describe(slo_p99_ms)})"
        + (tried or near), "raise --slo-p99-ms, allow more --max-instances, or lower the "
        "rate")


def _uncertified_note(c: TuneChoice, slo_p99_ms: float | None, drift_p99: float,
                      unit: str) -> str:
    """The note of a pick no interval certified (``c`` measured within the objective;
    ``drift_p99``: the run-to-run drift, sd of log)."""
    assert c.measured is not None
    return (f"no configuration's P99 interval was within the objective {slo_p99_ms:g} ms "
            f"(run-to-run drift {100 * drift_p99:.2g}%); {tp.config_text(c, unit)} was "
            f"measured because its point prediction met it (P99 {sig(c.predicted.p99_ms)} "
            f"ms), and so did the measurement: P99 {sig(c.measured.p99_ms)} ms in one run; "
            "not certified by an interval")


def _key(c: Any) -> tuple[float, int, int]:
    return (c.window_us, c.max_batch_size, c.instances)


def passed_over_note(c: TuneChoice, unit: str) -> str:
    """Why ``c``, measured within the objective but never certified by its interval, is
    not the pick (a later round certified another)."""
    assert c.measured is not None and c.predicted.p99 is not None
    return (f"{tp.config_text(c, unit)} measured P99 {sig(c.measured.p99_ms)} ms within the "
            f"objective in one run (round {c.round}), but its P99 interval "
            f"[{sig(c.predicted.p99.lo_ms)}, {sig(c.predicted.p99.hi_ms)}] ms was not within "
            "it; the pick's interval is, and tune chooses on intervals, not on one run")


def _measured(m: dict[str, Any], run: int, pred: TunePrediction) -> TuneMeasured:
    """The measurement of run ``run`` (``m``: :func:`tune_plan.measured_of`) against the
    prediction ``pred`` (which has its intervals)."""
    assert pred.p50 is not None and pred.p99 is not None
    return TuneMeasured(
        p50_ms=m["p50_ms"], p99_ms=m["p99_ms"],
        throughput_queries_per_s=m["throughput_queries_per_s"],
        mean_batch=m["mean_batch"], requests=int(m["requests"]), run=run,
        p50_inside=bool(pred.p50.holds(m["p50_ms"])),
        p99_inside=bool(pred.p99.holds(m["p99_ms"])))


def take_round(res: TuneResult, choice: TuneChoice, runner: TunePrediction | None) -> bool:
    """Record a round's pick (``choice``) and its runner-up in ``res``. A pick that is the
    previous round's configuration stays the measured one, judged against the
    prediction it was measured against, beside the runner-up of that same round (pick
    and runner-up always come from one round's predictions); returns ``True`` then (the
    search ends), else ``False`` (``choice`` is the new pick)."""
    prev = res.rounds[-1] if res.rounds else None
    res.rounds.append(choice)
    if prev is not None and (prev.window_us, prev.max_batch_size, prev.instances) == (
            choice.window_us, choice.max_batch_size, choice.instances):
        # the new interval was fitted with that very run
        choice.measured = prev.measured
        if res.pick is not prev:  # a measured configuration no interval had certified
            prev.certified = True
            res.pick, res.runner_up = prev, runner
        p = choice.predicted
        assert p.p50 is not None and p.p99 is not None
        res.notes.append(
            "recalibrated with the confirming run, the search picked the same "
            f"configuration again (P50 {sig(p.p50.lo_ms)}-{sig(p.p50.hi_ms)} ms, "
            f"P99 {sig(p.p99.lo_ms)}-{sig(p.p99.hi_ms)} ms now); the pick is "
            f"shown with the prediction it was measured against (round {prev.round}), "
            "and the runner-up of that round")
        return True
    res.pick = choice
    res.runner_up = runner
    return False


def interrupted_where(first: int, done: int, planned: int, purpose: str) -> str:
    """Where in a search a stop landed, in words: ``during live run N (purpose)`` for the
    run it cut short, or ``after live run(s) ... (purpose)`` when every planned run of
    that step had finished (``first``: the step's first run number, 1-based; ``done``
    and ``planned``: its runs finished and planned)."""
    if done < planned:
        return f"during live run {first + done} ({purpose})"
    runs = f"run {first}" if done == 1 else f"runs {first}-{first + done - 1}"
    return f"after live {runs} ({purpose})"


def take_uncertified(res: TuneResult, choice: TuneChoice, preds: list[TunePrediction],
                     excluded: list[tuple[float, int, int]], slo_p99_ms: float | None,
                     max_utilisation: float, objective: Any) -> None:
    """Make ``choice`` (measured within the objective, never certified by an interval)
    the pick, with ``preds`` (the predictions of its own round) as ``res.predictions``
    and, as its runner-up, the configuration that round would have measured next
    (:func:`~trtcheck.analyze.tune_plan.probe_candidate` without ``choice`` and the
    configurations in ``excluded``, measured above the objective): pick, runner-up and
    predictions always come from one round."""
    res.predictions = preds
    res.pick = choice
    res.runner_up = tp.probe_candidate(preds, slo_p99_ms, max_utilisation,
                                       [*excluded, _key(choice)], objective)


def interrupted_line(outcome: TuneOutcome, model: str, output: str | None) -> str:
    """The line an interrupted search ends with (``outcome.incomplete`` set): why it
    stopped, the runs kept, and whether the model's original configuration is back; when
    it is not, how to load it (``output``: the ``-o`` file holding
    ``tune.original_config``, or ``None``)."""
    if outcome.result.restored:
        return f"{outcome.incomplete}; the original configuration is loaded again"
    src = f", or with tune.original_config from {output}" if output else ""
    return (f"{outcome.incomplete}; warning: {model}'s original configuration is not "
            f"loaded again: unload {model}, then load it with the repository's config{src}")


def broken_search_error(outcome: TuneOutcome, output: str | None) -> Exception:
    """The one-line error of a search a server fault broke (``outcome.invalid`` set):
    what broke, where the finished runs went (``output``: the ``-o`` file or ``None``)
    and whether the model's original configuration is back."""
    from trtcheck.errors import EnvironmentProblem

    res = outcome.result
    kept = (f"{res.live_runs} finished live run(s) written to {output}" if output else
            f"{res.live_runs} finished live run(s) not written (no -o)")
    restored = ("" if res.restored else "; the model's original configuration was not "
                "loaded again (the server is gone, or someone else unloaded or changed "
                "the model)")
    last = ("check the server and the model's configuration on it, then run again"
            if not res.restored else "check the server, then run again")
    return EnvironmentProblem(f"the search broke: {outcome.invalid}",
                              f"{kept}, marked invalid{restored}; {last}")


def _why(res: TuneResult, objective: Any, unit: str) -> list[str]:
    """The reasons for the pick, in words."""
    p = res.pick.predicted  # type: ignore[union-attr]
    why = [f"objective {objective.name}: {res.objective_rule}"]
    feas = [q for q in res.predictions if q.feasible]
    why.append(f"{len(feas)} of {len(res.predictions)} configurations predicted feasible "
               f"at {res.arrival_rate_per_s:g} req/s")
    counted = len(why) - 1  # the line the round's provenance belongs to
    m = res.pick.measured  # type: ignore[union-attr]
    if not res.pick.certified and m is not None:  # type: ignore[union-attr]
        why.append(f"not certified: no P99 interval was within {res.slo_p99_ms:g} ms; this "
                   f"configuration's point prediction met it (P99 {sig(p.p99_ms)} ms), and "
                   f"so did its measurement (P99 {sig(m.p99_ms)} ms, one run)")
    if p.contention_source in tp.INFERRED_CONTENTION:
        why.append(f"{p.instances} instances: T(b) x {sig(p.contention_factor)} "
                   f"({p.contention_source} contention; the interval is widened)")
    live_mb = int(res.original_config.get("max_batch_size", 0) or 0)
    if 0 < p.max_batch_size < live_mb:
        why.append(f"max batch {p.max_batch_size} is below the live model's {live_mb}: the "
                   f"max batch also bounds each request, so clients that send requests of "
                   f"more than {p.max_batch_size} row{'s' if p.max_batch_size != 1 else ''} "
                   "would be refused (the export says so)")
    if p.extrapolated_above is not None:
        why.append(f"max batch {p.max_batch_size} is above the largest calibrated batch "
                   f"size {p.extrapolated_above}: T(b) above it is extrapolated along the "
                   "fit's slope (the interval is widened)")
    last = res.rounds[-1].round if res.rounds else 1
    if res.pick.round != last:  # type: ignore[union-attr]
        why[counted] += (f" (round {last}'s recalibration; the pick and runner-up are round "
                    f"{res.pick.round}'s predictions)")  # type: ignore[union-attr]
    r = res.runner_up
    if r is not None and r.p99 is not None and p.p99 is not None:
        why.append(f"runner-up {tp.config_text(r, unit)}: P99 up to {sig(r.p99.hi_ms)} ms "
                   f"against {sig(p.p99.hi_ms)} ms, capacity {r.capacity_queries_per_s:.4g} "
                   f"against {p.capacity_queries_per_s:.4g} req/s")
    return why


def prediction_as_sim(p: TunePrediction, rate_per_s: float) -> Any:
    """A :class:`~trtcheck.results.advice.SimPrediction` of a tune prediction (for the
    Triton export)."""
    from trtcheck.results.advice import SimPrediction

    return SimPrediction(window_us=p.window_us, max_batch_size=p.max_batch_size,
                         instances=p.instances, arrival_rate_per_s=rate_per_s,
                         stable=p.stable, utilisation=p.utilisation,
                         throughput_queries_per_s=p.throughput_queries_per_s,
                         p50_ms=p.p50_ms, p99_ms=p.p99_ms, mean_batch=p.mean_batch)


def export_config_text(res: TuneResult) -> tuple[str, Any]:
    """``(config.pbtxt text, TritonModelSpec)`` of the pick, with the live model's own
    backend, tensors and instance kind.

    Raises:
        InputError: no pick, or a config without platform/backend.
    """
    from trtcheck.export.settings import spec_from_triton_config, triton_config

    if res.pick is None:
        raise InputError("there is no pick to export", "run tune until it picks")
    spec = spec_from_triton_config(res.original_config)
    text = triton_config(prediction_as_sim(res.pick.predicted, res.arrival_rate_per_s),
                         res.model, spec.device_kind, spec=spec,
                         assessed_max_batch_size=res.max_batch_size,
                         measured_batcher="dynamic_batching" in res.original_config)
    return text, spec
