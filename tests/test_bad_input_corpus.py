"""The bad-input corpus (``tests/bad_inputs.py``) through the real CLI boundary, in this
process: every case exits 2 or 3 with one ``error:`` line, no traceback, within its time
bound, and leaves no output behind. The table of what is tried is in
``docs/robustness.md``."""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path

import pytest
from bad_inputs import build
from cli_helper import invoke as run_main

TIME_BOUND_S = 60
"""A case running longer than this hangs (every bad input is refused before any work)."""


class _Hung(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Hung()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("bad-inputs")
    return folder, build(folder)


def test_corpus_covers_every_input_kind_and_variant(corpus):
    from bad_inputs import FILE_VARIANTS

    _, cases = corpus
    kinds = {c.kind for c in cases}
    assert kinds == {"onnx", "plan", "trtexec-export", "results", "policy", "trace", "npz",
                     "list-option"}
    for kind in kinds - {"list-option"}:
        variants = {c.variant for c in cases if c.kind == kind}
        assert set(FILE_VARIANTS) <= variants, (kind, set(FILE_VARIANTS) - variants)


def test_every_bad_input_is_one_line_exit_2_or_3(corpus, monkeypatch):
    folder, cases = corpus
    monkeypatch.chdir(folder)
    monkeypatch.setenv("TRTCHECK_NO_PROGRESS", "1")
    old = signal.signal(signal.SIGALRM, _alarm)
    problems: list[str] = []
    slowest = (0.0, "")
    try:
        for case in cases:
            start = time.perf_counter()
            signal.alarm(TIME_BOUND_S)
            try:
                res = run_main(*case.args)
            except _Hung:
                problems.append(f"{case.id}: no answer within {TIME_BOUND_S} s")
                continue
            finally:
                signal.alarm(0)
            took = time.perf_counter() - start
            slowest = max(slowest, (took, case.id))
            errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
            if res.returncode not in (2, 3):
                problems.append(f"{case.id}: exit {res.returncode}: {res.stderr[-300:]!r}")
            elif len(errors) != 1 or "Traceback" in res.stderr:
                problems.append(f"{case.id}: not one error line: {res.stderr[-300:]!r}")
            left = [str(p) for p in case.outputs if Path(p).exists()]
            if left:
                problems.append(f"{case.id}: left {left}")
                for p in case.outputs:  # so the next case starts clean
                    shutil.rmtree(p, ignore_errors=True) if Path(p).is_dir() else \
                        Path(p).unlink(missing_ok=True)
    finally:
        signal.signal(signal.SIGALRM, old)
    assert not problems, f"{len(problems)} of {len(cases)} cases:\n" + "\n".join(problems)
