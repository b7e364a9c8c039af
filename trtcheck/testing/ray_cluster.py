"""A real multi-node Ray cluster on this one host, for tests and benchmarks.

:func:`local_ray_cluster` starts a head node and worker nodes with
``ray.cluster_utils.Cluster`` (each node its own raylet, object store and ports; the
workers this process's environment, so this checkout's trtcheck), waits until all are
alive and shuts every node down on exit, however the block ends. Node health is checked
every 0.5 s (Ray's default: 3 s, 5 misses), so a stopped node is declared dead within
about 2 s and the tests of a lost node stay short.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Ray system settings of the test clusters: a dead node is noticed within ~2 s.
FAST_FAILURE_CONFIG = {"health_check_period_ms": 500, "health_check_failure_threshold": 4,
                       "health_check_initial_delay_ms": 500}


@contextlib.contextmanager
def local_ray_cluster(nodes: int = 3, cpus_per_node: int = 1,
                      object_store_bytes: int = 80 * 1024 * 1024) -> Iterator[Any]:
    """A running ``ray.cluster_utils.Cluster`` of ``nodes`` nodes (the head counts), each
    with ``cpus_per_node`` CPUs and a small object store; ``cluster.address`` is what
    ``--ray`` takes. The repository root is put on the nodes' ``PYTHONPATH``.

    Raises:
        ImportError: Ray is not installed.
    """
    from ray.cluster_utils import Cluster

    repo = str(Path(__file__).resolve().parents[2])
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = repo + (os.pathsep + old if old else "")
    cluster = None
    try:
        cluster = Cluster(initialize_head=True, shutdown_at_exit=True, head_node_args={
            "num_cpus": cpus_per_node, "object_store_memory": object_store_bytes,
            "_system_config": FAST_FAILURE_CONFIG})
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=cpus_per_node, object_store_memory=object_store_bytes)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        if cluster is not None:
            cluster.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
