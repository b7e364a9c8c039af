"""Text, Markdown and the report view of a ``trtcheck tune`` search
(:class:`~trtcheck.results.tune.TuneResult`): the pick with its measured
P50/P99/throughput beside the prediction and its interval, the runner-up, why, the
calibration and every live run."""

from __future__ import annotations

from typing import Any

from trtcheck.analyze.tune_plan import IDLE_SLOWDOWN_MAX
from trtcheck.report.views import TuneCalibrationRow, TuneConfigRow, TuneRunRow, TuneView
from trtcheck.results.tune import live_run_labels
from trtcheck.units import sig, us_to_ms

#: the report section's title
TITLE = "Tune: calibrate, predict, confirm"


def config_words(p: Any) -> str:
    """``window 1 ms, max batch 2, 3 instances`` (a pick or a prediction)."""
    n = p.instances
    return (f"window {us_to_ms(p.window_us):g} ms, max batch {p.max_batch_size}, {n} "
            f"instance{'s' if n != 1 else ''}")


def interval_words(iv: Any) -> str:
    """``6.12 ms [3.92, 8.32]`` (a prediction interval), ``n/a`` without one."""
    return "n/a" if iv is None else f"{sig(iv.point_ms)} ms [{sig(iv.lo_ms)}, {sig(iv.hi_ms)}]"


def headline(t: Any) -> str:
    """The search in one sentence: model, server, rate, objective, search range."""
    slo = f", P99 objective {t.slo_p99_ms:g} ms" if t.slo_p99_ms is not None else ""
    return (f"tune {t.model} at {t.url}: {t.arrival_rate_per_s:g} req/s{slo}, objective "
            f"{t.objective}, up to {t.max_instances} instance(s), max batch up to "
            f"{t.max_batch_size} ({t.max_batch_source}'s)")


def tune_lines(t: Any) -> list[str]:
    """The search as text lines (``t``: a :class:`~trtcheck.results.tune.TuneResult`)."""
    out = [headline(t)]
    pick = t.pick
    if pick is None:
        out.append("no configuration picked")
    else:
        p = pick.predicted
        out.append(f"pick: {config_words(pick)}")
        m = pick.measured
        if m is not None:
            def mark(ok: bool) -> str:
                return "inside" if ok else "OUTSIDE"

            out.append(f"  measured:  P50 {sig(m.p50_ms)} ms, P99 {sig(m.p99_ms)} ms, "
                       f"{sig(m.throughput_queries_per_s, 4)} q/s, mean batch {sig(m.mean_batch)} "
                       f"({m.requests} requests; P50 {mark(m.p50_inside)}, P99 "
                       f"{mark(m.p99_inside)} the interval)")
        else:
            out.append("  measured:  not measured")
        out.append(f"  predicted: P50 {interval_words(p.p50)}, P99 {interval_words(p.p99)}, "
                   f"{sig((p.throughput_queries_per_s or 0), 4)} q/s, mean batch "
                   f"{sig((p.mean_batch or 0))}, capacity {sig(p.capacity_queries_per_s, 4)} req/s")
    r = t.runner_up
    if r is not None:
        out.append(f"runner-up: {config_words(r)}: predicted P50 {interval_words(r.p50)}, "
                   f"P99 {interval_words(r.p99)}, "
                   f"capacity {sig(r.capacity_queries_per_s, 4)} req/s")
    if t.why:
        out.append("why:")
        out += [f"  - {w}" for w in t.why]
    c = t.calibration
    if c is not None:
        out.append(f"calibration: {c.device}, contention per extra instance "
                   f"{sig(c.contention_per_instance)} ({c.contention_source}), run-to-run "
                   f"drift P50 {c.drift_p50_rel:.1%} P99 {c.drift_p99_rel:.1%}, "
                   f"{sig(c.per_batch_overhead_ms)} ms per execution outside compute (after "
                   f"its responses), per-request delay median {sig(c.request_delay_median_ms)} ms")
        if c.idle_source == "fitted":
            out.append(f"  idle slowdown {sig(c.idle_slowdown)} ({_idle_how(c)}): an "
                       "execution on an "
                       f"instance idle for g ms takes 1 + {sig(c.idle_slowdown)} x "
                       f"(1 - exp(-g / {c.idle_tau_ms:g})) times T(b) below, which is a busy "
                       "instance's")
        elif c.idle_source == "rejected":
            out.append(f"  idle slowdown: none ({_IDLE_REJECTED})")
        elif c.idle_source == "contradicted":
            out.append(f"  idle slowdown: none ({_IDLE_CONTRADICTED})")
        for ic in c.per_instances:
            pts = ", ".join(f"{b}:{sig(v)}" for b, v in zip(ic.batch_sizes, ic.t_ms))
            out.append(f"  {ic.instances} instance(s): T(b) ms {pts} (x{sig(ic.contention_factor)}"
                       f", {ic.source})")
    out.append(f"live runs: {t.live_runs} in {t.wall_s:.1f} s; original configuration "
               f"{'restored' if t.restored else 'NOT restored (check the server)'}")
    for label, run, why in zip(live_run_labels(t.runs), t.runs, t.run_purposes):
        cfg = run.configs[0]
        lat = [r.latency for r in cfg.repeats if r.latency]
        p50 = "/".join(f"{sig(x.median_ms)}" for x in lat) or "n/a"
        p99 = "/".join(f"{sig(x.p99_ms)}" for x in lat) or "n/a"
        mb = "/".join(f"{sig(r.mean_batch_size)}" for r in cfg.repeats)
        word = "runs" if "-" in label else "run"
        out.append(f"  {word} {label}: {why}: {cfg.load.label}, window {us_to_ms(cfg.window_us):g} "
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
    """The search as Markdown: the report's tune section (tables of the pick, the
    runner-up, T(b) per instance count and the live runs) under a heading."""
    from trtcheck.report.sections import render_markdown_partial

    return "## Tune\n\n" + render_markdown_partial("tune", TITLE, tune_view(t)).strip() + "\n"



def _n(v: float | None, fmt: str, unit: str = "") -> str:
    return "-" if v is None else format(v, fmt) + unit


def _pick_rows(t: Any) -> list[TuneConfigRow]:
    rows: list[TuneConfigRow] = []
    pick = t.pick
    if pick is not None:
        m, p = pick.measured, pick.predicted
        if m is None:
            rows.append(TuneConfigRow(what="measured", config=config_words(pick), p50="-",
                                      p99="-", throughput="-", mean_batch="-",
                                      detail="not measured"))
        else:
            def mark(ok: bool) -> str:
                return "inside" if ok else "OUTSIDE"

            rows.append(TuneConfigRow(
                what="measured", config=config_words(pick),
                p50=f"{sig(m.p50_ms)} ms ({mark(m.p50_inside)})",
                p99=f"{sig(m.p99_ms)} ms ({mark(m.p99_inside)})",
                throughput=f"{sig(m.throughput_queries_per_s, 4)} q/s",
                mean_batch=f"{sig(m.mean_batch)}", detail=f"{m.requests} requests"))
        rows.append(_predicted_row("predicted", p))
    if t.runner_up is not None:
        rows.append(_predicted_row("runner-up (predicted)", t.runner_up))
    return rows


def _predicted_row(what: str, p: Any) -> TuneConfigRow:
    return TuneConfigRow(
        what=what, config=config_words(p), p50=interval_words(p.p50),
        p99=interval_words(p.p99), throughput=_n(p.throughput_queries_per_s, ".4g", " q/s"),
        mean_batch=_n(p.mean_batch, ".3g"),
        detail=f"capacity {sig(p.capacity_queries_per_s, 4)} req/s")


def _run_row(label: str, run: Any, purpose: str) -> TuneRunRow:
    cfg = run.configs[0]
    lat = [r.latency for r in cfg.repeats if r.latency]
    return TuneRunRow(
        live_runs=label, purpose=purpose, load=cfg.load.label,
        window_ms=f"{us_to_ms(cfg.window_us):g}", max_batch=cfg.max_batch_size,
        instances=cfg.instances or 1,
        p50_ms="/".join(f"{sig(x.median_ms)}" for x in lat) or "n/a",
        p99_ms="/".join(f"{sig(x.p99_ms)}" for x in lat) or "n/a",
        mean_batch="/".join(f"{sig(r.mean_batch_size)}" for r in cfg.repeats))


def tune_view(t: Any) -> TuneView:
    """The view of the tune section: tables of the pick (measured, predicted), the
    runner-up, T(b) per instance count and the live runs; lists of reasons and notes."""
    c = t.calibration
    calibration = idle = None
    cal_rows: list[TuneCalibrationRow] = []
    if c is not None:
        calibration = (f"{c.device}, contention per extra instance "
                       f"{sig(c.contention_per_instance)} ({c.contention_source}), run-to-run "
                       f"drift P50 {c.drift_p50_rel:.1%} P99 {c.drift_p99_rel:.1%}, "
                       f"{sig(c.per_batch_overhead_ms)} ms per execution outside compute "
                       f"(after its responses), per-request delay median {sig(c.request_delay_median_ms)} ms")
        if c.idle_source == "fitted":
            idle = (f"idle slowdown {sig(c.idle_slowdown)} ({_idle_how(c)}): an execution on an "
                    f"instance idle for g ms takes 1 + {sig(c.idle_slowdown)} x "
                    f"(1 - exp(-g / {c.idle_tau_ms:g})) times T(b) below, which is a busy "
                    "instance's")
        elif c.idle_source == "rejected":
            idle = f"idle slowdown: none ({_IDLE_REJECTED})"
        elif c.idle_source == "contradicted":
            idle = f"idle slowdown: none ({_IDLE_CONTRADICTED})"
        cal_rows = [TuneCalibrationRow(
            instances=ic.instances,
            points=", ".join(f"{b}: {sig(v)}" for b, v in zip(ic.batch_sizes, ic.t_ms)) or "-",
            contention=f"x{sig(ic.contention_factor)}", source=ic.source)
            for ic in c.per_instances]
    return TuneView(
        headline=headline(t),
        pick=config_words(t.pick) if t.pick is not None else None,
        rows=_pick_rows(t), why=list(t.why), calibration=calibration, idle=idle,
        calibration_rows=cal_rows,
        runs_summary=(f"{t.live_runs} live run(s) in {t.wall_s:.1f} s; original "
                      "configuration "
                      f"{'restored' if t.restored else 'NOT restored (check the server)'}"),
        runs=[_run_row(label, run, why) for label, run, why in
              zip(live_run_labels(t.runs), t.runs, t.run_purposes)],
        notes=list(t.notes))


_IDLE_CONTRADICTED = ("the closed loop at 1 instance, which keeps its instance busy, ran "
                      "slower than its fit's busy T(b): the run at more instances' whole "
                      "ratio is the contention factor, see notes")
_IDLE_REJECTED = (f"its fit reached the upper bound {IDLE_SLOWDOWN_MAX:g} without explaining "
                  "the run at more instances: that run's whole ratio is the contention "
                  "factor, see notes")


def _idle_how(c: Any) -> str:
    """How the idle slowdown of a tune calibration was obtained, in words (the text and
    the Markdown say the same)."""
    if c.idle_slowdown >= IDLE_SLOWDOWN_MAX:
        return (f"fitted, clipped at its upper bound {IDLE_SLOWDOWN_MAX:g}: the rest is left "
                "to the contention factor, see notes")
    return "fitted"
