"""`trtcheck serve --shapes` with a per-request batch other than 1.

Before: `--shapes input:4x3x224x224` on the demo ResNet-18 was silently run as
1x3x224x224 (axis 0 forced to the per-request batch of 1), so numbers were reported for
one sample per request while the user asked for four. Now every request is explicitly one
sample (batch sizes, --max-batch and QPS count requests = samples) and another axis 0 is
refused before anything is measured (exit 2, one line, with a hint)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import assert_one_line_error

from trtcheck.errors import InputError


def test_demo_model_refuses_four_samples_per_request(cli, demo_model, tmp_path):
    out = tmp_path / "serve.json"
    res = cli("serve", str(demo_model), "--shapes", "input:4x3x224x224", "--window-ms", "0",
              "--max-batch", "8", "--load", "burst:8", "--repeats", "1",
              "--warmup-requests", "0", "-o", str(out))
    line = assert_one_line_error(res, 2, "a batch of 4 per request", "one sample per request",
                                 "--shapes input:1x3x224x224", "bench MODEL --batch 4")
    assert "it would run 1x3x224x224" in line
    assert not out.exists()
    assert "serving" not in res.stderr  # refused before any measurement started
    assert res.stdout == ""


def test_demo_model_one_sample_per_request_is_counted_in_samples(cli, demo_model, tmp_path):
    out = tmp_path / "serve.json"
    res = cli("serve", str(demo_model), "--shapes", "input:1x3x224x224", "--window-ms", "0",
              "--max-batch", "4", "--load", "burst:8", "--repeats", "1",
              "--warmup-requests", "0", "-o", str(out))
    assert res.returncode == 0, res.stderr
    run = json.loads(out.read_text())["serve"]
    assert run["settings"]["payload"] == "input float32 [1, 3, 224, 224]"
    rep = run["configs"][0]["repeats"][0]
    c = rep["counters"]
    ok = rep["outcomes"].get("ok", 0)
    assert ok == 8
    # inference_count counts samples (Triton); one sample per request: = requests served
    assert c["inference_count"] == ok
    hist = {int(k): v for k, v in c["batch_size_histogram"].items()}
    assert sum(b * n for b, n in hist.items()) == c["inference_count"]
    assert max(hist) <= 4 and rep["max_batch_size"] <= 4


def test_synthetic_backend_refuses_it_too(cli):
    res = cli("serve", "--synthetic-curve", "1:0.3,8:1", "--shapes", "x:4x1", "--window-ms",
              "0", "--max-batch", "8", "--load", "burst:8", "--repeats", "1")
    assert_one_line_error(res, 2, "a batch of 4 per request", "--shapes x:1x1")


def _synthetic():
    from trtcheck.backends.synthetic import SyntheticBackend

    return SyntheticBackend("1:0.2,8:0.5")


def _serve(target, **kw):
    from trtcheck.measure.serving.serve import measure_serving

    return measure_serving(target, windows_us=[0], max_batch_sizes=[4], loads=["burst:8"],
                           repeats=1, warmup_requests=0, **kw)


def test_library_refuses_multi_sample_shapes_and_payloads():
    with pytest.raises(InputError, match="a batch of 3 per request"):
        _serve(_synthetic(), shapes={"x": [3, 1]})
    with pytest.raises(InputError, match="has 4 rows on axis 0"):
        _serve(_synthetic(), payload={"x": np.zeros((4, 1), np.float32)})
    with pytest.raises(InputError, match="has 2 rows on axis 0"):
        _serve(_synthetic(), payload=np.zeros((2, 1), np.float32))


def test_library_one_sample_requests_run_and_count_samples():
    from trtcheck.measure.serving.serve import SAMPLES_PER_REQUEST, request_shapes

    be = _synthetic()
    assert SAMPLES_PER_REQUEST == 1
    assert request_shapes(be, {"x": [1, 1]}) == {"x": [1, 1]}
    run = _serve(be, shapes={"x": [1, 1]})
    rep = run.configs[0].repeats[0]
    assert rep.outcomes["ok"] == 8 and rep.counters.inference_count == 8
    assert run.settings.payload == "x float32 [1, 1]"


def test_a_plain_function_decides_what_a_request_is():
    # documented: a function target may take any payload; batch sizes count requests
    seen = []

    def fn(batch):
        seen.append(int(batch.shape[0]))
        return batch * 2

    run = _serve(fn, payload=np.ones((2, 3), np.float32))
    rep = run.configs[0].repeats[0]
    assert rep.outcomes["ok"] == 8 and rep.counters.inference_count == 8
    assert sum(seen) == 16  # 8 requests x 2 rows reached the function


def test_report_sweep_keeps_axis_zero_for_batch():
    # `trtcheck report --shapes x:8x1 --batch 1,8`: axis 0 belongs to --batch; its serving
    # sweep sends one-sample requests instead of refusing the shapes
    from trtcheck.measure.serving.serve import _default_payload

    feed = _default_payload(_synthetic(), {"x": [8, 1]}, 0, one_sample=False)
    assert list(feed["x"].shape) == [1, 1]
    with pytest.raises(InputError):
        _default_payload(_synthetic(), {"x": [8, 1]}, 0)


def test_an_input_whose_axis_zero_the_model_fixes_is_not_a_batch():
    # a parameter input (model shape [4]) beside the batched one keeps its 4 rows
    from trtcheck.backends.callable import CallableBackend
    from trtcheck.results.inspection import TensorInfo

    def fn(batch):
        return batch["x"] * batch["scale"][:1]

    be = CallableBackend(fn, inputs=[TensorInfo(name="x", dtype="float32", shape=["n", 4]),
                                     TensorInfo(name="scale", dtype="float32", shape=[4])])
    from trtcheck.measure.serving.serve import _check_payload_rows, request_shapes

    assert request_shapes(be, {"x": [1, 4], "scale": [4]}) == {"x": [1, 4], "scale": [4]}
    _check_payload_rows(be, {"x": np.ones((1, 4), np.float32),
                             "scale": np.ones(4, np.float32)})
    with pytest.raises(InputError, match="'x' has 3 rows"):
        _check_payload_rows(be, {"x": np.ones((3, 4), np.float32),
                                 "scale": np.ones(4, np.float32)})
