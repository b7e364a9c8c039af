"""The report of a live run: ``trtcheck serve --url ... -o live.json`` against a real
tritonserver, then ``trtcheck report --from live.json``.

Values asserted: the report's HTML and Markdown show the server, the model configuration
each run used, the mean batch the server formed (its statistics), its executions per
batch size and the split of each request's mean latency, all equal to the numbers in
live.json; the split chart starts at zero; nothing overflows its card in Chromium at
1024 and 1400 px.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from trtcheck.results import Results

pytestmark = [pytest.mark.triton, pytest.mark.slow]



@pytest.fixture(scope="module")
def live_report(triton, tmp_path_factory):
    """A live sweep (window 2 ms, max batch 8, instances 1 and 2; burst and open loop,
    1 s each) and its report: ``(results, report folder)``."""
    d = tmp_path_factory.mktemp("live-report")
    live = d / "live.json"
    res = run_cli("serve", "--url", triton.http_url, "--model", "tb_linear", "--window-ms", "2",
                  "--max-batch", "8", "--instances", "1,2", "--load", "burst:16,open:80",
                  "--duration-s", "1", "-o", str(live), timeout=240)
    assert res.returncode == 0, res.stderr
    rep = run_cli("report", "--from", str(live), "-o", str(d / "report"))
    assert rep.returncode == 0, rep.stderr
    return Results.model_validate_json(live.read_text()), d / "report"


def _md_table(md: str, heading: str) -> list[list[str]]:
    """The body rows of the Markdown table under ``**heading**`` (cells stripped)."""
    block = md.split(f"**{heading}**", 1)[1].strip().split("\n\n", 1)[0]
    rows = [ln.strip().strip("|").split("|") for ln in block.splitlines()]
    return [[c.strip() for c in r] for r in rows[2:]]


def _key(c) -> list[str]:
    return [c.load.label, f"{c.window_us / 1000:g}", str(c.max_batch_size), str(c.instances)]


def test_sweep_ran_every_instance_count(live_report):
    results, _ = live_report
    got = sorted((c.load.label, c.instances,
                  c.server_model_config["instance_group"][0]["count"])
                 for c in results.serve.configs)
    assert got == [("burst:16", 1, 1), ("burst:16", 2, 2), ("open:80", 1, 1),
                   ("open:80", 2, 2)]


def test_markdown_shows_server_statistics_config_and_split(live_report):
    results, out = live_report
    run = results.serve
    md = (out / "report.md").read_text()
    assert "## Serving on a live server (triton)" in md
    assert f"triton {run.live.server_version}, HTTP" in md
    assert "`tb_linear`, version the server's choice, backend python" in md
    cfg_rows = _md_table(md, "Model configuration")
    assert sorted(r[:5] for r in cfg_rows) == [["2", "8", "1", "KIND\\_CPU", "on"],
                                              ["2", "8", "2", "KIND\\_CPU", "on"]]
    stats = {tuple(r[:4]): r for r in _md_table(md, "Server statistics (Triton, median repeat)")}
    split = {tuple(r[:4]): r for r in _md_table(md, "Where each request's time went (means, "
                                                    "ms)")}
    assert len(stats) == len(run.configs) == 4
    # a split whose parts the server's timestamps make negative is left out with a
    # warning (the python backend can release a request before its execute returns on a
    # loaded machine): every other configuration has its row
    dropped = {tuple(_key(c)) for c in run.configs
               if c.repeats[c.median_repeat].live_split is None}
    for c in run.configs:
        if tuple(_key(c)) in dropped:
            assert any(w.code == "live-split-inconsistent" for w in c.warnings), _key(c)
    assert "live-split-inconsistent" in md or not dropped
    assert set(split) == set(stats) - dropped
    for c in run.configs:
        rep = c.repeats[c.median_repeat]
        st, sp = rep.server_stats, rep.live_split
        row = stats[tuple(_key(c))]
        # the mean batch the server formed: inferences / executions of Triton's statistics
        assert row[4] == f"{st.avg_batch_size:.2f}"
        assert st.avg_batch_size == pytest.approx(st.inference_count / st.execution_count)
        assert (row[5], row[6]) == (f"{st.inference_count:,}", f"{st.execution_count:,}")
        assert row[7] == ", ".join(f"{b.batch_size}\u00d7{b.execution_count}"
                                   for b in st.batch_stats)
        assert row[8] == f"{st.queue.mean_ms:.3f}"
        if sp is None:
            continue
        row = split[tuple(_key(c))]
        parts = [sp.client_network_mean_ms, sp.server_queue_mean_ms,
                 sp.server_compute_mean_ms, sp.server_other_mean_ms]
        assert row[4:9] == [f"{sp.client_mean_ms:.3f}"] + [f"{p:.3f}" for p in parts]
        # the four parts are the whole client mean from the send
        assert sum(parts) == pytest.approx(sp.client_mean_ms, abs=1e-6)
    burst = [c for c in run.configs if c.load.label == "burst:16"]
    assert all(c.repeats[0].server_stats.avg_batch_size > 1.5 for c in burst)
    assert "![Mean request latency" in md and (out / "charts" / "serve-live-split.png").is_file()
    assert not (out / "charts" / "serve-waterfall.png").exists()  # the embedded one


def test_each_loads_table_tells_instance_counts_apart(live_report):
    """Instances 1 and 2 under one load: its table has an instances column, so the two
    rows of one window and max batch are told apart (they were not)."""
    results, out = live_report
    md = (out / "report.md").read_text()
    rows = _md_table(md, "Load open:80")
    got = sorted((r[0], r[1], r[2], r[3]) for r in rows)
    want = sorted((f"{c.window_us / 1000:g}", str(c.max_batch_size), str(c.instances),
                   f"{c.mean_batch_size:.2f}")
                  for c in results.serve.configs if c.load.label == "open:80")
    assert got == want and len(got) == 2
    assert "| window ms | max batch | instances | mean batch |" in md
    html = (out / "report.html").read_text()
    assert "<th>max batch</th><th>instances</th><th>mean batch</th>" in html


def test_html_shows_the_same_numbers_and_the_split_chart(live_report):
    results, out = live_report
    html = (out / "report.html").read_text()
    sec = html.split('<section id="serve">', 1)[1].split("</section>", 1)[0]
    assert sec.lstrip().startswith("<h2>Serving on a live server (triton)</h2>")
    for h in ("Model configuration", "Server statistics (Triton, median repeat)",
              "Where each request's time went (means, ms)"):
        assert f"<h3>{h}</h3>" in sec
    for c in results.serve.configs:
        st = c.repeats[c.median_repeat].server_stats
        assert f"<td>{st.avg_batch_size:.2f}</td><td>{st.inference_count:,}</td>" in sec
    assert 'alt="Mean request latency: client + network, server queue, server compute"' in sec
    assert "Per-request waterfall" not in sec


def test_split_chart_starts_at_zero(live_report):
    import matplotlib

    matplotlib.use("Agg")
    from trtcheck.report import sec_serve
    from trtcheck.report.charts import ChartSink

    results, _ = live_report
    seen = {}
    sink = ChartSink()
    real_add = sink.add

    def add(name, title, fig):
        seen[name] = [(ax.get_xlim()[0], ax.get_ylim()[0]) for ax in fig.axes]
        return real_add(name, title, fig)

    sink.add = add  # observe the figures the section draws
    sec_serve.build(results, sink)
    assert [lims[0] for lims in seen["serve-live-split"]] == [0.0]  # bars from zero
    # one window per load: no QPS/P99-vs-window curve to draw
    assert sorted(seen) == ["serve-live-split"]


def test_serve_format_md_has_the_live_tables(triton, tmp_path):
    res = run_cli("serve", "--url", triton.http_url, "--model", "tb_linear", "--load",
                  "burst:8", "--duration-s", "1", "--format", "md")
    assert res.returncode == 0, res.stderr
    assert "**Server statistics (Triton, median repeat)**" in res.stdout
    assert "| burst:8 |" in res.stdout


from test_report_layout import _layout_module  # noqa: E402  (one loader of the checker)


@pytest.mark.browser
@pytest.mark.parametrize("width", [1024, 1400])
def test_live_report_fits_its_cards_in_chromium(live_report, width):
    mod = _layout_module()
    binary = mod.find_chromium()
    if binary is None:
        pytest.skip("chromium is not installed: apt-get install -y chromium (Debian)")
    res = mod.check_layout(live_report[1] / "report.html", width, binary=binary)
    assert res["problems"] == [], res["problems"][:5]


def test_live_json_round_trips_through_the_report_folder(live_report):
    results, out = live_report
    again = json.loads((out / "results.json").read_text())["serve"]
    assert again["live"]["model_name"] == "tb_linear"
    assert [c["instances"] for c in again["configs"]] == [c.instances
                                                          for c in results.serve.configs]


def test_report_advice_from_a_live_sweep(live_report, tmp_path):
    """``report --from live.json --arrival-rate R``: T(b) calibrated from the server's
    statistics, and a predicted-vs-measured row per open-loop and burst configuration
    with its own instance count and preferred sizes."""
    results, out = live_report
    res = run_cli("report", "--from", str(out.parent / "live.json"), "--arrival-rate", "80",
                  "-o", str(tmp_path / "advised"))
    assert res.returncode == 0, res.stderr
    adv = json.loads((tmp_path / "advised" / "results.json").read_text())["advice"]
    assert "Triton batch_stats" in adv["curve"]["source"]
    rows = adv["serve_predictions"]
    # the real server applies every swept configuration: no false alarm
    assert not [w for c in results.serve.configs for w in c.warnings
                if w.code == "config-not-applied"]
    opens = [c for c in results.serve.configs if c.load.kind in ("open", "burst")]
    assert [(r["config"], r["load"], r["instances"]) for r in rows] == [
        (f"W=2 ms B=8 I={c.instances}", c.load.label, c.instances) for c in opens]
    for r, c in zip(rows, opens):
        assert r["measured_mean_batch"] == c.mean_batch_size
        assert r["predicted_mean_batch"] >= 1.0 and r["predicted_p50_ms"] > 0
    md = (tmp_path / "advised" / "report.md").read_text()
    assert "| W=2 ms B=8 I=2 | open:80 |" in md
