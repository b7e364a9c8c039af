"""Triton model repository exports (``trtcheck export triton``, export/settings.py): every
config parses with Triton's own ``model_config_pb2`` (tritonclient) and protobuf
``text_format``, and a repository entry loads in a real tritonserver.

The tritonserver here (from the nvidia-pytriton wheel) ships the python backend only, so
the ONNX Runtime and TensorRT entries are checked by parsing; the python-backend entry a
live run exports is loaded for real.
"""

from __future__ import annotations

import json

import pytest

from conftest import assert_one_line_error, run_cli
from trtcheck.export.settings import (
    TritonModelSpec,
    export_settings,
    spec_from_triton_config,
    triton_config,
    triton_tensor,
)
from trtcheck.errors import InputError
from trtcheck.results.advice import SimPrediction


def _parse(text: str):
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2

    return text_format.Parse(text, model_config_pb2.ModelConfig())


def _dtype(t) -> str:
    from tritonclient.grpc import model_config_pb2

    return model_config_pb2.DataType.Name(t.data_type)


def _p(n=1, mbs=16, window_us=2500.0):
    return SimPrediction(window_us=window_us, max_batch_size=mbs, instances=n,
                         arrival_rate_per_s=100, stable=True, utilisation=0.5)


def _onnx(path, batch_dim="N"):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch_dim, 3, "h", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, [batch_dim, 3, "h", 8])
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)
    m = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, path)
    return path


@pytest.mark.parametrize("kind,n,gpus", [("gpu", 1, None), ("gpu", 3, None), ("gpu", 12, None),
                                         ("gpu", 12, (0, 1, 2, 3)), ("cpu", 3, None),
                                         (None, 2, None)])
def test_every_config_parses_with_tritons_own_protobuf(kind, n, gpus):
    spec = TritonModelSpec(backend="onnxruntime", inputs=(triton_tensor("x", "float32",
                                                                        ["N", 4], True),),
                           outputs=(triton_tensor("y", "int64", ["N", 2], True),),
                           device_kind=kind, gpus=gpus)
    cfg = _parse(export_settings(_p(n), "m", kind, spec=spec,
                                 preferred_batch_sizes=(4, 16)).triton_config_pbtxt)
    assert cfg.name == "m" and cfg.backend == "onnxruntime" and cfg.max_batch_size == 16
    assert [t.name for t in cfg.input] == ["x"] and list(cfg.input[0].dims) == [4]
    assert _dtype(cfg.output[0]) == "TYPE_INT64"
    assert list(cfg.dynamic_batching.preferred_batch_size) == [4, 16]
    assert cfg.dynamic_batching.max_queue_delay_microseconds == 2500
    (group,) = cfg.instance_group
    if kind == "cpu":
        assert group.kind == group.KIND_CPU and not group.gpus
    else:  # no GPU ids unless asked for
        assert group.kind == group.KIND_GPU and list(group.gpus) == list(gpus or [])[:n]


def test_no_batch_axis_means_max_batch_size_zero():
    spec = TritonModelSpec(backend="onnxruntime",
                           inputs=(triton_tensor("x", "float32", [1, 4], False),),
                           batch_axis=False, device_kind="cpu")
    cfg = _parse(triton_config(_p(1, mbs=8), "m", spec=spec))
    assert cfg.max_batch_size == 0 and list(cfg.input[0].dims) == [1, 4]
    assert not cfg.HasField("dynamic_batching")


def test_tensor_types_triton_cannot_serve_are_one_error():
    with pytest.raises(InputError, match="cannot serve"):
        triton_tensor("s", "sequence", [], True)
    with pytest.raises(InputError, match="no axes"):
        triton_tensor("s", "float32", [], True)


def test_a_live_config_keeps_backend_tensors_kind_and_parameters():
    live = {"name": "tb", "platform": "", "backend": "python", "max_batch_size": 32,
            "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": ["4"]}],
            "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [4]}],
            "instance_group": [{"kind": "KIND_CPU", "count": 2, "gpus": []}],
            "parameters": {"a_ms": {"string_value": "1.0"}}}
    spec = spec_from_triton_config(live)
    cfg = _parse(triton_config(_p(3, mbs=8), "tb", spec=spec))
    assert cfg.backend == "python" and cfg.max_batch_size == 8
    assert list(cfg.input[0].dims) == [4] and cfg.parameters["a_ms"].string_value == "1.0"
    assert cfg.instance_group[0].count == 3 and cfg.instance_group[0].kind == \
        cfg.instance_group[0].KIND_CPU  # instances of one server, as it ran them
    with pytest.raises(InputError, match="no platform or backend"):
        spec_from_triton_config({"name": "x"})


def test_ray_and_torchserve_follow_the_triton_split():
    e = export_settings(_p(12, mbs=8), "m", "gpu", torchserve_version="2.3")
    assert "max_ongoing_requests=16" in e.ray_serve_python  # >= max batch (Ray's default 5)
    assert '{"m": {"2.3": {"batchSize": 8' in e.torchserve_config
    assert '"minWorkers": 8, "maxWorkers": 8' in e.torchserve_config
    assert "server 1: 8, server 2: 4" in e.torchserve_config
    cpu = export_settings(_p(3, mbs=8), "m", "cpu")
    assert '"minWorkers": 1, "maxWorkers": 1' in cpu.torchserve_config  # one per host


def test_export_triton_onnx_writes_a_repository_entry(tmp_path):
    model = _onnx(str(tmp_path / "net.onnx"))
    repo = tmp_path / "repo"
    res = run_cli("export", "triton", model, "-o", str(repo), "--device-kind", "cpu",
                  "--max-batch", "8", "--window-ms", "2", "--preferred-batch", "4,8",
                  "--instances", "2")
    assert res.returncode == 0, res.stderr
    cfg = _parse((repo / "net" / "config.pbtxt").read_text())
    assert cfg.backend == "onnxruntime" and cfg.max_batch_size == 8
    assert list(cfg.input[0].dims) == [3, -1, 8]
    assert _dtype(cfg.output[0]) == "TYPE_FP16"
    assert cfg.instance_group[0].count == 2
    assert cfg.instance_group[0].kind == cfg.instance_group[0].KIND_CPU
    assert (repo / "net" / "1" / "model.onnx").read_bytes() == open(model, "rb").read()
    # nothing is overwritten unless asked; other files in the folder are kept
    (repo / "net" / "notes.txt").write_text("mine")
    res = run_cli("export", "triton", model, "-o", str(repo))
    assert_one_line_error(res, 2, "exists", "--overwrite")
    res = run_cli("export", "triton", model, "-o", str(repo), "--overwrite")
    assert res.returncode == 0, res.stderr
    assert (repo / "net" / "notes.txt").read_text() == "mine"
    assert _parse((repo / "net" / "config.pbtxt").read_text()).max_batch_size == 1


def test_export_triton_without_advice_claims_no_analysis(tmp_path):
    """With no advice and no settings, the comments say what was given and what the
    defaults are, not what an analysis would have concluded."""
    model = _onnx(str(tmp_path / "net.onnx"))
    res = run_cli("export", "triton", model, "-o", str(tmp_path / "repo"))
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "repo" / "net" / "config.pbtxt").read_text()
    assert "# no dynamic_batching block: no batching settings given (advise --export-dir " \
        "writes them)" in text
    assert "# KIND_GPU: the default; --device-kind cpu for a CPU host" in text
    assert "does not pay" not in text and "assumed" not in text
    assert _parse(text).instance_group[0].kind == _parse(text).instance_group[0].KIND_GPU
    res = run_cli("export", "triton", model, "-o", str(tmp_path / "repo2"), "--max-batch", "1")
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "repo2" / "net" / "config.pbtxt").read_text()
    assert "# no dynamic_batching block: max batch 1 as given" in text
    # from an advice the reasons stay
    assert "batching does not pay here" in triton_config(_p(mbs=1, window_us=0.0))


@pytest.mark.parametrize("args,needles", [
    (["--device-kind", "cpu", "--gpus", "0"], ["--gpus", "--device-kind"]),
    (["--gpus", "0,0"], ["distinct"]),
    (["--max-batch", "4", "--preferred-batch", "8"], ["preferred"]),
])
def test_export_triton_bad_options_are_one_line(tmp_path, args, needles):
    model = _onnx(str(tmp_path / "net.onnx"))
    res = run_cli("export", "triton", model, "-o", str(tmp_path / "repo"), *args)
    assert_one_line_error(res, 2, *needles)
    assert not (tmp_path / "repo").exists()


def test_export_triton_refuses_what_it_cannot_serve(tmp_path):
    static = _onnx(str(tmp_path / "static.onnx"), batch_dim=1)
    res = run_cli("export", "triton", static, "-o", str(tmp_path / "r"), "--max-batch", "8")
    assert_one_line_error(res, 2, "no batch axis")
    plan = tmp_path / "m.plan"
    plan.write_bytes(b"\0" * 64)
    res = run_cli("export", "triton", str(plan), "-o", str(tmp_path / "r"), "--device-kind",
                  "cpu")
    assert_one_line_error(res, 2, "GPU only")
    py = tmp_path / "model.py"
    py.write_text("pass\n")
    res = run_cli("export", "triton", str(py), "-o", str(tmp_path / "r"))
    assert_one_line_error(res, 2, "python-backend", "--from")
    res = run_cli("export", "triton", str(tmp_path / "m.bin"), "-o", str(tmp_path / "r"))
    assert_one_line_error(res, 2)


def test_export_triton_plan_gets_tensorrt_plan(tmp_path):
    plan = tmp_path / "m.plan"
    plan.write_bytes(b"\0" * 64)
    res = run_cli("export", "triton", str(plan), "-o", str(tmp_path / "r"), "--max-batch",
                  "16", "--window-ms", "1")
    assert res.returncode == 0, res.stderr
    cfg = _parse((tmp_path / "r" / "m" / "config.pbtxt").read_text())
    assert cfg.platform == "tensorrt_plan" and not cfg.input  # Triton auto-completes I/O
    assert cfg.instance_group[0].kind == cfg.instance_group[0].KIND_GPU
    assert not cfg.instance_group[0].gpus
    assert (tmp_path / "r" / "m" / "1" / "model.plan").exists()


@pytest.mark.triton
@pytest.mark.slow
def test_a_live_runs_export_loads_in_the_same_server(triton, tmp_path):
    live = tmp_path / "live.json"
    res = run_cli("serve", "--url", triton.http_url, "--model", "tb_linear", "--load",
                  "open:100", "--duration-s", "1", "-o", str(live), timeout=180)
    assert res.returncode == 0, res.stderr
    model_py = triton.repo / "tb_linear" / "1" / "model.py"
    res = run_cli("export", "triton", str(model_py), "-o", str(triton.repo), "--from",
                  str(live), "--model-name", "tb_export", "--window-ms", "3", "--max-batch",
                  "16", "--preferred-batch", "4,16", "--instances", "2")
    assert res.returncode == 0, res.stderr
    text = (triton.repo / "tb_export" / "config.pbtxt").read_text()
    cfg = _parse(text)
    assert cfg.backend == "python" and cfg.instance_group[0].count == 2
    triton.load("tb_export")
    try:
        got = json.loads(triton._get("/v2/models/tb_export/config")[1])
        assert got["max_batch_size"] == 16
        assert got["dynamic_batching"]["preferred_batch_size"] == [4, 16]
        assert got["dynamic_batching"]["max_queue_delay_microseconds"] == 3000
        assert got["instance_group"][0]["count"] == 2
        assert got["instance_group"][0]["kind"] == "KIND_CPU"
    finally:
        triton.unload("tb_export")


def test_advise_latency_curve_can_say_cpu_and_writes_the_config(tmp_path):
    repo = tmp_path / "repo"
    res = run_cli("advise", "--latency-curve", "1:2,8:4,32:10", "--arrival-rate", "3000",
                  "--device-kind", "cpu", "--torchserve-version", "2.0", "--format", "json",
                  "--export-dir", str(repo), "--model-name", "net")
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    cfg = _parse((repo / "net" / "config.pbtxt").read_text())
    assert cfg.instance_group[0].kind == cfg.instance_group[0].KIND_CPU
    assert "KIND_GPU" not in adv["export"]["triton_config_pbtxt"]
    assert '"2.0"' in adv["export"]["torchserve_config"]
    assert list((repo / "net" / "1").iterdir()) == []  # no model file: said on stderr
    assert "no model file copied" in res.stderr


def test_advise_gpus_lists_the_ids_asked_for(tmp_path):
    res = run_cli("advise", "--latency-curve", "1:2,8:4,32:10", "--arrival-rate", "1000",
                  "--gpus", "0,1", "--instances", "3", "--format", "json")
    assert res.returncode == 0, res.stderr
    text = json.loads(res.stdout)["export"]["triton_config_pbtxt"]
    assert "gpus: [ 0, 1 ]" in text and "gpus: [ 0 ]" in text  # 3 = 2 + 1 over two servers
    _parse(text)


def test_an_advice_from_a_live_run_does_not_lower_the_servers_max_batch(tmp_path):
    """The recorded live run formed no batch above 2 on a model with max batch 32 (its
    sweep ran 8): the advice's max batch 2 is a limit of the data, so ``export triton
    --from advice.json`` keeps the model's 32 (and parses as Triton's config);
    ``--max-batch`` still sets it."""
    from pathlib import Path
    import shutil

    live = tmp_path / "live.json"
    shutil.copy(Path(__file__).resolve().parent / "gold" / "inputs" / "live.json", live)
    adv = tmp_path / "adv.json"
    res = run_cli("advise", "--from", str(live), "--arrival-rate", "300", "-o", str(adv),
                  timeout=300)
    assert res.returncode == 0, res.stderr
    assert json.loads(adv.read_text())["advice"]["recommendation"]["prediction"][
        "max_batch_size"] == 2
    res = run_cli("export", "triton", "--from", str(adv), "-o", str(tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "r" / "tb_linear" / "config.pbtxt").read_text()
    cfg = _parse(text)
    assert cfg.max_batch_size == 32 and "the server's own, kept" in text
    assert not cfg.dynamic_batching.preferred_batch_size
    res = run_cli("export", "triton", "--from", str(adv), "-o", str(tmp_path / "s"),
                  "--max-batch", "4")
    assert res.returncode == 0, res.stderr
    assert _parse((tmp_path / "s" / "tb_linear" / "config.pbtxt").read_text()
                  ).max_batch_size == 4


def test_export_triton_refuses_a_tensorrt_rtx_plan(tmp_path):
    plan = tmp_path / "m.plan"
    plan.write_bytes(b"vtrt" + b"\0" * 60)  # the TensorRT-RTX plan magic
    res = run_cli("export", "triton", str(plan), "-o", str(tmp_path / "r"))
    assert_one_line_error(res, 2, "TensorRT-RTX plan", "onnxruntime backend")
    assert not (tmp_path / "r").exists()
