"""The model name in the exported Triton/TorchServe settings.

--model-name must be a Triton model folder name (ASCII letters, digits, _ - ., not first);
names taken from files are made so; and the exports escape whatever name they are given.
"""

from __future__ import annotations

import json

import pytest

from trtcheck.export.settings import (
    check_model_name,
    export_settings,
    pbtxt_string,
    safe_model_name,
)
from trtcheck.cli import main
from trtcheck.errors import InputError
from trtcheck.results.advice import SimPrediction

P = SimPrediction(window_us=2000, max_batch_size=8, instances=2, arrival_rate_per_s=1,
                  stable=True, utilisation=0.5)


@pytest.mark.parametrize("name", ['a"b', "a b", "a/b", "..", ".hidden", "-x", "", "é",
                                  "x" * 129, "a\nb"])
def test_cli_refuses_names_that_are_no_triton_folder(name, capsys):
    with pytest.raises(SystemExit) as e:
        main(["advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "100",
              "--model-name", name])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert e.value.code == 2 and len(lines) == 1, err
    assert lines[0].startswith("error: model name") and "hint:" in lines[0]


@pytest.mark.parametrize("name", ["resnet18", "resnet18_fp16.v2", "m-1", "_x", "x" * 128])
def test_valid_names_pass_unchanged(name):
    assert check_model_name(name) == name


def test_names_from_files_are_made_valid():
    assert safe_model_name("my model (1)") == "my_model__1_"
    assert safe_model_name('.a"b') == "a_b"
    assert safe_model_name("...") == "model"
    for text in ("my model (1)", "ünï", "-x", "a" * 300):
        check_model_name(safe_model_name(text))


def test_pbtxt_string_round_trips_through_protobuf_text_format():
    from google.protobuf import text_format
    from onnx import ModelProto

    for name in ['a"b', "a\\b", "tab\there", "nl\nx", "ctl\x01", "plain"]:
        msg = text_format.Parse(f"producer_name: {pbtxt_string(name)}", ModelProto())
        assert msg.producer_name == name


def test_exports_escape_any_name():
    name = 'a"b\\c d'
    e = export_settings(P, name)
    first = e.triton_config_pbtxt.splitlines()[0]
    assert first == 'name: "a\\"b\\\\c d"'
    props = e.torchserve_config.splitlines()
    models = next(ln for ln in props if ln.startswith("models="))
    # java.util.Properties unescapes a backslash pair to one backslash
    value = models[len("models="):].replace("\\\\", "\x00").replace("\\", "").replace(
        "\x00", "\\")
    assert list(json.loads(value)) == [name]
    curl = next(ln for ln in props if "curl" in ln)
    assert "url=a%22b%5Cc%20d.mar" in curl


def test_plain_names_keep_the_documented_layout():
    e = export_settings(P, "resnet")
    assert e.triton_config_pbtxt.startswith('name: "resnet"\n')
    assert 'models={"resnet": {"1.0": {"batchSize": 8, "maxBatchDelay": 2, "minWorkers": 2, ' \
           '"maxWorkers": 2}}}' in e.torchserve_config
    assert "url=resnet.mar&" in e.torchserve_config


def test_check_model_name_raises_input_error():
    with pytest.raises(InputError):
        check_model_name('a"b')
