"""Reading other tools' measurement files into a results document.

Two sources, recognised by their content (not their name):

* a **perf_analyzer CSV** (``perf_analyzer -f out.csv``, with or without
  ``--verbose-csv``): a header whose first column is ``Concurrency`` or ``Request Rate``
  and that has ``Inferences/Second``, then one row per load level; times in
  microseconds (converted to ms here). The server-side columns (``Server Queue``,
  ``Server Compute Input/Infer/Output``) are kept when present. Column names as
  perf_analyzer 2.41 writes them (checked against the real binary; a CSV it wrote is
  ``tests/data/perf-analyzer/``).
* a **Triton statistics dump**: the JSON of ``GET /v2/models/NAME/stats`` (or of all
  models, ``GET /v2/models/stats``): ``{"model_stats": [...]}`` with cumulative
  ``ns``/``count`` pairs (converted to means in ms) and ``batch_stats`` per batch size.

:func:`imported_results` returns a :class:`~trtcheck.results.model.Results` whose
``imported`` section holds them (source and file named) and whose environment says it
was not recorded; a malformed file is one :class:`~trtcheck.errors.InputError` line.
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from trtcheck.errors import InputError
from trtcheck.results.imported import (
    ImportedRun,
    PerfAnalyzerLevel,
    TritonBatchStats,
    TritonModelStats,
)

PA_HINT = ("pass the CSV perf_analyzer wrote with -f (a header starting with Concurrency or "
           "Request Rate, one row per load level)")
STATS_HINT = "pass the JSON of GET /v2/models/NAME/stats as Triton returned it"

#: perf_analyzer CSV column -> (PerfAnalyzerLevel field, microseconds?)
PA_COLUMNS: dict[str, tuple[str, bool]] = {
    "Inferences/Second": ("throughput_inferences_per_s", False),
    "Client Send": ("client_send_ms", True),
    "Network+Server Send/Recv": ("network_server_send_recv_ms", True),
    "Server Queue": ("server_queue_ms", True),
    "Server Compute Input": ("server_compute_input_ms", True),
    "Server Compute Infer": ("server_compute_infer_ms", True),
    "Server Compute Output": ("server_compute_output_ms", True),
    "Client Recv": ("client_recv_ms", True),
    "p50 latency": ("p50_ms", True),
    "p90 latency": ("p90_ms", True),
    "p95 latency": ("p95_ms", True),
    "p99 latency": ("p99_ms", True),
    "Avg latency": ("avg_latency_ms", True),
}
PA_MODES = {"Concurrency": "concurrency", "Request Rate": "request-rate"}
SERVER_COLUMNS = ("Server Queue", "Server Compute Input", "Server Compute Infer",
                  "Server Compute Output")
MAX_PA_ROWS = 100_000
"""Most load levels read from one CSV (perf_analyzer writes one row per level)."""

NOT_RECORDED = "not recorded"


def sniff_import(text: str) -> str | None:
    """``"perf_analyzer-csv"``, ``"triton-stats"`` or ``None`` from a file's first bytes
    (a CSV header naming a perf_analyzer mode; a JSON object with ``model_stats``)."""
    head = text[:4096].lstrip("\ufeff").lstrip()
    first = head.split("\n", 1)[0].strip()
    if any(first.startswith(m + ",") for m in PA_MODES):
        return "perf_analyzer-csv"
    if head.startswith("{") and '"model_stats"' in head and '"schema_version"' not in head:
        return "triton-stats"
    return None


def _number(text: str, column: str, row: int, source: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{source}: row {row}: {column} is {text.strip()[:40]!r}, not a "
                         "number", PA_HINT) from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{source}: row {row}: {column} is {value!r}, not a finite "
                         "number >= 0", PA_HINT)
    return value


def read_perf_analyzer_csv(text: str, source: str) -> ImportedRun:
    """The load levels of a perf_analyzer CSV (see the module docstring).

    Rows end at the first empty line. Unknown columns are kept by name in
    ``ignored_columns``; the server-side columns may be absent (``missing`` says so).

    Raises:
        InputError: no perf_analyzer header, no ``Inferences/Second`` column, a row of
            another width, a value that is not a finite number >= 0, no row, or more
            than :data:`MAX_PA_ROWS` rows.
    """
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        header = [h.strip() for h in next(reader)]
    except (StopIteration, csv.Error):
        raise InputError(f"{source} is empty, not a perf_analyzer CSV", PA_HINT) from None
    if not header or header[0] not in PA_MODES:
        raise InputError(f"{source}: the first column is {header[0][:40] if header else ''!r},"
                         " not Concurrency or Request Rate", PA_HINT)
    if "Inferences/Second" not in header:
        raise InputError(f"{source}: no Inferences/Second column", PA_HINT)
    if len(set(header)) != len(header):
        raise InputError(f"{source}: a column is named twice in the header", PA_HINT)
    mode = PA_MODES[header[0]]
    levels: list[PerfAnalyzerLevel] = []
    try:
        for k, row in enumerate(reader, start=2):
            if not any(c.strip() for c in row):
                break
            if len(row) != len(header):
                raise InputError(f"{source}: row {k} has {len(row)} values, the header "
                                 f"{len(header)}", PA_HINT)
            if len(levels) >= MAX_PA_ROWS:
                raise InputError(f"{source}: more than {MAX_PA_ROWS:,} rows", PA_HINT)
            values: dict[str, Any] = {}
            for col, cell in zip(header, row):
                if col == header[0]:
                    v = _number(cell, col, k, source)
                    if mode == "concurrency":
                        if v != int(v):
                            raise InputError(f"{source}: row {k}: Concurrency {cell.strip()!r}"
                                             " is not a whole number", PA_HINT)
                        values["concurrency"] = int(v)
                    else:
                        values["request_rate_per_s"] = v
                elif col in PA_COLUMNS:
                    name, in_us = PA_COLUMNS[col]
                    v = _number(cell, col, k, source)
                    values[name] = v / 1000.0 if in_us else v
            levels.append(PerfAnalyzerLevel(**values))
    except csv.Error as exc:
        raise InputError(f"{source}: not a readable CSV ({exc})", PA_HINT) from None
    if not levels:
        raise InputError(f"{source}: a perf_analyzer header but no row", PA_HINT)
    missing = ["raw per-request latencies (perf_analyzer writes percentiles only)",
               "compute time per batch size", "the server's batching settings"]
    if not any(c in header for c in SERVER_COLUMNS):
        missing.insert(1, "server-side columns (queue and compute times)")
    return ImportedRun(source="perf_analyzer-csv", file=source, mode=mode, levels=levels,  # type: ignore[arg-type]
                       ignored_columns=[h for h in header[1:] if h not in PA_COLUMNS],
                       missing=missing)


def _pair(node: Any, key: str, where: str, source: str) -> tuple[int, int]:
    """``(count, ns)`` of a statistics duration entry (Triton writes uint64 as numbers;
    strings of digits are accepted too)."""
    entry = node.get(key, {"count": 0, "ns": 0}) if isinstance(node, dict) else None
    try:
        count, ns = int(str(entry["count"])), int(str(entry["ns"]))  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        raise InputError(f"{source}: {where}.{key} is not a {{count, ns}} pair of whole "
                         "numbers", STATS_HINT) from None
    if count < 0 or ns < 0:
        raise InputError(f"{source}: {where}.{key} has a negative count or ns", STATS_HINT)
    return count, ns


def _mean_ms(pair: tuple[int, int]) -> float | None:
    count, ns = pair
    return ns / count / 1e6 if count else None


def read_triton_stats(data: Any, source: str) -> ImportedRun:
    """The models of a Triton statistics dump (see the module docstring).

    Raises:
        InputError: no ``model_stats`` list, a model without a name, or a duration entry
            that is not a ``{count, ns}`` pair of whole numbers >= 0.
    """
    stats = data.get("model_stats") if isinstance(data, dict) else None
    if not isinstance(stats, list) or not stats:
        raise InputError(f"{source}: no model_stats list (or an empty one)", STATS_HINT)
    models: list[TritonModelStats] = []
    for i, m in enumerate(stats):
        where = f"model_stats[{i}]"
        if not isinstance(m, dict) or not isinstance(m.get("name"), str) or not m["name"]:
            raise InputError(f"{source}: {where} has no name", STATS_HINT)
        inf = m.get("inference_stats") or {}
        try:
            inference_count = int(str(m.get("inference_count", 0)))
            execution_count = int(str(m.get("execution_count", 0)))
        except ValueError:
            raise InputError(f"{source}: {where}: inference_count/execution_count are not "
                             "whole numbers", STATS_HINT) from None
        if inference_count < 0 or execution_count < 0:
            raise InputError(f"{source}: {where}: a negative count", STATS_HINT)
        iw = f"{where}.inference_stats"
        success = _pair(inf, "success", iw, source)
        fail = _pair(inf, "fail", iw, source)
        batches = []
        for j, b in enumerate(m.get("batch_stats") or []):
            bw = f"{where}.batch_stats[{j}]"
            try:
                size = int(str(b.get("batch_size")))
            except (AttributeError, ValueError):
                raise InputError(f"{source}: {bw} has no whole batch_size", STATS_HINT) from None
            if size < 1:
                raise InputError(f"{source}: {bw}: batch_size {size} < 1", STATS_HINT)
            parts = [_pair(b, k, bw, source)
                     for k in ("compute_input", "compute_infer", "compute_output")]
            if parts[1][0] == 0:
                continue
            means = [(_mean_ms(p) or 0.0) for p in parts]
            batches.append(TritonBatchStats(batch_size=size, executions=parts[1][0],
                                            compute_input_ms=means[0],
                                            compute_infer_ms=means[1],
                                            compute_output_ms=means[2],
                                            compute_ms=sum(means)))
        models.append(TritonModelStats(
            model=m["name"], version=str(m.get("version", "")),
            inference_count=inference_count, execution_count=execution_count,
            mean_batch_size=(inference_count / execution_count if execution_count else None),
            success_count=success[0], fail_count=fail[0], request_ms=_mean_ms(success),
            queue_ms=_mean_ms(_pair(inf, "queue", iw, source)),
            compute_input_ms=_mean_ms(_pair(inf, "compute_input", iw, source)),
            compute_infer_ms=_mean_ms(_pair(inf, "compute_infer", iw, source)),
            compute_output_ms=_mean_ms(_pair(inf, "compute_output", iw, source)),
            batches=sorted(batches, key=lambda b: b.batch_size)))
    missing = ["client latency (the statistics are the server's own times)",
               "latency percentiles (cumulative means only)",
               "the arrival rate and the measurement's duration",
               "the server's batching settings"]
    return ImportedRun(source="triton-stats", file=source, models=models, missing=missing)


def imported_results(text: str, source: str) -> Any:
    """A results document holding the measurements of another tool's file, or ``None``
    when ``text`` is neither source (:func:`sniff_import`).

    Raises:
        InputError: the file looks like one of the sources but is malformed.
    """
    kind = sniff_import(text)
    if kind is None:
        return None
    from trtcheck import __version__
    from trtcheck.results.environment import Environment
    from trtcheck.results.model import Results, ToolInfo, utc_now_iso

    if kind == "perf_analyzer-csv":
        run = read_perf_analyzer_csv(text, source)
    else:
        from trtcheck.safe_io import parse_json_text

        run = read_triton_stats(parse_json_text(text, source, STATS_HINT), source)
    tool = "perf_analyzer" if kind == "perf_analyzer-csv" else "Triton statistics"
    env = Environment(hostname=NOT_RECORDED, os=NOT_RECORDED, machine=NOT_RECORDED,
                      cpu_model=f"{NOT_RECORDED} ({tool} file)", cpu_count=0,
                      python_version=NOT_RECORDED, python_implementation=NOT_RECORDED,
                      trtcheck_version=__version__)
    return Results(tool=ToolInfo(version=__version__, command=[f"import {kind} {source}"]),
                   created_utc=utc_now_iso(), environment=env, imported=run)
