"""Starting the load processes of ``serve --url`` / ``tune``
(``trtcheck.measure.serving.live.live.run_processes``): a terminal's Ctrl-C never
reaches a load process that is still starting, and a load process that dies while
starting is one error, never a hang."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

LINUX_MASKS = pytest.mark.skipif(
    not os.path.exists("/proc/self/status") or not hasattr(signal, "pthread_sigmask"),
    reason="Linux signal masks")


def _run(tmp_path, script: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess:
    """``script`` as a file in a fresh interpreter (no resource tracker running yet, as
    in a new ``trtcheck`` command; a file, so spawned children find its functions)."""
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=timeout_s)


@LINUX_MASKS
def test_the_first_process_started_with_ctrl_c_blocked_has_it_blocked(tmp_path):
    # multiprocessing unblocks SIGINT after it starts its resource tracker, which it
    # does with the first spawned process of a command: the first load process too
    res = _run(tmp_path, """
        import multiprocessing as mp
        from trtcheck.measure.interrupt import ctrl_c_blocked_for_children

        def status(conn):
            with open("/proc/self/status") as f:
                conn.send(next(ln for ln in f if ln.startswith("SigBlk:")))

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            r, w = ctx.Pipe(duplex=False)  # no semaphore: no resource tracker before
            with ctrl_c_blocked_for_children():
                p = ctx.Process(target=status, args=(w,))
                p.start()
            w.close()
            print(r.recv())
            p.join(60)
        """)
    assert res.returncode == 0, res.stderr
    blocked = int(res.stdout.split()[1], 16)
    assert blocked & (1 << (signal.SIGINT - 1)), res.stdout


def test_a_load_process_that_dies_while_starting_is_one_error_not_a_hang(tmp_path):
    # the job unpickles into an immediate exit, ahead of 2 MB of data (more than a pipe
    # holds: a start-data write to a child that died would block for good)
    res = _run(tmp_path, """
        import os
        from trtcheck.errors import TrtcheckError
        from trtcheck.measure.serving.live.live import run_processes

        class DiesWhenLoaded:
            def __reduce__(self):
                return (os._exit, (3,))

        if __name__ == "__main__":
            try:
                run_processes([(DiesWhenLoaded(), b"x" * 2_000_000)], lambda: None, 10.0)
            except TrtcheckError as exc:
                print("error:", exc)
        """, timeout_s=90.0)
    assert res.returncode == 0, res.stderr
    assert "error: a load generator process died before it could start" in res.stdout, (
        res.stdout, res.stderr)
