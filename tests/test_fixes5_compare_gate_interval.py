"""QA pass 4, item 2: ``trtcheck compare`` and ``trtcheck gate`` give the same bootstrap
interval for the same pair of files and seed (they seeded the bootstrap differently)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import gate_synth as g  # noqa: E402

from trtcheck.analyze import regression as R  # noqa: E402
from trtcheck.cli import main  # noqa: E402


def _cli(args, capsys):
    with pytest.raises(SystemExit):
        main(args)
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("seed", [0, 7])
def test_same_interval_in_compare_and_gate(tmp_path, capsys, seed):
    a = g.write(g.results({1: 2.0, 4: 5.0}, n=600, seed=11), tmp_path / "a.json")
    b = g.write(g.results({1: 2.2, 4: 5.1}, n=550, seed=12), tmp_path / "b.json")
    pol = tmp_path / "p.yaml"
    pol.write_text(f"version: 1\nsettings:\n  seed: {seed}\nbaseline:\n"
                   "  - bench.batch[*].p99_ms: 10%\n  - bench.batch[*].median_ms: 5%\n"
                   "  - bench.batch[*].throughput_samples_per_s: 5%\n")
    gate = _cli(["gate", str(b), "--baseline", str(a), "--policy", str(pol),
                 "--format", "json"], capsys)
    comp = _cli(["compare", str(a), str(b), "--format", "json", "--seed", str(seed)], capsys)
    from_gate = {c["metric"]: (c["ratio_low"], c["ratio_high"]) for c in gate["checks"]}
    n = 0
    for bt in comp["runs"][0]["batches"]:
        for m in bt["metrics"]:
            key = f"bench.batch[{bt['batch_size']}].{m['metric']}"
            low, high = from_gate[key]
            assert m["low"] == pytest.approx(low, rel=1e-12), key
            assert m["high"] == pytest.approx(high, rel=1e-12), key
            n += 1
    assert n == 6


def test_interval_seed_canonical_form():
    s = R.interval_seed(3, "bench.batch[1].p99_ms")
    assert s == R.interval_seed(3, "bench[onnxruntime-fp32].batch[1].stats.p99_ms")
    assert s == R.interval_seed(3, "batch[1].p99_ms")
    assert s != R.interval_seed(3, "bench.batch[2].p99_ms")
    assert s != R.interval_seed(4, "bench.batch[1].p99_ms")
