"""Advice warns when the serving run's executions drifted."""

from __future__ import annotations

import re

import numpy as np

from trtcheck.analyze.advice.curve import make_curve
from trtcheck.analyze.advice.inputs import build_request
from trtcheck.stats import lag1_autocorrelation


def _ar1(phi: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros(n)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + rng.standard_normal()
    return x


def test_lag1_autocorrelation_values():
    assert lag1_autocorrelation([1.0, 2.0]) is None
    assert lag1_autocorrelation([3.0] * 10) is None
    assert lag1_autocorrelation([1.0, -1.0] * 50) < -0.95
    assert abs(lag1_autocorrelation(np.random.default_rng(0).standard_normal(5000))) < 0.05
    assert abs(lag1_autocorrelation(_ar1(0.8, 5000, 1)) - 0.8) < 0.05


def _notes(excess: np.ndarray) -> list[str]:
    curve = make_curve([(1, 16.0), (8, 128.0)])
    measured = {"batch_excess_ms": tuple(float(v) for v in excess),
                "request_delay_ms": (0.1,) * 10, "source": "test"}
    return build_request(curve, measured, rate_per_s=20.0).notes


def test_drifting_executions_get_a_note_with_the_number():
    notes = _notes(1.0 + 0.3 * _ar1(0.9, 400, 2))
    drift = [n for n in notes if "drifted" in n]
    assert len(drift) == 1
    value = float(re.search(r"lag-1 autocorrelation (\d\.\d\d)", drift[0]).group(1))
    assert 0.8 <= value <= 0.95
    assert "400 executions" in drift[0]


def test_steady_or_short_series_get_none():
    assert not [n for n in _notes(1.0 + 0.3 * np.random.default_rng(3).standard_normal(400))
                if "drifted" in n]
    assert not [n for n in _notes(1.0 + 0.3 * _ar1(0.9, 20, 4)) if "drifted" in n]
