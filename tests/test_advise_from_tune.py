"""``advise --from tune.json``: a tune search's run at the target rate is the calibration
(the whole flow against a real tritonserver is in tests/test_tune_cli.py)."""

from __future__ import annotations

import json

import pytest

from trtcheck.fingerprint import collect_environment
from trtcheck.results import Results, ToolInfo
from trtcheck.results.model import save_results
from trtcheck.results.tune import TuneResult

from cli_helper import invoke
from conftest import assert_one_line_error, run_cli


def test_a_search_with_no_run_at_the_rate_is_one_line(tmp_path):
    doc = Results(kind="tune", tool=ToolInfo(version="0.1.0", command=["trtcheck", "tune"]),
                  created_utc="2026-12-05T00:00:00Z", environment=collect_environment(),
                  tune=TuneResult(url="http://127.0.0.1:1", model="m", arrival_rate_per_s=10.0,
                                  objective="p99"))
    path = save_results(doc, tmp_path / "tune.json")
    res = invoke("advise", "--from", path, "--arrival-rate", "10")
    assert_one_line_error(res, 2, "without a finished run at the target rate")


def test_without_arrival_rate_a_tune_document_gives_its_recorded_rate(tmp_path):
    # any other document keeps requiring --arrival-rate
    doc = Results(kind="tune", tool=ToolInfo(version="0.1.0", command=["trtcheck", "tune"]),
                  created_utc="2026-12-05T00:00:00Z", environment=collect_environment())
    path = save_results(doc, tmp_path / "other.json")
    res = invoke("advise", "--from", path)
    assert_one_line_error(res, 2, "--arrival-rate is required")


@pytest.mark.triton
@pytest.mark.slow
def test_advise_from_a_real_tune_search_defaults_to_its_target_rate(triton, tmp_path):
    """``advise --from tune.json`` without ``--arrival-rate`` takes the rate the search
    recorded (tune.arrival_rate_per_s) and says so. Before: exit 2, "--arrival-rate is
    required", though the document holds the rate."""
    out = tmp_path / "tune.json"
    res = run_cli("tune", "--url", triton.http_url, "--model", "tb_linear", "--arrival-rate",
                  "60", "--max-instances", "1", "--max-batch", "8", "--duration-s", "1",
                  "-o", str(out), timeout=600)
    assert out.exists(), res.stderr
    a = run_cli("advise", "--from", str(out), "--format", "json")
    assert a.returncode == 0, a.stderr
    adv = json.loads(a.stdout)
    text = json.dumps(adv)
    assert "the tune search's target rate recorded in" in text, text[:2000]
    assert adv["recommendation"]["prediction"]["arrival_rate_per_s"] == 60.0
    # an explicit rate still wins, and then there is nothing to say about a default
    b = run_cli("advise", "--from", str(out), "--arrival-rate", "30", "--format", "json")
    assert b.returncode == 0, b.stderr
    assert "the tune search's target rate" not in b.stdout
    assert json.loads(b.stdout)["recommendation"]["prediction"]["arrival_rate_per_s"] == 30.0


def test_sizes_the_search_measured_above_the_rate_run_extend_its_curve():
    """tune.json held a measured T(7) from its closed loop while `advise --from tune.json`
    (calibrated from the run at the rate, batches of 1) extrapolated T(b) above 1 and
    said sizes above 1 were not assessed: the curve now takes the search's T(b) above
    the run's largest size, scaled to the run's level at that size, and says so."""
    from types import SimpleNamespace

    from trtcheck.analyze.advice.curve import make_curve
    from trtcheck.analyze.advice.inputs import tune_extended_curve

    tune = SimpleNamespace(calibration=SimpleNamespace(per_instances=[
        SimpleNamespace(instances=1, batch_sizes=[1, 7], t_ms=[36.06, 159.5]),
        SimpleNamespace(instances=2, batch_sizes=[1, 7], t_ms=[40.0, 170.0])]))
    curve, note = tune_extended_curve(tune, make_curve([(1, 40.0)], source="live"),
                                      "tune.json")
    k = 40.0 / 36.06  # this run's T(1) over the search's
    assert curve.points() == [(1, 40.0), (7, pytest.approx(159.5 * k))]
    assert curve.max_batch_measured == 7 and curve.source == "live"
    assert note is not None and note.startswith(
        "T(b) above batch 1 (the largest the run at the rate formed) comes from tune.json's "
        "search, which measured batch sizes up to 7 at 1 instance")
    assert f"times {k:.3f}" in note and f"T(7) = {159.5 * k:.4g} ms" in note
    # between two of the search's sizes, its T is interpolated for the ratio
    curve, note = tune_extended_curve(tune, make_curve([(1, 36.06), (4, 97.78)],
                                                       source="live"), "tune.json")
    assert curve.points()[-1] == (7, pytest.approx(159.5))
    # nothing to add when the run at the rate formed those sizes itself
    same = make_curve([(1, 36.0), (7, 160.0)], source="live")
    assert tune_extended_curve(tune, same, "tune.json") == (same, None)


def test_advice_from_a_recorded_search_assesses_the_sizes_its_closed_loop_measured(tmp_path):
    """ResNet-152 on an H100 at 107 req/s (a recorded tune search): its run at the rate
    formed batches up to 4, its closed loop measured up to 44. The advice's T(b) reaches
    44: sizes above 44, not above 4, are the ones it says it did not assess."""
    import lzma
    from pathlib import Path

    raw = (Path(__file__).resolve().parent / "data" / "tune-gpu-raw"
           / "h100-host-resnet152-tune.json.xz")
    entry = next(t for t in json.loads(lzma.decompress(raw.read_bytes()))["tunes"]
                 if t["rate_per_s"] == 107.0)
    doc = entry["tune_json"]
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(doc))
    one = next(c for c in doc["tune"]["calibration"]["per_instances"] if c["instances"] == 1)
    res = run_cli("advise", "--from", str(path), "--replicas", "0", "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    sizes = sorted(int(b) for b in out["curve"]["points_ms"])
    assert sizes[-1] == max(one["batch_sizes"]) == 44 and 4 in sizes
    text = json.dumps(out)
    # the cap is the closed loop's (the server allows 64), not the run at the rate's
    assert "batch sizes above 44, the largest the calibration run measured" in text
    assert "above 4," not in text and "max batch 4 is" not in text.lower()
    assert "T(b) above batch 4 (the largest the run at the rate formed)" in text


def test_the_what_if_of_tunes_pick_uses_its_contention_and_interval_kind(tmp_path):
    """ResNet-34 on an H200 at 142 req/s (a recorded tune search, pick at 4 instances):
    advise's what-if of tune's pick takes T(b) at 4 instances as the search measured it
    (not the assumed 1.5x of 1 + 0.25 log2 4) and its P50/P99 spreads from the same
    repeated run at the rate, for a run as long as one repeat: its P50 interval is as
    wide as tune's on the log scale."""
    import lzma
    import math
    from pathlib import Path

    raw = Path(__file__).resolve().parent / "data" / "tune-gpu-raw" / "h200-host-resnet34-tune.json.xz"
    entry = next(t for t in json.loads(lzma.decompress(raw.read_bytes()))["tunes"]
                 if t["rate_per_s"] == 142.0)
    doc = entry["tune_json"]
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(doc))
    pick = doc["tune"]["pick"]
    assert pick["instances"] == 4
    res = run_cli("advise", "--from", str(path), "--arrival-rate", "142", "--window-ms",
                  f"{pick['window_us'] / 1000:g}", "--max-batch", str(pick["max_batch_size"]),
                  "--instances", str(pick["instances"]), "--replicas", "0", "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    what_if = out["what_if"][0]
    measured = next(c for c in doc["tune"]["calibration"]["per_instances"] if c["instances"] == 4)
    assert what_if["contention_source"] == "measured"
    assert what_if["contention_factor"] == pytest.approx(measured["contention_factor"], rel=1e-3)
    notes = " ".join(out["curve"]["notes"])
    assert "as the tune search measured it at 4 instances" in notes
    assert "assumed contention" not in notes

    # the upper halves on the log scale: the lower ends stop at each one's floor (tune:
    # its closed loop's latency floor; advise: the calibration's fastest request)
    iv = pick["predicted"]["p50"]
    ratio = (math.log(what_if["p50_interval_ms"][1] / what_if["p50_ms"])
             / math.log(iv["hi_ms"] / iv["point_ms"]))
    assert 0.7 < ratio < 1.4, (what_if["p50_interval_ms"], iv)
    lo, hi = what_if["p99_interval_ms"]
    assert lo <= what_if["p99_ms"] <= hi


def test_without_slo_a_tune_document_gives_its_recorded_objective(tmp_path):
    """The recorded ResNet-34 search (H200, 142 req/s) had a P99 objective: advise takes
    it as it takes the rate, and says so."""
    import lzma
    from pathlib import Path

    raw = Path(__file__).resolve().parent / "data" / "tune-gpu-raw" / "h200-host-resnet34-tune.json.xz"
    entry = next(t for t in json.loads(lzma.decompress(raw.read_bytes()))["tunes"]
                 if t["rate_per_s"] == 142.0)
    doc = entry["tune_json"]
    slo = doc["tune"]["slo_p99_ms"]
    assert slo
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(doc))
    res = run_cli("advise", "--from", str(path), "--replicas", "0", "--format", "json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["inputs"]["slo_p99_ms"] == slo
    text = run_cli("advise", "--from", str(path), "--replicas", "0")
    assert text.returncode == 0, text.stderr
    assert f"P99 objective {slo:g} ms: the tune search's recorded in" in text.stdout


def test_an_objective_no_searched_configuration_meets_is_named_not_the_capacity(tmp_path):
    """ResNeXt-50 on an H100 at 250 req/s (a recorded tune search): a P99 objective of
    9 ms, below what its calibrated stalls allow at any instance count, is the error,
    with the best P99 reached. Before: "250 req/s is above the capacity of every
    searched configuration ...: at least 1 instances are needed" (the P99 search kept
    no prediction of the counts it screened)."""
    import lzma
    from pathlib import Path

    raw = (Path(__file__).resolve().parent / "data" / "tune-gpu-raw"
           / "h100-host-resnext50_32x4d-tune.json.xz")
    entry = next(t for t in json.loads(lzma.decompress(raw.read_bytes()))["tunes"]
                 if t["rate_per_s"] == 250.0)
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(entry["tune_json"]))
    res = run_cli("advise", "--from", str(path), "--slo-p99-ms", "9", timeout=600)
    line = assert_one_line_error(res, 2, "no searched configuration meets P99 <= 9 ms at "
                                 "250 req/s", "the best reached is P99")
    assert "above the capacity" not in line


def test_a_count_above_the_searched_ones_follows_the_measured_contention(tmp_path):
    """The recorded ResNet-34 search (H200, 142 req/s) measured contention up to 4
    instances: a what-if at 6 extrapolates that curve and says so (a warning, interval
    widened). Before: "T(b) was calibrated at 1 instance only" and the assumed
    1 + 0.25 log2 n, as if the search had measured no other count."""
    import lzma
    from pathlib import Path

    from trtcheck.analyze import tune_plan as tp

    raw = Path(__file__).resolve().parent / "data" / "tune-gpu-raw" / "h200-host-resnet34-tune.json.xz"
    doc = next(t for t in json.loads(lzma.decompress(raw.read_bytes()))["tunes"]
               if t["rate_per_s"] == 142.0)["tune_json"]
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(doc))
    per = {c["instances"]: c for c in doc["tune"]["calibration"]["per_instances"]}
    assert 6 not in per and per[4]["source"] == "measured"
    res = run_cli("advise", "--from", str(path), "--window-ms", "0", "--max-batch", "4",
                  "--instances", "6", "--replicas", "0", "--format", "json", timeout=600)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    what_if = out["what_if"][0]
    assert what_if["contention_source"] == "extrapolated"
    t = doc["tune"]
    cal_run = t["runs"][t["run_purposes"].index("calibration at the rate, with a repeat")]
    n_cal = cal_run["configs"][0]["instances"] or 1
    want = tp.contention_interp(per[4]["contention_factor"], 6, 4) / per[
        n_cal]["contention_factor"]
    assert what_if["contention_factor"] == pytest.approx(want, rel=1e-3)
    notes = " ".join(out["curve"]["notes"])
    assert "6 instances: T(b) x" in notes and "extrapolated from the instance counts" in notes
    assert "calibrated at 1 instance only" not in notes


def test_without_objective_a_tune_document_gives_its_objective(tmp_path):
    """ResNet-152 on an H100 (a recorded tune search with objective p99): without
    --objective the advice chooses by the search's objective and says so; an explicit
    one still wins; any other document keeps fewest-instances. Before, the advice chose
    by fewest-instances beside the search's P99 objective it did take."""
    import lzma
    from pathlib import Path

    raw = (Path(__file__).resolve().parent / "data" / "tune-gpu-raw"
           / "h100-host-resnet152-tune.json.xz")
    doc = next(t for t in json.loads(lzma.decompress(raw.read_bytes()))["tunes"]
               if t["rate_per_s"] == 107.0)["tune_json"]
    assert doc["tune"]["objective"] == "p99"
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(doc))
    res = run_cli("advise", "--from", str(path), "--replicas", "0", "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["inputs"]["objective"] == "p99"
    assert ("objective p99: the tune search's recorded in " + str(path)
            + " (tune.objective), as no --objective was given") in json.dumps(out)
    given = run_cli("advise", "--from", str(path), "--replicas", "0", "--objective",
                    "fewest-instances", "--format", "json")
    assert given.returncode == 0, given.stderr
    assert json.loads(given.stdout)["inputs"]["objective"] == "fewest-instances"
    assert "(tune.objective)" not in given.stdout
    typed = run_cli("advise", "--latency-curve", "1:1,8:2", "--arrival-rate", "100",
                    "--replicas", "0", "--format", "json")
    assert typed.returncode == 0, typed.stderr
    assert json.loads(typed.stdout)["inputs"]["objective"] == "fewest-instances"


def _recorded_tune(tmp_path, record: str, rate: float):
    import lzma
    from pathlib import Path

    raw = Path(__file__).resolve().parent / "data" / "tune-gpu-raw" / record
    entry = next(t for t in json.loads(lzma.decompress(raw.read_bytes()))["tunes"]
                 if t["rate_per_s"] == rate)
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(entry["tune_json"]))
    return path, entry["tune_json"]["tune"]


def test_advice_from_a_search_covers_its_instance_counts_and_quotes_its_measurement(tmp_path):
    """ResNet-152 on an H100 at 107 req/s (a recorded search up to 4 instances, pick
    w0 b1 x4 measured at P99 24.7 ms): without --instances the advice searches 1-4 as the
    search did, and where it recommends the configuration the search measured, it quotes
    that measurement."""
    path, tune = _recorded_tune(tmp_path, "h100-host-resnet152-tune.json.xz", 107.0)
    res = run_cli("advise", "--from", str(path), "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["inputs"]["instances_searched"] == [1, 2, 3, 4]
    assert any("instance counts 1-4: the tune search's" in n for n in out["curve"]["notes"])
    p = out["recommendation"]["prediction"]
    pick = tune["pick"]
    found = {f["code"]: f for f in out["pitfalls"]}
    assert (p["window_us"], p["max_batch_size"], p["instances"]) == (
        pick["window_us"], pick["max_batch_size"], pick["instances"])
    msg = found["tune-measured-recommendation"]["message"]
    assert f"P99 {pick['measured']['p99_ms']:.3g} ms" in msg, msg
    assert "tune-pick-differs" not in found


def test_advice_that_differs_from_the_searchs_pick_names_the_pick_and_its_measurement(
        tmp_path):
    """VGG-16 on an H100 at 313 req/s: the search measured its pick (w0 b1 x4, P99 6.7 ms);
    advice that recommends another configuration names it beside its own."""
    path, tune = _recorded_tune(tmp_path, "h100-host-vgg16-tune.json.xz", 313.0)
    res = run_cli("advise", "--from", str(path), "--format", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    p = out["recommendation"]["prediction"]
    pick = tune["pick"]
    assert (p["window_us"], p["max_batch_size"], p["instances"]) != (
        pick["window_us"], pick["max_batch_size"], pick["instances"])
    found = {f["code"]: f for f in out["pitfalls"]}
    msg = found["tune-pick-differs"]["message"]
    assert "the search picked window 0 ms, max batch 1, 4 instances" in msg, msg
    assert f"P99 {pick['measured']['p99_ms']:.3g} ms" in msg, msg
