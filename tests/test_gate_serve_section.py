"""QA round 2: gate budgets on the serve section of a real `trtcheck serve` results file."""

from __future__ import annotations

import pytest

from trtcheck.cli import main
from conftest import synthetic_serve_json  # noqa: E402


@pytest.fixture(scope="module")
def serve_json(tmp_path_factory):
    return synthetic_serve_json(tmp_path_factory.mktemp("qa2gate") / "serve.json")


def _gate(tmp_path, results, policy, capsys):
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy)
    with pytest.raises(SystemExit) as e:
        main(["gate", str(results), "--policy", str(pol)])
    cap = capsys.readouterr()
    return e.value.code, cap.out + cap.err


def test_filter_on_a_float_field_matches_integer_text(serve_json, tmp_path, capsys):
    # window_ms is stored as 0.0: [window_ms=0] must match it (it matched nothing)
    code, out = _gate(tmp_path, serve_json, "version: 1\nbudgets:\n"
                      "  - serve.configs[window_ms=0].mean_batch_size >= 1\n"
                      "  - serve.configs[window_ms=2.0].mean_batch_size >= 1\n", capsys)
    assert code == 0, out
    assert "matched nothing" not in out


def test_p99_budget_without_raw_samples_does_not_pass(serve_json, tmp_path, capsys):
    # 16 requests: a p99 budget can not be certified, stored value or not
    code, out = _gate(tmp_path, serve_json, "version: 1\nbudgets:\n"
                      "  - serve.configs[0].p99_ms <= 100 s\n", capsys)
    assert code == 1, out
    assert "cannot certify p99" in out
    # the policy may downgrade it to a warning
    code, out = _gate(tmp_path, serve_json, "version: 1\nsettings:\n  on_uncertified: warn\n"
                      "budgets:\n  - serve.configs[0].p99_ms <= 100 s\n", capsys)
    assert code == 0, out
    # a median (p50) budget is not a tail budget: it still passes as before
    code, out = _gate(tmp_path, serve_json, "version: 1\nbudgets:\n"
                      "  - serve.configs[0].p50_ms <= 100 s\n"
                      "  - serve.configs[*].throughput_queries_per_s >= 1 queries/s\n", capsys)
    assert code == 0, out


def test_junit_and_markdown_to_the_same_file_is_refused(serve_json, tmp_path, capsys):
    pol = tmp_path / "policy.yaml"
    pol.write_text("version: 1\nbudgets:\n  - serve.configs[0].mean_batch_size >= 1\n")
    out = tmp_path / "gate.out"
    with pytest.raises(SystemExit) as e:
        main(["gate", str(serve_json), "--policy", str(pol), "--junit-xml", str(out),
              "--markdown", str(tmp_path / "." / "gate.out")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "same file" in err, err
    assert not out.exists()


def test_max_of_p99_needs_the_same_certification_as_each_p99(tmp_path, capsys):
    """`max(bench.batch[*].p99_ms) <= B` means every p99 <= B: it must not pass where
    `bench.batch[*].p99_ms <= B` is not certified (it did: a loophole around early stopping)."""
    import gate_synth as g
    few = g.write(g.results({1: 2.0, 8: 9.0}, n=50, seed=5), tmp_path / "few.json")
    many = g.write(g.results({1: 2.0, 8: 9.0}, n=2000, seed=6), tmp_path / "many.json")
    pol = ("version: 1\nbudgets:\n  - max(bench.batch[*].p99_ms) <= 1 s\n"
           "  - min(bench.batch[*].throughput_samples_per_s) >= 1 samples/s\n")
    code, out = _gate(tmp_path, few, pol, capsys)
    assert code == 1 and "cannot certify p99" in out, out
    code, out = _gate(tmp_path, many, pol, capsys)
    assert code == 0, out


def test_serve_baseline_without_samples_never_false_fails(tmp_path, capsys):
    """Two serve runs of the same synthetic engine (seeds 1 and 2, the only difference the
    Poisson schedule): open-loop QPS differed by 7.9% and a 5% throughput rule FAILED on a
    point comparison. A measured statistic with no raw samples has unknown noise: past the
    limit it is inconclusive (a warning by default, a failure with on_inconclusive: fail)."""
    from trtcheck.results import load_results, save_results
    serve = tmp_path / "s.json"
    with pytest.raises(SystemExit):
        main(["serve", "--synthetic-curve", "1:2,8:4", "--window-ms", "0", "--max-batch", "8",
              "--load", "burst:16", "--repeats", "1", "--warmup-requests", "0", "-o", str(serve)])
    base = load_results(serve)
    new = base.model_copy(deep=True)
    c = new.serve.configs[0]
    c.throughput_queries_per_s = base.serve.configs[0].throughput_queries_per_s * 0.92
    c.p99_ms = base.serve.configs[0].p99_ms * 1.3
    save_results(new, tmp_path / "new.json")
    pol = ("version: 1\nbaseline:\n  - serve.configs[*].throughput_queries_per_s: 5%\n"
           "  - serve.configs[*].p99_ms: 10%\n"
           "  - metric: serve.configs[*].ok_share\n    max_regression: 1%\n"
           "    direction: higher\n")
    p = tmp_path / "p.yaml"
    p.write_text(pol)
    with pytest.raises(SystemExit) as e:
        main(["gate", str(tmp_path / "new.json"), "--policy", str(p), "--baseline", str(serve)])
    cap = capsys.readouterr()
    out = cap.out
    assert e.value.code == 0, cap.err
    assert out.count("INCONCL") == 2 and "noise" in out, out
    p.write_text("version: 1\nsettings:\n  on_inconclusive: fail\n" + pol[len("version: 1\n"):])
    with pytest.raises(SystemExit) as e:
        main(["gate", str(tmp_path / "new.json"), "--policy", str(p), "--baseline", str(serve)])
    assert e.value.code == 1


def test_request_rate_metrics_take_a_request_rate_unit(tmp_path, capsys):
    """`load.rate_per_s` and `arrival_rate_per_s` are requests per second; the gate called
    the unit 'rate/s', refused '1 rate/s' and then hinted "rates take rate/s"."""
    from trtcheck.analyze.metrics import format_quantity, metric_unit, parse_quantity
    for leaf in ("rate_per_s", "arrival_rate_per_s", "capacity_per_instance_per_s"):
        u = metric_unit(leaf)
        assert parse_quantity("300 requests/s", u) == 300.0
        assert parse_quantity("300 qps", u) == 300.0
        assert "rate/s" not in format_quantity(300.0, u)


def test_junit_xml_stays_well_formed_with_control_characters(tmp_path, capsys):
    """A run label is user text; a control character in it made --junit-xml unparsable."""
    import xml.etree.ElementTree as ET

    import gate_synth as g
    from trtcheck.results import load_results, save_results
    src = g.write(g.results({1: 2.0}, n=100, seed=1), tmp_path / "a.json")
    res = load_results(src)
    res.bench[0].label = "bad\x01label\x1b]]>"
    save_results(res, tmp_path / "b.json")
    pol = tmp_path / "p.yaml"
    pol.write_text("version: 1\nbudgets:\n  - bench[*].batch[1].median_ms <= 1 us\n")
    xml = tmp_path / "g.xml"
    with pytest.raises(SystemExit) as e:
        main(["gate", str(tmp_path / "b.json"), "--policy", str(pol), "--junit-xml", str(xml)])
    assert e.value.code == 1
    root = ET.parse(xml).getroot()
    assert root.find("testcase/failure") is not None


@pytest.mark.parametrize("opt,value", [("--markdown", ""), ("--junit-xml", " "),
                                       ("--junit-xml", "-"), ("--markdown", "-")])
def test_gate_summary_paths_empty_or_dash_are_refused(serve_json, tmp_path, capsys, opt, value,
                                                      monkeypatch):
    """`--markdown ''` was ignored silently; `--junit-xml -` wrote a file named '-'."""
    monkeypatch.chdir(tmp_path)
    pol = tmp_path / "policy.yaml"
    pol.write_text("version: 1\nbudgets:\n  - serve.configs[0].mean_batch_size >= 1\n")
    with pytest.raises(SystemExit) as e:
        main(["gate", str(serve_json), "--policy", str(pol), opt, value])
    err = capsys.readouterr().err
    assert e.value.code == 2 and opt in err, err
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("raw", ["1e400 ms", "1e400", "-1e999 samples/s"])
def test_bounds_that_overflow_to_infinity_are_refused(raw):
    """'inf ms' was refused, but '1e400 ms' overflowed to inf and became a bound."""
    from trtcheck.analyze.metrics import UnitError, metric_unit, parse_quantity
    leaf = "throughput_samples_per_s" if "samples" in raw else "p99_ms"
    with pytest.raises(UnitError, match="finite"):
        parse_quantity(raw, metric_unit(leaf))


def test_a_hung_model_cannot_hang_serve():
    """Runs are bounded in time (issue 3) even when a batch never finishes."""
    import asyncio
    import time

    from trtcheck.measure.serve import measure_serving

    async def hung(batch):
        await asyncio.sleep(3600)
        return batch

    t0 = time.perf_counter()
    run = measure_serving(hung, windows_ms=(0,), max_batch_sizes=(4,), loads=["burst:8"],
                          repeats=1, max_duration_s=0.3, drain_timeout_s=0.3,
                          warmup_requests=0, payload=1.0)
    assert time.perf_counter() - t0 < 20
    cfg = run.configs[0]
    assert cfg.ok_share == 0.0  # every request ended (timeout), none hangs
