#!/usr/bin/env python3
"""FP32 vs FP16 on ONNX Runtime CPU for the demo ResNet-18 and the PP-OCR cls model.

Accuracy (same seeded random inputs for both precisions) and latency per precision
(``run_bench`` with a short stopping rule). Prints a table and writes
``benchmarks/results/precision_models-<machine>.json`` (the PrecisionResult of each model).
Latency on a shared 2-core CPU is noisy; the accuracy numbers are deterministic.

Usage: ``python benchmarks/precision_models.py [--samples N]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

from _harness import add_machine_argument, result_path

ROOT = Path(__file__).resolve().parent.parent


def _ppocr_cls() -> Path:
    spec = importlib.util.spec_from_file_location("fetch_ppocr", ROOT / "engines" / "fetch_ppocr.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return Path(mod.fetch()["cls"])


def main() -> None:
    from trtcheck.load.demo import demo_model_path
    from trtcheck.measure.bench import StopRule
    from trtcheck.measure.precision import compare_onnx_precisions

    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=8)
    add_machine_argument(ap)
    args = ap.parse_args()
    rule = StopRule(warmup_s=0.5, warmup_min_iterations=3, min_duration_s=2.0, min_samples=30,
                    max_duration_s=20.0)
    cases = [("resnet18-demo", demo_model_path(), None),
             ("ppocr-cls", _ppocr_cls(), {"x": [1, 3, 48, 192]})]
    out = {}
    head = (f"{'model':<14} {'output':<30} {'max_abs':>9} {'floor':>9} {'mean_abs':>9} {'max_rel':>9} "
            f"{'cosine':>10} {'top1':>5} {'fp32_ms':>8} {'fp16_ms':>8} {'speedup':>7} verdict")
    print(head)
    print("-" * len(head))
    for name, path, shapes in cases:
        r = compare_onnx_precisions(path, ["fp16"], shapes=shapes, sample_count=args.samples,
                                    seed=0, bench_rule=rule)
        v = r.variants["fp16"]
        for o in v.outputs.values():
            rl, vl = r.reference_latency, v.latency
            assert rl is not None and vl is not None
            print(f"{name:<14} {o.name[:30]:<30} {o.max_abs_error:>9.3g} "
                  f"{o.rounding_floor_max_abs_error or 0:>9.3g} {o.mean_abs_error:>9.3g} "
                  f"{(o.max_rel_error or 0):>9.3g} {o.cosine_similarity or 0:>10.7f} "
                  f"{(o.top1_agreement or 0):>5.0%} {rl.median_ms:>8.3f} {vl.median_ms:>8.3f} "
                  f"{vl.speedup_vs_reference or 0:>7.2f} {'pass' if v.passed else 'FAIL'}")
        out[name] = json.loads(r.model_dump_json())
    dest = result_path("precision_models", args.machine)
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
