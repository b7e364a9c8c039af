"""QA round 2: bad input to serve / advise / compare ends as one line with exit 2,
never an internal error (exit 4) and never a silent NaN/inf measurement."""

from __future__ import annotations

import pytest

from trtcheck.cli import main

SYN = ["serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0", "--max-batch", "8",
       "--repeats", "1", "--warmup-requests", "0"]


def _exit2(args, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert needle in err and "Traceback" not in err and "internal error" not in err, err


@pytest.mark.parametrize("load,needle", [
    ("open:inf", "rate"),                       # was OverflowError, exit 4
    ("open:1e9", "at most"),                     # was MemoryError (10^9-entry schedule)
    ("open:100:poisson:1000000000", "at most"),
    ("burst:1000000000", "at most"),
])
def test_serve_load_numbers_out_of_range(load, needle, capsys):
    _exit2(SYN + ["--load", load, "--duration-s", "1"], needle, capsys)


def test_serve_binary_trace_is_bad_input(tmp_path, capsys):
    f = tmp_path / "trace.bin"
    f.write_bytes(b"\xf0\x28\x8c\x28\xff\xfe")
    _exit2(SYN + ["--load", f"trace:{f}"], "cannot read", capsys)


@pytest.mark.parametrize("opt,value", [
    ("--window-ms", "inf"),
    ("--duration-s", "nan"),
    ("--late-threshold-ms", "nan"),
    ("--per-request-overhead-ms", "inf"),
    ("--drain-timeout-s", "nan"),
    ("--spread", "nan"),
])
def test_serve_non_finite_options(opt, value, capsys):
    _exit2(SYN + ["--load", "burst:4", opt, value], opt, capsys)


@pytest.mark.parametrize("opt", ["--confidence", "--run-to-run-cv"])
def test_compare_non_finite_options(opt, tmp_path, capsys):
    from trtcheck.results import Results  # noqa: F401  (import check only)
    _exit2(["compare", "a.json", "b.json", opt, "nan"], opt, capsys)


def test_advise_from_a_report_folder(tmp_path, capsys):
    """gate and compare take a report folder for its results.json; advise --from did not."""
    import gate_synth as g
    d = tmp_path / "report"
    d.mkdir()
    g.write(g.results({1: 2.0, 8: 4.0}, n=200, seed=1), d / "results.json")
    with pytest.raises(SystemExit) as e:
        main(["advise", "--from", str(d), "--arrival-rate", "100"])
    cap = capsys.readouterr()
    assert e.value.code in (0, None), cap.err
    assert "Recommendation" in cap.out


def test_serve_output_rules_match_the_other_commands(tmp_path, capsys):
    """serve had its own -o check: -o '' ran the whole sweep and saved nothing, and a
    FIFO (or /dev/null) with --overwrite would have been replaced by a regular file."""
    import os
    _exit2(SYN + ["--load", "burst:4", "-o", ""], "-o is empty", capsys)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _exit2(SYN + ["--load", "burst:4", "-o", str(fifo), "--overwrite"], "not a regular file",
           capsys)
    assert not fifo.is_file()


def test_advise_dispatch_reasons_add_up_to_batches(capsys):
    """Counters add up: the simulator counted dispatch reasons over the warm-up batches too,
    so sum(dispatch_reasons) exceeded `batches` (1,986 vs 1,763 in the demo report)."""
    import json
    with pytest.raises(SystemExit) as e:
        main(["advise", "--latency-curve", "1:2,8:4", "--arrival-rate", "1500", "--format",
              "json"])
    assert e.value.code in (0, None)
    data = json.loads(capsys.readouterr().out)
    cands = data["candidates"]
    assert cands
    for c in cands:
        if c.get("batches"):
            assert sum(c["dispatch_reasons"].values()) == c["batches"], c


def test_serve_preferred_batch_no_configuration_uses(capsys):
    """Preferred sizes above every --max-batch were dropped silently (Triton refuses them)."""
    _exit2(SYN + ["--load", "burst:4", "--preferred-batch", "4,16"], "--preferred-batch", capsys)


def test_advise_from_serve_faster_than_bench_does_not_crash(tmp_path, capsys):
    """`report --demo` on a loaded machine exited 2 with "capacity must be > 0": the serve
    run's executions were much faster than the bench's T(b) (measured under other load),
    the calibrated mean excess was below -T(1), and every batch time came out <= 0."""
    import gate_synth as g
    from trtcheck.results import load_results, save_results
    serve = tmp_path / "s.json"
    with pytest.raises(SystemExit):
        main(["serve", "--synthetic-curve", "1:0.1,8:0.2", "--window-ms", "2",
              "--max-batch", "8", "--load", "open:2000:400", "--repeats", "1",
              "--warmup-requests", "0", "-o", str(serve)])
    capsys.readouterr()
    res = load_results(g.write(g.results({1: 2.0, 8: 40.0}, n=200, seed=1), tmp_path / "b.json"))
    res.serve = load_results(serve).serve
    save_results(res, tmp_path / "both.json")
    with pytest.raises(SystemExit) as e:
        main(["advise", "--from", str(tmp_path / "both.json"), "--arrival-rate", "100"])
    cap = capsys.readouterr()
    assert e.value.code in (0, None), cap.err
    assert "faster on average than the bench" in cap.out
