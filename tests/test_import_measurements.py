"""Numbers users already have: perf_analyzer CSVs (``-f``) and Triton statistics dumps,
read by ``report --from``, ``gate``, ``compare`` and ``advise --from``.

The CSVs and the dump in tests/data/perf-analyzer/ were written by the real
perf_analyzer 2.41 and tritonserver 2.51 (``trtcheck.testing.triton_server``, model
``tb_linear``: T(b) = 1 + 0.25 b ms busy-wait in the python backend): concurrency 1 and
4 over HTTP, Poisson request rates 100 and 300 req/s over HTTP, concurrency 2 over gRPC
with ``--verbose-csv``; the statistics after those runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helper import invoke
from tests.conftest import assert_one_line_error
from trtcheck.results.documents import load_results_input as load_results
from trtcheck.results.import_files import read_perf_analyzer_csv, sniff_import

DATA = Path(__file__).resolve().parent / "data" / "perf-analyzer"
CONC = DATA / "concurrency.csv"
RATE = DATA / "request-rate.csv"
VERBOSE = DATA / "verbose.csv"
STATS = DATA / "tb_linear-stats.json"


def test_the_real_csvs_map_to_the_results_model():
    res = load_results(CONC)
    run = res.imported
    assert run is not None and run.source == "perf_analyzer-csv" and run.file == str(CONC)
    assert run.mode == "concurrency" and [lv.concurrency for lv in run.levels] == [1, 4]
    lv = run.levels[1]
    # perf_analyzer's microseconds, in ms
    assert lv.p99_ms == pytest.approx(8.933) and lv.p50_ms == pytest.approx(5.175)
    assert lv.throughput_inferences_per_s == pytest.approx(741.617)
    assert lv.server_compute_infer_ms == pytest.approx(2.690)
    assert lv.server_queue_ms == pytest.approx(2.115)
    assert "server-side columns (queue and compute times)" not in run.missing
    assert any("raw per-request" in m for m in run.missing)
    rate = load_results(RATE).imported
    assert rate.mode == "request-rate"
    assert [lv.request_rate_per_s for lv in rate.levels] == [100.0, 300.0]
    verbose = load_results(VERBOSE).imported
    assert verbose.ignored_columns == ["request/response", "response wait"]


def test_a_csv_without_server_columns_says_what_it_lacks():
    text = "Concurrency,Inferences/Second,p50 latency,p99 latency\n2,100.5,4000,9000\n"
    run = read_perf_analyzer_csv(text, "client-only.csv")
    assert run.levels[0].server_queue_ms is None and run.levels[0].p99_ms == 9.0
    assert "server-side columns (queue and compute times)" in run.missing


def test_report_from_a_perf_analyzer_csv(tmp_path):
    out = tmp_path / "out"
    res = invoke("report", "--from", str(RATE), "-o", str(out))
    assert res.returncode == 0, res.stderr
    md = (out / "report.md").read_text()
    assert "## Imported: perf\\_analyzer CSV" in md
    assert "| 300.0 | 283.7 | 4.419 |" in md
    assert "Not in this source: raw per-request latencies" in md
    assert "measured by perf\\_analyzer, not judged" in md or \
        "measured by perf_analyzer, not judged" in md
    # the results.json it wrote holds the imported numbers with their source
    again = load_results(out / "results.json")
    assert again.imported == load_results(RATE).imported
    assert "report.html" in {p.name for p in out.iterdir()}


POLICY = """\
settings:
  on_uncertified: warn
budgets:
  - imported.levels[concurrency=4].p99_ms <= {p99} ms
  - imported.levels[*].throughput_inferences_per_s >= 200 inferences/s
  - imported.levels[*].server_queue_ms <= 3 ms
"""


@pytest.mark.parametrize("p99,code", [(10, 0), (8, 1)])
def test_gate_a_perf_analyzer_csv(tmp_path, p99, code):
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.format(p99=p99))
    res = invoke("gate", str(CONC), "--policy", str(policy), "--format", "json")
    assert res.returncode == code, res.stderr
    doc = json.loads(res.stdout)
    assert doc["passed"] is (code == 0) and len(doc["checks"]) == 5
    # the p99 budget has no raw samples to certify it: a warning when it is met
    # (on_uncertified: warn), a failure when it is not
    p99 = [c for c in doc["checks"] if "p99_ms" in json.dumps(c)]
    assert [c["outcome"] for c in p99] == ["warn" if code == 0 else "fail"]
    assert doc["counts"]["pass"] == 4


def test_gate_regressions_between_two_csvs(tmp_path):
    policy = tmp_path / "p.yaml"
    # no raw samples: a point comparison past the limit is inconclusive, which this
    # policy fails (the gate's default warns)
    policy.write_text("settings:\n  on_inconclusive: fail\n"
                      "baseline:\n  - imported.levels[*].p99_ms: 5%\n")
    slower = tmp_path / "slower.csv"
    lines = CONC.read_text().splitlines()
    row = lines[2].split(",")
    row[-1] = str(int(row[-1]) * 2)  # p99 of concurrency 4 doubled
    slower.write_text("\n".join([lines[0], lines[1], ",".join(row)]) + "\n")
    ok = invoke("gate", str(CONC), "--policy", str(policy), "--baseline", str(CONC))
    assert ok.returncode == 0, ok.stderr
    bad = invoke("gate", str(slower), "--policy", str(policy), "--baseline", str(CONC))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "+100.0%" in bad.stdout


BAD_CSVS = {
    "header-only.csv": ("Concurrency,Inferences/Second,p99 latency\n", "no row"),
    "not-a-number.csv": ("Concurrency,Inferences/Second\n1,fast\n", "not a number"),
    "negative.csv": ("Request Rate,Inferences/Second\n-5,10\n", "finite number >= 0"),
    "nan.csv": ("Concurrency,Inferences/Second\n1,nan\n", "finite number >= 0"),
    "width.csv": ("Concurrency,Inferences/Second,p99 latency\n1,10\n", "2 values"),
    "fraction.csv": ("Concurrency,Inferences/Second\n1.5,10\n", "whole number"),
    "no-throughput.csv": ("Concurrency,p99 latency\n1,10\n", "Inferences/Second"),
    "twice.csv": ("Concurrency,Inferences/Second,Inferences/Second\n1,2,3\n", "twice"),
}


@pytest.mark.parametrize("name", sorted(BAD_CSVS))
def test_a_bad_csv_is_one_line_exit_2(tmp_path, name):
    text, needle = BAD_CSVS[name]
    path = tmp_path / name
    path.write_text(text)
    policy = tmp_path / "p.yaml"
    policy.write_text("budgets:\n  - imported.levels[*].p99_ms <= 10 ms\n")
    assert_one_line_error(invoke("gate", str(path), "--policy", str(policy)), 2, needle)
    assert_one_line_error(invoke("report", "--from", str(path), "-o", str(tmp_path / "o")),
                          2, needle)
    assert not (tmp_path / "o").exists()


def test_a_csv_of_another_tool_is_not_taken_for_perf_analyzer(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("batch,latency\n1,2\n")
    assert sniff_import(other.read_text()) is None
    assert_one_line_error(invoke("gate", str(other), "--list-metrics"), 2)


def test_compare_two_perf_analyzer_csvs():
    res = invoke("compare", str(CONC), str(VERBOSE))
    assert res.returncode == 0, res.stderr
    assert "only in A: 2, only in B: 1" in res.stdout
    same = invoke("compare", str(CONC), str(CONC), "--format", "json")
    rows = json.loads(same.stdout)["serve"]
    assert [r["config"] for r in rows] == ["perf_analyzer concurrency 1",
                                           "perf_analyzer concurrency 4"]
    assert rows[1]["p99_a_ms"] == pytest.approx(8.933) and rows[1]["batch_a"] is None


def test_triton_statistics_map_compute_per_batch_size():
    run = load_results(STATS).imported
    assert run.source == "triton-stats" and run.file == str(STATS)
    (m,) = run.models
    assert m.model == "tb_linear" and m.inference_count == 4892 and m.execution_count == 2393
    b4 = next(b for b in m.batches if b.batch_size == 4)
    # (23370379 + 1880074632 + 62326379) ns / 696 executions
    assert b4.compute_ms == pytest.approx((23370379 + 1880074632 + 62326379) / 696 / 1e6)
    assert m.queue_ms == pytest.approx(10078580147 / 4892 / 1e6)


def test_advise_from_statistics_uses_the_servers_compute_per_batch_size():
    res = invoke("advise", "--from", str(STATS), "--arrival-rate", "300", "--format", "json")
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    points = {int(b): t for b, t in adv["curve"]["points_ms"].items()}
    run = load_results(STATS).imported
    assert points == pytest.approx({b.batch_size: b.compute_ms for b in run.models[0].batches})
    notes = " ".join(adv["curve"]["notes"])
    assert "no client or network time" in notes and "no spread" in notes
    assert "larger sizes are not assessed" in notes


def test_advise_from_a_csv_says_what_it_lacks():
    line = assert_one_line_error(invoke("advise", "--from", str(CONC), "--arrival-rate",
                                        "300"), 2, "perf_analyzer CSV", "per batch size")
    assert "stats" in line


@pytest.mark.parametrize("doc,needle", [
    ({"model_stats": []}, "no model_stats"),
    ({"model_stats": [{"version": "1"}]}, "no name"),
    ({"model_stats": [{"name": "m", "inference_stats": {"queue": {"count": "x", "ns": 1}}}]},
     "count, ns"),
])
def test_bad_statistics_are_one_line_exit_2(tmp_path, doc, needle):
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(doc))
    assert_one_line_error(invoke("gate", str(path), "--list-metrics"), 2, needle)


def test_gate_statistics(tmp_path):
    shutil.copy(STATS, tmp_path / "stats.json")
    policy = tmp_path / "p.yaml"
    policy.write_text("budgets:\n"
                      "  - imported.models[model=tb_linear].batches[batch_size=4].compute_ms"
                      " <= 3 ms\n  - imported.models[*].fail_count == 0\n")
    res = invoke("gate", str(tmp_path / "stats.json"), "--policy", str(policy))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2.824 ms, budget 3 ms" in res.stdout
