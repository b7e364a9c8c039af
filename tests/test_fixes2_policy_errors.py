"""Follow-up: a policy with several mistakes reports every one of them at once (each with
its YAML line), as one `error:` line and exit code 2; dependent mistakes are not repeated."""

from __future__ import annotations

import gate_synth as g
import pytest

from trtcheck.analyze.gate import PolicyError, parse_policy
from trtcheck.cli import main
from trtcheck.errors import EXIT_BAD_INPUT, InputError

MANY = """\
version: 1
settings:
  resamples: many
  on_missing: sometimes
budgets:
  - bench.batch[8].p99ms <= 5 sec
  - bench.batch[8].p99_ms <= 5 sec
  - bench.batch[8].p99_ms 5 ms
  - metric: bench.batch[1].median_ms
    name: no limit here
  - bench[0].backend.precision < fp16
  - bench.batch[8].throughput_samples_per_s >= 10 queries/s
baseline:
  - metric: bench.batch[8].p99_ms
    max_regression: 5
  - metric: bench.batch[8].p99_ms
    max_regression: 5%
    direction: down
  - bench.batch[8].batch_size: 5%
  - bench.batch[1].median_ms: 5%
"""
# line -> fragment that mistake's text must hold
EXPECTED = {
    3: "resamples must be an integer",
    4: "on_missing must be one of warn, fail",
    6: "did you mean 'p99_ms'",
    7: "unknown unit 'sec'",
    8: "no comparison",
    9: "has no limit",
    11: "only == and != apply",
    12: "counts queries",
    15: "write a percentage",
    18: "one of lower, higher",
    19: "direction: lower",
}


@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("fixes2-policy")
    return g.write(g.results(n=500, seed=1), d / "results.json")


def run_gate(results, pol, capsys):
    with pytest.raises(SystemExit) as ei:
        main(["gate", str(results), "--policy", str(pol)])
    cap = capsys.readouterr()
    return ei.value.code, cap.out, cap.err


def test_every_mistake_is_reported_at_once_on_one_line(tmp_path, results_file, capsys):
    pol = tmp_path / "policy.yaml"
    pol.write_text(MANY, encoding="utf-8")
    code, out, err = run_gate(results_file, pol, capsys)
    assert code == EXIT_BAD_INPUT == 2, err
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # ONE line for the CLI summary
    line = lines[0]
    assert line.startswith(f"error: {pol} has {len(EXPECTED)} mistakes: line 3: "), line
    # each mistake, in line order, with its fragment
    pos = -1
    for ln, fragment in EXPECTED.items():
        at = line.find(f"line {ln}: ")
        assert at > pos, (ln, line)
        assert fragment in line[at:], (ln, fragment, line)
        pos = at
    assert "; hint: fix all of them" in line
    # the valid last rule (line 20) is not reported
    assert "line 20:" not in line


def test_mistakes_carry_lines_for_programs():
    with pytest.raises(PolicyError) as ei:
        parse_policy(MANY, source="p.yaml")
    exc = ei.value
    assert isinstance(exc, InputError) and exc.exit_code == 2
    assert [m[0] for m in exc.mistakes] == sorted(EXPECTED)
    # per-mistake hints are kept (close matches)
    by_line = {m[0]: m for m in exc.mistakes}
    assert by_line[6][2] is not None and "p99_ms" in by_line[6][2]


def test_dependent_mistakes_are_not_repeated():
    # an unknown metric: its unit is not also judged (one mistake, the old one-line form)
    text = ("budgets:\n  - metric: bench.batch[8].p99ms\n    max: 5 sec\n"
            "  - bench.batch[8].latncy_ms <= 2 MiB\n")
    with pytest.raises(PolicyError) as ei:
        parse_policy(text, source="p.yaml")
    msgs = [m[1] for m in ei.value.mistakes]
    assert len(msgs) == 2, msgs
    assert all("unknown metric" in m for m in msgs)
    assert not any("unit" in m or "size" in m for m in msgs)


def test_misspelt_key_is_not_also_a_missing_key():
    # 'maximum' is a typo of 'max': say that, not also "has no limit"; the rule's
    # other mistake (on_missing) is independent and is reported too
    text = ("budgets:\n  - metric: bench.batch[8].p99_ms\n    maximum: 5 ms\n"
            "    on_missing: never\n"
            "baseline:\n  - metric: bench.batch[8].p99_ms\n    max_regresion: 5%\n")
    with pytest.raises(PolicyError) as ei:
        parse_policy(text, source="p.yaml")
    m = ei.value.mistakes
    assert [x[0] for x in m] == [3, 4, 7], m
    assert "did you mean 'max'" in (m[0][2] or "")
    assert "did you mean 'max_regression'" in (m[2][2] or "")
    assert not any("no limit" in x[1] or "no max_regression" in x[1] for x in m)


def test_no_rules_is_said_only_when_nothing_else_is_wrong():
    text = "version: 1\nsettings:\n  confidence: 2\nbudget:\n  - bench.batch[8].p99_ms <= 5\n"
    with pytest.raises(PolicyError) as ei:
        parse_policy(text, source="p.yaml")
    m = ei.value.mistakes
    assert [x[0] for x in m] == [3, 4], m
    assert not any("no rules" in x[1] for x in m)
    with pytest.raises(PolicyError, match="no rules"):
        parse_policy("version: 1\n", source="p.yaml")


def test_version_and_section_mistakes_are_collected_with_rule_mistakes():
    text = ("version: 2\nbudgets:\n  p99: 5\nbaseline:\n  - bench.batch[8].p99_ms: 5\n")
    with pytest.raises(PolicyError) as ei:
        parse_policy(text, source="p.yaml")
    m = ei.value.mistakes
    assert [x[0] for x in m] == [1, 3, 5], m
    assert "unsupported policy version" in m[0][1]
    assert "must be a list" in m[1][1]
    assert "max_regression" in m[2][1]


def test_single_mistake_keeps_the_file_line_form():
    with pytest.raises(PolicyError) as ei:
        parse_policy("budgets:\n  - bench.batch[8].p99_ms <= 5 sec\n", source="p.yaml")
    assert ei.value.message.startswith("p.yaml:2: ")
    assert "mistakes" not in ei.value.message


def test_valid_policy_still_loads():
    pol = parse_policy("budgets:\n  - bench.batch[8].p99_ms <= 5 ms\n"
                       "  - metric: bench.batch[1].median_ms\n    min: 0.1 ms\n    max: 9 ms\n"
                       "baseline:\n  - bench.batch[*].median_ms: 5%\n", source="p.yaml")
    assert [r.line for r in pol.rules] == [2, 3, 7]


@pytest.mark.parametrize("op,fix", [("=", "=="), ("=<", "<="), ("=>", ">="), ("<>", "!="),
                                    ("\u2264", "<=")])
def test_bad_operator_is_named_with_the_one_meant(op, fix):
    with pytest.raises(PolicyError) as ei:
        parse_policy(f"budgets:\n  - bench.batch[8].p99_ms {op} 5 ms\n", source="p.yaml")
    exc = ei.value
    assert exc.message.startswith(f"p.yaml:2: unknown comparison {op!r}"), exc.message
    assert exc.hint == f"did you mean {fix!r}?"


def test_bad_operator_and_unknown_metric_on_one_line_are_both_reported():
    with pytest.raises(PolicyError) as ei:
        parse_policy("budgets:\n  - bench.batch[8].p99ms =< 5 ms\n"
                     "  - len(inspection.lints[severity=error]) = 0\n", source="p.yaml")
    m = ei.value.mistakes
    assert [x[0] for x in m] == [2, 2, 3], m
    assert "unknown metric" in m[0][1] and "unknown comparison '=<'" in m[1][1]
    assert "unknown comparison '='" in m[2][1]  # '=' inside the filter is not the operator
