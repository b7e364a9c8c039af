"""The public Python API (trtcheck.api, re-exported by the package root): every name is
documented, returns the records its command prints, and raises the typed errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import trtcheck
from cli_helper import invoke
from trtcheck import api
from trtcheck.errors import InputError, UsageError

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"


def test_every_public_name_is_documented_and_re_exported():
    for name in api.__all__:
        assert getattr(api, name).__doc__, name
    assert set(trtcheck.__all__) == {"__version__", "api"} | (set(api.__all__)
                                                              - {"report", "load"})
    for name in trtcheck.API_NAMES:
        assert getattr(trtcheck, name) is getattr(api, name)
    assert trtcheck.api is api


def test_import_trtcheck_stays_light():
    code = ("import sys, trtcheck; heavy = [m for m in ('trtcheck.api', 'trtcheck.pipeline',"
            " 'numpy', 'onnx') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout
    assert out.strip() == "[]"


def test_advise_returns_what_the_command_prints():
    adv = api.advise({1: 2.0, 8: 6.0}, arrival_rate_per_s=500.0)
    res = invoke("advise", "--latency-curve", "1:2,8:6", "--arrival-rate", "500",
                 "--format", "json")
    doc = json.loads(res.stdout)
    assert adv.recommendation.model_dump(mode="json") == doc["recommendation"]
    assert adv.export is not None and "max_batch_size" in adv.export.triton_config_pbtxt


def test_gate_compare_and_load_take_files_and_models(tmp_path):
    csv = DATA / "perf-analyzer" / "concurrency.csv"
    policy = tmp_path / "p.yaml"
    policy.write_text("budgets:\n  - imported.levels[*].server_queue_ms <= 2.15 ms\n")
    report = api.gate(csv, policy)
    assert report.passed is False and report.exit_code == 1  # concurrency 1: 2.172 ms
    loaded = api.load(csv)
    assert api.gate(loaded, policy).model_dump() == report.model_dump() | {
        "results": "results"}
    comp = api.compare(loaded, csv)
    assert [r.config for r in comp.serve] == ["perf_analyzer concurrency 1",
                                              "perf_analyzer concurrency 4"]


def test_inspect_an_onnx_model_and_trtexec_exports(tmp_path):
    import onnx

    from onnx_builders import small_classifier

    onnx.save(small_classifier(seed=0), str(tmp_path / "m.onnx"))
    insp = api.inspect(tmp_path / "m.onnx", shapes={"x": [1, 3, 32, 32]})
    assert type(insp).__name__ == "ModelInspection" and insp.compute is not None
    eng = api.inspect(DATA / "trtexec-exports" / "resnet18-a100-fp16")
    assert type(eng).__name__ == "EngineInspection" and eng.layers


def test_errors_are_the_typed_errors(tmp_path):
    with pytest.raises(InputError):
        api.load(tmp_path / "missing.json")
    with pytest.raises(UsageError):
        api.report(DATA / "perf-analyzer" / "concurrency.csv", tmp_path / "out",
                   batch_sizes=[1])
    assert not (tmp_path / "out").exists()
