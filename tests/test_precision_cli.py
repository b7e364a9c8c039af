"""``trtcheck precision`` through ``python -m trtcheck`` (real exit codes and streams)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TRTCHECK_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "trtcheck", *args], capture_output=True,
                          text=True, env=env, timeout=300, check=False)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import onnx

    from trtcheck.load.precision_models import build_overflow_model, build_safe_model

    d = tmp_path_factory.mktemp("precision-cli")
    out = {}
    for name, model in (("overflow", build_overflow_model()), ("safe", build_safe_model())):
        out[name] = d / f"{name}.onnx"
        onnx.save_model(model, str(out[name]))
    # a candidate with another input name, and one with other shapes
    renamed = build_safe_model()
    renamed.graph.input[0].name = "images"
    renamed.graph.node[0].input[0] = "images"
    out["renamed"] = d / "renamed.onnx"
    onnx.save_model(renamed, str(out["renamed"]))
    return out


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_overflow_model_exits_1_and_names_the_node(models: dict[str, Path]) -> None:
    p = run_cli("precision", str(models["overflow"]), "--samples", "2")
    assert p.returncode == 1, p.stderr
    line = _one_error_line(p.stderr)
    assert "precision check failed for fp16" in line and "'square'" in line
    assert "hint: keep the overflowing nodes" in line
    assert "beyond FP16 range: #3 square (Pow)" in p.stdout
    assert "result: FAIL" in p.stdout


def test_safe_model_exits_0_and_json_has_flat_gate_paths(models: dict[str, Path],
                                                          tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    p = run_cli("precision", str(models["safe"]), "--samples", "2", "--format", "json",
                "-o", str(out))
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)  # stdout is JSON only; progress went to stderr
    v = data["precision"]["variants"]["fp16"]
    assert v["passed"] is True
    assert v["outputs"]["y"]["cosine_similarity"] > 0.9999
    assert v["tolerance"]["atol"] == 1e-2
    assert json.loads(out.read_text())["precision"]["passed"] is True
    # the results file is never overwritten without asking
    p = run_cli("precision", str(models["safe"]), "-o", str(out))
    assert p.returncode == 2 and "already exists" in _one_error_line(p.stderr)


def test_tolerance_override_from_cli_can_fail_a_healthy_variant(models: dict[str, Path]) -> None:
    # Polygraphy's default 1e-5 tolerances fail the healthy FP16 variant: exit 1
    p = run_cli("precision", str(models["safe"]), "--samples", "2", "--atol", "1e-5",
                "--rtol", "fp16=1e-5")
    assert p.returncode == 1, p.stderr
    assert "outside atol=1e-05 and rtol=1e-05" in p.stdout


def test_candidate_with_other_input_names_exits_2(models: dict[str, Path]) -> None:
    p = run_cli("precision", str(models["safe"]), "--candidate", f"fp16={models['renamed']}")
    assert p.returncode == 2
    line = _one_error_line(p.stderr)
    assert "different inputs" in line and "'images'" in line and "'x'" in line


def test_candidate_with_other_shapes_exits_2(models: dict[str, Path], tmp_path: Path) -> None:
    import onnx

    from trtcheck.load import precision_models as pm

    old = pm.FEATURES
    try:
        pm.FEATURES = 32
        narrow = pm.build_safe_model()
    finally:
        pm.FEATURES = old
    path = tmp_path / "narrow.onnx"
    onnx.save_model(narrow, str(path))
    p = run_cli("precision", str(models["safe"]), "--candidate", f"fp16={path}")
    assert p.returncode == 2
    assert "axis 1 is 64 in the reference" in _one_error_line(p.stderr)


def test_npz_missing_an_input_exits_2(models: dict[str, Path], tmp_path: Path) -> None:
    npz = tmp_path / "in.npz"
    np.savez(npz, images=np.zeros((1, 64), np.float32))
    p = run_cli("precision", str(models["safe"]), "--inputs", str(npz))
    assert p.returncode == 2
    line = _one_error_line(p.stderr)
    assert "has no array for input(s) 'x'" in line and "'images'" in line


def test_inputs_dir_runs_each_sample(models: dict[str, Path], tmp_path: Path) -> None:
    d = tmp_path / "samples"
    d.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        np.savez(d / f"s{i}.npz", x=rng.random((1, 64), dtype=np.float32))
    p = run_cli("precision", str(models["safe"]), "--inputs-dir", str(d), "--format", "json")
    assert p.returncode == 0, p.stderr
    inputs = json.loads(p.stdout)["precision"]["inputs"]
    assert inputs["source"] == "npz-dir" and inputs["sample_count"] == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    p = run_cli("precision", str(models["safe"]), "--inputs-dir", str(empty))
    assert p.returncode == 2 and "no .npz files" in _one_error_line(p.stderr)


@pytest.mark.parametrize("args,needle", [
    (["--atol", "fp16=abc"], "is not a number"),
    (["--atol", "fp4=1e-3"], "unknown precision"),
    (["--precisions", "int8"], "cannot build a int8 variant"),
    (["--candidate", "fp16"], "expected PRECISION=PATH"),
    (["--candidate", "fp16=/nonexistent.plan"], "candidate file not found"),
    (["--keep-fp32-nodes", "nope"], "unknown node"),
    (["--inputs", "a.npz", "--inputs-dir", "."], "not both"),
])
def test_bad_options_exit_2(models: dict[str, Path], args: list[str], needle: str) -> None:
    p = run_cli("precision", str(models["safe"]), *args)
    assert p.returncode == 2, p.stderr
    assert needle in _one_error_line(p.stderr)


def test_bench_and_markdown(models: dict[str, Path]) -> None:
    p = run_cli("precision", str(models["safe"]), "--samples", "1", "--bench", "--format", "md")
    assert p.returncode == 0, p.stderr
    assert "| fp32 (reference) |" in p.stdout and "| fp16 |" in p.stdout
    # ONNX Runtime's CPU provider has no FP16 kernels: no speed-up claimed
    assert "x the FP32 speed" not in p.stdout
    assert "speed-up not measurable on this backend" in p.stdout


def test_help_lists_the_command() -> None:
    p = run_cli("--help")
    assert p.returncode == 0 and "precision" in p.stdout
    p = run_cli("precision", "--help")
    assert p.returncode == 0 and "--inputs-dir" in p.stdout and "Exit codes" in p.stdout
