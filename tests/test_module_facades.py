"""Modules split along their seams and subsystems as packages: onnx_inspect and precision
still export their former public names, and every subsystem's ``__init__`` exports its
public face, as the objects of the modules that hold them (one definition, no copies)."""

from __future__ import annotations

import importlib.util

import pytest

from trtcheck.inspection.onnx import onnx_compute, onnx_inspect, onnx_lints, onnx_shapes
from trtcheck.measure.precision import output_compare, precision, precision_judge, precision_tolerance
FACES = ["trtcheck.measure.serving", "trtcheck.measure.serving.live", "trtcheck.measure.precision",
         "trtcheck.measure.bench", "trtcheck.analyze.advice", "trtcheck.analyze.gate",
         "trtcheck.analyze.gate.metricpath", "trtcheck.analyze.compare", "trtcheck.analyze.derived",
         "trtcheck.inspection.onnx", "trtcheck.inspection.engine", "trtcheck.export"]


def test_the_metric_paths_have_no_flat_facade() -> None:
    """The metric paths are the package ``trtcheck.analyze.gate.metricpath``; no other
    module re-exports them."""
    assert importlib.util.find_spec("trtcheck.analyze.metrics") is None


@pytest.mark.parametrize("face", FACES)
def test_each_face_exports_the_objects_of_its_modules(face: str) -> None:
    """A subsystem's ``__init__`` names what others import (``__all__``), each the very object
    of the module inside the package that defines it (one definition, no copies)."""
    pkg = importlib.import_module(face)
    assert pkg.__doc__ and pkg.__all__
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        if callable(obj):  # functions and classes name their module; constants do not
            home = obj.__module__
            assert home.startswith(face + "."), (name, home)
            assert getattr(importlib.import_module(home), name) is obj


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
