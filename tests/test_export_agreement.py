"""One advice, three targets: Triton, Ray Serve and TorchServe deploy the same max batch,
window and instances, or say in a comment why not; nothing advised, no advice text."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import onnx
import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from cli_helper import invoke
from onnx_builders import small_classifier
from trtcheck.export import TritonModelSpec, export_settings
from trtcheck.results.advice import SimPrediction

INPUTS = Path(__file__).resolve().parent / "gold" / "inputs"


def _triton(text: str) -> tuple[int, float, int | None]:
    """(max batch, window us, instances in one server when co-located / counted)."""
    cfg = text_format.Parse(text, model_config_pb2.ModelConfig())
    window = (cfg.dynamic_batching.max_queue_delay_microseconds
              if cfg.HasField("dynamic_batching") else 0.0)
    count = sum(g.count for g in cfg.instance_group)
    return cfg.max_batch_size, float(window), count


def _ray(text: str) -> tuple[int, float, int]:
    """(max batch, window us, replicas) from the Ray Serve snippet."""
    replicas = int(re.search(r"num_replicas=(\d+)", text).group(1))
    m = re.search(r"@serve\.batch\(max_batch_size=(\d+), batch_wait_timeout_s=([0-9.e+-]+)\)",
                  text)
    if m is None:
        return 1, 0.0, replicas
    return int(m.group(1)), float(m.group(2)) * 1e6, replicas


def _torchserve(text: str) -> tuple[int, int, int]:
    """(batchSize, maxBatchDelay ms, workers of server 1) of the models= entry."""
    line = next(ln for ln in text.splitlines() if ln.startswith("models="))
    entry = json.loads(line[len("models="):].replace("\\\\", "\\"))
    (versions,) = entry.values()
    (cfg,) = versions.values()
    assert cfg["minWorkers"] == cfg["maxWorkers"]
    return cfg["batchSize"], cfg["maxBatchDelay"], cfg["minWorkers"]


def _p(mbs: int, window_us: float, n: int, pref: list[int] | None = None) -> SimPrediction:
    return SimPrediction(window_us=window_us, max_batch_size=mbs, instances=n,
                         arrival_rate_per_s=300, stable=True, utilisation=0.5,
                         preferred_batch_sizes=pref or [])


def _assert_agree(exp, n: int, co_located: bool) -> None:
    t_mbs, t_win, t_count = _triton(exp.triton_config_pbtxt)
    r_mbs, r_win, r_rep = _ray(exp.ray_serve_python)
    s_mbs, s_delay, s_workers = _torchserve(exp.torchserve_config)
    deployed = max(t_mbs, 1)  # Triton's 0 = no batch axis = batches of 1
    assert deployed == r_mbs == s_mbs, exp
    if deployed > 1:
        assert t_win == pytest.approx(r_win, abs=1e-6)
        assert s_delay == math.ceil(t_win / 1000 - 1e-9)
        if s_delay * 1000 != t_win:
            assert "rounded up" in exp.torchserve_config
    assert r_rep == n
    if co_located:
        assert t_count == s_workers == n


@pytest.mark.parametrize("mbs,window_us,n,conf,assessed,axis,pref", [
    (3, 2000.0, 1, 32, 3, True, None),      # the live case: the server's 32 is kept
    (3, 2000.0, 2, 32, 8, True, None),      # assessed above 3: the advice's 3 everywhere
    (16, 2500.0, 1, None, None, True, [4, 8]),
    (8, 1500.0, 3, 8, 8, True, None),
    (1, 0.0, 2, 16, 1, True, None),         # batching does not pay
    (8, 2000.0, 1, None, None, False, None),  # no batch axis: batches of 1 everywhere
    (4, 0.0, 1, 8, 2, True, None),          # batch without waiting, server's 8 kept
])
def test_every_target_gets_the_same_settings(mbs, window_us, n, conf, assessed, axis, pref):
    spec = TritonModelSpec(backend="python", batch_axis=axis, configured_max_batch_size=conf,
                           device_kind="cpu", co_located=True)
    exp = export_settings(_p(mbs, window_us, n, pref), "m", "cpu", spec=spec,
                          assessed_max_batch_size=assessed)
    _assert_agree(exp, n, co_located=True)
    t_mbs = _triton(exp.triton_config_pbtxt)[0]
    if conf and assessed is not None and assessed <= mbs < conf and mbs > 1:
        assert t_mbs == conf
        for text in exp:  # every target says why it deploys the server's max batch
            assert "the server's own, kept" in text[1], text[0]
    if pref:
        assert "preferred_batch_size: [ 4, 8 ]" in exp.triton_config_pbtxt
        for text in (exp.ray_serve_python, exp.torchserve_config):
            assert "no equivalent here" in text
    if not axis:
        assert t_mbs == 0
        assert "no batch axis" in exp.ray_serve_python
        assert "no batch axis" in exp.torchserve_config


@pytest.mark.parametrize("n", [1, 3, 12])
def test_gpu_instances_split_the_same_way(n):
    exp = export_settings(_p(8, 2000.0, n), "m", "gpu")
    _assert_agree(exp, n, co_located=False)
    workers = [int(x) for x in re.findall(r"server \d+: (\d+)", exp.torchserve_config)] or [n]
    assert sum(workers) == n


@pytest.fixture(scope="module")
def live_advice(tmp_path_factory):
    d = tmp_path_factory.mktemp("live-export")
    shutil.copy(INPUTS / "live.json", d / "live.json")
    res = invoke("advise", "--from", str(d / "live.json"), "--arrival-rate", "300",
                 "--format", "json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_a_live_advice_exports_the_same_settings_everywhere(live_advice):
    """The live run's model allows 32 (its sweep ran max batch 8); the advice measured no
    batch above 2 and recommends 2: every target deploys the model's 32, each saying
    why."""
    adv = live_advice
    assert adv["recommendation"]["prediction"]["max_batch_size"] == 2
    exp = adv["export"]
    t = _triton(exp["triton_config_pbtxt"])
    r = _ray(exp["ray_serve_python"])
    s = _torchserve(exp["torchserve_config"])
    assert t[0] == r[0] == s[0] == 32
    assert t[2] == r[2] == s[2] == adv["recommendation"]["prediction"]["instances"]
    for text in exp.values():
        assert "the server's own, kept" in text


def test_export_from_a_bench_file_without_advice_claims_no_advice(tmp_path):
    onnx.save(small_classifier(seed=0), str(tmp_path / "small.onnx"))
    shutil.copy(INPUTS / "bench_a.json", tmp_path / "bench.json")
    res = invoke("export", "triton", str(tmp_path / "small.onnx"), "--from",
                 str(tmp_path / "bench.json"), "-o", str(tmp_path / "repo"))
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "repo" / "small" / "config.pbtxt").read_text()
    assert "does not pay" not in text
    assert "no batching settings given" in text
    assert "holds no advice" in res.stderr
