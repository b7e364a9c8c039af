"""``trtcheck tune --ray``: every live run of the search splits its arrival schedule
across Ray actors, as ``serve --url ... --ray`` does.

Against a real local multi-node Ray cluster (3 nodes on this host, the ``ray_cluster``
fixture) and the real test tritonserver with explicit model control.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from conftest import run_cli

pytestmark = [pytest.mark.triton, pytest.mark.ray, pytest.mark.slow]


def _config(triton) -> dict:
    with urllib.request.urlopen(f"{triton.http_url}/v2/models/tb_linear/config",
                                timeout=5) as r:
        return json.loads(r.read())


def test_tune_over_ray_splits_every_run_and_restores_the_model(triton, ray_cluster, tmp_path):
    before = _config(triton)
    out = tmp_path / "tune.json"
    # what is under test is the split and the restore, not the pick: an objective that
    # a loaded machine also meets (the search's P99 upper end reached 643 ms on a CI
    # machine running other jobs, whose load generator sent 88% of requests late)
    res = run_cli("tune", "--url", triton.http_url, "--model", "tb_linear", "--arrival-rate",
                  "60", "--slo-p99-ms", "5000", "--max-instances", "1", "--duration-s", "2",
                  "--ray", ray_cluster.address, "--ray-actors", "3", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert "3 load actor(s) on 3 node(s)" in res.stderr
    t = json.loads(out.read_text())["tune"]
    assert t["restored"] and t["pick"] is not None
    assert 1 <= t["live_runs"] <= 6
    for run in t["runs"]:
        assert run["live"]["ray_address"] == ray_cluster.address
        assert run["live"]["ray_actors"] == 3
        for rep in run["configs"][0]["repeats"]:
            d = rep["distributed"]
            assert d is not None and d["actors"] == 3 and d["lost_requests"] == 0
            # every scheduled request has its one outcome, and the shares add up
            assert d["scheduled_requests"] == sum(rep["outcomes"].values())
            assert sum(n["scheduled_requests"] for n in d["nodes"]) == d["scheduled_requests"]
            assert sum(n["ok_requests"] for n in d["nodes"]) == rep["outcomes"]["ok"]
    # the model serves again under its original configuration
    after = _config(triton)
    for key in ("max_batch_size", "dynamic_batching", "instance_group"):
        assert after.get(key) == before.get(key)


def test_ray_options_are_checked_before_any_run(tmp_path):
    res = run_cli("tune", "--url", "http://127.0.0.1:9", "--model", "m", "--arrival-rate",
                  "60", "--ray-actors", "3")
    assert res.returncode == 2 and "--ray-actors needs --ray" in res.stderr
    res = run_cli("tune", "--url", "http://127.0.0.1:9", "--model", "m", "--arrival-rate",
                  "60", "--ray", "auto", "--client-processes", "2")
    assert res.returncode == 2 and "--client-processes is for one machine" in res.stderr


def test_a_load_share_lost_mid_search_is_named_in_the_notes(triton):
    from test_serve_ray import _node_id, _stop_node_when_served

    from trtcheck.measure.serving.live.distributed import RayLoad
    from trtcheck.pipeline.tune import TuneSettings, run_tune
    from trtcheck.testing.ray_cluster import local_ray_cluster

    before = _config(triton)
    with local_ray_cluster(3) as cluster:
        with RayLoad(cluster.address, 3) as rl:
            used = {a["node_id"] for a in rl.actor_nodes}
            node = next(n for n in cluster.worker_nodes if _node_id(n) in used)
            t, stopped = _stop_node_when_served(cluster, node, triton, 60)
            out = run_tune(TuneSettings(url=triton.http_url, model="tb_linear",
                                        rate_per_s=60, slo_p99_ms=200, max_instances=1,
                                        duration_s=2, distributed=rl))
            t.join(timeout=30)
            assert stopped.is_set()
    res = out.result
    lost = [n for n in res.notes if "lost during the run" in n]
    assert len(lost) == 1 and lost[0].startswith("run ")
    assert "run again" in lost[0]
    # the run that lost it is kept, with its node marked lost
    assert any(rep.distributed is not None and any(n.lost for n in rep.distributed.nodes)
               for r in res.runs for c in r.configs for rep in c.repeats)
    assert res.restored
    after = _config(triton)
    for key in ("max_batch_size", "dynamic_batching", "instance_group"):
        assert after.get(key) == before.get(key)
