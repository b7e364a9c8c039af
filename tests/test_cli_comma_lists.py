"""QA pass 4:

* `build --precision fp32,fp32` built one plan, then failed with "exists; not
  overwriting": a comma list naming an entry twice is refused before any work (build and
  precision --precision, --batch of bench/report/advise, serve --window-ms/--max-batch/
  --preferred-batch/--load, report --precision).
* `build --shapes foo:1x3x224x224` (no input 'foo') said input 'x' needs a profile; it
  now names 'foo' and lists the model's inputs.
* `preflight --strip-prefix -o /proc/c.plan` was an internal error (exit 4); -o goes
  through the shared output checks (exit 2, one line; missing folders are created).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from trtcheck.cli import main


@pytest.fixture
def model(tiny_relu_model):
    return tiny_relu_model


def one_line_error(args, capsys, *needles, code=2):
    with pytest.raises(SystemExit) as e:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert e.value.code == code and len(lines) == 1 and lines[0].startswith("error:"), err
    assert "; hint: " in lines[0] and "internal error" not in err, err
    for n in needles:
        assert n in lines[0], (n, err)
    return lines[0]


def test_build_duplicate_precision(model, tmp_path, capsys):
    out = tmp_path / "engines"
    one_line_error(["build", model, "--precision", "fp32,fp16,fp32", "--shapes",
                    "x:1x3x4x4", "-o", out], capsys, "--precision names fp32 more than once")
    assert not out.exists()  # refused before the folder is made or a runtime imported


def test_build_unknown_shape_name(model, tmp_path, capsys):
    out = tmp_path / "engines"
    line = one_line_error(["build", model, "--shapes", "foo:1x3x224x224", "-o", out],
                          capsys, "'foo'", "the model's inputs are 'x'", "--shapes")
    assert "dynamic shape" not in line and "profile is needed" not in line
    line = one_line_error(["build", model, "--min-shapes", "bar:1x3x4x4", "--max-shapes",
                           "bar:1x3x8x8", "-o", out], capsys, "'bar'", "'x'")
    assert "--min-shapes" in line and "--max-shapes" in line
    assert not out.exists()


@pytest.mark.parametrize("args,needle", [
    (["bench", "{model}", "--batch", "1,2,1"], "--batch names 1 more than once"),
    (["report", "{model}", "--batch", "4,4", "-o", "{tmp}/rep"], "--batch names 4"),
    (["report", "{model}", "--precision", "fp16,fp16", "--shapes", "x:1x3x4x4", "-o",
      "{tmp}/rep"], "--precision names fp16"),
    (["precision", "{model}", "--precision", "fp16,fp16"], "--precision names fp16"),
    (["serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0,5,0"],
     "--window-ms names 0.0 more than once"),
    (["serve", "--synthetic-curve", "1:0.3,8:1", "--max-batch", "8,8"],
     "--max-batch names 8"),
    (["serve", "--synthetic-curve", "1:0.3,8:1", "--preferred-batch", "4,4"],
     "--preferred-batch names 4"),
    (["serve", "--synthetic-curve", "1:0.3,8:1", "--load", "burst:8,burst:8"],
     "--load names burst:8"),
])
def test_duplicate_list_entries(args, needle, model, tmp_path, capsys):
    args = [a.format(model=model, tmp=tmp_path) for a in args]
    one_line_error(args, capsys, needle)
    assert not (tmp_path / "rep").exists()


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
