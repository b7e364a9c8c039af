"""`report -o DIR --overwrite` deleted a user's DIR/charts/mychart.png.

--overwrite replaces only the files the report writes (results.json, report.html,
report.md, its own charts) and removes only stale charts trtcheck itself names
(trtcheck.report.charts.CHART_NAME_PATTERN); every other file stays."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trtcheck.cli import main

PNG = b"\x89PNG\r\n\x1a\n user's own chart"


@pytest.fixture
def results_json(tmp_path):
    from trtcheck.testing import synthetic_results as g
    return g.write(g.results({1: 2.0, 8: 4.0}, n=200, seed=1), tmp_path / "r.json")


def report(args, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    assert e.value.code == 0, err
    return err


def test_overwrite_keeps_user_files(results_json, tmp_path, capsys):
    out = tmp_path / "rep"
    report(["report", "--from", results_json, "-o", out], capsys)
    own = sorted(p.name for p in (out / "charts").iterdir())
    assert own and "bench-latency.png" in own
    (out / "charts" / "mychart.png").write_bytes(PNG)
    (out / "charts" / "notes.txt").write_text("mine")
    (out / "mine.md").write_text("keep me")
    report(["report", "--from", results_json, "-o", out, "--overwrite"], capsys)
    assert (out / "charts" / "mychart.png").read_bytes() == PNG
    assert (out / "charts" / "notes.txt").read_text() == "mine"
    assert (out / "mine.md").read_text() == "keep me"
    assert sorted(p.name for p in (out / "charts").iterdir()) == sorted(
        [*own, "mychart.png", "notes.txt"])


def test_stale_trtcheck_charts_are_removed(results_json, tmp_path, capsys):
    out = tmp_path / "rep"
    report(["report", "--from", results_json, "-o", out], capsys)
    stale = out / "charts" / "serve-waterfall.png"  # this report has no serving section
    stale.write_bytes(PNG)
    (out / "charts" / "mychart.png").write_bytes(PNG)
    report(["report", "--from", results_json, "-o", out, "--overwrite"], capsys)
    assert not stale.exists()
    assert (out / "charts" / "mychart.png").exists()


def test_a_folder_with_only_user_charts_is_no_report(results_json, tmp_path, capsys):
    out = tmp_path / "rep"
    (out / "charts").mkdir(parents=True)
    (out / "charts" / "mychart.png").write_bytes(PNG)
    report(["report", "--from", results_json, "-o", out], capsys)  # no --overwrite needed
    assert (out / "charts" / "mychart.png").read_bytes() == PNG
    assert (out / "report.html").is_file() and (out / "charts" / "bench-latency.png").is_file()


def test_without_overwrite_an_old_chart_counts_as_a_report(results_json, tmp_path, capsys):
    out = tmp_path / "rep"
    (out / "charts").mkdir(parents=True)
    (out / "charts" / "bench-latency.png").write_bytes(PNG)
    with pytest.raises(SystemExit) as e:
        main(["report", "--from", str(results_json), "-o", str(out)])
    assert e.value.code == 2
    assert "charts/bench-latency.png" in capsys.readouterr().err
    assert (out / "charts" / "bench-latency.png").read_bytes() == PNG


def test_every_chart_a_section_draws_is_a_trtcheck_chart():
    from trtcheck.report.charts import CHART_NAME_PATTERN, is_trtcheck_chart

    src = Path(__file__).resolve().parents[1] / "trtcheck" / "report"
    names = re.findall(r'charts\.add\(\s*f?"([^"]+)"', "".join(
        p.read_text() for p in src.glob("sec_*.py")))
    assert len(names) >= 9, names
    for n in names:
        n = n.replace("{li}", "3")
        assert CHART_NAME_PATTERN.fullmatch(n), n
        assert is_trtcheck_chart(n + ".png")
    assert not is_trtcheck_chart("mychart.png")
    assert not is_trtcheck_chart("bench-latency.png.bak")
    assert not is_trtcheck_chart("serve-window-x.png")


def test_chart_sink_refuses_unlisted_names():
    from trtcheck.report.charts import ChartSink, new_figure

    fig, _ax = new_figure()
    with pytest.raises(ValueError, match="CHART_NAME_PATTERN"):
        ChartSink().add("mychart", "t", fig)
