"""``trtcheck.measure.interrupt.interrupts_deferred``: a Ctrl-C (or SIGTERM) that arrives
inside the block interrupts right after it, never inside it."""

from __future__ import annotations

import os
import signal

import pytest

from trtcheck.measure.interrupt import interrupts_deferred, sigterm_as_interrupt


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
