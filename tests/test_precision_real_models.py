"""Acceptance on real-sized models: demo ResNet-18 and PP-OCR cls, FP32 vs FP16 on ORT CPU.

The PP-OCR model comes from the ``ppocr`` fixture (tests/conftest.py: fetched once into
the cache; the test fails with a clear message if it cannot be fetched, never skips).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trtcheck.measure.precision.precision import compare_onnx_precisions


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


@pytest.mark.ppocr
@pytest.mark.slow
def test_ppocr_det_fp16_conversion_breaks_at_the_clamped_batchnorm(ppocr: dict[str, Path]) -> None:
    r = compare_onnx_precisions(ppocr["det"], ["fp16"], shapes={"x": [1, 3, 320, 320]},
                                sample_count=1, threads=1)
    v = r.variants["fp16"]
    assert not v.passed
    (o,) = v.outputs.values()
    assert o.cosine_similarity is not None and o.cosine_similarity < 0.5
    clamp = next(f for f in v.findings if f.code == "fp16-weight-clamped")
    assert "batch_norm_0.w_2" in clamp.message
    assert "--keep-fp32-nodes p2o.BatchNormalization.1" in (clamp.remedy or "")
    loc = v.localization
    assert loc is not None and loc.range_overflow_total == 0
    assert loc.first_failing[0].node == "p2o.BatchNormalization.1"
    assert set(v.kept_fp32_nodes) >= {"p2o.Resize.0"}  # Resize stays FP32 (block list)
