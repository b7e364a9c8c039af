"""`trtcheck report` options for the advice are checked before measuring,
and never silently ignored."""

from __future__ import annotations

import pytest

from trtcheck.cli import main, report_cmd


@pytest.fixture
def results_json(tmp_path):
    from trtcheck.testing import synthetic_results as g
    return g.write(g.results({1: 2.0, 8: 4.0}, n=200, seed=1), tmp_path / "r.json")


def _exit2(args, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    assert e.value.code == 2 and needle in err and "Traceback" not in err, err
    return err


def test_slo_without_arrival_rate_is_refused_with_from(results_json, tmp_path, capsys):
    _exit2(["report", "--from", str(results_json), "--slo-p99-ms", "50",
            "-o", str(tmp_path / "out")], "--slo-p99-ms", capsys)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("extra,needle", [
    (["--slo-p99-ms", "5"], "--slo-p99-ms"),                       # no --arrival-rate
    (["--arrival-rate", "50", "--slo-p99-ms", "-5"], "--slo-p99-ms"),
    (["--arrival-rate", "-3"], "--arrival-rate"),
    (["--arrival-rate", "nan"], "--arrival-rate"),
])
def test_advice_options_checked_before_measuring(extra, needle, tmp_path, capsys, monkeypatch):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"not measured")

    def boom(*a, **k):
        raise AssertionError("measured before checking the advice options")
    monkeypatch.setattr(report_cmd, "measure_report", boom)
    monkeypatch.setattr(report_cmd, "check_model_path", lambda p: None)
    _exit2(["report", str(model), "-o", str(tmp_path / "out"), *extra], needle, capsys)


def test_from_checks_output_before_advising(results_json, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("keep me")
    err = _exit2(["report", "--from", str(results_json), "--arrival-rate", "50",
                  "-o", str(out)], "--overwrite", capsys)
    assert "advising" not in err
    assert (out / "report.html").read_text() == "keep me"


def test_report_of_trtexec_exports_refuses_an_arrival_rate_up_front(cli, tmp_path,
                                                                   trtexec_exports):
    from conftest import assert_one_line_error

    out = tmp_path / "rep"
    res = cli("report", str(trtexec_exports / "resnet18-a100-fp16"), "-o", str(out),
              "--arrival-rate", "100")
    assert_one_line_error(res, 2, "--arrival-rate needs T(b)", "trtcheck bench PLAN")
    assert not out.exists()


def test_report_no_bench_refuses_sweep_options(cli, tmp_path, demo_model):
    from conftest import assert_one_line_error

    res = cli("report", str(demo_model), "--no-bench", "--batch", "1,2",
              "--min-samples", "5", "-o", str(tmp_path / "r"))
    assert_one_line_error(res, 2, "--batch, --min-samples", "--no-bench skips")
    assert not (tmp_path / "r").exists()
