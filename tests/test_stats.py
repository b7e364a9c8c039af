import numpy as np
import pytest

from trtcheck.stats import min_samples_to_certify, percentile, stability_findings, summarize


def test_summary_matches_numpy():
    rng = np.random.default_rng(1)
    x = rng.lognormal(0, 0.2, 1000)
    s = summarize(x)
    assert s.count == 1000
    assert s.median_ms == pytest.approx(np.median(x))
    assert s.p99_ms == pytest.approx(np.percentile(x, 99))
    assert s.p90_ms == pytest.approx(np.quantile(x, 0.9))
    assert s.iqr_ms == pytest.approx(np.percentile(x, 75) - np.percentile(x, 25))
    assert s.mad_ms == pytest.approx(np.median(np.abs(x - np.median(x))))
    assert s.cv == pytest.approx(np.std(x, ddof=1) / np.mean(x))
    assert percentile(x, 0.99) == pytest.approx(s.p99_ms)


def test_summary_rejects_bad_input():
    with pytest.raises(ValueError):
        summarize([])
    with pytest.raises(ValueError):
        summarize([1.0, float("nan")])
    with pytest.raises(ValueError):
        percentile([1.0], 99)  # fractions, not 0-100


def test_certification_counts_match_mlperf():
    assert min_samples_to_certify(0.99, 0.99) == 459
    assert min_samples_to_certify(0.90, 0.99) == 44


def test_stable_samples_have_no_warnings():
    x = np.full(500, 2.0) + np.linspace(0, 0.01, 500)
    codes = {f.code for f in stability_findings(x)}
    assert codes == set()


def test_unstable_samples_are_flagged_with_remedies():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(1.0, 0.01, 100), rng.normal(1.5, 0.01, 100)])
    x[::20] = 10.0
    f = {w.code: w for w in stability_findings(x[:30].tolist() + x.tolist())}
    assert "unstable-cv" in f and "drift" in f and "outliers" in f
    assert all(w.remedy for w in f.values())
    few = {w.code for w in stability_findings([1.0] * 5)}
    assert {"too-few-samples", "p99-not-certified"} <= few
