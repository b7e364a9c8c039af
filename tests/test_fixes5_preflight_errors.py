"""QA pass 4, item 3: a plan that can never load (error-severity finding, e.g. a JSON
prefix in front) makes ``trtcheck preflight`` exit 2 whatever runtime is installed here
(it exited 0 when no runtime was installed)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from trtcheck.cli import main
from trtcheck.inspection import plan_header as PH
from trtcheck.inspection.plan_header import Runtime, plan_info_from_bytes


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
