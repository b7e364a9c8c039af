"""The download helpers (``engines/fetch_triton.py``, ``engines/fetch_ppocr.py``): every
downloaded file is checked against its pinned SHA-256, and zip members with ``..`` or an
absolute name are refused; without the ``test`` extra ``fetch_triton.py`` says so in one line."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO
from trtcheck.files import check_sha256, sha256_of, zip_member_target
from trtcheck.testing.triton_server import load_fetch_triton


def _fetch_ppocr():
    spec = importlib.util.spec_from_file_location("fetch_ppocr_t",
                                                  REPO / "engines" / "fetch_ppocr.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def test_cached_files_match_their_pinned_hashes(ppocr):
    pp = _fetch_ppocr()
    for key, path in ppocr.items():
        assert sha256_of(path) == pp.MODEL_SHA256[key], key
    ft = load_fetch_triton()
    inst = ft.fetch()
    assert sha256_of(inst.server) == ft.SERVER_BINARY_SHA256


def test_a_file_with_another_hash_is_refused(tmp_path):
    f = tmp_path / "x.whl"
    f.write_bytes(b"not the pinned wheel")
    with pytest.raises(RuntimeError, match="not the pinned"):
        check_sha256(f, "0" * 64, "pkg==1.0")
    check_sha256(f, sha256_of(f).upper(), "pkg==1.0")  # the right one passes


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path, monkeypatch):
    ft = load_fetch_triton()
    fake = tmp_path / "nvidia_pytriton-0.7.0-py3-none-manylinux_2_35_x86_64.whl"
    with zipfile.ZipFile(fake, "w") as zf:
        zf.writestr("pytriton/tritonserver/bin/tritonserver", b"#!/bin/sh\n")
    monkeypatch.setattr(ft, "_pip_download", lambda package, dest, *extra: fake)
    with pytest.raises(RuntimeError, match="sha256"):
        ft._checked_download(ft.SERVER_PACKAGE, ft.SERVER_WHEEL_SHA256, str(tmp_path))


@pytest.mark.parametrize("name", ["../evil", "a/../../evil", "/etc/evil", "\\\\host\\x",
                                  "C:\\evil", "a/..", ".."])
def test_zip_members_with_dotdot_or_absolute_names_are_refused(tmp_path, name):
    with pytest.raises(RuntimeError, match="refusing zip member"):
        zip_member_target(tmp_path, name)


def test_extract_refuses_a_traversing_member_and_writes_nothing_outside(tmp_path):
    ft = load_fetch_triton()
    z = tmp_path / "w.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("pytriton/tritonserver/ok.txt", b"ok")
        zf.writestr("pytriton/tritonserver/../../../escaped.txt", b"bad")
    dest = tmp_path / "dest"
    with zipfile.ZipFile(z) as zf:
        good, bad = zf.infolist()
        ft._extract(zf, good, dest)
        with pytest.raises(RuntimeError, match="refusing zip member"):
            ft._extract(zf, bad, dest)
    assert (dest / "pytriton" / "tritonserver" / "ok.txt").read_bytes() == b"ok"
    assert not (tmp_path / "escaped.txt").exists()
    assert zip_member_target(dest, "a/b.txt") == dest.resolve() / "a" / "b.txt"


def test_fetch_triton_without_filelock_is_one_line_naming_the_test_extra(tmp_path):
    # as after `pip install ".[cpu]"`: filelock (test extra only) cannot be imported
    code = ("import runpy, sys; sys.modules['filelock'] = None; "
            "sys.argv = ['engines/fetch_triton.py']; "
            "runpy.run_path('engines/fetch_triton.py', run_name='__main__')")
    env = {**os.environ, "TRTCHECK_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60, env=env, check=False)
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        'error: engines/fetch_triton.py needs filelock (the test extra); '
        'hint: pip install -e ".[test]"']
