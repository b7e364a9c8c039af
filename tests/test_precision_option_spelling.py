"""`--precision LIST` is the documented name in `precision` (as in `report` and `build`);
`precision --precisions` still works, hidden, for existing scripts."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from tests.conftest import REPO, assert_one_line_error

ONE = ["--samples", "1", "--no-localize", "--format", "json"]


@pytest.fixture(scope="module")
def safe_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trtcheck.load.precision_models import build_safe_model

    p = tmp_path_factory.mktemp("precision-option") / "safe.onnx"
    onnx.save_model(build_safe_model(), str(p))
    return p


@pytest.mark.parametrize("command", ["precision", "report", "build"])
def test_help_documents_precision_not_precisions(cli, command):
    res = cli(command, "--help")
    assert res.returncode == 0, res.stderr
    assert "--precision " in res.stdout and "comma-separated" in res.stdout.lower()
    assert "--precisions" not in res.stdout


@pytest.mark.parametrize("spelling", ["--precision", "--precisions"])
def test_both_spellings_run_the_comparison(cli, safe_model, spelling):
    res = cli("precision", str(safe_model), spelling, "fp16", *ONE)
    assert res.returncode == 0, res.stderr
    assert list(json.loads(res.stdout)["precision"]["variants"]) == ["fp16"]


def test_spellings_agree_or_exit_2(cli, safe_model):
    res = cli("precision", str(safe_model), "--precision", "fp16", "--precisions", "fp16", *ONE)
    assert res.returncode == 0, res.stderr
    res = cli("precision", str(safe_model), "--precision", "fp16", "--precisions", "int8", *ONE)
    assert_one_line_error(res, 2, "--precision", "disagree")


def test_messages_name_the_documented_option(cli, safe_model):
    res = cli("precision", str(safe_model), "--precision", "fp16", "--candidate",
              f"int8={safe_model}", *ONE)
    line = assert_one_line_error(res, 2, "which --precision does not list",
                                 "--precision fp16,int8")
    assert "--precisions" not in line


def test_docs_use_the_documented_spelling():
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        assert "--precisions " not in text.replace("`--precisions` still works", ""), doc
