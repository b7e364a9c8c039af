"""Every file a command writes gets the mode a plain open() would give
(0666 less the umask), not the 0600 of the temporary file behind an atomic write."""

from __future__ import annotations

import os
import stat

import pytest

from trtcheck.cli import main


@pytest.fixture(params=[0o022, 0o027])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def _ok(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    assert e.value.code == 0, err


def test_advise_output_honours_umask(umask, tmp_path, capsys):
    out = tmp_path / "sub" / "advice.json"
    _ok(["advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "100", "-o", str(out)],
        capsys)
    assert _mode(out) == 0o666 & ~umask


def test_serve_output_honours_umask(umask, tmp_path, capsys):
    out = tmp_path / "serve.json"
    _ok(["serve", "--synthetic-curve", "1:0.2", "--window-ms", "0", "--max-batch", "1",
         "--load", "burst:4", "--repeats", "1", "--warmup-requests", "0", "-o", str(out)],
        capsys)
    assert _mode(out) == 0o666 & ~umask


def test_overwrite_also_gets_umask_mode(umask, tmp_path, capsys):
    out = tmp_path / "advice.json"
    args = ["advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "100", "-o", str(out)]
    _ok(args, capsys)
    os.chmod(out, 0o600)
    _ok([*args, "--overwrite"], capsys)
    assert _mode(out) == 0o666 & ~umask


def test_report_and_gate_files_match(umask, tmp_path, capsys):
    from trtcheck.testing import synthetic_results as g

    res = g.write(g.results({1: 2.0, 8: 4.0}, n=200, seed=1), tmp_path / "r.json")
    _ok(["report", "--from", str(res), "-o", str(tmp_path / "rep")], capsys)
    for name in ("report.html", "report.md", "results.json"):
        assert _mode(tmp_path / "rep" / name) == 0o666 & ~umask, name
    policy = tmp_path / "p.yaml"
    policy.write_text("budgets:\n  - bench.batch[1].count >= 1\n")
    with pytest.raises(SystemExit):
        main(["gate", str(res), "-p", str(policy), "--markdown", str(tmp_path / "g.md")])
    capsys.readouterr()
    assert _mode(tmp_path / "g.md") == 0o666 & ~umask


def test_library_results_files_get_the_umask_mode(tmp_path):
    import os

    from trtcheck.measure.bench.runner import new_results
    from trtcheck.results import save_results
    from trtcheck.results.model import umask_file_mode

    out = tmp_path / "r.json"
    save_results(new_results(), out)
    assert (os.stat(out).st_mode & 0o777) == umask_file_mode()
