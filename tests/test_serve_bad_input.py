"""Bad input to trtcheck serve ends as one line with exit 2, never an internal error
(exit 4) and never a silent NaN/inf measurement."""

from __future__ import annotations

import pytest

from trtcheck.errors import InputError

from tests.conftest import exit2 as _exit2

SYN = ["serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0", "--max-batch", "8",
       "--repeats", "1", "--warmup-requests", "0"]


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
    _exit2(SYN + ["--load", f"trace:{f}"], "not a text file", capsys)


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


def test_serve_preferred_batch_no_configuration_uses(capsys):
    """Preferred sizes above every --max-batch were dropped silently (Triton refuses them)."""
    _exit2(SYN + ["--load", "burst:4", "--preferred-batch", "4,16"], "--preferred-batch", capsys)


def test_serving_an_export_folder_says_it_holds_no_model(tmp_path, trtexec_exports):
    from trtcheck.backends.registry import open_backend

    with pytest.raises(InputError) as e:
        open_backend(trtexec_exports / "resnet18-a100-fp16")
    assert "is a folder" in str(e.value) and "--backend" not in (e.value.hint or "")


@pytest.mark.parametrize("value,needle", [
    ("0", "1..1024"),
    ("1,x", "comma-separated list of integers"),
    ("2,2", "more than once"),
    ("1,2", "one instance count per command"),  # a list sweeps live servers only
])
def test_serve_instances_list_rules(value, needle, capsys):
    _exit2(SYN + ["--instances", value, "--load", "burst:4"], needle, capsys)


@pytest.mark.parametrize("value,needle", [("0,1", "1..1024"), ("1,1", "more than once")])
def test_live_instances_list_checked_before_any_request(value, needle, capsys):
    # nothing listens on port 9: the list is refused before the server is asked
    _exit2(["serve", "--url", "http://127.0.0.1:9", "--model", "m", "--instances", value,
            "--load", "burst:4"], needle, capsys)
