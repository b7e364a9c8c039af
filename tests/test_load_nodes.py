"""The per-actor records of a Ray load (``trtcheck.results.load_nodes``) and the clock
offset estimate, without a cluster."""

from __future__ import annotations

import time

import pytest
from pydantic import ValidationError

from trtcheck.measure.serving.live.distributed import measure_clock_offset
from trtcheck.results.load_nodes import DistributedLoad, LoadNodeShare


def _share(actor: int, **kw) -> LoadNodeShare:
    base = dict(actor=actor, node_id=f"n{actor}", scheduled_requests=10, sent_requests=10,
                ok_requests=9, error_requests=1, late_sends=2)
    base.update(kw)
    return LoadNodeShare(**base)


def test_totals_must_be_the_sums_over_the_shares():
    nodes = [_share(0), _share(1, lost=True, sent_requests=0, ok_requests=0,
                               error_requests=0, late_sends=0, lost_requests=10)]
    d = DistributedLoad(ray_address="auto", actors=2, nodes=nodes, distinct_nodes=2,
                        scheduled_requests=20, sent_requests=10, ok_requests=9,
                        lost_requests=10, late_sends=2)
    assert d.lost_requests == 10
    with pytest.raises(ValidationError, match="ok_requests is 10"):
        DistributedLoad(ray_address="auto", actors=2, nodes=nodes, distinct_nodes=2,
                        scheduled_requests=20, sent_requests=10, ok_requests=10,
                        lost_requests=10, late_sends=2)


def test_a_share_accounts_for_its_requests():
    with pytest.raises(ValidationError, match="ok \\+ error \\+ timeout = 9"):
        _share(0, error_requests=0)
    with pytest.raises(ValidationError, match="a lost share has no outcomes"):
        _share(0, lost=True, lost_requests=10)
    with pytest.raises(ValidationError, match="loses its 10 scheduled"):
        _share(0, lost=True, sent_requests=0, ok_requests=0, error_requests=0,
               lost_requests=3)
    with pytest.raises(ValidationError, match="lost_requests without lost"):
        _share(0, lost_requests=1)


def test_the_clock_offset_of_a_clock_five_seconds_ahead():
    calls = []

    def remote() -> float:
        calls.append(1)
        return time.time() + 5.0

    offset_s, bound_s = measure_clock_offset(remote, samples=5)
    assert len(calls) == 5
    assert bound_s >= 0
    assert abs(offset_s - 5.0) <= bound_s + 1e-6
