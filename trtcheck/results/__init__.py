"""The versioned results model: the one thing analysis, report and gate read.

Every record is a strict pydantic model that round-trips through JSON
(``results_from_json(results_to_json(r)) == r``).
"""

from trtcheck.results.bench import BackendInfo, BatchResult, BenchRun, BenchSettings
from trtcheck.results.environment import Environment, GpuInfo
from trtcheck.results.inspection import ComputeEstimate, ModelInspection, TensorInfo
from trtcheck.results.model import (
    SCHEMA_HISTORY,
    SCHEMA_VERSION,
    Results,
    ToolInfo,
    load_results,
    results_from_json,
    results_to_json,
    save_results,
    utc_now_iso,
)
from trtcheck.results.stats import Finding, LatencyStats

__all__ = [
    "SCHEMA_HISTORY", "SCHEMA_VERSION", "BackendInfo", "BatchResult", "BenchRun",
    "BenchSettings", "ComputeEstimate", "Environment", "Finding", "GpuInfo",
    "LatencyStats", "ModelInspection", "Results", "TensorInfo", "ToolInfo",
    "load_results", "results_from_json", "results_to_json", "save_results", "utc_now_iso",
]
