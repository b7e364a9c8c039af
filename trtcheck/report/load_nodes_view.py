"""Per-node figures of a live target's load from a Ray cluster (``serve --url ... --ray``):
the rows the serving section and the text summary show, one per actor of each
configuration's median repeat (:class:`trtcheck.results.load_nodes.DistributedLoad`)."""

from __future__ import annotations

from trtcheck.report.views import LiveNodeRow
from trtcheck.results.serve import ServeRun
from trtcheck.units import us_to_ms


def node_rows(run: ServeRun) -> list[LiveNodeRow]:
    """One row per Ray load actor of every configuration's median repeat (empty for a
    run without ``--ray``)."""
    rows: list[LiveNodeRow] = []
    for c in run.configs:
        d = c.repeats[c.median_repeat].distributed
        if d is None:
            continue
        for n in d.nodes:
            rows.append(LiveNodeRow(
                load=c.load.label, window_ms=us_to_ms(c.window_us),
                max_batch_size=c.max_batch_size, instances=c.instances, actor=n.actor,
                node=f"{n.hostname or '?'}/{n.node_ip or '?'} {n.node_id[:8]}",
                scheduled=n.scheduled_requests, sent=n.sent_requests, ok=n.ok_requests,
                lost=n.lost_requests, lost_reason=n.lost_reason,
                late_pct=(100.0 * n.late_sends / n.sent_requests
                          if n.sent_requests and n.send_lag_p99_ms is not None else None),
                send_lag_p99_ms=n.send_lag_p99_ms, sent_per_s=n.achieved_send_rate_per_s,
                p50_ms=n.p50_ms, p99_ms=n.p99_ms,
                cpu_pct=None if n.load_cpu_share is None else 100.0 * n.load_cpu_share,
                clock_offset_ms=n.clock_offset_ms,
                clock_offset_error_ms=n.clock_offset_error_ms,
                start_skew_ms=n.start_skew_ms))
    return rows


def node_table_text(run: ServeRun) -> list[str]:
    """Text lines of the per-node table (none without ``--ray``)."""
    rows = node_rows(run)
    if not rows:
        return []

    def f(v: float | None, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)

    head = (f"{'load':<16} {'actor':>5} {'node':<28} {'sched':>6} {'sent':>6} {'ok':>6} "
            f"{'lost':>5} {'late':>6} {'lag99_ms':>8} {'sent/s':>8} {'p50_ms':>7} "
            f"{'p99_ms':>7} {'cpu':>5} {'clock_ms':>13} {'skew_ms':>7}")
    lines = ["", f"ray load: {run.live.ray_actors if run.live else len(rows)} actor(s) "
             f"on cluster {run.live.ray_address if run.live else '?'} (median repeat)",
             head, "-" * len(head)]
    for r in rows:
        late = "-" if r.late_pct is None else f"{r.late_pct:.1f}%"
        cpu = "-" if r.cpu_pct is None else f"{r.cpu_pct:.0f}%"
        clock = ("-" if r.clock_offset_ms is None else
                 f"{r.clock_offset_ms:+.2f}\u00b1{r.clock_offset_error_ms or 0:.2f}")
        lines.append(
            f"{r.load[:16]:<16} {r.actor:>5} {r.node[:28]:<28} {r.scheduled:>6} "
            f"{r.sent:>6} {r.ok:>6} {r.lost:>5} {late:>6} "
            f"{f(r.send_lag_p99_ms, '.2f'):>8} {f(r.sent_per_s, '.1f'):>8} "
            f"{f(r.p50_ms, '.2f'):>7} {f(r.p99_ms, '.2f'):>7} "
            f"{cpu:>5} {clock:>13} "
            f"{f(r.start_skew_ms, '.2f'):>7}")
        if r.lost_reason:
            lines.append(f"{'':<16} {'':>5} lost: {r.lost_reason}")
    lines.append("sched/sent/ok/lost: the actor's requests; late, lag99_ms, sent/s: its "
                 "sends against its share of the schedule; cpu: its sender's CPU time / "
                 "wall time (near 100%: the sender was the limit); clock_ms: node clock - "
                 "driver clock \u00b1 bound; skew_ms: its start after the common epoch.")
    return lines
