"""compare shows serving configurations side by side."""

import pytest

from tests.factories import make_results


def _serve_results(curve: str):
    from trtcheck.backends.synthetic import SyntheticBackend
    from trtcheck.measure.serving.serve import measure_serving

    r = make_results()
    r.bench = []
    r.serve = measure_serving(SyntheticBackend(curve), windows_us=(0, 2000), max_batch_sizes=(8,),
                              loads=["burst:32"], repeats=1, max_duration_s=2.0,
                              warmup_requests=0)
    return r


@pytest.fixture(scope="module")
def pair():
    return _serve_results("1:2,8:4"), _serve_results("1:4,8:8")


def test_serving_configs_matched_and_slower_b_shows(pair):
    from trtcheck.analyze.compare.compare import compare
    from trtcheck.report.compare_render import render_html, render_markdown, render_text

    a, b = pair
    c = compare(a, b)
    assert [d.config for d in c.serve] == ["burst:32 W=0 ms B=8", "burst:32 W=2 ms B=8"]
    for d in c.serve:
        assert d.qps_b < d.qps_a and d.p50_b_ms > d.p50_a_ms  # B's model is twice as slow
    assert "serving (headline medians" in render_text(c)
    assert "### Serving" in render_markdown(c)
    assert "<h2>Serving</h2>" in render_html(c)


def test_unmatched_serving_configs_are_listed(pair):
    from trtcheck.analyze.compare.compare import compare

    a, b = pair
    b2 = b.model_copy(deep=True)
    b2.serve.configs = b2.serve.configs[:1]
    c = compare(a, b2)
    assert len(c.serve) == 1 and c.serve_only_in_a == ["burst:32 W=2 ms B=8"]
    assert compare(a, make_results()).serve == []  # no serving run on one side


def test_loads_set_from_each_runs_own_capacity_pair_by_position(pair):
    """Two demo runs set their loads from their own measured capacity (open:8.2 vs
    open:8.9): the n-th load of a kind pairs with the n-th, both labels named."""
    from trtcheck.analyze.compare.compare import compare

    a, b = pair
    b2 = b.model_copy(deep=True)
    for cfg in b2.serve.configs:
        cfg.load = cfg.load.model_copy(update={"label": "burst:30"})
    c = compare(a, b2)
    assert [d.config for d in c.serve] == ["burst:32 / burst:30 W=0 ms B=8",
                                           "burst:32 / burst:30 W=2 ms B=8"]
    assert c.serve_only_in_a == [] and c.serve_only_in_b == []
    # a window only one run measured stays unpaired
    b3 = b2.model_copy(deep=True)
    b3.serve.configs = b3.serve.configs[:1]
    c = compare(a, b3)
    assert len(c.serve) == 1 and c.serve_only_in_a == ["burst:32 W=2 ms B=8"]


def _tune_of(serve_res, window_us: float, max_batch: int, instances: int = 1):
    """A ``trtcheck tune`` document whose measured pick is (window, max batch, instances),
    measured by its one live run: ``serve_res``'s serving run (its first configuration)."""
    from trtcheck.results.tune import (
        TuneChoice, TuneInterval, TuneMeasured, TunePrediction, TuneResult,
    )

    pred = TunePrediction(window_us=window_us, max_batch_size=max_batch, instances=instances,
                          stable=True, utilisation=0.5, p50_ms=5.0, p99_ms=9.0,
                          p50=TuneInterval(point_ms=5.0, lo_ms=4.0, hi_ms=6.0),
                          p99=TuneInterval(point_ms=9.0, lo_ms=7.0, hi_ms=12.0))
    run = serve_res.serve.model_copy(update={"configs": serve_res.serve.configs[:1]})
    t = serve_res.model_copy(deep=True)
    t.kind, t.serve = "tune", None
    t.tune = TuneResult(
        url="http://127.0.0.1:8000", model="m", arrival_rate_per_s=100.0,
        objective="fewest-instances", runs=[run], run_purposes=["confirm"],
        predictions=[pred],
        pick=TuneChoice(window_us=window_us, max_batch_size=max_batch, instances=instances,
                        predicted=pred,
                        measured=TuneMeasured(p50_ms=7.5, p99_ms=11.0,
                                              throughput_queries_per_s=321.0, mean_batch=2.5,
                                              requests=32, run=0, p50_inside=False,
                                              p99_inside=True)))
    return t


def test_a_tune_pick_pairs_with_the_serving_configuration_of_its_window_batch_instances(pair):
    """serve vs tune: the pick's measured numbers against the serving run's configuration
    of the pick's window, max batch and instance count (before: no row, and no note)."""
    from trtcheck.analyze.compare.compare import compare
    from trtcheck.report.compare_render import render_text

    a, _ = pair
    tune = _tune_of(a, 2000.0, 8)
    c = compare(a, tune, "live.json", "tune.json")
    assert [d.config for d in c.serve] == ["burst:32 / tune pick burst:32 W=2 ms B=8 I=1"]
    (row,) = c.serve
    served = a.serve.configs[1]
    assert (row.qps_a, row.p99_a_ms) == (served.throughput_queries_per_s, served.p99_ms)
    assert (row.qps_b, row.p50_b_ms, row.p99_b_ms, row.batch_b) == (321.0, 7.5, 11.0, 2.5)
    assert c.serve_only_in_a == ["burst:32 W=0 ms B=8"] and c.serve_only_in_b == []
    assert c.nothing_paired is None and not c.shares_nothing
    assert "tune pick burst:32 W=2 ms B=8 I=1" in render_text(c)
    # tune as A: the pick's numbers are A's
    r = compare(tune, a)
    assert [d.config for d in r.serve] == ["tune pick burst:32 / burst:32 W=2 ms B=8 I=1"]
    assert r.serve[0].qps_a == 321.0 and r.serve[0].qps_b == served.throughput_queries_per_s


def test_a_tune_pick_without_its_configuration_in_the_serving_run_gets_a_note(pair, tmp_path):
    """No serving configuration with the pick's window/max batch/instances: exit 0 and a
    visible line naming what each file holds (before: only the environment table)."""
    from trtcheck.analyze.compare.compare import compare
    from trtcheck.report.compare_render import render_html, render_markdown, render_text
    from trtcheck.results import results_to_json
    from tests.cli_helper import invoke

    a, _ = pair
    tune = _tune_of(a, 1000.0, 2, instances=3)
    c = compare(a, tune, "live.json", "tune.json")
    assert c.serve == [] and not c.shares_nothing
    assert c.serve_only_in_b == ["tune pick burst:32 W=1 ms B=2 I=3"]
    note = c.nothing_paired
    assert note is not None and note.startswith("nothing paired: A holds a serving run (2 ")
    assert "B holds a tune search (measured pick W=1 ms B=2 I=3 at burst:32)" in note
    assert "two tune searches (by pick)" in note
    assert f"note: {note}" in render_text(c)
    assert "**Note:** nothing paired" in render_markdown(c)
    assert 'class="nothing-paired"' in render_html(c)
    # another load kind is no partner either: an open pick vs a burst configuration
    open_pick = _tune_of(a, 2000.0, 8)
    load = open_pick.tune.runs[0].configs[0].load
    open_pick.tune.runs[0].configs[0].load = load.model_copy(
        update={"label": "open:478", "kind": "open"})
    assert compare(a, open_pick).serve == []
    (tmp_path / "live.json").write_text(results_to_json(a))
    (tmp_path / "tune.json").write_text(results_to_json(tune))
    res = invoke("compare", tmp_path / "live.json", tmp_path / "tune.json")
    assert res.returncode == 0, res.stderr
    assert "note: nothing paired: A holds a serving run" in res.stdout


def test_two_tune_documents_with_different_picks_say_so(pair):
    """tune vs tune: one row of the two measured picks; when the searches picked
    different configurations the row says so, and the serving table says it is a point
    comparison (no better/worse)."""
    from trtcheck.analyze.compare.compare import compare
    from trtcheck.report.compare_render import render_text

    a, _ = pair
    same = compare(_tune_of(a, 2000.0, 8), _tune_of(a, 2000.0, 8))
    assert [d.config for d in same.serve] == ["tune pick W=2 ms B=8 I=1"]
    c = compare(_tune_of(a, 2000.0, 8, 2), _tune_of(a, 2000.0, 8, 1))
    assert [d.config for d in c.serve] == [
        "tune pick W=2 ms B=8 I=2 / W=2 ms B=8 I=1 (different picks)"]
    assert "point comparisons: no interval, so no better/worse" in render_text(c)


def test_two_tune_searches_at_different_target_rates_say_so(pair, tmp_path):
    """Searches at 100 and 200 req/s: the row names both rates (two loads, not a change
    of the model), with or without the same pick; gate --baseline warns. Before, the
    row and the gate read like a +82% throughput change."""
    from trtcheck.analyze.compare.compare import compare
    from trtcheck.results import results_to_json
    from tests.cli_helper import invoke

    a, _ = pair
    t100 = _tune_of(a, 2000.0, 8)
    t200 = _tune_of(a, 2000.0, 8)
    t200.tune.arrival_rate_per_s = 200.0
    c = compare(t100, t200)
    assert [d.config for d in c.serve] == [
        "tune pick W=2 ms B=8 I=1 (different target rates (100 / 200 req/s))"]
    other = _tune_of(a, 2000.0, 8, 2)
    other.tune.arrival_rate_per_s = 200.0
    assert [d.config for d in compare(t100, other).serve] == [
        "tune pick W=2 ms B=8 I=1 / W=2 ms B=8 I=2 (different picks, different target rates "
        "(100 / 200 req/s))"]
    (tmp_path / "a.json").write_text(results_to_json(t100))
    (tmp_path / "b.json").write_text(results_to_json(t200))
    (tmp_path / "g.yaml").write_text("version: 1\nbaseline:\n"
                                     "  - tune.pick.measured.p50_ms: 50%\n")
    res = invoke("gate", tmp_path / "b.json", "--policy", tmp_path / "g.yaml", "--baseline",
                 tmp_path / "a.json")
    assert res.returncode == 0, res.stdout + res.stderr
    assert ("the tune searches of the baseline and the results had different target rates "
            "(100 / 200 req/s)") in res.stdout + res.stderr
    same = invoke("gate", tmp_path / "a.json", "--policy", tmp_path / "g.yaml", "--baseline",
                  tmp_path / "a.json")
    assert "different target rates" not in same.stdout + same.stderr


def test_serving_rows_alone_carry_no_bootstrap_method_line(pair):
    """The serving rows are point comparisons ("no interval"): the bench runs' bootstrap
    method is not printed beside them when no bench run is compared."""
    from trtcheck.analyze.compare.compare import compare
    from trtcheck.report.compare_render import render_html, render_markdown, render_text

    c = compare(*pair)
    assert not c.runs
    for text in (render_text(c), render_markdown(c), render_html(c)):
        assert "no interval" in text and "bootstrap" not in text
