import numpy as np
import pytest

from trtcheck.errors import InputError
from trtcheck.load.inputs import load_npz, make_feed, parse_input_values
from trtcheck.load.shapes import parse_shapes, resolve_shapes
from trtcheck.results import TensorInfo
import json
from onnx import TensorProto as T
from onnx import helper as h
from onnx_builders import save_graph as _save
from tests.conftest import assert_one_line_error

X = TensorInfo(name="x", dtype="float32", shape=["batch", 3, "h", "w"])
IDS = TensorInfo(name="ids", dtype="int64", shape=[None, 8])


def test_parse_shapes_forms():
    assert parse_shapes(["x:1x3x224x224", "a:b:2x3"]) == {"x": [1, 3, 224, 224], "a:b": [2, 3]}
    assert parse_shapes("x:1x3,y:4") == {"x": [1, 3], "y": [4]}
    for bad in ["x", "x:", ":1x2", "x:1xa", "x:0x3", "x:1,x:2"]:
        with pytest.raises(InputError):
            parse_shapes(bad)


def test_resolve_sets_batch_and_names_missing_dims():
    assert resolve_shapes([X], {"x": [1, 3, 32, 48]}, 4) == {"x": [4, 3, 32, 48]}
    with pytest.raises(InputError) as e:
        resolve_shapes([X], None, 2)
    assert "x axis 2 (h)" in e.value.message and "x axis 3 (w)" in e.value.message
    assert "--shapes x:" in e.value.hint


def test_resolve_rejects_mismatch():
    with pytest.raises(InputError, match="unknown input"):
        resolve_shapes([X], {"y": [1, 2]}, None)
    with pytest.raises(InputError, match="2 dims but the model input has 4"):
        resolve_shapes([X], {"x": [1, 3]}, None)
    with pytest.raises(InputError, match="fixes it to 3"):
        resolve_shapes([X], {"x": [1, 4, 5, 5]}, None)
    fixed = TensorInfo(name="x", dtype="float32", shape=[1, 3])
    with pytest.raises(InputError, match="fixed batch"):
        resolve_shapes([fixed], None, 8)
    assert resolve_shapes([fixed], None, 1) == {"x": [1, 3]}


def test_feed_dtypes_and_determinism():
    shapes = {"x": [2, 3, 4, 5], "ids": [2, 8]}
    a = make_feed([X, IDS], shapes, seed=3)
    b = make_feed([X, IDS], shapes, seed=3)
    assert a["x"].dtype == np.float32 and a["x"].shape == (2, 3, 4, 5)
    assert a["ids"].dtype == np.int64 and set(np.unique(a["ids"])) <= {0, 1}
    assert np.array_equal(a["x"], b["x"]) and 0 <= a["x"].min() and a["x"].max() < 1


def test_feed_user_data(tmp_path):
    one = np.ones((1, 3, 4, 5), np.float32)
    np.savez(tmp_path / "in.npz", x=one)
    arrays = load_npz(tmp_path / "in.npz")
    feed = make_feed([X, IDS], {"x": [3, 3, 4, 5], "ids": [3, 8]}, arrays=arrays,
                     values=parse_input_values(["ids=7"]))
    assert feed["x"].shape == (3, 3, 4, 5) and feed["x"].sum() == 180
    assert (feed["ids"] == 7).all()
    with pytest.raises(InputError, match="shape"):
        make_feed([X], {"x": [2, 3, 9, 9]}, arrays=arrays)
    with pytest.raises(InputError, match="unknown input"):
        make_feed([X], {"x": [1, 3, 4, 5]}, values={"nope": 1})
    with pytest.raises(InputError):
        load_npz(tmp_path / "missing.npz")
    (tmp_path / "bad.npz").write_text("hello")
    with pytest.raises(InputError):
        load_npz(tmp_path / "bad.npz")
    with pytest.raises(InputError):
        parse_input_values(["ids=abc"])


FAST = ["--warmup", "0", "--min-duration", "0", "--min-samples", "3"]


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
    line = assert_one_line_error(res, 2, "out of memory at batch 1", "x:1x3x99999x99999")
    assert "--shapes" in line.split("hint:")[1]


def test_npz_batch_mismatch_skips_the_batch_sizes_the_data_cannot_fill(cli, multi_input_model,
                                                                       tmp_path):
    # report sweeps 1,2,4,8 by default; data of batch 2 fills batch 2 only: the other
    # batch sizes become failed rows (named on stderr) and the sweep goes on
    npz = tmp_path / "two.npz"
    np.savez(npz, ids=np.ones((2, 8), np.int64), mask=np.ones((2, 8), bool),
             x16=np.ones((2, 8), np.float16))
    res = cli("report", multi_input_model, "--inputs", str(npz), "-o", str(tmp_path / "r"),
              *FAST)
    assert res.returncode == 0, res.stderr
    assert "batch 1 could not run" in res.stderr and "[2, 8]" in res.stderr, res.stderr
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert [b["batch_size"] for b in doc["bench"][0]["batches"]] == [2]
    assert [f["batch_size"] for f in doc["bench"][0]["failed_batches"]] == [1, 4, 8]


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


def test_runnable_batch_sizes_skips_sizes_a_fixed_input_refuses():
    from trtcheck.load.shapes import runnable_batch_sizes

    fixed = [TensorInfo(name="x", dtype="float32", shape=[1, 80]),
             TensorInfo(name="state", dtype="float32", shape=[1, 64])]
    ok, skipped = runnable_batch_sizes(fixed, None, [1, 4, 8])
    assert ok == [1] and sorted(skipped) == [4, 8]
    assert "fixed batch dimension of 1" in skipped[4]
    dynamic = [TensorInfo(name="x", dtype="float32", shape=["b", "t"])]
    ok, skipped = runnable_batch_sizes(dynamic, None, [1, 2])
    assert ok == [1, 2] and not skipped  # missing dims are the bench's one-line error


def _npz_with_header(path, descr: str, shape: tuple, payload: bytes = b"\0" * 64):
    import io
    import zipfile

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False,
                                               "shape": shape})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", buf.getvalue() + payload)
    return path


@pytest.mark.parametrize("make,needle", [
    (lambda p: np.savez(p, x=np.array(["a", "b"])), "holds text"),
    (lambda p: np.savez(p, x=np.array([b"a"])), "holds bytes"),
    (lambda p: np.savez(p, x=np.ones((1, 4), np.complex64)), "complex numbers"),
    (lambda p: np.savez(p), "holds no arrays"),
    (lambda p: _npz_with_header(p, "<f4", (10**13,)), "claims shape [10000000000000]"),
    (lambda p: _npz_with_header(p, "<f4", (4, 64)), "but holds 64 bytes"),
])
def test_bad_npz_files_are_refused_before_reading(tmp_path, make, needle):
    p = tmp_path / "in.npz"
    make(str(p))
    with pytest.raises(InputError) as e:
        load_npz(p)
    assert needle in e.value.message


def test_npz_from_a_device_or_fifo_is_refused(tmp_path):
    import os

    with pytest.raises(InputError, match="device"):
        load_npz("/dev/zero")
    os.mkfifo(tmp_path / "f.npz")
    with pytest.raises(InputError, match="FIFO"):
        load_npz(tmp_path / "f.npz")


@pytest.mark.parametrize("dtype,arr,needle", [
    ("float32", np.full((1, 4), 1e300), "beyond the float32 range"),
    ("float16", np.full((1, 4), 1e5, np.float32), "beyond the float16 range"),
    ("int32", np.full((1, 4), 2**40, np.int64), "outside the int32 range"),
    ("int64", np.full((1, 4), 1.5), "fractional values"),
])
def test_values_that_do_not_survive_the_cast_are_refused(dtype, arr, needle):
    from trtcheck.load.input_checks import check_data_fits

    t = TensorInfo(name="x", dtype=dtype, shape=["b", 4])
    with pytest.raises(InputError) as e:
        check_data_fits([t], {"x": arr}, "in.npz")
    assert needle in e.value.message
    check_data_fits([t], {"x": np.ones((1, 4))}, "in.npz")  # in range: accepted


@pytest.mark.parametrize("spec", ["x:1x" + "9" * 30, "x:1x2147483648", "x:0", "x:-3"])
def test_shape_dims_are_bounded(spec):
    with pytest.raises(InputError, match=r"every dim must be in 1\.\.2147483647"):
        parse_shapes(spec)


def test_a_state_whose_batch_axis_is_not_axis0_follows_the_batch_dim_name():
    from trtcheck.load.shapes import kept_size_inputs

    audio = TensorInfo(name="input", dtype="float32", shape=["batch", 512])
    state = TensorInfo(name="state", dtype="float32", shape=[2, "batch", 128])
    sr = TensorInfo(name="sr", dtype="int64", shape=[])
    out = resolve_shapes([audio, state, sr], None, 4)
    assert out == {"input": [4, 512], "state": [2, 4, 128], "sr": []}
    assert kept_size_inputs([audio, state, sr], out, 4) == []
    # an unnamed state axis cannot be followed: it keeps its size, and is named
    anon = TensorInfo(name="state", dtype="float32", shape=[2, None, 128])
    out = resolve_shapes([audio, anon], {"state": [2, 1, 128]}, 4)
    assert out["state"] == [2, 1, 128]
    assert kept_size_inputs([audio, anon], out, 4) == ["state 2x1x128"]
