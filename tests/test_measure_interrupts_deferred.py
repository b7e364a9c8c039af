"""``trtcheck.measure.interrupt.interrupts_deferred``: a Ctrl-C (or SIGTERM) that arrives
inside the block interrupts right after it, never inside it."""

from __future__ import annotations

import os
import signal

import pytest

from trtcheck.measure.interrupt import interrupts_deferred, sigterm_as_interrupt


@pytest.fixture(autouse=True)
def _python_ctrl_c_handler():
    """Python's own Ctrl-C handler in place: a test run started in the background of a
    shell without job control inherits SIGINT ignored, and Python then installs none
    (no KeyboardInterrupt at all); these tests are about deferring Python's."""
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_a_ctrl_c_inside_the_block_interrupts_after_it():
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            steps.append("after the signal, inside")  # not cut short
        steps.append("after the block")  # never reached: the interrupt comes first
    assert steps == ["after the signal, inside"]


def test_sigterm_goes_to_the_handler_in_place_before_the_block():
    with pytest.raises(KeyboardInterrupt) as info:
        with sigterm_as_interrupt():
            with interrupts_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
    assert info.value.args == ("SIGTERM",)


def test_without_a_signal_nothing_happens_and_handlers_are_back():
    before = signal.getsignal(signal.SIGINT)
    with interrupts_deferred():
        pass
    assert signal.getsignal(signal.SIGINT) is before


def _child_status(q) -> None:
    with open("/proc/self/status") as f:
        q.put(next(ln for ln in f if ln.startswith("SigBlk:")))


@pytest.mark.skipif(not os.path.exists("/proc/self/status") or
                    not hasattr(signal, "pthread_sigmask"), reason="Linux signal masks")
def test_a_process_started_with_ctrl_c_blocked_never_sees_it_and_the_parent_gets_it_after():
    import multiprocessing as mp

    from trtcheck.measure.interrupt import ctrl_c_blocked_for_children

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_blocked_for_children():
            p = ctx.Process(target=_child_status, args=(q,))
            p.start()
            os.kill(os.getpid(), signal.SIGINT)  # pending here until the block ends
        pytest.fail("the Ctrl-C was not delivered after the block")  # pragma: no cover
    blocked = int(q.get(timeout=60).split()[1], 16)
    p.join(timeout=60)
    assert blocked & (1 << (signal.SIGINT - 1))  # the child's mask holds SIGINT
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, set())  # ours is back
