"""Gate evaluation: bootstrap ratio intervals and verdicts (the same interval as compare),
early-stopping certification of percentile budgets and of max/min aggregates, no false
fails on a noisy machine, serve sections without raw samples, engine layer rules."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from trtcheck.analyze.gate import regression as R
from trtcheck.analyze.gate.gate_evaluate import evaluate
from trtcheck.analyze.gate.gate_policy import parse_policy
from trtcheck.analyze.gate.metricpath.metric_resolver import SampleStat
from trtcheck.cli import main
from trtcheck.results.engine import EngineLayer
from trtcheck.results.model import load_results
from trtcheck.stats import min_samples_to_certify

from trtcheck.testing import synthetic_results as g
from conftest import gate_output as _gate_output

MEDIAN = SampleStat("quantile", 0.5)


@pytest.mark.parametrize("n,p", [(10, 0.3), (459, 0.01), (1000, 0.5), (57, 0.9)])
def test_binomial_cdf_matches_exact_sum(n, p):
    for k in (0, 1, 3, n // 2, n - 1, n):
        exact = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))
        assert R.binomial_cdf(k, n, p) == pytest.approx(min(1.0, exact), rel=1e-9, abs=1e-300)


def test_zero_over_rule_matches_mlperf_459():
    assert min_samples_to_certify(0.99, 0.99) == 459
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 459)
    c = R.certify_quantile(x, 0.99, bound=1.0)
    assert c.certified and c.over == 0 and c.max_over_allowed == 0
    c2 = R.certify_quantile(x[:458], 0.99, bound=1.0)
    assert not c2.certified and c2.max_over_allowed == -1
    assert c2.min_samples_zero_over == 459


def test_general_early_stopping_allows_some_samples_over():
    # 10,000 samples may have up to k over the bound where P[Bin(10000, 0.01) <= k] <= 0.01
    k = R.max_over_allowed(10_000, 0.99, 0.99)
    assert R.binomial_cdf(k, 10_000, 0.01) <= 0.01 < R.binomial_cdf(k + 1, 10_000, 0.01)
    assert 70 <= k <= 80  # mean 100, sd ~9.95: about 2.33 sd below
    x = np.zeros(10_000)
    x[:k] = 10.0
    assert R.certify_quantile(x, 0.99, 1.0).certified
    x[: k + 1] = 10.0
    assert not R.certify_quantile(x, 0.99, 1.0).certified


def test_lower_bound_certification_mirrors():
    x = np.linspace(1.0, 2.0, 1000)
    assert R.certify_quantile(x, 0.5, bound=1.2, upper=False).certified     # median >= 1.2
    assert not R.certify_quantile(x, 0.5, bound=1.49, upper=False).certified


def test_ratio_interval_is_seeded_and_covers_truth():
    rng = np.random.default_rng(5)
    a = rng.lognormal(np.log(10), 0.1, 2000)
    b = rng.lognormal(np.log(11), 0.1, 2000)
    ci1 = R.ratio_interval(a, b, MEDIAN, seed=3)
    ci2 = R.ratio_interval(a, b, MEDIAN, seed=3)
    assert ci1 == ci2
    assert ci1.low < 1.1 < ci1.high
    assert ci1.low <= ci1.ratio <= ci1.high
    # the run-to-run term widens the interval; without it, it is narrower
    ci0 = R.ratio_interval(a, b, MEDIAN, seed=3, run_to_run_cv=0.0)
    assert (ci0.high - ci0.low) < (ci1.high - ci1.low)


def test_block_bootstrap_widens_for_drifting_runs():
    rng = np.random.default_rng(11)
    iid = rng.lognormal(np.log(10), 0.05, 2000)
    drift = iid * np.exp(0.08 * np.sin(np.linspace(0, 3 * np.pi, 2000)))  # slow wander
    w_iid = R.ratio_interval(iid, iid[::-1].copy(), MEDIAN, run_to_run_cv=0)
    w_drift = R.ratio_interval(drift, drift[::-1].copy(), MEDIAN, run_to_run_cv=0)
    assert (w_drift.high - w_drift.low) > 1.5 * (w_iid.high - w_iid.low)


def test_throughput_ratio_is_inverse_of_latency():
    rng = np.random.default_rng(2)
    a = rng.lognormal(np.log(4), 0.05, 800)
    b = a * 1.25
    thr = SampleStat("inverse_median", 0.5, 8000.0)
    ci = R.ratio_interval(a, b, thr, run_to_run_cv=0.0)
    assert ci.ratio == pytest.approx(0.8, rel=1e-9)
    assert ci.high < 0.81


@pytest.mark.parametrize("low,high,direction,reg,verdict", [
    (1.10, 1.20, "lower", 0.05, "fail"),
    (0.90, 1.04, "lower", 0.05, "pass"),
    (1.01, 1.08, "lower", 0.05, "inconclusive"),
    (0.80, 0.90, "higher", 0.03, "fail"),
    (0.98, 1.10, "higher", 0.03, "pass"),
    (0.95, 1.00, "higher", 0.03, "inconclusive"),
    (1.05, 1.05, "lower", 0.05, "pass"),
])
def test_regression_verdicts(low, high, direction, reg, verdict):
    assert R.regression_verdict(low, high, direction, reg) == verdict


def test_argument_checks():
    x = np.ones(10)
    with pytest.raises(ValueError):
        R.ratio_interval(x, x, MEDIAN, confidence=1.2)
    with pytest.raises(ValueError):
        R.ratio_interval(x[:1], x, MEDIAN)
    with pytest.raises(ValueError):
        R.certify_quantile(x, 1.0, 1.0)


def test_noise_model_is_what_the_docs_say():
    rng = np.random.default_rng(0)
    x = g.noisy_latencies(rng, 5000, 9.0)
    assert np.median(x) == pytest.approx(9.0, rel=0.1)
    assert np.all(x > 0)


def test_early_stopping_bound_is_the_tightest_certified_budget():
    rng = np.random.default_rng(8)
    x = rng.lognormal(0, 0.3, 5000)
    b = R.early_stopping_bound(x, 0.99, 0.99)
    assert b is not None and b > np.percentile(x, 99)
    assert R.certify_quantile(x, 0.99, b).certified
    below = np.max(x[x < b])  # the next smaller sample is not enough
    assert not R.certify_quantile(x, 0.99, below).certified
    assert R.early_stopping_bound(x[:458], 0.99, 0.99) is None
    lo = R.early_stopping_bound(x, 0.5, 0.99, upper=False)
    assert lo is not None and lo < np.median(x)
    assert R.certify_quantile(x, 0.5, lo, upper=False).certified


POLICY = parse_policy("""\
baseline:
  - bench.batch[*].median_ms: 5%
  - bench.batch[*].throughput_samples_per_s: 3%
  - bench.batch[*].p99_ms: 10%
""")


MEDIANS = {1: 2.0, 8: 9.0}


PAIRS = 40


def verdicts(slowdown: float, seed0: int) -> dict[str, int]:
    out = {"pass": 0, "inconclusive": 0, "fail": 0}
    for i in range(PAIRS):
        s = seed0 + 2 * i
        base = g.results(MEDIANS, n=800, seed=s)
        new = g.results({b: m * (1 + slowdown) for b, m in MEDIANS.items()}, n=800, seed=s + 1)
        for c in evaluate(POLICY, new, base).checks:
            out[c.verdict] += 1
    return out


@pytest.mark.slow
def test_same_engine_on_noisy_machine_never_fails():
    v = verdicts(0.0, seed0=100)
    assert v["fail"] == 0, v
    assert v["pass"] > 0  # the gate is not simply inconclusive about everything
    assert sum(v.values()) == PAIRS * 2 * 3


@pytest.mark.slow
def test_clear_regression_is_detected():
    pol = parse_policy("baseline:\n  - bench.batch[*].median_ms: 5%\n"
                       "  - bench.batch[*].throughput_samples_per_s: 3%\n")
    fails = 0
    for i in range(8):
        base = g.results(MEDIANS, n=800, seed=500 + 2 * i)
        new = g.results({b: m * 1.25 for b, m in MEDIANS.items()}, n=800, seed=501 + 2 * i)
        fails += sum(c.verdict == "fail" for c in evaluate(pol, new, base).checks)
    assert fails == 8 * 2 * 2


def test_batch_sizes_dropped_from_the_results_are_missing_not_passed():
    """A baseline rule over ``[*]`` compares every member the baseline holds: a candidate
    that measured only batch 1 of 1, 2, 4 must not pass by comparing fewer members."""
    pol = parse_policy("baseline:\n  - bench.batch[*].median_ms: 5%\n")
    base = g.results({1: 2.0, 2: 3.0, 4: 5.0}, n=400, seed=11)
    new = g.results({1: 2.0}, n=400, seed=12)
    checks = evaluate(pol, new, base).checks
    missing = sorted(c.metric for c in checks if c.verdict == "missing")
    assert missing == ["bench.batch[2].median_ms", "bench.batch[4].median_ms"], checks
    assert all(c.outcome == "fail" for c in checks if c.verdict == "missing")
    assert any("in the baseline but not in the results" in c.message for c in checks)


def _mixed(tmp_path: Path, n_small: int, n_large: int) -> Path:
    """Batch 1 (fast, ``n_small`` samples) and batch 16 (slow, ``n_large`` samples)."""
    res = g.results({1: 2.0}, n=n_small, seed=3)
    other = g.results({16: 40.0}, n=n_large, seed=4)
    res.bench[0].batches.append(other.bench[0].batches[0])
    return g.write(res, tmp_path / "mixed.json")


def _run(tmp_path: Path, results: Path, policy: str, capsys, *extra: str):
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy)
    with pytest.raises(SystemExit) as e:
        main(["gate", str(results), "--policy", str(pol), *extra])
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


def _json(tmp_path, results, policy, capsys):
    code, out, _ = _run(tmp_path, results, policy, capsys, "--format", "json")
    return code, json.loads(out)


def test_max_names_and_values_the_argmax_member_in_every_format(tmp_path, capsys):
    res = _mixed(tmp_path, 2000, 30)
    pol = "version: 1\nbudgets:\n  - max(bench.batch[*].p99_ms) <= 10 s\n"
    code, doc = _json(tmp_path, res, pol, capsys)
    chk = doc["checks"][0]
    assert code == 1 and chk["verdict"] == "not-certified"
    assert chk["element"] == "bench.batch[16].p99_ms"
    # the JSON value, the named element and the certification counts agree
    assert chk["samples"] == 30 and chk["value"] > 40.0
    assert chk["uncertified_members"] == ["bench.batch[16].p99_ms"]
    assert "bench.batch[16].p99_ms" in chk["message"] and "30 samples" in chk["message"]
    assert "bench.batch[1]" not in chk["message"]
    shown = f"{chk['value']:.4g}"
    code, out, _ = _run(tmp_path, res, pol, capsys, "--junit-xml", str(tmp_path / "g.xml"),
                        "--markdown", str(tmp_path / "g.md"))
    assert code == 1 and "bench.batch[16].p99_ms" in out and shown in out, out
    md = (tmp_path / "g.md").read_text().replace("\\", "")
    assert "bench.batch[16].p99_ms" in md and shown in md
    fail = ET.parse(tmp_path / "g.xml").getroot().find(".//failure")
    assert "bench.batch[16].p99_ms" in fail.get("message") and shown in fail.get("message")


def test_max_needs_every_member_certified(tmp_path, capsys):
    # the maximum (batch 16) has many samples and is certified; batch 1 is not
    res = _mixed(tmp_path, 30, 2000)
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - max(bench.batch[*].p99_ms) <= 10 s\n", capsys)
    chk = doc["checks"][0]
    assert code == 1 and chk["verdict"] == "not-certified" and chk["certified"] is False
    assert chk["element"] == "bench.batch[16].p99_ms" and chk["samples"] == 2000
    assert chk["uncertified_members"] == ["bench.batch[1].p99_ms"]
    assert "is certified, but 1 other member(s) are not" in chk["message"]


def test_min_le_certifies_the_argmin_member(tmp_path, capsys):
    # min(X) <= B holds through the minimum alone: that member must be certified (it
    # passed with no certification at all)
    res = _mixed(tmp_path, 30, 2000)
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - min(bench.batch[*].p99_ms) <= 10 s\n", capsys)
    chk = doc["checks"][0]
    assert code == 1 and chk["verdict"] == "not-certified"
    assert chk["element"] == "bench.batch[1].p99_ms" and chk["samples"] == 30
    res2 = _mixed(tmp_path, 2000, 30)
    code, doc = _json(tmp_path, res2, "version: 1\nbudgets:\n"
                      "  - min(bench.batch[*].p99_ms) <= 10 s\n", capsys)
    chk = doc["checks"][0]
    # batch 16's 30 samples do not matter for an existential limit
    assert code == 0 and chk["verdict"] == "pass" and chk["certified"] is True, chk
    assert chk["element"] == "bench.batch[1].p99_ms" and chk["samples"] == 2000


def test_min_ge_needs_every_member_and_fail_names_argmin(tmp_path, capsys):
    res = _mixed(tmp_path, 2000, 30)
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - min(bench.batch[*].p99_ms) >= 1 ms\n", capsys)
    chk = doc["checks"][0]
    # a lower limit on p99 is certified by few samples; every member was checked
    assert code == 0 and chk["certified"] is True and chk["element"] == "bench.batch[1].p99_ms"
    assert "for every member" in chk["message"]
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - min(bench.batch[*].p99_ms) >= 1 s\n", capsys)
    chk = doc["checks"][0]
    assert code == 1 and chk["verdict"] == "fail"
    assert chk["element"] == "bench.batch[1].p99_ms" and "bench.batch[1].p99_ms" in chk["message"]


def test_all_certified_passes(tmp_path, capsys):
    res = _mixed(tmp_path, 2000, 2000)
    code, doc = _json(tmp_path, res, "version: 1\nbudgets:\n"
                      "  - max(bench.batch[*].p99_ms) <= 10 s\n"
                      "  - min(bench.batch[*].p99_ms) <= 10 s\n", capsys)
    assert code == 0 and all(c["certified"] is True for c in doc["checks"]), doc
    assert [c["element"] for c in doc["checks"]] == ["bench.batch[16].p99_ms",
                                                      "bench.batch[1].p99_ms"]


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


def test_p99_budget_without_raw_samples_does_not_pass(serve_results_json, tmp_path, capsys):
    # 16 requests: a p99 budget can not be certified, stored value or not
    code, out = _gate_output(tmp_path, serve_results_json, "version: 1\nbudgets:\n"
                      "  - serve.configs[0].p99_ms <= 100 s\n", capsys)
    assert code == 1, out
    assert "cannot certify p99" in out
    # the policy may downgrade it to a warning
    code, out = _gate_output(tmp_path, serve_results_json, "version: 1\nsettings:\n  on_uncertified: warn\n"
                      "budgets:\n  - serve.configs[0].p99_ms <= 100 s\n", capsys)
    assert code == 0, out
    # a median (p50) budget is not a tail budget: it still passes as before
    code, out = _gate_output(tmp_path, serve_results_json, "version: 1\nbudgets:\n"
                      "  - serve.configs[0].p50_ms <= 100 s\n"
                      "  - serve.configs[*].throughput_queries_per_s >= 1 queries/s\n", capsys)
    assert code == 0, out


def test_max_of_p99_needs_the_same_certification_as_each_p99(tmp_path, capsys):
    """`max(bench.batch[*].p99_ms) <= B` means every p99 <= B: it must not pass where
    `bench.batch[*].p99_ms <= B` is not certified (it did: a loophole around early stopping)."""
    from trtcheck.testing import synthetic_results as g
    few = g.write(g.results({1: 2.0, 8: 9.0}, n=50, seed=5), tmp_path / "few.json")
    many = g.write(g.results({1: 2.0, 8: 9.0}, n=2000, seed=6), tmp_path / "many.json")
    pol = ("version: 1\nbudgets:\n  - max(bench.batch[*].p99_ms) <= 1 s\n"
           "  - min(bench.batch[*].throughput_samples_per_s) >= 1 samples/s\n")
    code, out = _gate_output(tmp_path, few, pol, capsys)
    assert code == 1 and "cannot certify p99" in out, out
    code, out = _gate_output(tmp_path, many, pol, capsys)
    assert code == 0, out


def test_serve_baseline_without_samples_never_false_fails(tmp_path, capsys):
    """Two serve runs of the same synthetic engine (seeds 1 and 2, the only difference the
    Poisson schedule): open-loop QPS differed by 7.9% and a 5% throughput rule FAILED on a
    point comparison. A measured statistic with no raw samples has unknown noise: past the
    limit it is inconclusive (a warning by default, a failure with on_inconclusive: fail)."""
    from trtcheck.results import load_results, save_results
    serve = tmp_path / "s.json"
    with pytest.raises(SystemExit):
        main(["serve", "--synthetic-curve", "1:2,8:4", "--window-ms", "0", "--max-batch", "8",
              "--load", "burst:16", "--repeats", "1", "--warmup-requests", "0", "-o", str(serve)])
    base = load_results(serve)
    new = base.model_copy(deep=True)
    c = new.serve.configs[0]
    c.throughput_queries_per_s = base.serve.configs[0].throughput_queries_per_s * 0.92
    c.p99_ms = base.serve.configs[0].p99_ms * 1.3
    save_results(new, tmp_path / "new.json")
    pol = ("version: 1\nbaseline:\n  - serve.configs[*].throughput_queries_per_s: 5%\n"
           "  - serve.configs[*].p99_ms: 10%\n"
           "  - metric: serve.configs[*].ok_share\n    max_regression: 1%\n"
           "    direction: higher\n")
    p = tmp_path / "p.yaml"
    p.write_text(pol)
    with pytest.raises(SystemExit) as e:
        main(["gate", str(tmp_path / "new.json"), "--policy", str(p), "--baseline", str(serve)])
    cap = capsys.readouterr()
    out = cap.out
    assert e.value.code == 0, cap.err
    assert out.count("INCONCL") == 2 and "noise" in out, out
    p.write_text("version: 1\nsettings:\n  on_inconclusive: fail\n" + pol[len("version: 1\n"):])
    with pytest.raises(SystemExit) as e:
        main(["gate", str(tmp_path / "new.json"), "--policy", str(p), "--baseline", str(serve)])
    assert e.value.code == 1
