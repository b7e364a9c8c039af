"""Advice that does not flip with measurement noise: bootstrap replicas of the inputs,
the choice rerun on each, and the tie-break toward the simpler configuration.

A measured T(b) is a median of raw samples, and the overheads calibrated from a serving
run are series of raw samples; both carry sampling noise, and a simulated P99 carries the
simulation's own. One replica draws every input again from its raw samples:

- T(b) at each measured batch size: the median of a circular block resample of that
  size's raw samples (:func:`trtcheck.stats.circular_block_indices`, blocks of
  :data:`CURVE_BLOCK` keep a drifting host's runs together); the resampled samples also
  become the replica's execution-time spread. Medians are made non-decreasing
  (running maximum), as a measured curve is.
- the per-execution excess and per-request delay series of a serving run: circular block
  resamples (blocks of 64, as the simulator draws them);
- the level of the whole measured curve: a common factor ``exp(N(0, RUN_TO_RUN_CV))``
  (:data:`RUN_TO_RUN_CV`), the run-to-run drift one bench cannot see in its own samples;
- the arrival times and the simulator's own draws: a new seed.

A hand-given curve has no raw samples: its replicas vary the simulation only. Such
input is exact: replicas that disagree disagree within the simulation's own noise, a
tie. The choice is then made on each candidate's median P99 over the replicas (the
same arrival times for every candidate in a replica) by the same tie-break, and the advice is decided (``stable``): an
exact input never reads *cannot tell* (:func:`exact_choice`).

The recommendation starts from the simplest shortlisted configuration (simpler: no
window before a window, then fewer instances, then a smaller max batch, then a shorter
window) and moves to a more complex one only when that one lowers P99 by more than
:data:`MATERIAL_GAIN` in at least :data:`BEAT_SHARE` of the replicas (a one-sided
bootstrap test; :func:`choose_sequential`). Each replica's own choice applies the same
rule to that replica alone. The stability is the share of replicas in which the
recommendation is as good as that replica's own choice (P99 not worse by more than
:data:`MATERIAL_GAIN`). When the rule's choice holds in fewer than :data:`DECIDED_SHARE`
of the replicas, the replicas' most frequent choice is taken if it holds in enough of
them; otherwise the advice says it cannot tell (with that choice as the best guess).

Source of the method: Efron & Tibshirani, "An Introduction to the Bootstrap" (1993),
percentile intervals; Politis & Romano (1992) for the circular block resample.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np

from trtcheck.analyze.advice.simulator import Candidate, ClosedLoop, make_arrivals, sweep
from trtcheck.results.advice import AdviceStability, ReplicaChoice, SimPrediction
from trtcheck.stats import circular_block_indices

REPLICAS = 12
"""Bootstrap replicas per advice (fixed, so a run's answer does not depend on the
machine's speed; 12 x at most :data:`SHORTLIST` candidates x
:data:`MAX_REPLICA_REQUESTS` requests cost about as much as the nominal sweep,
``benchmarks/advise_speed.py``). A share is then known to about +-14% (binomial
standard error at 50%), enough to tell a stable choice (>= 80%) from a coin flip."""

SHORTLIST = 3
"""Configurations rerun on each replica: the nominal run's best by P99, plus the simplest
feasible one and the configurations without a window whose nominal P99 is within twice
the material gain of the best (up to :data:`MAX_RERUN` in all); the others were already
clearly worse in the nominal run."""

MAX_RERUN = 7
"""Most configurations rerun per replica (the time bound)."""

SHORTLIST_P99_FACTOR = 1.5
"""Only configurations with a nominal P99 within this factor of the best are rerun."""

MATERIAL_GAIN = 0.10
"""A more complex configuration must lower P99 by more than 10% (plus 0.01 ms) to count as
better. A simulated P99 of 2,000-3,000 requests rests on 20-30 requests above it and
moves by 5-10% between seeds (measured on the replicas: neighbouring windows traded
places by more than 5% in a third of them), and a user would not notice less (our
threshold)."""

BEAT_SHARE = 0.8
"""Share of replicas in which a more complex configuration must beat the current one by
:data:`MATERIAL_GAIN` to replace it (a one-sided test at 20%)."""

DECIDED_SHARE = 0.6
"""Below this share of replicas choosing the recommendation, the advice says it cannot
tell (with 12 replicas: fewer than 8 of 12)."""

STABLE_SHARE = BEAT_SHARE
"""From this share of replicas on, the recommendation is called ``stable``; between
:data:`DECIDED_SHARE` and this share it is ``likely`` (the same evidence a more complex
configuration needs to win the tie-break, so "stable" never claims more than the rule
that chose it)."""


def stability_status(share: float) -> str:
    """``stable`` (``share`` >= :data:`STABLE_SHARE`), ``likely`` (>=
    :data:`DECIDED_SHARE`) or ``cannot-tell``; ``share`` is 0-1."""
    if share >= STABLE_SHARE:
        return "stable"
    return "likely" if share >= DECIDED_SHARE else "cannot-tell"

RUN_TO_RUN_CV = 0.07
"""Run-to-run level uncertainty of a measured T(b): one bench's raw samples cannot show how
far the next bench on the same machine will sit (clock and cache state, other tenants), so
each replica also scales the whole measured curve by ``exp(N(0, RUN_TO_RUN_CV))``.
Measured: T(1) of the demo ResNet-18 on ONNX Runtime over five independent benches on a
quiet 16-core host was 3.43-4.13 ms, a coefficient of variation of 6.7%
(``benchmarks/results/advise_stability-h200-host.json``). Hand-given curves are exact and
are not scaled."""

CURVE_BLOCK = 8
"""Block length of the T(b) raw-sample resample (consecutive executions share a drifting
host's speed)."""

MAX_REPLICA_REQUESTS = 2000
"""Simulated requests per replica and candidate (the nominal run may use more)."""

TIE_BREAK = ("simpler wins unless a more complex configuration lowers P99 by more than "
             f"{MATERIAL_GAIN:.0%} in at least {BEAT_SHARE:.0%} of bootstrap replicas; "
             "simpler = no window before a window, then fewer instances, then a smaller max "
             "batch, then a shorter window")
"""The tie-break in words (stored in the advice and printed)."""


def simplicity(p: SimPrediction | Candidate) -> tuple[int, int, int, float]:
    """Sort key, simplest first: (has a window, instances, max batch, window)."""
    return (1 if p.window_us > 0 else 0, p.instances, p.max_batch_size, p.window_us)


def _key(p: SimPrediction | Candidate) -> tuple[float, int, int]:
    return (float(p.window_us), int(p.max_batch_size), int(p.instances))


def beats(p99_new: np.ndarray, p99_cur: np.ndarray) -> np.ndarray:
    """Whether a configuration's P99 is lower than the current one's by more than
    :data:`MATERIAL_GAIN` (+0.01 ms), elementwise over replicas (inf: unstable or
    infeasible, never better)."""
    return p99_new < p99_cur * (1.0 - MATERIAL_GAIN) - 0.01


def choose_sequential(p99: np.ndarray, order: list[int], share: float = 1.0) -> int:
    """The tie-break rule: start from the simplest configuration (``order``: column
    indices, simplest first) and move to a more complex one only when it
    :func:`beats` the current one in at least ``share`` of the rows of ``p99`` (shape
    ``[replicas, configurations]`` or ``[configurations]`` for one run). Returns the
    column index chosen."""
    m = np.atleast_2d(p99)
    cur = order[0]
    for j in order[1:]:
        if float(np.mean(beats(m[:, j], m[:, cur]))) >= share:
            cur = j
    return cur


def _replica_request(req: Any, rng: np.random.Generator) -> Any:
    """A copy of an advice request with T(b) and the measured overhead series redrawn
    from their raw samples (see the module docstring)."""
    curve = req.curve
    if curve.samples_ms:
        meds = np.asarray(curve.median_ms, dtype=np.float64).copy()
        samples: dict[int, np.ndarray] = {}
        for i, b in enumerate(curve.batch_sizes):
            raw = curve.samples_ms.get(int(b))
            if raw is None or len(raw) < 2:
                continue
            arr = np.asarray(raw, dtype=np.float64)
            draw = arr[circular_block_indices(arr.size, arr.size, CURVE_BLOCK, rng)]
            samples[int(b)] = draw
            meds[i] = float(np.median(draw))
        level = float(np.exp(rng.normal(0.0, RUN_TO_RUN_CV)))
        meds = np.maximum.accumulate(meds) * level
        samples = {b: v * level for b, v in samples.items()}
        curve = replace(curve, median_ms=meds, samples_ms={**curve.samples_ms, **samples})

    def series(x: tuple[float, ...]) -> tuple[float, ...]:
        if len(x) < 2:
            return x
        a = np.asarray(x, dtype=np.float64)
        return tuple(a[circular_block_indices(a.size, a.size, 64, rng)].tolist())

    return replace(req, curve=curve, batch_excess_ms=series(req.batch_excess_ms),
                   request_delay_ms=series(req.request_delay_ms), notes=[], what_if=[])


def _remeasure(req: Any, rng_seed: int) -> list[str]:
    """What to re-measure to decide: the T(b) points whose bootstrap median varies most
    (relative spread of 200 resampled medians, 10th-90th percentile), and the serving
    overheads when they came from a serving run."""
    out: list[str] = []
    curve = req.curve
    rng = np.random.default_rng(rng_seed)
    spread: list[tuple[float, int]] = []
    for b in curve.batch_sizes:
        raw = curve.samples_ms.get(int(b)) if curve.samples_ms else None
        if raw is None or len(raw) < 2:
            continue
        arr = np.asarray(raw, dtype=np.float64)
        meds = [float(np.median(arr[circular_block_indices(arr.size, arr.size, CURVE_BLOCK,
                                                           rng)])) for _ in range(200)]
        lo, hi = np.percentile(meds, [10, 90])
        mid = float(np.median(meds))
        if mid > 0:
            spread.append(((hi - lo) / mid, int(b)))
    spread.sort(reverse=True)
    if spread:
        top = [f"batch {b} ({s:.0%})" for s, b in spread[:3]]
        out.append("T(b) at " + ", ".join(top) + " (10-90% range of the bootstrap median): "
                   "measure longer on a quieter machine (bench --min-duration 5, nothing "
                   "else running)")
    if req.batch_excess_ms or req.request_delay_ms:
        out.append("the serving overheads: a longer serve run at the target rate "
                   "(trtcheck serve --load open:RATE with more requests)")
    if not out:
        out.append("the simulation: more simulated requests (--requests 20000); the inputs "
                   "were given, not measured")
    return out


def stabilise(req: Any, service_of: Any, load: Any, nominal: list[SimPrediction],
              chosen: SimPrediction, feasible: Any,
              replicas: int = REPLICAS) -> tuple[SimPrediction, AdviceStability]:
    """Rerun the choice on bootstrap replicas and apply the noise-aware tie-break.

    Args:
        req: the :class:`~trtcheck.analyze.advice.advise.AdviseRequest`.
        service_of: ``service_of(req) -> ServiceModel`` (the advice's own builder).
        load: the :class:`~trtcheck.analyze.advice.advise.SimLoad` of the nominal run.
        nominal: the nominal run's feasible predictions at the chosen instance count.
        chosen: the nominal run's choice (lowest P99, simplest within 2%).
        feasible: ``feasible(p) -> bool``, the advice's feasibility rule (utilisation
            target, objective) applied to a replica's prediction.
        replicas: bootstrap replicas, >= 0 (0: no replicas, the nominal choice stands).

    Returns:
        the recommendation (a prediction from ``nominal``) and its stability record.
    """
    ranked = sorted(nominal, key=lambda p: (p.p99_ms or math.inf, simplicity(p)))
    best = ranked[0].p99_ms or math.inf
    short = [p for p in ranked if (p.p99_ms or math.inf) <= best * SHORTLIST_P99_FACTOR + 0.01]
    short = short[:SHORTLIST]
    simplest = min(nominal, key=simplicity)
    # the simpler contenders: configurations without a window whose nominal P99 is within
    # twice the material gain of the best (a smaller max batch may be as good)
    near = [p for p in ranked if p.window_us == 0
            and (p.p99_ms or math.inf) <= best * (1.0 + 2 * MATERIAL_GAIN) + 0.01]
    for extra in (simplest, chosen, *sorted(near, key=simplicity)):
        if len(short) >= MAX_RERUN:
            break
        if all(_key(extra) != _key(p) for p in short):
            short.append(extra)
    short.sort(key=simplicity)
    order = list(range(len(short)))
    cands = [Candidate(p.window_us, p.max_batch_size, p.instances,
                       tuple(p.preferred_batch_sizes)) for p in short]

    p99 = np.full((replicas, len(short)), math.inf)
    p50 = np.full((replicas, len(short)), math.inf)
    for r in range(replicas):
        rng = np.random.default_rng([req.seed, 7919, r])
        rreq = _replica_request(req, rng)
        svc = service_of(rreq)
        seed = req.seed + 1 + r
        if isinstance(load.arrivals, ClosedLoop):
            arr: Any = load.head(MAX_REPLICA_REQUESTS)
        elif load.finite:
            arr = load.arrivals
        elif req.arrival_process.startswith("trace:"):
            arr = load.arrivals[:MAX_REPLICA_REQUESTS]
        else:
            arr = make_arrivals(req.arrival_process, load.rate_per_s,
                                min(len(load), MAX_REPLICA_REQUESTS), seed)
        for j, p in enumerate(sweep(cands, svc, arr, seed=seed, rate_per_s=load.rate_per_s,
                                    finite=load.finite,
                                    warmup_fraction=load.warmup_fraction)):
            if p.stable and feasible(p) and p.p99_ms is not None:
                p99[r, j] = p.p99_ms
                p50[r, j] = p.p50_ms if p.p50_ms is not None else math.inf

    # the recommendation: the simplest, replaced only by a material, repeatable gain
    if replicas > 0:
        cur = choose_sequential(p99, order, BEAT_SHARE)
    else:
        cur = next(i for i, p in enumerate(short) if _key(p) == _key(chosen))
    rec = short[cur]

    # each replica's own choice by the same rule (one replica: it must beat outright)
    own = [choose_sequential(p99[r], order) for r in range(replicas)]
    picks = Counter(own)

    def holds(j: int) -> float:
        """Share of replicas in which configuration ``j`` is as good as that replica's
        own choice (its P99 not worse by more than the material gain)."""
        if not replicas:
            return 1.0
        ok = [p99[r, j] <= p99[r, own[r]] * (1.0 + MATERIAL_GAIN) + 0.01
              for r in range(replicas)]
        return float(np.mean(ok))

    share = holds(cur)
    exact = not req.curve.samples_ms and not (req.batch_excess_ms or req.request_delay_ms)
    if exact and replicas > 0:
        cur = exact_choice(p99)
        rec = short[cur]
        share = holds(cur)
    elif share < DECIDED_SHARE and picks:
        # the simpler choice does not hold up: the replicas' most frequent choice (ties:
        # the simpler) is the answer if it holds, else the best guess of a "cannot tell"
        cur = min(picks, key=lambda j: (-picks[j], simplicity(short[j])))
        rec = short[cur]
        share = holds(cur)
    decided = share >= DECIDED_SHARE or (exact and replicas > 0)
    kind = _kind_of(rec)
    kind_share = (sum(n for j, n in picks.items() if _kind_of(short[j]) == kind) / replicas
                  if replicas else 1.0)
    choices = [ReplicaChoice(window_us=short[j].window_us,
                             max_batch_size=short[j].max_batch_size,
                             instances=short[j].instances, share=n / replicas)
               for j, n in picks.most_common()]
    col99 = p99[:, cur][np.isfinite(p99[:, cur])]
    col50 = p50[:, cur][np.isfinite(p50[:, cur])]
    sources = ["simulation (arrivals and draws, a new seed per replica)"]
    if req.curve.samples_ms:
        sources.insert(0, "T(b) medians and spread (raw bench samples)")
    if req.batch_excess_ms or req.request_delay_ms:
        sources.insert(1, "serving overheads (raw serve samples)")
    if exact:
        sources = ["simulation only (arrivals and draws, a new seed per replica): the "
                   "inputs were given, exact; the choice is made on the median P99 over "
                   "the replicas"]
    stab = AdviceStability(
        status="stable" if exact and replicas > 0 else stability_status(share),
        replicas=replicas, share=share,
        chosen_share=picks.get(cur, 0) / replicas if replicas else 1.0,
        kind_share=kind_share, choices=choices,
        p50_ms_range=[float(np.percentile(col50, 10)), float(np.percentile(col50, 90))]
        if col50.size else [],
        p99_ms_range=[float(np.percentile(col99, 10)), float(np.percentile(col99, 90))]
        if col99.size else [],
        resampled=sources, remeasure=[] if decided else _remeasure(req, req.seed),
        tie_break=TIE_BREAK)
    return rec, stab


def exact_choice(p99: np.ndarray) -> int:
    """The choice for exact input (no raw samples): the tie-break rule
    (:func:`choose_sequential`) applied once to each candidate's median P99 over the
    replicas (rows; columns in simplicity order). With the same arrival times for every
    candidate in a replica, the median is a steadier estimate than any one seed; a
    candidate infeasible (``inf``) in most replicas has an infinite median."""
    pooled = np.median(p99, axis=0)
    return choose_sequential(pooled, list(range(pooled.size)))


def _kind_of(p: SimPrediction | Candidate) -> str:
    if p.max_batch_size == 1:
        return "no-batching"
    return "batch-without-waiting" if p.window_us == 0 else "window"
