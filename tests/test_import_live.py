"""perf_analyzer's CSV and Triton's statistics, made by the real tools against the real
test Triton (``tb_linear`` busy-waits T(b) = 1 + 0.25 b ms), read by gate and advise.

perf_analyzer comes from the ``tritonclient==2.41.0`` wheel (engines/fetch_triton.py); it
needs ``libb64.so.0d``: the Debian package ``libb64-0d`` (.ci/run installs it) or, where
it is missing, the copy inside the Triton wheel's libraries, linked under its own name.
"""

from __future__ import annotations

import ctypes.util
import json
import subprocess
from pathlib import Path

import pytest

from cli_helper import invoke
from trtcheck.results.documents import load_results_input


def _perf_analyzer_env(tmp: Path) -> tuple[Path, dict[str, str]]:
    from trtcheck.testing.triton_server import load_fetch_triton

    fetch = load_fetch_triton()
    try:
        pa = fetch.fetch_perf_analyzer()
    except Exception as exc:  # noqa: BLE001 - a clear failure, never a skip
        pytest.fail(f"cannot fetch perf_analyzer (engines/fetch_triton.py): {exc}")
    env = fetch.perf_analyzer_env()
    if ctypes.util.find_library("b64") is None:
        libs = fetch.fetch().libs
        found = sorted(libs.glob("libb64*.so*"))
        if not found:
            pytest.fail("libb64.so.0d is missing (apt-get install libb64-0d)")
        (tmp / "lib").mkdir(exist_ok=True)
        link = tmp / "lib" / "libb64.so.0d"
        if not link.exists():
            link.symlink_to(found[0])
        env["LD_LIBRARY_PATH"] = f"{tmp / 'lib'}:{env.get('LD_LIBRARY_PATH', '')}"
    return pa, env


@pytest.mark.triton
def test_a_csv_perf_analyzer_writes_is_gated_and_the_statistics_map(triton, tmp_path):
    pa, env = _perf_analyzer_env(tmp_path)
    csv = tmp_path / "pa.csv"
    proc = subprocess.run(
        [str(pa), "-m", "tb_linear", "-u", f"127.0.0.1:{triton.http_port}", "-i", "http",
         "--shape", "INPUT0:4", "--concurrency-range=1:2", "--measurement-interval=500",
         "--max-trials=3", "--stability-percentage=1000", "-f", str(csv)],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run = load_results_input(str(csv)).imported
    assert [lv.concurrency for lv in run.levels] == [1, 2]
    for lv in run.levels:
        # the model busy-waits at least 1.25 ms per execution: no number can be below it
        assert lv.server_compute_infer_ms >= 1.25
        assert lv.p50_ms >= 1.25 and lv.p99_ms >= lv.p50_ms
        assert lv.throughput_inferences_per_s > 0
    policy = tmp_path / "p.yaml"
    policy.write_text("budgets:\n  - imported.levels[*].server_compute_infer_ms >= 1.25 ms\n"
                      "  - imported.levels[*].throughput_inferences_per_s > 0 inferences/s\n")
    res = invoke("gate", str(csv), "--policy", str(policy))
    assert res.returncode == 0, res.stdout + res.stderr
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps(triton.stats("tb_linear")))
    (model,) = load_results_input(str(stats)).imported.models
    assert model.model == "tb_linear" and model.inference_count >= sum(
        1 for _ in run.levels)
    # every batch size the server formed busy-waited at least 1 + 0.25 b ms (its mean
    # compute per execution cannot be less; on a loaded machine it is more, which is why
    # advising from a live dump is checked on the committed one, tests/data/perf-analyzer)
    assert model.batches
    for b in model.batches:
        assert b.compute_infer_ms >= 1.0 + 0.25 * b.batch_size
        assert b.compute_ms >= b.compute_infer_ms
