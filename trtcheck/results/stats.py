"""Latency statistics records (values computed by :mod:`trtcheck.stats`)."""

from __future__ import annotations

from typing import Literal

from trtcheck.results.base import Record


class LatencyStats(Record):
    """Summary of one latency sample set, all in milliseconds.

    Percentiles follow ``percentile_method``: ``"linear"`` (interpolation between closest
    ranks, NumPy's default, Hyndman & Fan type 7) or ``"nearest-rank"`` (the sample at rank
    ``ceil(q * n)``, as trtexec; Hyndman & Fan type 1), computed in one place:
    :func:`trtcheck.stats.summarize`. ``median_ms`` is the median under both (the mean
    of the two middle samples for an even count). ``cv`` is the coefficient of variation
    (std / mean, a ratio, not percent). ``mad_ms`` is the median absolute deviation
    (unscaled); ``iqr_ms`` is p75 - p25.
    """

    count: int
    percentile_method: Literal["linear", "nearest-rank"] = "linear"
    mean_ms: float
    median_ms: float
    min_ms: float
    max_ms: float
    std_ms: float
    p25_ms: float
    p75_ms: float
    p90_ms: float
    p95_ms: float
    p99_ms: float
    mad_ms: float
    iqr_ms: float
    cv: float


class Finding(Record):
    """A warning or lint: what was seen, how bad, and what to do.

    Attributes:
        code: stable machine-readable identifier, e.g. ``"unstable-cv"`` or
            ``"onnx-shared-dim-name"``; gates and tests match on it.
        severity: ``"info"``, ``"warning"`` or ``"error"``.
        message: one sentence with the numbers that triggered it.
        remedy: what the user can do, or ``None``.
        where: the object concerned (tensor, layer, batch size), or ``None``.
    """

    code: str
    severity: str = "warning"
    message: str
    remedy: str | None = None
    where: str | None = None
