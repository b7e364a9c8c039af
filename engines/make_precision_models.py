#!/usr/bin/env python3
"""Write the two precision test models into engines/ (or a folder given as argument).

* ``fp16_overflow_layernorm.onnx``: a LayerNorm-like block whose squared deviations reach
  ~1.6e5 with inputs in [0, 1), beyond FP16's largest finite value 65504, at node
  ``square`` (Pow): ``trtcheck precision`` must flag it and point at ``square``.
* ``fp16_safe_layernorm.onnx``: the same graph with small weights: FP16-safe, must pass
  with the default FP16 tolerances.

The builders live in :mod:`trtcheck.load.precision_models` (tests import them from
there). Usage: ``python engines/make_precision_models.py [OUT_DIR]``; prints the paths.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(out_dir: str | None = None) -> list[Path]:
    """Build and save both models; return their paths."""
    import onnx

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from trtcheck.load.precision_models import build_overflow_model, build_safe_model

    folder = Path(out_dir) if out_dir else Path(__file__).resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, builder in (("fp16_overflow_layernorm.onnx", build_overflow_model),
                          ("fp16_safe_layernorm.onnx", build_safe_model)):
        p = folder / name
        onnx.save_model(builder(), str(p))
        paths.append(p)
    return paths


if __name__ == "__main__":
    for p in main(sys.argv[1] if len(sys.argv) > 1 else None):
        print(p)
