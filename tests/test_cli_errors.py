"""The CLI boundary: Click usage errors, internal errors and bad option values are one
`error: ...; hint: ...` line with a documented exit code; every help states the exit
codes; output paths that cannot hold a results file are refused."""


import pytest
from onnx import TensorProto as T
from onnx import helper as h

from onnx_builders import save_graph as _save
from tests.conftest import assert_one_line_error

FAST = ["--warmup", "0", "--min-duration", "0", "--min-samples", "3"]


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


# --- --shapes hints ----------------------------------------------------------------------


# --- build: bad input is bad input, whatever the runtime ---------------------------------


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
    from trtcheck.measure.bench.runner import rule_from_options

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
    from trtcheck.measure.bench.runner import new_results
    from trtcheck.results import save_results

    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        save_results(new_results([]), fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


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


def test_internal_errors_are_one_line_even_with_newlines_in_the_message():
    import click

    from trtcheck.cli import internal_error_line

    line = internal_error_line(ValueError("first line\n second line"))
    assert "\n" not in line and line.startswith("error: internal error: ValueError: first line")
    assert "TRTCHECK_DEBUG=1" in line
    assert click  # the boundary uses click.echo for it
