"""A real TensorRT-RTX FP16 engine as the precision candidate (built on CPU).

The engine is built by ``trtcheck.measure.bench.build.build_engine`` with TensorRT-RTX on this
CPU-only machine; running it needs a supported NVIDIA GPU, so here the comparison must
stop with exit code 3 and one clear line (never a traceback, never a silent pass).
On a GPU machine with TensorRT-RTX the same command compares the engine for real.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.rtx
ROOT = Path(__file__).resolve().parent.parent


def test_rtx_fp16_engine_candidate_reaches_the_runtime(tmp_path: Path) -> None:
    import onnx

    from trtcheck.load.precision_models import build_safe_model
    from trtcheck.measure.bench.build import build_engine

    model = tmp_path / "safe.onnx"
    onnx.save_model(build_safe_model(), str(model))
    plan = tmp_path / "safe.fp16.plan"
    build_engine(model, plan, runtime="tensorrt_rtx", precision="fp16",
                 shapes={"x": ([1, 64], [1, 64], [1, 64])})
    assert plan.is_file() and plan.read_bytes()[:4] == b"vtrt"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "trtcheck", "precision", str(model),
                        "--candidate", f"fp16={plan}", "--samples", "1"],
                       capture_output=True, text=True, env=env, timeout=300, check=False)
    if p.returncode == 0:  # a machine with a GPU TensorRT-RTX supports: a real comparison
        assert "result: PASS" in p.stdout
        return
    assert p.returncode == 3, p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in p.stderr
    assert "GPU" in errors[0] or "CUDA" in errors[0]
