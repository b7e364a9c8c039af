"""The model cache (demo model) as a user's environment meets it."""

import os
import stat

from tests.conftest import assert_one_line_error


def test_unusable_cache_folder_is_an_environment_error(cli, tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    res = cli("report", "--demo", "-o", str(tmp_path / "out"),
              env={"TRTCHECK_CACHE_DIR": str(blocker / "cache")})
    assert_one_line_error(res, 3, "cache", "TRTCHECK_CACHE_DIR")
    assert not (tmp_path / "out").exists()


def test_demo_model_in_the_cache_is_readable_by_others(tmp_path, monkeypatch):
    monkeypatch.setenv("TRTCHECK_CACHE_DIR", str(tmp_path / "cache"))
    old = os.umask(0o022)
    try:
        from trtcheck.load.demo import demo_model_path

        path = demo_model_path()
    finally:
        os.umask(old)
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode & 0o044 == 0o044, oct(mode)  # group/other can read a shared cache
