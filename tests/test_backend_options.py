"""Backend options are declared by the backends: the CLI builds them from the groups, and a
backend refuses an option it does not declare (one line, exit 2)."""

from __future__ import annotations

import click
import pytest

from tests.cli_helper import invoke
from trtcheck.backends.options import BackendOption, OptionGroup, constructor_kwargs
from trtcheck.backends.registry import (
    BACKENDS,
    backend_kwargs,
    backend_name_for,
    option_group,
    option_groups,
)
from trtcheck.cli.bench_cmd import cli as bench_cli
from trtcheck.cli.options_backend import backend_option_dests
from trtcheck.errors import InputError


def test_every_registered_backend_declares_a_group_with_constructor_keywords():
    import inspect

    for name in BACKENDS:
        group = option_group(name)
        assert group.options, name
        factory = __import__(BACKENDS[name].factory.split(":")[0], fromlist=["x"])
        cls = {"onnxruntime": "OnnxRuntimeBackend"}.get(name, "TensorRTBackend")
        params = inspect.signature(getattr(factory, cls).__init__).parameters
        assert all(o.kwarg in params for o in group.options), name
    # tensorrt and tensorrt_rtx share one group; groups are listed once each
    assert [g.label for g in option_groups()] == ["TensorRT", "ONNX Runtime"]


def test_the_cli_options_are_the_declared_ones():
    flags = {max(p.opts, key=len) for p in bench_cli.params}
    declared = {o.flag for g in option_groups() for o in g.options}
    assert declared <= flags
    assert backend_option_dests(("onnxruntime",)) == ("providers", "threads")


def test_own_options_become_constructor_keywords_and_defaults_are_skipped(tmp_path):
    onnx = tmp_path / "m.onnx"
    onnx.write_bytes(b"")
    plan = tmp_path / "m.plan"
    plan.write_bytes(b"ftrt" + b"\0" * 12)
    assert backend_kwargs(onnx, None, {"providers": ["CPUExecutionProvider"], "threads": 2,
                                       "cuda_graph": False, "profile_index": None}) == {
        "providers": ["CPUExecutionProvider"], "intra_op_threads": 2}
    assert backend_kwargs(plan, None, {"cuda_graph": True, "profile_index": 1,
                                       "threads": None}) == {
        "use_cuda_graph": True, "profile_index": 1}
    assert backend_name_for(plan) == "tensorrt"


@pytest.mark.parametrize(("values", "message"), [
    ({"cuda_graph": True}, "--cuda-graph is a TensorRT option; the onnxruntime backend "
                           "does not take it"),
    ({"profile_index": 0}, "--profile-index is a TensorRT option; the onnxruntime backend "
                           "does not take it"),
])
def test_a_foreign_option_is_refused(tmp_path, values, message):
    onnx = tmp_path / "m.onnx"
    onnx.write_bytes(b"")
    with pytest.raises(InputError) as err:
        backend_kwargs(onnx, None, values)
    assert str(err.value).startswith(message)


def test_a_new_backend_group_refuses_the_others_options():
    torch_group = OptionGroup("PyTorch", (BackendOption("--compile", "compile", "compile",
                                                        "flag", help="torch.compile"),))
    groups = [*option_groups(), torch_group]
    assert constructor_kwargs("torch", torch_group, groups, {"compile": True}) == {
        "compile": True}
    with pytest.raises(InputError, match="--threads is an ONNX Runtime option; the torch"):
        constructor_kwargs("torch", torch_group, groups, {"threads": 4})
    with pytest.raises(InputError, match="--compile is a PyTorch option; the onnxruntime"):
        constructor_kwargs("onnxruntime", option_group("onnxruntime"), groups,
                           {"compile": True})


def test_bench_refuses_cuda_graph_for_an_onnx_model_one_line_exit_2(tiny_relu_model):
    res = invoke("bench", tiny_relu_model, "--shapes", "x:1x3x8x8", "--cuda-graph")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1] == (
        "error: --cuda-graph is a TensorRT option; the onnxruntime backend does not take "
        "it; hint: drop --cuda-graph: it applies to TensorRT only")


def test_serve_refuses_threads_for_a_plan(tmp_path):
    plan = tmp_path / "m.plan"
    plan.write_bytes(b"ftrt" + b"\0" * 60)
    res = invoke("serve", plan, "--threads", "2", "--load", "closed:1")
    assert res.returncode == 2, res.stderr
    assert "--threads is an ONNX Runtime option; the tensorrt backend does not take it" in (
        res.stderr)


def test_click_types_follow_the_declaration():
    params = {p.name: p for p in bench_cli.params}
    assert params["cuda_graph"].is_flag
    assert isinstance(params["profile_index"].type, click.IntRange)
    assert params["threads"].type.min == 1 and params["threads"].type.max == 1024
