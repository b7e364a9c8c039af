"""Property test: the decision path and the recommendation say one thing, from the same
inputs the simulation used, over many generated curves, rates and overheads."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from trtcheck.analyze.advice.advise import (
    AdviseRequest,
    advise,
    runner_up_shortfall,
    service_model,
)
from trtcheck.analyze.advice.advise_noise import simplicity
from trtcheck.errors import InputError
from trtcheck.analyze.advice.curve import make_curve


def _text(adv) -> str:
    return " ".join([adv.recommendation.summary] + [n.conclusion for n in adv.path])


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(t1=st.floats(0.05, 30.0), growth=st.floats(0.05, 1.0), share=st.floats(0.05, 0.85),
       per_batch=st.floats(0.0, 5.0), per_req=st.floats(0.0, 15.0), serial=st.booleans(),
       device=st.sampled_from([None, "cpu", "gpu"]), spread=st.floats(0.0, 0.4))
def test_path_agrees_with_the_recommendation(t1, growth, share, per_batch, per_req, serial,
                                             device, spread):
    bs = [1, 2, 4, 8, 16]
    rng = np.random.default_rng(0)
    pts = [(b, t1 * (1 + growth * (b - 1))) for b in bs]
    samples = {b: (t * (1 + spread * rng.standard_normal(60)).clip(0.5)).tolist()
               for b, t in pts} if spread > 0 else None
    curve = make_curve(pts, source="generated", samples_ms=samples)
    rate = share * 1000.0 / (t1 + per_batch)
    if serial and per_req > 0 and rate >= 0.95 * 1000.0 / per_req:
        serial = False  # one serial process cannot take this rate (refused by design)
    req = AdviseRequest(curve=curve, rate_per_s=rate, per_request_overhead_ms=per_req,
                        serial_overhead=serial, per_batch_overhead_ms=per_batch,
                        requests=1000, replicas=4, device=device)
    adv = advise(req)
    rec, f = adv.recommendation, adv.formulas
    text = _text(adv)
    # the rules use the execution time the simulation used, and say which
    svc = service_model(req)
    assert f.s1_ms == pytest.approx(svc.batch_time_ms(1, rate), rel=1e-9)
    assert f.per_instance_rate_per_s == pytest.approx(rate / rec.prediction.instances)
    queue = next(n for n in adv.path if n.question.startswith("Does a queue form"))
    assert queue.value == pytest.approx(f.queue_formation_ratio)
    assert f"S(1) {f.s1_ms:.3g} ms" in queue.conclusion
    if per_batch > 0:
        assert "per-batch overhead" in text
    # the batching step answers with the recommendation's kind (or cannot tell)
    last = [n for n in adv.path if n.step == "batching"][-1]
    undecided = rec.stability is not None and rec.stability.status == "cannot-tell"
    if undecided:
        assert last.answer == "cannot-tell" and rec.summary.startswith("Cannot tell")
        assert "P99" not in rec.summary  # no precise-looking number
    else:
        kind = rec.kind if rec.kind != "add-instances" else last.answer
        assert last.answer == kind
    # no two sentences contradict
    assert not ("a queue forms" in text and "mostly empty" in text), text
    if rec.kind == "no-batching" and f.queue_formation_ratio >= 1:
        assert "no queue forms" not in rec.summary
    run = rec.runner_up
    p = rec.prediction
    if (run is not None and not undecided and run.stable and p.stable
            and runner_up_shortfall(run, req) is None
            and run.p50_ms < p.p50_ms and run.p99_ms < p.p99_ms):
        assert "within the noise" in last.conclusion  # the tie-break is stated
    assert adv.inputs.per_batch_overhead_ms >= 0
    if device == "cpu":
        assert "GPU" not in text, text
    assert math.isfinite(adv.inputs.arrival_rate_per_s)
    _rendered_advice_says_one_thing(adv, req, undecided)


def _rendered_advice_says_one_thing(adv, req, undecided: bool) -> None:
    """The whole rendered advice (the text `trtcheck advise` prints) quotes the numbers the
    recommendation was simulated with, and no sentence contradicts another."""
    from trtcheck.report.advise_text import advice_text

    rec, p, i = adv.recommendation, adv.recommendation.prediction, adv.inputs
    full = advice_text(adv)
    # the overheads shown are the ones the simulation used
    assert f"per request {i.per_request_overhead_ms:.3g} ms" in full
    assert f"per batch {i.per_batch_overhead_ms:.3g} ms" in full
    if not undecided:
        # the prediction quoted is the recommended configuration's
        if p.stable:  # as the advice prints ms: 3 significant digits below 10, else whole
            shown = f"{p.p99_ms:.3g} ms" if p.p99_ms < 10 else f"{p.p99_ms:.0f} ms"
            assert f"P99 {shown}" in rec.summary, rec.summary
        head = full.split("Decision path")[0]
        assert "Cannot tell" not in rec.summary
        if rec.interval_rule is not None:  # chosen on the intervals: no replicas
            assert rec.stability is None and "Stability:" not in head
            assert "Chosen on: the P99 prediction interval" in head
            assert "Chosen on the P99 prediction interval" in rec.summary, rec.summary
        else:
            assert "cannot-tell" not in head.split("Stability:")[1].split("\n")[0]
        # the capacity beside the utilisation is that configuration's own
        scale = next((n for n in adv.path if n.step == "scale-out"), None)
        if scale is not None and scale.answer == "no" and p.utilisation > 0:
            own = i.arrival_rate_per_s / p.instances / p.utilisation
            assert f"capacity {own:.0f} req/s at its max batch {p.max_batch_size}" \
                in scale.conclusion, scale.conclusion
    else:
        assert rec.summary.startswith("Cannot tell") and "Stability: cannot-tell" in full
    # the stability line and the summary agree on how the choice was decided
    st = rec.stability
    if st is not None and any(r.startswith("simulation only") for r in st.resampled):
        assert "exact input" in full and "bootstrap replicas of the measurements" not in full
        assert st.status == "stable" and not undecided
    # parallel executions are named for the serving layer simulated
    if req.batcher == "triton":
        assert "ONNX Runtime sessions" not in full and "execution contexts (GPU) or " \
            "sessions" not in full
    # no two sentences contradict
    assert not ("no queue forms by itself" in rec.summary
                and "a queue forms by itself" in rec.summary), rec.summary
    if rec.kind == "no-batching":
        assert p.max_batch_size == 1 or p.window_us == 0
    _no_sentence_contradicts_the_recommendation(adv, req, full, undecided)


def _no_sentence_contradicts_the_recommendation(adv, req, full: str, undecided: bool) -> None:
    """Concrete invariants over the whole rendered advice: what the recommendation does,
    no sentence says does not pay; a runner-up that is no choice is never "within the
    noise"; one recommended instance is not told to try more contexts; a queue-formation
    ratio below 1 never reads "a queue forms"."""
    rec, p, f = adv.recommendation, adv.recommendation.prediction, adv.formulas
    if undecided:
        return
    window = p.window_us > 0 and p.max_batch_size > 1
    if window:  # a recommended window
        assert "waits longer than it saves" not in full, full
        assert "a window does not pay" not in full, full
    else:
        assert "a window fills fast enough" not in full, full
        assert "(> 1: a window pays)" not in full, full
    if p.max_batch_size > 1:  # batching recommended
        assert "batching does not pay" not in full, full
        assert "no dynamic_batching block" not in full, full
    last = [n for n in adv.path if n.step == "batching"][-1]
    run = rec.runner_up
    if run is not None:
        finite = req.finite_load
        short = runner_up_shortfall(run, req, finite)
        if short is not None:  # no choice at all: never "within the noise"
            assert "within the noise" not in last.conclusion, last.conclusion
            assert short in last.conclusion, last.conclusion
        elif simplicity(run) < simplicity(p):  # a simpler runner-up lost
            assert "so the simpler one is recommended" not in last.conclusion, \
                last.conclusion
    if p.instances == 1 and not req.finite_load:
        assert "try up to" not in full, full
    if f.queue_formation_ratio < 1 and not req.finite_load:
        assert "a queue forms" not in full, full
    if f.queue_formation_ratio >= 1 and not req.finite_load:
        assert "no queue forms by itself" not in full, full


@settings(max_examples=25, deadline=None, derandomize=True,
          phases=(Phase.explicit, Phase.reuse, Phase.generate),  # no shrinking: 2 cores
          suppress_health_check=[HealthCheck.too_slow])
@given(t1=st.floats(0.05, 30.0), growth=st.floats(0.05, 1.0), share=st.floats(0.05, 1.5),
       device=st.sampled_from([None, "cpu", "gpu"]), triton=st.booleans(),
       per_req=st.floats(0.0, 5.0))
def test_typed_curves_are_exact_and_the_rendered_advice_agrees(t1, growth, share, device,
                                                               triton, per_req):
    bs = [1, 8, 32]
    curve = make_curve([(b, t1 * (1 + growth * (b - 1))) for b in bs], source="typed")
    rate = share * 1000.0 / t1
    req = AdviseRequest(curve=curve, rate_per_s=rate, per_request_overhead_ms=per_req,
                        requests=1000, replicas=4, device=device,
                        batcher="triton" if triton else "embedded")
    adv = advise(req)
    st_ = adv.recommendation.stability
    # a typed curve with no samples is exact input: never "cannot tell"
    assert st_ is None or st_.status == "stable"
    assert adv.recommendation.kind != "cannot-tell"
    _rendered_advice_says_one_thing(adv, req, undecided=False)


def test_negative_calibrated_overhead_is_clamped_with_a_note():
    curve = make_curve([(1, 2.0), (8, 4.0)], source="generated")
    req = AdviseRequest(curve=curve, rate_per_s=100.0, requests=1000, replicas=0,
                        batch_excess_ms=tuple([-1.931] * 200))
    adv = advise(req)
    assert adv.inputs.per_batch_overhead_ms == 0.0
    assert any("clamped to 0 ms" in n and "-1.931" in n for n in adv.curve.notes)
    assert "-1.9" not in adv.recommendation.summary


@settings(max_examples=25, deadline=None, derandomize=True,
          phases=(Phase.explicit, Phase.reuse, Phase.generate),  # no shrinking: 2 cores
          suppress_health_check=[HealthCheck.too_slow])
@given(t1=st.floats(0.5, 30.0), growth=st.floats(0.05, 1.0), share=st.floats(0.2, 3.0),
       slack=st.floats(1.2, 4.0), device=st.sampled_from([None, "cpu", "gpu"]))
def test_with_an_objective_the_rendered_advice_agrees(t1, growth, share, slack, device):
    """With a P99 objective the runner-up may miss it: then it is never "within the
    noise", and nothing else in the advice contradicts the recommendation."""
    from hypothesis import assume

    from trtcheck.report.advise_text import advice_text

    curve = make_curve([(b, t1 * (1 + growth * (b - 1))) for b in (1, 8, 32)],
                       source="typed")
    req = AdviseRequest(curve=curve, rate_per_s=share * 1000.0 / t1, slo_p99_ms=slack * t1,
                        requests=1000, replicas=4, device=device)
    try:
        adv = advise(req)
    except InputError:
        assume(False)  # no searched configuration meets this objective (refused by design)
    _no_sentence_contradicts_the_recommendation(adv, req, advice_text(adv), undecided=False)


_CAP_QUOTE = (r"(\d+) req/s (?:\(|at )?(the largest calibrated batch, |batch |its max batch )"
              r"(\d+)([^;)]*)")


def _live_calibrated_advice_says_one_thing(adv, req) -> None:
    """A live calibration that measured only the small batch sizes of a server allowing
    larger ones: every capacity quoted at a batch size is the simulation's (1000 b /
    S(b)) and says when that T(b) is extrapolated, never calls an unmeasured size
    "calibrated"; the scale-out step's reason holds at the load; the summary never says
    the recommended max batch lies within the measured sizes when it lies beyond them."""
    import re

    from trtcheck.report.advise_text import advice_text

    rec, p, f = adv.recommendation, adv.recommendation.prediction, adv.formulas
    full = advice_text(adv)
    measured = {int(b) for b in req.curve.batch_sizes}
    top = max(measured)
    rate = adv.inputs.arrival_rate_per_s
    svc = service_model(req)
    for m in re.finditer(_CAP_QUOTE, full):
        n, how, b, rest = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)
        if how.startswith("the largest calibrated"):
            assert b in measured, m.group(0)  # never an unmeasured size called calibrated
        if how != "its max batch ":
            cap = 1000.0 * b / svc.batch_time_ms(b, rate)
            assert n == int(f"{cap:.0f}"), (m.group(0), cap)
        if b > top and how != "its max batch ":
            assert "extrapolated" in rest, m.group(0)  # and says how
    # the scale-out step claims a shortfall only where one instance falls short
    scale = next(n for n in adv.path if n.step == "scale-out")
    short = f.capacity_per_instance_per_s * req.max_utilisation < rate
    if scale.answer == "yes":
        assert short or req.slo_p99_ms is not None, scale.conclusion
    if rec.kind == "add-instances":
        assert scale.answer == "yes", (rec.summary, scale.conclusion)
    else:
        assert "serves at most" not in rec.summary, rec.summary
    # the recommended max batch against the sizes measured
    if p.max_batch_size < top:  # below the largest measured: the data did not cap it
        assert f"its max batch {top} is a limit of the data" not in full, full
    if p.max_batch_size > top:
        assert f"Max batch {top} is the largest batch size" not in rec.summary, rec.summary
        assert f"its max batch {top} is a limit of the data" not in full, full
        assert "extrapolat" in rec.summary, rec.summary


@settings(max_examples=20, deadline=None, derandomize=True,
          phases=(Phase.explicit, Phase.reuse, Phase.generate),  # no shrinking: 2 cores
          suppress_health_check=[HealthCheck.too_slow])
@given(t1=st.floats(1.0, 50.0), per_batch=st.floats(0.0, 30.0), share=st.floats(0.02, 0.9),
       sizes=st.sampled_from([(1,), (1,), (1, 2), (1, 2, 4)]),
       server_max=st.sampled_from([8, 16]),
       instances=st.sampled_from([None, None, [1], [2], [3]]))
def test_live_calibrated_advice_quotes_what_it_simulated(t1, per_batch, share, sizes,
                                                         server_max, instances):
    """Live calibrations that formed only small batches (one size, as a 2 req/s run on a
    server allowing 8): the capacity, the scale-out reason and the measured-sizes
    sentence agree with what was simulated, at any load and instance count given."""
    curve = make_curve([(b, t1 * (1 + 0.6 * (b - 1))) for b in sizes], source="live")
    rate = share * 1000.0 / (t1 + per_batch)
    req = AdviseRequest(curve=curve, rate_per_s=rate, per_batch_overhead_ms=per_batch,
                        requests=1000, replicas=4, device="cpu", batcher="triton",
                        server_max_batch_size=server_max, instances=instances,
                        calibrated_instances=1)
    try:
        adv = advise(req)
    except InputError:
        from hypothesis import assume

        assume(False)  # too few instances given for the load (refused by design)
    _live_calibrated_advice_says_one_thing(adv, req)
    _rendered_advice_says_one_thing(adv, req, undecided=False)
