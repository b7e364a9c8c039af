"""Report section: a TensorRT engine (plan pre-flight, layers, precision, lints, memory).

Reads only :class:`trtcheck.results.engine.EngineInspection`. :func:`engine_view` builds
the view (:class:`~trtcheck.report.views.EngineView`) that both the report partials and
``trtcheck inspect``'s text and Markdown output use.
"""

from __future__ import annotations

from typing import Any

from trtcheck.report.charts import ChartSink, new_figure
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.views import (
    EngineTimingView,
    EngineView,
    IoTensorRow,
    LayerRow,
    ProfileRow,
)
from trtcheck.results import Results
from trtcheck.results.engine import EngineInspection
from trtcheck.units import terminal_safe

TOP_LAYERS = 15
"""Rows of the layer table (slowest first when per-layer times exist)."""


def _shape(dims: list[int]) -> str:
    return "x".join("?" if d < 0 else str(d) for d in dims) if dims else "-"


def engine_view(insp: EngineInspection, top: int = TOP_LAYERS) -> EngineView:
    """The view of an engine inspection.

    Args:
        insp: the inspection.
        top: number of layers in the table (slowest first when timed, else in order).
    """
    timed = any(la.avg_time_ms is not None for la in insp.layers)
    layers = sorted(insp.layers, key=lambda la: -(la.avg_time_ms or -1.0)) if timed \
        else list(insp.layers)
    rows = [LayerRow(name=la.name, layer_type=la.layer_type or "-",
                     precision=la.precision or "-", time_ms=la.avg_time_ms,
                     time_pct=la.time_pct, tactic=(la.tactic or "-")[:60],
                     outputs=", ".join(f"{_shape(t.dims)} {t.dtype or ''}".strip()
                                       for t in la.outputs) or "-")
            for la in layers[:top]]
    io = [IoTensorRow(name=t.name, mode=t.mode or "-", shape=_shape(t.dims),
                      dtype=t.dtype or "-", format=t.format or "-") for t in insp.io_tensors]
    profiles = [ProfileRow(index=p.index, input=name, min=_shape(s.min), opt=_shape(s.opt),
                           max=_shape(s.max))
                for p in insp.profiles for name, s in p.shapes.items()]
    kv = [("source", insp.source), ("path", insp.path)]
    if insp.plan is not None:
        kv += [("plan", f"{insp.plan.kind} {insp.plan.built_with_version or '?'}, "
                        f"{insp.plan.file_size_bytes:,} bytes"),
               ("pre-flight", insp.plan.verdict)]
    for key, val in (("device", insp.device_name), ("compute capability", insp.compute_capability),
                     ("runtime", f"{insp.runtime_name} {insp.runtime_version}"
                      if insp.runtime_name else None),
                     ("inspector schema", insp.inspector_schema),
                     ("build options", ", ".join(f"{k}={v}" for k, v in
                                                 insp.build_options.items()) or None)):
        if val:
            kv.append((key, str(val)))
    t = insp.timing
    timing = None
    if t is not None:
        timing = EngineTimingView(
            engine_mean_ms=t.engine_mean_ms, engine_median_ms=t.engine_median_ms,
            iterations=t.iterations, layer_sum_ms=t.layer_sum_ms,
            overhead_pct=None if t.profiling_overhead_ratio is None
            else 100 * t.profiling_overhead_ratio,
            source=t.source)
    m = insp.memory
    memory = None
    if m is not None:
        memory = [(k, v) for k, v in (
            ("plan size", m.plan_size_bytes), ("weights", m.weights_bytes),
            ("device (activation) memory", m.device_memory_bytes),
            ("weight streaming min budget", m.weight_streaming_min_budget_bytes),
            ("GPU free", m.gpu_free_bytes), ("GPU total", m.gpu_total_bytes),
            ("I/O per sample", m.io_bytes_per_sample)) if v is not None]
    return EngineView(
        kv=kv, detailed=insp.detailed, layer_count=len(insp.layers), timed=timed,
        rows=rows, top=top, io=io, profiles=profiles,
        precision_mix=sorted(insp.precision_mix.items(), key=lambda kv_: -kv_[1]),
        reformats=insp.reformat_count, timing=timing,
        memory=memory,
        memory_per_profile=sorted(m.device_memory_bytes_per_profile.items()) if m else [],
        largest_batch=m.largest_batch_fits if m else None,
        memory_notes=list(m.notes) if m else [],
        lints=list(insp.lints),
    )


def _charts(insp: EngineInspection, charts: ChartSink) -> list[Any]:
    out = []
    if insp.precision_mix:
        fig, ax = new_figure(6.0, 2.4)
        items = sorted(insp.precision_mix.items(), key=lambda kv: kv[1])
        ax.barh([k for k, _ in items], [v for _, v in items], color="#4c72b0")
        ax.set_xlabel("layers")
        ax.set_title("Precision mix (layers by compute precision, reformats excluded)")
        out.append(charts.add("engine-precision-mix", "Engine precision mix", fig))
    timed = [la for la in insp.layers if la.avg_time_ms is not None]
    if timed:
        top = sorted(timed, key=lambda la: -(la.avg_time_ms or 0.0))[:TOP_LAYERS][::-1]
        fig, ax = new_figure(7.0, 0.3 * len(top) + 1.2)
        ax.barh([la.name[:40] for la in top], [la.avg_time_ms for la in top], color="#dd8452")
        ax.set_xlabel("average time per inference (ms)")
        ax.set_title("Slowest layers (per-layer profile)")
        out.append(charts.add("engine-layer-times", "Slowest engine layers", fig))
    return out


def build(results: Results, charts: ChartSink) -> Section | None:
    """The engine section, or ``None`` when the results hold no engine inspection."""
    insp = results.engine
    if insp is None:
        return None
    return render_partial("engine", "TensorRT engine", engine_view(insp),
                          _charts(insp, charts))


def render_markdown(insp: EngineInspection, top: int = TOP_LAYERS) -> str:
    """The section's Markdown (no charts) for ``trtcheck inspect --format md``."""
    from trtcheck.report.sections import render_markdown_partial

    return render_markdown_partial("engine", "TensorRT engine", engine_view(insp, top))


def _num(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def render_text(insp: EngineInspection, top: int = TOP_LAYERS) -> str:
    """Plain-text summary for ``trtcheck inspect`` / ``trtcheck preflight`` on a terminal."""
    from trtcheck.units import human_bytes as _bytes

    v = engine_view(insp, top)
    lines = [f"{k + ':':20s} {val}" for k, val in v.kv]
    if v.io:
        lines.append("")
        lines.append("I/O tensors:")
        for t in v.io:
            lines.append(f"  {t.mode:6s} {t.name}  {t.shape}  {t.dtype}  "
                         f"{t.format}")
    if v.profiles:
        lines.append("Optimization profiles:")
        for p in v.profiles:
            lines.append(f"  [{p.index}] {p.input}: min {p.min}  opt {p.opt}  "
                         f"max {p.max}")
    if v.layer_count:
        lines.append("")
        if v.detailed:
            mix = ", ".join(f"{p} {n}" for p, n in v.precision_mix)
            lines.append(f"{v.layer_count} layers, {v.reformats} reformat(s); "
                         f"precision mix: {mix}")
        else:
            lines.append(f"{v.layer_count} layers (names only)")
    t = v.timing
    if t:
        over = "" if t.overhead_pct is None else \
            f" (per-layer profiling adds {t.overhead_pct:.1f}%)"
        lines.append(f"engine mean {_num(t.engine_mean_ms)} ms, median "
                     f"{_num(t.engine_median_ms)} ms; sum of layer averages "
                     f"{_num(t.layer_sum_ms)} ms{over}")
    if v.rows:
        lines.append("")
        head = f"  {'layer':48s} {'type':22s} {'prec':5s}"
        if v.timed:
            head += f" {'avg ms':>9s} {'%':>5s}"
        lines.append(head)
        for r in v.rows:
            row = f"  {r.name[:48]:48s} {r.layer_type[:22]:22s} {r.precision:5s}"
            if v.timed:
                row += f" {_num(r.time_ms, 4):>9s} " + \
                       (f"{r.time_pct:5.1f}" if r.time_pct is not None else f"{'-':>5s}")
            lines.append(row)
        if v.layer_count > top:
            lines.append(f"  ... top {top} of {v.layer_count} layers")
    if v.memory:
        lines.append("")
        lines.append("Memory: " + "; ".join(f"{k} {_bytes(b)}" for k, b in v.memory))
        for p, b in v.memory_per_profile:
            lines.append(f"  activation memory, profile {p}: {_bytes(b)}")
        if v.largest_batch is not None:
            lines.append(f"  largest batch that fits: {v.largest_batch}")
        lines.extend(f"  note: {n}" for n in v.memory_notes)
    if v.lints:
        lines.append("")
        for f in v.lints:
            lines.append(f"{f.severity}: [{f.code}] {f.message}")
            if f.remedy:
                lines.append(f"  fix: {f.remedy}")
    # layer/tensor names come from untrusted files: one line each, control chars escaped
    return "\n".join(terminal_safe(ln) for ln in lines) + "\n"
