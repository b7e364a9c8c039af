"""QA pass 4, item 1: ``max(...)``/``min(...)`` name the member that holds the aggregate,
certify every member a universal limit needs (max <= B, min >= B) and the named member for
an existential one (max >= B, min <= B), and show the same value in every output format."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import gate_synth as g  # noqa: E402

from trtcheck.cli import main  # noqa: E402


def _mixed(tmp_path: Path, n_small: int, n_large: int) -> Path:
    """Batch 1 (fast, ``n_small`` samples) and batch 16 (slow, ``n_large`` samples)."""
    res = g.results({1: 2.0}, n=n_small, seed=3)
    other = g.results({16: 40.0}, n=n_large, seed=4)
    res.bench[0].batches.append(other.bench[0].batches[0])
    return g.write(res, tmp_path / "mixed.json")


def _run(tmp_path: Path, results: Path, policy: str, capsys, *extra: str):
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy)
    with pytest.raises(SystemExit) as e:
        main(["gate", str(results), "--policy", str(pol), *extra])
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


def _json(tmp_path, results, policy, capsys):
    code, out, _ = _run(tmp_path, results, policy, capsys, "--format", "json")
    return code, json.loads(out)


def test_max_names_and_values_the_argmax_member_in_every_format(tmp_path, capsys):
    res = _mixed(tmp_path, 2000, 30)
    pol = "version: 1\nbudgets:\n  - max(bench.batch[*].p99_ms) <= 10 s\n"
    code, doc = _json(tmp_path, res, pol, capsys)
    chk = doc["checks"][0]
    assert code == 1 and chk["verdict"] == "not-certified"
    assert chk["element"] == "bench.batch[16].p99_ms"
    # the JSON value, the named element and the certification counts agree
    assert chk["samples"] == 30 and chk["value"] > 40.0
    assert chk["uncertified_members"] == ["bench.batch[16].p99_ms"]
    assert "bench.batch[16].p99_ms" in chk["message"] and "30 samples" in chk["message"]
    assert "bench.batch[1]" not in chk["message"]
    shown = f"{chk['value']:.4g}"
    code, out, _ = _run(tmp_path, res, pol, capsys, "--junit-xml", str(tmp_path / "g.xml"),
                        "--markdown", str(tmp_path / "g.md"))
    assert code == 1 and "bench.batch[16].p99_ms" in out and shown in out, out
    md = (tmp_path / "g.md").read_text().replace("\\", "")
    assert "bench.batch[16].p99_ms" in md and shown in md
    fail = ET.parse(tmp_path / "g.xml").getroot().find(".//failure")
    assert "bench.batch[16].p99_ms" in fail.get("message") and shown in fail.get("message")


def test_max_needs_every_member_certified(tmp_path, capsys):
    # the maximum (batch 16) has many samples and is certified; batch 1 is not
    res = _mixed(tmp_path, 30, 2000)
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - max(bench.batch[*].p99_ms) <= 10 s\n", capsys)
    chk = doc["checks"][0]
    assert code == 1 and chk["verdict"] == "not-certified" and chk["certified"] is False
    assert chk["element"] == "bench.batch[16].p99_ms" and chk["samples"] == 2000
    assert chk["uncertified_members"] == ["bench.batch[1].p99_ms"]
    assert "is certified, but 1 other member(s) are not" in chk["message"]


def test_min_le_certifies_the_argmin_member(tmp_path, capsys):
    # min(X) <= B holds through the minimum alone: that member must be certified (it
    # passed with no certification at all)
    res = _mixed(tmp_path, 30, 2000)
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - min(bench.batch[*].p99_ms) <= 10 s\n", capsys)
    chk = doc["checks"][0]
    assert code == 1 and chk["verdict"] == "not-certified"
    assert chk["element"] == "bench.batch[1].p99_ms" and chk["samples"] == 30
    res2 = _mixed(tmp_path, 2000, 30)
    code, doc = _json(tmp_path, res2, "version: 1\nbudgets:\n"
                      "  - min(bench.batch[*].p99_ms) <= 10 s\n", capsys)
    chk = doc["checks"][0]
    # batch 16's 30 samples do not matter for an existential limit
    assert code == 0 and chk["verdict"] == "pass" and chk["certified"] is True, chk
    assert chk["element"] == "bench.batch[1].p99_ms" and chk["samples"] == 2000


def test_min_ge_needs_every_member_and_fail_names_argmin(tmp_path, capsys):
    res = _mixed(tmp_path, 2000, 30)
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - min(bench.batch[*].p99_ms) >= 1 ms\n", capsys)
    chk = doc["checks"][0]
    # a lower limit on p99 is certified by few samples; every member was checked
    assert code == 0 and chk["certified"] is True and chk["element"] == "bench.batch[1].p99_ms"
    assert "for every member" in chk["message"]
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - min(bench.batch[*].p99_ms) >= 1 s\n", capsys)
    chk = doc["checks"][0]
    assert code == 1 and chk["verdict"] == "fail"
    assert chk["element"] == "bench.batch[1].p99_ms" and "bench.batch[1].p99_ms" in chk["message"]


def test_all_certified_passes(tmp_path, capsys):
    res = _mixed(tmp_path, 2000, 2000)
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - max(bench.batch[*].p99_ms) <= 10 s\n"
                      "  - min(bench.batch[*].p99_ms) <= 10 s\n", capsys)
    assert code == 0 and all(c["certified"] is True for c in doc["checks"]), doc
    assert [c["element"] for c in doc["checks"]] == ["bench.batch[16].p99_ms",
                                                      "bench.batch[1].p99_ms"]
