"""advise --window-ms/--max-batch/--instances/--preferred-batch: predictions of exactly
the configurations asked for, next to the recommendation (``what_if``)."""

from __future__ import annotations

import json

import pytest

from trtcheck.analyze.advice.advise import AdviseRequest, advise, what_if
from trtcheck.analyze.advice.curve import parse_curve_text
from trtcheck.analyze.advice.simulator import Candidate

SEED_BURST = ("advise", "--latency-curve", "1:0.29,8:0.4,32:1.0",
              "--per-request-overhead-ms", "12", "--serial-overhead", "--load", "burst:64",
              "--window-ms", "0,20,50,100", "--max-batch", "32", "--format", "json")

FIELDS = ("window_us", "max_batch_size", "instances", "p50_ms", "p95_ms", "p99_ms",
          "mean_batch", "throughput_queries_per_s", "utilisation", "stable")


def test_seed_burst_behind_a_serial_layer_shows_the_seed_table_direction(cli):
    res = cli(*SEED_BURST)
    assert res.returncode == 0, res.stderr
    adv = json.loads(res.stdout)
    wi = adv["what_if"]
    assert [w["window_us"] for w in wi] == [0, 20000, 50000, 100000]
    for w in wi:
        assert all(k in w for k in FIELDS)
        assert w["max_batch_size"] == 32 and w["instances"] == 1 and w["stable"]
    qps = [w["throughput_queries_per_s"] for w in wi]
    p50 = [w["p50_ms"] for w in wi]
    assert all(a > b for a, b in zip(qps, qps[1:])), qps  # QPS falls with the window
    assert all(a < b for a, b in zip(p50, p50[1:])), p50  # P50 rises with it
    assert wi[0]["mean_batch"] == pytest.approx(1.0)
    assert wi[-1]["mean_batch"] > 4  # batches do form, and still lose
    assert adv["recommendation"]["kind"] == "no-batching"
    assert adv["inputs"]["load"] == "burst:64"


def test_a_configuration_the_load_cannot_carry_is_marked_unstable_not_an_error(cli):
    res = cli("advise", "--latency-curve", "1:2,8:4,32:10", "--arrival-rate", "1200",
              "--window-ms", "0,2", "--max-batch", "1,8", "--instances", "1", "--format", "json")
    assert res.returncode == 0, res.stderr
    wi = json.loads(res.stdout)["what_if"]
    assert len(wi) == 4
    by = {(w["max_batch_size"], w["window_us"]): w for w in wi}
    # max batch 1 serves 500 req/s: 1200 req/s is more than it can carry
    assert not by[(1, 0)]["stable"] and by[(1, 0)]["utilisation"] > 1
    assert by[(1, 0)]["p99_ms"] is None
    assert by[(8, 0)]["stable"] and by[(8, 0)]["p99_ms"] > 0
    text = cli("advise", "--latency-curve", "1:2,8:4,32:10", "--arrival-rate", "1200",
               "--window-ms", "0,2", "--max-batch", "1,8").stdout
    assert "What-if" in text and "unstable: the load exceeds its capacity" in text


@pytest.mark.parametrize("args, word", [
    (("--load", "burst:64", "--arrival-rate", "200"), "--load and --arrival-rate"),
    (("--load", "open:200", "--arrival", "constant"), "--load and --arrival"),
    (("--arrival-rate", "200", "--max-batch", "4", "--preferred-batch", "8"),
     "above every --max-batch"),
    (("--arrival-rate", "200", "--window-ms", "-1"), "--window-ms"),
    (("--load", "burst:64,open:3"), "one load shape"),
])
def test_conflicting_options_give_one_line_and_exit_2(cli, args, word):
    res = cli("advise", "--latency-curve", "1:1,8:2", *args)
    assert res.returncode == 2
    lines = [ln for ln in res.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), res.stderr
    assert word in lines[0]
    assert "Traceback" not in res.stderr


def test_what_if_is_a_reusable_function_with_preferred_sizes():
    curve = parse_curve_text("1:2,8:4,32:10")
    req = AdviseRequest(curve=curve, rate_per_s=1200.0, requests=2000)
    got = what_if(req, [Candidate(2000.0, 32, 1), Candidate(2000.0, 32, 1, (4,))])
    assert [g.preferred_batch_sizes for g in got] == [[], [4]]
    assert all(g.stable for g in got)
    # a preferred size goes out as soon as it is formed: smaller batches than waiting
    assert got[1].mean_batch < got[0].mean_batch
    assert got[1].dispatch_reasons.get("preferred", 0) > 0
    # the same predictions come back inside the advice, in order
    req.what_if = [Candidate(2000.0, 32, 1), Candidate(2000.0, 32, 1, (4,))]
    req.replicas = 0
    adv = advise(req)
    assert [(w.window_us, w.preferred_batch_sizes) for w in adv.what_if] == \
        [(2000.0, []), (2000.0, [4])]
    assert adv.what_if[0].p99_ms == pytest.approx(got[0].p99_ms)
