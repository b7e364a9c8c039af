"""Advise/report number options are bounded to physical ranges and every bad
number is one `error: ...; hint: ...` line (no NumPy warning, no 300-digit output)."""

from __future__ import annotations

import warnings

import pytest

from trtcheck.cli import main

CURVE = ["advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "100"]


def _one_line(args, capsys, needle):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(SystemExit) as e:
            main(args)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert e.value.code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error:"), err
    assert "; hint: " in lines[0] and needle in lines[0], err
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], caught
    return lines[0]


@pytest.mark.parametrize("extra,needle", [
    (["--slo-p99-ms", "0"], "--slo-p99-ms"),
    (["--slo-p99-ms", "-1"], "--slo-p99-ms"),
    (["--slo-p99-ms", "nan"], "--slo-p99-ms"),
    (["--slo-p99-ms", "inf"], "--slo-p99-ms"),
    (["--slo-p99-ms", "1e300"], "--slo-p99-ms"),
    (["--per-batch-overhead-ms", "inf"], "--per-batch-overhead-ms"),
    (["--per-request-overhead-ms", "1e300"], "--per-request-overhead-ms"),
    (["--per-item-overhead-ms", "nan"], "--per-item-overhead-ms"),
    (["--timer-slack-us", "1e20"], "--timer-slack-us"),
    (["--instances", "1..1000000000"], "--instances"),
])
def test_bad_advise_numbers_are_one_line_with_hint(extra, needle, capsys):
    _one_line([*CURVE, *extra], capsys, needle)


def test_absurd_arrival_rate_is_refused_not_printed(capsys):
    line = _one_line(["advise", "--latency-curve", "1:2,8:4,32:10", "--arrival-rate", "1e308"],
                     capsys, "--arrival-rate")
    assert "1e+09" in line and len(line) < 300


@pytest.mark.parametrize("curve,needle", [("1:1e300", "T(1)"), ("1:2,8:1e8", "T(8)"),
                                          ("1000000000000:5", "batch size")])
def test_absurd_latency_curve_is_refused_without_numpy_warning(curve, needle, capsys):
    _one_line(["advise", "--latency-curve", curve, "--arrival-rate", "100"], capsys, needle)


def test_largest_allowed_values_still_advise(capsys):
    main_args = ["advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "1000",
                 "--per-request-overhead-ms", "5", "--slo-p99-ms", "1e7"]
    with pytest.raises(SystemExit) as e:
        main(main_args)
    out = capsys.readouterr().out
    assert e.value.code == 0 and "Recommendation" in out


def test_report_bounds_arrival_rate_before_anything(tmp_path, capsys):
    _one_line(["report", "--from", str(tmp_path / "none.json"), "--arrival-rate", "1e12",
               "-o", str(tmp_path / "out")], capsys, "--arrival-rate")
    assert not (tmp_path / "out").exists()


def test_help_documents_the_bounds():
    from click.testing import CliRunner

    from trtcheck.cli import cli
    text = " ".join(CliRunner().invoke(cli, ["advise", "--help"]).output.split())
    assert "<= 1e9" in text and "<= 1e7" in text and "0 to 1e7" in text
