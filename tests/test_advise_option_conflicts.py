"""Advise refuses --batch (a measuring option) when T(b) does not come from
measuring MODEL, as report --from refuses measuring options: never silently ignored."""

from __future__ import annotations

import pytest

from trtcheck.cli import main


@pytest.fixture
def results_json(tmp_path):
    from trtcheck.testing import synthetic_results as g
    return g.write(g.results({1: 2.0, 8: 4.0}, n=200, seed=1), tmp_path / "r.json")


@pytest.mark.parametrize("batch", ["8", "1,2,4,8,16,32"])  # even the default's value
def test_batch_with_latency_curve_is_refused(batch, capsys):
    with pytest.raises(SystemExit) as e:
        main(["advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "100",
              "--batch", batch])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert e.value.code == 2 and len(lines) == 1, err
    assert lines[0].startswith("error: --batch") and "--latency-curve" in lines[0]
    assert "hint: drop --batch" in lines[0]


def test_batch_with_from_is_refused(results_json, capsys):
    with pytest.raises(SystemExit) as e:
        main(["advise", "--from", str(results_json), "--arrival-rate", "100", "--batch", "8"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--batch" in err and "--from" in err, err


def test_without_batch_the_curve_still_advises(capsys):
    with pytest.raises(SystemExit) as e:
        main(["advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "100"])
    assert e.value.code == 0 and "Recommendation" in capsys.readouterr().out
