"""Comparing imported measurements (perf_analyzer CSVs, Triton statistics dumps) of two
results documents, as rows of the serving comparison."""

from __future__ import annotations

from typing import Any


def _level_label(mode: str | None, level: Any) -> str:
    if level.concurrency is not None:
        return f"perf_analyzer concurrency {level.concurrency}"
    return f"perf_analyzer request rate {level.request_rate_per_s:g}/s"


def compare_imported(a: Any, b: Any) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """perf_analyzer load levels matched by their concurrency or request rate (throughput
    in inferences/s, client P50 and P99), and Triton models matched by name and version
    (mean batch size: the statistics hold no percentiles). Point comparisons: neither
    source keeps raw samples.

    Returns:
        ``(matched rows, labels only in a, labels only in b)``; each row holds the fields
        of :class:`trtcheck.analyze.compare.ServeConfigDelta`; empty unless both files
        hold imported measurements.
    """
    ia, ib = getattr(a, "imported", None), getattr(b, "imported", None)
    if ia is None or ib is None:
        return [], [], []
    la = {_level_label(ia.mode, x): x for x in ia.levels}
    lb = {_level_label(ib.mode, x): x for x in ib.levels}
    rows: list[dict[str, Any]] = [dict(config=k, qps_a=x.throughput_inferences_per_s,
                             qps_b=lb[k].throughput_inferences_per_s,
                             p50_a_ms=x.p50_ms, p50_b_ms=lb[k].p50_ms,
                             p99_a_ms=x.p99_ms, p99_b_ms=lb[k].p99_ms)
            for k, x in la.items() if k in lb]
    ma = {f"Triton statistics {m.model} v{m.version}": m for m in ia.models}
    mb = {f"Triton statistics {m.model} v{m.version}": m for m in ib.models}
    rows += [dict(config=k, batch_a=m.mean_batch_size,
                              batch_b=mb[k].mean_batch_size)
             for k, m in ma.items() if k in mb]
    only_a = [k for k in (*la, *ma) if k not in lb and k not in mb]
    only_b = [k for k in (*lb, *mb) if k not in la and k not in ma]
    return rows, only_a, only_b
