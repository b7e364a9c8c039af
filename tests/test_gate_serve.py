"""Gate rules on serving results: configurations paired with the baseline by their key
(load, window, max batch, instances), not by list position; a configuration's
percentiles certified from its one repeat's raw latencies; the hints a serve results
file needs (a verdict is written by ``trtcheck report``); long messages never cut."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from trtcheck.analyze.gate.gate_evaluate import Check, GateReport, evaluate
from trtcheck.analyze.gate.gate_policy import parse_policy
from trtcheck.cli import main
from trtcheck.report.gate_render import render_junit, render_markdown, render_text
from trtcheck.results.model import load_results

LIVE = Path(__file__).parent / "gold" / "inputs" / "live.json"


def _doc() -> dict:
    """The live serve results, validity marks cleared (one configuration is marked
    generator-limited, which would turn its passes into ``invalid``)."""
    doc = json.loads(LIVE.read_text())
    for c in doc["serve"]["configs"]:
        c["validity"] = []
    return doc


def _write(doc: dict, path: Path) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _key(c: dict) -> str:
    inst = f",instances={c['instances']}" if c.get("instances") is not None else ""
    return (f"serve.configs[load.label={c['load']['label']},window_us={c['window_us']:g},"
            f"max_batch_size={c['max_batch_size']}{inst}]")


def _gate(tmp_path: Path, capsys, results: Path, policy: str,
          baseline: Path | None = None) -> tuple[int, str, str]:
    """Run ``trtcheck gate`` in-process; returns (exit code, stdout, stderr)."""
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy)
    args = ["gate", str(results), "--policy", str(pol)]
    if baseline is not None:
        args += ["--baseline", str(baseline)]
    with pytest.raises(SystemExit) as e:
        main(args)
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


# --------------------------------------------------------------------------- pairing


def test_baseline_rule_pairs_configurations_by_key_not_position(tmp_path):
    """The candidate lists its configurations in another order, drops one and adds one:
    each kept configuration is compared with the baseline's configuration of the same key
    (a positional pairing compared a 2 ms window with a 0 ms one: +99%), the dropped one
    is missing (fails), the added one is new (reported, not compared, not failed)."""
    base = _doc()
    cand = copy.deepcopy(base)
    configs = cand["serve"]["configs"]
    dropped = configs.pop(0)
    configs.reverse()
    added = copy.deepcopy(configs[0])
    added["window_us"] = 5000.0
    configs.append(added)
    b = _write(base, tmp_path / "base.json")
    n = _write(cand, tmp_path / "new.json")
    policy = parse_policy("version: 1\nbaseline:\n  - serve.configs[*].p50_ms: 10%\n")
    rep = evaluate(policy, load_results(n), load_results(b), "new.json", "base.json")
    by_metric = {c.metric: c for c in rep.checks}
    kept = [c for c in base["serve"]["configs"] if c is not base["serve"]["configs"][0]]
    for c in kept:
        chk = by_metric[_key(c) + ".p50_ms"]
        # the same configuration on both sides: ratio 1 (a 16-request burst's interval
        # may still straddle the limit: inconclusive, a warning)
        assert chk.verdict in ("pass", "inconclusive") and chk.ratio == 1.0, chk.message
        assert chk.value == chk.baseline_value == pytest.approx(c["p50_ms"])
    missing = by_metric[_key(dropped) + ".p50_ms"]
    assert missing.verdict == "missing" and missing.outcome == "fail"
    assert "in the baseline but not in the results" in missing.message
    new = by_metric[_key(added) + ".p50_ms"]
    assert new.verdict == "new" and new.outcome == "pass" and new.baseline_value is None
    assert "not in the baseline, not compared" in new.message
    assert rep.counts["fail"] == 1 and rep.counts["new"] == 1
    assert rep.counts["pass"] + rep.counts["warn"] == len(kept)
    assert rep.exit_code == 1
    # rendered: the headline counts the new one apart; JUnit skips it
    text = render_text(rep)
    assert "NEW" in text and "1 new (not in the baseline)" in text
    assert "🆕" in render_markdown(rep)
    assert 'skipped="1"' in render_junit(rep) and "<skipped" in render_junit(rep)


def test_new_configuration_alone_passes_the_gate(tmp_path, capsys):
    base = _doc()
    cand = copy.deepcopy(base)
    added = copy.deepcopy(cand["serve"]["configs"][0])
    added["max_batch_size"] = 16
    cand["serve"]["configs"].append(added)
    code, out, err = _gate(tmp_path, capsys, _write(cand, tmp_path / "new.json"),
                           "version: 1\nsettings:\n  on_inconclusive: warn\nbaseline:\n"
                           "  - serve.configs[*].p50_ms: 10%\n",
                           _write(base, tmp_path / "base.json"))
    assert code == 0, out + err
    assert f"{_key(added)}.p50_ms" in out and "1 new (not in the baseline)" in out


def test_configurations_named_by_key_are_valid_filters(tmp_path, capsys):
    """The name a configuration gets in the output is a filter a policy can use."""
    doc = _doc()
    res = _write(doc, tmp_path / "r.json")
    c = doc["serve"]["configs"][2]
    code, out, err = _gate(tmp_path, capsys, res,
                           f"version: 1\nbudgets:\n  - {_key(c)}.p50_ms <= 1 s\n")
    assert code == 0, out + err
    assert f"{_key(c)}.p50_ms = " in out and out.count("PASS ") == 1


def test_label_with_grammar_characters_is_quoted(tmp_path):
    doc = _doc()
    doc["serve"]["configs"][0]["load"]["label"] = "burst:16,a=b"
    res = load_results(_write(doc, tmp_path / "r.json"))
    rep = evaluate(parse_policy("version: 1\nbudgets:\n  - serve.configs[*].p50_ms <= 1 s\n"),
                   res)
    name = rep.checks[0].metric
    assert name.startswith("serve.configs[load.label='burst:16,a=b',window_us=0,"), name
    # and the quoted name selects that configuration again
    rep2 = evaluate(parse_policy(f"version: 1\nbudgets:\n  - {name} <= 1 s\n"), res)
    assert [c.metric for c in rep2.checks] == [name]


# --------------------------------------------------------------------- certification


def test_single_repeat_configuration_p99_certified_from_its_repeat(tmp_path):
    """With one repeat a configuration's p99_ms is that repeat's p99: certified from the
    repeat's raw latencies, exactly as the repeat's own path is."""
    doc = _doc()
    c = doc["serve"]["configs"][1]
    assert len(c["repeats"]) == 1
    res = load_results(_write(doc, tmp_path / "r.json"))
    pol = parse_policy(f"version: 1\nbudgets:\n  - {_key(c)}.p99_ms <= 1 s\n"
                       f"  - {_key(c)}.repeats[0].p99_ms <= 1 s\n")
    conf, rep = evaluate(pol, res).checks
    assert "no raw samples" not in conf.message
    assert conf.samples == len(c["repeats"][0]["latencies_ms"]) == rep.samples
    for f in ("verdict", "over_bound", "max_over_allowed", "certified", "certified_bound"):
        assert getattr(conf, f) == getattr(rep, f), f


def test_several_repeats_point_to_the_repeats(tmp_path):
    """With several repeats the configuration's p99_ms is a median over repeats: not
    certifiable, and the hint names the repeats' path."""
    doc = _doc()
    c = doc["serve"]["configs"][1]
    second = copy.deepcopy(c["repeats"][0])
    second["repeat"] = 1
    c["repeats"].append(second)
    res = load_results(_write(doc, tmp_path / "r.json"))
    chk = evaluate(parse_policy(f"version: 1\nbudgets:\n  - {_key(c)}.p99_ms <= 1 s\n"),
                   res).checks[0]
    assert chk.verdict == "not-certified" and chk.samples is None
    assert f"gate {_key(c)}.repeats[*].p99_ms" in chk.message


def test_single_repeat_p50_baseline_gets_an_interval(tmp_path):
    """A single-repeat configuration's median has raw samples, so a baseline comparison
    gets a bootstrap interval instead of a point comparison."""
    doc = _doc()
    b = load_results(_write(doc, tmp_path / "b.json"))
    pol = parse_policy("version: 1\nbaseline:\n  - serve.configs[*].p50_ms: 10%\n")
    rep = evaluate(pol, b, b)
    assert len(rep.checks) == 4
    for c in rep.checks:
        assert c.confidence is not None and c.ratio_low < 1.0 < c.ratio_high, c.message
        assert "point comparison" not in c.message


# ------------------------------------------------------------------------------ hints


def test_verdict_on_a_file_without_one_names_trtcheck_report(tmp_path, capsys):
    doc = _doc()
    doc["verdict"] = None
    res = _write(doc, tmp_path / "live.json")
    code, out, err = _gate(tmp_path, capsys, res,
                           "version: 1\nbudgets:\n  - verdict.status == ready_with_warnings\n")
    assert code == 1
    flat = " ".join(out.split())  # the text output wraps long messages at spaces
    assert "verdict is not present" in flat
    assert f"trtcheck report --from {res} -o DIR" in flat and "then gate DIR" in flat


def test_long_message_is_wrapped_never_cut():
    words = [f"word{i:03d}" for i in range(60)]
    msg = "serve.configs[load.label=open:200,window_us=2000,max_batch_size=32].p99_ms " + \
        " ".join(words) + " repeats[*].p99_ms"
    chk = Check(kind="budget", source="p.yaml:3", line=3, rule="r", metric="m",
                verdict="not-certified", outcome="warn", message=msg)
    rep = GateReport(passed=True, exit_code=0, policy="p.yaml", results="r.json",
                     checks=[chk], counts={"pass": 0, "warn": 1, "fail": 0})
    text = render_text(rep, width=60)
    assert "..." not in text
    lines = text.splitlines()[1:-1]
    assert len(lines) > 1 and all(len(ln) <= 120 for ln in lines)
    # every word whole, in order, and continuation lines aligned under the message
    assert " ".join(" ".join(ln.split()) for ln in lines).endswith(msg)
    col = lines[0].index("serve.configs")
    assert all(ln[:col].strip() == "" and ln[col] != " " for ln in lines[1:])


def test_a_filter_pairs_the_configuration_it_chooses_on_both_sides(tmp_path):
    """``[*]`` pairs by key only; a filter the policy writes chooses one configuration
    in each file itself, so it compares them although their windows differ."""
    base = _doc()
    cand = copy.deepcopy(base)
    for c in cand["serve"]["configs"]:
        c["window_us"] += 18000.0  # the same sweep with a 20 ms longer window
    b = load_results(_write(base, tmp_path / "base.json"))
    n = load_results(_write(cand, tmp_path / "new.json"))
    c0 = base["serve"]["configs"][1]
    pol = parse_policy("version: 1\nsettings:\n  on_inconclusive: warn\nbaseline:\n"
                       f"  - serve.configs[load.label={c0['load']['label']},window_us="
                       f"{c0['window_us']:g}].p50_ms: 10%\n")
    # the filter matches nothing in the candidate: missing, as before
    rep = evaluate(pol, n, b)
    assert [c.verdict for c in rep.checks] == ["missing"]
    pol = parse_policy("version: 1\nsettings:\n  on_inconclusive: warn\nbaseline:\n"
                       f"  - serve.configs[load.label={c0['load']['label']},max_batch_size="
                       f"{c0['max_batch_size']}].p50_ms: 10%\n")
    rep = evaluate(pol, n, b)
    # two configurations of that label in each file (windows 0 and 2 ms, +18 ms): paired
    # in file order, the baseline's name shown
    assert len(rep.checks) == 2 and all(c.ratio == 1.0 for c in rep.checks), \
        [c.message for c in rep.checks]
    assert all("window_us=18000" in c.metric or "window_us=20000" in c.metric
               for c in rep.checks)
    assert all("vs baseline" in c.message and "(serve.configs[" in c.message
               for c in rep.checks)
    # over [*] the same files pair nothing: every configuration missing and new
    rep = evaluate(parse_policy("version: 1\nbaseline:\n  - serve.configs[*].p50_ms: 10%\n"),
                   n, b)
    assert sorted(c.verdict for c in rep.checks) == ["missing"] * 4 + ["new"] * 4


def test_a_filter_with_repeats_pairs_each_repeat(tmp_path):
    """A filter over configurations with `[*]` over their repeats: configurations paired
    in order, each repeat with the repeat of the same position."""
    base = _doc()
    for c in base["serve"]["configs"]:
        second = copy.deepcopy(c["repeats"][0])
        second["repeat"] = 1
        c["repeats"].append(second)
    cand = copy.deepcopy(base)
    for c in cand["serve"]["configs"]:
        c["window_us"] += 18000.0
    b = load_results(_write(base, tmp_path / "base.json"))
    n = load_results(_write(cand, tmp_path / "new.json"))
    pol = parse_policy("version: 1\nsettings:\n  on_inconclusive: warn\nbaseline:\n"
                       "  - serve.configs[max_batch_size=8].repeats[*].p50_ms: 10%\n")
    rep = evaluate(pol, n, b)
    assert len(rep.checks) == 8 and all(c.ratio == 1.0 for c in rep.checks), \
        [c.message for c in rep.checks]
    for c in rep.checks:
        rep_new = c.metric.split(".repeats[")[1][0]
        rep_old = c.message.split("(serve.configs[")[1].split(".repeats[")[1][0]
        assert rep_new == rep_old


def test_configuration_names_round_trip_and_duplicates_fall_back_to_positions(tmp_path):
    doc = _doc()
    doc["serve"]["configs"][0]["window_us"] = 1234.5678  # :g would round it
    doc["serve"]["configs"][3] = copy.deepcopy(doc["serve"]["configs"][2])  # same key twice
    res = load_results(_write(doc, tmp_path / "r.json"))
    rep = evaluate(parse_policy("version: 1\nbudgets:\n  - serve.configs[*].p50_ms <= 1 s\n"),
                   res)
    names = [c.metric for c in rep.checks]
    assert "window_us=1234.5678," in names[0]
    assert names[2:] == ["serve.configs[2].p50_ms", "serve.configs[3].p50_ms"]
    again = evaluate(parse_policy(f"version: 1\nbudgets:\n  - {names[0]} <= 1 s\n"), res)
    assert [c.metric for c in again.checks] == [names[0]]


def test_advice_candidates_pair_by_configuration(tmp_path):
    """The simulator's candidates pair by (window, max batch, instances) too."""
    full = json.loads((LIVE.parent / "full.json").read_text())
    cand = copy.deepcopy(full)
    cand["advice"]["candidates"].reverse()
    b = load_results(_write(full, tmp_path / "base.json"))
    n = load_results(_write(cand, tmp_path / "new.json"))
    rep = evaluate(parse_policy("version: 1\nbaseline:\n  - advice.candidates[*].p99_ms: 1%\n"),
                   n, b)
    compared = [c for c in rep.checks if c.ratio is not None]
    assert len(compared) >= 2
    assert all(c.ratio == 1.0 and c.verdict == "pass" for c in compared)
    assert all(c.metric.startswith("advice.candidates[window_us=") for c in rep.checks)
