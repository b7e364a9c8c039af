"""Report section "Model inspection": I/O, dynamic dims, model facts, op histogram, lints.

Reads only :class:`trtcheck.results.ModelInspection`. The op histogram chart shows the
:data:`TOP_OPS_CHART` most frequent op types as horizontal bars.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trtcheck.report.charts import ChartSink, new_figure
from trtcheck.report.sections import Section, render_partial
from trtcheck.report.views import (
    ComputeView,
    DynamicDimRow,
    InspectionView,
    OpCountRow,
    OpMacsRow,
    TensorRow,
)
from trtcheck.results import Results
from trtcheck.results.inspection import ModelInspection, TensorInfo
from trtcheck.units import human_bytes as _bytes
from trtcheck.units import si as _si

SECTION_ID = "inspection"
TITLE = "Model inspection"
TOP_OPS_CHART = 15
TOP_OPS_TABLE = 30
_LABEL_CHARS = 40


def _shape(t: TensorInfo) -> str:
    if not t.rank_known:
        return "unknown rank"
    return "[" + ", ".join("?" if d is None else str(d) for d in t.shape) + "]"


def _chart_label(text: str) -> str:
    """Op names are untrusted: keep them short (every chart text is made literal by
    :func:`trtcheck.report.charts.literal_user_text`, so ``$`` is shown as it is)."""
    return text if len(text) <= _LABEL_CHARS else text[:_LABEL_CHARS - 1] + "…"


def inspection_view(insp: ModelInspection) -> InspectionView:
    """The view of the inspection section (facts and counts formatted as text)."""
    facts: list[tuple[str, str]] = [
        ("File", Path(insp.path).name),
        ("Size", f"{_bytes(insp.file_size_bytes)} ({insp.file_size_bytes:,} bytes)"),
        ("SHA-256", insp.sha256),
        ("Format", f"ONNX, IR version {insp.ir_version}"),
        ("Opsets", ", ".join(f"{d} {v}" for d, v in insp.opset.items()) or "-"),
        ("Producer", insp.producer or "-"),
        ("Graph name", insp.graph_name or "-"),
        ("Nodes", f"{insp.node_count:,} ({len(insp.op_histogram)} op types)"),
        ("Parameters", f"{insp.parameter_count:,} ({_bytes(insp.parameter_bytes)})"),
    ]
    if insp.parameter_count_by_source:
        facts.append(("Parameters by source", ", ".join(
            f"{k.replace('_', ' ')}: {v:,}" for k, v in insp.parameter_count_by_source.items())))
    if insp.initializer_dtypes:
        facts.append(("Weight tensors by dtype", ", ".join(
            f"{k}: {v}" for k, v in insp.initializer_dtypes.items())))
    if insp.external_data_files:
        facts.append(("External data files", ", ".join(insp.external_data_files)))

    def io(tensors: list[TensorInfo]) -> list[TensorRow]:
        return [TensorRow(name=t.name, dtype=t.dtype, shape=_shape(t)) for t in tensors]

    dynamic = []
    for kind, tensors in (("input", insp.inputs), ("output", insp.outputs)):
        for t in tensors:
            for i in t.dynamic_axes:
                d = t.shape[i]
                dynamic.append(DynamicDimRow(tensor=t.name, kind=kind, axis=str(i),
                                             name=d if isinstance(d, str) else "(unnamed)"))
    compute = None
    c = insp.compute
    if c is not None:
        compute = ComputeView(
            macs=_si(c.macs, "MACs"),
            macs_exact=f"{c.macs:,}",
            flops=_si(c.flops, "FLOPs"),
            at=", ".join(f"{n}: {'x'.join(map(str, d))}" for n, d in c.input_shapes.items()),
            by_op=[OpMacsRow(op=k, macs=_si(v, "MACs"),
                             share=f"{100 * v / c.macs:.1f}%" if c.macs else "-")
                   for k, v in c.macs_by_op_type.items()],
            counted_nodes=str(c.counted_nodes),
            unresolved_nodes=c.unresolved_nodes,
            method=c.method,
        )
    total = sum(insp.op_histogram.values()) or 1
    ops = [OpCountRow(op=k, count=str(v), share=f"{100 * v / total:.1f}%")
           for k, v in list(insp.op_histogram.items())[:TOP_OPS_TABLE]]
    more_ops = max(0, len(insp.op_histogram) - TOP_OPS_TABLE)
    return InspectionView(facts=facts, inputs=io(insp.inputs), outputs=io(insp.outputs),
                          dynamic=dynamic, compute=compute, ops=ops, more_ops=more_ops,
                          lints=list(insp.lints))


def op_histogram_chart(insp: ModelInspection, charts: ChartSink) -> Any:
    """Horizontal bars of the :data:`TOP_OPS_CHART` most frequent op types, or ``None``."""
    top = list(insp.op_histogram.items())[:TOP_OPS_CHART]
    if not top:
        return None
    labels = [_chart_label(k) for k, _ in top][::-1]
    counts = [v for _, v in top][::-1]
    fig, ax = new_figure(7.0, max(2.0, 0.32 * len(top) + 0.9))
    ax.barh(range(len(top)), counts, color="#4c72b0")
    ax.set_yticks(range(len(top)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel("nodes")
    for i, v in enumerate(counts):
        ax.text(v, i, f" {v}", va="center", fontsize=7)
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")
    return charts.add("inspection-ops", f"Top {len(top)} op types by node count", fig)


def render_inspection(insp: ModelInspection, charts: ChartSink | None) -> Section:
    """Render the section for one inspection; ``charts=None`` renders without the chart."""
    chart_list = []
    if charts is not None:
        ch = op_histogram_chart(insp, charts)
        if ch is not None:
            chart_list.append(ch)
    return render_partial(SECTION_ID, TITLE, inspection_view(insp), chart_list)


def build(results: Results, charts: ChartSink) -> Section | None:
    """The section, or ``None`` when the results hold no inspection."""
    if results.inspection is None:
        return None
    return render_inspection(results.inspection, charts)
