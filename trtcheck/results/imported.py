"""Measurements made by other tools, read into the results model.

A team that already measures with Triton's ``perf_analyzer`` (``-f out.csv``) or keeps
Triton's statistics (``GET /v2/models/NAME/stats``) can report, gate and compare those
numbers without re-measuring. :class:`ImportedRun` keeps what the source holds, in the
model's units (milliseconds, per second), names the source file and tool, and lists
what the source does not hold (``missing``), so a reader knows which conclusions it
cannot support. Raw per-request samples are never in these sources: regressions on
them are judged on the recorded statistics only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trtcheck.results.base import Record


class PerfAnalyzerLevel(Record):
    """One row of a perf_analyzer CSV: one load level (a concurrency or a request rate).

    perf_analyzer writes microseconds; these fields hold milliseconds. The ``server_*``
    fields are Triton's averages per request over the level's measurement window
    (``None`` when the CSV has no server-side columns: a server that reports no
    statistics, or another service kind).

    Attributes:
        concurrency: ``Concurrency`` column (concurrency mode), else ``None``.
        request_rate_per_s: ``Request Rate`` column (request-rate mode), else ``None``.
        throughput_inferences_per_s: ``Inferences/Second`` (inferences, i.e. requests x
            batch size of each request).
        p50_ms, p90_ms, p95_ms, p99_ms: client latency percentiles (``pNN latency``).
        avg_latency_ms: ``Avg latency`` (``--verbose-csv`` only).
        client_send_ms, client_recv_ms: ``Client Send`` / ``Client Recv``.
        network_server_send_recv_ms: ``Network+Server Send/Recv``.
        server_queue_ms, server_compute_input_ms, server_compute_infer_ms,
        server_compute_output_ms: ``Server Queue``, ``Server Compute Input/Infer/Output``.
    """

    concurrency: int | None = Field(default=None, ge=0)
    request_rate_per_s: float | None = Field(default=None, ge=0)
    throughput_inferences_per_s: float = Field(ge=0)
    p50_ms: float | None = Field(default=None, ge=0)
    p90_ms: float | None = Field(default=None, ge=0)
    p95_ms: float | None = Field(default=None, ge=0)
    p99_ms: float | None = Field(default=None, ge=0)
    avg_latency_ms: float | None = Field(default=None, ge=0)
    client_send_ms: float | None = Field(default=None, ge=0)
    network_server_send_recv_ms: float | None = Field(default=None, ge=0)
    server_queue_ms: float | None = Field(default=None, ge=0)
    server_compute_input_ms: float | None = Field(default=None, ge=0)
    server_compute_infer_ms: float | None = Field(default=None, ge=0)
    server_compute_output_ms: float | None = Field(default=None, ge=0)
    client_recv_ms: float | None = Field(default=None, ge=0)


class TritonBatchStats(Record):
    """One ``batch_stats`` entry of Triton's statistics: executions of one batch size.

    Attributes:
        batch_size: the batch size of these executions.
        executions: how many (``compute_infer.count``).
        compute_input_ms, compute_infer_ms, compute_output_ms: mean time per execution
            (``ns / count``, in ms).
        compute_ms: their sum: the server compute time of one batch of ``batch_size``
            (what the advice's T(b) is).
    """

    batch_size: int = Field(ge=1)
    executions: int = Field(ge=0)
    compute_input_ms: float = Field(ge=0)
    compute_infer_ms: float = Field(ge=0)
    compute_output_ms: float = Field(ge=0)
    compute_ms: float = Field(ge=0)


class TritonModelStats(Record):
    """Triton's cumulative statistics of one model version (``model_stats[]`` of
    ``GET /v2/models/NAME/stats``), as means in milliseconds.

    Attributes:
        model, version: the model and version.
        inference_count: inferences (batch items) served; execution_count: executions.
        mean_batch_size: ``inference_count / execution_count`` (``None`` without
            executions).
        success_count, fail_count: requests that succeeded / failed.
        request_ms: mean time of a successful request in the server (``success``).
        queue_ms, compute_input_ms, compute_infer_ms, compute_output_ms: mean per
            request (``ns / count`` of each).
        batches: per batch size, mean compute per execution.
    """

    model: str
    version: str = ""
    inference_count: int = Field(ge=0)
    execution_count: int = Field(ge=0)
    mean_batch_size: float | None = None
    success_count: int = Field(default=0, ge=0)
    fail_count: int = Field(default=0, ge=0)
    request_ms: float | None = Field(default=None, ge=0)
    queue_ms: float | None = Field(default=None, ge=0)
    compute_input_ms: float | None = Field(default=None, ge=0)
    compute_infer_ms: float | None = Field(default=None, ge=0)
    compute_output_ms: float | None = Field(default=None, ge=0)
    batches: list[TritonBatchStats] = []


class ImportedRun(Record):
    """Numbers read from another tool's output file.

    Attributes:
        source: ``"perf_analyzer-csv"`` or ``"triton-stats"``.
        file: the file as the user named it.
        mode: perf_analyzer's load mode (``"concurrency"`` or ``"request-rate"``);
            ``None`` for statistics.
        levels: perf_analyzer rows, in file order.
        models: Triton statistics, one per model version in the dump.
        ignored_columns: CSV columns this trtcheck does not map (kept by name only).
        missing: what the source does not hold, one phrase each (``"raw per-request
            latencies"``, ``"server-side columns"``, ``"arrival rate"``...).
    """

    source: Literal["perf_analyzer-csv", "triton-stats"]
    file: str
    mode: Literal["concurrency", "request-rate"] | None = None
    levels: list[PerfAnalyzerLevel] = []
    models: list[TritonModelStats] = []
    ignored_columns: list[str] = []
    missing: list[str] = []
