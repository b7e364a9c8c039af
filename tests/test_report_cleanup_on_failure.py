"""A failed `trtcheck report` removes the output folder it created itself
(and the folders above it that it created), never a folder that existed before."""

from __future__ import annotations

import pytest

from trtcheck import pipeline
from trtcheck.cli import main, report_cmd


# advice that fails after the folder is made: a P99 objective below T(1) (2 ms)
FAILING_ADVICE = ["--arrival-rate", "50", "--slo-p99-ms", "0.001"]


@pytest.fixture
def results_json(tmp_path):
    from trtcheck.testing import synthetic_results as g
    return g.write(g.results({1: 2.0, 8: 4.0}, n=200, seed=1), tmp_path / "r.json")


def _fails(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    return err


def test_from_with_failing_advice_leaves_no_new_folder(results_json, tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "out"
    err = _fails(["report", "--from", str(results_json), *FAILING_ADVICE, "-o", str(out)],
                 capsys)
    assert "P99 objective" in err
    assert not (tmp_path / "new").exists()


def test_from_with_failing_advice_keeps_an_existing_folder(results_json, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    _fails(["report", "--from", str(results_json), *FAILING_ADVICE, "-o", str(out)], capsys)
    assert out.is_dir() and list(out.iterdir()) == []


def test_measuring_failure_leaves_no_new_folder(tmp_path, capsys, monkeypatch):
    from trtcheck.errors import InputError

    model = tmp_path / "m.onnx"
    model.write_bytes(b"x")

    def bad(*a, **k):
        raise InputError("the model failed to run", "check it")
    monkeypatch.setattr(report_cmd, "check_model_path", lambda p: None)
    monkeypatch.setattr(pipeline, "_measure", bad)
    out = tmp_path / "a" / "b"
    _fails(["report", str(model), "-o", str(out)], capsys)
    assert not (tmp_path / "a").exists()
