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
