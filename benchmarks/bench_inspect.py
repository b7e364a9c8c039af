#!/usr/bin/env python3
"""Time and peak memory of ``inspect_onnx`` on real and large models.

Each case runs in a fresh subprocess (so peak RSS, ``VmHWM`` from
``/proc/self/status`` on Linux, is the inspection's own): the three PP-OCR models (with the shapes the tests use), the demo
ResNet-18, and a generated model with ~N MB of inline weights (25 MatMuls of
2048 x 2048 float32 per 400 MB) inspected both inline and saved with external data.
Prints a table and writes ``benchmarks/results/bench_inspect-<machine>.json``.

Usage: ``python benchmarks/bench_inspect.py [--big-mb 400]``
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from _harness import add_machine_argument, result_path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
from trtcheck.inspection.onnx.onnx_inspect import inspect_onnx
shapes = json.loads(sys.argv[2]) or None
t0 = time.perf_counter()
insp = inspect_onnx(sys.argv[1], shapes)
wall_s = time.perf_counter() - t0
print(json.dumps({"wall_s": wall_s,
                  "peak_rss_bytes": next(int(l.split()[1]) * 1024 for l in
                                         open("/proc/self/status") if l.startswith("VmHWM")),
                  "macs": insp.compute.macs if insp.compute else None,
                  "parameter_count": insp.parameter_count,
                  "lints": [f.code for f in insp.lints]}))
"""


def big_model(path: Path, mb: int, external: bool) -> None:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    n = max(1, round(mb / 16))
    nodes, inits, x = [], [], "x"
    for i in range(n):
        inits.append(numpy_helper.from_array(np.zeros((2048, 2048), np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"h{i}"]))
        x = f"h{i}"
    g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", 1, ["n", 2048])],
                          [helper.make_tensor_value_info(x, 1, ["n", 2048])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    if external:
        onnx.save_model(m, path, save_as_external_data=True, location=path.stem + ".data")
    else:
        onnx.save(m, path)


def run_case(path: Path, shapes: dict | None) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path),
                           json.dumps(shapes or {})], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big-mb", type=int, default=400)
    add_machine_argument(ap)
    args = ap.parse_args()
    import importlib.util

    spec = importlib.util.spec_from_file_location("fetch_ppocr", ROOT / "engines" / "fetch_ppocr.py")
    fetch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch)
    pp = fetch.fetch()
    from trtcheck.load.demo import demo_model_path

    cases = [("ppocr-cls", pp["cls"], {"x": [1, 3, 48, 192]}),
             ("ppocr-det", pp["det"], {"x": [1, 3, 320, 320]}),
             ("ppocr-rec", pp["rec"], {"x": [1, 3, 48, 320]}),
             ("demo-resnet18", demo_model_path(), None)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for external in (False, True):
            p = Path(tmp) / f"big-{'ext' if external else 'inline'}.onnx"
            big_model(p, args.big_mb, external)
            cases.append((f"matmul-{args.big_mb}MB-{'external' if external else 'inline'}",
                          p, None))
        for name, path, shapes in cases:
            size = sum(f.stat().st_size for f in Path(path).parent.glob(Path(path).stem + ".*"))
            r = run_case(Path(path), shapes)
            rows.append({"case": name, "files_bytes": size, **r})
    print(f"{'case':<28} {'files MB':>9} {'wall s':>7} {'peak RSS MB':>12} {'MACs':>14}")
    for r in rows:
        print(f"{r['case']:<28} {r['files_bytes'] / 1e6:>9.1f} {r['wall_s']:>7.2f} "
              f"{r['peak_rss_bytes'] / 1e6:>12.0f} {r['macs'] if r['macs'] is not None else '-':>14}")
    out = result_path("bench_inspect", args.machine)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.platform(), "python": platform.python_version(),
                               "cpu_count": __import__("os").cpu_count(), "rows": rows},
                              indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
