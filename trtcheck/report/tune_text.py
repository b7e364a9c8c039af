"""Text and Markdown of a ``trtcheck tune`` search (:class:`~trtcheck.results.tune.TuneResult`):
the pick with its measured P50/P99/throughput beside the prediction and its interval,
the runner-up, why, the calibration and every live run."""

from __future__ import annotations

from typing import Any

from trtcheck.analyze.tune_plan import IDLE_SLOWDOWN_MAX
from trtcheck.units import us_to_ms


def _cfg(p: Any) -> str:
    n = p.instances
    return (f"window {us_to_ms(p.window_us):g} ms, max batch {p.max_batch_size}, {n} "
            f"instance{'s' if n != 1 else ''}")


def _iv(iv: Any) -> str:
    return "n/a" if iv is None else f"{iv.point_ms:.3g} ms [{iv.lo_ms:.3g}, {iv.hi_ms:.3g}]"


def tune_lines(t: Any) -> list[str]:
    """The search as text lines (``t``: a :class:`~trtcheck.results.tune.TuneResult`)."""
    slo = f", P99 objective {t.slo_p99_ms:g} ms" if t.slo_p99_ms is not None else ""
    out = [f"tune {t.model} at {t.url}: {t.arrival_rate_per_s:g} req/s{slo}, objective "
           f"{t.objective}, up to {t.max_instances} instance(s), max batch up to "
           f"{t.max_batch_size} ({t.max_batch_source}'s)"]
    pick = t.pick
    if pick is None:
        out.append("no configuration picked")
    else:
        p = pick.predicted
        out.append(f"pick: {_cfg(pick)}")
        m = pick.measured
        if m is not None:
            def mark(ok: bool) -> str:
                return "inside" if ok else "OUTSIDE"

            out.append(f"  measured:  P50 {m.p50_ms:.3g} ms, P99 {m.p99_ms:.3g} ms, "
                       f"{m.throughput_queries_per_s:.4g} q/s, mean batch {m.mean_batch:.3g} "
                       f"({m.requests} requests; P50 {mark(m.p50_inside)}, P99 "
                       f"{mark(m.p99_inside)} the interval)")
        else:
            out.append("  measured:  not measured")
        out.append(f"  predicted: P50 {_iv(p.p50)}, P99 {_iv(p.p99)}, "
                   f"{(p.throughput_queries_per_s or 0):.4g} q/s, mean batch "
                   f"{(p.mean_batch or 0):.3g}, capacity {p.capacity_queries_per_s:.4g} req/s")
    r = t.runner_up
    if r is not None:
        out.append(f"runner-up: {_cfg(r)}: predicted P50 {_iv(r.p50)}, P99 {_iv(r.p99)}, "
                   f"capacity {r.capacity_queries_per_s:.4g} req/s")
    if t.why:
        out.append("why:")
        out += [f"  - {w}" for w in t.why]
    c = t.calibration
    if c is not None:
        out.append(f"calibration: {c.device}, contention per extra instance "
                   f"{c.contention_per_instance:.3g} ({c.contention_source}), run-to-run "
                   f"drift P50 {c.drift_p50_rel:.1%} P99 {c.drift_p99_rel:.1%}, "
                   f"{c.per_batch_overhead_ms:.3g} ms per execution outside compute, "
                   f"per-request delay median {c.request_delay_median_ms:.3g} ms")
        if c.idle_source == "fitted":
            clipped = c.idle_slowdown >= IDLE_SLOWDOWN_MAX
            how = (f"fitted, clipped at its upper bound {IDLE_SLOWDOWN_MAX:g}: the rest is "
                   "treated as contention, see notes" if clipped else "fitted")
            out.append(f"  idle slowdown {c.idle_slowdown:.3g} ({how}): an execution on an "
                       f"instance idle for g ms takes 1 + {c.idle_slowdown:.3g} x "
                       f"(1 - exp(-g / {c.idle_tau_ms:g})) times T(b) below, which is a busy "
                       "instance's")
        for ic in c.per_instances:
            pts = ", ".join(f"{b}:{v:.3g}" for b, v in zip(ic.batch_sizes, ic.t_ms))
            out.append(f"  {ic.instances} instance(s): T(b) ms {pts} (x{ic.contention_factor:.3g}"
                       f", {ic.source})")
    out.append(f"live runs: {t.live_runs} in {t.wall_s:.1f} s; original configuration "
               f"{'restored' if t.restored else 'NOT restored (check the server)'}")
    for i, (run, why) in enumerate(zip(t.runs, t.run_purposes)):
        cfg = run.configs[0]
        lat = [r.latency for r in cfg.repeats if r.latency]
        p50 = "/".join(f"{x.median_ms:.3g}" for x in lat) or "n/a"
        p99 = "/".join(f"{x.p99_ms:.3g}" for x in lat) or "n/a"
        mb = "/".join(f"{r.mean_batch_size:.3g}" for r in cfg.repeats)
        out.append(f"  run {i}: {why}: {cfg.load.label}, window {us_to_ms(cfg.window_us):g} "
                   f"ms, max batch {cfg.max_batch_size}, {cfg.instances or 1} instance(s): "
                   f"P50 {p50} ms, P99 {p99} ms, mean batch {mb}")
    if t.notes:
        out.append("notes:")
        out += [f"  - {n}" for n in t.notes]
    return out


def tune_text(t: Any) -> str:
    """The search as plain text."""
    return "\n".join(tune_lines(t)) + "\n"


def tune_markdown(t: Any) -> str:
    """The search as Markdown (the same lines, as a list under a heading)."""
    lines = tune_lines(t)
    return "## Tune\n\n" + lines[0] + "\n\n" + "\n".join(
        ("- " + ln.strip()) if not ln.startswith("  ") else ("  " + ln) for ln in lines[1:]
    ) + "\n"
