"""Results files and report folders as inputs.

* a results JSON or a report folder given as advise/report MODEL says to use --from;
* report --from accepts a report folder (as advise --from, gate and compare do);
* a binary --from file and an empty serve --load are one line with a hint.
"""

from __future__ import annotations

import pytest

from trtcheck.cli import main


@pytest.fixture
def results_json(tmp_path):
    from trtcheck.testing import synthetic_results as g
    return g.write(g.results({1: 2.0, 8: 4.0}, n=200, seed=1), tmp_path / "r.json")


@pytest.fixture
def report_dir(results_json, tmp_path):
    out = tmp_path / "rep"
    with pytest.raises(SystemExit) as e:
        main(["report", "--from", str(results_json), "-o", str(out)])
    assert e.value.code == 0 and (out / "results.json").is_file()
    return out


def _run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


def _one_line(args, capsys, *needles):
    code, _out, err = _run(args, capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), err
    assert "; hint: " in lines[0], err
    for n in needles:
        assert n in lines[0], (n, err)
    return lines[0]


@pytest.mark.parametrize("command", [["advise", "--arrival-rate", "100"], ["report"]])
def test_results_file_as_model_says_use_from(command, results_json, capsys):
    line = _one_line([command[0], str(results_json), *command[1:]], capsys,
                     "results file", f"use --from {results_json}")
    assert "--backend" not in line and "measuring" not in line


@pytest.mark.parametrize("command", [["advise", "--arrival-rate", "100"], ["report"]])
def test_report_folder_as_model_says_use_from(command, report_dir, capsys):
    _one_line([command[0], str(report_dir), *command[1:]], capsys, "report folder",
              f"use --from {report_dir}")


def test_report_from_accepts_a_report_folder(report_dir, tmp_path, capsys):
    out = tmp_path / "again"
    code, _out, err = _run(["report", "--from", str(report_dir), "-o", str(out)], capsys)
    assert code == 0, err
    assert (out / "report.html").is_file() and (out / "results.json").is_file()


def test_from_folder_without_results(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    for cmd in (["advise", "--arrival-rate", "100"], ["report", "-o", str(tmp_path / "o")]):
        _one_line([cmd[0], "--from", str(tmp_path / "empty"), *cmd[1:]], capsys,
                  "without results.json")


@pytest.mark.parametrize("cmd", [["advise", "--arrival-rate", "100"], ["report"]])
def test_binary_from_file_is_one_line_with_hint(cmd, tmp_path, capsys):
    binary = tmp_path / "model.bin"
    binary.write_bytes(b"\x7fELF\x02\x01\xd0\xd0\xff" * 100)
    line = _one_line([cmd[0], "--from", str(binary), *cmd[1:], *(
        ["-o", str(tmp_path / "o")] if cmd[0] == "report" else [])], capsys, "not UTF-8")
    assert "codec" not in line


@pytest.mark.parametrize("load", ["", " , "])
def test_serve_empty_load_is_refused_before_any_progress(load, capsys):
    line = _one_line(["serve", "--synthetic-curve", "1:0.5", "--load", load], capsys,
                     "--load is empty")
    assert "configuration" not in line
