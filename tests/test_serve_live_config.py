"""Live targets without a server: URL parsing, Triton config overrides, statistics deltas,
request tensors from metadata, and how an open-loop schedule is dealt to processes."""

from __future__ import annotations

import numpy as np
import pytest

from trtcheck.errors import InputError
from trtcheck.measure.serving.live.live import (
    process_share, instances_of, override_config, request_tensors, stats_delta, window_us_of,
)
from trtcheck.measure.serving.live.kserve import parse_url
from trtcheck.measure.serving.loadgen import parse_load
from trtcheck.results.kserve_answers import check_model_stats

CONFIG = {
    "name": "m", "backend": "python", "max_batch_size": 32,
    "dynamic_batching": {"preferred_batch_size": [32], "max_queue_delay_microseconds": 2000},
    "instance_group": [{"name": "m_0", "kind": "KIND_CPU", "count": 1}],
}
META = {"name": "m", "inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, 4]},
                                {"name": "ids", "datatype": "INT64", "shape": [-1, -1]}],
        "outputs": [{"name": "y", "datatype": "FP32", "shape": [-1, 4]}]}


def test_parse_url():
    ep = parse_url("http://127.0.0.1:8000")
    assert (ep.protocol, ep.address) == ("http", "127.0.0.1:8000")
    assert parse_url("grpc://[::1]:8001/").address == "[::1]:8001"
    for bad in ("https://h:1", "h:1", "http://h", "http://h:1/v2", "http://h:99999",
                "http://h:1?x=1"):
        with pytest.raises(InputError):
            parse_url(bad)


def test_override_config_changes_only_what_is_swept():
    cfg = override_config(CONFIG, window_us=500, max_batch=8, instances=3, preferred=None)
    assert cfg["max_batch_size"] == 8
    assert cfg["dynamic_batching"]["max_queue_delay_microseconds"] == 500
    # preferred sizes above the new max batch are dropped (Triton refuses them)
    assert cfg["dynamic_batching"]["preferred_batch_size"] == []
    assert cfg["instance_group"] == [{"kind": "KIND_CPU", "count": 3}]
    assert CONFIG["max_batch_size"] == 32  # the base is not modified
    assert (window_us_of(cfg), instances_of(cfg)) == (500.0, 3)
    cfg = override_config(CONFIG, window_us=None, max_batch=None, instances=None,
                          preferred=[4, 8, 64])
    assert cfg["dynamic_batching"]["preferred_batch_size"] == [4, 8]
    assert cfg["max_batch_size"] == 32
    assert cfg["dynamic_batching"]["max_queue_delay_microseconds"] == 2000
    plain = {"name": "m", "max_batch_size": 8}
    cfg = override_config(plain, window_us=1000, max_batch=None, instances=None, preferred=None)
    assert cfg["dynamic_batching"] == {"max_queue_delay_microseconds": 1000}
    assert window_us_of(plain) == 0.0 and instances_of(plain) == 1


def test_stats_delta_and_grpc_strings():
    before = {"name": "m", "version": "1", "inference_count": 10, "execution_count": 5,
              "inference_stats": {"success": {"count": 10, "ns": 10_000_000},
                                  "queue": {"count": 10, "ns": 1_000_000}},
              "batch_stats": [{"batch_size": 2, "compute_infer": {"count": 5, "ns": 5_000_000}}]}
    # gRPC JSON: int64 as strings, zero fields left out
    [after] = check_model_stats({"model_stats": [{"name": "m", "version": "1", "inference_count": "40",
                   "execution_count": "15",
                   "inference_stats": {"success": {"count": "40", "ns": "50000000"},
                                       "queue": {"count": "40", "ns": "9000000"}, "fail": {}},
                   "batch_stats": [{"batch_size": "2",
                                    "compute_infer": {"count": "10", "ns": "11000000"}},
                                   {"batch_size": "4",
                                    "compute_infer": {"count": "5", "ns": "8000000"},
                                    "compute_input": {"count": "5", "ns": "500000"}}]}]})
    d = stats_delta(before, after)
    assert (d.inference_count, d.execution_count) == (30, 10)
    assert d.avg_batch_size == 3.0
    assert d.success.count == 30 and d.success.total_ms == pytest.approx(40.0)
    assert d.queue.mean_ms == pytest.approx(8.0 / 30)
    assert d.fail.count == 0 and d.fail.mean_ms is None
    assert [(b.batch_size, b.execution_count) for b in d.batch_stats] == [(2, 5), (4, 5)]
    assert d.batch_stats[0].compute_infer_ms == pytest.approx(6.0)
    assert d.batch_stats[1].compute_input_ms == pytest.approx(0.5)


def test_request_tensors_from_metadata():
    with pytest.raises(InputError, match="variable dimensions"):
        request_tensors(META, CONFIG)
    feed, ins, outs = request_tensors(META, CONFIG, shapes={"ids": [1, 7]}, seed=3)
    assert feed["x"].shape == (1, 4) and feed["x"].dtype == np.float32
    assert feed["ids"].shape == (1, 7) and feed["ids"].dtype == np.int64
    assert outs[0].shape == (1, 4)
    again, _, _ = request_tensors(META, CONFIG, shapes={"ids": [1, 7]}, seed=3)
    assert np.array_equal(again["x"], feed["x"])  # seeded
    with pytest.raises(InputError, match="one sample per request"):
        request_tensors(META, CONFIG, shapes={"ids": [2, 7]})
    with pytest.raises(InputError, match="does not have"):
        request_tensors(META, CONFIG, shapes={"nope": [1]})
    feed, _, _ = request_tensors(META, CONFIG, shapes={"ids": [1, 3]},
                                 arrays={"x": np.arange(4, dtype=np.float64)})
    assert feed["x"].shape == (1, 4) and feed["x"].dtype == np.float32
    with pytest.raises(InputError, match="--inputs array 'x'"):
        request_tensors(META, CONFIG, shapes={"ids": [1, 3]}, arrays={"x": np.zeros((1, 5))})
    # a model without batching takes its full shape
    feed, _, outs = request_tensors(META, {"max_batch_size": 0},
                                    shapes={"x": [3, 4], "ids": [2, 2]})
    assert feed["x"].shape == (3, 4) and outs[0].shape == (-1, 4)


def test_open_loop_schedule_is_dealt_round_robin():
    shape = parse_load("open:1000:50")
    whole = shape.schedule_s(7)
    parts = [process_share(shape, 7, k, 3) for k in range(3)]
    assert sum(p.count for p in parts) == 50
    merged = np.sort(np.concatenate([np.asarray(p.trace_s) for p in parts]))
    assert np.array_equal(merged, whole)
    assert all(p.kind == "open" and p.rate_per_s == pytest.approx(1000 / 3) for p in parts)
    burst = [process_share(parse_load("burst:10"), 0, k, 3) for k in range(3)]
    assert [b.count for b in burst] == [4, 3, 3]
    closed = [process_share(parse_load("closed:2:100"), 0, k, 3) for k in range(3)]
    assert closed[2] is None and [c.concurrency for c in closed[:2]] == [1, 1]


def test_request_failures_are_classified_by_who_is_at_fault():
    from trtcheck.errors import EnvironmentProblem
    from trtcheck.measure.serving.live.live import LoadJob, request_failure

    job = LoadJob("http://h:1", "http", "h:1", "m", "", {}, [], parse_load("burst:1"), 0,
                  1.0, 1.0, 0, 0)
    for kind, cls in (("HTTP 400", InputError), ("gRPC INVALID_ARGUMENT", InputError),
                      ("HTTP 500", EnvironmentProblem), ("gRPC INTERNAL", EnvironmentProblem),
                      ("BadResponse", EnvironmentProblem),
                      ("ConnectionError", EnvironmentProblem)):
        err = request_failure(kind, "text", job, warmup=False)
        assert isinstance(err, cls), kind
        assert kind in err.message and err.hint
