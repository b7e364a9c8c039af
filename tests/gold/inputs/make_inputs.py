"""Regenerate the fixed inputs of the golden tests (run by hand, not by pytest).

    python tests/gold/inputs/make_inputs.py

Writes, next to this file:

* ``bench_a.json``, ``bench_b.json``: two bench-only results documents from
  ``trtcheck/testing/synthetic_results.py`` (seeded noise model; B is 10 % slower at batch 8), the inputs of
  ``compare`` and ``gate``;
* ``full.json``: a real ``trtcheck report`` run on the small classifier of
  :func:`onnx_builders.small_classifier` (seeded weights) with a batch sweep, the
  FP16 comparison, the serving sweep and batching advice at 200 req/s, the input of
  ``report --from``, ``advise --from`` and ``gate --list-metrics``;
* ``live.json`` (only with ``--live``, which needs the tritonserver of
  ``engines/fetch_triton.py``): a real ``trtcheck serve --url`` sweep (windows 0 and
  2 ms, max batch 8, a burst and an open loop) of the test server's ``tb_linear``
  model, the input of the live serving text table and ``report --from live.json``.

The measured numbers in ``full.json`` are whatever this machine measured when it was
written; the golden tests only need them fixed. Rewrite these files only on purpose (a
results-schema change), then regenerate the golden outputs (see tests/README.md).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
sys.path.insert(0, str(TESTS))  # a hand-run script: the test helpers import as pytest sees them


def main() -> None:
    """Write the three inputs (about a minute: the serving sweep dominates)."""
    import onnx

    from trtcheck.testing import synthetic_results as gate_synth
    from onnx_builders import small_classifier
    from trtcheck.cli import main as trtcheck_main

    gate_synth.write(gate_synth.results({1: 2.0, 8: 9.0}, n=200, seed=1), HERE / "bench_a.json")
    gate_synth.write(gate_synth.results({1: 2.0, 8: 9.9}, n=200, seed=2), HERE / "bench_b.json")

    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "small_classifier.onnx"
        onnx.save(small_classifier(seed=0), str(model))
        out = Path(tmp) / "report"
        try:
            trtcheck_main(["report", str(model), "--batch", "1,2,4", "--warmup", "0",
                           "--min-duration", "0", "--min-samples", "30",
                           "--precision", "fp16", "--serve", "--arrival-rate", "200",
                           "-o", str(out)])
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
        # stored compact (a third of the indented size); trtcheck reads either
        doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
        (HERE / "full.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n",
                                        encoding="utf-8")


def live() -> None:
    """Write ``live.json`` from a real tritonserver (about 20 s)."""
    from trtcheck.cli import main as trtcheck_main
    from trtcheck.testing.triton_server import TritonServer, make_repository

    with tempfile.TemporaryDirectory() as tmp:
        with TritonServer(make_repository(Path(tmp)), explicit=True,
                          load_models=("tb_linear",)) as srv:
            out = Path(tmp) / "live.json"
            try:
                trtcheck_main(["serve", "--url", srv.http_url, "--model", "tb_linear",
                               "--window-ms", "0,2", "--max-batch", "8", "--load",
                               "burst:16,open:100", "--duration-s", "1", "-o", str(out)])
            except SystemExit as exc:
                if exc.code not in (0, None):
                    raise
        doc = json.loads(out.read_text(encoding="utf-8"))
        (HERE / "live.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n",
                                        encoding="utf-8")


if __name__ == "__main__":
    if "--live" in sys.argv[1:]:
        live()
    else:
        main()
