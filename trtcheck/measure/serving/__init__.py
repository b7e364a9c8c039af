"""Serving measurement: the dynamic batcher (``batcher``), the open/closed-loop load
generator (``loadgen``), the embedded serving target (``serve``, with the optional loopback
HTTP front ``http_front``); progress lines come from :mod:`trtcheck.measure.progress`,
shared with bench and precision. A live server (KServe v2, Triton) is the subpackage :mod:`trtcheck.measure.serving.live`.

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.measure.serving.batcher import (
    BatcherClosed,
    DynamicBatcher,
    QueueFull,
)
from trtcheck.measure.serving.loadgen import (
    LoadShape,
    parse_load,
    run_load,
)
from trtcheck.measure.serving.serve import (
    MAX_RAW_REQUESTS,
    default_report_sweep,
    measure_serving,
    request_shapes,
)

__all__ = [
    "BatcherClosed",
    "DynamicBatcher",
    "LoadShape",
    "MAX_RAW_REQUESTS",
    "QueueFull",
    "default_report_sweep",
    "measure_serving",
    "parse_load",
    "request_shapes",
    "run_load",
]
