"""The one home of safe writes: every writer goes through one write-then-rename."""

import os
import stat

import pytest

from trtcheck.errors import InputError
from trtcheck.files import replace_atomically, umask_file_mode, write_text_atomic


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_replace_atomically_writes_with_the_plain_open_mode(tmp_path):
    out = tmp_path / "a.txt"
    out.write_text("old")
    assert replace_atomically(out, lambda t: open(t, "w").write("new"), fsync=True) == out
    assert out.read_text() == "new"
    assert stat.S_IMODE(os.stat(out).st_mode) == umask_file_mode()
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_fill_keeps_the_old_file_and_leaves_no_temporary(tmp_path, error):
    out = tmp_path / "a.txt"
    out.write_text("old")

    def fill(tmp):
        open(tmp, "w").write("half")
        raise error

    with pytest.raises(type(error)):
        replace_atomically(out, fill)
    assert out.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_a_name_at_the_file_system_limit_still_gets_a_temporary(tmp_path):
    out = tmp_path / ("n" * 255)
    write_text_atomic(str(out), "x")
    assert out.read_text() == "x"


def test_write_text_atomic_is_one_input_error_in_a_missing_place(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError, match="cannot create the folder"):
        write_text_atomic(str(blocker / "sub" / "r.txt"), "x")


def test_every_writer_calls_the_one_implementation():
    # the modules that write files hold no write-then-rename of their own
    import pathlib

    import trtcheck

    root = pathlib.Path(trtcheck.__file__).parent
    own = {p.relative_to(root).as_posix() for p in root.rglob("*.py")
           if "os.replace(" in p.read_text(encoding="utf-8")}
    # files.py is the implementation; report/ publishes a staged folder file by file
    assert own == {"files.py", "report/__init__.py"}


def test_cli_common_reexports_the_file_helpers():
    from trtcheck import files
    from trtcheck.cli import common

    for name in ("check_output_file", "refuse_output_over_inputs", "write_text_atomic",
                 "output_parent", "made_folders_removed_on_failure", "input_files"):
        assert getattr(common, name) is getattr(files, name)
