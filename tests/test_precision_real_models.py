"""Acceptance on real-sized models: demo ResNet-18 and PP-OCR cls, FP32 vs FP16 on ORT CPU.

The PP-OCR model comes from the ``ppocr`` fixture (tests/conftest.py: fetched once into
the cache; the test fails with a clear message if it cannot be fetched, never skips).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trtcheck.measure.precision import compare_onnx_precisions


@pytest.mark.slow
def test_demo_resnet18_fp16_within_default_tolerance(demo_model: Path) -> None:
    r = compare_onnx_precisions(demo_model, ["fp16"], sample_count=2, seed=0, threads=1)
    v = r.variants["fp16"]
    o = v.outputs["output"]
    assert v.passed, [f.message for f in v.findings]
    assert o.shape == [1, 1000]
    assert o.top1_agreement == 1.0 and o.rows_compared == 2
    assert o.cosine_similarity is not None and o.cosine_similarity > 0.9999
    # FP16-sized error, far above Polygraphy's 1e-5 default and below our 1e-2
    assert 1e-4 < o.max_abs_error < 1e-2
    assert v.localization is not None and v.localization.range_overflow_total == 0
    assert v.kept_fp32_nodes == []  # no op of the converter's block list in ResNet-18


@pytest.mark.ppocr
@pytest.mark.slow
def test_ppocr_cls_fp16_within_default_tolerance(ppocr: dict[str, Path]) -> None:
    cls = ppocr["cls"]
    r = compare_onnx_precisions(cls, ["fp16"], shapes={"x": [1, 3, 48, 192]}, sample_count=2,
                                threads=1)
    v = r.variants["fp16"]
    assert v.passed, [f.message for f in v.findings]
    (o,) = v.outputs.values()
    assert o.shape == [1, 2]
    assert o.top1_agreement == 1.0 and o.top5_agreement is None
    assert o.cosine_similarity is not None and o.cosine_similarity > 0.999
    assert o.max_abs_error < 1e-2
    assert r.inputs.shapes == {"x": [1, 3, 48, 192]}
