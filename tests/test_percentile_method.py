"""Percentile methods: linear (default) and nearest-rank, checked against the formulas of
trtexec (samples/common/sampleReporting.cpp, findPercentile) and perf_analyzer
(src/inference_profiler.cc, InferenceProfiler::SummarizeLatency)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from tests.conftest import assert_one_line_error, run_cli
from trtcheck.stats import (
    ANCHOR_PERCENTILE_METHOD,
    current_percentile_method,
    percentile,
    percentile_method,
    summarize,
)

PERCENTS = (50, 90, 95, 99)


def trtexec_index_exact(percent: int, n: int) -> int:
    """findPercentile: ``exclude = int((1 - p/100) * n)``; ``timings[max(n - 1 - exclude, 0)]``
    in exact arithmetic."""
    exclude = math.floor((1 - Fraction(percent, 100)) * n)
    return max(n - 1 - exclude, 0)


def trtexec_index_float32(percent: int, n: int) -> int:
    """The same with trtexec's float32 arithmetic (``float percentile``, int32 ``all``)."""
    p = np.float32(percent)
    exclude = int(np.float32(np.float32(1) - p / np.float32(100)) * np.float32(n))
    return max(n - 1 - exclude, 0)


def perf_analyzer_index(percent: int, n: int) -> int:
    """SummarizeLatency: ``size_t index = (percentile / 100.0) * (latencies.size() - 1) + 0.5``."""
    return int((percent / 100.0) * (n - 1) + 0.5)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 49, 50, 51, 99, 100, 101, 459, 1000, 1003])
def test_nearest_rank_is_trtexecs_find_percentile(n):
    x = np.random.default_rng(n).lognormal(0.0, 0.5, size=n)
    s = np.sort(x)
    for p in PERCENTS:
        assert percentile(x, p / 100, method="nearest-rank") == s[trtexec_index_exact(p, n)]


def test_trtexec_float32_differs_only_where_it_rounds_across_an_integer():
    """trtexec's float32 ``(1 - p) * n`` lands just below an integer at some counts (p99 of
    100 samples: 0.99999905, so it reports the maximum); everywhere else it agrees."""
    differ = []
    for n in range(1, 2001):
        for p in PERCENTS:
            if trtexec_index_float32(p, n) != trtexec_index_exact(p, n):
                differ.append((p, n))
                assert (1 - Fraction(p, 100)) * n == int((1 - Fraction(p, 100)) * n)  # integer
                assert trtexec_index_float32(p, n) == trtexec_index_exact(p, n) + 1
    assert (99, 100) in differ and len(differ) < 0.01 * 2000 * len(PERCENTS)


def test_perf_analyzer_picks_the_sample_nearest_the_linear_position():
    """perf_analyzer rounds the linear position ``q (n - 1)`` half up: within one rank of
    nearest-rank, equal at the counts a p99 is usually read at."""
    for n in range(1, 2001):
        for p in PERCENTS:
            assert abs(perf_analyzer_index(p, n) - trtexec_index_exact(p, n)) <= 1
    for n in (50, 100, 1000):
        assert perf_analyzer_index(99, n) == trtexec_index_exact(99, n)


def test_at_50_samples_nearest_rank_p99_is_the_maximum_and_linear_is_below():
    x = np.random.default_rng(0).lognormal(0.0, 0.5, size=50)
    lin = summarize(x, method="linear")
    nr = summarize(x, method="nearest-rank")
    assert nr.p99_ms == x.max() > lin.p99_ms
    assert nr.median_ms == lin.median_ms == float(np.median(x))  # trtexec findMedian
    assert (lin.percentile_method, nr.percentile_method) == ("linear", "nearest-rank")


def test_the_method_context_sets_the_default_and_is_undone():
    x = [1.0, 2.0, 3.0, 4.0]
    assert current_percentile_method() == "linear"
    with percentile_method(ANCHOR_PERCENTILE_METHOD):
        assert percentile(x, 0.5) == 2.0 and summarize(x).percentile_method == "nearest-rank"
    assert percentile(x, 0.5) == 2.5 and summarize(x).percentile_method == "linear"
    with pytest.raises(ValueError, match="percentile method"):
        percentile(x, 0.5, method="type-7")


def test_bench_records_the_method_and_report_from_refuses_it(tiny_relu_model, tmp_path):
    out = tmp_path / "r.json"
    res = run_cli("bench", str(tiny_relu_model), "--shapes", "x:1x3x8x8", "--warmup", "0",
                  "--min-duration", "0.05", "--min-samples", "20", "--percentile-method",
                  "nearest-rank", "-o", str(out))
    assert res.returncode == 0, res.stderr
    stats = json.loads(out.read_text())["bench"][0]["batches"][0]["stats"]
    assert stats["percentile_method"] == "nearest-rank"
    samples = json.loads(out.read_text())["bench"][0]["batches"][0]["samples_ms"]
    assert stats["p99_ms"] == percentile(samples, 0.99, method="nearest-rank")
    assert_one_line_error(run_cli("report", "--from", str(out), "-o", str(tmp_path / "x"),
                                  "--percentile-method", "linear"), 2, "--percentile-method")
