"""Gate policy parsing: every policy mistake exits 2 with one message naming the policy
line; several mistakes are reported at once, each with its line, and dependent mistakes
are not repeated (real CLI boundary)."""

from __future__ import annotations

import pytest

from trtcheck.analyze.gate.gate_policy import PolicyError, parse_policy
from trtcheck.cli import main
from trtcheck.errors import EXIT_BAD_INPUT, InputError

from trtcheck.testing import synthetic_results as g

OK_HEAD = "version: 1\nbudgets:\n"

# (name, policy text or bytes, line the message must name, fragment of the message/hint)
CASES = [
    ("typo-top-key", "version: 1\nbudget:\n  - bench.batch[8].p99_ms <= 5 ms\n", 2,
     "did you mean 'budgets'"),
    ("typo-setting", "settings:\n  confidense: 0.9\nbudgets:\n  - bench.batch[8].p99_ms <= 5\n",
     2, "did you mean 'confidence'"),
    ("unknown-metric", OK_HEAD + "  - bench.batch[8].p99ms <= 5 ms\n", 3, "did you mean 'p99_ms'"),
    ("unknown-section", OK_HEAD + "  - inspecton.parameter_bytes <= 5\n", 3,
     "did you mean 'inspection'"),
    ("bad-unit-sec", OK_HEAD + "  - bench.batch[8].p99_ms <= 5 sec\n", 3, "unknown unit 'sec'"),
    ("unit-wrong-dimension", OK_HEAD + "  - bench.batch[8].p99_ms <= 2 MiB\n", 3, "is a size"),
    ("rate-wrong-noun", OK_HEAD + "  - bench.batch[8].throughput_samples_per_s >= 10 queries/s\n",
     3, "counts queries"),
    ("percentile-out-of-range", OK_HEAD + "  - bench.batch[8].p100_ms <= 5 ms\n", 3,
     "out of range"),
    ("percentile-zero", OK_HEAD + "  - bench.batch[1].p0_ms <= 5 ms\n", 3, "out of range"),
    ("yaml-syntax-bracket", OK_HEAD + "  - bench.batch[8].p99_ms <= 5\n  - [unclosed\n", 5,
     "YAML syntax error"),
    ("yaml-tab-indent", "budgets:\n\t- bench.batch[8].p99_ms <= 5\n", 2, "YAML syntax error"),
    ("binary-file", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 1, "not a text file"),
    ("python-file", "import os\nprint(os.getcwd())\n", 1, "a policy is a mapping"),
    ("json-list", "[1, 2, 3]\n", 1, "a policy is a mapping"),
    ("empty-file", "", 1, "empty"),
    ("comments-only", "# nothing here\n", 1, "no YAML document"),
    ("confidence-out-of-range", ("settings:\n  confidence: 95\nbudgets:\n"
     "  - bench.batch[8].p99_ms <= 5\n"), 2, "must lie in (0.5, 1)"),
    ("bad-choice", ("settings:\n  on_inconclusive: maybe\nbudgets:\n"
     "  - bench.batch[8].p99_ms <= 5\n"), 2, "one of warn, fail"),
    ("resamples-too-few", ("settings:\n  resamples: 10\nbudgets:\n"
     "  - bench.batch[8].p99_ms <= 5\n"), 2, "integer in [100"),
    ("budgets-not-a-list", "budgets:\n  p99: 5\n", 2, "must be a list"),
    ("no-comparison", OK_HEAD + "  - bench.batch[8].p99_ms 5 ms\n", 3, "no comparison"),
    ("mapping-typo", OK_HEAD + "  - metric: bench.batch[8].p99_ms\n    maximum: 5 ms\n", 4,
     "did you mean 'max'"),
    ("min-above-max", OK_HEAD + "  - metric: bench.batch[8].p99_ms\n    min: 9 ms\n"
     "    max: 5 ms\n", 3, "is above max"),
    ("duplicate-key", ("budgets:\n  - bench.batch[8].p99_ms <= 5\nbudgets:\n"
     "  - bench.batch[1].p99_ms <= 5\n"), 3, "duplicate key"),
    ("string-ordered", OK_HEAD + "  - bench[0].backend.precision < fp16\n", 3,
     "only == and != apply"),
    ("list-not-value", OK_HEAD + "  - inspection.lints == 0\n", 3, "len(inspection.lints)"),
    ("record-not-value", OK_HEAD + "  - bench.batch[8] <= 5\n", 3, "not a value"),
    ("regression-no-percent", ("baseline:\n  - metric: bench.batch[8].p99_ms\n"
     "    max_regression: 5\n"), 3, "write a percentage"),
    ("regression-missing", "baseline:\n  - metric: bench.batch[8].p99_ms\n", 2,
     "has no max_regression"),
    ("direction-unknown", "baseline:\n  - bench.batch[8].batch_size: 5%\n", 2,
     "direction: lower"),
    ("bad-direction", ("baseline:\n  - metric: bench.batch[8].p99_ms\n    max_regression: 5%\n"
     "    direction: down\n"), 4, "one of lower, higher"),
    ("version-2", "version: 2\nbudgets:\n  - bench.batch[8].p99_ms <= 5\n", 1,
     "unsupported policy version"),
    ("no-rules", "version: 1\nsettings:\n  seed: 1\n", 1, "no rules"),
    ("unknown-function", OK_HEAD + "  - avg(bench.batch[*].p99_ms) <= 5 ms\n", 3,
     "unknown function 'avg'"),
    ("filter-unknown-field", OK_HEAD + "  - len(inspection.lints[level=error]) == 0\n", 3,
     "no field 'level'"),
]


@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("gate-errors")
    return g.write(g.results(n=500, seed=1), d / "results.json")


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as ei:
        main(argv)
    cap = capsys.readouterr()
    return ei.value.code, cap.out, cap.err


def test_table_has_at_least_15_cases():
    assert len(CASES) >= 15


@pytest.mark.parametrize("name,text,line,fragment", CASES, ids=[c[0] for c in CASES])
def test_policy_mistake(name, text, line, fragment, tmp_path, results_file, capsys):
    pol = tmp_path / "policy.yaml"
    if isinstance(text, bytes):
        pol.write_bytes(text)
    else:
        pol.write_text(text, encoding="utf-8")
    code, out, err = run_main(["gate", str(results_file), "--policy", str(pol)], capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"error: {pol}:{line}: "), err
    assert fragment in err, err
    assert "Traceback" not in err and out == ""
    assert all(ln.startswith(("error: ", "hint: ")) for ln in lines), err


def test_baseline_rules_without_baseline_is_usage_error(tmp_path, results_file, capsys):
    pol = tmp_path / "policy.yaml"
    pol.write_text("budgets:\n  - bench.batch[8].p99_ms <= 50 ms\nbaseline:\n"
                   "  - bench.batch[8].p99_ms: 5%\n")
    code, _out, err = run_main(["gate", str(results_file), "--policy", str(pol)], capsys)
    assert code == 2
    assert f"{pol}:4:" in err and "--baseline" in err


@pytest.mark.parametrize("what", ["policy", "results", "baseline"])
def test_missing_files_exit_2(what, tmp_path, results_file, capsys):
    pol = tmp_path / "policy.yaml"
    pol.write_text("budgets:\n  - bench.batch[8].p99_ms <= 50 ms\n")
    argv = ["gate", str(results_file), "--policy", str(pol)]
    if what == "policy":
        argv[3] = str(tmp_path / "nope.yaml")
    elif what == "results":
        argv[1] = str(tmp_path / "nope.json")
    else:
        argv += ["--baseline", str(tmp_path / "nope.json")]
    code, _, err = run_main(argv, capsys)
    assert code == 2 and "not found" in err


def test_results_file_that_is_not_results(tmp_path, capsys):
    pol = tmp_path / "policy.yaml"
    pol.write_text("budgets:\n  - bench.batch[8].p99_ms <= 50 ms\n")
    bad = tmp_path / "r.json"
    bad.write_text('{"hello": 1}')
    code, _, err = run_main(["gate", str(bad), "--policy", str(pol)], capsys)
    assert code == 2 and "not a trtcheck results file" in err


def test_docs_example_policy_is_valid():
    """The policy shown in docs/gate.md loads (every path, unit and key in it is real)."""
    import re
    from pathlib import Path

    from trtcheck.analyze.gate.gate_policy import parse_policy
    doc = (Path(__file__).resolve().parent.parent / "docs" / "gate.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", doc, flags=re.DOTALL)
    pol = parse_policy(blocks[0], source="docs/gate.md")
    assert len(pol.rules) == 16
    assert {r.kind for r in pol.rules} == {"budget", "baseline"}
    assert parse_policy(blocks[1]).rules  # the false-fail benchmark's policy


def test_bound_error_line(tmp_path, results_file, capsys):
    pol = tmp_path / "policy.yaml"
    pol.write_text("budgets:\n  - metric: bench.batch[8].p99_ms\n    name: latency\n"
                   "    max: 5 sec\n")
    code, _, err = run_main(["gate", str(results_file), "--policy", str(pol)], capsys)
    assert code == 2 and f"{pol}:4:" in err
    pol.write_text("budgets:\n  - metric: bench.batch[8].p99_ms\n    name: latency\n"
                   "    max: 500 ms\n")
    code, out, _ = run_main(["gate", str(results_file), "--policy", str(pol)], capsys)
    assert code == 0 and "policy.yaml:2" in out


def test_readme_example_policy_is_valid():
    """The policy shown in README.md loads (the README's YAML blocks: workflow, policy)."""
    import re
    from pathlib import Path

    from trtcheck.analyze.gate.gate_policy import parse_policy
    doc = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.DOTALL)
              if b.startswith("version: 1")]
    assert len(blocks) == 1
    pol = parse_policy(blocks[0], source="README.md")
    assert len(pol.rules) == 5
    assert {r.kind for r in pol.rules} == {"budget", "baseline"}


# --- hostile policy text ---------------------------------------------------------------

BILLION_LAUGHS = (b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
                  b"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                  b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                  b"f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
                  b"budgets:\n  - metric: bench.batch[1].p99_ms\n    max: *g\n")


@pytest.mark.parametrize("data,needle", [
    (BILLION_LAUGHS, "policy.yaml:2: YAML aliases (*name) are not allowed"),
    (b"budgets:\n  - bench.batch[1].p99_ms <= 5 ms\x07\n", "control character U+0007"),
    (b"budgets: []\n\x1b[2J\n", "policy.yaml:2: the policy holds the control character U+001B"),
    (b"[" * 100000, "nested too deeply"),
    (b"budgets:\n  - metric: bench.batch[1].p99_ms\n    max: " + b"9" * 5000 + b"\n",
     "policy.yaml:3: a value YAML cannot convert"),
    (b"budgets:\n  - metric: bench.batch[1].p99_ms\n    max: 0x" + b"f" * 5000 + b"\n",
     "beyond the float range"),
])
def test_hostile_policies_are_one_line_input_errors(data, needle):
    from trtcheck.analyze.gate.gate_policy import parse_policy
    from trtcheck.errors import InputError

    with pytest.raises(InputError) as e:
        parse_policy(data)
    assert needle in e.value.message
    assert len(e.value.message) < 500  # nothing expanded into the message


def test_policy_from_a_fifo_or_device_is_refused(tmp_path):
    import os

    from trtcheck.analyze.gate.gate_policy import load_policy
    from trtcheck.errors import InputError

    fifo = tmp_path / "policy.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        load_policy(fifo)
    with pytest.raises(InputError, match="device"):
        load_policy("/dev/zero")


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


@pytest.mark.parametrize("raw", ["1e400 ms", "1e400", "-1e999 samples/s"])
def test_bounds_that_overflow_to_infinity_are_refused(raw):
    """'inf ms' was refused, but '1e400 ms' overflowed to inf and became a bound."""
    from trtcheck.units import UnitError, metric_unit, parse_quantity
    leaf = "throughput_samples_per_s" if "samples" in raw else "p99_ms"
    with pytest.raises(UnitError, match="finite"):
        parse_quantity(raw, metric_unit(leaf))
