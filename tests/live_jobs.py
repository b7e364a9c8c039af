"""Load jobs against the test Triton's ``tb_linear`` for tests that drive load processes
or Ray actors directly (as ``measure_live`` builds them per run)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any


def tb_linear_jobs(triton: Any, spec: str, seed: int, n: int) -> tuple[Any, list[Any]]:
    """``(load shape, [LoadJob per share])`` of ``spec`` split across ``n`` senders
    (5 s sending and drain bounds, 2 warm-up requests, 4 connections each)."""
    from trtcheck.measure.serving.live.kserve import parse_url
    from trtcheck.measure.serving.live.live import LoadJob, process_share, request_tensors
    from trtcheck.measure.serving.loadgen import parse_load

    def get(path: str) -> dict:
        with urllib.request.urlopen(triton.http_url + path, timeout=10) as r:
            return json.loads(r.read())

    feed, _, outs = request_tensors(get("/v2/models/tb_linear"),
                                    get("/v2/models/tb_linear/config"))
    ep = parse_url(triton.http_url)
    shape = parse_load(spec)
    return shape, [LoadJob(ep.url, ep.protocol, ep.address, "tb_linear", "", feed, outs,
                           process_share(shape, seed, k, n), seed, 5.0, 5.0, 2, 4)
                   for k in range(n)]
