import pytest

from trtcheck.errors import InputError
from trtcheck.policy import BatchingPolicy


def test_window_zero_takes_what_is_queued():
    # a zero window must still batch a backlog (wait_for(queue.get(), 0) would give up)
    p = BatchingPolicy(max_batch_size=32, max_queue_delay_us=0)
    assert p.decide(20, 0.0, 0.0).dispatch == 20
    assert p.decide(100, 0.0, 0.0).dispatch == 32
    assert p.decide(0, None, 0.0).dispatch == 0


def test_window_timer_starts_at_oldest_request():
    p = BatchingPolicy(max_batch_size=8, max_queue_delay_us=1000)
    d = p.decide(3, oldest_enqueue_s=10.0, now_s=10.0004)
    assert d.dispatch == 0 and d.wait_until_s == pytest.approx(10.001)
    d = p.decide(3, oldest_enqueue_s=10.0, now_s=10.001)
    assert d.dispatch == 3 and d.reason == "window-expired"
    assert p.decide(8, 10.0, 10.0).reason == "full"


def test_preferred_sizes_go_at_once():
    p = BatchingPolicy(max_batch_size=16, max_queue_delay_us=5000, preferred_batch_sizes=(4, 8))
    assert p.decide(3, 0.0, 0.0).dispatch == 0
    assert p.decide(5, 0.0, 0.0).dispatch == 4
    assert p.decide(9, 0.0, 0.0).dispatch == 8


@pytest.mark.parametrize("kw", [dict(max_batch_size=0), dict(max_queue_delay_us=-1),
                                dict(max_batch_size=4, preferred_batch_sizes=(8,))])
def test_bad_policy(kw):
    with pytest.raises(InputError):
        BatchingPolicy(**kw)


def test_triton_preferred_size_goes_before_a_full_batch():
    # core dynamic_batch_scheduler.cc: before the delay passes, the best preferred size is
    # sent even when max_batch_size requests are queued
    p = BatchingPolicy(max_batch_size=16, max_queue_delay_us=5000, preferred_batch_sizes=(4, 8))
    d = p.decide(20, 0.0, 0.001)
    assert (d.dispatch, d.reason) == (8, "preferred")


def test_triton_late_batch_is_not_cut_to_a_preferred_size():
    p = BatchingPolicy(max_batch_size=16, max_queue_delay_us=5000, preferred_batch_sizes=(4, 8))
    assert p.decide(11, 0.0, 0.006).dispatch == 11  # delay passed: all scanned
    assert p.decide(20, 0.0, 0.006).dispatch == 16  # ... up to max batch
    assert p.decide(3, 0.0, 0.006).dispatch == 3


def test_triton_zero_delay_still_prefers():
    # a delay of 0 is never "exceeded" in Triton: the best preferred size goes first
    p = BatchingPolicy(max_batch_size=16, max_queue_delay_us=0, preferred_batch_sizes=(4,))
    assert p.decide(6, 0.0, 0.0).dispatch == 4
    assert p.decide(2, 0.0, 0.0).dispatch == 2
    assert p.decide(30, 0.0, 0.0).dispatch == 4


def test_no_preferred_sizes_means_max_batch_is_the_preferred_one():
    p = BatchingPolicy(max_batch_size=8, max_queue_delay_us=1000)
    assert p.decide(8, 0.0, 0.0).reason == "full"
    assert p.decide(7, 0.0, 0.0).dispatch == 0
    assert p.decide(7, 0.0, 0.002).dispatch == 7
