"""`-o FILE` whose folder cannot really be created or written (``/proc``) is
refused before anything is measured, and the probe leaves nothing behind."""

from __future__ import annotations

import os

import pytest

from trtcheck.cli import main


def _no_measuring(monkeypatch):
    import trtcheck.measure.serving as serving  # the face the commands call

    def boom(*a, **k):
        raise AssertionError("measured before checking -o")
    monkeypatch.setattr(serving, "measure_serving", boom)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
@pytest.mark.parametrize("path", ["/proc/trtcheck-x/y.json", "/proc/y.json"])
def test_serve_refuses_unwritable_output_before_measuring(path, monkeypatch, capsys):
    _no_measuring(monkeypatch)
    with pytest.raises(SystemExit) as e:
        main(["serve", "--synthetic-curve", "1:0.5", "--load", "burst:4", "-o", path])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert e.value.code == 2, err
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot write {path}"), err
    assert "hint:" in lines[0]


def test_probe_leaves_no_folder_or_file_behind(tmp_path):
    from trtcheck.cli.common import check_output_file

    check_output_file(str(tmp_path / "a" / "b" / "out.json"), overwrite=False)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "keep").mkdir()
    check_output_file(str(tmp_path / "keep" / "out.json"), overwrite=False)
    assert list((tmp_path / "keep").iterdir()) == []


def test_probe_failure_is_input_error(tmp_path, monkeypatch):
    """mkstemp failing (read-only mount, full disk) is one InputError, folders removed."""
    import tempfile

    from trtcheck.cli.common import check_output_file
    from trtcheck.errors import InputError

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(tempfile, "mkstemp", full)
    with pytest.raises(InputError) as e:
        check_output_file(str(tmp_path / "new" / "out.json"), overwrite=False)
    assert "No space left" in e.value.message and e.value.hint
    assert not (tmp_path / "new").exists()
