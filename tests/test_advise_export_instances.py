"""The Triton export's instance groups add up to the recommended instance
count exactly, say the arithmetic, and use KIND_CPU when T(b) was measured on a CPU."""

from __future__ import annotations

import re

import pytest

from trtcheck.export.settings import (
    TRITON_GPUS_PER_SERVER,
    TritonModelSpec,
    device_kind_from_results,
    export_settings,
)

IDS = TritonModelSpec(gpus=tuple(range(TRITON_GPUS_PER_SERVER)))  # GPU ids asked for
from trtcheck.results.advice import SimPrediction


def _p(n):
    return SimPrediction(window_us=10000, max_batch_size=32, instances=n, arrival_rate_per_s=1,
                         stable=True, utilisation=0.8)


def _gpus(line):
    return len(re.search(r"gpus: \[ ([0-9, ]+) \]", line).group(1).split(","))


def _instances_in(cfg: str) -> int:
    """Total instances the config describes: count x GPUs of the active group on every
    server using it, plus the last server's commented group."""
    lines = cfg.splitlines()
    active = [ln for ln in lines if "kind: KIND_GPU" in ln and not ln.startswith("#")]
    assert len(active) == 1, cfg  # one instance_group per config file
    per = _gpus(active[0])
    commented = [ln for ln in lines if "kind: KIND_GPU" in ln and ln.startswith("#")]
    m = re.search(r"# servers 1-(\d+): ", cfg) or re.search(r"# each of the (\d+) servers", cfg)
    using_active = int(m.group(1)) if m else 1
    return per * using_active + sum(_gpus(ln) for ln in commented)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 12, 16, 17, 20, 24, 33, 100])
def test_instance_groups_add_up(n):
    cfg = export_settings(_p(n), "m", "gpu", spec=IDS).triton_config_pbtxt
    assert _instances_in(cfg) == n, cfg
    assert "count: 1" in cfg
    if n > TRITON_GPUS_PER_SERVER:
        head = re.search(r"# (\d+) instances = ([0-9x+ ]+): (\d+) servers", cfg)
        assert head and int(head.group(1)) == n, cfg
        assert eval(head.group(2).replace("x", "*")) == n  # the stated arithmetic holds
        assert int(head.group(3)) == -(-n // TRITON_GPUS_PER_SERVER)


def test_twelve_instances_is_eight_plus_four():
    cfg = export_settings(_p(12), "m", "gpu", spec=IDS).triton_config_pbtxt
    assert "# 12 instances = 8 + 4: 2 servers" in cfg
    assert "gpus: [ 0, 1, 2, 3, 4, 5, 6, 7 ]" in cfg
    assert "#   { count: 1, kind: KIND_GPU, gpus: [ 0, 1, 2, 3 ] }" in cfg


def test_cpu_curve_exports_kind_cpu():
    e = export_settings(_p(3), "m", "cpu")
    assert "kind: KIND_CPU" in e.triton_config_pbtxt
    assert "KIND_GPU" not in e.triton_config_pbtxt and "gpus:" not in e.triton_config_pbtxt
    assert "3 hosts" in e.triton_config_pbtxt
    assert "num_gpus" not in e.ray_serve_python


def test_unknown_device_assumes_gpu_and_says_so():
    cfg = export_settings(_p(2), "m").triton_config_pbtxt
    assert "kind: KIND_GPU" in cfg and "KIND_GPU assumed" in cfg
    assert "assumed" not in export_settings(_p(2), "m", "gpu").triton_config_pbtxt


def test_device_kind_from_results():
    from test_advise_cli import _results_with_bench

    from trtcheck.results import BackendInfo

    r = _results_with_bench({1: 2.0, 8: 4.0})
    assert device_kind_from_results(r) is None  # the synthetic backend names no device
    r.bench[0].backend = BackendInfo(name="onnxruntime", version="1", device="CPU (AMD EPYC)")
    assert device_kind_from_results(r) == "cpu"
    r.bench[0].backend = BackendInfo(name="onnxruntime", version="1", device="GPU (CUDA)")
    assert device_kind_from_results(r) == "gpu"
    r.bench[0].backend = BackendInfo(name="tensorrt", version="10", device="NVIDIA H200")
    assert device_kind_from_results(r) == "gpu"


def test_advise_from_a_cpu_results_file_exports_kind_cpu(tmp_path, capsys):
    from test_advise_cli import _results_with_bench

    from trtcheck.cli import main
    from trtcheck.results import BackendInfo, save_results

    r = _results_with_bench({1: 2.0, 8: 4.0})
    r.bench[0].backend = BackendInfo(name="onnxruntime", version="1", device="CPU (x)")
    save_results(r, tmp_path / "r.json")
    with pytest.raises(SystemExit) as e:
        main(["advise", "--from", str(tmp_path / "r.json"), "--arrival-rate", "3000",
              "--format", "json"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "KIND_CPU" in out and "KIND_GPU" not in out
