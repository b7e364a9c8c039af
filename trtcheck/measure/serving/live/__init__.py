"""Live serving targets: a running KServe v2 server (Triton) measured over HTTP or gRPC
(``target``: the :class:`Target` protocol and the registry of target kinds by protocol,
``--url`` parsed once into an endpoint; ``live``: the measurement (metadata,
configuration override, statistics, the load); ``kserve``: the KServe v2 target, URLs and
the client library; ``kserve_http``: the HTTP data plane; ``distributed``: the load
spread over a Ray cluster, Ray imported only inside its functions).

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.measure.serving.live.distributed import RayLoad, import_ray
from trtcheck.measure.serving.live.kserve import import_client, parse_url
from trtcheck.measure.serving.live.live import measure_live
from trtcheck.measure.serving.live.live_faults import run_fault
from trtcheck.measure.serving.live.target import (
    TARGETS,
    Target,
    TargetKind,
    check_target_client,
    open_target,
    parse_endpoint,
    target_kind,
)

__all__ = [
    "TARGETS",
    "RayLoad",
    "Target",
    "TargetKind",
    "check_target_client",
    "import_client",
    "import_ray",
    "measure_live",
    "open_target",
    "parse_endpoint",
    "parse_url",
    "run_fault",
    "target_kind",
]
