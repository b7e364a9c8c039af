"""Batch sizes a model runs for the first time since its load, and the one-time cost they
may pay (eager frameworks, ONNX Runtime's cuDNN algorithm search per new shape).

The bound (``trtcheck.results.serve.cold_batch_sizes``) is checked on numbers recorded
from ResNet-50 in Triton's python backend on an H200 (a run whose new sizes were cold),
and the whole path on the real tritonserver: its statistics say which sizes are new
(``first_since_load``), a scripted model pays 400 ms on each new size's first execution,
and the cold size is named while warm ones are not.
"""

from __future__ import annotations

import contextlib
import json
import urllib.request

import numpy as np
import pytest

from trtcheck.analyze.tune_plan import pooled_batch_stats
from trtcheck.measure.serving.live.live import cold_sizes_finding, stats_delta
from trtcheck.results.serve import COLD_RATIO, TritonBatchStat, cold_batch_sizes


def _stat(b: int, n: int, mean_ms: float, first: bool) -> TritonBatchStat:
    return TritonBatchStat(batch_size=b, execution_count=n, compute_input_ms=0.0,
                           compute_infer_ms=n * mean_ms, compute_output_ms=0.0,
                           first_since_load=first)


def test_a_new_size_slower_than_any_warm_t_allows_is_cold():
    # H200, ResNet-50, 1 instance, open load at 404 req/s: sizes 1-4 had run before,
    # size 5 was new (Triton's compute per execution, ms)
    stats = [_stat(1, 79, 4.87, False), _stat(2, 82, 5.02, False), _stat(3, 48, 5.19, False),
             _stat(4, 22, 5.67, False), _stat(5, 8, 12.77, True)]
    cold = cold_batch_sizes(stats)
    # the bound for size 5: min(T(4) * 5 / 4, T(3) * 5 / 3, ...) = 7.0875 ms
    assert [b for b, _ in cold] == [5]
    assert cold[0][1] == pytest.approx(8 * (12.77 - 5.67 * 5 / 4), rel=1e-9)


def test_warm_sizes_and_plausible_new_sizes_are_never_named():
    # a slow warm size is a slow shape, not a cold one: only new sizes can be cold
    stats = [_stat(1, 50, 2.0, False), _stat(7, 10, 9.0, False), _stat(8, 40, 4.0, False)]
    assert cold_batch_sizes(stats) == []
    # a new size within COLD_RATIO of the bound is not named
    bound = min(4.0 * 12 / 8, 2.0 * 12)
    ok = [_stat(8, 40, 4.0, False), _stat(12, 3, COLD_RATIO * bound * 0.99, True),
          _stat(1, 50, 2.0, False)]
    assert cold_batch_sizes(ok) == []
    # no warm size executed in the run: no bound, nothing named
    assert cold_batch_sizes([_stat(4, 2, 500.0, True), _stat(8, 3, 900.0, True)]) == []


def test_the_finding_names_the_sizes_and_the_remedy():
    f = cold_sizes_finding([(5, 54.6), (9, 120.2)], "open:404 repeat 1")
    assert f.code == "cold-batch-sizes" and f.severity == "warning"
    assert "batch sizes 5, 9" in f.message and "about 175 ms" in f.message
    assert "model_warmup" in (f.remedy or "")


def test_t_of_b_keeps_cold_sizes_as_measured():
    # the backlog a cold execution built is in the run's latencies too: T(b) keeps it
    # (taking it out of T(b) alone made predictions worse on the H200 records)
    from trtcheck.results.serve import (
        ServeConfigResult, ServeRepeat, ServeRun, TritonDuration, TritonStatsDelta,
    )

    stats = [_stat(1, 79, 4.87, False), _stat(4, 22, 5.67, False), _stat(5, 8, 12.77, True)]
    zero = TritonDuration(count=0, total_ms=0.0)
    delta = TritonStatsDelta(model_name="m", inference_count=1, execution_count=1,
                             avg_batch_size=1.0, success=zero, fail=zero, queue=zero,
                             compute_input=zero, compute_infer=zero, compute_output=zero,
                             batch_stats=stats)
    rep = ServeRepeat.model_construct(repeat=0, server_stats=delta)
    cfg = ServeConfigResult.model_construct(repeats=[rep])
    run = ServeRun.model_construct(configs=[cfg])
    pooled = pooled_batch_stats([run])
    assert sorted(pooled) == [1, 4, 5]
    assert pooled[5] == (8, pytest.approx(8 * 12.77))
    assert cold_batch_sizes(stats)[0][0] == 5  # while the run names it


def _infer(url: str, model: str, batch: int) -> None:
    body = {"inputs": [{"name": "INPUT0", "shape": [batch, 4], "datatype": "FP32",
                        "data": np.ones(batch * 4).tolist()}]}
    req = urllib.request.Request(f"{url}/v2/models/{model}/infer",
                                 data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status == 200


@contextlib.contextmanager
def _cold_model(triton, name: str, max_batch_size: int):
    """``name`` loaded on the test Triton for the block: T(b) = 1 + 0.25 b ms, and the
    first execution of each new batch size takes 400 ms more."""
    from trtcheck.testing.triton_server import write_model

    write_model(triton.repo, name, a_ms=1.0, b_ms=0.25, max_batch_size=max_batch_size,
                first_ms=400.0)
    triton.load(name)
    try:
        yield name
    finally:
        triton.unload(name)


@pytest.mark.triton
def test_real_triton_statistics_name_the_new_size_that_ran_cold(triton):
    with _cold_model(triton, "tb_cold400", 16):
        for b in (1, 2):  # warm: their first executions fall before the run
            _infer(triton.http_url, "tb_cold400", b)
        before = triton.stats("tb_cold400")["model_stats"][0]
        for b in (1, 2, 1, 2, 6, 6):  # one request of shape [b, 4] is one batch of b
            _infer(triton.http_url, "tb_cold400", b)
        after = triton.stats("tb_cold400")["model_stats"][0]
    delta = stats_delta(before, after)
    first = {s.batch_size: s.first_since_load for s in delta.batch_stats}
    assert first == {1: False, 2: False, 6: True}
    cold = cold_batch_sizes(delta.batch_stats)
    assert [b for b, _ in cold] == [6]
    # two executions of size 6, one of them 400 ms longer: the cost the bound leaves
    # (mean - bound) * 2 is at most the scripted 400 ms plus the warm time
    six = next(s for s in delta.batch_stats if s.batch_size == 6)
    assert six.compute_infer_ms >= 400.0
    assert 0 < cold[0][1] <= six.compute_infer_ms


def test_batch_warmup_covers_every_size_and_keeps_the_models_own():
    from trtcheck.measure.serving.live.live import WARMUP_PREFIX, with_batch_warmup

    cfg = {"name": "m", "max_batch_size": 4,
           "input": [{"name": "x", "data_type": "TYPE_FP16", "dims": [3, 8]}],
           "model_warmup": [{"name": "own", "batch_size": 1, "inputs": {}},
                            {"name": f"{WARMUP_PREFIX}9", "batch_size": 9, "inputs": {}}]}
    out, why = with_batch_warmup(cfg)
    assert why is None
    names = [w["name"] for w in out["model_warmup"]]
    assert names == ["own"] + [f"{WARMUP_PREFIX}{b}" for b in (1, 2, 3, 4)]
    assert out["model_warmup"][2] == {
        "name": f"{WARMUP_PREFIX}2", "batch_size": 2, "count": 1,
        "inputs": {"x": {"data_type": "TYPE_FP16", "dims": [3, 8], "random_data": True}}}
    assert len(cfg["model_warmup"]) == 2  # the input is not changed
    for bad, reason in (({**cfg, "max_batch_size": 0}, "no batching dimension"),
                        ({**cfg, "input": [{"name": "x", "data_type": "TYPE_FP32",
                                            "dims": [-1, 8]}]}, "variable dimension"),
                        ({**cfg, "input": [{"name": "s", "data_type": "TYPE_STRING",
                                            "dims": [1]}]}, "TYPE_STRING")):
        same, why = with_batch_warmup(bad)
        assert same is bad and why is not None and reason in why


@pytest.mark.triton
def test_a_sweep_with_batch_warmup_runs_no_size_cold(triton):
    from trtcheck.measure.serving.live.live import measure_live

    with _cold_model(triton, "tb_cold400w", 6):
        run = measure_live(triton.http_url, "tb_cold400w", windows_us=[2000.0],
                           max_batch_sizes=[6], loads=["burst:12"], max_duration_s=3.0,
                           drain_timeout_s=10.0, warmup_requests=0, warm_batch_sizes=True)
    st = run.configs[0].repeats[0].server_stats
    assert st is not None and st.batch_stats
    # the configuration the server ran warms every size 1..6 when it loads the model, so
    # no size of the run is new to it
    loaded = run.configs[0].server_model_config or {}
    assert [w["batch_size"] for w in loaded.get("model_warmup", [])] == [1, 2, 3, 4, 5, 6]
    assert not [s for s in st.batch_stats if s.first_since_load]
    assert not [w for w in run.warnings if w.code in ("cold-batch-sizes",
                                                      "warmup-not-possible")]
