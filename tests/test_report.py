import os
from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error
from tests.factories import make_results
from trtcheck.errors import InputError
from trtcheck.report import build_report, render_report
from trtcheck.results import save_results

HOSTILE = '<script>alert(1)</script>|`x`*_[a](b)'


def hostile_results():
    r = make_results()
    r.bench[0].label = HOSTILE
    r.bench[0].model_path = HOSTILE + ".onnx"
    r.bench[0].backend.device = HOSTILE
    r.environment.hostname = HOSTILE
    return r


def test_report_files_and_charts(tmp_path):
    written = render_report(make_results(), tmp_path / "out")
    names = sorted(p.name for p in written)
    assert {"report.html", "report.md", "results.json"} <= set(names)
    html = (tmp_path / "out" / "report.html").read_text()
    md = (tmp_path / "out" / "report.md").read_text()
    assert html.count('src="data:image/svg+xml;base64,') >= 2  # latency + throughput charts
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    assert "![Latency percentiles vs batch size](charts/bench-latency.png)" in md
    assert (tmp_path / "out" / "charts" / "bench-latency.png").read_bytes()[:4] == b"\x89PNG"
    assert "fake 0" in html and "CPU" in html  # which backend and device produced the numbers


def test_report_is_deterministic(tmp_path):
    r = make_results()
    render_report(r, tmp_path / "a")
    render_report(r, tmp_path / "b")
    for name in ("report.html", "report.md", "results.json", "charts/bench-throughput.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_untrusted_strings_are_escaped():
    html, md, _, _ = build_report(hostile_results())
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "\\|" in md and "\\`x\\`" in md


def test_refuses_to_overwrite_and_checks_writability(tmp_path):
    out = tmp_path / "out"
    render_report(make_results(), out)
    before = (out / "report.html").read_bytes()
    with pytest.raises(InputError, match="already holds a report"):
        render_report(make_results(), out)
    assert (out / "report.html").read_bytes() == before
    render_report(make_results(), out, overwrite=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        render_report(make_results(), tmp_path / "file")


def test_unwritable_output_cli(tmp_path, cli):
    # a path under a regular file can never be created, even by root
    (tmp_path / "f").write_text("x")
    res = cli("report", "--from", "nope.json", "-o", str(tmp_path / "f" / "sub"))
    assert_one_line_error(res, 2)
    save_results(make_results(), tmp_path / "r.json")
    res = cli("report", "--from", str(tmp_path / "r.json"), "-o", str(tmp_path / "f" / "sub"))
    assert_one_line_error(res, 2, "cannot write")
    assert not (tmp_path / "f").is_dir()


def test_from_json_reproduces_report(tmp_path, cli):
    save_results(make_results(), tmp_path / "r.json")
    a = cli("report", "--from", str(tmp_path / "r.json"), "-o", str(tmp_path / "a"))
    b = cli("report", "--from", str(tmp_path / "a" / "results.json"), "-o", str(tmp_path / "b"))
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    for name in ("report.html", "report.md", "results.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_no_partial_report_on_failure(tmp_path, monkeypatch):
    import trtcheck.report as rep

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rep, "results_to_json", boom)
    with pytest.raises((InputError, OSError)):
        render_report(make_results(), tmp_path / "out")
    assert sorted(os.listdir(tmp_path / "out")) == []


def test_overwrite_keeps_foreign_files_in_charts(tmp_path):
    # the report goes ahead and leaves every file it does not write
    out = tmp_path / "out"
    render_report(make_results(), out)
    (out / "charts" / "notes.txt").write_text("mine")
    render_report(make_results(), out, overwrite=True)
    assert (out / "charts" / "notes.txt").read_text() == "mine"


def test_two_reports_racing_into_one_new_folder_cannot_both_land(tmp_path):
    """Both runs passed the early check (the folder was empty); the publishing step
    itself refuses the second, and the folder holds the first report whole."""
    from trtcheck.report import _place

    dest = tmp_path / "out"
    dest.mkdir()
    stagings = []
    for who in ("first", "second"):
        st = tmp_path / f"staging-{who}"
        st.mkdir()
        for name in ("report.md", "results.json", "report.html"):
            (st / name).write_text(f"{who} {name}")
        stagings.append(st)
    _place(stagings[0], dest, [], overwrite=False)
    with pytest.raises(InputError, match="another run writes there"):
        _place(stagings[1], dest, [], overwrite=False)
    assert {p.read_text() for p in dest.iterdir()} == {
        "first report.md", "first results.json", "first report.html"}


def test_sigterm_while_measuring_a_report_keeps_no_empty_folder(tmp_path):
    import json
    import signal
    import subprocess
    import sys
    import time

    import onnx
    from onnx_builders import matmul_model

    onnx.save(matmul_model(), tmp_path / "t.onnx")
    out = tmp_path / "new" / "report"
    proc = subprocess.Popen([sys.executable, "-m", "trtcheck", "report", str(tmp_path / "t.onnx"),
                             "-o", str(out), "--batch", "1,2,4,8,16", "--min-duration", "1",
                             "--warmup", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = ""
    while "inspecting" not in line:
        line = proc.stderr.readline()
        assert line, "report ended early"
    time.sleep(2.5)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err
    if out.exists():  # the sweep was cut short: reported as measured, marked incomplete
        assert proc.returncode == 130, err
        data = json.loads((out / "results.json").read_text())
        assert data["incomplete"].startswith("interrupted by SIGTERM")
        assert (out / "report.html").exists()
        assert "**Incomplete:** interrupted by SIGTERM" in (out / "report.md").read_text()
        assert not [p for p in out.iterdir() if p.name.startswith(".trtcheck-")]
    else:  # stopped before anything was measured: no folder left behind
        assert not (tmp_path / "new").exists()
def test_report_skips_batch_sizes_a_fixed_input_refuses(tmp_path, cli):
    """--batch 1,4 on a model whose inputs fix axis 0 to 1: batch 4 is skipped with a
    warning and the sweep keeps batch 1 (it aborted before)."""
    import json

    import onnx
    from onnx import TensorProto, helper

    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 64]) for n in ("x", "h")]
    g = helper.make_graph([helper.make_node("Add", ["x", "h"], ["y"])], "g", vi,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])])
    model = tmp_path / "fixed.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), model)
    res = cli("report", str(model), "--batch", "1,4", "-o", str(tmp_path / "rep"),
              "--min-duration", "0.1", "--warmup", "0.02")
    assert res.returncode == 0, res.stderr
    assert "skipping batch 4" in res.stderr
    doc = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert [p["batch_size"] for p in doc["bench"][0]["batches"]] == [1]


def test_tex_like_user_text_does_not_break_charts(tmp_path):
    r"""A trace file named ``$\frac$.txt`` gives the serving load label ``trace:$\frac$.txt``,
    which lands in chart legends: matplotlib's mathtext would raise on it. Every chart
    text is shown literally."""
    import json

    from cli_helper import invoke as run_main

    trace = tmp_path / "$\\frac$.txt"
    trace.write_text("\n".join(str(i * 0.002) for i in range(40)) + "\n")
    res = run_main("serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0",
                   "--max-batch", "8", "--load", f"trace:{trace}", "--repeats", "1",
                   "--warmup-requests", "0", "-o", tmp_path / "serve.json")
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "serve.json").read_text())
    assert doc["serve"]["configs"][0]["load"]["label"] == "trace:$\\frac$.txt"
    res = run_main("report", "--from", tmp_path / "serve.json", "-o", tmp_path / "rep")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "rep" / "report.html").is_file()


def test_chart_text_is_never_parsed_as_math():
    from trtcheck.report.charts import ChartSink, new_figure

    fig, ax = new_figure()
    ax.bar(["$\\frac$", "a$b"], [1, 2], label="$\\frac{$")
    ax.set_title("$\\frac$ layer")
    ax.legend()
    chart = ChartSink().add("bench-latency", "t", fig)
    assert chart.png_bytes.startswith(b"\x89PNG")


def test_a_failing_precision_comparison_keeps_the_measurements(tmp_path, monkeypatch):
    """report --precision whose comparison fails still writes the bench results, then
    exits with the precision error (nothing measured is lost)."""
    import json

    import onnx
    from cli_helper import invoke as run_main
    from onnx import TensorProto, helper

    from trtcheck.errors import InputError
    import trtcheck.measure.precision as P  # the face the pipeline calls

    def broken(*args, **kwargs):
        raise InputError("the FP16 variant cannot be built", "check the model")

    monkeypatch.setattr(P, "precision_section_for_report", broken)
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["b", 8]) for n in ("x", "y")]
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", vi[:1], vi[1:])
    model = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), model)
    res = run_main("report", model, "--batch", "1", "--precision", "fp16", "--no-serve",
                   "--min-duration", "0.05", "--warmup", "0.01", "-o", tmp_path / "rep")
    assert res.returncode == 2, res.stderr
    assert "written without the precision comparison: the FP16 variant" in res.stderr
    doc = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert [b["batch_size"] for b in doc["bench"][0]["batches"]] == [1]


def _log_labels_are_math(ax):
    """The drawn y tick labels of ``ax`` (after ``fig.canvas.draw()``), each parsed as
    mathtext: a log axis label is ``$\\mathdefault{10^{-3}}$``, drawn as 10^-3 only when
    parsed; shown unparsed it would appear as raw ``\\mathdefault`` text."""
    from matplotlib.cbook import is_math_text

    labels = [t for t in ax.get_yticklabels() if t.get_text()]
    assert labels
    return all(t.get_parse_math() and is_math_text(t.get_text()) for t in labels)


def test_log_axis_ticks_show_powers_of_ten_while_user_text_stays_literal():
    """User text is drawn literally, but matplotlib's own log-axis labels keep their
    mathtext, so a log axis shows powers of ten."""
    from matplotlib.cbook import is_math_text

    from trtcheck.report.charts import ChartSink, new_figure

    fig, ax = new_figure()
    ax.bar(["$\\frac$", "fp16"], [1e-4, 1e-2], label="$\\frac{$")
    ax.set_yscale("log")
    ax.set_title("$\\frac$ layer")
    ax.legend()
    ChartSink().add("precision", "t", fig)
    fig.canvas.draw()
    assert _log_labels_are_math(ax)
    names = [t.get_text() for t in ax.get_xticklabels()]
    assert "\\$\\frac\\$" in names  # escaped: drawn as "$\\frac$", not as math
    assert not any(is_math_text(n) for n in names)
    assert not is_math_text(ax.get_title())
    assert not is_math_text(ax.get_legend().get_texts()[0].get_text())


def test_precision_chart_log_axis_shows_powers_of_ten(tmp_path):
    """The report's precision chart ("What it costs", log axis) draws powers of ten."""
    from trtcheck.report import sec_precision
    from trtcheck.report.charts import ChartSink
    from trtcheck.results.model import load_results

    results = load_results(Path(__file__).parent / "gold" / "inputs" / "full.json")
    assert results.precision is not None
    figures = []

    class Keep(ChartSink):
        def add(self, name, title, fig):
            figures.append(fig)
            return super().add(name, title, fig)

    assert sec_precision.precision_chart(results.precision, Keep())
    fig = figures[0]
    fig.canvas.draw()
    cost_axes = fig.axes[1]
    assert cost_axes.get_yscale() == "log"
    assert _log_labels_are_math(cost_axes)
