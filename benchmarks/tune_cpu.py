"""``trtcheck tune`` against a brute-force measured grid, on a CPU Triton (CI-sized).

A real tritonserver (``trtcheck/testing/triton_server.py``) serves a real ONNX model
through the ONNX Runtime python-backend wrapper (``trtcheck/testing/onnx_model.py``): the
PP-OCR cls model (default) or the demo ResNet-18 (``--model resnet18``). Then:

1. ``run_tune`` (what ``trtcheck tune`` runs) at ``--rate`` with ``--slo-p99-ms``: its
   pick, the pick's measured P99, live runs and wall time;
2. a brute-force grid measured live (windows 0/1/5 ms x max batch 1/4/B x 1 and 2
   instances, the target rate, one run each);
3. per grid configuration: tune's last-round prediction and its interval against the
   measurement (coverage), and the best measured P99 among the configurations that meet
   the objective, against the pick's measured P99.

Prints a table and writes ``benchmarks/results/tune_cpu-<machine>.json``.

    python benchmarks/tune_cpu.py [--machine dev-cpu] [--model cls|resnet18] [--rate 40]
        [--slo-p99-ms 200] [--duration-s 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _harness import add_machine_argument, format_table, write_result


def _server(model: str, max_batch: int):
    from trtcheck.testing.onnx_model import write_onnx_model
    from trtcheck.testing.triton_server import TritonServer

    repo = Path(tempfile.mkdtemp(prefix="tune-cpu-")) / "models"
    repo.mkdir(parents=True)
    if model == "resnet18":
        from trtcheck.load.demo import demo_model_path

        write_onnx_model(repo, model, demo_model_path(), max_batch_size=max_batch)
        shapes = None
    else:
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "fetch_ppocr", Path(__file__).resolve().parents[1] / "engines" / "fetch_ppocr.py")
        mod = importlib.util.module_from_spec(spec)
        assert spec.loader is not None
        spec.loader.exec_module(mod)
        path = mod.fetch()["cls"]
        shapes = {"x": [1, 3, 48, 192]}
        write_onnx_model(repo, model, path, max_batch_size=max_batch, shapes=shapes)
    srv = TritonServer(repo, load_models=(model,)).start(timeout_s=120)
    return srv, shapes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_machine_argument(ap)
    ap.add_argument("--model", choices=("cls", "resnet18"), default="cls")
    ap.add_argument("--rate", type=float, default=40.0, help="target rate, req/s")
    ap.add_argument("--slo-p99-ms", type=float, default=200.0)
    ap.add_argument("--max-batch", type=int, default=8)
    ap.add_argument("--duration-s", type=float, default=3.0)
    ap.add_argument("--objective", default="p99")
    args = ap.parse_args()

    from trtcheck.measure.serving.live.live import measure_live
    from trtcheck.pipeline.tune import TuneSettings, run_tune

    srv, shapes = _server(args.model, args.max_batch)
    try:
        t0 = time.monotonic()
        out = run_tune(TuneSettings(url=srv.http_url, model=args.model, rate_per_s=args.rate,
                                    slo_p99_ms=args.slo_p99_ms, objective=args.objective,
                                    max_instances=2, duration_s=args.duration_s,
                                    shapes=shapes), progress=print)
        tune_s = time.monotonic() - t0
        t = out.result
        if t.pick is None:
            print(f"tune picked nothing: {out.error or out.incomplete}")
        preds = {(p.window_us, p.max_batch_size, p.instances): p for p in t.predictions}
        grid_runs = []
        t1 = time.monotonic()
        for mbs, wins in (([4, args.max_batch], [0.0, 1000.0, 5000.0]), ([1], [0.0])):
            run = measure_live(srv.http_url, args.model, windows_us=wins, max_batch_sizes=mbs,
                               instances=[1, 2], loads=[f"open:{args.rate:g}"],
                               max_duration_s=args.duration_s, shapes=shapes,
                               progress=print)
            grid_runs += run.configs
        grid_s = time.monotonic() - t1
    finally:
        srv.stop()

    rows = []
    for c in grid_runs:
        key = (float(c.window_us), int(c.max_batch_size), int(c.instances or 1))
        lat = [x for r in c.repeats for x in r.latencies_ms]
        from trtcheck.stats import percentile

        p50 = percentile(lat, 0.5) if lat else None
        p99 = percentile(lat, 0.99) if lat else None
        p = preds.get(key)
        row = {"window_ms": key[0] / 1000, "max_batch": key[1], "instances": key[2],
               "measured_p50_ms": p50, "measured_p99_ms": p99,
               "mean_batch": c.repeats[0].mean_batch_size if c.repeats else None}
        if p is not None and p.p50 is not None and p.p99 is not None and p50 is not None:
            row.update(predicted_p50_ms=p.p50.point_ms, predicted_p99_ms=p.p99.point_ms,
                       p50_lo_ms=p.p50.lo_ms, p50_hi_ms=p.p50.hi_ms,
                       p99_lo_ms=p.p99.lo_ms, p99_hi_ms=p.p99.hi_ms,
                       p50_inside=p.p50.holds(p50), p99_inside=p.p99.holds(p99))
        rows.append(row)
    covered = [r for r in rows if "p50_inside" in r]
    cov50 = sum(r["p50_inside"] for r in covered) / len(covered) if covered else None
    cov99 = sum(r["p99_inside"] for r in covered) / len(covered) if covered else None
    meets = [r for r in rows if r["measured_p99_ms"] is not None
             and r["measured_p99_ms"] <= args.slo_p99_ms]
    best = min(meets, key=lambda r: r["measured_p99_ms"]) if meets else None
    pick_p99 = (t.pick.measured.p99_ms if t.pick is not None and t.pick.measured is not None
                else None)
    print(format_table(rows, [
        ("window_ms", "window ms", "g"), ("max_batch", "B", "d"), ("instances", "n", "d"),
        ("measured_p50_ms", "P50 meas", ".3g"), ("predicted_p50_ms", "P50 pred", ".3g"),
        ("p50_lo_ms", "lo", ".3g"), ("p50_hi_ms", "hi", ".3g"),
        ("measured_p99_ms", "P99 meas", ".3g"), ("predicted_p99_ms", "P99 pred", ".3g"),
        ("p99_lo_ms", "lo", ".3g"), ("p99_hi_ms", "hi", ".3g"),
        ("p50_inside", "P50 in", ""), ("p99_inside", "P99 in", "")]))
    pick = t.pick
    summary = {
        "model": args.model, "rate_per_s": args.rate, "slo_p99_ms": args.slo_p99_ms,
        "objective": args.objective,
        "pick": None if pick is None else {"window_ms": pick.window_us / 1000,
                                           "max_batch": pick.max_batch_size,
                                           "instances": pick.instances,
                                           "measured_p99_ms": pick_p99},
        "best_measured": best, "tune_live_runs": t.live_runs, "tune_wall_s": round(tune_s, 1),
        "grid_configurations": len(rows), "grid_wall_s": round(grid_s, 1),
        "coverage_p50": cov50, "coverage_p99": cov99,
        "pick_p99_over_best": (pick_p99 / best["measured_p99_ms"]
                               if pick_p99 and best else None)}
    print({k: v for k, v in summary.items() if k != "best_measured"})
    write_result("tune_cpu", args.machine, {"summary": summary, "rows": rows,
                                            "calibration": t.calibration.model_dump(mode="json")
                                            if t.calibration else None})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
