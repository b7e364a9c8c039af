"""Live serving targets: a running KServe v2 server (Triton) measured over HTTP or gRPC
(``live``: metadata, configuration override, statistics, the load; ``kserve``: URLs and
the client library; ``kserve_http``: the HTTP data plane; ``distributed``: the load
spread over a Ray cluster, Ray imported only inside its functions).

The names below are the subsystem's public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.measure.serving.live.distributed import RayLoad, import_ray
from trtcheck.measure.serving.live.kserve import import_client, parse_url
from trtcheck.measure.serving.live.live import measure_live
from trtcheck.measure.serving.live.live_faults import run_fault

__all__ = [
    "RayLoad",
    "import_ray",
    "import_client",
    "measure_live",
    "parse_url",
    "run_fault",
]
