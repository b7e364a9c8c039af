"""QA pass: problems a new user hit through the CLI, each pinned by a regression test."""

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from tests.conftest import assert_one_line_error

FAST = ["--warmup", "0", "--min-duration", "0", "--min-samples", "3"]


def _save(graph: onnx.GraphProto, path) -> str:
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return str(path)


@pytest.fixture
def multi_input_model(tmp_path) -> str:
    """int64 ids, bool mask and fp16 data, all with a dynamic batch 'N' and 8 features."""
    ins = [h.make_tensor_value_info("ids", T.INT64, ["N", 8]),
           h.make_tensor_value_info("mask", T.BOOL, ["N", 8]),
           h.make_tensor_value_info("x16", T.FLOAT16, ["N", 8])]
    out = h.make_tensor_value_info("out", T.FLOAT16, ["N", 8])
    nodes = [h.make_node("Cast", ["ids"], ["idsf"], to=T.FLOAT16),
             h.make_node("Cast", ["mask"], ["maskf"], to=T.FLOAT16),
             h.make_node("Mul", ["idsf", "maskf"], ["t"]),
             h.make_node("Add", ["t", "x16"], ["out"])]
    return _save(h.make_graph(nodes, "multi", ins, [out]), tmp_path / "multi.onnx")


@pytest.fixture
def scalar_input_model(tmp_path) -> str:
    """A rank-0 float 's' and a 1-D 'v' of dynamic length 'L': o = v * s."""
    ins = [h.make_tensor_value_info("s", T.FLOAT, []),
           h.make_tensor_value_info("v", T.FLOAT, ["L"])]
    out = h.make_tensor_value_info("o", T.FLOAT, ["L"])
    return _save(h.make_graph([h.make_node("Mul", ["v", "s"], ["o"])], "scal", ins, [out]),
                 tmp_path / "scalar.onnx")


# --- Click's own usage errors follow the house format --------------------------------

@pytest.mark.parametrize("args,needle", [
    (["bench", "MODEL", "--bogus"], "--bogus"),
    (["bench"], "MODEL"),
    (["nosuchcommand"], "nosuchcommand"),
    (["precision", "MODEL", "--samples", "0"], "--samples"),
])
def test_click_usage_errors_are_one_line(cli, multi_input_model, args, needle):
    args = [multi_input_model if a == "MODEL" else a for a in args]
    res = cli(*args)
    assert_one_line_error(res, 2, needle, "hint:")
    assert "Usage:" not in res.stderr, res.stderr


# --- --batch ---------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["0", "-1", "1,,2", ",", "1.5", "1,2,"])
def test_bad_batch_lists_name_the_option(cli, multi_input_model, value):
    res = cli("bench", multi_input_model, "--batch", value, *FAST)
    assert_one_line_error(res, 2, "--batch")


# --- .npz inputs -----------------------------------------------------------------------

def test_npz_arrays_give_the_shapes_of_dynamic_inputs(cli, multi_input_model, tmp_path):
    npz = tmp_path / "data.npz"
    np.savez(npz, ids=np.ones((2, 8), np.int64), mask=np.ones((2, 8), bool),
             x16=np.full((2, 8), 0.5, np.float16))
    res = cli("bench", multi_input_model, "--inputs", str(npz), "--format", "json", *FAST)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    (batch,) = data["bench"][0]["batches"]
    assert batch["batch_size"] == 2
    assert batch["input_shapes"] == {"ids": [2, 8], "mask": [2, 8], "x16": [2, 8]}


def test_npz_shapes_still_yield_to_batch_sizes(cli, multi_input_model, tmp_path):
    npz = tmp_path / "one.npz"
    np.savez(npz, ids=np.ones((1, 8), np.int64), mask=np.ones((1, 8), bool),
             x16=np.ones((1, 8), np.float16))
    res = cli("bench", multi_input_model, "--inputs", str(npz), "--batch", "1,4",
              "--format", "json", *FAST)
    assert res.returncode == 0, res.stderr
    shapes = [b["input_shapes"]["ids"] for b in json.loads(res.stdout)["bench"][0]["batches"]]
    assert shapes == [[1, 8], [4, 8]]


def test_a_file_that_is_not_npz_is_not_called_pickled(cli, multi_input_model, tmp_path):
    bad = tmp_path / "data.npz"
    bad.write_text("hello, not numpy\n")
    res = cli("bench", multi_input_model, "--inputs", str(bad), *FAST)
    line = assert_one_line_error(res, 2, "data.npz", "numpy.savez")
    assert "pickle" not in line


# --- --shapes hints ----------------------------------------------------------------------

def test_shapes_hint_is_valid_syntax_for_scalar_inputs(cli, scalar_input_model):
    res = cli("bench", scalar_input_model, *FAST)
    line = assert_one_line_error(res, 2, "v axis 0", "--shapes v:")
    assert "s:," not in line and "s:" not in line.split("hint:")[1]
    # and the hint's own suggestion runs
    suggestion = line.split("give them with ")[1].split()[1]
    res = cli("bench", scalar_input_model, "--shapes", suggestion, *FAST)
    assert res.returncode == 0, res.stderr


def test_memory_error_hint_mentions_the_shapes_not_only_the_batch(cli, ppocr):
    res = cli("bench", str(ppocr["det"]), "--shapes", "x:1x3x99999x99999", *FAST)
    line = assert_one_line_error(res, 2, "does not fit in memory", "x:1x3x99999x99999")
    assert "--shapes" in line.split("hint:")[1]


# --- build: bad input is bad input, whatever the runtime ---------------------------------

@pytest.mark.parametrize("kind", ["text", "empty", "directory", "npz"])
def test_build_rejects_a_non_onnx_model_before_the_runtime(cli, tmp_path, kind):
    model = tmp_path / "model.onnx"
    if kind == "text":
        model.write_text("hello\n")
    elif kind == "empty":
        model.write_bytes(b"")
    elif kind == "directory":
        model.mkdir()
    else:
        np.savez(tmp_path / "model.npz", x=np.ones(3))
        model = tmp_path / "model.npz"
    out = tmp_path / "plans"
    for runtime in ("tensorrt", "tensorrt_rtx"):
        res = cli("build", str(model), "--runtime", runtime, "-o", str(out))
        line = assert_one_line_error(res, 2, model.name)
        assert "not importable" not in line and "profile" not in line, line
        assert "not found" not in line, line
    assert not out.exists()  # nothing left behind, not even an empty folder


def test_build_refuses_an_existing_plan_before_building_any(cli, tmp_path):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 4])
    model = _save(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                  tmp_path / "m.onnx")
    out = tmp_path / "plans"
    out.mkdir()
    (out / "m.fp16.plan").write_bytes(b"mine")
    res = cli("build", model, "--precision", "fp32,fp16", "--runtime", "tensorrt_rtx",
              "-o", str(out))
    assert_one_line_error(res, 2, "m.fp16.plan", "--overwrite")
    assert sorted(p.name for p in out.iterdir()) == ["m.fp16.plan"]
    assert (out / "m.fp16.plan").read_bytes() == b"mine"


# --- -o '' (an unset shell variable) is not the current folder ---------------------------

@pytest.mark.parametrize("command", ["report", "bench", "precision", "build"])
def test_empty_output_path_is_refused(cli, tmp_path, scalar_input_model, command):
    extra = ["--shapes", "v:3"] if command in ("report", "bench", "precision") else []
    res = cli(command, scalar_input_model, "-o", "", *extra, cwd=tmp_path)
    assert_one_line_error(res, 2, "-o")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scalar.onnx"]


# --- every command documents its exit codes ---------------------------------------------

@pytest.mark.parametrize("command", ["inspect", "bench", "report", "preflight", "build",
                                     "precision"])
def test_every_help_documents_exit_codes(cli, command):
    res = cli(command, "--help")
    assert res.returncode == 0
    text = " ".join(res.stdout.split())
    assert "Exit codes: 0" in text and "2 bad input" in text, res.stdout


# --- precision: the hint for an unknown --keep-fp32-nodes name is actionable -------------

def test_keep_fp32_nodes_hint_suggests_real_node_names(cli, tmp_path):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 4])
    nodes = [h.make_node("Relu", ["x"], ["t"], name="relu_first"),
             h.make_node("Sigmoid", ["t"], ["y"], name="sigmoid_last")]
    model = _save(h.make_graph(nodes, "g", [x], [y]), tmp_path / "m.onnx")
    res = cli("precision", model, "--keep-fp32-nodes", "relu_frist")
    line = assert_one_line_error(res, 2, "relu_frist")
    assert "relu_first" in line.split("hint:")[1], line


# --- option values: non-finite, negative, contradictory ----------------------------------

@pytest.mark.parametrize("args,needle", [
    (["--warmup", "inf"], "--warmup"),
    (["--warmup", "nan"], "--warmup"),
    (["--min-duration", "inf"], "--min-duration"),
    (["--max-duration", "nan"], "--max-duration"),
    (["--max-duration", "inf"], "--max-duration"),
    (["--seed", "-5"], "--seed"),
    (["--min-duration", "5", "--max-duration", "1"], "--max-duration"),
])
def test_bad_stop_rule_values_are_bad_input(cli, scalar_input_model, args, needle):
    res = cli("bench", scalar_input_model, "--shapes", "v:3", *args)
    assert_one_line_error(res, 2, needle)


def test_precision_negative_seed_is_bad_input(cli, scalar_input_model):
    res = cli("precision", scalar_input_model, "--shapes", "v:3", "--seed", "-1")
    assert_one_line_error(res, 2, "--seed")


def test_min_duration_beyond_default_max_raises_the_max():
    from trtcheck.measure.runner import rule_from_options

    rule = rule_from_options(None, 45.0, None, None)
    assert rule.min_duration_s == 45.0 and rule.max_duration_s >= 45.0


# --- --overwrite never replaces something that is not a regular file ---------------------

@pytest.mark.parametrize("command", ["bench", "precision"])
def test_overwrite_refuses_a_device_or_fifo_output(cli, tmp_path, scalar_input_model, command):
    import os
    import stat

    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    res = cli(command, scalar_input_model, "--shapes", "v:3", "-o", str(fifo), "--overwrite",
              *(FAST if command == "bench" else []))
    assert_one_line_error(res, 2, "not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the user's FIFO


def test_save_results_refuses_to_replace_a_fifo(tmp_path):
    import os
    import stat

    from trtcheck.errors import InputError
    from trtcheck.measure.runner import new_results
    from trtcheck.results import save_results

    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        save_results(new_results([]), fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_npz_batch_mismatch_hint_points_at_batch(cli, multi_input_model, tmp_path):
    # report sweeps 1,2,4,8 by default; data of batch 2 cannot fill batch 1
    npz = tmp_path / "two.npz"
    np.savez(npz, ids=np.ones((2, 8), np.int64), mask=np.ones((2, 8), bool),
             x16=np.ones((2, 8), np.float16))
    res = cli("report", multi_input_model, "--inputs", str(npz), "-o", str(tmp_path / "r"),
              *FAST)
    line = assert_one_line_error(res, 2, "'ids'", "[2, 8]")
    assert "--batch 2" in line.split("hint:")[1], line
    assert not (tmp_path / "r").exists()


def test_report_from_refuses_measurement_options_it_would_ignore(cli, tmp_path,
                                                                  scalar_input_model):
    first = tmp_path / "first"
    res = cli("report", scalar_input_model, "--shapes", "v:3", "-o", str(first), *FAST)
    assert res.returncode == 0, res.stderr
    for extra, needle in ((["--batch", "1,2"], "--batch"), (["--no-bench"], "--no-bench"),
                          (["--precision", "fp16"], "--precision"),
                          (["--shapes", "v:5", "--seed", "3"], "--shapes")):
        out = tmp_path / "again"
        res = cli("report", "--from", str(first / "results.json"), "-o", str(out), *extra)
        line = assert_one_line_error(res, 2, needle, "--from")
        assert not out.exists(), line
    res = cli("report", "--from", str(first / "results.json"), "-o", str(tmp_path / "ok"))
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("command", ["bench", "precision"])
def test_data_of_the_wrong_shape_is_named_as_data_not_as_shapes(cli, tmp_path, command):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 4])
    model = _save(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                  tmp_path / "m.onnx")
    folder = tmp_path / "samples"
    folder.mkdir()
    np.savez(folder / "bad.npz", x=np.ones((1, 5), np.float32))
    flag = ["--inputs", str(folder / "bad.npz")] if command == "bench" else \
        ["--inputs-dir", str(folder)]
    res = cli(command, model, *flag, *(FAST if command == "bench" else []))
    line = assert_one_line_error(res, 2, "'x'", "[1, 5]")
    assert "--shapes gives" not in line, line


def test_build_fp16_of_a_model_with_fp16_tensors_is_bad_input(cli, multi_input_model,
                                                               tmp_path):
    out = tmp_path / "plans"
    res = cli("build", multi_input_model, "--precision", "fp16", "--runtime", "tensorrt_rtx",
              "-o", str(out), "--shapes", "ids:1x8,mask:1x8,x16:1x8")
    line = assert_one_line_error(res, 2, "FP16", "multi.onnx")
    assert "internal error" not in line
    assert not out.exists() or not any(out.iterdir())


def test_internal_errors_are_one_line_even_with_newlines_in_the_message():
    import click

    from trtcheck.cli import internal_error_line

    line = internal_error_line(ValueError("first line\n second line"))
    assert "\n" not in line and line.startswith("error: internal error: ValueError: first line")
    assert "TRTCHECK_DEBUG=1" in line
    assert click  # the boundary uses click.echo for it


@pytest.mark.parametrize("spec", ["ids=99999999999999999999999", "ids=1e400", "ids=2.7",
                                  "mask=5", "x16=1e9"])
def test_input_value_that_does_not_fit_the_dtype_is_bad_input(cli, multi_input_model, spec):
    res = cli("bench", multi_input_model, "--input-value", spec, "--batch", "1", *FAST)
    line = assert_one_line_error(res, 2, spec.split("=")[0])
    assert "internal error" not in line and "Warning" not in res.stderr, res.stderr


def test_input_value_that_fits_is_used(cli, multi_input_model, tmp_path):
    res = cli("bench", multi_input_model, "--input-value", "ids=3", "--input-value",
              "mask=true", "--input-value", "x16=0.5", "--batch", "1", *FAST)
    assert res.returncode == 0, res.stderr


@pytest.fixture
def mixed_batch_model(tmp_path) -> str:
    """x [N, 4] (batched) times k [1] (a fixed-size parameter input)."""
    x = h.make_tensor_value_info("x", T.FLOAT, ["N", 4])
    k = h.make_tensor_value_info("k", T.FLOAT, [1])
    y = h.make_tensor_value_info("y", T.FLOAT, ["N", 4])
    return _save(h.make_graph([h.make_node("Mul", ["x", "k"], ["y"])], "g", [x, k], [y]),
                 tmp_path / "mixed.onnx")


def test_batch_leaves_inputs_with_a_fixed_axis0_alone(cli, mixed_batch_model):
    res = cli("bench", mixed_batch_model, "--batch", "1,2", "--format", "json", *FAST)
    assert res.returncode == 0, res.stderr
    shapes = [b["input_shapes"] for b in json.loads(res.stdout)["bench"][0]["batches"]]
    assert shapes == [{"x": [1, 4], "k": [1]}, {"x": [2, 4], "k": [1]}]


def test_report_sweeps_batches_when_some_input_is_batched(cli, mixed_batch_model, tmp_path):
    out = tmp_path / "r"
    res = cli("report", mixed_batch_model, "-o", str(out), *FAST)
    assert res.returncode == 0, res.stderr
    data = json.loads((out / "results.json").read_text())
    assert [b["batch_size"] for b in data["bench"][0]["batches"]] == [1, 2, 4, 8]


def test_fixed_batch_model_still_refuses_other_batches(cli, tmp_path):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 4])
    model = _save(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                  tmp_path / "m.onnx")
    res = cli("bench", model, "--batch", "1,2", *FAST)
    assert_one_line_error(res, 2, "fixed batch dimension of 1", "--batch 1")


def test_build_profile_min_above_max_is_refused_up_front(cli, ppocr, tmp_path):
    out = tmp_path / "plans"
    res = cli("build", str(ppocr["det"]), "--precision", "fp16", "--runtime", "tensorrt_rtx",
              "-o", str(out), "--min-shapes", "x:1x3x960x960", "--max-shapes", "x:1x3x320x320")
    assert_one_line_error(res, 2, "min <= opt <= max", "'x'")
    assert not out.exists()


def test_failed_fp16_build_leaves_no_converted_model_to_block_a_rerun(trt_rtx, ppocr, tmp_path):
    from trtcheck.errors import InputError
    from trtcheck.measure.build import build_engine

    out = tmp_path / "det.fp16.plan"
    bad_profile = {"x": ([1, 3, 960, 960], [1, 3, 640, 640], [1, 3, 320, 320])}
    with pytest.raises(InputError, match="failed to build"):
        build_engine(ppocr["det"], out, runtime="tensorrt_rtx", precision="fp16",
                     shapes=bad_profile)
    assert list(tmp_path.iterdir()) == []
