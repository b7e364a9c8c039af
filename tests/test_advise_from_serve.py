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


#: the synthetic curve the fixture serves, batch size -> T(b) in ms
SYNTHETIC_CURVE_MS = {1: 2.0, 8: 4.0, 32: 10.0}


def _synthetic_t_ms(b: int) -> float:
    import numpy as np

    return float(np.interp(b, list(SYNTHETIC_CURVE_MS), list(SYNTHETIC_CURVE_MS.values())))


def test_curve_from_serve_comes_from_the_serving_run(serve_only):
    """The measured curve, on any machine: the backend sleeps T(b), so every compute time
    is at least T(b) (a sleep never returns early); how close it comes is a benchmark
    (benchmarks/serve_curve_recovery.py)."""
    from trtcheck.analyze.advice.inputs import inputs_from_results
    from trtcheck.results import load_results

    results = load_results(serve_only)
    assert results.bench == [] and results.serve is not None
    curve, measured = inputs_from_results(results)
    assert "serving run" in curve.source
    pts = dict(curve.points())
    assert max(pts) >= 8
    for b, t_ms in pts.items():
        assert t_ms >= _synthetic_t_ms(b) * (1 - 1e-3), (b, t_ms)
    # the overheads come from the same serving run, or a note says why none could (on a
    # loaded machine the runs may exceed one instance's capacity and are left out)
    assert measured.get("source") or measured.get("calibration_notes")


@pytest.fixture(scope="module")
def serve_only_recorded(serve_only, tmp_path_factory):
    """The serve-only run with each recorded execution's compute time set to T(b) of its
    batch size (within 1e-9, so that consecutive executions stay apart): the samples a
    noiseless machine would record, so what is read from them holds on any machine."""
    from trtcheck.results import load_results, save_results

    results = load_results(serve_only)
    executions = 0
    for cfg in results.serve.configs:
        for rep in cfg.repeats:
            prev, new = None, []
            for b, c in zip(rep.batch_sizes, rep.parts_ms["compute_ms"]):
                if (b, c) != prev:  # a new execution
                    executions += 1
                    prev = (b, c)
                new.append(_synthetic_t_ms(b) * (1 + 1e-9 * (executions % 3 - 1)))
            rep.parts_ms["compute_ms"] = new
    assert executions > 0
    out = tmp_path_factory.mktemp("serve-recorded") / "serve.json"
    save_results(results, out)
    return out


def test_curve_from_serve_recovers_recorded_compute_times(serve_only_recorded):
    """From those samples the curve is T(b) at every kept batch size."""
    from trtcheck.analyze.advice.inputs import curve_from_serve
    from trtcheck.results import load_results

    results = load_results(serve_only_recorded)
    pts = dict(curve_from_serve(results.serve).points())
    assert max(pts) >= 8
    for b, t_ms in pts.items():
        assert t_ms == pytest.approx(_synthetic_t_ms(b), rel=1e-8), b


def test_advise_and_report_from_a_serve_only_file(cli, serve_only_recorded, tmp_path):
    # recorded samples: a loaded machine's compute times can dip more than the curve allows
    serve_only = serve_only_recorded
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


@pytest.fixture(scope="module")
def burst_only(tmp_path_factory):
    """A burst sweep behind a serial 12 ms front (the embedded batcher), as the issue's
    fresh-user trial ran it: `trtcheck serve --load burst:64` and nothing else."""
    from tests.conftest import run_cli

    out = tmp_path_factory.mktemp("burst") / "burst.json"
    res = run_cli("serve", "--synthetic-curve", "1:0.29,8:0.4,32:1.0",
                  "--per-request-overhead-ms", "12", "--window-ms", "0,20",
                  "--max-batch", "32", "--load", "burst:64", "--repeats", "1", "-o", str(out))
    assert res.returncode == 0, res.stderr
    return out


def test_advise_from_a_burst_run_uses_its_recorded_overheads(burst_only):
    """`advise --from` a burst-only serve run: the overheads are the run's own (the
    recorded serial 12 ms front and the measured costs), not "per request 0 ms
    (given)"; the path does not say there is no serving measurement; and the file's own
    configurations are predicted beside what it measured (P50 390 ms measured on the dev
    CPU, where the advice had predicted 1.54 ms)."""
    from tests.conftest import run_cli
    from trtcheck.analyze.advice.inputs import inputs_from_results
    from trtcheck.results import load_results

    curve, measured = inputs_from_results(load_results(burst_only))
    assert measured["serial_front_ms"] == 12.0 and measured["batch_excess_ms"]
    assert "burst configuration" in measured["source"]
    res = run_cli("advise", "--from", str(burst_only), "--load", "burst:64",
                  "--format", "json")
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    i = adv["inputs"]
    assert i["overheads_source"].startswith("calibrated on a serving measurement (2 burst")
    assert i["per_request_overhead_ms"] >= 12.0 and i["ingress_per_request_us"] == 12000.0
    step1 = adv["path"][0]
    assert step1["step"] == "thin-http" and step1["answer"] == "yes"
    assert "no per-request overhead was given or measured" not in step1["conclusion"]
    assert "recorded by the serving run" in step1["conclusion"]
    rows = adv["serve_predictions"]
    assert [r["load"] for r in rows] == ["burst:64", "burst:64"]
    for r in rows:  # the serial front sets the pace: 83 req/s, P50 ~390 ms, both sides
        assert r["predicted_p50_ms"] == pytest.approx(r["measured_p50_ms"], rel=0.2), r
        assert r["predicted_mean_batch"] == pytest.approx(r["measured_mean_batch"], rel=0.2)
    text = run_cli("advise", "--from", str(burst_only), "--load", "burst:64").stdout
    assert "overheads (given)" not in text and "Predicted vs measured" in text
