"""advise MODEL takes bench's measuring options (--shapes, --inputs, --input-value,
--backend, --providers, --threads); with --from or --latency-curve they are refused."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("opt", [("--shapes", "x:1x3x48x192"), ("--threads", "2"),
                                 ("--providers", "CPUExecutionProvider"),
                                 ("--input-value", "n=3")])
def test_measuring_options_without_model_are_refused(cli, opt):
    res = cli("advise", "--latency-curve", "1:1,8:2", "--arrival-rate", "50", *opt)
    assert res.returncode == 2
    lines = [ln for ln in res.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and opt[0] in lines[0] and "MODEL" in lines[0], res.stderr


@pytest.mark.ppocr
@pytest.mark.slow
def test_dynamic_hw_model_is_advised_with_shapes(cli, ppocr, tmp_path):
    model = ppocr["cls"]
    res = cli("advise", str(model), "--shapes", "x:1x3x48x192", "--arrival-rate", "300",
              "--batch", "1,2,4", "--threads", "1", "--format", "json", timeout=600)
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    assert set(adv["curve"]["points_ms"]) == {"1", "2", "4"}
    assert adv["inputs"]["arrival_rate_per_s"] == 300
    assert adv["inputs"]["device"] == "cpu"
    text = " ".join(n["conclusion"] for n in adv["path"]) + adv["recommendation"]["summary"]
    assert "GPU" not in text
