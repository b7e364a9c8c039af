"""Human renderings of a :class:`~trtcheck.results.ModelInspection` for ``trtcheck inspect``.

``render_text`` is the compact terminal summary; ``render_markdown`` reuses the report's
inspection section (``templates/sections/inspection.md.j2``) so that the Markdown of
``inspect --format md`` and of ``report`` are the same rendering.
"""

from __future__ import annotations

from pathlib import Path

from trtcheck.results.inspection import ModelInspection, TensorInfo
from trtcheck.units import human_bytes, si, terminal_safe

TOP_OPS = 10


def dim_text(d: int | str | None) -> str:
    """One axis for display: size, dim name, or ``?`` when unnamed."""
    return "?" if d is None else str(d)


def shape_text(t: TensorInfo) -> str:
    """``[batch, 3, 224, 224]`` form (``?`` for unnamed dynamic axes)."""
    if not t.rank_known:
        return "[unknown rank]"
    return "[" + ", ".join(dim_text(d) for d in t.shape) + "]"


def dynamic_dims(insp: ModelInspection) -> list[str]:
    """``"x axis 2: '?'"``-style lines for every dynamic axis of the inputs and outputs."""
    out = []
    for kind, tensors in (("input", insp.inputs), ("output", insp.outputs)):
        for t in tensors:
            for i in t.dynamic_axes:
                d = t.shape[i]
                label = f"named {d!r}" if isinstance(d, str) else "unnamed"
                out.append(f"{kind} {t.name} axis {i}: {label}")
    return out


def _table(rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def render_text(insp: ModelInspection) -> str:
    """Compact terminal summary (ends with a newline)."""
    p = terminal_safe  # names come from untrusted files: control characters as escapes
    lines: list[str] = []
    opsets = ", ".join(f"{d} {v}" for d, v in insp.opset.items())
    lines.append(f"model      {p(Path(insp.path).name)}  ({human_bytes(insp.file_size_bytes)}, "
                 f"sha256 {insp.sha256[:12]})")
    prod = f"; producer {p(insp.producer)}" if insp.producer else ""
    lines.append(f"format     ONNX IR {insp.ir_version}, opset {opsets}{prod}")
    src = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in
                    insp.parameter_count_by_source.items())
    lines.append(f"graph      {insp.node_count:,} nodes, {len(insp.op_histogram)} op types; "
                 f"{insp.parameter_count:,} parameters ({human_bytes(insp.parameter_bytes)}"
                 + (f": {src}" if src else "") + ")")
    if insp.initializer_dtypes:
        lines.append("weights    " + ", ".join(f"{k} x{v}" for k, v in
                                               insp.initializer_dtypes.items()))
    if insp.external_data_files:
        lines.append("ext. data  " + ", ".join(p(f) for f in insp.external_data_files))
    lines.append("")
    for title, tensors in (("inputs", insp.inputs), ("outputs", insp.outputs)):
        lines.append(title)
        rows = [["name", "dtype", "shape"]] + [[p(t.name), t.dtype, p(shape_text(t))]
                                              for t in tensors]
        lines += _table(rows)
    dyn = dynamic_dims(insp)
    if dyn:
        lines.append("dynamic dims")
        lines += ["  " + p(d) for d in dyn]
    lines.append("")
    c = insp.compute
    if c is not None:
        at = ",".join(f"{p(n)}:{'x'.join(map(str, d))}" for n, d in c.input_shapes.items())
        by = ", ".join(f"{k} {si(v, 'MACs')}" for k, v in c.macs_by_op_type.items())
        lines.append(f"compute    {si(c.macs, 'MACs')} ({si(c.flops, 'FLOPs')}) at {at}"
                     + (f"; {by}" if by else ""))
        if c.unresolved_nodes:
            lines.append(f"           {c.unresolved_nodes} Conv/Gemm/MatMul node(s) not "
                         "counted (shapes unknown)")
    else:
        lines.append("compute    no MACs estimate (dynamic dims need sizes: see lints)")
    top = list(insp.op_histogram.items())[:TOP_OPS]
    more = len(insp.op_histogram) - len(top)
    lines.append("top ops    " + ", ".join(f"{p(k)} {v}" for k, v in top)
                 + (f", ... ({more} more types)" if more > 0 else ""))
    lines.append("")
    if insp.lints:
        lines.append(f"lints ({len(insp.lints)})")
        for f in insp.lints:
            lines.append(f"  {f.severity:<7} [{f.code}] {p(f.message)}")
            if f.remedy:
                lines.append(f"          hint: {p(f.remedy)}")
    else:
        lines.append("lints      none")
    return "\n".join(p(ln) for ln in lines) + "\n"


def render_markdown(insp: ModelInspection) -> str:
    """Markdown document: a title plus the report's inspection section (no chart)."""
    from trtcheck.report.sec_inspection import render_inspection
    from trtcheck.report.templating import md_escape

    sec = render_inspection(insp, charts=None)
    return f"# trtcheck inspect: {md_escape(Path(insp.path).name)}\n\n{sec.markdown}"
