"""Modules split along their seams: onnx_inspect and precision still export their former
public names, as the objects of the modules that now hold them (one definition, no
copies); the gate and the metric paths have no re-exporting module left."""

from __future__ import annotations

import importlib.util

import pytest

from trtcheck.inspection.onnx import onnx_compute, onnx_inspect, onnx_lints, onnx_shapes
from trtcheck.measure.precision import output_compare, precision, precision_judge, precision_tolerance
@pytest.mark.parametrize("facade", ["trtcheck.analyze.gate", "trtcheck.analyze.metrics"])
def test_gate_and_metrics_have_no_facade(facade: str) -> None:
    """The gate and the metric paths are imported from the modules that hold each name
    (gate_policy/gate_evaluate, metric_grammar/metric_resolver/metric_checks, units)."""
    assert importlib.util.find_spec(facade) is None


@pytest.mark.parametrize("name,home", [
    ("graph_inputs", onnx_shapes), ("tensor_info", onnx_shapes),
    ("validate_shapes", onnx_shapes), ("concrete_shapes", onnx_shapes),
    ("estimate_compute", onnx_compute), ("lint_model", onnx_lints),
])
def test_onnx_inspect_uses_the_split_modules(name: str, home: object) -> None:
    assert getattr(onnx_inspect, name) is getattr(home, name)


@pytest.mark.parametrize("name,home", [
    ("DEFAULT_TOLERANCES", precision_tolerance), ("PRECISIONS", precision_tolerance),
    ("tolerance_for", precision_tolerance),
    ("polygraphy_elemwise_verdicts", precision_judge),
    ("compare_output", output_compare), ("rounding_floor", output_compare),
])
def test_precision_keeps_its_former_names(name: str, home: object) -> None:
    assert getattr(precision, name) is getattr(home, name)
