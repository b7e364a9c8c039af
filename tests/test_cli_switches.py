"""The switches and progress people expect: -v/-q, --version with the runtimes, progress
lines on stderr whether or not it is a terminal, one option type per option, plain help
texts, and clear exits when ONNX Runtime or uvloop is missing."""

from __future__ import annotations

import importlib
import sys
from importlib import metadata

import click
import pytest

from tests.conftest import assert_one_line_error, run_cli
from trtcheck.backends.registry import BACKENDS
from trtcheck.cli import COMMANDS, RUNTIME_DISTRIBUTIONS
from trtcheck.cli.common import BACKEND_NAMES
from trtcheck.measure.progress import throttled

FAST = ["--warmup", "0", "--min-duration", "0.05", "--min-samples", "5"]


def _commands() -> dict[str, click.Command]:
    return {name: importlib.import_module(f"trtcheck.cli.{mod}").cli
            for name, mod in COMMANDS.items()}


def test_version_lists_the_runtimes_without_importing_them():
    code = ("import sys\nfrom trtcheck.cli import main\ntry:\n    main(['--version'])\n"
            "except SystemExit:\n    pass\n"
            "print('imported:', sorted(m for m in ('onnxruntime', 'tensorrt', 'tensorrt_rtx', "
            "'cuda') if m in sys.modules))")
    import subprocess

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("trtcheck, version ") and "results schema " in out
    for name, dists in RUNTIME_DISTRIBUTIONS:
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(name + " "))
        installed = [d for d in dists if _has(d)]
        if installed:
            assert metadata.version(installed[0]) in line and installed[0] in line
        else:
            assert "not installed" in line
    assert "imported: []" in out


def _has(dist: str) -> bool:
    try:
        metadata.version(dist)
        return True
    except metadata.PackageNotFoundError:
        return False


def test_progress_lines_without_a_terminal_and_q_v(tiny_relu_model):
    args = ["bench", str(tiny_relu_model), "--shapes", "x:1x3x8x8", "--batch", "1,2", *FAST]
    res = run_cli(*args)  # stderr is a pipe here, not a terminal
    assert res.returncode == 0, res.stderr
    per_batch = [ln for ln in res.stderr.splitlines() if ln.startswith("bench: batch ")]
    assert [ln.split("(")[1][:3] for ln in per_batch] == ["1/2", "2/2"]
    assert "median" in per_batch[0] and "p99" in per_batch[0]
    quiet = run_cli("-q", *args)
    assert quiet.returncode == 0 and quiet.stderr == ""  # the table still goes to stdout
    assert "batch" in quiet.stdout.lower() and quiet.stdout.count("\n") >= 3
    verbose = run_cli("-v", *args)
    assert verbose.returncode == 0 and "bench: batch 1 (1/2) starts" in verbose.stderr
    errors_only = run_cli("-qq", "bench", str(tiny_relu_model))
    assert errors_only.returncode == 2 and errors_only.stderr.startswith("error: ")


def test_throttled_passes_one_line_per_interval():
    now = [0.0]
    seen: list[str] = []
    emit = throttled(seen.append, 5.0, clock=lambda: now[0])
    for t, line in [(0.0, "a"), (1.0, "b"), (4.9, "c"), (5.0, "d"), (9.0, "e"), (10.1, "f")]:
        now[0] = t
        emit(line)
    assert seen == ["a", "d", "f"]


def test_backend_is_one_choice_everywhere():
    assert set(BACKEND_NAMES) == set(BACKENDS)
    found = 0
    for name, cmd in _commands().items():
        for p in cmd.params:
            if p.name == "backend_name":
                found += 1
                assert isinstance(p.type, click.Choice), name
                assert list(p.type.choices) == list(BACKEND_NAMES), name
    assert found >= 4


#: options whose types differ between commands on purpose
DIFFERENT_ON_PURPOSE = {
    "--format": "each command offers the formats it can print",
    "--instances": "serve runs N instances; advise searches N or a range LO..HI",
    "--per-request-overhead-ms": "advise leaves it unset to take it from the results",
    "--load": "serve measures a list of load shapes; advise simulates one",
    "--max-batch": "serve and advise take a list to measure or predict; tune the largest it "
                   "searches",
}


def test_one_option_type_per_option_across_commands():
    types: dict[str, set[str]] = {}
    for cmd in _commands().values():
        for p in cmd.params:
            if isinstance(p, click.Option):
                long = max(p.opts, key=len)
                kind = type(p.type).__name__ + ("[flag]" if p.is_flag else "")
                types.setdefault(long, set()).add(kind)
    mixed = {k: v for k, v in types.items() if len(v) > 1 and k not in DIFFERENT_ON_PURPOSE}
    assert mixed == {}


@pytest.mark.parametrize("word", ["seed experiment", "the seed's", "seed pitfall", "pitfall ",
                                  "seed notes", "the seed measured", "issue "])
def test_help_texts_use_plain_words(word):
    texts = []
    for cmd in [importlib.import_module("trtcheck.cli").cli, *_commands().values()]:
        texts.append(cmd.help or "")
        texts.append(cmd.epilog or "")
        texts += [getattr(p, "help", "") or "" for p in cmd.params]
    assert not [t for t in texts if word in t.lower()]


def test_missing_onnxruntime_is_one_line_exit_3_and_analysis_still_works(tmp_path,
                                                                         tiny_relu_model):
    import subprocess

    hide = ("import sys; sys.modules['onnxruntime'] = None; "
            "from trtcheck.cli import main; main(sys.argv[1:])")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", hide, *args], capture_output=True,
                              text=True, check=False)

    res = run("bench", str(tiny_relu_model), "--shapes", "x:1x3x8x8")
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 3 and lines[-1].startswith("error: ONNX Runtime is not installed")
    assert "pip install onnxruntime " in lines[-1] and "onnxruntime-gpu" in lines[-1]
    assert run("--help").returncode == 0
    assert run("precision", str(tiny_relu_model)).returncode == 3
    # analysis and rendering need no runtime
    out = tmp_path / "s.json"
    made = run_cli("serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0",
                   "--max-batch", "8", "--load", "burst:8", "--repeats", "1", "-o", str(out))
    assert made.returncode == 0, made.stderr
    rendered = run("report", "--from", str(out), "-o", str(tmp_path / "r"))
    assert rendered.returncode == 0, rendered.stderr
    assert (tmp_path / "r" / "report.html").is_file()


def test_missing_uvloop_is_refused_before_any_work_without_leaks():
    import subprocess

    hide = ("import sys, warnings; warnings.simplefilter('default'); "
            "sys.modules['uvloop'] = None; from trtcheck.cli import main; main(sys.argv[1:])")
    res = subprocess.run([sys.executable, "-X", "dev", "-c", hide, "serve", "--synthetic-curve",
                          "1:0.3,8:1", "--uvloop"], capture_output=True, text=True,
                         check=False)
    assert res.returncode == 3
    assert res.stderr.strip().splitlines() == [
        "error: uvloop is not installed; hint: pip install uvloop or drop --uvloop"]
    assert_one_line_error(run_cli("serve", "--synthetic-curve", "1:0.3,8:1", "--uvloop",
                                  env={"PYTHONWARNINGS": "default"})
                          if not _has("uvloop") else res, 3, "uvloop")
