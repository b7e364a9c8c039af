"""``trtcheck serve --url``: live KServe v2 targets against a real tritonserver.

The server (``trtcheck/testing/triton_server.py``) is the real Triton 2.51 from the pytriton wheel,
CPU, python backend, with models whose batch time is scripted; nothing mocks its
protocol. Values asserted: the server's mean batch in the results equals the delta of
Triton's own statistics, every request is counted (failed ones as failed), a sweep loads
each configuration and restores the original, and each bad input is one line with its
exit code.
"""

from __future__ import annotations

import json
import time

import pytest

from conftest import assert_one_line_error, run_cli

pytestmark = [pytest.mark.triton, pytest.mark.slow]


def _serve(url: str, model: str, out, *args: str, timeout: float = 180):
    return run_cli("serve", "--url", url, "--model", model, "-o", str(out), *args,
                   timeout=timeout)


def _read(path) -> dict:
    return json.loads(path.read_text())["serve"]


def _delta(before: dict, after: dict) -> tuple[int, int]:
    b = before["model_stats"][0]
    a = after["model_stats"][0]
    return (a["inference_count"] - b["inference_count"],
            a["execution_count"] - b["execution_count"])


@pytest.mark.parametrize("scheme", ["http", "grpc"])
def test_server_mean_batch_equals_triton_stats_delta(triton, tmp_path, scheme):
    url = triton.http_url if scheme == "http" else triton.grpc_url
    out = tmp_path / "live.json"
    before = triton.stats("tb_linear")
    # gRPC with two load processes: the schedule is dealt to both, nothing lost
    procs = "1" if scheme == "http" else "2"
    res = _serve(url, "tb_linear", out, "--load", "open:150", "--duration-s", "1.5",
                 "--client-processes", procs)
    after = triton.stats("tb_linear")
    assert res.returncode == 0, res.stderr
    run = _read(out)
    assert run["live"]["protocol"] == scheme
    assert run["live"]["client_processes"] == int(procs)
    assert run["live"]["model_config_json"]["max_batch_size"] == 32
    assert run["live"]["server_name"] == "triton"
    cfg = run["configs"][0]
    rep = cfg["repeats"][0]
    st = rep["server_stats"]
    ok = rep["outcomes"]["ok"]
    assert ok > 50
    # the server counted exactly the requests that succeeded, no more (no other client)
    assert st["success"]["count"] == ok == st["inference_count"]
    assert st["avg_batch_size"] == pytest.approx(st["inference_count"] / st["execution_count"])
    assert cfg["mean_batch_size"] == pytest.approx(st["avg_batch_size"])
    assert sum(b["execution_count"] for b in st["batch_stats"]) == st["execution_count"]
    assert sum(b["batch_size"] * b["execution_count"] for b in st["batch_stats"]) == ok
    # the whole command (warm-up included) against the statistics read around it
    inf, exe = _delta(before, after)
    cmd = run["live"]["command_stats"]
    assert (cmd["inference_count"], cmd["execution_count"]) == (inf, exe)
    assert cfg["mean_batch_size"] == pytest.approx(inf / exe, rel=0.05)
    # the split adds up: client+network + server request = client mean from send
    sp = rep["live_split"]
    if sp is None:  # left out as inconsistent (a loaded machine), and said so
        assert "live-split-inconsistent" in json.dumps(cfg["warnings"])
    else:
        assert sp["client_network_mean_ms"] + sp["server_request_mean_ms"] == (
            pytest.approx(sp["client_mean_ms"]))
        assert sp["server_compute_mean_ms"] >= 1.0  # T(1) = 1.25 ms busy wait
    assert rep["achieved_send_rate_per_s"] > 0 and rep["late_send_share"] is not None
    assert len(rep["latencies_ms"]) == ok and len(rep["send_lag_ms"]) == sum(
        v for k, v in rep["outcomes"].items() if k != "not_sent")


def test_failed_requests_are_counted_not_dropped(triton, tmp_path):
    triton.load("tb_every2")
    out = tmp_path / "live.json"
    res = _serve(triton.http_url, "tb_every2", out, "--load", "closed:2:40",
                 "--warmup-requests", "0", "--duration-s", "5")
    assert res.returncode == 0, res.stderr
    rep = _read(out)["configs"][0]["repeats"][0]
    assert rep["outcomes"]["ok"] + rep["outcomes"]["error"] == 40
    assert rep["outcomes"]["error"] == 20 == rep["errors"]["HTTP 500"]
    # the server saw all 40; Triton 2.51 counts a python-backend error *response* as a
    # successful request in its statistics (the execution itself succeeded)
    st = rep["server_stats"]
    assert st["success"]["count"] + st["fail"]["count"] == 40 == st["inference_count"]
    assert rep["counters"]["failed"] == 20 and rep["counters"]["completed"] == 20
    assert "requests-not-ok" in res.stdout + json.dumps(_read(out)["configs"][0]["warnings"])


def test_sweep_loads_each_config_and_restores_the_original(triton, tmp_path):
    out = tmp_path / "sweep.json"
    res = _serve(triton.http_url, "tb_linear", out, "--window-ms", "0,5", "--max-batch", "4",
                 "--instances", "2", "--load", "burst:16", "--duration-s", "5")
    assert res.returncode == 0, res.stderr
    run = _read(out)
    assert run["live"]["explicit_model_control"] is True
    got = [(c["window_us"], c["max_batch_size"], c["instances"]) for c in run["configs"]]
    assert got == [(0.0, 4, 2), (5000.0, 4, 2)]
    for c in run["configs"]:
        srv_cfg = c["server_model_config"]
        assert srv_cfg["max_batch_size"] == 4
        assert srv_cfg["instance_group"][0]["count"] == 2
        st = c["repeats"][0]["server_stats"]
        assert max(b["batch_size"] for b in st["batch_stats"]) <= 4
        assert st["inference_count"] == 16
    assert run["configs"][1]["server_model_config"]["dynamic_batching"][
        "max_queue_delay_microseconds"] == 5000
    # the model runs with the configuration it had before the sweep
    import urllib.request

    with urllib.request.urlopen(triton.http_url + "/v2/models/tb_linear/config") as r:
        now = json.loads(r.read())
    assert now["max_batch_size"] == 32
    assert now["dynamic_batching"]["max_queue_delay_microseconds"] == 2000
    assert now["instance_group"][0]["count"] == 1


def test_a_refused_configuration_keeps_the_others(triton, tmp_path):
    triton.load("tb_picky")
    out = tmp_path / "sweep.json"
    res = _serve(triton.http_url, "tb_picky", out, "--max-batch", "4,16", "--load", "burst:8")
    assert res.returncode == 0, res.stderr
    run = _read(out)
    assert [c["max_batch_size"] for c in run["configs"]] == [4]
    assert [w["code"] for w in run["warnings"]] == ["config-not-loaded"]
    assert "max batch 16" in run["warnings"][0]["where"]
    assert "scripted refusal" in run["warnings"][0]["message"]
    res = _serve(triton.http_url, "tb_picky", out, "--max-batch", "16", "--load", "burst:8",
                 "--overwrite")
    assert_one_line_error(res, 2, "could not load 'tb_picky'", "scripted refusal")


def test_sweep_without_explicit_model_control_is_one_line(triton_no_control, tmp_path):
    res = _serve(triton_no_control.http_url, "tb_linear", tmp_path / "x.json",
                 "--window-ms", "1", "--load", "burst:4")
    assert_one_line_error(res, 2, "refuses to load models", "--model-control-mode=explicit")
    assert not (tmp_path / "x.json").exists()
    # without sweep options the same server is measured as loaded
    res = _serve(triton_no_control.http_url, "tb_linear", tmp_path / "y.json",
                 "--load", "burst:4")
    assert res.returncode == 0, res.stderr


def test_unreachable_url_is_environment(tmp_path):
    from trtcheck.testing.triton_server import free_ports

    port = free_ports(1)[0]
    for url in (f"http://127.0.0.1:{port}", f"grpc://127.0.0.1:{port}"):
        res = _serve(url, "m", tmp_path / "x.json", "--load", "burst:1")
        assert_one_line_error(res, 3, "cannot reach a KServe v2 server")
        # the cause in words, not the HTTP client's own text (aiohttp names "ssl:default")
        assert "ssl:" not in res.stderr, res.stderr
        if url.startswith("http"):
            assert "Connection refused" in res.stderr, res.stderr


def test_http_at_the_grpc_port_says_so(triton, tmp_path):
    # the gRPC port answers HTTP/1.1 with an HTTP/2 frame: named, not its raw bytes
    url = "http://" + triton.grpc_url.split("://", 1)[1]
    res = _serve(url, "tb_linear", tmp_path / "x.json", "--load", "burst:1")
    msg = assert_one_line_error(res, 3, "the port looks like a gRPC endpoint",
                                "use grpc://HOST:PORT")
    assert "\\x00" not in msg, msg


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:8000", "http://127.0.0.1", "127.0.0.1:8000",
                                 "http://127.0.0.1:8000/v2/models", "http:/127.0.0.1:8000"])
def test_bad_url_is_input(url, tmp_path):
    res = _serve(url, "m", tmp_path / "x.json")
    assert_one_line_error(res, 2, "--url")


def test_unknown_model_and_version_are_input(triton, tmp_path):
    res = _serve(triton.http_url, "no_such_model", tmp_path / "x.json")
    assert_one_line_error(res, 2, "has no model 'no_such_model'", "tb_linear")
    res = _serve(triton.grpc_url, "tb_linear", tmp_path / "x.json", "--model-version", "9")
    msg = assert_one_line_error(res, 2, "has no version 9 of model 'tb_linear'")
    assert "give --model-version 1 " in msg and "tb_fail" not in msg  # its versions, not models


@pytest.mark.parametrize("url", ["127.0.0.1:58185", "localhost:8000/"])
def test_url_without_scheme_suggests_one(url, tmp_path):
    res = _serve(url, "m", tmp_path / "x.json")
    msg = assert_one_line_error(res, 2, "needs a scheme")
    assert f"http://{url.rstrip('/')} " in msg and "'none'" not in msg


def test_url_without_scheme_or_port_suggests_tritons_ports(tmp_path):
    msg = assert_one_line_error(_serve("localhost", "m", tmp_path / "x.json"), 2,
                                "needs a scheme")
    assert "http://localhost:8000 " in msg and "grpc://localhost:8001 " in msg


def test_server_not_ready_measures_a_ready_model_with_a_warning(tmp_path):
    from trtcheck.testing.triton_server import TritonServer, write_model

    repo = tmp_path / "models"
    write_model(repo, "tb_linear")
    write_model(repo, "tb_broken", max_batch_size=16, refuse_max_batch_above=8)
    # strict readiness: a model that failed to load keeps the server not ready
    with TritonServer(repo, explicit=False, wait_for="/v2/health/live",
                      extra_args=("--strict-readiness=true", "--exit-on-error=false")) as srv:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "tb_broken" not in srv.log_tail(200):
            time.sleep(0.2)
        res = _serve(srv.http_url, "tb_linear", tmp_path / "x.json", "--load", "burst:2")
        assert res.returncode == 0, res.stderr
        doc = json.loads((tmp_path / "x.json").read_text())
        assert [w["code"] for w in doc["serve"]["warnings"]].count("server-not-ready") == 1
        # the model that failed to load is refused with one line (exit 3)
        res = _serve(srv.http_url, "tb_broken", tmp_path / "y.json", "--load", "burst:2")
    assert_one_line_error(res, 3, "'tb_broken' is in the server's repository but failed to load",
                          "max_batch_size")


def test_model_not_loaded_is_environment(triton, tmp_path):
    res = _serve(triton.http_url, "tb_slow", tmp_path / "x.json")
    msg = assert_one_line_error(res, 3, "'tb_slow' is in the server's repository but not loaded;",
                                "/v2/repository/models/tb_slow/load", "--load-model=tb_slow")
    assert "not ready" not in msg
    res = _serve(triton.grpc_url, "tb_slow", tmp_path / "x.json")
    assert_one_line_error(res, 3, "but not loaded;", "gRPC RepositoryModelLoad")


@pytest.mark.parametrize("scheme", ["http", "grpc"])
def test_inference_errors_and_bad_response_shape(triton, tmp_path, scheme):
    triton.load("tb_fail")
    triton.load("tb_badshape")
    url = triton.http_url if scheme == "http" else triton.grpc_url
    res = _serve(url, "tb_fail", tmp_path / "x.json", "--load", "burst:4")
    assert_one_line_error(res, 3, "scripted failure")
    res = _serve(url, "tb_fail", tmp_path / "x.json", "--load", "burst:4",
                 "--warmup-requests", "0")
    assert_one_line_error(res, 3, "every request", "scripted failure")
    res = _serve(url, "tb_badshape", tmp_path / "x.json", "--load", "burst:4")
    assert_one_line_error(res, 3, "output 'OUTPUT0' has shape [1, 3]")


def test_bad_request_tensors_are_input(triton, tmp_path):
    for args, needle in ((("--shapes", "INPUT0:2x4"), "one sample per request"),
                         (("--shapes", "FOO:1x4"), "FOO"),
                         (("--http",), "--http"),
                         (("--per-request-overhead-ms", "1"), "--per-request-overhead-ms")):
        res = _serve(triton.http_url, "tb_linear", tmp_path / "x.json", *args)
        assert_one_line_error(res, 2, needle)
    res = run_cli("serve", "--url", triton.http_url)
    assert_one_line_error(res, 2, "--model")
    res = run_cli("serve", "--synthetic-curve", "1:1", "--model-version", "1")
    assert_one_line_error(res, 2, "--model-version")


def test_inputs_npz_of_the_wrong_shape_is_input(triton, tmp_path):
    import numpy as np

    npz = tmp_path / "in.npz"
    np.savez(npz, INPUT0=np.zeros((1, 5), np.float32))
    res = _serve(triton.http_url, "tb_linear", tmp_path / "x.json", "--inputs", str(npz))
    assert_one_line_error(res, 2, "--inputs array 'INPUT0'")
    np.savez(npz, INPUT0=np.ones((4,), np.float32))  # one sample without the batch axis
    res = _serve(triton.http_url, "tb_linear", tmp_path / "x.json", "--inputs", str(npz),
                 "--load", "burst:4")
    assert res.returncode == 0, res.stderr
    assert "INPUT0 float32 [1, 4]" in _read(tmp_path / "x.json")["settings"]["payload"]


def test_requests_outliving_the_bounds_end_in_time(triton, tmp_path):
    triton.load("tb_slow")
    res = _serve(triton.http_url, "tb_slow", tmp_path / "x.json", "--load", "burst:8",
                 "--warmup-requests", "0", "--drain-timeout-s", "0.2")
    # T(b) = 400 ms per execution, max batch 4: 2 executions do not fit 0.2 s
    assert_one_line_error(res, 3, "--drain-timeout-s")


def test_report_gate_compare_read_a_live_run(triton, tmp_path):
    out = tmp_path / "live.json"
    res = _serve(triton.http_url, "tb_linear", out, "--load", "burst:8")
    assert res.returncode == 0, res.stderr
    rep = run_cli("report", "--from", str(out), "-o", str(tmp_path / "rep"))
    assert rep.returncode == 0, rep.stderr
    cmp_ = run_cli("compare", str(out), str(out))
    assert cmp_.returncode in (0, 1), cmp_.stderr
    assert "Traceback" not in cmp_.stderr
