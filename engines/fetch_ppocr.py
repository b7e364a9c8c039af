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
#: SHA-256 of the pinned wheel and of each model in it (from the download of 2026-12-02
#: and the cache it filled); a cached model with another hash is fetched again.
WHEEL_SHA256 = "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"
MODEL_SHA256 = {
    "det": "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
    "rec": "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b",
    "cls": "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
}


def _repo_on_path() -> None:
    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)


def ppocr_dir() -> Path:
    """Cache folder of the PP-OCR models."""
    _repo_on_path()
    from trtcheck.load.cache import cache_dir

    return cache_dir("models", "ppocr")


def fetch(force: bool = False) -> dict[str, Path]:
    """Download (once) and return ``{"det": path, "rec": path, "cls": path}``.

    Every file is checked against its pinned SHA-256 (the wheel, each model written,
    each cached model reused).

    Raises:
        RuntimeError: pip could not download the package, it lacks a model, or a hash
            differs.
    """
    from filelock import FileLock

    dest = ppocr_dir()
    # several processes may fetch at once (pytest -n auto workers): one downloads
    with FileLock(str(dest / ".fetch.lock")):
        return _fetch(dest, force)


def _fetch(dest: Path, force: bool) -> dict[str, Path]:
    from trtcheck.files import check_sha256, sha256_of

    paths = {k: dest / v for k, v in MODELS.items()}
    if not force and all(p.is_file() and sha256_of(p) == MODEL_SHA256[k]
                         for k, p in paths.items()):
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
        check_sha256(wheels[0], WHEEL_SHA256, PACKAGE)
        with zipfile.ZipFile(wheels[0]) as zf:
            names = zf.namelist()
            for key, fname in MODELS.items():
                member = next((n for n in names if n.endswith("/" + fname)), None)
                if member is None:
                    raise RuntimeError(f"{fname} not found in {wheels[0].name}")
                tmp_out = paths[key].with_suffix(".part")
                tmp_out.write_bytes(zf.read(member))
                check_sha256(tmp_out, MODEL_SHA256[key], fname)
                tmp_out.replace(paths[key])
    return paths


if __name__ == "__main__":
    for p in fetch(force="--force" in sys.argv).values():
        print(p)
