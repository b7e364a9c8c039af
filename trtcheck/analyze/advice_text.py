"""Plain-text rendering of an :class:`~trtcheck.results.advice.Advice` (the CLI's
default format). Markdown and HTML come from the report section (sec_advice)."""

from __future__ import annotations

from trtcheck.results.advice import Advice, SimPrediction


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
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def prediction_rows(adv: Advice) -> list[tuple[str, SimPrediction]]:
    """``[(label, prediction)]`` for the recommended configuration and the runner-up."""
    rows = [("recommended", adv.recommendation.prediction)]
    if adv.recommendation.runner_up is not None:
        rows.append((f"runner-up ({adv.recommendation.runner_up_kind})",
                     adv.recommendation.runner_up))
    return rows


def config_label(p: SimPrediction) -> str:
    """``"W=2 ms B=16 x4"`` style label of a configuration."""
    return f"W={p.window_us / 1000:g} ms B={p.max_batch_size} x{p.instances}"


def advice_text(adv: Advice) -> str:
    """Human-readable advice: recommendation, decision path, predictions, formulas,
    pitfalls and exported settings."""
    i, c, f, r = adv.inputs, adv.curve, adv.formulas, adv.recommendation
    pts = ", ".join(f"{b}: {t:.4g} ms" for b, t in sorted(c.points_ms.items()))
    r2 = f"R^2 {c.r2:.3f}, " if c.r2 is not None else ""
    lines = [
        f"trtcheck advise: {i.arrival_rate_per_s:g} req/s ({i.arrival_process})"
        + (f", P99 objective {i.slo_p99_ms:g} ms" if i.slo_p99_ms else ""),
        f"T(b) from {c.source}: {pts}",
        f"  fit T(b) = {c.tau0_ms:.4g} ms + {c.alpha_ms_per_sample:.4g} ms x b "
        f"({r2}largest residual {c.max_rel_residual:.1%})",
        f"overheads ({i.overheads_source}): per request {i.per_request_overhead_ms:.3g} ms"
        + (" (serial)" if i.ingress_per_request_us > 0 else "")
        + f", per batch {i.per_batch_overhead_ms:.3g} ms"
        + (" (executions ran faster than the bench's T(b))" if i.per_batch_overhead_ms < 0
           else "")
        + f", per item {i.per_item_overhead_ms:.3g} ms"
        + (f", timer slack {i.timer_slack_us:g} us" if i.timer_slack_us else ""),
        "",
        f"Recommendation [{r.kind}]: {r.summary}",
        "",
        "Decision path:",
    ]
    for k, n in enumerate(adv.path, 1):
        val = "" if n.value is None else f" [{n.value:.4g}"
        if val and n.threshold is not None:
            val += f" vs {n.threshold:.4g}"
        val += "]" if val else ""
        lines.append(f"  {k}. ({n.step}) {n.question} -> {n.answer}{val}")
        lines.append(f"     {n.conclusion}")
    lines += ["", f"Predicted (simulated, {adv.simulated_requests} requests per candidate, "
              f"{len(adv.candidates)} candidates):"]
    head = (f"  {'':28} {'config':22} {'P50 ms':>8} {'P95 ms':>8} {'P99 ms':>8} "
            f"{'run q/s':>8} {'batch':>6} {'max':>4} {'queue':>6} {'util':>5}")
    lines.append(head)
    for label, p in prediction_rows(adv):
        if not p.stable:
            lines.append(f"  {label:28} {config_label(p):22} unstable (utilisation "
                         f"{p.utilisation:.2f})")
            continue
        lines.append(f"  {label:28} {config_label(p):22} {_ms(p.p50_ms):>8} {_ms(p.p95_ms):>8} "
                     f"{_ms(p.p99_ms):>8} {p.throughput_queries_per_s or 0:>8.0f} "
                     f"{p.mean_batch or 0:>6.2f} {p.max_batch or 0:>4} "
                     f"{p.mean_queue_len or 0:>6.2f} {p.utilisation:>5.2f}")
    lines.append(f"  {RUN_QPS_NOTE}")
    lines += ["", "Formulas (trtcheck.analyze.queueing):",
              f"  queue-formation ratio lambda x T(1) = {f.queue_formation_ratio:.4g}",
              f"  waiting pays index lambda x tau0 (per instance) = {f.waiting_pays_index:.4g}"
              + (" (> 1: a window pays)" if f.waiting_pays_index > 1 else
                 " (<= 1: by this estimate a window does not pay)"),
              f"  longest paying window at max batch (b-1) x tau0 = "
              f"{f.break_even_window_ms_at_max_batch:.4g} ms"]
    if f.single_request_batch_share_at_window is not None:
        lines.append(f"  single-request windows e^(-lambda W) = "
                     f"{f.single_request_batch_share_at_window:.3g}")
    if f.natural_batch_no_wait is not None:
        nb = f.natural_batch_no_wait
        lines.append(f"  natural batch without waiting lambda tau0 / (1 - lambda alpha) = "
                     f"{nb:.3g}" + (" (< 1: the queue is mostly empty, batches of one)"
                                    if nb < 1 else ""))
    lines.append(f"  capacity per instance = {f.capacity_per_instance_per_s:.0f} req/s at "
                 f"batch {f.capacity_batch_size}; instances needed >= "
                 f"{f.instances_needed_min} (at the utilisation target)")
    if adv.gpus_implied is not None:
        lines.append(f"  a single GPU's curve implies {adv.gpus_implied} instance(s)/GPU(s) "
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
