"""`serve --synthetic-curve` refuses a curve whose T(b) decreases with b, with the rule and
message of `advise --latency-curve` (trtcheck.analyze.advice.curve.check_monotone)."""

from __future__ import annotations

import pytest

from tests.conftest import assert_one_line_error

SERVE = ["--window-ms", "0", "--max-batch", "8", "--load", "burst:8", "--repeats", "1",
         "--warmup-requests", "1"]


@pytest.mark.parametrize("curve,smaller,larger", [("1:5,8:2", "T(1) = 5 ms", "T(8) = 2 ms"),
                                                  ("8:2,1:5", "T(1) = 5 ms", "T(8) = 2 ms"),
                                                  ("1:1,4:3,8:2.9", "T(4) = 3 ms",
                                                   "T(8) = 2.9 ms")])
def test_non_monotone_synthetic_curve_is_refused_like_advise(cli, tmp_path, curve, smaller,
                                                             larger):
    out = tmp_path / "r.json"
    serve = cli("serve", "--synthetic-curve", curve, *SERVE, "-o", str(out))
    line = assert_one_line_error(serve, 2, "--synthetic-curve is not monotone", smaller, larger)
    assert not out.exists() and serve.stdout == ""
    advise = cli("advise", "--latency-curve", curve, "--arrival-rate", "10")
    advise_line = assert_one_line_error(advise, 2, "not monotone")
    # one rule, one message: only the option name differs
    assert line == advise_line.replace("--latency-curve", "--synthetic-curve")


@pytest.mark.parametrize("curve", ["1:1,8:1", "1:0,8:0", "1:0.3,8:1"])
def test_flat_zero_and_increasing_curves_still_serve(cli, curve):
    res = cli("serve", "--synthetic-curve", curve, *SERVE)
    assert res.returncode == 0, res.stderr
    assert "load burst:8" in res.stdout
