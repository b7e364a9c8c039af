"""Metrics, verdict rules and tolerances of the precision comparison (numpy only, fast)."""

from __future__ import annotations

import numpy as np
import pytest

from trtcheck.errors import InputError
from trtcheck.measure.precision.precision import (
    DEFAULT_TOLERANCES,
    compare_output,
    polygraphy_elemwise_verdicts,
    tolerance_for,
)

FP16 = DEFAULT_TOLERANCES["fp16"]


def test_identical_outputs_pass_with_zero_error() -> None:
    a = np.linspace(-3, 3, 100, dtype=np.float32).reshape(4, 25)
    c = compare_output("y", [a], [a.copy()], FP16)
    assert c.passed and c.failures == []
    assert c.max_abs_error == 0.0 and c.mean_abs_error == 0.0
    assert c.cosine_similarity == pytest.approx(1.0)
    assert c.outside_tolerance_count == 0
    assert c.top1_agreement == 1.0 and c.top5_agreement == 1.0 and c.rows_compared == 4


def test_errors_statistics_and_outside_share() -> None:
    ref = np.ones((10, 10), np.float32)
    cand = ref.copy()
    cand[0, :] += 0.05  # 10 of 100 elements off by 0.05: > atol 1e-2 and > rtol*1
    c = compare_output("y", [ref], [cand], FP16)
    assert c.max_abs_error == pytest.approx(0.05, rel=1e-5)
    assert c.mean_abs_error == pytest.approx(0.005, rel=1e-4)
    assert c.max_rel_error == pytest.approx(0.05, rel=1e-5)
    assert c.outside_tolerance_count == 10
    assert c.outside_tolerance_fraction == pytest.approx(0.10)
    assert not c.passed
    assert any("outside atol" in f for f in c.failures)


def test_either_tolerance_suffices_like_polygraphy() -> None:
    ref = np.array([1000.0, 0.001], np.float32)
    # 1000 -> off by 5 (abs 5 > atol, rel 5e-3 < rtol 1e-2): inside
    # 0.001 -> off by 0.005 (rel 5 > rtol, abs 5e-3 < atol 1e-2): inside
    cand = np.array([1005.0, 0.006], np.float32)
    c = compare_output("y", [ref], [cand], FP16)
    assert c.outside_tolerance_count == 0
    v = polygraphy_elemwise_verdicts([{"y": ref}], [{"y": cand}], FP16)
    assert v == {"y": True}


def test_relative_error_skips_zero_reference() -> None:
    ref = np.array([0.0, 2.0], np.float32)
    cand = np.array([1e-3, 2.002], np.float32)
    c = compare_output("y", [ref], [cand], FP16)
    assert c.max_rel_error == pytest.approx(1e-3, rel=1e-3)  # not 1e-3 / 2.2e-16


def test_nan_and_inf_are_their_own_failure() -> None:
    ref = np.ones(8, np.float32)
    cand = ref.copy()
    cand[2] = np.nan
    cand[5] = np.inf
    c = compare_output("y", [ref], [cand], FP16)
    assert c.candidate_nan_count == 1 and c.candidate_inf_count == 1
    assert c.reference_nan_count == 0
    assert not c.passed
    assert c.failures[0].startswith("1 NaN and 1 Inf")
    # a NaN/Inf where the reference is finite is infinitely wrong: never an error of 0
    assert c.max_abs_error == np.inf and c.mean_abs_error == np.inf


def test_top1_and_top5_agreement_on_classifier_outputs() -> None:
    rng = np.random.default_rng(1)
    ref = rng.standard_normal((8, 10)).astype(np.float32)
    cand = ref.copy()
    # swap the top-1 and top-2 classes of row 0 only
    order = np.argsort(-ref[0])
    cand[0, order[0]], cand[0, order[1]] = ref[0, order[1]], ref[0, order[0]]
    c = compare_output("logits", [ref[:4], ref[4:]], [cand[:4], cand[4:]], FP16)
    assert c.rows_compared == 8
    assert c.top1_agreement == pytest.approx(7 / 8)
    assert c.top5_agreement == 1.0  # the top-5 set is unchanged
    tol = tolerance_for("fp16", {"fp16": {"min_top1_agreement": 0.9}})
    c2 = compare_output("logits", [ref], [cand], tol)
    assert not c2.passed and any("top-1 agreement" in f for f in c2.failures)


def test_topk_only_for_2d_classifier_outputs() -> None:
    a = np.ones((1, 3, 4), np.float32)
    c = compare_output("feat", [a], [a], FP16)
    assert c.top1_agreement is None and c.top5_agreement is None
    b = np.array([[0.3, 0.7]], np.float32)  # 2 classes: top-1 yes, top-5 no
    c = compare_output("prob", [b], [b], FP16)
    assert c.top1_agreement == 1.0 and c.top5_agreement is None


def test_cosine_similarity_rule() -> None:
    ref = np.array([1.0, 0.0, 0.0], np.float32)
    cand = np.array([1.0, 0.02, 0.0], np.float32)  # inside atol? no: 0.02 > 0.01
    c = compare_output("y", [ref], [cand], tolerance_for("fp16", {"*": {"atol": 0.05}}))
    assert c.cosine_similarity == pytest.approx(1 / np.sqrt(1 + 0.02**2), rel=1e-6)
    assert c.passed  # cos 0.9998 >= 0.999, element within the looser atol
    c = compare_output("y", [ref], [cand], tolerance_for("fp16", {"fp16": {
        "atol": 0.05, "min_cosine_similarity": 0.9999}}))
    assert not c.passed and "cosine similarity" in c.failures[0]


def test_shape_mismatch_is_bad_input() -> None:
    with pytest.raises(InputError, match="different shapes"):
        compare_output("y", [np.zeros((1, 4))], [np.zeros((1, 5))], FP16)


def test_our_max_abs_error_matches_polygraphy() -> None:
    from polygraphy.comparator import Comparator, RunResults
    from polygraphy.logger import G_LOGGER

    try:  # Polygraphy >= 0.53
        from polygraphy.comparator import SimpleCompareFunc
    except ImportError:  # older Polygraphy: the same function as CompareFunc.simple
        from polygraphy.comparator import CompareFunc

        SimpleCompareFunc = CompareFunc.simple

    rng = np.random.default_rng(3)
    ref = rng.standard_normal((2, 50)).astype(np.float32)
    cand = (ref + rng.standard_normal((2, 50)).astype(np.float32) * 1e-3).astype(np.float32)
    rr = RunResults()
    rr.add([{"y": cand}], runner_name="c")
    rr.add([{"y": ref}], runner_name="r")
    with G_LOGGER.verbosity(G_LOGGER.CRITICAL):
        acc = Comparator.compare_accuracy(rr, compare_func=SimpleCompareFunc(atol=1e-5, rtol=1e-5))
    if not hasattr(acc, "keys"):  # Polygraphy >= 0.53: one AccuracyResult per compare function
        acc = acc[0]
    res = acc[("c", "r")][0]["y"]
    ours = compare_output("y", [ref], [cand], FP16)
    assert ours.max_abs_error == pytest.approx(res.max_absdiff, rel=1e-6)
    assert ours.mean_abs_error == pytest.approx(res.mean_absdiff, rel=1e-6)
    # Polygraphy's 1e-5 defaults fail this FP16-sized error; our FP16 default passes it
    assert not bool(res)
    assert ours.passed


def test_polygraphy_verdict_fails_on_one_bad_element_of_any_sample() -> None:
    ref = np.ones(4, np.float32)
    bad = ref.copy()
    bad[1] = 2.0
    v = polygraphy_elemwise_verdicts([{"y": ref}, {"y": ref}], [{"y": ref}, {"y": bad}], FP16)
    assert v == {"y": False}


def test_tolerance_defaults_and_overrides() -> None:
    assert FP16.atol == 1e-2 and FP16.rtol == 1e-2 and FP16.min_cosine_similarity == 0.999
    assert "4.9e-4" in FP16.source and "1e-5" in FP16.source
    for p in ("fp16", "bf16", "int8", "fp8"):
        assert DEFAULT_TOLERANCES[p].source
    t = tolerance_for("fp16", {"*": {"atol": 1e-3, "rtol": 2e-3}, "fp16": {"atol": 5e-4}})
    assert t.atol == 5e-4 and t.rtol == 2e-3 and t.source.startswith("user override")
    assert tolerance_for("int8").min_top1_agreement == 0.99
    with pytest.raises(InputError, match="unknown precision"):
        tolerance_for("fp4")
    with pytest.raises(InputError, match=">= 0"):
        tolerance_for("fp16", {"*": {"atol": -1.0}})
    with pytest.raises(InputError, match="0..1"):
        tolerance_for("fp16", {"*": {"max_outside_fraction": 2.0}})
    with pytest.raises(InputError, match="unknown tolerance field"):
        tolerance_for("fp16", {"*": {"tol": 1.0}})


def test_rounding_floor_is_the_fp16_half_ulp_of_the_largest_value() -> None:
    from trtcheck.measure.precision.precision import rounding_floor

    ref = np.array([1.0 + 2**-12, 15.0 + 2**-9, -3.0], np.float32)
    # 15 + 2^-9 in FP16 (ulp 2^-7 at 8..16) rounds to 15: error 2^-9
    assert rounding_floor(ref, "fp16") == pytest.approx(2**-9)
    assert rounding_floor(np.array([1.0 + 2**-9], np.float32), "bf16") == pytest.approx(2**-9)
    assert rounding_floor(ref, "int8") is None
    c = compare_output("y", [ref], [ref], FP16, precision="fp16")
    assert c.rounding_floor_max_abs_error == pytest.approx(2**-9)


def test_relative_l2_catches_scale_errors_and_ignores_all_tiny_outputs() -> None:
    ref = np.linspace(0.1, 2.0, 50).astype(np.float32)
    c = compare_output("y", [ref], [ref * 1.2], FP16)
    assert c.cosine_similarity == pytest.approx(1.0)
    assert c.rel_l2_error == pytest.approx(0.2, rel=1e-5)
    assert not c.passed and any("relative L2 error" in f for f in c.failures)
    # every reference value within atol of zero: FP16 flushing 1e-8 to 0 is not a failure
    tiny = np.full(10, 1e-8, np.float32)
    c = compare_output("p", [tiny], [np.zeros_like(tiny)], FP16)
    assert c.rel_l2_error == pytest.approx(1.0) and c.cosine_similarity is None
    assert c.passed


def test_metrics_shown_but_not_judged_say_so_and_flat_outputs_get_a_finding():
    import numpy as np

    from trtcheck.measure.precision.output_compare import compare_output
    from trtcheck.measure.precision.precision_judge import flat_output_findings
    from trtcheck.measure.precision.precision_tolerance import tolerance_for

    tol = tolerance_for("fp16")
    rng = np.random.default_rng(0)
    ref = rng.uniform(0, 1e-5, (1, 1, 64, 64)).astype(np.float32)  # a detector map on noise
    cand = ref * (1 + rng.normal(0, 0.06, ref.shape)).astype(np.float32)
    o = compare_output("out", [ref], [cand], tol)
    assert o.passed and o.cosine_similarity < tol.min_cosine_similarity
    assert "not judged: every |ref| <= atol" in o.not_judged["cosine_similarity"]
    (f,) = flat_output_findings("fp16", {"out": o}, tol.atol)
    assert f.code == "precision-inputs-not-exercising" and f.severity == "warning"


def test_a_failure_states_the_tolerance_it_would_need():
    import numpy as np

    from trtcheck.measure.precision.output_compare import compare_output
    from trtcheck.measure.precision.precision_tolerance import tolerance_for

    tol = tolerance_for("fp16")
    ref = np.linspace(1.0, 2.0, 1000, dtype=np.float32)
    cand = ref + 0.05  # 0.05 absolute: over atol 0.01 and rtol 0.01 * |ref| <= 0.02
    o = compare_output("out", [ref], [cand], tol)
    assert not o.passed
    assert o.required_atol is not None and abs(o.required_atol - 0.05) < 1e-3
    assert any("it would pass with atol >= 0.05" in x for x in o.failures)
