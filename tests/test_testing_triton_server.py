"""The hand-started test Triton server (``python -m trtcheck.testing.triton_server``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request


def test_help_prints_usage_and_starts_nothing():
    res = subprocess.run([sys.executable, "-m", "trtcheck.testing.triton_server", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "usage: python -m trtcheck.testing.triton_server" in res.stdout
    assert "--load-model" in res.stdout and "http:" not in res.stdout


def test_prints_urls_while_serving_and_stops_on_sigterm(tmp_path):
    # stdout is a pipe (block-buffered unless flushed): the URLs must arrive while it runs
    proc = subprocess.Popen([sys.executable, "-m", "trtcheck.testing.triton_server",
                             "--dir", str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(lines) < 3:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
        assert [ln.split(":")[0] for ln in lines] == ["http", "grpc", "log"], (
            lines, proc.stderr.read() if proc.poll() is not None else "")
        http_url = lines[0].split(None, 1)[1]
        with urllib.request.urlopen(http_url + "/v2/models/tb_linear/ready", timeout=10) as r:
            assert r.status == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
