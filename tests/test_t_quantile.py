"""Student t quantile for real degrees of freedom, checked against SciPy as the oracle.

SciPy is only the reference here: :func:`t_quantile_exact` is the code path of an install
without SciPy, and :func:`t_quantile` is what the gate calls (SciPy's ``stdtrit`` when
installed, else the exact fallback).
"""

from __future__ import annotations

import numpy as np
import pytest

from trtcheck.analyze.gate.regression import (regularized_incomplete_beta, t_quantile,
                                         t_quantile_exact)

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is the oracle (test extra)")
scipy_special = pytest.importorskip("scipy.special")

#: df in [1, 30], integers and values between them (a bootstrap's effective df is real)
DFS = sorted(set(np.round(np.concatenate([np.arange(1.0, 30.01, 0.25),
                                          [1.01, 1.5, 2.8, 3.3, 7.77, 29.9]]), 4)))
PS = [0.9, 0.925, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9995]


@pytest.mark.parametrize("p", PS)
def test_exact_fallback_matches_scipy_on_the_grid(p: float) -> None:
    worst = max(abs(t_quantile_exact(p, df) - float(scipy_stats.t.ppf(p, df))) for df in DFS)
    assert worst < 1e-6


@pytest.mark.parametrize("p", PS)
def test_t_quantile_matches_scipy_on_the_grid(p: float) -> None:
    worst = max(abs(t_quantile(p, df) - float(scipy_stats.t.ppf(p, df))) for df in DFS)
    assert worst < 1e-6


def test_between_integer_df_the_quantile_lies_between_its_neighbours() -> None:
    # the old expansion was 28.5% low at df 1.5 and 29.8% high at df 2.8 (p = .975)
    for df in (1.5, 2.8):
        q = t_quantile_exact(0.975, df)
        assert t_quantile_exact(0.975, np.ceil(df)) < q < t_quantile_exact(0.975, np.floor(df))
    assert t_quantile_exact(0.975, 1.5) == pytest.approx(scipy_stats.t.ppf(0.975, 1.5), rel=1e-9)


def test_closed_forms() -> None:
    # df 1 is Cauchy, df 2 has t = (2p - 1) sqrt(2 / (4 p (1 - p)))
    for p in PS:
        assert t_quantile_exact(p, 1.0) == pytest.approx(np.tan(np.pi * (p - 0.5)), rel=1e-10)
        a = 4.0 * p * (1.0 - p)
        assert t_quantile_exact(p, 2.0) == pytest.approx((2 * p - 1) * np.sqrt(2 / a), rel=1e-10)


@pytest.mark.parametrize("a,b", [(0.5, 0.5), (0.75, 0.5), (15.0, 0.5), (2.0, 3.5)])
def test_incomplete_beta_matches_scipy(a: float, b: float) -> None:
    for x in (1e-8, 1e-3, 0.1, 0.5, 0.9, 0.999):
        assert regularized_incomplete_beta(a, b, x) == pytest.approx(
            float(scipy_special.betainc(a, b, x)), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("p,df", [(0.5, 3.0), (1.0, 3.0), (0.3, 3.0), (0.975, 0.0),
                                  (0.975, -1.0)])
def test_out_of_range_raises(p: float, df: float) -> None:
    with pytest.raises(ValueError):
        t_quantile(p, df)
    with pytest.raises(ValueError):
        t_quantile_exact(p, df)
