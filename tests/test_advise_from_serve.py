"""advise takes T(b) from a serving run when the results hold no bench ."""

import json

import pytest

from tests.conftest import assert_one_line_error


@pytest.fixture(scope="module")
def serve_only(tmp_path_factory):
    from tests.conftest import run_cli

    out = tmp_path_factory.mktemp("serve") / "serve.json"
    res = run_cli("serve", "--synthetic-curve", "1:2,8:4,32:10", "--window-ms", "0,2",
                  "--max-batch", "8,32", "--load", "burst:64,open:800", "--repeats", "1",
                  "-o", str(out))
    assert res.returncode == 0, res.stderr
    return out


def test_curve_from_serve_recovers_the_synthetic_curve(serve_only):
    from trtcheck.analyze.advice.inputs import inputs_from_results
    from trtcheck.results import load_results

    results = load_results(serve_only)
    assert results.bench == [] and results.serve is not None
    curve, measured = inputs_from_results(results)
    assert "serving run" in curve.source
    pts = dict(curve.points())
    assert pts[1] == pytest.approx(2.0, rel=0.15)
    assert max(pts) >= 8 and curve.t_ms(8) == pytest.approx(4.0, rel=0.15)
    assert measured.get("source")  # the overheads come from the same serving run


def test_advise_and_report_from_a_serve_only_file(cli, serve_only, tmp_path):
    res = cli("advise", "--from", str(serve_only), "--arrival-rate", "1200", "--format", "json")
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    assert "serving run" in adv["curve"]["source"]
    res = cli("report", "--from", str(serve_only), "--arrival-rate", "1200",
              "-o", str(tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    assert "## Batching advice" in (tmp_path / "r" / "report.md").read_text()


def test_no_bench_and_no_serve_is_one_line(cli, tmp_path):
    from tests.factories import make_results
    from trtcheck.results import save_results

    r = make_results()
    r.bench = []
    save_results(r, tmp_path / "empty.json")
    res = cli("advise", "--from", str(tmp_path / "empty.json"), "--arrival-rate", "10")
    assert_one_line_error(res, 2, "no bench run and no serving run")
