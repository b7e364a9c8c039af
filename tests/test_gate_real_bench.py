"""gate and compare on results written by the real ``trtcheck bench`` (ONNX Runtime, CPU)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtcheck.cli import main


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as ei:
        main([str(a) for a in argv])
    cap = capsys.readouterr()
    return ei.value.code, cap.out, cap.err


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("real-bench")
    w = numpy_helper.from_array(
        np.random.default_rng(0).standard_normal((128, 128)).astype(np.float32), "W")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 128])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 128])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["h"]),
                               helper.make_node("Relu", ["h"], ["y"])], "tiny", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, d / "tiny.onnx")
    out = []
    for name in ("a.json", "b.json"):
        with pytest.raises(SystemExit) as ei:
            main(["bench", str(d / "tiny.onnx"), "--batch", "1,4", "--min-duration", "0.2",
                  "--min-samples", "500", "--max-duration", "2", "--warmup", "0.05",
                  "--threads", "1", "-o", str(d / name), "--format", "json"])
        assert ei.value.code == 0
        out.append(d / name)
    return d, out[0], out[1]


def test_gate_reads_real_bench_output(two_runs, capsys):
    d, a, b = two_runs
    pol = d / "gate.yaml"
    pol.write_text("budgets:\n  - bench.batch[4].p99_ms <= 10 s\n"
                   "  - bench.batch[*].count >= 500\n"
                   "baseline:\n  - bench.batch[*].median_ms: 50%\n"
                   "  - bench.batch[*].throughput_samples_per_s: 50%\n")
    code, out, err = run_main(["gate", b, "-p", pol, "-b", a, "--format", "json"], capsys)
    rep = json.loads(out)
    # a 50% limit is far beyond what two runs of one model differ by, even on a busy box
    assert code == 0, err
    base = [c for c in rep["checks"] if c["kind"] == "baseline"]
    assert sorted(c["metric"] for c in base) == [
        "bench.batch[1].median_ms", "bench.batch[1].throughput_samples_per_s",
        "bench.batch[4].median_ms", "bench.batch[4].throughput_samples_per_s"]
    for c in base:  # intervals from the raw samples, not point comparisons
        assert c["confidence"] == 0.95 and c["ratio_low"] < c["ratio"] < c["ratio_high"]
    p99 = next(c for c in rep["checks"] if c["metric"] == "bench.batch[4].p99_ms")
    assert p99["certified"] is True and p99["samples"] >= 500 and p99["over_bound"] == 0


def test_compare_reads_real_bench_output(two_runs, capsys):
    _, a, b = two_runs
    code, out, _ = run_main(["compare", a, b, "--format", "json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["comparable"] is True
    assert [x["batch_size"] for x in data["runs"][0]["batches"]] == [1, 4]
