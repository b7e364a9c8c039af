"""Faults in the middle of a live run, against the real tritonserver: the server killed,
restarted, the model unloaded, the model loaded again with another configuration by
someone else, the network reset. Each run ends, keeps every configuration it finished,
marks the broken one with what happened (``incomplete`` reading ``invalid: ...`` and a
``server-fault`` finding), and restores nothing it cannot reach (``config-not-restored``).

Each test starts its own server (it breaks it); loads are short.
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading

import pytest

from conftest import REPO, assert_one_line_error
from trtcheck.measure.serving.live.live import measure_live
from trtcheck.measure.serving.live.live_faults import run_fault
from trtcheck.testing.triton_server import TritonServer, make_repository

pytestmark = [pytest.mark.triton, pytest.mark.slow]


@pytest.fixture
def server(tmp_path):
    srv = TritonServer(make_repository(tmp_path), explicit=True, load_models=("tb_linear",))
    try:
        srv.start()
    except Exception as exc:  # noqa: BLE001 - a clear failure, never a skip
        pytest.fail(f"cannot start tritonserver (engines/fetch_triton.py): {exc}")
    yield srv
    srv.stop()


def _after(lines: list[str], needle: str, action, delay_s: float) -> callable:
    """A progress callback that runs ``action`` in a thread ``delay_s`` after the first
    line containing ``needle`` (the thread is appended to ``lines`` to be joined)."""
    fired = threading.Event()

    def progress(line: str) -> None:
        lines.append(line)
        if needle in line and not fired.is_set():
            fired.set()
            t = threading.Timer(delay_s, action)
            t.start()
            timers.append(t)

    timers: list[threading.Timer] = []
    progress.timers = timers  # type: ignore[attr-defined]
    return progress


def _join(progress) -> None:
    for t in progress.timers:
        t.join(timeout=90)


def _fault_warnings(run) -> dict[str, str]:
    return {w.code: w.message for w in run.warnings}


def test_server_killed_mid_sweep_keeps_the_first_configuration(server):
    lines: list[str] = []
    run = measure_live(server.http_url, "tb_linear", max_batch_sizes=[4, 8],
                       loads=["closed:4"], max_duration_s=4.0, drain_timeout_s=2.0,
                       progress=_after(lines, "max batch 8, ", server.kill, 1.5))
    assert [c.max_batch_size for c in run.configs] == [4]
    assert run.configs[0].repeats[0].outcomes["ok"] > 0
    assert run.incomplete.startswith("invalid: ")
    assert run_fault(run) and "max batch 8" in run_fault(run)
    assert "stopped answering" in run_fault(run)
    assert "1 of 2" in run.incomplete
    warns = _fault_warnings(run)
    assert "server-fault" in warns
    # nothing can be restored on a server that is gone: said, not tried for minutes
    assert "config-not-restored" in warns and "stopped answering" in warns[
        "config-not-restored"]


def test_server_restarted_mid_run_marks_the_run(server):
    lines: list[str] = []
    restarted, done = threading.Event(), threading.Event()

    def restart() -> None:  # the thread that starts the server must outlive it
        server.restart()
        restarted.set()
        done.wait(120)

    progress = _after(lines, "[1/2]", restart, 2.5)
    try:
        run = measure_live(server.http_url, "tb_linear",
                           loads=["closed:2", "closed:2:100000"], max_duration_s=5.0,
                           drain_timeout_s=2.0, progress=progress)
        assert restarted.wait(90)
        assert server.stats("tb_linear")  # it is back
    finally:
        server.stop()
        done.set()
    assert [c.load.label for c in run.configs] == ["closed:2"]
    assert run_fault(run) and run_fault(run).startswith("closed:2:100000")
    # statistics went backwards, or the server was still coming back when probed
    assert ("went backwards" in run_fault(run) or "stopped answering" in run_fault(run)
            or "restarted" in run_fault(run)), run_fault(run)
    assert run.live.command_stats is None


def test_model_unloaded_mid_sweep_is_not_loaded_again(server):
    lines: list[str] = []
    run = measure_live(server.http_url, "tb_linear", max_batch_sizes=[4, 8],
                       loads=["closed:2"], max_duration_s=4.0, drain_timeout_s=2.0,
                       progress=_after(lines, "max batch 8, ",
                                       lambda: server.unload("tb_linear"), 1.5))
    assert [c.max_batch_size for c in run.configs] == [4]
    assert "unloaded" in run_fault(run)
    warns = _fault_warnings(run)
    assert "unloaded" in warns["config-not-restored"]
    # left as whoever unloaded it left it
    code, _ = server._get("/v2/models/tb_linear/ready")
    assert code != 200


def test_model_reloaded_with_another_config_by_someone_else(server):
    cfg = json.loads(server._get("/v2/models/tb_linear/config")[1])
    other = {**cfg, "max_batch_size": 4,
             "dynamic_batching": {"max_queue_delay_microseconds": 500}}
    lines: list[str] = []
    progress = _after(lines, "[1/2]", lambda: server.load("tb_linear", other), 2.5)
    run = measure_live(server.http_url, "tb_linear", loads=["closed:2", "closed:2:100000"],
                       max_duration_s=5.0, drain_timeout_s=2.0, progress=progress)
    _join(progress)
    assert [c.load.label for c in run.configs] == ["closed:2"]
    assert run_fault(run)
    assert "loaded again" in run_fault(run) or "went backwards" in run_fault(run), run_fault(run)
    # the other client's configuration stays
    now = json.loads(server._get("/v2/models/tb_linear/config")[1])
    assert now["max_batch_size"] == 4


class _ResettingProxy:
    """A loopback TCP proxy in front of the server; :meth:`reset` drops every open
    connection with a TCP reset (SO_LINGER 0) and keeps accepting new ones."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.lsock = socket.create_server(("127.0.0.1", 0))
        self.port = self.lsock.getsockname()[1]
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                a, _ = self.lsock.accept()
            except OSError:
                return
            b = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.pairs.append((a, b))
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                r, _, _ = select.select([a, b], [], [], 1.0)
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except (OSError, ValueError):  # reset under our feet
            return
        finally:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass

    def reset(self) -> int:
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for a, b in pairs:
            for s in (a, b):
                try:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    s.close()
                except OSError:
                    pass
        return len(pairs)

    def close(self) -> None:
        self.closed = True
        self.lsock.close()
        self.reset()


def test_network_reset_mid_run_counts_the_failed_requests(server):
    proxy = _ResettingProxy(server.http_port)
    resets: list[int] = []
    try:
        # reset every connection about a second into the run (the load processes take
        # about a second to start)
        timer = threading.Timer(2.5, lambda: resets.append(proxy.reset()))
        timer.start()
        run = measure_live(f"http://127.0.0.1:{proxy.port}", "tb_linear",
                           loads=["closed:8:100000"], max_duration_s=4.0,
                           drain_timeout_s=2.0)
        timer.join()
    finally:
        proxy.close()
    assert resets and resets[0] > 0
    assert run_fault(run) is None  # the server itself is fine: the run stands
    rep = run.configs[0].repeats[0]
    assert rep.outcomes["ok"] > 0
    if rep.outcomes["error"]:  # requests in flight at the reset failed, and are counted
        assert set(rep.errors) == {"ConnectionError"}
    sent = rep.counters.submitted
    assert sent == sum(v for k, v in rep.outcomes.items() if k != "not_sent")


def test_cli_writes_the_finished_configuration_then_exits_3(server, tmp_path):
    out = tmp_path / "live.json"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "trtcheck", "serve", "--url", server.http_url, "--model",
         "tb_linear", "--max-batch", "4,8", "--load", "closed:4", "--duration-s", "4",
         "--drain-timeout-s", "2", "-o", str(out)],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    err: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        err.append(line)
        if "max batch 8, " in line:
            threading.Timer(1.5, server.kill).start()
            break
    rest_out, rest_err = proc.communicate(timeout=120)
    err.append(rest_err)

    class R:
        returncode = proc.returncode
        stdout = rest_out
        stderr = "".join(err)

    line = assert_one_line_error(R, 3, "the run broke", "max batch 8", "written to")
    assert "stopped answering" in line
    doc = json.loads(out.read_text())
    assert [c["max_batch_size"] for c in doc["serve"]["configs"]] == [4]
    assert "stopped answering" in doc["serve"]["incomplete"]
    assert [w["severity"] for w in doc["serve"]["warnings"] if w["code"] == "server-fault"] \
        == ["error"]
    assert doc["incomplete"].startswith("invalid: ")
