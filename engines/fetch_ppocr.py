#!/usr/bin/env python3
"""Fetch and cache the real PP-OCR ONNX models used by tests and examples.

The models ship inside the public package ``rapidocr-onnxruntime==1.4.4`` (Apache-2.0):
``ch_PP-OCRv4_det_infer.onnx`` (text detection, input ``x`` [N,3,H,W] dynamic),
``ch_PP-OCRv4_rec_infer.onnx`` (recognition) and ``ch_ppocr_mobile_v2.0_cls_infer.onnx``
(a small MobileNet classifier whose two spatial dims share one name). They are downloaded
with ``pip download --no-deps`` and unpacked into the trtcheck cache
(``trtcheck.load.cache.cache_dir("models", "ppocr")``); never committed.

Usage: ``python engines/fetch_ppocr.py`` prints the three paths, one per line.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "rapidocr-onnxruntime==1.4.4"
MODELS = {
    "det": "ch_PP-OCRv4_det_infer.onnx",
    "rec": "ch_PP-OCRv4_rec_infer.onnx",
    "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
}


def ppocr_dir() -> Path:
    """Cache folder of the PP-OCR models."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from trtcheck.load.cache import cache_dir

    return cache_dir("models", "ppocr")


def fetch(force: bool = False) -> dict[str, Path]:
    """Download (once) and return ``{"det": path, "rec": path, "cls": path}``.

    Raises:
        RuntimeError: pip could not download the package or it lacks a model.
    """
    from filelock import FileLock

    dest = ppocr_dir()
    # several processes may fetch at once (pytest -n auto workers): one downloads
    with FileLock(str(dest / ".fetch.lock")):
        return _fetch(dest, force)


def _fetch(dest: Path, force: bool) -> dict[str, Path]:
    paths = {k: dest / v for k, v in MODELS.items()}
    if not force and all(p.is_file() and p.stat().st_size > 0 for p in paths.values()):
        return paths
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                               "--disable-pip-version-check", "-q", PACKAGE, "-d", tmp],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"pip download {PACKAGE} failed: {proc.stderr.strip()[-500:]}")
        wheels = list(Path(tmp).glob("*.whl"))
        if not wheels:
            raise RuntimeError(f"pip download {PACKAGE} produced no wheel")
        with zipfile.ZipFile(wheels[0]) as zf:
            names = zf.namelist()
            for key, fname in MODELS.items():
                member = next((n for n in names if n.endswith("/" + fname)), None)
                if member is None:
                    raise RuntimeError(f"{fname} not found in {wheels[0].name}")
                tmp_out = paths[key].with_suffix(".part")
                tmp_out.write_bytes(zf.read(member))
                tmp_out.replace(paths[key])
    return paths


if __name__ == "__main__":
    for p in fetch(force="--force" in sys.argv).values():
        print(p)
