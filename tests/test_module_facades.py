"""The modules split along their seams still export their former public names, and those
names are the objects of the modules that now hold them (one definition, no copies)."""

from __future__ import annotations

import pytest

from trtcheck.analyze import gate, gate_evaluate, gate_policy
from trtcheck.inspection import onnx_compute, onnx_inspect, onnx_lints, onnx_shapes
from trtcheck.measure import output_compare, precision, precision_judge, precision_tolerance


@pytest.mark.parametrize("name,home", [
    ("Check", gate_evaluate), ("GateReport", gate_evaluate),
    ("environment_differences", gate_evaluate), ("evaluate", gate_evaluate),
    ("Policy", gate_policy), ("PolicyError", gate_policy), ("Rule", gate_policy),
    ("Settings", gate_policy), ("load_policy", gate_policy), ("parse_policy", gate_policy),
])
def test_gate_reexports_policy_and_evaluate(name: str, home: object) -> None:
    assert name in gate.__all__
    assert getattr(gate, name) is getattr(home, name)


def test_gate_all_lists_only_reexports() -> None:
    for name in gate.__all__:
        assert hasattr(gate_policy, name) or hasattr(gate_evaluate, name), name


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
