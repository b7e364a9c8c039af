"""QA pass 4, item 5: the README policy's engine rule passes on a healthy FP16 engine (the
A100 resnet18 FP16 export has one FP32 output reformat and no FP32 compute layer), and the
gate counts the same layers as the precision mix of inspect/report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trtcheck.analyze.gate import evaluate, parse_policy
from trtcheck.cli import main
from trtcheck.results.engine import EngineLayer
from trtcheck.results.model import load_results

REPO = Path(__file__).resolve().parent.parent


def _readme_engine_policy() -> str:
    doc = (REPO / "README.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.DOTALL)
                 if b.startswith("version: 1"))
    rules = [ln for ln in block.splitlines() if ln.strip().startswith("- ") and "engine." in ln]
    assert rules, "the README policy has no engine rule"
    return "version: 1\nbudgets:\n" + "\n".join(rules) + "\n"


def _report(tmp_path: Path, folder: Path, capsys):
    out = tmp_path / folder.name
    with pytest.raises(SystemExit) as e:
        main(["report", str(folder), "-o", str(out)])
    capsys.readouterr()
    assert e.value.code in (0, None)
    return load_results(out / "results.json")


def test_readme_engine_rule_passes_on_the_a100_fp16_export(tmp_path, capsys, trtexec_exports):
    res = _report(tmp_path, trtexec_exports / "resnet18-a100-fp16", capsys)
    assert any(la.precision == "fp32" for la in res.engine.layers)  # the output reformat
    rep = evaluate(parse_policy(_readme_engine_policy(), source="README.md"), res)
    assert rep.passed, [c.message for c in rep.checks]


def test_readme_engine_rule_fails_on_the_fp32_export(tmp_path, capsys, trtexec_exports):
    res = _report(tmp_path, trtexec_exports / "resnet18-a100-fp32", capsys)
    rep = evaluate(parse_policy(_readme_engine_policy(), source="README.md"), res)
    assert not rep.passed


@pytest.mark.parametrize("name", ["resnet18-a100-fp16", "resnet18-a100-fp32",
                                  "resnet18-a100-qat", "mobilenet-qat-titanrtx"])
def test_gate_counts_what_the_precision_mix_counts(tmp_path, capsys, trtexec_exports, name):
    res = _report(tmp_path, trtexec_exports / name, capsys)
    for prec in ("fp32", "fp16", "int8"):
        pol = parse_policy(f"version: 1\nbudgets:\n  - len(engine.layers[precision={prec},"
                           f"reformat=false]) >= 0\n")
        n = evaluate(pol, res).checks[0].value
        assert n == res.engine.precision_mix.get(prec, 0), (prec, n, res.engine.precision_mix)
    assert sum(la.reformat for la in res.engine.layers) == res.engine.reformat_count


def test_reformat_flag_filled_for_older_files():
    assert EngineLayer.model_validate({"name": "r", "layer_type": "Reformat"}).reformat
    assert EngineLayer.model_validate({"name": "r", "origin": "REFORMAT"}).reformat
    assert not EngineLayer.model_validate({"name": "q", "layer_type": "Reformat",
                                           "origin": "QDQ"}).reformat
    assert not EngineLayer(name="c", layer_type="CaskConvolution").reformat
