"""Plan pre-flight on real TensorRT-RTX plans and on every kind of bad file."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from trtcheck.errors import EnvironmentProblem, InputError
from trtcheck.load.plan_header import (
    Runtime,
    explain_load_log,
    installed_runtimes,
    load_failure_error,
    plan_info_from_bytes,
    read_plan_info,
    strip_prefix,
)

pytestmark = pytest.mark.rtx

TRT_10_8 = {"tensorrt": Runtime("tensorrt", "10.8.0.43", "tensorrt-cu12")}


def fake_trt_plan(version=(10, 8, 0, 43), body: bytes = b"\x00\n" * 200) -> bytes:
    """Bytes laid out like a TensorRT 8.6+ plan header (magic, length at 16, version at 24)."""
    total = 32 + len(body)
    head = b"ftrt" + b"\0" * 12 + struct.pack("<Q", total) + bytes(version) + b"ftrt"
    return head + body


def test_real_rtx_plan_header(rtx_conv_plan: Path, trt_rtx):
    data = rtx_conv_plan.read_bytes()
    assert data[:4] == b"vtrt"
    info = read_plan_info(rtx_conv_plan)
    assert info.kind == "tensorrt_rtx"
    assert info.magic == "vtrt"
    # bytes 24..27 carry the building version; 16..23 the plan length
    assert info.built_with_version == trt_rtx.__version__
    assert info.header_size_bytes == len(data) == info.file_size_bytes
    assert info.runtime_name == "tensorrt_rtx"
    assert info.can_load is True
    assert info.verdict.startswith("can load")
    assert installed_runtimes()["tensorrt_rtx"].version == trt_rtx.__version__


def test_rtx_plan_asked_for_tensorrt_runtime(rtx_conv_plan: Path):
    info = read_plan_info(rtx_conv_plan, prefer_runtime="tensorrt")
    assert info.can_load is False
    assert "not interchangeable" in info.verdict
    assert info.problems[0].code == "plan-wrong-runtime"


def test_rtx_plan_without_rtx_runtime(rtx_conv_plan: Path):
    info = read_plan_info(rtx_conv_plan, runtimes=TRT_10_8)
    assert info.can_load is None
    assert info.problems[0].code == "plan-no-runtime"
    assert "pip install tensorrt-rtx-cu13" in (info.problems[0].remedy or "")


def test_rtx_plan_other_version(rtx_conv_plan: Path):
    rts = {"tensorrt_rtx": Runtime("tensorrt_rtx", "1.2.0.54", "tensorrt-rtx-cu13")}
    info = read_plan_info(rtx_conv_plan, runtimes=rts)
    assert info.can_load is False
    assert "1.2.0.54" in info.verdict and info.built_with_version in info.verdict
    assert info.problems[0].code == "plan-version-mismatch"


def test_trt_plan_same_and_other_version():
    data = fake_trt_plan()
    ok = plan_info_from_bytes(data, runtimes=TRT_10_8)
    assert (ok.kind, ok.built_with_version, ok.can_load) == ("tensorrt", "10.8.0.43", True)
    other = plan_info_from_bytes(data, runtimes={
        "tensorrt": Runtime("tensorrt", "10.9.0.34", "tensorrt-cu12")})
    assert other.can_load is False
    assert "built by TensorRT 10.8.0.43" in other.verdict
    assert "tensorrt-cu12==10.8.0.43" in other.problems[0].remedy
    lean = plan_info_from_bytes(data, runtimes={
        "tensorrt": Runtime("tensorrt", "10.9.0.34", "tensorrt-lean-cu12", lean=True)})
    assert lean.can_load is None and lean.problems[0].code == "plan-version-compatible-needed"
    none = plan_info_from_bytes(data, runtimes={})
    assert none.can_load is None and "trt-cu12" in none.problems[0].remedy


def test_onnx_file_given_as_plan(tmp_path: Path):
    import onnx
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    p = tmp_path / "model.plan"
    onnx.save(helper.make_model(g, producer_name="test"), str(p))
    info = read_plan_info(p)
    assert info.kind == "onnx" and info.can_load is False
    assert info.problems[0].code == "plan-is-onnx"
    assert "ONNX model" in info.verdict


@pytest.mark.parametrize("content,code", [
    (b"hello, this is a README\nnot a plan\n", "plan-is-text"),
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n",
     "plan-lfs-pointer"),
    (b"", "plan-empty"),
    (bytes(range(256)) * 4, "plan-unknown-format"),
])
def test_non_plans(tmp_path: Path, content: bytes, code: str):
    p = tmp_path / "x.engine"
    p.write_bytes(content)
    info = read_plan_info(p)
    assert info.can_load is False
    assert info.problems[0].code == code
    assert info.verdict.startswith("cannot load because")


def test_legacy_plan_serialization_version():
    data = b"\x01\x02\x03\x04" + b"\0" * 4 + struct.pack("<I", 213) + bytes(range(200, 256)) * 3
    info = plan_info_from_bytes(data, runtimes=TRT_10_8)
    assert info.problems[0].code == "plan-legacy" and info.built_with_version == "8.4"


def test_json_prefix_ultralytics_style(tmp_path: Path, rtx_conv_plan: Path):
    plan = rtx_conv_plan.read_bytes()
    meta = json.dumps({"author": "exporter", "imgsz": [640, 640]}).encode()
    p = tmp_path / "yolo.engine"
    p.write_bytes(struct.pack("<i", len(meta)) + meta + plan)
    info = read_plan_info(p)
    assert info.plan_offset_bytes == 4 + len(meta)
    assert info.kind == "tensorrt_rtx"
    assert info.can_load is False
    assert info.problems[0].code == "plan-prefix"
    assert "Ultralytics" in info.problems[0].message
    out = tmp_path / "clean.plan"
    assert strip_prefix(p, out) == 4 + len(meta)
    assert out.read_bytes() == plan
    assert read_plan_info(out).can_load is True
    with pytest.raises(InputError, match="not overwriting"):
        strip_prefix(p, out)


def test_plain_json_prefix(rtx_conv_plan: Path):
    data = b'{"note": "junk"}\n' + rtx_conv_plan.read_bytes()
    info = plan_info_from_bytes(data)
    assert info.problems[0].code == "plan-prefix" and "JSON text" in info.problems[0].message


def test_truncated_rtx_plan(rtx_conv_plan: Path):
    data = rtx_conv_plan.read_bytes()
    half = plan_info_from_bytes(data[: len(data) // 2])
    assert half.can_load is False and half.problems[0].code == "plan-truncated"
    assert f"of {len(data)} bytes" in half.verdict
    tiny = plan_info_from_bytes(data[:10])
    assert tiny.problems[0].code == "plan-truncated"


def test_truncated_trt_plan_is_an_error():
    data = fake_trt_plan()
    info = plan_info_from_bytes(data[:-50], runtimes=TRT_10_8)
    assert info.can_load is False
    assert [p.code for p in info.problems] == ["plan-truncated"]
    assert info.problems[0].severity == "error"


def test_trt_header_claiming_far_more_than_the_file_is_truncated(tmp_path: Path, capsys,
                                                                  monkeypatch):
    from trtcheck.cli import main
    from trtcheck.load import plan_header as PH

    data = bytearray(fake_trt_plan(body=bytes(range(256)) * 16))[:4096]
    data[16:24] = struct.pack("<Q", 400_000)
    p = tmp_path / "cut.plan"
    p.write_bytes(bytes(data))
    info = plan_info_from_bytes(bytes(data), runtimes=TRT_10_8)
    assert info.can_load is False and info.problems[0].code == "plan-truncated"
    assert "4096 of 400000 bytes" in info.verdict
    monkeypatch.setattr(PH, "installed_runtimes", lambda: TRT_10_8)
    with pytest.raises(SystemExit) as e:
        main(["preflight", str(p)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "truncated" in err and err.count("\n") == 1


@pytest.mark.parametrize("version", [(10, 8, 0, 43), (0, 0, 0, 0)])
def test_zero_length_zero_filled_plan_is_truncated(version):
    """A TensorRT 10.x header whose length field is 0, followed by a 4 KB body of zeros
    (a file allocated but never written): truncated, not loadable."""
    data = b"ftrt" + b"\0" * 12 + struct.pack("<Q", 0) + bytes(version) + b"\0" * 4068
    data = data[:-10] + b"\x01" * 10  # almost all zeros
    assert len(data) == 4096
    info = plan_info_from_bytes(data, runtimes=TRT_10_8)
    assert info.can_load is False
    assert info.problems[0].code == "plan-truncated"
    assert "truncated" in info.verdict


def test_zero_length_field_with_real_body_is_not_refused():
    """The length field layout is unverified for full TensorRT: a 0 there alone (with a
    body that is not zero-filled) refuses nothing."""
    data = bytearray(fake_trt_plan(body=bytes(range(1, 256)) * 8))
    data[16:24] = b"\0" * 8
    info = plan_info_from_bytes(bytes(data), runtimes=TRT_10_8)
    assert info.can_load is True, info.verdict


def test_json_prefix_keys_are_shown(rtx_conv_plan: Path):
    meta = json.dumps({"author": "exporter", "imgsz": [640, 640],
                       "bad\u0007key": 1}).encode()
    data = struct.pack("<i", len(meta)) + meta + rtx_conv_plan.read_bytes()
    info = plan_info_from_bytes(data)
    assert info.prefix_metadata_keys == ["author", "imgsz", "bad\\x07key"]
    assert "its keys: author, imgsz" in info.problems[0].message


def test_triton_magic_mismatch_with_metadata_length_is_a_prefix():
    """Triton/TensorRT print the first four bytes as a little-endian u32 against the plan
    magic 0x74727466 ('ftrt' = 1953657958): a small number there is the length of a
    metadata block written in front of the plan."""
    assert struct.unpack("<I", b"ftrt")[0] == 1953657958
    line = ("IRuntime::deserializeCudaEngine: Error Code 1: Serialization (Serialization "
            "assertion plan->header.magicTag == rt::kPLAN_MAGIC_TAG failed.Trying to load "
            "an engine created with incompatible serialization version. Check that the "
            "engine was not created using safety runtime, same OS was used and version "
            "compatibility parameters were set accordingly. (1825 != 1953657958))")
    [d] = explain_load_log([line])
    assert d.code == "plan-prefix" and "1825-byte metadata block" in d.message
    assert "1829 bytes" in d.hint
    err = load_failure_error([line], "model.plan")
    assert isinstance(err, InputError) and err.exit_code == 2


def test_library_version_zero_means_a_corrupt_plan():
    line = ("The engine plan file is not compatible with this version of TensorRT, "
            "expecting library version 10.8.0.43 got 0.0.0, please rebuild.")
    [d] = explain_load_log([line])
    assert d.code == "corrupt-plan" and "corrupt or truncated" in d.message
    assert "0.0.0 is installed" not in d.hint
    assert load_failure_error([line], "m.plan").exit_code == 2


def test_preflight_without_runtime_exits_3(tmp_path: Path, capsys, monkeypatch):
    from trtcheck.cli import main
    from trtcheck.load import plan_header as PH

    p = tmp_path / "model.plan"
    p.write_bytes(fake_trt_plan())
    monkeypatch.setattr(PH, "installed_runtimes", lambda: {})
    with pytest.raises(SystemExit) as e:
        main(["preflight", str(p)])
    out, err = capsys.readouterr()
    assert e.value.code == 3, err
    assert "10.8.0.43" in out and "no TensorRT runtime is installed" in err


def test_preflight_log_as_json(tmp_path: Path, capsys, monkeypatch):
    from trtcheck.cli import main
    from trtcheck.load import plan_header as PH

    log = tmp_path / "load.log"
    log.write_text("expecting compute 8.6 got compute 7.5, please rebuild.\n")
    with pytest.raises(SystemExit) as e:
        main(["preflight", "--log", str(log), "--format", "json"])
    out = capsys.readouterr().out
    assert e.value.code == 3
    doc = json.loads(out)
    assert [d["code"] for d in doc["diagnoses"]] == ["gpu-mismatch"]
    p = tmp_path / "model.plan"
    p.write_bytes(fake_trt_plan())
    monkeypatch.setattr(PH, "installed_runtimes", lambda: TRT_10_8)
    log.write_text("nothing known\n")
    with pytest.raises(SystemExit) as e:
        main(["preflight", str(p), "--log", str(log), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert e.value.code in (0, None)
    assert doc["diagnoses"] == [] and doc["plan"]["can_load"] is True


def test_plan_written_in_text_mode(rtx_conv_plan: Path):
    data = rtx_conv_plan.read_bytes()
    assert b"\n" in data
    damaged = data.replace(b"\n", b"\r\n")  # what a Windows text-mode write does
    info = plan_info_from_bytes(damaged)
    assert info.can_load is False and info.problems[0].code == "plan-text-mode"
    assert "'wb'" in info.problems[0].remedy


def test_plan_decoded_as_text(rtx_conv_plan: Path):
    data = rtx_conv_plan.read_bytes()
    damaged = data.decode("utf-8", errors="replace").encode("utf-8")
    info = plan_info_from_bytes(damaged)
    assert info.can_load is False and info.problems[0].code == "plan-text-decoded"


def test_missing_and_directory(tmp_path: Path):
    with pytest.raises(InputError, match="not found"):
        read_plan_info(tmp_path / "nope.plan")
    with pytest.raises(InputError, match="directory"):
        read_plan_info(tmp_path)


@pytest.mark.parametrize("line,code,needle", [
    ("6: The engine plan file is not compatible with this version of TensorRT, expecting "
     "library version 8.0.0 got 8.0.1, please rebuild.", "version-mismatch",
     "built by TensorRT 8.0.1; this runtime is 8.0.0"),
    ("1: [stdArchiveReader.cpp::StdArchiveReader::40] Error Code 1: Serialization "
     "(Serialization assertion stdVersionRead == serializationVersion failed.Version tag "
     "does not match. Note: Current Version: 213, Serialized Engine Version: 205)",
     "version-mismatch", "serialization version is 205"),
    ("6: The engine plan file is generated on an incompatible device, expecting compute "
     "8.6 got compute 7.5, please rebuild.", "gpu-mismatch",
     "built for compute capability 7.5; this GPU is 8.6"),
    ("Using an engine plan file across different models of devices is not recommended and "
     "is likely to affect performance or even cause errors.", "cross-device", "another GPU"),
    ("IRuntime::deserializeCudaEngine: Error Code 1: Serialization (Serialization assertion "
     "header.magicTag == rt::PlanMagicTag::kPLAN_MAGIC_TAG failed.Trying to load an engine "
     "created with incompatible serialization version (1953657968 != 1953657958).",
     "not-a-plan", "ptrt vs ftrt"),
    ("IRuntime::deserializeCudaEngine: Error Code 1: Cuda Runtime (In ScopedCudaStream "
     "(cudaError 35: CUDA driver version is insufficient for CUDA runtime version))",
     "no-driver", "no usable CUDA driver"),
    ("engine cannot run on this GPU, which has compute capability 9.0", "rtx-unsupported-gpu",
     "compute capability 9.0"),
])
def test_explain_load_log(line: str, code: str, needle: str):
    diags = explain_load_log([line])
    assert [d.code for d in diags] == [code]
    assert needle in diags[0].message
    assert diags[0].hint


def test_load_failure_error_prefers_fatal_and_falls_back():
    err = load_failure_error([
        "Using an engine plan file across different models of devices is not recommended",
        "expecting compute 8.9 got compute 8.6, please rebuild."], "m.plan")
    assert isinstance(err, EnvironmentProblem) and err.exit_code == 3
    assert "compute capability 8.6" in err.message
    generic = load_failure_error(["[E] something odd happened"], "m.plan")
    assert "something odd happened" in generic.message and generic.hint


def test_real_deserialize_failure_is_translated(rtx_conv_plan: Path, trt_rtx):
    """On this CPU-only machine TensorRT-RTX really fails to deserialize: the captured
    log must become one clear line (exit 3), not a crash."""
    lines: list[str] = []

    class Logger(trt_rtx.ILogger):
        def __init__(self):
            trt_rtx.ILogger.__init__(self)

        def log(self, severity, msg):
            lines.append(msg)

    runtime = trt_rtx.Runtime(Logger())
    engine = runtime.deserialize_cuda_engine(rtx_conv_plan.read_bytes())
    if engine is not None:  # a machine with a supported GPU: nothing to translate
        pytest.fail("this test expects a machine without a usable GPU for TensorRT-RTX")
    err = load_failure_error(lines, str(rtx_conv_plan))
    assert err.exit_code == 3
    assert "driver" in err.message or "GPU" in err.message


def test_zero_version_header_is_damaged():
    info = plan_info_from_bytes(b"ftrt" + b"\x00" * 60, runtimes=TRT_10_8)
    assert info.can_load is False and info.problems[0].code == "plan-bad-header"


def test_fifo_and_device_are_refused_before_reading(tmp_path: Path, capsys):
    import os

    from trtcheck.cli import main

    fifo = tmp_path / "model.plan"
    os.mkfifo(fifo)
    for args, needle in ((["preflight", str(fifo)], "FIFO"),
                         (["preflight", "/dev/zero"], "device"),
                         (["preflight", "--log", "/dev/zero"], "device"),
                         (["inspect", str(fifo)], "FIFO")):
        with pytest.raises(SystemExit) as e:
            main(args)
        err = capsys.readouterr().err
        assert e.value.code == 2 and needle in err, (args, err)


def _fake_rtx_plan() -> bytes:
    import numpy as np

    body = np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8).tobytes()
    total = 32 + len(body)
    return b"vtrt" + b"\0" * 12 + struct.pack("<Q", total) + bytes((1, 2, 0, 5)) + b"vtrt" + body


@pytest.mark.parametrize("runtimes", [{}, TRT_10_8, {
    "tensorrt_rtx": Runtime("tensorrt_rtx", "1.2.0.5", "tensorrt-rtx")}])
def test_plan_re_encoded_latin1_to_utf8_is_damaged_with_or_without_a_runtime(
        tmp_path: Path, capsys, monkeypatch, runtimes):
    import trtcheck.load.plan_header as PH
    from trtcheck.cli import main

    data = _fake_rtx_plan()
    damaged = data.decode("latin-1").encode("utf-8")  # each byte >= 0x80 doubled
    assert len(damaged) > len(data)
    info = plan_info_from_bytes(damaged, runtimes=runtimes)
    assert info.can_load is False and info.problems[0].code == "plan-text-reencoded"
    assert "damaged: re-encoded as text" in info.verdict
    assert plan_info_from_bytes(data, runtimes=runtimes).problems[:1] != info.problems[:1]
    p = tmp_path / "reencoded.plan"
    p.write_bytes(damaged)
    monkeypatch.setattr(PH, "installed_runtimes", lambda: runtimes)
    for command in ("preflight", "inspect"):
        with pytest.raises(SystemExit) as e:
            main([command, str(p)])
        out = capsys.readouterr()
        assert e.value.code == 2, (command, out)
        assert "damaged: re-encoded as text" in out.out + out.err


@pytest.mark.parametrize("built,here,offers", [
    ("7.5", "8.6", False),  # a Turing plan: ampere+ cannot cover it, rebuild
    ("8.6", "7.5", False),  # run on Turing: ampere+ does not reach it
    ("8.0", "9.0", True),   # built and run on Ampere or later: ampere+ covers it
])
def test_gpu_mismatch_offers_hardware_compatibility_only_where_it_covers_both(built, here,
                                                                              offers):
    (d,) = explain_load_log([f"The engine plan file is generated on an incompatible device, "
                             f"expecting compute {here} got compute {built}, please rebuild."])
    assert d.code == "gpu-mismatch" and f"built for compute capability {built}" in d.message
    if offers:
        assert "--hardwareCompatibilityLevel=ampere+" in d.hint
        assert "built and run on Ampere or later" in d.hint
    else:
        assert d.hint.startswith(f"rebuild the engine on a GPU of compute capability {here}")
        assert "covers only engines built and run on Ampere (8.0) or later" in d.hint
