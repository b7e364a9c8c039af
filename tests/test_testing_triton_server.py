"""The hand-started test Triton server (``python -m trtcheck.testing.triton_server``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request


def _stop_cleanly(proc: subprocess.Popen) -> None:
    """SIGTERM stops the server with exit code 0."""
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0


def _kill_if_running(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


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
        _stop_cleanly(proc)
    finally:
        _kill_if_running(proc)


def test_serves_the_demo_resnet18_through_the_onnx_wrapper(tmp_path):
    """``--demo-resnet18``: the demo ResNet-18 is loaded at start as ``resnet18`` (max
    batch 4 here), ready, and answers an inference; the scripted ``tb_linear`` is not
    loaded beside it unless asked for. A bad ``--onnx`` is refused before anything
    starts."""
    import json

    import numpy as np

    bad = subprocess.run([sys.executable, "-m", "trtcheck.testing.triton_server", "--onnx",
                          f"m={tmp_path / 'missing.onnx'}"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "give NAME=PATH with an existing ONNX file" in bad.stderr
    proc = subprocess.Popen([sys.executable, "-m", "trtcheck.testing.triton_server",
                             "--dir", str(tmp_path), "--demo-resnet18", "--onnx-max-batch",
                             "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("http: "), (line, proc.stderr.read() if proc.poll() else "")
        http_url = line.split(None, 1)[1]
        with urllib.request.urlopen(http_url + "/v2/models/resnet18/config", timeout=10) as r:
            assert json.loads(r.read())["max_batch_size"] == 4
        with urllib.request.urlopen(http_url + "/v2/repository/index", data=b"{}",
                                    timeout=10) as r:
            ready = {m["name"] for m in json.loads(r.read()) if m.get("state") == "READY"}
        assert ready == {"resnet18"}, ready
        x = np.zeros((1, 3, 224, 224), dtype=np.float32)
        with urllib.request.urlopen(f"{http_url}/v2/models/resnet18", timeout=10) as r:
            inp = json.loads(r.read())["inputs"][0]
        body = json.dumps({"inputs": [{"name": inp["name"], "shape": list(x.shape),
                                       "datatype": "FP32", "data": x.ravel().tolist()}]})
        req = urllib.request.Request(f"{http_url}/v2/models/resnet18/infer",
                                     data=body.encode(), method="POST")
        with urllib.request.urlopen(req, timeout=60) as r:
            out = json.loads(r.read())["outputs"][0]
        assert out["shape"][0] == 1 and len(out["data"]) == int(np.prod(out["shape"]))
        _stop_cleanly(proc)
    finally:
        _kill_if_running(proc)
