"""``trtcheck serve --url`` stopped early: Ctrl-C/SIGTERM and a parent killed hard.

Against a real tritonserver (``trtcheck/testing/triton_server.py``). An interrupted live
run exits 130 with the configurations that finished written and marked incomplete,
stops its load processes (none outlives the command), and loads the model's original
configuration again after a sweep. A measuring process killed hard (SIGKILL) takes its
load processes with it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import HANG_LIMIT_S, REPO, interruptible

pytestmark = [pytest.mark.triton, pytest.mark.slow]


def _load_processes(parent_pid: int) -> list[int]:
    """Pids of the spawned load processes (``multiprocessing`` ``spawn_main``) whose
    parent is ``parent_pid`` (read from /proc)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        if ppid == parent_pid and "spawn_main" in cmd:
            pids.append(int(d.name))
    return pids


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _start(url: str, out: Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("TRTCHECK_DEBUG", None)
    return subprocess.Popen([sys.executable, "-m", "trtcheck", "serve", "--url", url,
                             "--model", "tb_linear", "-o", str(out), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=interruptible)


def _wait_line(proc: subprocess.Popen, text: str) -> list[str]:
    lines = []
    while True:
        line = proc.stderr.readline()
        assert line, f"serve ended before {text!r}: {''.join(lines)}"
        lines.append(line)
        if text in line:
            return lines


def _wait_load_processes(proc: subprocess.Popen, timeout_s: float = 60.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pids = _load_processes(proc.pid)
        if pids:
            return pids
        assert proc.poll() is None, "serve ended before its load processes started"
        time.sleep(0.05)
    raise AssertionError("no load process started")


def _inferences(triton) -> int:
    return int(triton.stats("tb_linear")["model_stats"][0]["inference_count"])


def _wait_sending(triton, proc: subprocess.Popen, since: int, n: int = 40,
                  timeout_s: float = 60.0) -> None:
    """Wait until the server has counted ``n`` requests more than ``since`` (the
    warm-up bursts are fewer: the run itself is sending)."""
    deadline = time.monotonic() + timeout_s
    while _inferences(triton) - since < n:
        assert time.monotonic() < deadline, "the run did not start sending"
        assert proc.poll() is None, "serve ended before its run started"
        time.sleep(0.05)


def _config(url: str) -> dict:
    with urllib.request.urlopen(url + "/v2/models/tb_linear/config", timeout=10) as r:
        return json.loads(r.read())


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_interrupted_sweep_keeps_the_finished_config_and_restores_the_model(triton,
                                                                          tmp_path, sig):
    out = tmp_path / "int.json"
    proc = _start(triton.http_url, out, "--window-ms", "0,5", "--max-batch", "8",
                  "--load", "open:100", "--duration-s", "1.5")
    try:
        _wait_line(proc, "[1/2]")  # the first configuration finished
        pids = _wait_load_processes(proc)  # the second one's load is running
        time.sleep(0.3)
        proc.send_signal(getattr(signal, sig))
        _stdout, stderr = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert f"interrupted by {sig}: 1 of 2 configuration(s) measured" in stderr, stderr
    assert "marked incomplete" in stderr
    assert not [p for p in pids if _alive(p)], "a load process outlived the command"
    data = json.loads(out.read_text())
    assert data["incomplete"] == f"interrupted by {sig}: 1 of 2 configuration(s) measured"
    assert data["serve"]["incomplete"] == data["incomplete"]
    configs = data["serve"]["configs"]
    assert [(c["window_us"], c["max_batch_size"]) for c in configs] == [(0.0, 8)]
    assert configs[0]["repeats"][0]["outcomes"]["ok"] > 50
    # the model runs with the configuration it had before the sweep
    now = _config(triton.http_url)
    assert now["max_batch_size"] == 32
    assert now["dynamic_batching"]["max_queue_delay_microseconds"] == 2000


@pytest.mark.parametrize("scheme", ["http", "grpc"])
def test_sigterm_during_the_only_run_writes_an_incomplete_file(triton, tmp_path, scheme):
    out = tmp_path / "int.json"
    since = _inferences(triton)
    url = triton.http_url if scheme == "http" else triton.grpc_url
    # an hour of sending: a command that waited for it would run into the hang limit
    proc = _start(url, out, "--load", "open:100", "--duration-s", "3600")
    try:
        pids = _wait_load_processes(proc)
        _wait_sending(triton, proc, since)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=HANG_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "interrupted by SIGTERM: 0 of 1 configuration(s) measured" in stderr
    assert not [p for p in pids if _alive(p)], "a load process outlived the command"
    data = json.loads(out.read_text())
    assert data["incomplete"] == "interrupted by SIGTERM: 0 of 1 configuration(s) measured"
    assert data["serve"]["configs"] == []
    # the text table shows no empty header for a load that never finished
    assert "no configuration finished" in stdout and "window_ms" not in stdout


def test_load_processes_die_with_a_parent_killed_hard(triton, tmp_path):
    out = tmp_path / "int.json"
    since = _inferences(triton)
    proc = _start(triton.http_url, out, "--load", "open:100", "--duration-s", "20",
                  "--client-processes", "2")
    try:
        pids = _wait_load_processes(proc)
        _wait_sending(triton, proc, since)  # both run: neither waits on the pipe
        pids = _load_processes(proc.pid)
        assert len(pids) == 2
        proc.kill()  # SIGKILL: the command cannot stop them itself
        proc.wait(timeout=30)  # not communicate(): the load processes hold its pipes
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.stderr.close()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    left = [p for p in pids if _alive(p)]
    for p in left:  # never leave one behind, even when the assertion fails
        os.kill(p, signal.SIGKILL)
    assert not left, "load processes outlived a parent killed hard"
    assert not out.exists()


def test_ctrl_c_while_a_configuration_loads_still_restores_the_original(triton, tmp_path):
    """A Ctrl-C that lands while the sweep's first configuration loads (``tb_slowload``
    takes 3 s a load): exit 130, no traceback, and the original configuration (window
    2 ms) is what the server runs afterwards. (After such an interrupt the server may run
    either configuration, both trtcheck's: the check before the restore accepts both.)"""
    req = urllib.request.Request(f"{triton.http_url}/v2/repository/models/tb_slowload/load",
                                 data=b"{}", method="POST")
    with urllib.request.urlopen(req, timeout=120) as r:
        assert r.status == 200

    def window_us() -> int:
        with urllib.request.urlopen(f"{triton.http_url}/v2/models/tb_slowload/config",
                                    timeout=30) as r:
            cfg = json.loads(r.read())
        return int(cfg["dynamic_batching"]["max_queue_delay_microseconds"])

    assert window_us() == 2000
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "trtcheck", "serve", "--url",
                             triton.http_url, "--model", "tb_slowload", "--window-ms", "1,3",
                             "--load", "burst:4", "-o", str(tmp_path / "x.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=interruptible)
    try:
        seen = _wait_line(proc, "loading tb_slowload with window 1 ms")
        time.sleep(1.0)  # inside the 3 s load
        proc.send_signal(signal.SIGINT)
        _out, rest = proc.communicate(timeout=HANG_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = "".join(seen) + rest
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert window_us() == 2000, err
