"""ONNX string fields that are not valid UTF-8 (protobuf hands over ``bytes``): the
model reader tolerates them and every later reader sees escaped text
(``trtcheck/load/onnx_model.py``)."""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper

from trtcheck.load.onnx_model import load_onnx


def _bad_utf8_model() -> bytes:
    """A Relu model whose dim_param and op type hold bytes that are not UTF-8."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["QQQQ", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["QQQQ", 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return m.SerializeToString().replace(b"QQQQ", b"\xff\xfeQQ").replace(b"Relu", b"R\xffl\xfe")


def test_dim_param_that_is_not_utf8_is_tolerated_and_escaped(tmp_path: Path):
    from trtcheck.load.onnx_model import _usability_problem, escape_text_fields

    raw = onnx.load_from_string(_bad_utf8_model())
    assert isinstance(raw.graph.input[0].type.tensor_type.shape.dim[0].dim_param, bytes)
    assert _usability_problem(raw) is None  # no TypeError on the bytes
    # a zero axis next to it: the message shows the bytes escaped
    raw.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 0
    what, _ = _usability_problem(raw)
    assert "[\\xff\\xfeQQ, 0]" in what
    # load_onnx escapes every string field once, so later readers see text
    p = tmp_path / "m.onnx"
    p.write_bytes(_bad_utf8_model())
    m = load_onnx(p)
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "\\xff\\xfeQQ"
    assert m.graph.node[0].op_type == "R\\xffl\\xfe"
    assert escape_text_fields(m) == 0  # nothing left as bytes


def test_cli_inspects_a_model_with_non_utf8_names(tmp_path: Path, cli):
    p = tmp_path / "m.onnx"
    p.write_bytes(_bad_utf8_model())
    res = cli("inspect", str(p))
    assert res.returncode == 0, res.stderr
    assert "\\xff\\xfeQQ" in res.stdout and "R\\xffl\\xfe" in res.stdout
