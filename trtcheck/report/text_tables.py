"""Plain-text tables of ``trtcheck bench``, ``serve`` and ``precision`` (their ``--format
text`` output), rendered from the results model alone."""

from __future__ import annotations

from typing import Any

import numpy as np

from trtcheck.report.findings_view import device_is_gpu, group_findings
from trtcheck.units import us_to_ms


def _grouped_lines(findings: list[Any], gpu: bool) -> list[str]:
    """One line per finding code: ``warning [batch 1, 2, 4] message (the first of 3);
    remedy`` (remedies fit the device, see :func:`group_findings`)."""
    out = []
    for g in group_findings(findings, gpu):
        first = f" (the first of {g.count})" if g.count > 1 else ""
        out.append(f"{g.severity} [{g.where or g.code}] {g.message}{first}; "
                   f"{g.remedy or ''}".rstrip("; "))
    return out


def bench_table_text(run: Any) -> str:
    """A plain-text table of a :class:`~trtcheck.results.BenchRun`."""
    head = (f"{'batch':>5} {'median_ms':>10} {'p90_ms':>9} {'p99_ms':>9} {'cv':>6} "
            f"{'queries/s':>10} {'samples/s':>10} {'gain':>6} {'eff':>5} {'n':>6}")
    lines = [f"model:   {run.model_path}",
             f"backend: {run.backend.name} {run.backend.version} on {run.backend.device} "
             f"({run.backend.precision}; {', '.join(run.backend.providers) or '-'})",
             head, "-" * len(head)]
    warnings: list[str] = []
    for b in run.batches:
        s = b.stats
        gain = f"{b.throughput_gain_vs_batch1:.2f}" if b.throughput_gain_vs_batch1 else "-"
        eff = f"{b.scaling_efficiency:.2f}" if b.scaling_efficiency else "-"
        lines.append(f"{b.batch_size:>5} {s.median_ms:>10.3f} {s.p90_ms:>9.3f} {s.p99_ms:>9.3f} "
                     f"{s.cv:>6.1%} {b.throughput_queries_per_s:>10.1f} "
                     f"{b.throughput_samples_per_s:>10.1f} {gain:>6} {eff:>5} {s.count:>6}")
    warnings += _grouped_lines([w for b in run.batches for w in b.warnings
                                if w.severity != "info"], device_is_gpu(run.backend.device))
    for f in getattr(run, "failed_batches", []):
        what = "out of memory" if f.reason == "out-of-memory" else "failed"
        lines.append(f"{f.batch_size:>5} {what} at batch {f.batch_size}: {f.message}")
    firsts = [(b.batch_size, b.first_call_ms) for b in run.batches if b.first_call_ms is not None]
    if firsts:
        lines.append("warm-up (not in the samples): first call " + ", ".join(
            f"{ms:.3f} ms at batch {bs}" for bs, ms in firsts))
    for b in run.batches:
        for v in b.validity:
            if v.severity == "error":
                warnings.append(f"error [{v.where}] {v.message}; {v.remedy or ''}".rstrip("; "))
    if getattr(run, "incomplete", None):
        warnings.append(f"incomplete: {run.incomplete}")
    infos = sorted({w.message.split(' samples')[0] for b in run.batches for w in b.warnings
                    if w.code == "p99-not-certified"})
    if infos:
        warnings.append("info: p99 is not certified at these sample counts (MLPerf early "
                        "stopping needs >= 459); raise --min-samples to gate on p99")
    return "\n".join(lines + warnings)


def serve_table_text(run: Any) -> str:
    """Plain-text summary of a :class:`~trtcheck.results.serve.ServeRun` (one table per
    load shape: window, mean and max batch, QPS, P50, P99, ok share and late sends); a
    live target's run (``run.live`` set) gets :func:`live_table_text`."""
    if getattr(run, "live", None) is not None:
        return live_table_text(run)
    s = run.settings
    lines = [f"target:  {run.model_path}",
             f"backend: {run.backend.name} {run.backend.version} on {run.backend.device}",
             f"settings: repeats {s.repeats} (median shown), instances {s.instances}, "
             f"per-request overhead {s.per_request_overhead_ms:g} ms, http "
             f"{'on' if s.http else 'off'}, loop {s.event_loop}"]
    for load in s.loads:
        cfgs = [c for c in run.configs if c.load.label == load]
        head = (f"{'window_ms':>9} {'max_batch':>9} {'mean_batch':>10} {'max_seen':>8} "
                f"{'QPS':>9} {'p50_ms':>9} {'p99_ms':>9} {'ok':>6} {'late':>6}")
        lines += ["", f"load {load}", head, "-" * len(head)]
        for c in cfgs:
            late = "-" if c.late_send_share is None else f"{c.late_send_share:.1%}"
            p50 = "-" if c.p50_ms is None else f"{c.p50_ms:.2f}"
            p99 = "-" if c.p99_ms is None else f"{c.p99_ms:.2f}"
            lines.append(f"{us_to_ms(c.window_us):>9g} {c.max_batch_size:>9} "
                         f"{c.mean_batch_size:>10.2f} "
                         f"{c.max_batch_size_seen:>8} {c.throughput_queries_per_s:>9.1f} "
                         f"{p50:>9} {p99:>9} {c.ok_share:>6.1%} {late:>6}")
    lines += _grouped_lines([w for c in run.configs for w in c.warnings],
                            device_is_gpu(run.backend.device))
    lines += _invalid_lines(run)
    if getattr(run, "incomplete", None):
        lines.append(f"incomplete: {run.incomplete}")
    return "\n".join(lines)


def live_table_text(run: Any) -> str:
    """Plain-text summary of a live :class:`~trtcheck.results.serve.ServeRun`: per load
    shape, the configuration the server ran, the server's mean batch (its statistics),
    throughput, client P50/P99, achieved rate and late sends, and the mean latency split
    (client + network, server queue, server compute)."""
    lv = run.live
    s = run.settings
    lines = [f"target:   {lv.url} model {lv.model_name}"
             + (f" version {lv.model_version}" if lv.model_version else "")
             + f" ({lv.model_platform or 'unknown platform'})",
             f"server:   {lv.server_name} {lv.server_version}, {lv.protocol.upper()}, "
             + (f"{lv.ray_actors} Ray load actor(s)" if lv.ray_address else
                f"{lv.client_processes} load process(es)"),
             f"settings: repeats {s.repeats} (median shown), payload {s.payload}"]
    for load in s.loads:
        cfgs = [c for c in run.configs if c.load.label == load]
        if not cfgs:  # a run stopped before this load finished anywhere: no empty table
            continue
        head = (f"{'window_ms':>9} {'max_batch':>9} {'inst':>4} {'srv_batch':>9} "
                f"{'QPS':>9} {'sent/s':>8} {'p50_ms':>8} {'p99_ms':>8} {'ok':>6} {'late':>6} "
                f"{'net_ms':>7} {'queue_ms':>8} {'compute_ms':>10}")
        lines += ["", f"load {load}", head, "-" * len(head)]
        for c in cfgs:
            rep = c.repeats[c.median_repeat]
            sp = rep.live_split
            late = "-" if c.late_send_share is None else f"{c.late_send_share:.1%}"
            # the same statistic as QPS beside it: the median over the repeats
            sent = [r.achieved_send_rate_per_s for r in c.repeats
                    if r.achieved_send_rate_per_s is not None]
            rate = "-" if not sent else f"{float(np.median(sent)):.1f}"
            p50 = "-" if c.p50_ms is None else f"{c.p50_ms:.2f}"
            p99 = "-" if c.p99_ms is None else f"{c.p99_ms:.2f}"
            split = (f"{'-':>7} {'-':>8} {'-':>10}" if sp is None else
                     f"{sp.client_network_mean_ms:>7.2f} {sp.server_queue_mean_ms:>8.2f} "
                     f"{sp.server_compute_mean_ms:>10.2f}")
            lines.append(f"{us_to_ms(c.window_us):>9g} {c.max_batch_size:>9} "
                         f"{c.instances or 1:>4} "
                         f"{c.mean_batch_size:>9.2f} {c.throughput_queries_per_s:>9.1f} "
                         f"{rate:>8} {p50:>8} {p99:>8} {c.ok_share:>6.1%} {late:>6} {split}")
    if not run.configs:
        lines += ["", "no configuration finished"]
    from trtcheck.report.load_nodes_view import node_table_text

    lines += node_table_text(run)
    lines += ["", "srv_batch: the server's inferences / executions during the run (its "
                  "statistics); sent/s, late: achieved send rate and late sends; net_ms, "
                  "queue_ms, compute_ms: mean client + network, server queue and server "
                  "compute time per request, in the repeat of median throughput (the "
                  "other columns: medians over the repeats)."]
    # one line per warning kind, naming every configuration it applies to
    lines += _grouped_lines([*run.warnings, *[w for c in run.configs for w in c.warnings]],
                            device_is_gpu(run.backend.device))
    lines += _invalid_lines(run)
    return "\n".join(lines)


def _invalid_lines(run: Any) -> list[str]:
    """One ``invalid [where] message; remedy`` line per error-severity validity mark of
    a serving run's configurations (``generator-limited``...): what no budget may pass."""
    return [f"invalid [{v.where}] {v.message}; {v.remedy or ''}".rstrip("; ")
            for c in run.configs for v in getattr(c, "validity", []) if v.severity == "error"]


def _num(v: float | None, fmt: str = ".3g") -> str:
    return "-" if v is None else format(v, fmt)


def precision_text(result: Any) -> str:
    """Plain-text summary of a :class:`~trtcheck.results.precision.PrecisionResult`."""
    ref = result.reference
    inp = result.inputs
    lines = [f"model:     {result.model_path}",
             f"reference: FP32 on {ref.name} {ref.version}, {ref.device}",
             f"inputs:    {inp.source}, {inp.sample_count} sample(s)"
             + (f", seed {inp.seed}" if inp.seed is not None else "")
             + ", shapes " + ", ".join(f"{k}:{'x'.join(map(str, v))}" for k, v in inp.shapes.items())]
    head = (f"{'variant':<8} {'output':<24} {'max_abs':>9} {'floor':>9} {'mean_abs':>9} "
            f"{'max_rel':>9} {'rel_l2':>9} {'cosine':>10} {'outside':>8} {'nan/inf':>8} "
            f"{'top1':>6} {'verdict':>7}")
    lines += ["", head, "-" * len(head)]
    for v in result.variants.values():
        for o in v.outputs.values():
            name = o.name if len(o.name) <= 24 else o.name[:21] + "..."
            lines.append(
                f"{v.label:<8} {name:<24} {o.max_abs_error:>9.3g} "
                f"{_num(o.rounding_floor_max_abs_error):>9} {o.mean_abs_error:>9.3g} "
                f"{_num(o.max_rel_error):>9} {_num(o.rel_l2_error):>9} "
                f"{_num(o.cosine_similarity, '.7f'):>10} "
                f"{o.outside_tolerance_fraction:>8.2%} "
                f"{o.candidate_nan_count}/{o.candidate_inf_count:<4} "
                f"{_num(o.top1_agreement, '.0%'):>6} {'pass' if o.passed else 'FAIL':>7}")
    lines.append("")
    for v in result.variants.values():
        t = v.tolerance
        lines.append(f"{v.label}: {'PASS' if v.passed else 'FAIL'}  (atol {t.atol:g}, rtol "
                     f"{t.rtol:g}, outside <= {t.max_outside_fraction:.2%}, cosine >= "
                     f"{t.min_cosine_similarity:g}, rel L2 <= {t.max_rel_l2_error:g}"
                     + (f", top-1 >= {t.min_top1_agreement:.0%}" if t.min_top1_agreement else "")
                     + f"; built: {v.built_by})")
        if v.latency is not None:
            rl = result.reference_latency
            lat = v.latency
            ci = lat.speedup_interval
            speed = (f"speed-up {lat.speedup_not_measurable}" if lat.speedup_not_measurable
                     else f"speed-up {_num(lat.speedup_vs_reference, '.2f')}x"
                     + (f" (95% interval {ci[0]:.2f}-{ci[1]:.2f}x)" if ci else ""))
            lines.append(f"  latency: {lat.median_ms:.3f} ms median (FP32 "
                         f"{rl.median_ms:.3f} ms), {speed}" if rl else
                         f"  latency: {lat.median_ms:.3f} ms median")
        for key_out in v.outputs.values():
            for key, why in key_out.not_judged.items():
                lines.append(f"  {key_out.name}: {key.replace('_', ' ')} "
                             f"{_num(getattr(key_out, key, None), '.6g')}: {why}")
        for f in v.findings:
            lines.append(f"  {f.severity}: {f.message}" + (f"; {f.remedy}" if f.remedy else ""))
        loc = v.localization
        if loc is not None and (loc.first_failing or loc.first_nonfinite or loc.range_overflows
                                or loc.notes):
            lines.append(f"  localisation ({loc.method}):")
            for e in loc.first_failing:
                lines.append(f"    first failing: #{e.index} {e.node} ({e.op_type}) -> {e.tensor}: "
                             f"max abs err {e.max_abs_error:.3g} of range "
                             f"{e.reference_max_abs:.3g}, NaN/Inf {e.candidate_nonfinite_count}")
            for r in loc.range_overflows:
                lines.append(f"    beyond FP16 range: #{r.index} {r.node} ({r.op_type}) -> "
                             f"{r.tensor}: max |x| {r.reference_max_abs:.4g} > "
                             f"{r.limit_abs:g} ({r.overflow_count}/{r.element_count})")
            for n in loc.notes:
                lines.append(f"    note: {n}")
    lines.append("floor = max |ref - ref stored in the variant's precision| (the error of merely "
                 "storing the FP32 output in it)")
    for n in result.notes:
        lines.append(f"note: {n}")
    lines.append(f"result: {'PASS' if result.passed else 'FAIL'}")
    return "\n".join(lines)
