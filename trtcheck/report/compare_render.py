"""Render a :class:`trtcheck.analyze.compare.compare.Comparison` as text, Markdown or HTML.

HTML comes from ``templates/compare.html.j2`` (Jinja2, autoescaped: run labels, layer
and file names are untrusted); Markdown escapes every untrusted string with
:func:`trtcheck.report.templating.md_escape`. Deterministic output for given inputs.
"""

from __future__ import annotations

from trtcheck.analyze.compare import Comparison, FieldDiff, MetricDelta
from trtcheck.report.views import (
    CompareLayerRow,
    CompareLayersView,
    CompareMetricRow,
    ComparePrecisionMetricRow,
    ComparePrecisionView,
    CompareRunView,
    CompareServeRow,
    CompareView,
    FieldPairRow,
)
from trtcheck.units import Unit, format_quantity, metric_unit

MAX_LAYER_ROWS = 25
"""Layer rows shown in text and Markdown (largest time change first); HTML shows all."""


def _q(m: MetricDelta, v: float) -> str:
    return format_quantity(v, metric_unit(m.metric))


def _ratio(m: MetricDelta) -> str:
    return "-" if m.ratio is None else f"{(m.ratio - 1) * 100:+.1f}%"


def _interval(m: MetricDelta) -> str:
    if m.low is None or m.high is None:
        return "-"
    return f"[{(m.low - 1) * 100:+.1f}%, {(m.high - 1) * 100:+.1f}%]"


def _signed(v: float | None, unit: Unit) -> str:
    if v is None:
        return "-"
    return ("-" if v < 0 else "+") + format_quantity(abs(v), unit)


def _acc(v: float | None) -> str:
    """An accuracy value: 6 significant digits; a cosine similarity just below 1 gets up
    to 10, so that it does not print as 1."""
    if v is None:
        return "-"
    text = f"{v:.6g}"
    return f"{v:.10g}" if text in ("1", "-1") and v != float(text) else text


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _verdict(passed: bool) -> str:
    return "pass" if passed else "FAIL"


def _pairs(diffs: list[FieldDiff]) -> list[FieldPairRow]:
    return [FieldPairRow(field=d.field, a=d.a, b=d.b, differs=d.differs) for d in diffs]


def view(c: Comparison, max_layers: int | None = None) -> CompareView:
    """The view shared by the three formats (every value formatted as text).

    Args:
        c: the comparison.
        max_layers: layer rows kept (largest time change first); ``None`` keeps all.
    """
    runs = []
    for r in c.runs:
        rows = [CompareMetricRow(batch_size=b.batch_size,
                                 sample_count=f"{b.samples_a}/{b.samples_b}",
                                 metric=m.metric, a=_q(m, m.a), b=_q(m, m.b),
                                 change_pct=_ratio(m), interval=_interval(m), change=m.change)
                for b in r.batches for m in b.metrics]
        runs.append(CompareRunView(title=(r.label_a if r.label_a == r.label_b
                                          else f"{r.label_a} vs {r.label_b}"),
                                   matched_by=r.matched_by, backend=_pairs(r.backend),
                                   rows=rows, only_in_a=list(r.only_in_a),
                                   only_in_b=list(r.only_in_b)))
    layers = None
    if c.layers is not None:
        L = c.layers
        ms = Unit("time", "ms", 1e-3)
        sel = L.matched if max_layers is None else L.matched[:max_layers]
        layers = CompareLayersView(
            counts=f"{L.layers_a} / {L.layers_b} layers, {len(L.matched)} matched",
            summed_time=(f"{format_quantity(L.sum_a_ms, ms)} / {format_quantity(L.sum_b_ms, ms)}"
                         if L.sum_a_ms is not None and L.sum_b_ms is not None else "-"),
            mix_a=", ".join(f"{k} {v}" for k, v in sorted(L.precision_mix_a.items())) or "-",
            mix_b=", ".join(f"{k} {v}" for k, v in sorted(L.precision_mix_b.items())) or "-",
            rows=[CompareLayerRow(
                name=d.name_a if d.name_a == d.name_b else f"{d.name_a} -> {d.name_b}",
                layer_type=d.layer_type or "-",
                precision=(d.precision_a or "-") if d.precision_a == d.precision_b
                else f"{d.precision_a or '-'} -> {d.precision_b or '-'}",
                a=format_quantity(d.time_a_ms, ms) if d.time_a_ms is not None else "-",
                b=format_quantity(d.time_b_ms, ms) if d.time_b_ms is not None else "-",
                delta=_signed(d.delta_ms, ms),
                change_pct=(f"{(d.ratio - 1) * 100:+.0f}%" if d.ratio is not None else "-"),
                matched_by=d.matched_by) for d in sel],
            hidden=len(L.matched) - len(sel),
            only_in_a=list(L.only_in_a), only_in_b=list(L.only_in_b),
        )

    def _pct(x: float | None, y: float | None) -> str:
        return f"{(y / x - 1) * 100:+.1f}%" if x and y is not None else "-"

    def _ms(x: float | None) -> str:
        return f"{x:.3f}" if x is not None else "-"

    def _n(x: float | None, digits: int) -> str:
        return f"{x:.{digits}f}" if x is not None else "-"

    serve = [CompareServeRow(config=d.config, qps=f"{_n(d.qps_a, 1)} / {_n(d.qps_b, 1)}",
                             qps_change=_pct(d.qps_a, d.qps_b),
                             batch=f"{_n(d.batch_a, 2)} / {_n(d.batch_b, 2)}",
                             p50=f"{_ms(d.p50_a_ms)} / {_ms(d.p50_b_ms)}",
                             p50_change=_pct(d.p50_a_ms, d.p50_b_ms),
                             p99=f"{_ms(d.p99_a_ms)} / {_ms(d.p99_b_ms)}",
                             p99_change=_pct(d.p99_a_ms, d.p99_b_ms)) for d in c.serve]
    precision = [ComparePrecisionView(
        variant=p.variant,
        passed=f"{_verdict(p.passed_a)} / {_verdict(p.passed_b)}",
        speedup=(f"{_x(p.speedup_a)} / {_x(p.speedup_b)}"
                 if p.speedup_a is not None or p.speedup_b is not None else None),
        setup=_pairs([d for d in p.setup if d.differs]),
        rows=[ComparePrecisionMetricRow(
            metric=m.metric, better=f"{m.direction} is better", a=_acc(m.a), b=_acc(m.b),
            difference=("-" if m.difference is None else
                        "0" if m.difference == 0 else f"{m.difference:+.3g}"))
            for m in p.metrics if m.a is not None or m.b is not None],
    ) for p in c.precision]
    return CompareView(
        name_a=c.name_a, name_b=c.name_b, comparable=c.comparable,
        different_models=c.different_models, nothing_paired=c.nothing_paired,
        environment=_pairs(c.environment), inspection=_pairs(c.inspection),
        runs=runs, runs_only_in_a=list(c.runs_only_in_a), runs_only_in_b=list(c.runs_only_in_b),
        layers=layers,
        serve=serve, serve_only_in_a=list(c.serve_only_in_a),
        serve_only_in_b=list(c.serve_only_in_b),
        precision_setup=_pairs(c.precision_setup),
        precision=precision, precision_only_in_a=list(c.precision_only_in_a),
        precision_only_in_b=list(c.precision_only_in_b),
        layers_note=c.layers_note, method=c.method)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    out = ["  " + "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for r in rows:
        out.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return out


def render_text(c: Comparison) -> str:
    """Plain-text side-by-side comparison (ratios are B/A)."""
    v = view(c, MAX_LAYER_ROWS)
    out = [f"trtcheck compare  A={c.name_a}  B={c.name_b}  (changes are B relative to A)"]
    if c.different_models:
        out.append(f"WARNING: {c.different_models}; latency changes are not regressions "
                   "and are not judged")
    if c.nothing_paired:
        out.append(f"note: {c.nothing_paired}")
    out.append("environment: " + ("comparable" if c.comparable else
                                  "NOT comparable (differences marked *)"))
    out += _table(["field", "A", "B", ""],
                  [[d.field, d.a, d.b, "*" if d.differs else ""]
                   for d in v.environment])
    if v.inspection:
        out.append("model:")
        out += _table(["field", "A", "B", ""], [[d.field, d.a, d.b,
                                                 "*" if d.differs else ""]
                                                for d in v.inspection])
    for r in v.runs:
        out.append(f"run {r.title} (matched by {r.matched_by})")
        diffs = [f"{d.field} {d.a} -> {d.b}" for d in r.backend if d.differs]
        if diffs:
            out.append("  differs: " + "; ".join(diffs))
        out += _table(["batch", "n A/B", "metric", "A", "B", "change", "interval", "verdict"],
                      [[str(x.batch_size), x.sample_count, x.metric, x.a, x.b, x.change_pct,
                        x.interval, x.change] for x in r.rows])
        if r.only_in_a or r.only_in_b:
            out.append(f"  batch sizes only in A: {r.only_in_a or '-'}; only in B: "
                       f"{r.only_in_b or '-'}")
    for lbl in v.runs_only_in_a:
        out.append(f"run {lbl}: only in A")
    for lbl in v.runs_only_in_b:
        out.append(f"run {lbl}: only in B")
    if v.layers:
        L = v.layers
        out.append(f"engine layers: {L.counts}; summed layer time A/B {L.summed_time}")
        out.append(f"  precision mix A: {L.mix_a}; B: {L.mix_b}")
        out += _table(["layer", "type", "precision", "A", "B", "delta", "change"],
                      [[x.name[:60], x.layer_type, x.precision, x.a, x.b, x.delta,
                        x.change_pct] for x in L.rows])
        if L.hidden:
            out.append(f"  ... {L.hidden} more matched layers (see --format html)")
        if L.only_in_a or L.only_in_b:
            out.append(f"  unmatched: {len(L.only_in_a)} layer(s) only in A, "
                       f"{len(L.only_in_b)} only in B")
    if v.serve:
        out.append("serving (headline medians over repeats; A / B, change B vs A; point "
                   "comparisons: no interval, so no better/worse):")
        out += _table(["configuration", "QPS", "change", "mean batch", "P50 ms", "change",
                       "P99 ms", "change"],
                      [[x.config, x.qps, x.qps_change, x.batch, x.p50,
                        x.p50_change, x.p99, x.p99_change] for x in v.serve])
    if v.serve_only_in_a or v.serve_only_in_b:
        out.append(f"  serving configurations only in A: {len(v.serve_only_in_a)}, "
                   f"only in B: {len(v.serve_only_in_b)}")
    if v.precision_setup:
        out.append("precision (each variant against its file's FP32 reference; A / B):")
        out += _table(["field", "A", "B", ""],
                      [[d.field, d.a, d.b, "*" if d.differs else ""]
                       for d in v.precision_setup])
    for p in v.precision:
        out.append(f"precision {p.variant}: verdict {p.passed}"
                   + (f"; speed-up vs FP32 {p.speedup}" if p.speedup else ""))
        diffs = [f"{d.field} {d.a} -> {d.b}" for d in p.setup]
        if diffs:
            out.append("  differs: " + "; ".join(diffs))
        out += _table(["metric", "A", "B", "B - A", ""],
                      [[x.metric, x.a, x.b, x.difference, x.better]
                       for x in p.rows])
    for lbl in v.precision_only_in_a:
        out.append(f"precision {lbl}: only in A")
    for lbl in v.precision_only_in_b:
        out.append(f"precision {lbl}: only in B")
    out.append(f"note: {v.layers_note}")
    if v.runs:  # the bootstrap interval is the bench runs'; the serving rows have none
        out.append(f"method (bench runs): {v.method}")
    return "\n".join(out) + "\n"


def render_markdown(c: Comparison) -> str:
    """GitHub-flavoured Markdown (every untrusted string escaped)."""
    from trtcheck.report.templating import md_escape as e
    v = view(c, MAX_LAYER_ROWS)
    out = [f"## trtcheck compare: {e(c.name_a)} (A) vs {e(c.name_b)} (B)", "",
           *([f"**Warning: {e(c.different_models)}**; latency changes are not "
              "regressions and are not judged.", ""] if c.different_models else []),
           *([f"**Note:** {e(c.nothing_paired)}", ""] if c.nothing_paired else []),
           "Environment: " + ("comparable" if c.comparable else
                              "**not comparable** (differences in bold)"), "",
           "| field | A | B |", "|---|---|---|"]
    for d in v.environment:
        b = "**" if d.differs else ""
        out.append(f"| {b}{e(d.field)}{b} | {e(d.a)} | {e(d.b)} |")
    if v.inspection:
        out += ["", "### Model", "", "| field | A | B |", "|---|---|---|"]
        for d in v.inspection:
            b = "**" if d.differs else ""
            out.append(f"| {b}{e(d.field)}{b} | {e(d.a)} | {e(d.b)} |")
    for r in v.runs:
        out += ["", f"### Run {e(r.title)} (matched by {e(r.matched_by)})", ""]
        diffs = [f"{e(d.field)} {e(d.a)} → {e(d.b)}" for d in r.backend
                 if d.differs]
        if diffs:
            out += ["Differs: " + "; ".join(diffs), ""]
        out += ["| batch | n A/B | metric | A | B | change | interval | verdict |",
                "|---:|---:|---|---:|---:|---:|---|---|"]
        for x in r.rows:
            out.append(f"| {x.batch_size} | {x.sample_count} | {e(x.metric)} | {e(x.a)} | "
                       f"{e(x.b)} | {e(x.change_pct)} | {e(x.interval)} | {e(x.change)} |")
    if v.layers:
        L = v.layers
        out += ["", "### Engine layers", "",
                (f"{e(L.counts)}; summed layer time A/B {e(L.summed_time)}; precision mix A: "
                f"{e(L.mix_a)}, B: {e(L.mix_b)}"), "",
                "| layer | type | precision | A | B | delta | change |",
                "|---|---|---|---:|---:|---:|---:|"]
        for x in L.rows:
            out.append(f"| {e(x.name)} | {e(x.layer_type)} | {e(x.precision)} | "
                       f"{e(x.a)} | {e(x.b)} | {e(x.delta)} | {e(x.change_pct)} |")
    if v.serve:
        out += ["", "### Serving (headline medians over repeats, A / B; point comparisons: "
                "no interval, so no better/worse)", "",
                "| configuration | QPS | change | mean batch | P50 ms | change | P99 ms | change |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for x in v.serve:
            out.append(f"| {e(x.config)} | {x.qps} | {x.qps_change} | {x.batch} | "
                       f"{x.p50} | {x.p50_change} | {x.p99} | {x.p99_change} |")
    if v.precision_setup:
        out += ["", "### Precision (each variant against its file's FP32 reference)", "",
                "| field | A | B |", "|---|---|---|"]
        for d in v.precision_setup:
            b = "**" if d.differs else ""
            out.append(f"| {b}{e(d.field)}{b} | {e(d.a)} | {e(d.b)} |")
    for p in v.precision:
        out += ["", f"#### Precision {e(p.variant)}: verdict {e(p.passed)}"
                + (f", speed-up vs FP32 {e(p.speedup)}" if p.speedup else ""), ""]
        diffs = [f"{e(d.field)} {e(d.a)} → {e(d.b)}" for d in p.setup]
        if diffs:
            out += ["Differs: " + "; ".join(diffs), ""]
        out += ["| metric | A | B | B − A | |", "|---|---:|---:|---:|---|"]
        for x in p.rows:
            out.append(f"| {e(x.metric)} | {e(x.a)} | {e(x.b)} | "
                       f"{e(x.difference)} | {e(x.better)} |")
    if v.precision_only_in_a or v.precision_only_in_b:
        out += ["", (f"Precision variants only in A: "
                f"{e(', '.join(v.precision_only_in_a)) or '-'}; only in B: "
                f"{e(', '.join(v.precision_only_in_b)) or '-'}")]
    out += ["", f"_{e(v.layers_note)}_"]
    if v.runs:  # the bootstrap interval is the bench runs'; the serving rows have none
        out += ["", f"_Method (bench runs): {e(v.method)}_"]
    return "\n".join(out) + "\n"


def render_html(c: Comparison) -> str:
    """Self-contained HTML page from ``templates/compare.html.j2`` (autoescaped)."""
    from trtcheck.report.templating import render_template
    return render_template("compare.html.j2", {"v": view(c, None)}, markdown=False)
