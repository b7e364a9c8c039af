"""Advice under measurement noise: bootstrap replicas, the stated tie-break toward the
simpler configuration, and "cannot tell" when the replicas do not agree."""

from __future__ import annotations

import numpy as np
import pytest

from trtcheck.analyze.advice.advise import AdviseRequest, advise
from trtcheck.analyze.advice.advise_noise import (
    BEAT_SHARE,
    MATERIAL_GAIN,
    TIE_BREAK,
    choose_sequential,
    simplicity,
    stability_status,
)
from trtcheck.analyze.advice.curve import make_curve, parse_curve_text
from trtcheck.analyze.advice.simulator import Candidate
from trtcheck.report.advise_text import advice_text


def test_simpler_wins_unless_a_complex_one_beats_it_beyond_the_noise():
    order = [0, 1, 2]  # simplest first
    # config 1 is 20% better in every replica: it wins; config 2 only 3% better than 1
    p99 = np.array([[10.0, 8.0, 7.8]] * 10)
    assert choose_sequential(p99, order, BEAT_SHARE) == 1
    # config 1 is 20% better in only 70% of replicas: not enough evidence
    p99 = np.array([[10.0, 8.0, 11.0]] * 7 + [[10.0, 10.5, 11.0]] * 3)
    assert choose_sequential(p99, order, BEAT_SHARE) == 0
    # unstable (inf) never beats anything
    p99 = np.array([[10.0, np.inf, 12.0]] * 5)
    assert choose_sequential(p99, order, BEAT_SHARE) == 0
    assert MATERIAL_GAIN >= 0.05


def test_simplicity_order_no_window_then_instances_then_max_batch():
    cs = [Candidate(1000.0, 2, 1), Candidate(0.0, 32, 1), Candidate(0.0, 8, 2),
          Candidate(0.0, 1, 1), Candidate(500.0, 2, 1)]
    got = [(c.window_us, c.max_batch_size, c.instances) for c in sorted(cs, key=simplicity)]
    assert got == [(0.0, 1, 1), (0.0, 32, 1), (0.0, 8, 2), (500.0, 2, 1), (1000.0, 2, 1)]


def test_exact_inputs_give_a_stable_answer_and_state_the_tie_break():
    adv = advise(AdviseRequest(curve=parse_curve_text("1:0.29"), rate_per_s=200.0,
                               per_request_overhead_ms=12.0))
    st = adv.recommendation.stability
    assert st is not None and st.status == "stable" and st.replicas == 12
    assert st.share == 1.0 and st.choices[0].max_batch_size == 1
    assert st.resampled[0].startswith("simulation only (arrivals and draws, a new seed per "
                                      "replica): the inputs were given, exact")
    assert st.tie_break == TIE_BREAK
    text = advice_text(adv)
    assert "Chosen on the median P99 of 12 simulation replicas (exact input" \
        in adv.recommendation.summary
    assert "tie-break: simpler wins unless" in text


def test_a_small_window_gain_does_not_win():
    # a 10 ms window reads ~7% better on P99 than batching without waiting: within the
    # noise, so the simpler configuration is recommended and the path says why
    adv = advise(AdviseRequest(curve=parse_curve_text("1:20,8:40,32:110"), rate_per_s=3000.0))
    rec = adv.recommendation
    assert rec.prediction.window_us == 0 and rec.prediction.max_batch_size == 32
    last = [n for n in adv.path if n.step == "batching"][-1]
    if rec.runner_up is not None and rec.runner_up.p99_ms < rec.prediction.p99_ms:
        assert "within the noise" in last.conclusion


def _noisy_curve(seed: int, cv: float, draw: int = 0) -> object:
    """A bench of 40 samples per batch size with lognormal noise (sigma ``cv``): the
    ``draw``-th curve of the generator seeded ``seed``."""
    rng = np.random.default_rng(seed)
    pts = [(1, 10.0), (2, 14.0), (4, 22.0), (8, 38.0)]
    for _ in range(draw + 1):
        samples = {b: (t * np.exp(cv * rng.standard_normal(40))).tolist() for b, t in pts}
    return make_curve(pts, source="noisy bench", samples_ms=samples, noise_tolerance=0.5)


def test_noisy_measurements_say_cannot_tell_and_what_to_remeasure():
    adv = advise(AdviseRequest(curve=_noisy_curve(1, 0.8, draw=1), rate_per_s=80.0,
                               requests=2000))
    rec = adv.recommendation
    st = rec.stability
    assert st.status == "cannot-tell"
    assert st.share < 0.6 and len(st.choices) >= 2
    assert abs(sum(c.share for c in st.choices) - 1.0) < 1e-9
    assert rec.summary.startswith("Cannot tell")
    assert "P50" not in rec.summary and "P99" not in rec.summary  # no precise latency
    assert st.remeasure and "T(b) at batch" in st.remeasure[0]
    assert "T(b) medians and spread (raw bench samples)" in st.resampled
    last = [n for n in adv.path if n.step == "batching"][-1]
    assert last.answer == "cannot-tell" and last.value is None
    text = advice_text(adv)
    assert "Recommendation [cannot-tell]" in text and "re-measure:" in text
    # the exported setting is the replicas' most frequent choice
    top = max(st.choices, key=lambda c: c.share)
    assert (rec.prediction.window_us, rec.prediction.max_batch_size) == \
        (top.window_us, top.max_batch_size)


def test_same_inputs_same_answer():
    a = advise(AdviseRequest(curve=_noisy_curve(1, 0.3), rate_per_s=50.0, requests=2000))
    b = advise(AdviseRequest(curve=_noisy_curve(1, 0.3), rate_per_s=50.0, requests=2000))
    pa, pb = a.recommendation.prediction, b.recommendation.prediction
    assert (pa.window_us, pa.max_batch_size, pa.instances) == \
        (pb.window_us, pb.max_batch_size, pb.instances)
    assert a.recommendation.stability.share == pytest.approx(b.recommendation.stability.share)


def test_replicas_zero_keeps_the_nominal_choice():
    adv = advise(AdviseRequest(curve=parse_curve_text("1:2,8:4,32:10"), rate_per_s=1200.0,
                               replicas=0))
    assert adv.recommendation.stability is None


def test_demo_advice_takes_its_rate_from_the_measured_capacity():
    from trtcheck.pipeline import DEMO_LOAD_SHARE, advice_from_results
    from trtcheck.results import load_results
    from goldtest import REPO

    results = load_results(REPO / "tests" / "gold" / "inputs" / "full.json")
    adv = advice_from_results(results, None, None, demo=True)
    f = adv.formulas
    # the rate is 10% of one instance's batch-1 capacity (1 / S(1)), to 2 digits
    assert f.queue_formation_ratio == pytest.approx(DEMO_LOAD_SHARE, rel=0.06)
    assert adv.inputs.device == "cpu"
    assert any(n.startswith("demo: the arrival rate") for n in adv.curve.notes)
    assert adv.export is not None
    text = " ".join([adv.recommendation.summary] + [n.conclusion for n in adv.path])
    assert "GPU" not in text


def test_the_demo_headline_at_the_busy_rate_is_the_checked_advice():
    """The demo's note names the advice at the busy rate; it goes through the same noise
    check as ``advise --from DIR --arrival-rate BUSY``, so the two say the same (on this
    input the nominal choice, without the check, is another one)."""
    import re

    from trtcheck.analyze.advice.inputs import advice_inputs
    from trtcheck.pipeline import AdviseSettings, advice_from_results, advise_curve
    from trtcheck.results import load_results
    from goldtest import REPO

    results = load_results(REPO / "tests" / "gold" / "inputs" / "full.json")
    adv = advice_from_results(results, None, None, demo=True)
    note = next(n for n in adv.curve.notes if n.startswith("demo: the arrival rate"))
    m = re.search(r"At ([0-9.]+) req/s \(lambda x S\(1\) = ([0-9.]+)(?: < 1)?: ", note)
    busy, ratio = float(m.group(1)), float(m.group(2))
    # at 0.9 of one instance's batch-1 capacity no queue forms by itself: the lesson
    # must not say one does (a fresh-user trial read "a queue forms" at 0.90)
    assert ratio == pytest.approx(0.9, abs=0.06)
    assert "a queue forms" not in note and "no queue forms by itself" not in note
    assert "the server keeps up on average, yet Poisson arrivals bunch, so a queue does " \
        "form at batch 1" in note
    assert f"`trtcheck advise --from REPORT_DIR --arrival-rate {busy:g}`" in note
    curve, measured = advice_inputs(results, source="this run")
    checked = advise_curve(curve, measured, AdviseSettings(rate_per_s=busy,
                                                           device_kind="cpu"))
    head = checked.recommendation.summary.split(" Predicted:")[0]
    assert f"the advice would be: {head}" in note
    nominal = advise_curve(curve, measured, AdviseSettings(rate_per_s=busy, replicas=0,
                                                           device_kind="cpu"))
    assert nominal.recommendation.summary.split(" Predicted:")[0] != head


def test_status_words_follow_the_documented_thresholds():
    """stable only from the tie-break's 80% on, likely from 60%, cannot tell below."""
    from trtcheck.analyze.advice.advise_noise import DECIDED_SHARE, STABLE_SHARE

    assert STABLE_SHARE == BEAT_SHARE == 0.8 and DECIDED_SHARE == 0.6
    assert stability_status(1.0) == stability_status(0.8) == "stable"
    assert stability_status(8 / 12) == stability_status(0.6) == "likely"
    assert stability_status(7 / 12) == "cannot-tell"


def test_text_never_calls_a_67_percent_choice_stable():
    adv = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 300.0))
    st = adv.recommendation.stability
    st.status, st.share = stability_status(8 / 12), 8 / 12
    st.resampled = ["T(b) medians and spread (raw bench samples)"]  # measured input
    line = next(ln for ln in advice_text(adv).splitlines() if ln.startswith("Stability:"))
    assert line.startswith("Stability: likely - the recommendation holds in 67% of")


def test_a_typed_curve_without_samples_is_exact_input_and_never_cannot_tell():
    adv = advise(AdviseRequest(curve=parse_curve_text("1:1.2,8:2.0,32:5.5"), rate_per_s=3000.0,
                               slo_p99_ms=20.0))
    rec = adv.recommendation
    assert rec.kind != "cannot-tell" and rec.stability.status == "stable"
    assert rec.prediction.p99_ms is not None and rec.prediction.p99_ms <= 20.0
    assert "Cannot tell" not in rec.summary and "bootstrap replicas of the measurements" \
        not in rec.summary


def test_exact_choice_applies_the_tie_break_to_the_median_over_replicas():
    import numpy as np

    from trtcheck.analyze.advice.advise_noise import exact_choice

    # column 0 is simplest; seeds disagree, but its median is within 10% of column 1's
    p99 = np.array([[5.0, 4.6], [4.4, 4.7], [5.2, 4.5], [4.5, 4.8], [4.9, 4.6]])
    assert exact_choice(p99) == 0
    p99[:, 0] += 1.0  # now the simpler one is materially worse
    assert exact_choice(p99) == 1
    p99[:3, 0] = np.inf  # the simpler one infeasible in most replicas
    p99[:, 0] -= 1.0
    assert exact_choice(p99) == 1


def test_the_demo_busy_queue_says_one_thing():
    """A fresh user read "no queue forms by itself, but about 4.5 requests wait on
    average" at lambda x S(1) = 0.91 as a contradiction: below 1 the server keeps up on
    average and a queue does form from Poisson bunching; the words say that, once."""
    from trtcheck.pipeline import busy_queue_words

    busy = busy_queue_words(0.91)
    assert busy.startswith("lambda x S(1) = 0.91 < 1: the server keeps up on average")
    assert "a queue does form at batch 1, about 4.6 requests waiting on average" in busy
    assert "no queue forms" not in busy and ", but" not in busy
    assert busy_queue_words(1.2) == "lambda x S(1) = 1.2: a queue forms by itself"
