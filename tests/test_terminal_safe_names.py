"""Control characters in names the user gave (file names, ONNX tensor/node names, engine
JSON layer names, YAML policy strings) never reach the terminal raw: text and Markdown
show them as escapes (one function, trtcheck.units.terminal_safe); JSON keeps the exact
names (it escapes them itself)."""

from __future__ import annotations

import json
from pathlib import Path

from trtcheck.testing import synthetic_results as g
import onnx
import pytest
from onnx import TensorProto, helper

from tests.conftest import assert_one_line_error

EVIL = "\x1b[31mred\x1b[0m\rover\x00nul\u202erev"
RAW = ("\x1b", "\r", "\x00", "\u202e")


def assert_no_raw_control(text: str) -> None:
    for ch in RAW:
        assert ch not in text, (ch, text)


@pytest.fixture(scope="module")
def evil_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Relu with input/output/node names holding ANSI escapes, CR, NUL and a bidi
    override; the file name holds an ANSI escape too."""
    node = helper.make_node("Relu", [f"x{EVIL}"], [f"y{EVIL}"], name=f"relu{EVIL}")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(f"x{EVIL}", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info(f"y{EVIL}", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name=f"exporter{EVIL}")
    model.ir_version = 8
    p = tmp_path_factory.mktemp("evil") / "m\x1b[2J.onnx"
    onnx.save_model(model, str(p))
    return p


def test_terminal_safe_escapes_controls_and_keeps_unicode():
    from trtcheck.units import terminal_safe, terminal_safe_lines

    assert terminal_safe("a\x1b[31mb\rc\x00d\ne\tf\x7f\u202e") == \
        "a\\x1b[31mb\\rc\\x00d\\ne\\tf\\x7f\\u202e"
    assert terminal_safe("résumé 漢字 ✅ naïve/path-1.onnx") == "résumé 漢字 ✅ naïve/path-1.onnx"
    assert terminal_safe_lines("a\x1b\nb\rc\n") == "a\\x1b\nb\\rc\n"


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_inspect_onnx_text_and_md_escape_names(cli, evil_model, fmt):
    res = cli("inspect", str(evil_model), "--format", fmt)
    assert res.returncode == 0, res.stderr
    assert_no_raw_control(res.stdout + res.stderr)
    shown = "\\x1b[31mred" if fmt == "text" else "\\\\x1b\\[31mred"  # md escapes \ and [
    assert shown in res.stdout and "\\u202e" in res.stdout


def test_inspect_onnx_json_keeps_exact_names(cli, evil_model):
    res = cli("inspect", str(evil_model), "--format", "json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["inputs"][0]["name"] == f"x{EVIL}"


def test_inspect_engine_json_layer_names(cli, tmp_path):
    p = tmp_path / "e.graph.json"
    p.write_text(json.dumps({"Layers": [f"conv{EVIL}", "fc"], "Bindings": [f"x{EVIL}", "y"]}))
    res = cli("inspect", str(p))
    assert res.returncode == 0, res.stderr
    assert_no_raw_control(res.stdout + res.stderr)
    assert "\\x1b[31mred" in res.stdout


def test_error_message_escapes_the_file_name(cli, tmp_path):
    res = cli("inspect", str(tmp_path / "missing\x1b[31m\x07.onnx"))  # argv holds no NUL
    line = assert_one_line_error(res, 2, "missing\\x1b[31m\\x07.onnx")
    assert_no_raw_control(res.stderr + line)
    res = cli("bench", str(tmp_path / "m.onnx"), "--shapes", "\x1b[2J:1x2")
    assert_no_raw_control(res.stderr)
    assert res.returncode == 2


def test_format_error_escapes_message_and_hint():
    from trtcheck.cli import format_error, internal_error_line
    from trtcheck.errors import InputError

    line = format_error(InputError("bad name \x1b[31mx\x00", "rename \x1b[0m it"))
    assert line == "error: bad name \\x1b[31mx\\x00; hint: rename \\x1b[0m it"
    assert "\x1b" not in internal_error_line(ValueError("boom \x1b[2J"))


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_gate_output_escapes_policy_strings(cli, tmp_path, fmt):
    res_path = g.write(g.results({1: 2.0}, n=200, seed=1), tmp_path / "r.json")
    pol = tmp_path / "policy.yaml"
    pol.write_text('version: 1\nbudgets:\n'
                   '  - "len(inspection.lints[code=x\\e[31mred\\r\\0]) == 0"\n')
    res = cli("gate", str(res_path), "--policy", str(pol), "--format", fmt)
    assert res.returncode == 0, res.stdout + res.stderr
    assert_no_raw_control(res.stdout + res.stderr)
    assert "\\x1b[31mred" in res.stdout or "\\\\x1b\\[31mred" in res.stdout


def test_gate_error_escapes_policy_strings(cli, tmp_path):
    res_path = g.write(g.results({1: 2.0}, n=200, seed=1), tmp_path / "r.json")
    pol = tmp_path / "policy.yaml"
    pol.write_text('version: 1\nbudgets:\n  - "bench.batch[1].\\e[2Jmedian_ms <= 5 ms"\n')
    res = cli("gate", str(res_path), "--policy", str(pol))
    assert res.returncode in (1, 2), res.stdout + res.stderr
    assert_no_raw_control(res.stdout + res.stderr)
