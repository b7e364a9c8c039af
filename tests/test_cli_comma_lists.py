"""Comma lists: a list naming an entry twice is refused before any work (build and
precision --precision, --batch of bench/report/advise, serve --window-ms/--max-batch/
--preferred-batch/--load, report --precision)."""

from __future__ import annotations

import pytest

from tests.conftest import main_one_line_error as one_line_error


@pytest.fixture
def model(tiny_relu_model):
    return tiny_relu_model


def test_build_duplicate_precision(model, tmp_path, capsys):
    out = tmp_path / "engines"
    one_line_error(["build", model, "--precision", "fp32,fp16,fp32", "--shapes",
                    "x:1x3x4x4", "-o", out], capsys, "--precision names fp32 more than once")
    assert not out.exists()  # refused before the folder is made or a runtime imported


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
