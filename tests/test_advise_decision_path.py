"""trtcheck advise: the curve taken from a serving run, the decision path's steps and
wording, instance searches and objectives, advising from an advice file."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from trtcheck.analyze.advice.advise import AdviseRequest, advise, service_model
from trtcheck.analyze.advice.curve import make_curve
from trtcheck.analyze.advice.inputs import (
    MIN_SERVE_CURVE_EXECUTIONS,
    build_request,
    curve_from_serve,
    inputs_from_results,
)
from trtcheck.errors import InputError


def _serve(executions: list[tuple[int, float]]):
    """A minimal serve section: one open-loop repeat whose requests ran in the given
    (batch size, compute ms) executions, in order (consecutive executions need distinct
    times: the requests of one batch are recognised by sharing theirs)."""
    bs: list[int] = []
    comp: list[float] = []
    for b, c in executions:
        bs += [b] * b
        comp += [c] * b
    rep = SimpleNamespace(batch_sizes=bs, parts_ms={"compute_ms": comp})
    cfg = SimpleNamespace(repeats=[rep])
    return SimpleNamespace(configs=[cfg], model_path="m.onnx")


def test_serve_curve_drops_sparse_sizes_and_is_monotone():
    rng = np.random.default_rng(0)
    ex = [(1, 2.0 + rng.normal(0, 0.01)) for _ in range(40)]
    ex += [(8, 4.0 + rng.normal(0, 0.01)) for _ in range(30)]
    ex += [(9, 3.7 + 0.001 * k) for k in range(6)]  # formed by chance, below T(8)
    ex += [(20, 68.3)]  # once, during a stall
    ex += [(21, 7.3)]
    curve = curve_from_serve(_serve(ex))
    assert [int(b) for b in curve.batch_sizes] == [1, 8, 9]
    assert np.all(np.diff(curve.median_ms) >= 0)
    assert curve.median_ms[0] == pytest.approx(2.0, abs=0.02)
    notes = " ".join(curve.notes)
    assert f"fewer than {MIN_SERVE_CURVE_EXECUTIONS} times" in notes and "20-21" in notes
    assert "non-decreasing" in notes


def test_serve_curve_counts_executions_not_requests():
    # 10 executions of batch 8 (80 requests) and 10 of batch 1: both kept, 8 not outweighing
    curve = curve_from_serve(_serve([(1, 2.0 + 0.001 * k) for k in range(10)]
                                    + [(8, 4.0 + 0.001 * k) for k in range(10)]))
    assert [int(b) for b in curve.batch_sizes] == [1, 8]


def test_missing_batch_one_is_extrapolated_and_noted():
    curve = make_curve([(8, 4.0), (32, 10.0)])
    assert curve.t1_ms == pytest.approx(4.0 - 7 * 0.25)
    assert any("T(1) was not measured" in n for n in curve.notes)


def _req(curve_pts, rate, **kw) -> AdviseRequest:
    return build_request(make_curve(curve_pts), kw.pop("measured", {}), rate_per_s=rate, **kw)


def test_measured_per_request_overhead_counts_in_step_one():
    measured = {"request_delay_ms": (0.12,) * 50, "batch_excess_ms": (0.2,) * 50,
                "source": "calibrated on a serving measurement (1 open-loop configuration(s))"}
    adv = advise(_req([(1, 2.0), (8, 4.0)], 200.0, measured=measured))
    step1 = adv.path[0]
    assert step1.step == "thin-http" and step1.answer == "no"
    assert "measured by the serving run" in step1.conclusion
    # a calibrated advice does not carry the generic load-shape pitfall
    assert "pitfall-load-shape" not in {p.code for p in adv.pitfalls}


def test_fixed_instances_above_the_target_say_so():
    adv = advise(_req([(1, 20.0), (8, 40.0), (32, 110.0)], 3000.0, instances=[11]))
    assert adv.recommendation.prediction.utilisation > 0.9
    assert "Above the 90% utilisation target with 11 instances: 12 keep it below" \
        in adv.recommendation.summary
    assert any("11 as given" in n.conclusion for n in adv.path if n.step == "scale-out")


def test_objective_searches_beyond_the_capacity_counts():
    adv = advise(_req([(1, 20.0), (8, 40.0), (32, 110.0)], 100.0, slo_p99_ms=25.0))
    p = adv.recommendation.prediction
    assert p.p99_ms <= 25.0
    assert 5 <= p.instances <= 7  # capacity alone needs 1; the objective needs ~5


def test_queue_formation_wording_near_one():
    adv = advise(_req([(1, 2.0), (8, 4.0), (32, 10.0)], 500.0))  # lambda T(1) = 1.00
    q = [n for n in adv.path if n.question.startswith("Does a queue form")][0]
    assert q.answer == "yes" and ">= 1" in q.conclusion
    adv = advise(_req([(1, 2.0), (8, 4.0), (32, 10.0)], 400.0))  # 0.8: M/D/1 Lq = 1.6
    q = [n for n in adv.path if n.question.startswith("Does a queue form")][0]
    assert q.answer == "no" and "1.6 requests wait" in q.conclusion


def test_seed_rule_sentence_at_a_tiny_rate():
    adv = advise(_req([(1, 20.0), (8, 40.0), (32, 110.0)], 1e-3))
    w = [n for n in adv.path if n.question.startswith("Does waiting for a batch pay")][0]
    assert "nearly every batch would be a single request" in w.conclusion
    assert "saved" not in w.conclusion


def test_slo_floor_includes_the_measured_excess():
    measured = {"batch_excess_ms": (22.0,) * 50, "request_delay_ms": (0.1,) * 50,
                "source": "calibrated on a serving measurement (1 open-loop configuration(s))"}
    with pytest.raises(InputError) as e:
        advise(_req([(1, 29.6), (8, 200.0)], 10.0, measured=measured, slo_p99_ms=40.0))
    assert "T(1) 29.6 ms + overheads 22.1 ms" in str(e.value)


def test_report_compare_uses_the_advice_model():
    from trtcheck.analyze.advice.serve_compare import service_from_results

    measured = {"batch_excess_ms": (0.5, 0.6) * 30, "request_delay_ms": (0.1,) * 60,
                "contention_per_arrival_ms": 0.0,
                "source": "calibrated on a serving measurement (1 open-loop configuration(s))"}
    req = _req([(1, 2.0), (8, 4.0)], 200.0, measured=measured)
    sm = service_model(req)
    assert sm.batch_excess_ms and sm.request_delay_ms and sm.spread == "none"
    adv = advise(req)
    # without a serve section in the results, the advice's own inputs are used
    plain = service_from_results(SimpleNamespace(serve=None), adv)
    assert plain.batch_excess_ms == () or plain.batch_excess_ms[0] <= 0


def test_an_advice_file_can_be_advised_from():
    adv = advise(_req([(1, 2.0), (8, 4.0), (32, 10.0)], 300.0))
    results = SimpleNamespace(primary_bench=None, serve=None, advice=adv)
    curve, measured = inputs_from_results(results, "out.json")
    assert curve.points() == [(1, 2.0), (8, 4.0), (32, 10.0)]
    assert any("earlier advice" in n for n in curve.notes)
    assert measured == {"model_name": "model"}


def test_a_rate_beyond_every_search_is_one_clear_error():
    with pytest.raises(InputError) as e:
        advise(_req([(1, 2.0), (8, 4.0)], 1e9))
    assert "more than the 1024 this search covers" in str(e.value)
    assert "units" in e.value.hint


def test_an_absurd_shortfall_does_not_hint_an_absurd_instance_count():
    with pytest.raises(InputError) as e:
        advise(_req([(1, 2e6), (8, 4e6)], 1e6, instances=[3]))
    assert "--instances" not in e.value.hint and "far too slow" in e.value.hint


def test_a_heavy_tailed_bench_sets_capacity_by_its_mean_and_is_noted():
    rng = np.random.default_rng(3)
    s1 = np.where(rng.random(500) < 0.15, 8.6, 0.56)  # 15% of executions stalled
    s4 = np.where(rng.random(500) < 0.15, 10.4, 2.29)
    curve = make_curve([(1, 0.56), (4, 2.29)], source="bench",
                       samples_ms={1: s1.tolist(), 4: s4.tolist()})
    req = build_request(curve, {}, rate_per_s=500.0)
    sm = service_model(req)
    f = float(sm.mean_spread_factors(np.array([1]))[0])
    assert f == pytest.approx(float(np.mean(s1) / 0.56), rel=1e-9) and f > 2.5
    adv = advise(req)
    assert adv.recommendation.prediction.utilisation > 0.4  # not the median's 0.28
    assert any("heavy tail" in n for n in adv.curve.notes)


@pytest.mark.parametrize("rate,overhead_ms", [(3000.0, 0.0), (200.0, 12.0), (1e-3, 0.0)])
def test_path_and_pitfalls_speak_in_field_terms(rate, overhead_ms):
    """Every sentence the user reads names the rule or the measurement, not where the
    project's rules came from (no "seed pitfall N", "the seed's knee")."""
    adv = advise(_req([(1, 0.29), (8, 0.4), (32, 1.0)], rate,
                      per_request_overhead_ms=overhead_ms))
    words = [n.question for n in adv.path] + [n.conclusion for n in adv.path]
    words += [p.message for p in adv.pitfalls] + [p.remedy or "" for p in adv.pitfalls]
    words += list(adv.inputs.notes) if getattr(adv.inputs, "notes", None) else []
    words.append(adv.recommendation.summary)
    assert words and not [w for w in words if "seed" in w.lower()]


def test_a_recommended_window_is_never_called_a_window_that_does_not_pay():
    """`advise --latency-curve 1:20,8:40,32:110 --arrival-rate 100 --slo-p99-ms 30`
    (a fresh-user trial): step 4 said "a window waits longer than it saves" beside a
    recommended 2 ms window, and the runner-up without waiting, which misses the
    objective, was called "within the noise"."""
    from trtcheck.report.advise_text import advice_text

    curve = make_curve([(1, 20.0), (8, 40.0), (32, 110.0)], source="typed")
    adv = advise(AdviseRequest(curve=curve, rate_per_s=100.0, slo_p99_ms=30.0))
    p, run = adv.recommendation.prediction, adv.recommendation.runner_up
    assert p.window_us > 0 and p.max_batch_size > 1
    text = advice_text(adv)
    assert "waits longer than it saves" not in text and "a window does not pay" not in text
    wait = next(n for n in adv.path if n.question.startswith("Does waiting for a batch pay"))
    assert wait.answer == "not on average" and "pays in the tail" in wait.conclusion
    last = [n for n in adv.path if n.step == "batching"][-1]
    assert run is not None and run.p99_ms > 30.0
    assert "within the noise" not in last.conclusion
    assert f"the runner-up misses the objective (P99 {run.p99_ms:.0f} ms > 30 ms)" \
        in last.conclusion
    assert "so the simpler one is recommended" not in last.conclusion


def test_one_instance_that_batches_is_not_told_to_try_more_contexts():
    """At 60 req/s on T(1) = 20 ms one context at batch 1 cannot keep up, but batching
    lets one instance carry it: the step says so instead of "try up to 4 contexts"."""
    curve = make_curve([(1, 20.0), (8, 40.0), (32, 110.0)], source="typed")
    adv = advise(AdviseRequest(curve=curve, rate_per_s=60.0))
    p = adv.recommendation.prediction
    assert p.instances == 1 and p.max_batch_size > 1
    ctx = next(n for n in adv.path if n.step == "execution-contexts")
    assert ctx.answer == "yes"
    assert "try up to" not in ctx.conclusion
    assert f"batching up to {p.max_batch_size} lets one instance carry it" in ctx.conclusion


def _one_size_live(rate: float, instances=None):
    """A live calibration that formed batches of 1 only on a server allowing 8 (the
    demo ResNet-18 at 2 req/s behind the ONNX wrapper: T(1) 27 ms + 27 ms outside)."""
    curve = make_curve([(1, 27.0)], source="Triton batch_stats")
    return AdviseRequest(curve=curve, rate_per_s=rate, per_batch_overhead_ms=27.0,
                         requests=1000, replicas=4, device="cpu", batcher="triton",
                         server_max_batch_size=8, instances=instances,
                         calibrated_instances=1)


def test_capacity_beyond_the_measured_sizes_is_called_extrapolated():
    """`advise --from tune.json` quoted "222 req/s at the largest calibrated batch, 8"
    where only batch 1 was measured: the capacity is the simulation's (T(8) = T(1)
    assumed) and says so, in the path and in the formulas."""
    from trtcheck.report.advise_text import advice_text

    adv = advise(_one_size_live(2.0))
    text = advice_text(adv)
    assert "largest calibrated batch, 8" not in text
    want = ("148 req/s at batch 8, extrapolated as T(8) = T(1), the best case for "
            "batching: only batch 1 was measured")
    scale = next(n for n in adv.path if n.step == "scale-out")
    assert want in scale.conclusion, scale.conclusion
    assert f"capacity per instance = {want}" in text


def test_instances_given_beyond_need_are_not_called_needed():
    """`advise --from live.json --arrival-rate 2 --instances 2` labelled its pick
    [add-instances] because "one instance serves at most 76 req/s", far above 2 req/s:
    the count is as given, and the advice says one instance would carry the load."""
    adv = advise(_one_size_live(2.0, instances=[2]))
    rec = adv.recommendation
    assert rec.prediction.instances == 2 and rec.kind == "no-batching"
    assert "serves at most" not in rec.summary
    assert "2 instances as given (--instances): one instance would carry 2 req/s" \
        in rec.summary
    scale = next(n for n in adv.path if n.step == "scale-out")
    assert scale.answer == "given", scale.answer
    assert "one instance of the recommended configuration would carry 2 req/s" \
        in scale.conclusion
    # needed instances still say so: 1 instance cannot carry 30 req/s at max batch 1
    need = advise(AdviseRequest(curve=make_curve([(1, 50.0), (2, 100.0)], source="g"),
                                rate_per_s=30.0, requests=1000, replicas=0,
                                instances=[2]))
    assert need.recommendation.kind == "add-instances"
    assert next(n for n in need.path if n.step == "scale-out").answer == "yes"


def test_a_max_batch_beyond_the_measured_sizes_says_it_extrapolates():
    """At 25 req/s the one-size calibration recommends max batch 4, and the summary said
    in the same breath that max batch 1 is the largest measured: now it says the
    recommendation extrapolates, by T(b) = T(1)."""
    from trtcheck.report.advise_text import advice_text

    adv = advise(_one_size_live(25.0))
    rec = adv.recommendation
    b = rec.prediction.max_batch_size
    assert b > 1
    assert "Max batch 1 is the largest batch size" not in rec.summary
    assert (f"Max batch {b} extrapolates beyond the measured batch sizes: only T(1) is "
            "known, so this assumes T(b) = T(1)") in rec.summary
    assert "Only T(1) is known" not in rec.summary  # said once
    assert "max batch 1 is a limit of the data" not in advice_text(adv)


@pytest.mark.parametrize("batcher", ["embedded", "triton"])
def test_a_python_layers_overhead_on_triton_does_not_say_move_to_triton(batcher):
    """12 ms per request outside the batch: the step names a C++ server such as Triton,
    unless the target is Triton already; then it names the model's own per-request work
    and the client path."""
    req = _req([(1, 0.29), (8, 0.4), (32, 1.0)], 200.0, per_request_overhead_ms=12.0)
    req.batcher = batcher
    step = next(n for n in advise(req).path if n.step == "replace-python-layer")
    assert step.answer == "yes"
    if batcher == "triton":
        assert "Triton already" in step.conclusion and "C++ server" not in step.conclusion
    else:
        assert step.conclusion.startswith("move serving to a C++ server")


def test_scale_out_for_the_p99_objective_shows_the_p99_that_decided_it():
    """One instance carries 60 req/s (capacity 400 req/s at batch 8) but its best
    simulated P99 misses 18 ms: the scale-out step's number is that P99 against the
    objective, not the capacity against the rate, and its sentence names both."""
    req = AdviseRequest(curve=make_curve([(1, 10.0), (8, 20.0)]), rate_per_s=60.0,
                        slo_p99_ms=18.0, replicas=0)
    adv = advise(req)
    assert adv.recommendation.prediction.instances == 2
    node = [n for n in adv.path if n.step == "scale-out"][-1]
    assert node.answer == "yes" and node.threshold == 18.0
    assert node.value is not None and node.value > 18.0
    assert f"its best simulated P99 {node.value:.3g} ms against 18 ms" in node.conclusion
