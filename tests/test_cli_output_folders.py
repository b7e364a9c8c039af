"""Every command that writes an output file creates the missing folders above it, through
the one helper in trtcheck/cli/common.py, and still never replaces a file without
--overwrite."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from trtcheck.testing import synthetic_results as g
import onnx
import pytest

from tests.conftest import assert_one_line_error
from trtcheck.errors import InputError
from trtcheck.load.precision_models import build_safe_model
from trtcheck.results import load_results

FAST = ["--warmup", "0", "--min-duration", "0.05", "--min-samples", "3"]
SYN = ["serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0", "--max-batch", "8",
       "--load", "burst:8", "--repeats", "1", "--warmup-requests", "1"]


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("fixes-model") / "safe.onnx"
    onnx.save_model(build_safe_model(), str(p))
    return p


@pytest.fixture(scope="module")
def results_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("fixes-results")
    a = g.write(g.results({1: 2.0, 8: 9.0}, n=300, seed=1), d / "a.json")
    b = g.write(g.results({1: 2.0, 8: 9.0}, n=300, seed=2), d / "b.json")
    return a, b


def test_bench_creates_missing_folders(cli, small_model, tmp_path):
    out = tmp_path / "some" / "missing" / "dir" / "results.json"
    res = cli("bench", str(small_model), "--batch", "1", *FAST, "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert load_results(out).bench[0].batches[0].batch_size == 1
    # the file now exists: a second run refuses to replace it and keeps it
    before = out.read_bytes()
    res = cli("bench", str(small_model), "--batch", "1", *FAST, "-o", str(out))
    assert_one_line_error(res, 2, "already exists", "--overwrite")
    assert out.read_bytes() == before


def test_precision_creates_missing_folders(cli, small_model, tmp_path):
    out = tmp_path / "p" / "q" / "precision.json"
    res = cli("precision", str(small_model), "--samples", "1", "--no-localize", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert load_results(out).precision is not None


def test_serve_creates_missing_folders(cli, tmp_path):
    out = tmp_path / "s" / "t" / "serve.json"
    res = cli(*SYN, "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert load_results(out).serve is not None


def test_advise_creates_missing_folders_and_keeps_files(cli, tmp_path):
    out = tmp_path / "a" / "b" / "advice.json"
    args = ["advise", "--latency-curve", "1:1,8:4", "--arrival-rate", "100",
            "--requests", "200", "-o", str(out)]
    res = cli(*args)
    assert res.returncode == 0, res.stderr
    assert load_results(out).advice is not None
    before = out.read_bytes()
    res = cli(*args)
    assert_one_line_error(res, 2, "already exists")
    assert out.read_bytes() == before


@pytest.mark.parametrize("fmt,name", [("md", "c.md"), ("html", "c.html"), ("json", "c.json"),
                                      ("text", "c.txt")])
def test_compare_creates_missing_folders(cli, results_pair, tmp_path, fmt, name):
    a, b = results_pair
    out = tmp_path / "x" / "y" / name
    res = cli("compare", str(a), str(b), "--format", fmt, "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert out.stat().st_size > 0
    if fmt == "json":
        json.loads(out.read_text())


def test_gate_summaries_create_missing_folders(cli, results_pair, tmp_path):
    a, _ = results_pair
    pol = tmp_path / "policy.yaml"
    pol.write_text("version: 1\nbudgets:\n  - bench.batch[1].median_ms <= 1000 ms\n")
    junit = tmp_path / "ci" / "junit" / "gate.xml"
    md = tmp_path / "ci" / "md" / "gate.md"
    res = cli("gate", str(a), "--policy", str(pol), "--junit-xml", str(junit),
              "--markdown", str(md))
    assert res.returncode == 0, res.stderr
    assert junit.read_text().startswith("<?xml") and md.read_text().strip()


def test_report_creates_missing_folders(cli, results_pair, tmp_path):
    a, _ = results_pair
    out = tmp_path / "r" / "s" / "report"
    res = cli("report", "--from", str(a), "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert (out / "report.html").is_file()


def test_preflight_strip_prefix_creates_missing_folders(cli, rtx_conv_plan, tmp_path):
    plan = rtx_conv_plan.read_bytes()
    meta = json.dumps({"author": "exporter"}).encode()
    src = tmp_path / "yolo.engine"
    src.write_bytes(struct.pack("<i", len(meta)) + meta + plan)
    out = tmp_path / "clean" / "plans" / "model.plan"
    res = cli("preflight", str(src), "--strip-prefix", "-o", str(out))
    assert "Traceback" not in res.stderr
    assert out.read_bytes() == plan
    # a source without a prefix fails and leaves none of the folders it would have made
    out2 = tmp_path / "nothing" / "here" / "model.plan"
    res = cli("preflight", str(out), "--strip-prefix", "-o", str(out2))
    assert_one_line_error(res, 2, "no prefix")
    assert not (tmp_path / "nothing").exists()


@pytest.mark.parametrize("command", ["bench", "serve", "advise"])
def test_file_in_the_way_is_one_line_before_any_work(cli, small_model, tmp_path, command):
    (tmp_path / "file").write_text("x")
    out = str(tmp_path / "file" / "sub" / "r.json")
    args = {"bench": ["bench", str(small_model), "--batch", "1", *FAST],
            "serve": SYN,
            "advise": ["advise", "--latency-curve", "1:1", "--arrival-rate", "10"]}[command]
    res = cli(*args, "-o", out)
    assert_one_line_error(res, 2, "cannot write", "not a writable folder")
    assert (tmp_path / "file").read_text() == "x"


def test_output_parent_removes_only_the_folders_it_made(tmp_path):
    from trtcheck.cli.common import output_parent

    (tmp_path / "kept").mkdir()
    target = tmp_path / "kept" / "new1" / "new2" / "r.json"
    with pytest.raises(RuntimeError), output_parent(target):
        assert target.parent.is_dir()
        raise RuntimeError("the write failed")
    assert (tmp_path / "kept").is_dir() and not (tmp_path / "kept" / "new1").exists()
    with output_parent(target):
        target.write_text("ok")
    assert target.read_text() == "ok"
    (tmp_path / "blocker").write_text("x")
    with pytest.raises(InputError, match="cannot create the folder"), \
            output_parent(tmp_path / "blocker" / "sub" / "r.json"):
        pass
