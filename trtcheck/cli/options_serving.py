"""Option types of the serving commands (``serve``, ``advise``): batching windows, max
batch sizes, instance counts and preferred batch sizes as comma lists."""

from __future__ import annotations

from trtcheck.cli.common import MAX_DURATION_MS, MAX_INSTANCES
from trtcheck.cli.options import CommaList

MAX_SERVE_BATCH = 65536
"""Largest ``--max-batch`` / ``--preferred-batch`` (the batch a request queue can fill;
``advise`` and ``--latency-curve`` use the same bound)."""


WINDOW_MS_LIST = CommaList(float, min=0.0, max=MAX_DURATION_MS, empty="refuse",
                           example="0,20,50,100")
"""Batching windows in ms (``--window-ms 0,20``): finite, 0 to
:data:`~trtcheck.cli.common.MAX_DURATION_MS`, each once."""

MAX_BATCH_LIST = CommaList(int, min=1, max=MAX_SERVE_BATCH, empty="refuse", example="1,8,32")
"""Max batch sizes (``--max-batch 1,8``): integers in 1..:data:`MAX_SERVE_BATCH`, each
once."""

INSTANCES_LIST = CommaList(int, min=1, max=MAX_INSTANCES, empty="refuse", example="1,2",
                           noun="instance counts")
"""Execution instance counts (``--instances 2``, a live sweep ``--instances 1,2``):
integers in 1..:data:`~trtcheck.cli.common.MAX_INSTANCES`, each once."""

PREFERRED_BATCH_LIST = CommaList(int, min=1, max=MAX_SERVE_BATCH, empty="none", example="4,8")
"""Triton preferred batch sizes (``--preferred-batch 4,8``), as :data:`MAX_BATCH_LIST`;
an empty value is none."""
