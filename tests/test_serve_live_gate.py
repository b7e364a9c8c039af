"""``trtcheck gate`` and ``trtcheck compare`` on live runs (``trtcheck serve --url``)
measured against a real tritonserver.

Values asserted: the live fields (the mean batch the server formed, the latency split,
the whole command's statistics) are metric paths with the values of the file; budgets
and baseline rules on them pass and fail as the measured numbers say (a 100 ms window
against the model's own 2 ms window: ten times the server queue time, a larger server
batch); compare pairs the configurations of two live runs, an instance sweep's counts
kept apart.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from trtcheck.results import Results

pytestmark = [pytest.mark.triton, pytest.mark.slow]

# closed loops and bursts: no open-loop schedule, so no generator validity mark
LOADS = "closed:2:60,burst:16"


@pytest.fixture(scope="module")
def live_files(triton, tmp_path_factory):
    """``a``/``a2``: the model as loaded (window 2 ms, max batch 32), twice; ``b``: window
    100 ms; ``sweep``: instances 1 and 2 (burst:8)."""
    d = tmp_path_factory.mktemp("live-gate")
    runs = {"a": (), "a2": (), "b": ("--window-ms", "100"),
            "sweep": ("--instances", "1,2", "--load", "burst:8")}
    out = {}
    for name, extra in runs.items():
        path = d / f"{name}.json"
        load = () if "--load" in extra else ("--load", LOADS)
        res = run_cli("serve", "--url", triton.http_url, "--model", "tb_linear", *load,
                      "--duration-s", "5", "-o", str(path), *extra, timeout=240)
        assert res.returncode == 0, res.stderr
        out[name] = path
    return out


def _results(path) -> Results:
    return Results.model_validate_json(path.read_text())


def _split_or_finding(c) -> bool:
    """Whether configuration ``c``'s first repeat has its latency split; one left out
    (a part came out negative, which a loaded machine's timing can make of a short
    burst) carries the ``live-split-inconsistent`` finding that says so."""
    if c.repeats[0].live_split is not None:
        return True
    assert any(w.code == "live-split-inconsistent" for w in c.warnings), c.warnings
    return False


def _name(c) -> str:
    """How the gate names a configuration: the filter of its key fields."""
    inst = f",instances={c.instances}" if c.instances is not None else ""
    return (f"serve.configs[load.label={c.load.label},window_us={c.window_us:g},"
            f"max_batch_size={c.max_batch_size}{inst}]")


def _gate(tmp_path, policy: str, results, *args: str) -> tuple[int, dict]:
    pol = tmp_path / "gate.yaml"
    pol.write_text(policy)
    res = run_cli("gate", str(results), "-p", str(pol), "--format", "json", *args)
    assert res.returncode in (0, 1), res.stderr
    return res.returncode, json.loads(res.stdout)


def test_list_metrics_names_the_live_fields(live_files):
    res = run_cli("gate", str(live_files["a"]), "--list-metrics")
    assert res.returncode == 0, res.stderr
    listed = dict((ln.split(None, 1) + [""])[:2] for ln in res.stdout.splitlines()
                  if ln.strip())
    run = _results(live_files["a"]).serve
    st = run.configs[0].repeats[0].server_stats
    assert float(listed["serve.configs[0].repeats[0].server_stats.avg_batch_size"]) == \
        pytest.approx(st.avg_batch_size, rel=1e-3)
    assert int(listed["serve.configs[0].repeats[0].server_stats.execution_count"]) == \
        st.execution_count
    for field in ("client_network_mean_ms", "server_queue_mean_ms", "server_compute_mean_ms"):
        assert f"serve.configs[0].repeats[0].live_split.{field}" in listed
    assert "serve.live.command_stats.avg_batch_size" in listed  # no sweep: whole command
    assert listed["serve.live.model_name"].strip() == "tb_linear"


def test_budgets_on_the_server_batch_and_the_split(live_files, tmp_path):
    policy = """version: 1
budgets:
  - serve.configs[load.label=closed:2:60].repeats[0].server_stats.avg_batch_size >= 1.8
  - serve.configs[load.label=closed:2:60].repeats[0].live_split.server_queue_mean_ms <= 10 ms
  - serve.configs[*].repeats[0].live_split.client_network_mean_ms <= 1 s
"""
    b = _results(live_files["b"]).serve
    code, out = _gate(tmp_path, policy, live_files["b"])
    assert code == 1
    checks = {c["metric"]: c for c in out["checks"]}
    closed = next(c for c in b.configs if c.load.label == "closed:2:60")
    rep = closed.repeats[0]
    batch = checks[f"{_name(closed)}.repeats[0].server_stats.avg_batch_size"]
    # two closed-loop clients and a 100 ms window: the server batches both
    assert batch["value"] == pytest.approx(rep.server_stats.avg_batch_size)
    assert batch["verdict"] == "pass"
    if _split_or_finding(closed):
        queue = checks[f"{_name(closed)}.repeats[0].live_split.server_queue_mean_ms"]
        assert queue["value"] == pytest.approx(rep.live_split.server_queue_mean_ms)
        assert queue["verdict"] == "fail"  # the requests wait out the 100 ms window
    net = [c for c in out["checks"] if c["metric"].endswith("client_network_mean_ms")]
    with_split = [c for c in b.configs if _split_or_finding(c)]
    assert len(net) == len(with_split) and all(c["verdict"] == "pass" for c in net)
    # the model as loaded (2 ms window) meets the queue budget; its command's statistics
    policy_a = policy.replace(">= 1.8", ">= 1") + \
        "  - serve.live.command_stats.avg_batch_size >= 1\n"
    code, out = _gate(tmp_path, policy_a, live_files["a"])
    assert code == 0, [c["message"] for c in out["checks"] if c["verdict"] != "pass"]


def test_baseline_rules_catch_a_longer_window(live_files, tmp_path):
    # `[*]` pairs configurations by key (a 100 ms window is another configuration than a
    # 2 ms one); a filter chooses the configurations on both sides and pairs them in order
    policy = """version: 1
baseline:
  - serve.configs[max_batch_size=32].repeats[*].live_split.server_queue_mean_ms: 50%
  - metric: serve.configs[max_batch_size=32].repeats[*].server_stats.avg_batch_size
    max_regression: 10%
    direction: higher
  - serve.configs[max_batch_size=32].repeats[*].p50_ms: 10%
"""
    # the 100 ms window adds about 98 ms to every request of the closed loop; a loaded
    # 2-core machine stretched the 2 ms window's P50 to 16.8 and 21.3 ms in CI runs (a
    # 20 ms window then came out only +9% slower), so the ratio stays far above the
    # latency rule's 10% limit however loaded the machine is
    code, out = _gate(tmp_path, policy, live_files["b"], "-b", str(live_files["a"]))
    assert code == 1, [c["message"] for c in out["checks"]]
    by_rule: dict[int, list[dict]] = {}
    for c in out["checks"]:
        by_rule.setdefault(c["line"], []).append(c)
    queue, batch, p50 = by_rule[3], by_rule[4], by_rule[7]
    a, b = _results(live_files["a"]).serve, _results(live_files["b"]).serve
    assert len(batch) == len(p50) == len(a.configs) == 2
    split = [(ca, cb) for ca, cb in zip(a.configs, b.configs)
             if _split_or_finding(ca) & _split_or_finding(cb)]
    assert len(queue) == len(split)
    for chk, (ca, cb) in zip(queue, split):
        assert chk["value"] == pytest.approx(cb.repeats[0].live_split.server_queue_mean_ms)
        assert chk["baseline_value"] == pytest.approx(
            ca.repeats[0].live_split.server_queue_mean_ms)
        assert chk["verdict"] == "fail", chk["message"]
    # the server batched more, not less
    assert all(c["verdict"] == "pass" for c in batch), [c["message"] for c in batch]
    # client latencies keep their raw samples: an interval, not a point comparison
    assert all(c["verdict"] == "fail" and c["ratio_low"] is not None for c in p50), \
        [c["message"] for c in p50]
    # over [*] the windows differ: nothing compared, every configuration missing and new
    code, out = _gate(tmp_path, "version: 1\nbaseline:\n  - serve.configs[*].p50_ms: 50%\n",
                      live_files["b"], "-b", str(live_files["a"]))
    assert code == 1
    assert sorted(c["verdict"] for c in out["checks"]) == ["missing"] * 2 + ["new"] * 2
    assert {c["metric"] for c in out["checks"] if c["verdict"] == "new"} == \
        {f"{_name(c)}.p50_ms" for c in b.configs}


def test_single_repeat_configuration_p99_is_certified(live_files, tmp_path):
    """`serve --url` runs one repeat: a configuration's p99_ms is that repeat's p99 and is
    certified from its raw latencies, as the repeat's own path is."""
    policy = """version: 1
budgets:
  - serve.configs[*].p99_ms <= 10 s
  - serve.configs[*].repeats[0].p99_ms <= 10 s
"""
    code, out = _gate(tmp_path, policy, live_files["a"])
    conf = [c for c in out["checks"] if c["line"] == 3]
    reps = [c for c in out["checks"] if c["line"] == 4]
    assert len(conf) == len(reps) == 2
    for c, r in zip(conf, reps):
        assert "no raw samples" not in c["message"]
        for f in ("verdict", "samples", "over_bound", "certified", "certified_bound"):
            assert c[f] == r[f], (f, c["message"], r["message"])


def test_compare_pairs_live_configurations(live_files):
    res = run_cli("compare", str(live_files["a"]), str(live_files["a2"]), "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    a, a2 = _results(live_files["a"]).serve, _results(live_files["a2"]).serve
    rows = {r["config"]: r for r in out["serve"]}
    assert set(rows) == {"closed:2:60 W=2 ms B=32 I=1", "burst:16 W=2 ms B=32 I=1"}
    for ca, cb in zip(a.configs, a2.configs):
        row = rows[f"{ca.load.label} W=2 ms B=32 I=1"]
        assert (row["batch_a"], row["batch_b"]) == (ca.mean_batch_size, cb.mean_batch_size)
        assert row["batch_a"] == ca.repeats[0].server_stats.avg_batch_size
    # another window is another configuration: nothing paired, both sides named
    res = run_cli("compare", str(live_files["a"]), str(live_files["b"]), "--format", "json")
    out = json.loads(res.stdout)
    assert out["serve"] == []
    assert sorted(out["serve_only_in_a"]) == ["burst:16 W=2 ms B=32 I=1",
                                              "closed:2:60 W=2 ms B=32 I=1"]
    assert sorted(out["serve_only_in_b"]) == ["burst:16 W=100 ms B=32 I=1",
                                              "closed:2:60 W=100 ms B=32 I=1"]


def test_compare_keeps_an_instance_sweep_apart(live_files):
    res = run_cli("compare", str(live_files["sweep"]), str(live_files["sweep"]), "--format",
                  "json")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)["serve"]
    assert [r["config"] for r in rows] == ["burst:8 W=2 ms B=32 I=1", "burst:8 W=2 ms B=32 I=2"]
    sweep = _results(live_files["sweep"]).serve
    assert [r["batch_a"] for r in rows] == [c.mean_batch_size for c in sweep.configs]
