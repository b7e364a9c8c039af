"""No command writes an output over one of its inputs, --overwrite or not.

`bench cls.onnx -o cls.onnx --overwrite` replaced the model with a results JSON; the same
for `precision -o MODEL`, `bench --inputs g.npz -o g.npz`, ... Every command that reads
files and writes outputs now refuses, before any work, with one line and exit 2
(trtcheck.cli.common.refuse_output_over_inputs)."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from trtcheck.cli import main

FAST = ["--warmup", "0", "--min-duration", "0", "--min-samples", "2"]


def tiny_model(path):
    """x [N, 3, H, W] float -> Relu -> y (dynamic batch and spatial dims)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, "H", "W"])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(path))
    return path


@pytest.fixture
def model(tmp_path):
    return tiny_model(tmp_path / "m.onnx")


@pytest.fixture
def npz(tmp_path):
    p = tmp_path / "g.npz"
    np.savez(p, x=np.ones((1, 3, 4, 4), np.float32))
    return p


@pytest.fixture
def results_json(tmp_path):
    from trtcheck.testing import synthetic_results as g
    return g.write(g.results({1: 2.0, 8: 4.0}, n=200, seed=1), tmp_path / "r.json")


def refused(args, capsys, kept, *needles):
    """``args`` exits 2 with one ``error: refusing ...; hint: ...`` line and every file in
    ``kept`` keeps its bytes."""
    before = {p: p.read_bytes() for p in kept}
    with pytest.raises(SystemExit) as e:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert e.value.code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: refusing to write"), err
    assert "; hint: " in lines[0] and "never writes over" in lines[0], err
    for n in needles:
        assert n in lines[0], (n, err)
    for p, data in before.items():
        assert p.read_bytes() == data, f"{p} was changed"
    return lines[0]


def test_bench_output_over_model(model, capsys):
    refused(["bench", model, "--shapes", "x:1x3x4x4", *FAST, "-o", model, "--overwrite"],
            capsys, [model], "given as MODEL")


def test_bench_output_over_inputs_npz(model, npz, capsys):
    refused(["bench", model, "--inputs", npz, *FAST, "-o", npz, "--overwrite"], capsys,
            [model, npz], "given as --inputs")


def test_bench_output_through_a_symlink_and_a_hard_link(model, tmp_path, capsys):
    link = tmp_path / "link.json"
    link.symlink_to(model)
    refused(["bench", model, "--shapes", "x:1x3x4x4", *FAST, "-o", link, "--overwrite"],
            capsys, [model])
    hard = tmp_path / "hard.json"
    os.link(model, hard)
    refused(["bench", model, "--shapes", "x:1x3x4x4", *FAST, "-o", hard, "--overwrite"],
            capsys, [model])


def test_bench_output_with_dot_dot_path(model, tmp_path, capsys):
    odd = tmp_path / "sub" / ".." / "m.onnx"
    refused(["bench", model, "--shapes", "x:1x3x4x4", *FAST, "-o", odd, "--overwrite"],
            capsys, [model])
    assert not (tmp_path / "sub").exists()


def test_precision_output_over_model_and_inputs(model, npz, tmp_path, capsys):
    refused(["precision", model, "--shapes", "x:1x3x4x4", "-o", model, "--overwrite"],
            capsys, [model], "given as MODEL")
    refused(["precision", model, "--inputs", npz, "-o", npz, "--overwrite"], capsys,
            [model, npz], "given as --inputs")
    d = tmp_path / "samples"
    d.mkdir()
    s = d / "a.npz"
    np.savez(s, x=np.ones((1, 3, 4, 4), np.float32))
    refused(["precision", model, "--inputs-dir", d, "-o", s, "--overwrite"], capsys,
            [model, s], "given as --inputs-dir")


def test_precision_output_over_candidate(model, tmp_path, capsys):
    cand = tiny_model(tmp_path / "m16.onnx")
    refused(["precision", model, "--shapes", "x:1x3x4x4", "--candidate", f"fp16={cand}",
             "-o", cand, "--overwrite"], capsys, [model, cand], "given as --candidate")


def test_report_from_into_its_own_folder(results_json, tmp_path, capsys):
    out = tmp_path / "rep"
    with pytest.raises(SystemExit) as e:
        main(["report", "--from", str(results_json), "-o", str(out)])
    assert e.value.code == 0
    capsys.readouterr()
    refused(["report", "--from", out, "-o", out, "--overwrite"], capsys,
            [out / "results.json", out / "report.html"], "results.json")


def test_report_model_inside_its_output(tmp_path, capsys):
    out = tmp_path / "rep"
    out.mkdir()
    m = tiny_model(out / "results.json")  # an ONNX model, oddly named
    refused(["report", m, "--shapes", "x:1x3x4x4", "-o", out, "--overwrite"], capsys, [m])


def test_advise_output_over_from(results_json, capsys):
    refused(["advise", "--from", results_json, "--arrival-rate", "100", "-o", results_json,
             "--overwrite"], capsys, [results_json], "given as --from")


def test_serve_output_over_trace(tmp_path, capsys):
    trace = tmp_path / "t.txt"
    trace.write_text("0\n1\n2\n")
    refused(["serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0", "--max-batch",
             "8", "--repeats", "1", "--load", f"trace:{trace}", "-o", trace, "--overwrite"],
            capsys, [trace], "given as --load")


def test_build_plan_over_model(tmp_path, capsys):
    # build writes <stem>.<precision>.plan; here that name is a hard link to the model
    m = tiny_model(tmp_path / "n.onnx")
    os.link(m, tmp_path / "n.fp32.plan")
    refused(["build", m, "--shapes", "x:1x3x4x4", "-o", tmp_path, "--overwrite"], capsys,
            [m], "given as MODEL")


def test_gate_and_compare_still_refuse(results_json, tmp_path, capsys):
    policy = tmp_path / "p.yaml"
    policy.write_text("budgets: []\n")
    refused(["gate", results_json, "-p", policy, "--junit-xml", policy, "--overwrite"],
            capsys, [policy], "given as --policy")
    refused(["compare", results_json, results_json, "-o", results_json, "--overwrite"],
            capsys, [results_json], "given as A")


def test_preflight_output_over_log(tmp_path, capsys):
    log = tmp_path / "load.log"
    log.write_text("nothing\n")
    plan = tmp_path / "x.plan"
    plan.write_bytes(b"x" * 64)
    refused(["preflight", plan, "--log", log, "--strip-prefix", "-o", log], capsys,
            [log, plan], "given as --log")


def test_distinct_outputs_still_work(model, tmp_path, capsys):
    out = tmp_path / "out.json"
    with pytest.raises(SystemExit) as e:
        main(["bench", str(model), "--shapes", "x:1x3x4x4", *FAST, "-o", str(out)])
    assert e.value.code == 0, capsys.readouterr().err
    assert out.read_text().lstrip().startswith("{")


def test_precision_inputs_dir_other_files_are_no_inputs(model, tmp_path, capsys):
    """Only the folder's .npz files are read, so another file there is not an input."""
    d = tmp_path / "samples"
    d.mkdir()
    np.savez(d / "a.npz", x=np.ones((1, 3, 4, 4), np.float32))
    out = d / "notes.json"
    out.write_text("{}")
    with pytest.raises(SystemExit) as e:
        main(["precision", str(model), "--inputs-dir", str(d), "-o", str(out)])
    err = capsys.readouterr().err
    assert "refusing to write" not in err and "already exists" in err, err
    assert e.value.code == 2
