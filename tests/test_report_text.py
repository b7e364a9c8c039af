"""Report text a user reads or copies."""

import json

from trtcheck.report.templating import md_escape, md_prose


def test_md_prose_keeps_code_spans_and_escapes_the_rest():
    # a remedy's command stays a code span; markup and HTML around it are escaped
    assert md_prose("run `trtcheck tune --max-runs 8` *now* <b>") == \
        "run `trtcheck tune --max-runs 8` \\*now\\* &lt;b&gt;"
    # a pipe inside a span cannot split a table cell; a stray backtick is escaped
    assert md_prose("`a|b` and ` one") == "`a\\|b` and \\` one"
    # a span never runs over a line break (the newline folds into a space, escaped)
    assert md_prose("`a\nb`") == "\\`a b\\`"
    assert md_prose(None) == ""


def test_md_escape_escapes_ampersands_so_entities_show_literally():
    # a tensor literally named 'y&amp;' must not render as 'y&' in Markdown
    assert md_escape("y&amp;") == "y&amp;amp;"
    assert md_escape("a<b & c>d") == "a&lt;b &amp; c&gt;d"


def test_recorded_command_is_the_one_a_user_can_rerun(cli, tmp_path):
    out = tmp_path / "r.json"
    from tests.test_cli_errors import _save
    from onnx import TensorProto as T
    from onnx import helper as h

    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 4])
    model = _save(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                  tmp_path / "m.onnx")
    res = cli("bench", model, "-o", str(out), "--warmup", "0", "--min-duration", "0",
              "--min-samples", "3")
    assert res.returncode == 0, res.stderr
    command = json.loads(out.read_text())["tool"]["command"]
    assert command[0] == "trtcheck" and command[1] == "bench", command
