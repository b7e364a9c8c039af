import numpy as np
import pytest

from trtcheck.errors import InputError
from trtcheck.load.inputs import load_npz, make_feed, parse_input_values
from trtcheck.load.shapes import parse_shapes, resolve_shapes
from trtcheck.results import TensorInfo

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
