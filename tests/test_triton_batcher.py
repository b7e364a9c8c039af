"""Triton's batcher thread as the policy and the simulator model it
(trtcheck/policy.py ``BatchingPolicy.triton_step``; ``ServiceModel(batcher="triton")``)."""

from __future__ import annotations

import numpy as np
import pytest

from trtcheck.analyze.curve import make_curve
from trtcheck.analyze.simulator import ServiceModel, make_arrivals, simulate
from trtcheck.errors import InputError
from trtcheck.policy import BatchingPolicy

FLAT_10MS = make_curve([(1, 10.0), (32, 10.0)])


def _batches(batcher: str, policy: BatchingPolicy, arrivals_s: list[float],
             instances: int = 1, curve=FLAT_10MS) -> tuple[list[int], list[float]]:
    """Batch sizes (in execution order) and per-request latencies (ms)."""
    sv = ServiceModel(curve, spread="none", batcher=batcher)
    lat: list[float] = []
    p = simulate(policy, instances, sv, np.asarray(arrivals_s), finite=True,
                 latencies_out=lat)
    assert p.requests == len(arrivals_s)
    return p, lat


def test_step_waits_for_the_oldest_requests_delay():
    pol = BatchingPolicy(max_batch_size=32, max_queue_delay_us=2000)
    st = pol.triton_step(3, 0, False, oldest_enqueue_s=1.0, now_s=1.0005)
    assert (st.take, st.reason) == (0, "waiting")
    assert st.wait_until_s == pytest.approx(1.002)
    # no preferred sizes: max batch is the only one, so 32 - 0 queued requests wake it
    assert st.next_preferred == 32
    st = pol.triton_step(3, 0, False, oldest_enqueue_s=1.0, now_s=1.002)
    assert (st.take, st.reason, st.saturated) == (3, "window-expired", False)


def test_step_full_and_preferred_sizes():
    pol = BatchingPolicy(max_batch_size=16, max_queue_delay_us=2000,
                         preferred_batch_sizes=(4, 8))
    # a queue of 20 before the delay: the largest preferred size that can be formed
    st = pol.triton_step(20, 0, False, oldest_enqueue_s=0.0, now_s=0.0)
    assert (st.take, st.reason) == (8, "preferred")
    # GetDynamicBatch marks saturation only when no preferred size was found first
    assert not st.saturated
    # late: everything scanned up to the max batch, not cut back to a preferred size
    st = pol.triton_step(20, 0, False, oldest_enqueue_s=0.0, now_s=0.01)
    assert (st.take, st.reason, st.saturated) == (16, "full", True)
    # 3 queued, delay not passed: waits, and 4 - 0 queued requests wake the batcher
    st = pol.triton_step(3, 0, False, oldest_enqueue_s=0.0, now_s=0.0)
    assert (st.take, st.next_preferred) == (0, 4)


def test_step_grows_a_waiting_payload_only_off_a_preferred_size():
    pol = BatchingPolicy(max_batch_size=32, max_queue_delay_us=2000)
    # a payload of 3 handed to the instances (not a preferred size): queued requests join
    st = pol.triton_step(1, 3, False, oldest_enqueue_s=0.0, now_s=0.0)
    assert (st.take, st.reason, st.next_preferred) == (1, "grow", 29)
    pol = BatchingPolicy(max_batch_size=32, max_queue_delay_us=2000,
                         preferred_batch_sizes=(4, 8))
    st = pol.triton_step(1, 4, False, oldest_enqueue_s=0.0, now_s=0.0)
    assert (st.take, st.reason) == (0, "waiting")


def test_step_without_window_takes_what_is_queued():
    pol = BatchingPolicy(max_batch_size=8, max_queue_delay_us=0)
    st = pol.triton_step(3, 0, False, oldest_enqueue_s=0.0, now_s=0.0)
    assert (st.take, st.reason) == (3, "no-window")
    assert pol.triton_step(0, 0, False, None, 0.0).take == 0


def test_a_formed_batch_takes_no_later_arrivals_while_the_instance_is_busy():
    """Requests at 0, 0.5, 1 ms go at 2 ms (window 2 ms from the oldest) and hold the
    instance until 12 ms. Requests at 3, 4, 4.5 ms close a batch at 5 ms; requests at 6
    and 7 ms arrive after it closed."""
    pol = BatchingPolicy(max_batch_size=32, max_queue_delay_us=2000)
    arr = [0.0, 0.0005, 0.001, 0.003, 0.004, 0.0045, 0.006, 0.007]
    emb, emb_lat = _batches("embedded", pol, arr)
    tri, tri_lat = _batches("triton", pol, arr)
    # embedded: the instance free at 12 ms takes everything queued
    assert (emb.batches, emb.max_batch) == (2, 5)
    assert emb_lat[6] == pytest.approx(22.0 - 6.0)
    # Triton: [3, 4, 4.5 ms] at 12 ms, then [6, 7 ms] at 22 ms
    assert (tri.batches, tri.max_batch) == (3, 3)
    assert tri_lat[6] == pytest.approx(32.0 - 6.0)
    assert tri_lat[3] == pytest.approx(22.0 - 3.0) == emb_lat[3]


def test_without_window_triton_and_embedded_form_the_same_batches():
    pol = BatchingPolicy(max_batch_size=16, max_queue_delay_us=0)
    arr = make_arrivals("poisson", 600.0, 3000, 5)
    curve = make_curve([(1, 2.5), (16, 6.25)])
    emb, emb_lat = _batches("embedded", pol, list(arr), curve=curve)
    tri, tri_lat = _batches("triton", pol, list(arr), curve=curve)
    assert tri.batches == emb.batches
    assert np.allclose(tri_lat, emb_lat)


def test_under_load_triton_forms_smaller_batches_and_queues_longer():
    """The measured pattern on a real Triton 2.51 (docs/advise.md): as load grows its
    batches stay smaller than a batcher that waits for a free instance forms."""
    curve = make_curve([(1, 2.7), (2, 3.14), (3, 3.56), (4, 3.96), (5, 4.35)])
    pol = BatchingPolicy(max_batch_size=32, max_queue_delay_us=1000)
    arr = make_arrivals("poisson", 700.0, 6000, 1)
    out = {}
    for b in ("embedded", "triton"):
        sv = ServiceModel(curve, spread="none", batcher=b)
        out[b] = simulate(pol, 1, sv, arr, warmup_fraction=0.1, rate_per_s=700.0)
    assert out["triton"].mean_batch < out["embedded"].mean_batch
    assert out["triton"].batches > out["embedded"].batches
    assert out["triton"].p50_ms > out["embedded"].p50_ms


def test_two_instances_prefetch_and_all_requests_complete():
    pol = BatchingPolicy(max_batch_size=4, max_queue_delay_us=500)
    arr = [i * 0.0002 for i in range(200)]  # 5,000 req/s against 2 x 4 / 10 ms
    p, lat = _batches("triton", pol, arr, instances=2)
    assert p.requests == 200 and p.max_batch <= 4
    assert min(lat) >= 10.0


def test_unknown_batcher_is_refused():
    with pytest.raises(InputError, match="unknown batcher"):
        ServiceModel(FLAT_10MS, batcher="fifo")


def test_live_triton_calibration_turns_the_triton_rule_on():
    from trtcheck.analyze.advise import service_model
    from trtcheck.analyze.inputs import build_request
    from trtcheck.analyze.live_calibration import LiveCalibration, LiveObservation

    obs = LiveObservation(window_us=2000, max_batch_size=8, preferred_batch_sizes=(),
                          instances=1, rate_per_s=100.0, batch_stats={1: (10, 30.0)},
                          queue_mean_ms=1.0, compute_mean_ms=3.0,
                          server_request_mean_ms=4.0, mean_batch=1.0,
                          client_latencies_ms=np.full(20, 5.0))
    cal = LiveCalibration(curve=FLAT_10MS, request_delay_ms=(1.0,),
                          per_batch_overhead_ms=0.0, observation=obs)
    assert cal.service().batcher == "triton"
    req = build_request(FLAT_10MS, {"batcher": "triton"}, rate_per_s=50.0)
    assert service_model(req).batcher == "triton"
    # advice from the embedded batcher's own runs keeps its rule
    assert service_model(build_request(FLAT_10MS, {}, rate_per_s=50.0)).batcher == "embedded"
