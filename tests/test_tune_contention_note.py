"""tune's note on a pick that runs many more executions per second than the contention
run calibrated (``tune_plan.contention_load_note``), on tune documents recorded live on an
H100 by ``benchmarks/tune_gpu.py tune-record`` (tests/data/tune-gpu-raw)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from trtcheck.analyze import tune_plan as tp
from trtcheck.results import results_from_json

RAW = Path(__file__).resolve().parent / "data" / "tune-gpu-raw"


def _tune(name: str, rate_per_s: float):
    """The tune part of the recorded search at ``rate_per_s`` in record ``name``."""
    record = json.loads(lzma.decompress((RAW / name).read_bytes()))
    entry = next(t for t in record["tunes"] if t["rate_per_s"] == rate_per_s)
    return results_from_json(json.dumps(entry["tune_json"])).tune


def _contention_run(tune):
    idx = [i for i, p in enumerate(tune.run_purposes) if p.startswith("contention")]
    assert len(idx) == 1
    return tune.runs[idx[0]]


def test_a_pick_at_three_times_the_contention_runs_executions_gets_the_note():
    """VGG-16 at 1,074 req/s: the pick (no window, max batch 2, 4 instances, predicted
    mean batch 1.13) runs about 951 executions/s; the contention run (window 1.9 ms, max
    batch 64, 4 instances) ran 3.56 requests per execution, about 303/s. Measured by
    perf_analyzer, that pick's P99 was 25 ms against 12.9 ms for a configuration that
    batches wider."""
    tune = _tune("h100-host-vgg16-tune2.json.xz", 1074.0)
    note = tp.contention_load_note(tune.pick.predicted, tune.arrival_rate_per_s,
                                   _contention_run(tune))
    assert note is not None
    assert "about 951.4 executions/s on 4 instances" in note
    assert "3.1x the 303.3/s of the contention run (4 instances at the rate, mean batch " \
        "3.56)" in note
    gpu = tp.contention_load_note(tune.pick.predicted, tune.arrival_rate_per_s,
                                  _contention_run(tune), unit="GPU")
    assert gpu is not None and "on 4 GPUs" in gpu


@pytest.mark.parametrize(("name", "rate"), [
    ("h100-host-resnext50_32x4d-tune.json.xz", 125.0),  # 4 instances, about 1.1x
    ("h100-host-resnet101-tune.json.xz", 84.0),  # 1 instance: nothing shares the device
])
def test_no_note_near_the_contention_runs_executions_or_on_one_instance(name, rate):
    tune = _tune(name, rate)
    assert tp.contention_load_note(tune.pick.predicted, tune.arrival_rate_per_s,
                                   _contention_run(tune)) is None


def test_the_threshold_is_the_ratio_of_executions_per_second():
    """The same pick and run: the note appears once the rate puts the pick at
    CONTENTION_EXECUTIONS_RATIO x the run's executions per second, not below."""
    tune = _tune("h100-host-vgg16-tune2.json.xz", 1074.0)
    run = _contention_run(tune)
    m = tp.measured_of(run)
    e_cal = m["throughput_queries_per_s"] / m["mean_batch"]
    mb = float(tune.pick.predicted.mean_batch)
    at = tp.CONTENTION_EXECUTIONS_RATIO * e_cal * mb
    assert tp.contention_load_note(tune.pick.predicted, at * 1.001, run) is not None
    assert tp.contention_load_note(tune.pick.predicted, at * 0.999, run) is None
