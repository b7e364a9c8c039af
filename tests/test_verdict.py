"""The verdict: each rule of docs/verdict.md, its place first in every report, and gating
on ``verdict.status``."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from tests.factories import make_results
from trtcheck.analyze.advice.advise import AdviseRequest, advise
from trtcheck.analyze.advice.curve import parse_curve_text
from trtcheck.analyze.gate.gate_evaluate import evaluate
from trtcheck.analyze.gate.gate_policy import parse_policy
from trtcheck.analyze.derived.verdict import MEDIAN_CI_LIMIT, judge
from trtcheck.stats import CV_WARN, median_relative_halfwidth
from trtcheck.inspection.onnx.onnx_inspect import inspect_onnx
from trtcheck.report import build_report, render_report
from trtcheck.report.verdict import render_verdict_text
from trtcheck.results import Finding, load_results, results_from_json, results_to_json, save_results
from trtcheck.results.verdict import VERDICT_STATUSES

STEADY = (1.0, 1.01, 0.99, 1.0) * 10   # CV about 0.7%
NOISY = (1.0, 3.0, 0.5, 2.0) * 10      # CV about 65%, median known to +-33%


def _noisy_but_precise():
    """Results whose batch 1 has outliers (a noisy machine) but a median known to +-0%."""
    r = make_results((1.0,) * 36 + (5.0,) * 4)
    r.bench[0].batches[0].warnings.append(Finding(
        code="outliers", where="batch 1", message="4 samples (10%) are far above the median",
        remedy="re-measure: close other programs"))
    return r


def _relu_with_shared_dims(tmp_path: Path) -> Path:
    """A model whose H and W share the dim name '?', as PP-OCR's cls model does."""
    def vi(name: str) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 3, "?", "?"])

    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [vi("x")], [vi("y")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    p = tmp_path / "cls-like.onnx"
    onnx.save_model(m, str(p))
    return p


def _steady():
    return make_results(STEADY)


def _reasons(v, kind):
    return [r for r in v.reasons if r.kind == kind]


def test_steady_bench_alone_is_ready():
    v = judge(_steady())
    assert v.status == "ready" and v.reasons == []
    assert v.headline.startswith("Ready:")
    assert v.unstable_cv_limit == CV_WARN and v.median_ci_limit == MEDIAN_CI_LIMIT
    assert v.target == "tensorrt"


def test_lint_error_is_not_ready_tensorrt_cannot_build(tmp_path):
    r = _steady()
    r.inspection = inspect_onnx(_relu_with_shared_dims(tmp_path), {"x": [1, 3, 48, 192]})
    v = judge(r)
    assert v.status == "not_ready"
    (lint,) = _reasons(v, "lint-error")
    assert lint.title == "TensorRT cannot build it" and lint.section == "inspection"
    assert lint.codes == ["onnx-shared-dim-name"] and "x" in lint.where
    assert v.headline == "Not ready: TensorRT cannot build it."
    # square shapes are buildable: only the warning remains
    r.inspection = inspect_onnx(_relu_with_shared_dims(tmp_path), {"x": [1, 3, 64, 64]})
    v = judge(r)
    assert v.status == "ready_with_warnings"
    assert [x.codes for x in _reasons(v, "findings")] == [["onnx-shared-dim-name"]]


def test_warnings_are_grouped_per_code_with_where():
    r = make_results(STEADY)
    b = r.bench[0].batches[0]
    second = b.model_copy(update={"batch_size": 4}, deep=True)
    r.bench[0].batches.append(second)
    for batch in r.bench[0].batches:
        batch.warnings.append(Finding(code="enqueue-bound", message="host bound", where=f"batch "
                                      f"{batch.batch_size}", remedy="use CUDA graphs"))
    batch.warnings.append(Finding(code="p99-not-certified", severity="info", message="n"))
    v = judge(r)
    assert v.status == "ready_with_warnings"
    (g,) = v.reasons
    assert g.codes == ["enqueue-bound"] and g.where == ["batch 1", "batch 4"]
    assert "(and 1 more like it)" in g.message and g.section == "bench"


def test_noise_remedy_fits_the_device():
    r = make_results(STEADY)
    r.bench[0].batches[0].warnings.append(Finding(
        code="min-far-below-median", message="m",
        remedy="close other programs, pin the process (taskset) and CPU frequency "
               "(cpupower / nvidia-smi -lgc), and raise --min-duration"))
    (g,) = judge(r).reasons
    assert "nvidia-smi" not in g.remedy and "cpupower" in g.remedy
    r.bench[0].backend.device = "cuda:0 (NVIDIA H200)"
    (g,) = judge(r).reasons
    assert "nvidia-smi -lgc" in g.remedy


def test_an_uncertain_median_cannot_tell_naming_batches_and_what_to_do():
    r = make_results(NOISY)
    assert median_relative_halfwidth(NOISY) > MEDIAN_CI_LIMIT
    v = judge(r)
    # the claims resting on that median (T(b), throughput, latency budgets) are undecided
    assert v.status == "cannot_tell"
    (u,) = _reasons(v, "measurement-unstable")
    assert u.effect == "cannot_tell" and u.where == ["batch 1"] and u.section == "bench"
    assert "95% interval" in u.message and "+-10%" in u.message
    assert "re-measure" in u.remedy and "nvidia-smi" not in u.remedy
    assert v.headline.startswith("Cannot tell: the median latency at batch 1 is too uncertain")


def test_a_high_cv_with_a_precise_median_is_one_noise_warning_not_cannot_tell():
    # 8% of the samples are 5x slower: the CV is far over 20%, the median exact
    samples = (1.0,) * 92 + (5.0,) * 8
    r = make_results(samples)
    assert r.bench[0].batches[0].stats.cv > 0.2
    for code in ("unstable-cv", "outliers", "min-far-below-median"):
        r.bench[0].batches[0].warnings.append(Finding(code=code, message=code,
                                                      where="batch 1"))
    v = judge(r)
    assert v.status == "ready_with_warnings"
    (noise,) = v.reasons  # one cause, one reason, its symptoms listed
    assert noise.kind == "noisy-machine" and noise.effect == "warning"
    assert noise.codes == ["unstable-cv", "outliers", "min-far-below-median"]
    assert "outliers (batch 1)" in noise.message


def test_more_samples_narrow_the_median_interval_below_the_limit():
    import numpy as np

    rng = np.random.default_rng(0)
    few = list(rng.lognormal(0.0, 0.6, 30))
    many = list(rng.lognormal(0.0, 0.6, 3000))
    assert median_relative_halfwidth(few) > 2 * median_relative_halfwidth(many)
    assert median_relative_halfwidth(many) < MEDIAN_CI_LIMIT / 2


def test_nothing_measured_cannot_tell():
    r = make_results()
    r.bench = []
    v = judge(r)
    assert v.status == "cannot_tell" and v.reasons[0].kind == "nothing-measured"


def test_precision_failure_is_not_ready(tmp_path):
    from trtcheck.load.precision_models import build_overflow_model
    from trtcheck.measure.bench.bench import StopRule
    from trtcheck.measure.precision.precision import compare_onnx_precisions

    p = tmp_path / "overflow.onnx"
    onnx.save_model(build_overflow_model(), str(p))
    quick = StopRule(warmup_s=0.0, warmup_min_iterations=1, min_duration_s=0.0,
                     min_samples=5, max_duration_s=5.0)
    r = _steady()
    r.precision = compare_onnx_precisions(p, ["fp16"], sample_count=2, bench_rule=quick)
    assert not r.precision.variants["fp16"].passed
    v = judge(r)
    assert v.status == "not_ready"
    (f,) = _reasons(v, "precision-failed")
    assert f.where == ["fp16"] and f.section == "precision"
    assert v.headline.startswith("Not ready: fp16 fails its accuracy tolerance")


def test_advice_headline_is_an_info_reason_and_decides_nothing():
    r = _steady()
    r.advice = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 300.0))
    v = judge(r)
    assert v.status == "ready"
    (a,) = _reasons(v, "advice")
    assert a.effect == "info" and a.section == "advice"
    assert r.advice.recommendation.summary in a.message


def test_advice_that_cannot_carry_the_load_is_not_ready():
    r = _steady()
    r.advice = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 300.0))
    # a record whose recommended configuration cannot carry the rate (advise itself
    # refuses such a rate; a results file may still hold one)
    pred = r.advice.recommendation.prediction
    r.advice.recommendation.prediction = pred.model_copy(update={
        "stable": False, "utilisation": 1.3, "p50_ms": None, "p99_ms": None})
    v = judge(r)
    assert v.status == "not_ready"
    (u,) = _reasons(v, "advice-unstable")
    assert "300 req/s" in u.message and "1.30" in u.message


def test_advice_missing_the_objective_is_not_ready():
    r = _steady()
    r.advice = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 300.0, slo_p99_ms=3.0))
    assert judge(r).status == "ready"  # the recommendation meets 3 ms
    r.advice.inputs.slo_p99_ms = 2.2   # below the recommended P99 (2.4 ms)
    v = judge(r)
    assert v.status == "not_ready"
    (s,) = _reasons(v, "advice-slo")
    assert "2.2 ms objective" in s.message


def test_advice_that_says_cannot_tell_makes_the_verdict_cannot_tell():
    r = _steady()
    r.advice = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 300.0))
    r.advice.recommendation.kind = "cannot-tell"
    r.advice.recommendation.summary = "window 0 in 55% of replicas; re-measure T(8)"
    v = judge(r)
    assert v.status == "cannot_tell"
    (c,) = _reasons(v, "advice-cannot-tell")
    assert "re-measure T(8)" in c.message and not _reasons(v, "advice")


def test_gate_failure_is_not_ready_and_verdict_rules_do_not_judge_themselves():
    r = _steady()
    r.verdict = judge(r)
    policy = parse_policy("version: 1\nbudgets:\n  - bench.batch[1].median_ms <= 0.5 ms\n"
                          "  - verdict.status == not_ready\n")
    rep = evaluate(policy, r)
    v = judge(r, gate_report=rep, policy_name="p.yaml")
    assert v.status == "not_ready" and v.gate_policy == "p.yaml"
    (g,) = _reasons(v, "gate-failed")
    assert "1 of 1 gate check(s) failed" in g.message and "median_ms" in g.message


def test_order_is_strongest_first_and_statuses_are_known(tmp_path):
    r = _noisy_but_precise()
    r.bench.append(make_results(NOISY).bench[0])
    r.inspection = inspect_onnx(_relu_with_shared_dims(tmp_path), {"x": [1, 3, 48, 192]})
    r.advice = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 300.0))
    r.advice.recommendation.kind = "cannot-tell"
    v = judge(r)
    assert v.status in VERDICT_STATUSES
    effects = [x.effect for x in v.reasons]
    assert effects[:3] == ["not_ready", "cannot_tell", "cannot_tell"]
    assert set(effects[3:]) == {"warning"}
    assert "measurement-unstable" in [x.kind for x in v.reasons]
    assert v.headline.startswith("Not ready:")


def test_gate_budgets_on_verdict_status():
    r = _steady()
    r.verdict = judge(r)
    r = results_from_json(results_to_json(r))  # stored and read back
    ok = evaluate(parse_policy("version: 1\nbudgets:\n  - verdict.status == ready\n"
                               "  - verdict.status != not_ready\n"
                               "  - len(verdict.reasons[effect=not_ready]) == 0\n"), r)
    assert ok.passed, [c.message for c in ok.checks]
    r.bench[0].batches[0].warnings.append(Finding(code="outliers", message="o"))
    r.verdict = judge(r)
    bad = evaluate(parse_policy("version: 1\nbudgets:\n  - verdict.status == ready\n"), r)
    assert not bad.passed and bad.checks[0].value == "ready_with_warnings"


def test_verdict_comes_first_in_html_md_and_text(tmp_path):
    r = _noisy_but_precise()
    render_report(r, tmp_path / "out")
    html = (tmp_path / "out" / "report.html").read_text()
    md = (tmp_path / "out" / "report.md").read_text()
    stored = load_results(tmp_path / "out" / "results.json")
    assert stored.verdict is not None and stored.verdict.status == "ready_with_warnings"
    body = html.split("<body>", 1)[1]
    first_section = body.index("<section")
    assert body.index('id="verdict"') < first_section + 20
    assert body.index('id="verdict"') < body.index('id="summary"')
    assert '<a href="#bench">' in html  # the reason links its section
    lines = [x for x in md.splitlines() if x.strip()]
    assert lines[0].startswith("# ") and lines[2] == "## Verdict: Ready with warnings"
    assert md.index("## Verdict") < md.index("## Summary")
    text = render_verdict_text(stored.verdict, "out/report.html")
    assert text.startswith("Verdict: Ready with warnings (ready_with_warnings), judged for "
                           "TensorRT\n")
    assert "out/report.html#bench" in text and "what to do: close other programs" in text


def test_verdict_escapes_untrusted_strings():
    r = make_results(NOISY)
    r.bench[0].label = "<script>x</script>|"
    r.verdict = judge(r)
    html, md, _, _ = build_report(r)
    assert "<script>x" not in html and "<script>x" not in md


def test_report_cli_prints_the_verdict_first_on_stdout(tmp_path, cli):
    save_results(_noisy_but_precise(), tmp_path / "r.json")
    res = cli("report", "--from", str(tmp_path / "r.json"), "-o", str(tmp_path / "a"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Verdict: Ready with warnings (ready_with_warnings), "
                                 "judged for TensorRT")
    data = json.loads((tmp_path / "a" / "results.json").read_text())
    assert data["verdict"]["status"] == "ready_with_warnings"


def test_report_cli_policy(tmp_path, cli):
    save_results(make_results(STEADY), tmp_path / "r.json")
    (tmp_path / "p.yaml").write_text("version: 1\nbudgets:\n  - bench.batch[1].median_ms "
                                     "<= 0.5 ms\n")
    res = cli("report", "--from", str(tmp_path / "r.json"), "-o", str(tmp_path / "a"),
              "--policy", str(tmp_path / "p.yaml"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Verdict: Not ready (not_ready)")
    assert "gate check(s) failed" in res.stdout
    (tmp_path / "b.yaml").write_text("version: 1\nbaseline:\n  - bench.batch[*].p99_ms: 5%\n")
    res = cli("report", "--from", str(tmp_path / "r.json"), "-o", str(tmp_path / "b"),
              "--policy", str(tmp_path / "b.yaml"))
    assert res.returncode == 2 and "baseline rules" in res.stderr
    assert not (tmp_path / "b").exists()
    (tmp_path / "bad.yaml").write_text("version: 1\nbudgets:\n  - bench.batch[1].p99_mss < 1\n")
    res = cli("report", "--from", str(tmp_path / "r.json"), "-o", str(tmp_path / "c"),
              "--policy", str(tmp_path / "bad.yaml"))
    assert res.returncode == 2 and "bad.yaml" in res.stderr


@pytest.mark.parametrize("status", VERDICT_STATUSES)
def test_every_status_renders(status):
    r = _steady()
    r.verdict = judge(r).model_copy(update={"status": status})
    html, md, _, _ = build_report(r)
    assert f'class="verdict {status}"' in html


def test_real_advice_that_cannot_tell_names_what_to_remeasure():
    """A noisy sweep (log-normal sigma 0.4, 30 samples a batch size): the advice's
    bootstrap replicas disagree, and the verdict says so with the advice's own words."""
    from trtcheck.testing import synthetic_results as g

    from trtcheck.analyze.advice.inputs import build_request, inputs_from_results

    r = g.results({1: 38.0, 2: 75.0, 4: 190.0, 8: 224.0, 16: 406.0}, n=30, seed=1, sigma=0.4)
    curve, measured = inputs_from_results(r)
    r.advice = advise(build_request(curve, measured, rate_per_s=20.0))
    assert r.advice.recommendation.stability.status == "cannot-tell"
    v = judge(r)
    assert v.status == "cannot_tell"
    (c,) = _reasons(v, "advice-cannot-tell")
    assert c.effect == "cannot_tell" and c.section == "advice"
    assert "bootstrap replicas" in c.message and c.remedy.startswith("re-measure T(b) at batch")


def test_an_interrupted_run_cannot_tell():
    r = _steady()
    r.bench[0].incomplete = "interrupted by SIGINT after batch 1"
    v = judge(r)
    assert v.status == "cannot_tell"
    (i,) = _reasons(v, "incomplete")
    assert "SIGINT" in i.message and i.where == ["bench"] and i.section == "bench"


def test_a_likely_advice_decides_like_a_stable_one():
    """An advice whose recommendation holds in 60-80% of replicas is ``likely``: the
    verdict reads it as decided (no advice-cannot-tell reason); below 60% it cannot tell."""
    r = _steady()
    r.advice = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 300.0))
    st = r.advice.recommendation.stability
    assert st is not None
    st.status, st.share = "likely", 0.67
    v = judge(r)
    assert v.status != "cannot_tell" and not _reasons(v, "advice-cannot-tell")
    st.status, st.share = "cannot-tell", 0.5
    assert judge(r).status == "cannot_tell"


def test_an_uncertain_median_under_advice_that_held_on_its_replicas_is_a_warning():
    from trtcheck.results.advice import AdviceStability

    r = make_results(NOISY)
    r.advice = advise(AdviseRequest(parse_curve_text("1:2,4:3,16:7"), 30.0))
    r.advice.recommendation.stability = AdviceStability(status="stable", replicas=12,
                                                        share=1.0, kind_share=1.0)
    v = judge(r)
    # the decision the medians feed was made on bootstrap replicas of these samples
    assert v.status == "ready_with_warnings"
    (u,) = _reasons(v, "measurement-unstable")
    assert u.effect == "warning" and "held in 100% of 12 bootstrap replicas" in u.message
    assert "not decided" in u.message
    r.advice.recommendation.stability = AdviceStability(status="cannot-tell", replicas=12,
                                                        share=0.4, kind_share=0.5)
    assert judge(r).status == "cannot_tell"


def test_report_target_onnxruntime_judges_for_onnxruntime_with_tensorrt_as_a_note(tmp_path,
                                                                                 cli):
    model = _relu_with_shared_dims(tmp_path)
    common = ("--shapes", "x:1x3x48x192", "--min-duration", "0.1", "--min-samples", "10",
              "--max-duration", "2", "--no-serve", "--precision", "none")
    res = cli("report", str(model), "-o", str(tmp_path / "ort"), "--target", "onnxruntime",
              *common)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Verdict: ") and "judged for ONNX Runtime" in res.stdout
    assert "Not ready" not in res.stdout
    assert "[note] TensorRT could not build it (a note: the target is ONNX Runtime" \
        in res.stdout
    data = json.loads((tmp_path / "ort" / "results.json").read_text())
    assert data["target"] == "onnxruntime" and data["verdict"]["target"] == "onnxruntime"
    (note,) = [x for x in data["verdict"]["reasons"] if x["kind"] == "other-runtime"]
    assert note["effect"] == "info" and note["codes"] == ["onnx-shared-dim-name"]
    md = (tmp_path / "ort" / "report.md").read_text()
    assert "**note**: TensorRT could not build it" in md
    # the same results judged for TensorRT: it blocks
    res = cli("report", "--from", str(tmp_path / "ort"), "-o", str(tmp_path / "trt"),
              "--target", "tensorrt")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Verdict: Not ready (not_ready), judged for TensorRT")
    assert "TensorRT cannot build it" in res.stdout


def test_a_tune_search_stopped_before_predicting_is_not_a_missed_objective():
    """A tune document a server fault broke after its first run (no prediction, no pick)
    cannot tell; it is not "no configuration met the objective". Before: not ready."""
    from trtcheck.results.tune import TuneResult

    res = make_results()
    res.kind = "tune"
    res.bench = []
    res.tune = TuneResult(url="http://127.0.0.1:8000", model="m", arrival_rate_per_s=50.0,
                          slo_p99_ms=None, objective="fewest-instances",
                          objective_rule="the fewest instances", max_instances=2,
                          max_batch_size=8, max_batch_source="server", original_config={})
    res.incomplete = ("invalid: open:50 window 2 ms max batch 8 instances 1: the server at "
                      "http://127.0.0.1:8000 stopped answering during the run (1 live run(s) "
                      "finished and kept)")
    v = judge(res)
    assert not _reasons(v, "tune-no-pick")
    assert v.status == "cannot_tell", v
    res.incomplete = None  # a search that predicted and found nothing is still not ready
    res.tune.predictions = []
    assert _reasons(judge(res), "tune-no-pick")


def _tune_record_doc(name: str, rate: float):
    """The tune document of a recorded tune-record run (tests/data/tune-gpu-raw/)."""
    import lzma

    path = Path(__file__).resolve().parent / "data" / "tune-gpu-raw" / name
    record = json.loads(lzma.decompress(path.read_bytes()))
    entry = next(t for t in record["tunes"] if t["rate_per_s"] == rate)
    return results_from_json(json.dumps(entry["tune_json"]))


def test_a_tune_pick_measured_above_the_objective_is_not_ready():
    """ResNet-34 on an H100 at 285 req/s: the live runs were spent on a pick that
    measured P99 61 ms against a 22.5 ms objective (outside its interval). Before: only
    the outside-the-interval warning, "ready with warnings"."""
    res = _tune_record_doc("h100-host-resnet34-tune.json.xz", 285.0)
    assert res.tune.pick.measured.p99_ms > res.tune.slo_p99_ms
    v = judge(res)
    assert v.status == "not_ready", v
    assert _reasons(v, "tune-pick-misses-objective")
    assert _reasons(v, "tune-outside-interval")


def test_an_uncertified_tune_pick_is_a_warning_and_a_certified_one_is_not():
    """The H200 ResNet-34 search at 427 req/s: its pick measured P99 12 ms, inside its
    interval and within the 22.5 ms objective, no reason. The same pick marked not
    certified (no interval was within the objective) is a warning."""
    res = _tune_record_doc("h200-host-resnet34-tune.json.xz", 427.0)
    assert not _reasons(judge(res), "tune-not-certified")
    assert not _reasons(judge(res), "tune-pick-misses-objective")
    res.tune.pick.certified = False
    v = judge(res)
    assert _reasons(v, "tune-not-certified") and v.status == "ready_with_warnings", v


def test_tune_runs_that_fell_short_of_their_schedule_are_named_in_the_verdict():
    """The H200 ResNet-34 search at 427 req/s, with a generator-limited finding put on
    a calibration run and then on the run that measured the pick: the calibration's is a
    warning naming the live run as the progress lines number it; the pick's makes the
    verdict cannot-tell (its latencies cannot certify a budget). Before: no reason, and
    the pick stood "ready"."""
    from trtcheck.results.stats import Finding

    res = _tune_record_doc("h200-host-resnet34-tune.json.xz", 427.0)
    assert judge(res).status == "ready"
    short = Finding(code="generator-limited", severity="error", where="open:427",
                    message="the load generator limited this run: 12% of sends were late; "
                            "its latencies cannot certify a budget", remedy="lower the rate")
    purposes = res.tune.run_purposes
    cal = purposes.index("calibration at the rate, with a repeat")
    res.tune.runs[cal].configs[0].validity.append(short)
    v = judge(res)
    (r,) = _reasons(v, "tune-calibration-load-short")
    assert r.effect == "warning" and r.message.startswith("live runs 2-3 fell short"), r
    assert r.title == "live runs 2-3 of the search did not send their schedule"
    assert v.status == "ready_with_warnings" and not _reasons(v, "tune-pick-load-short")
    res.tune.runs[res.tune.pick.measured.run].configs[0].validity.append(short)
    v = judge(res)
    (p,) = _reasons(v, "tune-pick-load-short")
    assert p.effect == "cannot_tell" and v.status == "cannot_tell", v
    assert _reasons(v, "tune-calibration-load-short")


def test_a_tune_pick_measured_in_a_short_run_is_a_warning():
    """The H200 ResNet-34 search at 427 req/s measured its pick with 1,000 requests or
    more: no reason. The same measurement with 116 requests (a search at a low rate on a
    short --duration-s) rests its P99 on about one request: a warning that says so.
    Before: "Ready: no warnings" beside tune's own note that a rare stall may be
    missed."""
    res = _tune_record_doc("h200-host-resnet34-tune.json.xz", 427.0)
    assert res.tune.pick.measured.requests >= 1000
    assert not _reasons(judge(res), "tune-pick-short-run")
    res.tune.pick.measured.requests = 116
    v = judge(res)
    (r,) = _reasons(v, "tune-pick-short-run")
    assert r.effect == "warning" and v.status == "ready_with_warnings", v
    assert "held 116 requests, about 1 of them above its P99" in r.message, r.message


def test_a_serving_sweep_with_valid_configurations_left_is_judged_on_them():
    """A recorded live sweep of the demo ResNet-18 on 2 CPU cores (16 configurations, 8
    open-loop; one generator-limited, late sends in all 8). Before: "Cannot tell ... no
    valid open-loop configuration is left" (any file without a bench run), "The medians
    are still known to +-10%" (no bench median was measured) and "raise --min-duration"
    (an option serve does not have)."""
    import lzma

    from trtcheck.results import results_from_json

    raw = Path(__file__).resolve().parent / "data" / "serve-live-raw" / \
        "dev-cpu-demo-resnet18-sweep.json.xz"
    results = results_from_json(lzma.decompress(raw.read_bytes()).decode())
    limited = [c for c in results.serve.configs
               if any(f.code == "generator-limited" for f in c.validity)]
    assert len(limited) == 1 and not results.bench
    v = judge(results)
    assert v.status == "ready_with_warnings"
    (gen,) = _reasons(v, "measurement-invalid")
    assert gen.effect == "warning" and "no valid open-loop configuration" not in gen.message
    assert gen.where == ["open:10 window 0 ms max batch 4 instances 2"]
    (noise,) = _reasons(v, "noisy-machine")
    assert "medians are still known" not in noise.message
    assert "--min-duration" not in (noise.remedy or "")
    assert "--duration-s" in (noise.remedy or "")


def test_advice_recommended_uncertified_is_a_warning():
    """Advice chosen on the intervals whose recommendation's P99 interval reaches above
    the objective (its point meets it) leaves a warning in the verdict, not a pass."""
    from pathlib import Path

    from trtcheck.analyze.advice import build_request, inputs_from_live
    from trtcheck.results import load_results

    live = Path(__file__).resolve().parent / "gold" / "inputs" / "live.json"
    curve, measured = inputs_from_live(load_results(live), source=str(live))
    r = _steady()
    r.advice = advise(build_request(curve, measured, rate_per_s=300.0, slo_p99_ms=20.0))
    assert r.advice.recommendation.certified is False
    v = judge(r)
    assert v.status != "ready"
    (u,) = _reasons(v, "advice-uncertified")
    assert u.effect == "warning" and "above the 20 ms objective" in u.message
    r.advice = advise(build_request(curve, measured, rate_per_s=300.0, slo_p99_ms=40.0))
    assert r.advice.recommendation.certified is True
    assert not _reasons(judge(r), "advice-uncertified")
