"""Benchmarks and builds: timing one backend per batch size (``bench``), the bench
options and results of a command run (``runner``), building TensorRT engines (``build``)
and FP16 copies of ONNX models (``fp16``).

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.measure.bench.bench import StopRule, run_bench
from trtcheck.measure.bench.build import PRECISIONS, build_engine
from trtcheck.measure.bench.fp16 import (
    FP16_WEIGHT_MAX,
    FP16_WEIGHT_MIN,
    convert_to_fp16,
    fp16_op_block_list,
)
from trtcheck.measure.bench.runner import (
    RunOptions,
    backend_kwargs,
    bench_model,
    new_results,
    rule_from_options,
)

__all__ = [
    "FP16_WEIGHT_MAX",
    "FP16_WEIGHT_MIN",
    "PRECISIONS",
    "RunOptions",
    "StopRule",
    "backend_kwargs",
    "bench_model",
    "build_engine",
    "convert_to_fp16",
    "fp16_op_block_list",
    "new_results",
    "rule_from_options",
    "run_bench",
]
