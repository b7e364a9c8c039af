"""Report layout: the verdict first, one screen per section, details for data and method,
and (in headless Chromium) nothing wider than its card at 1024 and 1400 px."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from tests.factories import make_results
from trtcheck.analyze.advice.advise import AdviseRequest, advise
from trtcheck.analyze.advice.curve import parse_curve_text
from trtcheck.report import build_report, render_report, with_verdict
from trtcheck.results import Finding

ROOT = Path(__file__).resolve().parent.parent
NOISY = (1.0, 3.0, 0.5, 2.0) * 10


def _layout_module():
    spec = importlib.util.spec_from_file_location("report_layout",
                                                  ROOT / "benchmarks" / "report_layout.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _busy_results():
    """A sweep whose every batch size repeats the same warnings, a long model path and
    advice: what made the report long and wide."""
    r = make_results(NOISY)
    run = r.bench[0]
    run.model_path = "/a/very/long/path/" + "segment/" * 20 + "model-with-a-long-name.onnx"
    first = run.batches[0]
    for b in (2, 4, 8, 16):
        run.batches.append(first.model_copy(update={"batch_size": b}, deep=True))
    for b in run.batches:
        b.warnings = [
            Finding(code="unstable-cv", message="standard deviation is 60% of the mean",
                    where=f"batch {b.batch_size}",
                    remedy="close other programs, pin the process (taskset) and CPU "
                           "frequency (cpupower / nvidia-smi -lgc), and raise --min-duration"),
            Finding(code="p99-not-certified", severity="info", where=f"batch {b.batch_size}",
                    message="40 samples cannot certify p99 (MLPerf early stopping needs "
                            ">= 459)")]
    r.advice = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 300.0))
    return with_verdict(r)


def test_verdict_is_the_first_content_and_sections_follow():
    html, md, sections, _ = build_report(_busy_results())
    body = html.split("<body>", 1)[1]
    after_header = body.split("</header>", 1)[1]
    first_tag = re.search(r"<(section|h2|table|p|div class=\"finding)[ >]", after_header)
    assert first_tag is not None and 'id="verdict"' in after_header[first_tag.start():][:80]
    assert after_header.index('id="verdict"') < after_header.index("<nav>")
    assert md.split("\n## ", 1)[1].startswith("Verdict: ")


def test_repeated_warnings_are_one_box_per_kind_with_a_cpu_remedy():
    html, md, _, _ = build_report(_busy_results())
    bench = html.split('<section id="bench">', 1)[1].split("</section>", 1)[0]
    boxes = re.findall(r'<div class="finding (\w+)">', bench)
    assert boxes == ["warning", "info"]  # one per kind, not one per batch size
    assert "at <b>batch 1, 2, 4, 8, 16</b>" in bench and "the first of 5" in bench
    assert "nvidia-smi" not in bench and "cpupower frequency-set" in bench
    assert "unstable-cv at batch 1, 2, 4, 8, 16" in md.replace("\\", "")


def test_data_tables_and_method_notes_sit_in_details():
    html, _, _, _ = build_report(_busy_results())
    bench = html.split('<section id="bench">', 1)[1].split("</section>", 1)[0]
    # the charts first, the table of the same numbers under them, folded
    assert bench.index("<figure>") < bench.index("<details")
    assert re.search(r"<details class=\"data\"><summary>Table: every statistic", bench)
    assert bench.index("<details") < bench.index("<th>median ms</th>")
    advice = html.split('<section id="advice">', 1)[1].split("</section>", 1)[0]
    assert "<details class=\"method\"><summary>Decision path" in advice


def test_css_keeps_tables_and_code_inside_cards():
    html, _, _, _ = build_report(_busy_results())
    css = html.split("<style>", 1)[1].split("</style>", 1)[0]
    table_rule = re.search(r"\btable \{([^}]*)\}", css)
    assert table_rule and "overflow-x: auto" in table_rule.group(1)
    assert re.search(r"\bpre \{[^}]*overflow-x: auto", css)
    assert re.search(r"td code[^{]*\{[^}]*overflow-wrap: anywhere", css)


def test_compared_levels_start_at_zero(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from trtcheck.report import sec_bench
    from trtcheck.report.charts import ChartSink

    captured = []
    sink = ChartSink()
    real_add = sink.add

    def add(name, title, fig):
        captured.append([ax.get_ylim()[0] for ax in fig.axes])
        return real_add(name, title, fig)

    sink.add = add  # observe the figures the section draws
    sec_bench.build(_busy_results(), sink)
    assert captured and all(lo == 0 for lims in captured for lo in lims)


@pytest.fixture(scope="module")
def chromium():
    """Chromium for the layout checks. Without it the two browser checks are skipped with a
    reason that pytest reports in its summary (``-ra``); CI installs it (``.ci/run``)."""
    mod = _layout_module()
    binary = mod.find_chromium()
    if binary is None:
        pytest.skip("chromium is not installed: apt-get install -y chromium (Debian) to run "
                    "the headless-browser layout checks")
    return mod, binary


@pytest.mark.browser
@pytest.mark.parametrize("width", [1024, 1400])
def test_nothing_overflows_its_card_in_chromium(chromium, tmp_path, width):
    mod, binary = chromium
    render_report(_busy_results(), tmp_path / "out")
    res = mod.check_layout(tmp_path / "out" / "report.html", width, binary=binary)
    assert res["problems"] == [], res["problems"][:5]
    verdict = next(s for s in res["sections"] if s["id"] == "verdict")
    assert verdict["height"] < 900  # the verdict reads in one screen


def test_bench_text_table_groups_repeated_warnings():
    from trtcheck.report.text_tables import bench_table_text

    text = bench_table_text(_busy_results().bench[0])
    warns = [ln for ln in text.splitlines() if ln.startswith("warning")]
    assert warns == [warns[0]] and warns[0].startswith("warning [batch 1, 2, 4, 8, 16] ")
    assert "(the first of 5)" in warns[0] and "nvidia-smi" not in warns[0]


def test_text_cells_never_break_words_mid_word():
    """Only code and long names may break anywhere; text cells (the decision path's step,
    answer and conclusion) wrap between words, so "no-batching" never shows as
    "no-batchin g" in a narrow window: ``overflow-wrap: anywhere`` would let the table
    shrink those cells below their longest word."""
    html, _, _, _ = build_report(_busy_results())
    css = html.split("<style>", 1)[1].split("</style>", 1)[0]
    text_cell = re.search(r"(?m)^td\.l \{([^}]*)\}", css)
    assert text_cell, "a td.l rule"
    assert "word-break: normal" in text_cell.group(1)
    assert "anywhere" not in text_cell.group(1)
    code_rule = re.search(r"td code[^{]*\{([^}]*)\}", css)
    assert code_rule and "overflow-wrap: anywhere" in code_rule.group(1)
    assert "break-all" not in css


@pytest.mark.browser
def test_precision_tables_fit_at_1024_px(chromium, tmp_path):
    """The precision tables show every column at 1024 px (none scrolls sideways inside its
    card), and each variant's verdict comes right after its name."""
    from trtcheck.results import load_results

    mod, binary = chromium
    results = load_results(ROOT / "tests" / "gold" / "inputs" / "full.json")
    assert results.precision is not None
    render_report(results, tmp_path / "out")
    html_path = tmp_path / "out" / "report.html"
    # open every <details> so the per-output tables are laid out and measured too
    html_path.write_text(html_path.read_text(encoding="utf-8").replace("<details", "<details open"),
                         encoding="utf-8")
    res = mod.check_layout(html_path, 1024, binary=binary)
    assert res["problems"] == [], res["problems"][:5]
    assert [t for t in res["scrolling_tables"] if t["section"] == "precision"] == []
    section = html_path.read_text(encoding="utf-8").split('<section id="precision">', 1)[1]
    heads = re.findall(r"<tr><th class=\"l\">(\w+)</th><th class=\"l\">(\w+)</th>", section)
    assert ("precision", "verdict") in heads and ("output", "verdict") in heads
