"""Plain-text rendering of an :class:`~trtcheck.results.advice.Advice` (the ``advise``
command's default format): recommendation with its stability, decision path, predictions,
what-if table, formulas, pitfalls and exported settings. Markdown and HTML come from the
report section (:mod:`trtcheck.report.sec_advice`), which shares the row helpers here."""

from __future__ import annotations

from typing import Any

from trtcheck.analyze.advice.advise import capacity_batch_words
from trtcheck.results.advice import Advice, SimPrediction
from trtcheck.units import sig, us_to_ms


RUN_QPS_NOTE = ("run q/s: completed requests / (first arrival to last response) of the "
                "simulated run, as trtcheck serve measures it; in a short run the last "
                "requests' latency keeps it below the arrival rate even when the "
                "configuration keeps up (utilisation < 1). util(isation): arrival rate / "
                "the configuration's capacity at its max batch (its headroom), not the "
                "share of time an instance is busy")
"""Footnote of the predicted-candidates tables (text, Markdown, HTML)."""


def _ms(x: float | None) -> str:
    if x is None:
        return "-"
    return sig(x)


def prediction_rows(adv: Advice) -> list[tuple[str, SimPrediction]]:
    """``[(label, prediction)]`` for the recommended configuration and the runner-up."""
    rows = [("recommended", adv.recommendation.prediction)]
    if adv.recommendation.runner_up is not None:
        rows.append((f"runner-up ({adv.recommendation.runner_up_kind})",
                     adv.recommendation.runner_up))
    return rows


def config_label(p: SimPrediction) -> str:
    """``"W=2 ms B=16 x4"`` style label of a configuration."""
    return f"W={us_to_ms(p.window_us):g} ms B={p.max_batch_size} x{p.instances}"


def load_label(adv: Advice) -> str:
    """The load in words: ``"200 req/s (poisson)"``, ``"burst:64"``, ``"closed:32:2000"``."""
    i = adv.inputs
    if i.load.startswith(("burst:", "closed:")):
        return (f"{i.load} (requests reach the queue at {sig(i.arrival_rate_per_s, 4)} req/s "
                "in the recommended run)")
    return f"{i.arrival_rate_per_s:g} req/s ({i.arrival_process})"


def what_if_rows(adv: Advice) -> list[dict[str, object]]:
    """One row per what-if prediction: config label, stable, latency, throughput, batch,
    utilisation (``None`` where unstable)."""
    rows = []
    for p in adv.what_if:
        rows.append({"config": config_label(p) + (
            f" pref={','.join(str(x) for x in p.preferred_batch_sizes)}"
            if p.preferred_batch_sizes else ""), "stable": p.stable,
            "p50": p.p50_ms, "p95": p.p95_ms, "p99": p.p99_ms,
            "qps": p.throughput_queries_per_s, "batch": p.mean_batch, "util": p.utilisation})
    return rows


def _interval_lines(p: Any) -> list[str]:
    """The recommendation's prediction interval, when it has one (a live calibration)."""
    if not p.p99_interval_ms or not p.p50_interval_ms:
        return []
    extra = (f"; T(b) x {p.contention_factor:g} ({p.contention_source} contention for "
             f"{p.instances} instances)" if p.contention_factor else "")
    return [f"  prediction interval (95%): P50 {_ms(p.p50_interval_ms[0])}-"
            f"{_ms(p.p50_interval_ms[1])} ms, P99 {_ms(p.p99_interval_ms[0])}-"
            f"{_ms(p.p99_interval_ms[1])} ms{extra}"]


def serve_prediction_lines(adv: Advice) -> list[str]:
    """The predicted-vs-measured lines of the serving configurations in the file the
    advice was made from (``advice.serve_predictions``; empty without them): each
    configuration as measured and as the advice's model predicts it."""
    if not adv.serve_predictions:
        return []
    lw = max([14] + [len(p.load) for p in adv.serve_predictions])
    out = ["", "Predicted vs measured (the serving run in the same file, simulated with "
           "the calibrated model):",
           f"  {'config':22} {'load':{lw}} {'q/s meas/pred':>17} {'batch meas/pred':>15} "
           f"{'P50 ms meas/pred':>17} {'P99 ms meas/pred':>17}"]
    for p in adv.serve_predictions:
        def pair(a: float | None, b: float | None, fmt: str = "ms") -> str:
            if fmt == "ms":
                return f"{_ms(a)} / {_ms(b)}"
            return (f"{a or 0:.{fmt}f} / " + ("-" if b is None else f"{b:.{fmt}f}"))
        out.append(f"  {p.config:22} {p.load:{lw}} "
                   f"{pair(p.measured_throughput_queries_per_s, p.predicted_throughput_queries_per_s, '1'):>17} "
                   f"{pair(p.measured_mean_batch, p.predicted_mean_batch, '2'):>15} "
                   f"{pair(p.measured_p50_ms, p.predicted_p50_ms):>17} "
                   f"{pair(p.measured_p99_ms, p.predicted_p99_ms):>17}")
    if any(p.predicted_p50_ms is None for p in adv.serve_predictions):
        out.append("  - (predicted): over the capacity the calibrated model gives that "
                   "configuration, so nothing was simulated")
    return out


def _waiting_words(adv: Advice) -> str:
    """What the waiting-pays index says, beside it: an average estimate, which the
    recommendation may overrule (a recommended window that pays in the simulated tail
    is never called a window that does not pay)."""
    f, p = adv.formulas, adv.recommendation.prediction
    window = p.window_us > 0 and p.max_batch_size > 1
    if f.waiting_pays_index > 1:
        return (" (> 1: a window pays)" if window else
                " (> 1: on average a window would pay; the simulation finds none better "
                "by more than the noise, see the decision path)")
    if window:
        return (" (<= 1: on average a window collects too few requests to save its wait; "
                "the recommended window pays in the simulated tail, see the decision path)")
    return " (<= 1: by this estimate a window does not pay)"


def stability_lines(adv: Advice) -> list[str]:
    """The recommendation's stability under the measurement noise, in lines of text."""
    st = adv.recommendation.stability
    if st is None:
        rule = adv.recommendation.interval_rule
        return [f"Chosen on: {rule}"] if rule else []
    if any(r.startswith("simulation only") for r in st.resampled):
        lines = [f"Stability: {st.status} - exact input: chosen on the median P99 of "
                 f"{st.replicas} simulation replicas (they differ only in the simulation "
                 f"seed); chosen outright in {st.chosen_share:.0%}"]
    else:
        lines = [f"Stability: {st.status} - the recommendation holds in {st.share:.0%} of "
                 f"{st.replicas} bootstrap replicas (P99 as good as each replica's own "
                 f"choice); chosen outright in {st.chosen_share:.0%}"]
    alts = ", ".join(f"{_choice(ch)} {ch.share:.0%}" for ch in st.choices[:4])
    if alts:
        lines.append(f"  replicas chose: {alts}")
    if st.status != "cannot-tell" and st.p99_ms_range:
        lines.append(f"  recommended P50 {_ms(st.p50_ms_range[0])}-{_ms(st.p50_ms_range[1])} "
                     f"ms, P99 {_ms(st.p99_ms_range[0])}-{_ms(st.p99_ms_range[1])} ms "
                     "(10-90% over replicas)")
    if st.resampled:
        lines.append("  resampled: " + "; ".join(st.resampled))
    for m in st.remeasure:
        lines.append(f"  re-measure: {m}")
    if st.tie_break:
        lines.append(f"  tie-break: {st.tie_break}")
    return lines


def _choice(ch: object) -> str:
    w = us_to_ms(getattr(ch, "window_us"))
    b = getattr(ch, "max_batch_size")
    n = getattr(ch, "instances")
    return f"W={w:g} ms B={b} x{n}"


def advice_text(adv: Advice) -> str:
    """Human-readable advice: recommendation, stability, decision path, predictions,
    what-if, formulas, pitfalls and exported settings. When the stability is
    ``cannot-tell`` the recommendation's latencies are shown as replica ranges only."""
    i, c, f, r = adv.inputs, adv.curve, adv.formulas, adv.recommendation
    undecided = r.stability is not None and r.stability.status == "cannot-tell"
    pts = ", ".join(f"{b}: {sig(t, 4)} ms" for b, t in sorted(c.points_ms.items()))
    r2 = f"R^2 {c.r2:.3f}, " if c.r2 is not None else ""
    lines = [
        f"trtcheck advise: {load_label(adv)}"
        + (f", P99 objective {i.slo_p99_ms:g} ms" if i.slo_p99_ms else ""),
        f"T(b) from {c.source}: {pts}",
        f"  fit T(b) = {sig(c.tau0_ms, 4)} ms + {sig(c.alpha_ms_per_sample, 4)} ms x b "
        f"({r2}largest residual {c.max_rel_residual:.1%})",
        f"overheads ({i.overheads_source}): per request {sig(i.per_request_overhead_ms)} ms"
        + (" (serial)" if i.ingress_per_request_us > 0 else "")
        + f", per batch {sig(i.per_batch_overhead_ms)} ms"
        + (" (executions ran faster than the bench's T(b))" if i.per_batch_overhead_ms < 0
           else "")
        + f", per item {sig(i.per_item_overhead_ms)} ms"
        + (f", timer slack {i.timer_slack_us:g} us" if i.timer_slack_us else ""),
        "",
        f"Recommendation [{'cannot-tell' if undecided else r.kind}]: {r.summary}",
        *_interval_lines(r.prediction),
        *stability_lines(adv),
        "",
        "Decision path:",
    ]
    for k, n in enumerate(adv.path, 1):
        val = "" if n.value is None else f" [{sig(n.value, 4)}"
        if val and n.threshold is not None:
            val += f" vs {sig(n.threshold, 4)}"
        val += "]" if val else ""
        lines.append(f"  {k}. ({n.step}) {n.question} -> {n.answer}{val}")
        lines.append(f"     {n.conclusion}")
    lines += ["", f"Predicted (simulated, {adv.simulated_requests} requests per candidate, "
              f"{len(adv.candidates)} candidates):"]
    rows = prediction_rows(adv)
    lw = max([28] + [len(label) for label, _ in rows])  # the runner-up's kind can be long
    head = (f"  {'':{lw}} {'config':22} {'P50 ms':>8} {'P95 ms':>8} {'P99 ms':>8} "
            f"{'run q/s':>8} {'batch':>6} {'max':>4} {'queue':>6} {'util':>5}")
    lines.append(head)
    for label, p in rows:
        if undecided and label == "recommended":
            st = r.stability
            rng = (f"P99 {_ms(st.p99_ms_range[0])}-{_ms(st.p99_ms_range[1])} ms over replicas"
                   if st and st.p99_ms_range else "")
            lines.append(f"  {label:{lw}} {config_label(p):22} cannot tell ({rng})")
            continue
        if not p.stable:
            lines.append(f"  {label:{lw}} {config_label(p):22} unstable (utilisation "
                         f"{p.utilisation:.2f})")
            continue
        lines.append(f"  {label:{lw}} {config_label(p):22} {_ms(p.p50_ms):>8} {_ms(p.p95_ms):>8} "
                     f"{_ms(p.p99_ms):>8} {p.throughput_queries_per_s or 0:>8.0f} "
                     f"{p.mean_batch or 0:>6.2f} {p.max_batch or 0:>4} "
                     f"{p.mean_queue_len or 0:>6.2f} {p.utilisation:>5.2f}")
        if label != "recommended":  # the recommendation's interval stands under it above
            lines += [f"  {'':{lw}} {ln.strip()}" for ln in _interval_lines(p)]
    lines.append(f"  {RUN_QPS_NOTE}")
    lines += serve_prediction_lines(adv)
    if adv.what_if:
        lines += ["", f"What-if (simulated at {load_label(adv)}, the configurations asked for):",
                  f"  {'config':30} {'P50 ms':>8} {'P95 ms':>8} {'P99 ms':>8} {'run q/s':>8} "
                  f"{'batch':>6} {'util':>5}"]
        for row in what_if_rows(adv):
            if not row["stable"]:
                lines.append(f"  {row['config']:30} unstable: the load exceeds its capacity "
                             f"(utilisation {row['util']:.2f})")
                continue
            lines.append(f"  {row['config']:30} {_ms(row['p50']):>8} {_ms(row['p95']):>8} "  # type: ignore[arg-type]
                         f"{_ms(row['p99']):>8} {row['qps'] or 0:>8.1f} "  # type: ignore[arg-type]
                         f"{row['batch'] or 0:>6.2f} {row['util']:>5.2f}")
        intervals = [p for p in adv.what_if if p.p99_interval_ms]
        if intervals:
            lines.append("  prediction intervals (95%; docs/advise.md):")
            for p in intervals:
                f50, f99 = p.p50_interval_ms or [0.0, 0.0], p.p99_interval_ms or [0.0, 0.0]
                extra = (f"; T(b) x {p.contention_factor:g} ({p.contention_source} contention)"
                         if p.contention_factor else "")
                lines.append(f"  {config_label(p):30} P50 {_ms(f50[0])}-{_ms(f50[1])} ms, "
                             f"P99 {_ms(f99[0])}-{_ms(f99[1])} ms{extra}")
    lines += ["", "Formulas (trtcheck.analyze.advice.queueing):",
              f"  queue-formation ratio lambda x S(1) (per instance) = "
              f"{sig(f.queue_formation_ratio, 4)}"
              + (f", S(1) = {sig(f.s1_ms, 4)} ms simulated execution at batch 1"
                 if f.s1_ms is not None else ""),
              f"  waiting pays index lambda x tau0 (per instance) = {sig(f.waiting_pays_index, 4)}"
              + _waiting_words(adv),
              f"  break-even window of a full max batch (b-1) x tau0 = "
              f"{sig(us_to_ms(f.break_even_window_us_at_max_batch), 4)} ms (a longer wait "
              "costs more than a full batch saves; a batch that does not fill saves less)"]
    if f.single_request_batch_share_at_window is not None:
        lines.append(f"  single-request windows e^(-lambda W) = "
                     f"{sig(f.single_request_batch_share_at_window)}")
    if f.natural_batch_no_wait is not None:
        nb = f.natural_batch_no_wait
        lines.append(f"  natural batch without waiting lambda tau0 / (1 - lambda alpha) = "
                     f"{sig(nb)}" + (" (< 1: the queue is mostly empty, batches of one)"
                                    if nb < 1 and f.queue_formation_ratio < 1 else ""))
    cap = (f"  capacity per instance = {f.capacity_per_instance_per_s:.0f} req/s at "
           + capacity_batch_words(sorted(adv.curve.points_ms), f.capacity_batch_size,
                                  any(p.code == "uncalibrated-batch-sizes"
                                      for p in adv.pitfalls)))
    if i.ingress_per_request_us > 0:  # a serial per-request overhead caps each process first
        serial_cap = 1e6 / i.ingress_per_request_us
        cap += (f" (execution alone); with the {sig(i.ingress_per_request_us / 1000)} ms serial "
                f"per-request overhead one serving process passes at most {serial_cap:.0f} "
                f"req/s, so {min(serial_cap, f.capacity_per_instance_per_s):.0f} req/s per "
                "process in all")
    lines.append(cap + f"; instances needed >= {f.instances_needed_min} (at the utilisation "
                 "target)")
    if adv.gpus_implied is not None and not i.load.startswith(("burst:", "closed:")):
        n = adv.gpus_implied
        what = ({"gpu": "GPU", "cpu": "process (CPU)"}.get(i.device or "", "GPU or process")
                if n == 1 else
                {"gpu": "GPUs", "cpu": "processes (CPU)"}.get(i.device or "", "GPUs or processes"))
        lines.append(f"  this curve implies {n} instance{'s' if n != 1 else ''}, i.e. {what}, "
                     f"for {i.arrival_rate_per_s:g} req/s at full utilisation")
    if c.notes:
        lines += ["", "Notes:"] + [f"  - {n}" for n in c.notes]
    if adv.pitfalls:
        lines += ["", "Pitfalls that apply:"]
        for p in adv.pitfalls:
            lines.append(f"  - [{p.severity}] {p.message}" + (f"; {p.remedy}" if p.remedy else ""))
    if adv.export is not None:
        lines += ["", "Triton config.pbtxt:"]
        lines += ["  " + ln for ln in adv.export.triton_config_pbtxt.rstrip().splitlines()]
        lines += ["", "Ray Serve:"]
        lines += ["  " + ln for ln in adv.export.ray_serve_python.rstrip().splitlines()]
        lines += ["", "TorchServe config.properties:"]
        lines += ["  " + ln for ln in adv.export.torchserve_config.rstrip().splitlines()]
    return "\n".join(lines)


def advice_extras_markdown(adv: Advice) -> str:
    """Markdown of the stability record (or the interval rule the choice was made by)
    and the what-if table (appended to the report section's advice Markdown by
    ``advise --format md``); empty when none exists."""
    out: list[str] = []
    st = adv.recommendation.stability
    if st is not None:
        out += ["### Stability", ""]
        out += [f"- {ln.strip()}" for ln in stability_lines(adv)]
        out.append("")
    elif adv.recommendation.interval_rule:
        out += ["### Chosen on", "", f"- {adv.recommendation.interval_rule}", ""]
    rows = what_if_rows(adv)
    if rows:
        # the 95% prediction intervals beside the points, as the text output lists them
        ivs = any(p.p50_interval_ms and p.p99_interval_ms for p in adv.what_if)
        out += ["### What-if", "", f"Simulated at {load_label(adv)}"
                + ("; intervals 95% (docs/advise.md)" if ivs else "") + ".", "",
                "| config | P50 ms | P95 ms | P99 ms | run q/s | mean batch | utilisation |"
                + (" P50 interval ms | P99 interval ms | contention |" if ivs else ""),
                "|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---|" if ivs else "")]
        for r, p in zip(rows, adv.what_if):
            if not r["stable"]:
                out.append(f"| {r['config']} | unstable | | | | | {r['util']:.2f} |"
                           + (" | | |" if ivs else ""))
                continue
            line = (f"| {r['config']} | {_ms(r['p50'])} | {_ms(r['p95'])} | "  # type: ignore[arg-type]
                    f"{_ms(r['p99'])} | {r['qps'] or 0:.1f} | {r['batch'] or 0:.2f} | "  # type: ignore[arg-type]
                    f"{r['util']:.2f} |")
            if ivs:
                f50, f99 = p.p50_interval_ms, p.p99_interval_ms
                line += (f" {_ms(f50[0])}-{_ms(f50[1])} | {_ms(f99[0])}-{_ms(f99[1])} | "
                         if f50 and f99 else " | | ")
                line += (f"T(b) x {p.contention_factor:g} ({p.contention_source}) |"
                         if p.contention_factor else " |")
            out.append(line)
        out.append("")
    return "\n".join(out)
