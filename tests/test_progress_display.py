"""Progress a person can read: a bar with the time left on a terminal, plain low-rate
lines elsewhere, nothing with -q, and -q/-v accepted before or after the command."""

from __future__ import annotations

import fcntl
import io
import json
import logging
import os
import pty
import subprocess
import struct
import sys
import termios
import threading

import pytest

from tests.conftest import REPO, run_cli
from trtcheck.cli.common import LOGGER_NAME, configure_logging
from trtcheck.cli.progress_display import CliProgress, format_seconds
from trtcheck.measure.progress import begin_steps, step_done

FAST = ["--warmup", "0", "--min-duration", "0.05", "--min-samples", "5"]


@pytest.fixture(autouse=True)
def _default_verbosity():
    configure_logging(0)
    yield
    configure_logging(0)


def test_terminal_bar_counts_steps_and_shows_the_time_left():
    out = io.StringIO()
    now = [0.0]
    bar = CliProgress(terminal=True, stream=out, clock=lambda: now[0])
    begin_steps(bar, 3, "batch size", "bench")
    for i in range(3):
        step_done(bar, f"bench: batch {2 ** i} ({i + 1}/3): median 1.000 ms")
    text = out.getvalue()
    assert "bench:" in text and "3/3" in text and "100%" in text
    assert "elapsed" in text and "left]" in text
    assert "bench: batch 4 (3/3): median 1.000 ms" in text  # each step's line is kept


def test_plain_lines_are_throttled_and_carry_the_time_left(capsys):
    now = [0.0]
    lines = CliProgress(terminal=False, min_interval_s=5.0, clock=lambda: now[0])
    capsys.readouterr()
    lines.begin(4, "run", "serve")
    for t in (2.0, 4.0, 8.0, 9.0):  # 4 runs of 2, 2, 4 and 1 s
        now[0] = t
        lines.step(f"run done at {t:g} s")
    got = capsys.readouterr().err.splitlines()
    # the first, then one after >= 5 s, then the last; never one per step
    assert got == ["run done at 2 s (about 6 s left)", "run done at 8 s (about 3 s left)",
                   "run done at 9 s"]


def test_a_plain_callable_gets_the_step_lines():
    seen: list[str] = []
    begin_steps(seen.append, 2, "model", "precision")
    step_done(seen.append, "a")
    step_done(None, "ignored")
    step_done(seen.append, "b", steps=3)
    assert seen == ["a", "b"]


def test_format_seconds():
    assert [format_seconds(s) for s in (0, 42.4, 185, 3720)] == [
        "0 s", "42 s", "3 min 05 s", "1 h 02 min"]


def _run_with_terminal_stderr(*args: str) -> tuple[int, str, str]:
    """``python -m trtcheck ARGS`` with stderr on a pseudo-terminal and stdout on a pipe."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TERM="xterm", COLUMNS="100")
    proc = subprocess.Popen([sys.executable, "-m", "trtcheck", *args], stdout=subprocess.PIPE,
                            stderr=slave, env=env, text=True)
    os.close(slave)
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()  # stdout drains while the terminal is read: neither pipe fills up
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    reader.join(60)
    os.close(master)
    return proc.returncode, "".join(out), b"".join(chunks).decode(errors="replace")


def test_bench_draws_a_bar_on_a_terminal_and_keeps_stdout_clean(tiny_relu_model):
    code, stdout, terminal = _run_with_terminal_stderr(
        "bench", str(tiny_relu_model), "--shapes", "x:1x3x8x8", "--batch", "1,2,4",
        "--format", "json", *FAST)
    assert code == 0, terminal
    assert "bench:" in terminal and "3/3" in terminal and "left]" in terminal
    doc = json.loads(stdout)  # nothing but the JSON document on stdout
    assert doc["kind"] == "results" and len(doc["bench"][0]["batches"]) == 3


def test_serve_draws_a_bar_on_a_terminal():
    code, stdout, terminal = _run_with_terminal_stderr(
        "serve", "--synthetic-curve", "1:0.5,8:1", "--window-ms", "0,1", "--max-batch", "8",
        "--load", "burst:16", "--repeats", "1", "--format", "json")
    assert code == 0, terminal
    assert "serve:" in terminal and "2/2" in terminal and "left]" in terminal
    assert json.loads(stdout)["kind"] == "results"


def test_q_and_v_after_the_subcommand(tiny_relu_model, tmp_path):
    args = [str(tiny_relu_model), "--shapes", "x:1x3x8x8", "--batch", "1,2", *FAST]
    quiet = run_cli("bench", *args, "-q")
    assert quiet.returncode == 0 and quiet.stderr == ""
    verbose = run_cli("bench", "-v", *args)
    assert verbose.returncode == 0 and "bench: batch 1 (1/2) starts" in verbose.stderr
    out = tmp_path / "r.json"
    assert run_cli("bench", *args, "-o", str(out), "-q").returncode == 0
    report = run_cli("report", "-q", "--from", str(out), "-o", str(tmp_path / "rep"))
    assert report.returncode == 0 and report.stderr == "", report.stderr
    loud = run_cli("report", "--from", str(out), "-o", str(tmp_path / "rep2"))
    assert loud.returncode == 0 and loud.stderr != ""


@pytest.mark.parametrize("argv,level", [
    (["-q", "schema"], logging.WARNING), (["schema", "-q"], logging.WARNING),
    (["-q", "schema", "-q"], logging.ERROR), (["schema", "-qq"], logging.ERROR),
    (["-v", "schema"], logging.DEBUG), (["schema", "-v"], logging.DEBUG),
    (["-q", "schema", "-v"], logging.INFO), (["schema"], logging.INFO),
])
def test_counts_before_and_after_the_subcommand_add_up(argv, level, capsys):
    from trtcheck.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    assert logging.getLogger(LOGGER_NAME).level == level
