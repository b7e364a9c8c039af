"""``trtcheck serve --url ... --ray``: one arrival schedule split across Ray actors.

Against a real local multi-node Ray cluster (``trtcheck/testing/ray_cluster.py``: a head
and worker nodes on this host, 1 CPU each) and the real test tritonserver. The split run
accounts for every request exactly as the one-process run does; a worker node stopped
mid-run loses its share (counted), the run ends and keeps the rest; Ctrl-C stops every
actor and loads the model's original configuration again. Every cluster is shut down by
its fixture, and no raylet or load actor outlives the tests.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from live_jobs import tb_linear_jobs

from conftest import REPO, interruptible, procs_named, run_cli

pytestmark = [pytest.mark.triton, pytest.mark.ray, pytest.mark.slow]


def _cluster_actors(address: str) -> list[int]:
    """Pids of the load actors of the Ray cluster at ``address`` (an actor's parent is
    its node's raylet, whose command line names the cluster's GCS address): other
    clusters' actors (another xdist worker's tests) are not counted."""
    out = []
    for pid in procs_named("ray::LoadActor"):
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
            parent = Path(f"/proc/{ppid}/cmdline").read_bytes().replace(b"\0", b" ")
        except (OSError, ValueError, IndexError):
            continue
        if f"={address} ".encode() in parent + b" ":  # the whole address, not a prefix
            out.append(pid)
    return out


def _inferences(triton) -> int:
    return int(triton.stats("tb_linear")["model_stats"][0]["inference_count"])


class _Counted:
    """Inferences the server ran since construction, across model reloads.

    Triton resets a model's statistics when it loads the model again, so a drop in the
    count is a reload: what was counted after it is new work.
    """

    def __init__(self, triton) -> None:
        self.triton = triton
        self.last = _inferences(triton)
        self.total = 0

    def __call__(self) -> int:
        now = _inferences(self.triton)
        self.total += now - self.last if now >= self.last else now
        self.last = now
        return self.total


def test_three_actors_account_for_every_request_as_one_process_does(triton, ray_cluster):
    from trtcheck.measure.serving.live.distributed import RayLoad
    from trtcheck.measure.serving.live.live import measure_live
    from trtcheck.measure.bench.runner import new_results
    from trtcheck.report.text_tables import serve_table_text
    from trtcheck.results.model import Results

    kw = dict(loads=["open:100:poisson:150"], max_duration_s=4.0, drain_timeout_s=5.0,
              seed=11, warmup_requests=6)
    one = measure_live(triton.http_url, "tb_linear", **kw)
    with RayLoad(ray_cluster.address, 3) as rl:
        assert rl.actors == 3
        split = measure_live(triton.http_url, "tb_linear", distributed=rl, **kw)
    r1, r3 = one.configs[0].repeats[0], split.configs[0].repeats[0]
    # the same accounting: every scheduled request sent and answered, once
    assert r1.outcomes == r3.outcomes == {"ok": 150, "error": 0, "rejected": 0,
                                         "timeout": 0, "not_sent": 0}
    assert r1.counters.submitted == r3.counters.submitted == 150
    assert r1.server_stats.inference_count == r3.server_stats.inference_count == 150
    assert len(r3.latencies_ms) == 150 and r3.ok_count in (None, 150)
    d = r3.distributed
    assert d is not None and r1.distributed is None
    assert (d.actors, d.distinct_nodes) == (3, 3)
    assert [n.scheduled_requests for n in d.nodes] == [50, 50, 50]  # arrivals k::3
    assert d.scheduled_requests == d.sent_requests == d.ok_requests == 150
    assert d.lost_requests == 0 and not any(n.lost for n in d.nodes)
    assert len({n.node_id for n in d.nodes}) == 3
    assert sum(n.late_sends for n in d.nodes) == d.late_sends
    assert round(r3.late_send_share * 150) == d.late_sends
    for n in d.nodes:
        # one host, one clock: the estimate lies within its own bound of 0
        assert n.clock_offset_ms is not None and n.clock_offset_error_ms >= 0
        assert abs(n.clock_offset_ms) <= n.clock_offset_error_ms + 1e-6
        assert n.start_skew_ms is not None and n.start_skew_ms >= 0
        assert 0 <= n.load_cpu_share <= 1.5 and n.hostname and n.node_ip
    assert split.live.ray_address == ray_cluster.address and split.live.ray_actors == 3
    assert not [w for w in split.warnings if w.code == "load-share-lost"]
    # the results model takes it (strict) and the text names the nodes
    doc = new_results()
    doc.serve = split
    res = Results.model_validate_json(doc.model_dump_json())
    assert res.serve.configs[0].repeats[0].distributed == d
    text = serve_table_text(split)
    assert "3 Ray load actor(s)" in text and "ray load: 3 actor(s)" in text
    for n in d.nodes:
        assert n.node_id[:8] in text


def test_every_share_is_anchored_to_the_common_epoch(triton, ray_cluster):
    """Each actor's schedule starts at the epoch itself, not when its loop got going: once
    moved onto the epoch, share k's first arrival is scheduled at exactly 1 ms + offset
    k of the one schedule, whatever the actor's start skew (which is still recorded:
    how late its loop began)."""
    from trtcheck.measure.serving.live.distributed import RayLoad

    seed = 5
    shape, jobs = tb_linear_jobs(triton, "open:100:poisson:60", seed, 3)
    with RayLoad(ray_cluster.address, 3) as rl:
        parts = rl.run(jobs, lambda: None, timeout_s=30.0, late_threshold_ms=1.0)
        d = rl.last_load
    assert d is not None and d.lost_requests == 0 and len(parts) == 3
    offs = shape.schedule_s(seed)
    for k, (part, node) in enumerate(zip(parts, d.nodes)):
        rec = part.record
        assert rec.sent == 20 and rec.outcomes["ok"] == 20
        assert rec.t_start == 0.0  # the epoch, exactly
        # its earliest scheduled send: arrival k of the schedule, from the epoch (the
        # tolerance is the rounding of perf_counter times, far below any start skew)
        assert rec.first == pytest.approx(0.001 + float(offs[k]), abs=1e-9)
        assert rec.t_began >= 0.0 and node.start_skew_ms == pytest.approx(rec.t_began * 1e3)


def test_cli_ray_run_writes_per_node_figures_and_renders_them(triton, ray_cluster,
                                                              tmp_path):
    out = tmp_path / "ray.json"
    res = run_cli("serve", "--url", triton.http_url, "--model", "tb_linear", "--ray",
                  ray_cluster.address, "--ray-actors", "3", "--load", "open:80:poisson:60",
                  "--duration-s", "3", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert "3 load actor(s) on 3 node(s)" in res.stderr
    assert "ray load: 3 actor(s)" in res.stdout
    data = json.loads(out.read_text())
    rep = data["serve"]["configs"][0]["repeats"][0]
    assert rep["distributed"]["scheduled_requests"] == 60
    assert sum(n["ok_requests"] for n in rep["distributed"]["nodes"]) == rep["outcomes"]["ok"]
    md = run_cli("report", "--from", str(out), "-o", str(tmp_path / "rep"))
    assert md.returncode == 0, md.stderr
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "Load from the Ray cluster" in text
    assert "Load from the Ray cluster" in (tmp_path / "rep" / "report.html").read_text()


def _node_id(node) -> str:
    """A ``ray.cluster_utils.Cluster`` node's id (hex): ``Node.node_id`` where Ray has it;
    on older Ray (2.9 has no such property), found by its raylet socket in ``ray.nodes()``
    (this process is connected to the cluster)."""
    node_id = getattr(node, "node_id", None)
    if node_id:
        return str(node_id)
    import ray

    return next(n["NodeID"] for n in ray.nodes()
                if n.get("RayletSocketName") == node.raylet_socket_name)


def _stop_node_when_served(cluster, node, triton, n: int
                           ) -> tuple[threading.Thread, threading.Event]:
    """A started thread that removes ``node`` from ``cluster`` (its raylet killed) once
    the server has run ``n`` more inferences (or after 120 s); the event is set then."""
    sent = _Counted(triton)
    stopped = threading.Event()

    def stop_when_sending() -> None:
        deadline = time.monotonic() + 120
        while sent() < n and time.monotonic() < deadline:
            time.sleep(0.05)
        cluster.remove_node(node, allow_graceful=False)  # kills its raylet
        stopped.set()

    t = threading.Thread(target=stop_when_sending, daemon=True)
    t.start()
    return t, stopped


def test_a_worker_node_stopped_mid_run_loses_its_share_and_keeps_the_rest(triton):
    from trtcheck.measure.serving.live.distributed import RayLoad
    from trtcheck.measure.serving.live.live import measure_live
    from trtcheck.testing.ray_cluster import local_ray_cluster

    with local_ray_cluster(3) as cluster:
        with RayLoad(cluster.address, 3) as rl:
            head = _node_id(cluster.head_node)
            victim = next(i for i, n in enumerate(rl.actor_nodes) if n["node_id"] != head)
            node = next(n for n in cluster.worker_nodes
                        if _node_id(n) == rl.actor_nodes[victim]["node_id"])
            t, stopped = _stop_node_when_served(cluster, node, triton, 60)
            run = measure_live(triton.http_url, "tb_linear", loads=["open:60:poisson:300"],
                               max_duration_s=6.0, drain_timeout_s=3.0, seed=5,
                               warmup_requests=6, distributed=rl)
            t.join(timeout=30)
            assert stopped.is_set()
            assert rl.actors == 2  # the lost actor is not used again
    rep = run.configs[0].repeats[0]
    d = rep.distributed
    lost = d.nodes[victim]
    assert lost.lost and lost.lost_requests == lost.scheduled_requests == 100
    assert lost.lost_reason
    kept = [n for n in d.nodes if not n.lost]
    assert len(kept) == 2 and all(n.ok_requests > 0 for n in kept)
    assert d.lost_requests == 100 and d.scheduled_requests == 300
    # the record holds exactly the kept shares' requests
    assert sum(rep.outcomes.values()) == 200
    assert rep.outcomes["ok"] == sum(n.ok_requests for n in kept)
    assert [w for w in run.warnings if w.code == "load-share-lost"]
    assert run.incomplete is None


def _config(url: str) -> dict:
    with urllib.request.urlopen(url + "/v2/models/tb_linear/config", timeout=10) as r:
        return json.loads(r.read())


def test_ctrl_c_stops_every_actor_and_restores_the_model(triton, ray_cluster, tmp_path):
    out = tmp_path / "int.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("TRTCHECK_DEBUG", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "trtcheck", "serve", "--url", triton.http_url, "--model",
         "tb_linear", "--ray", ray_cluster.address, "--ray-actors", "3", "--window-ms",
         "0,5", "--max-batch", "8", "--load", "open:60", "--duration-s", "20", "-o",
         str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=interruptible)
    try:
        sent = _Counted(triton)
        deadline = time.monotonic() + 120
        while sent() < 60:  # the split run is sending
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the run did not start sending"
            time.sleep(0.05)
        actors = _cluster_actors(ray_cluster.address)
        assert len(actors) == 3, actors
        proc.send_signal(signal.SIGINT)
        _stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted by SIGINT: 0 of 2 configuration(s) measured" in stderr, stderr
    deadline = time.monotonic() + 30
    while [p for p in actors if p in procs_named("ray::LoadActor")] and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in actors if p in procs_named("ray::LoadActor")], "an actor outlived it"
    n = _inferences(triton)
    time.sleep(1.0)
    assert _inferences(triton) == n, "something still sends"
    now = _config(triton.http_url)
    assert now["max_batch_size"] == 32
    assert now["dynamic_batching"]["max_queue_delay_microseconds"] == 2000
    assert json.loads(out.read_text())["incomplete"].startswith("interrupted by SIGINT")
