"""User input data (--inputs, --inputs-dir).

* `precision --inputs nan.npz` reported PASS with max_abs 0 (NaN outputs everywhere
  compare as equal). NaN or infinite values in input files are now refused in precision,
  bench and report alike (exit 2, naming the file, the input and the counts), as
  `--input-value x=nan` already was.
* `bench --inputs` with an array of the wrong name or rank said "dynamic dims need
  sizes..."; bench, report and precision now share one check
  (trtcheck.load.input_checks.check_data_fits) and print the same line for one file."""

from __future__ import annotations

import numpy as np
import pytest

from trtcheck.cli import main

FAST = ["--warmup", "0", "--min-duration", "0", "--min-samples", "2"]


@pytest.fixture
def model(tiny_relu_model):
    return tiny_relu_model


def npz(path, **arrays):
    np.savez(path, **arrays)
    return path


def run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(a) for a in args])
    cap = capsys.readouterr()
    return e.value.code, cap.err


def one_line_error(args, capsys, *needles):
    code, err = run(args, capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert code == 2 and len(errors) == 1 and lines[-1] == errors[0], err
    lines = errors
    assert "; hint: " in lines[0] and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], (n, err)
    return lines[0]


def nan_data():
    a = np.ones((1, 3, 4, 4), np.float32)
    a[0, 0, 0, :3] = np.nan
    a[0, 1, 1, 1] = np.inf
    return a


def test_precision_refuses_nan_inputs(model, tmp_path, capsys):
    f = npz(tmp_path / "nan.npz", x=nan_data())
    one_line_error(["precision", model, "--inputs", f], capsys, "nan.npz", "'x'",
                   "3 NaN", "1 infinite", "finite")


def test_precision_refuses_nan_in_inputs_dir(model, tmp_path, capsys):
    d = tmp_path / "samples"
    d.mkdir()
    npz(d / "a.npz", x=np.ones((1, 3, 4, 4), np.float32))
    npz(d / "b.npz", x=nan_data())
    one_line_error(["precision", model, "--inputs-dir", d], capsys, "b.npz", "3 NaN")


def test_bench_and_report_refuse_nan_inputs(model, tmp_path, capsys):
    f = npz(tmp_path / "nan.npz", x=nan_data())
    bench = one_line_error(["bench", model, "--inputs", f, *FAST], capsys, "3 NaN")
    out = tmp_path / "rep"
    report = one_line_error(["report", model, "--inputs", f, *FAST, "-o", out], capsys)
    assert bench == report
    assert not out.exists()


def test_integer_and_finite_data_still_run(model, tmp_path, capsys):
    for arr in (np.ones((1, 3, 4, 4), np.int64), np.full((1, 3, 4, 4), 1e30, np.float32)):
        f = npz(tmp_path / "ok.npz", x=arr)
        code, err = run(["bench", model, "--inputs", f, *FAST], capsys)
        assert code == 0, err


@pytest.mark.parametrize("arrays,needles", [
    ({"y": np.ones((1, 3, 4, 4), np.float32)}, ["has no array for input(s) 'x'",
                                                 "(it holds 'y')"]),
    ({"x": np.ones((1, 3, 10), np.float32)}, ["gives 'x' shape [1, 3, 10]", "fits neither"]),
    ({"x": np.ones((1, 5, 4, 4), np.float32)}, ["gives 'x' shape [1, 5, 4, 4]"]),
    ({"x": np.ones((1, 3, 4, 4), np.float32), "z": np.ones(2)}, ["'z' for no model input"]),
])
@pytest.mark.parametrize("shapes", [[], ["--shapes", "x:1x3x4x4"]])
def test_bench_report_and_precision_say_the_same(model, tmp_path, capsys, arrays, needles,
                                                 shapes):
    f = npz(tmp_path / "data.npz", **arrays)
    bench = one_line_error(["bench", model, *shapes, "--inputs", f, *FAST], capsys,
                           "data.npz", *needles)
    assert "dynamic dims need sizes" not in bench
    prec = one_line_error(["precision", model, *shapes, "--inputs", f], capsys, *needles)
    report = one_line_error(["report", model, *shapes, "--inputs", f, *FAST, "--no-bench",
                             "--precision", "fp16", "-o", tmp_path / "rep"], capsys, *needles)
    assert bench == prec == report


def test_a_sample_without_batch_axis_still_runs(model, tmp_path, capsys):
    f = npz(tmp_path / "s.npz", x=np.ones((3, 4, 4), np.float32))
    code, err = run(["bench", model, "--shapes", "x:1x3x4x4", "--inputs", f, *FAST], capsys)
    assert code == 0, err
