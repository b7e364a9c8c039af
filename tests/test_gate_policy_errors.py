"""Every policy mistake exits 2 with one message naming the policy line (real CLI boundary)."""

from __future__ import annotations

import gate_synth as g
import pytest

from trtcheck.cli import main

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

    from trtcheck.analyze.gate import parse_policy
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

    from trtcheck.analyze.gate import parse_policy
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
    from trtcheck.analyze.gate import parse_policy
    from trtcheck.errors import InputError

    with pytest.raises(InputError) as e:
        parse_policy(data)
    assert needle in e.value.message
    assert len(e.value.message) < 500  # nothing expanded into the message


def test_policy_from_a_fifo_or_device_is_refused(tmp_path):
    import os

    from trtcheck.analyze.gate import load_policy
    from trtcheck.errors import InputError

    fifo = tmp_path / "policy.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        load_policy(fifo)
    with pytest.raises(InputError, match="device"):
        load_policy("/dev/zero")
