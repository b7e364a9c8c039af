"""trtcheck preflight: a plan that can never load (an error-severity finding, e.g. a JSON
prefix in front) exits 2 whatever runtime is installed here; --strip-prefix -o goes
through the shared output checks (exit 2, one line; missing folders are created)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from trtcheck.cli import main
from trtcheck.load import plan_header as PH
from trtcheck.load.plan_header import Runtime, plan_info_from_bytes
import json

from tests.conftest import main_one_line_error as one_line_error


def _plan(version=(10, 8, 0, 43)) -> bytes:
    body = b"\x00\n" * 200
    total = 32 + len(body)
    return b"ftrt" + b"\0" * 12 + struct.pack("<Q", total) + bytes(version) + b"ftrt" + body


PREFIX = b'{"a": 12}\n'  # 10 bytes of JSON text, as the QA file had

RUNTIMES = {
    "none": {},
    "same": {"tensorrt": Runtime("tensorrt", "10.8.0.43", "tensorrt-cu12")},
    "lean-newer": {"tensorrt": Runtime("tensorrt", "10.9.0.34", "tensorrt-lean-cu12",
                                       lean=True)},
    "rtx-only": {"tensorrt_rtx": Runtime("tensorrt_rtx", "1.7.1.116", "tensorrt-rtx-cu13")},
}


@pytest.mark.parametrize("which", sorted(RUNTIMES))
def test_prefixed_plan_exits_2_whatever_runtime(tmp_path: Path, capsys, monkeypatch, which):
    assert len(PREFIX) == 10
    p = tmp_path / "prefixed.plan"
    p.write_bytes(PREFIX + _plan())
    monkeypatch.setattr(PH, "installed_runtimes", lambda: RUNTIMES[which])
    with pytest.raises(SystemExit) as e:
        main(["preflight", str(p)])
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert "prefix" in err or "precede" in err, err
    info = plan_info_from_bytes(PREFIX + _plan(), runtimes=RUNTIMES[which])
    assert info.can_load is False and info.verdict.startswith("cannot load"), info.verdict


def test_clean_plan_without_runtime_exits_3(tmp_path: Path, capsys, monkeypatch):
    p = tmp_path / "clean.plan"
    p.write_bytes(_plan())
    monkeypatch.setattr(PH, "installed_runtimes", lambda: {})
    with pytest.raises(SystemExit) as e:
        main(["preflight", str(p)])
    out = capsys.readouterr().out
    assert e.value.code == 3, out
    assert "cannot tell whether it loads" in out



def _prefixed_plan(tmp_path: Path) -> Path:
    body = b"\x00\n" * 200
    plan = (b"ftrt" + b"\0" * 12 + struct.pack("<Q", 32 + len(body)) + bytes((10, 8, 0, 43))
            + b"ftrt" + body)
    meta = json.dumps({"author": "exporter"}).encode()
    p = tmp_path / "yolo.engine"
    p.write_bytes(struct.pack("<i", len(meta)) + meta + plan)
    return p


@pytest.mark.parametrize("target", ["/proc/c.plan", "/proc/self/nope/c.plan"])
def test_preflight_strip_prefix_unwritable_output(target, tmp_path, capsys):
    one_line_error(["preflight", _prefixed_plan(tmp_path), "--strip-prefix", "-o", target],
                   capsys, target)


def test_preflight_strip_prefix_output_rules(tmp_path, capsys):
    p = _prefixed_plan(tmp_path)
    existing = tmp_path / "clean.plan"
    existing.write_bytes(b"mine")
    one_line_error(["preflight", p, "--strip-prefix", "-o", existing], capsys,
                   "exists; not overwriting")
    assert existing.read_bytes() == b"mine"
    one_line_error(["preflight", p, "--strip-prefix", "-o", tmp_path], capsys,
                   "is a directory")
    one_line_error(["preflight", p, "-o", tmp_path / "x.plan"], capsys, "--strip-prefix")
    one_line_error(["preflight", tmp_path / "missing.engine", "--strip-prefix", "-o",
                    tmp_path / "y.plan"], capsys, "missing.engine")
    assert not (tmp_path / "y.plan").exists()


def test_preflight_strip_prefix_creates_missing_folders(tmp_path, capsys):
    p = _prefixed_plan(tmp_path)
    out = tmp_path / "new" / "dir" / "clean.plan"
    with pytest.raises(SystemExit):
        main(["preflight", str(p), "--strip-prefix", "-o", str(out)])
    capsys.readouterr()
    assert out.read_bytes()[:4] == b"ftrt"
