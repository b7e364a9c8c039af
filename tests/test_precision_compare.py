"""Precision comparison end to end on CPU: ONNX Runtime FP32 vs FP16 ONNX, and any Backend.

The "TensorRT-like" candidate is a fake :class:`~trtcheck.backends.base.Backend` that
computes the test model's LayerNorm block with numpy float16 arithmetic (every op
rounded to FP16, as a strongly-typed FP16 engine does), so the engine path of the
comparison (no ONNX file to mark, backend name ``tensorrt``) is exercised for real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from trtcheck.backends.base import Backend, InferOutput
from trtcheck.errors import InputError
from trtcheck.load.precision_models import OVERFLOW_NODE, build_overflow_model, build_safe_model
from trtcheck.measure.precision.precision import (
    CompareSettings,
    Variant,
    compare_onnx_precisions,
    compare_variants,
    prepare_samples,
)
from trtcheck.results import Results, results_from_json, results_to_json
from trtcheck.results.bench import BackendInfo
from trtcheck.results.inspection import TensorInfo


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import onnx

    d = tmp_path_factory.mktemp("precision-models")
    out = {}
    for name, builder in (("overflow", build_overflow_model), ("safe", build_safe_model)):
        p = d / f"{name}.onnx"
        onnx.save_model(builder(), str(p))
        out[name] = p
    return out


def test_overflow_model_is_flagged_at_the_right_node(models: dict[str, Path]) -> None:
    r = compare_onnx_precisions(models["overflow"], ["fp16"], sample_count=3, seed=0)
    v = r.variants["fp16"]
    assert not r.passed and not v.passed
    codes = [f.code for f in v.findings]
    assert "fp16-range-overflow" in codes
    overflow = next(f for f in v.findings if f.code == "fp16-range-overflow")
    assert overflow.where == f"fp16:{OVERFLOW_NODE}"
    assert "--keep-fp32-nodes square,variance" in (overflow.remedy or "")
    loc = v.localization
    assert loc is not None
    # the FP32 range check: the first activation beyond 65504 is the Pow output
    assert loc.range_overflows[0].node == OVERFLOW_NODE
    assert loc.range_overflows[0].op_type == "Pow"
    assert loc.range_overflows[0].reference_max_abs > 65504
    assert loc.range_overflow_total == 1
    # the layer-wise comparison (all outputs marked in both graphs): error starts there too
    assert loc.tensors_compared >= 8
    assert loc.first_failing[0].node == OVERFLOW_NODE
    assert loc.first_nonfinite[0].node == OVERFLOW_NODE
    assert loc.first_nonfinite[0].candidate_nonfinite_count > 0
    # ONNX Runtime CPU computes the FP16 graph in FP32, so the output itself agrees: the
    # comparison says so instead of pretending the output broke
    assert "ort-cpu-fp16-upcast" in codes
    assert v.outputs["y"].passed


def test_safe_model_passes_with_default_tolerances(models: dict[str, Path]) -> None:
    r = compare_onnx_precisions(models["safe"], ["fp16"], sample_count=3, seed=0)
    v = r.variants["fp16"]
    assert r.passed and v.passed
    assert not [f for f in v.findings if f.severity == "error"]
    o = v.outputs["y"]
    assert o.max_abs_error < 5e-3 and o.cosine_similarity > 0.9999
    assert o.polygraphy_elemwise_passed is True
    assert v.localization is not None and v.localization.range_overflows == []
    assert r.inputs.sample_count == 3 and r.inputs.shapes == {"x": [1, 64]}
    assert r.reference_repeat_max_abs_error == 0.0
    assert r.reference.precision == "fp32"
    assert "keep_io_types=True" in v.built_by
    # the gate reads flat attribute paths, and the record round-trips through JSON
    assert v.min_cosine_similarity == o.cosine_similarity
    back = results_from_json(results_to_json(_results_with(r)))
    assert back.precision is not None
    assert back.precision.variants["fp16"].outputs["y"].cosine_similarity == o.cosine_similarity


def test_keeping_the_overflowing_nodes_in_fp32_fixes_it(models: dict[str, Path]) -> None:
    r = compare_onnx_precisions(models["overflow"], ["fp16"], sample_count=2,
                                keep_fp32_nodes=["square", "variance"])
    v = r.variants["fp16"]
    assert v.passed, [f.message for f in v.findings]
    assert set(v.kept_fp32_nodes) == {"square", "variance"}
    # keeping only the Pow is not enough: its output is cast back to FP16 for ReduceMean
    r = compare_onnx_precisions(models["overflow"], ["fp16"], sample_count=2,
                                keep_fp32_nodes=["square"])
    assert not r.passed


def test_same_inputs_for_every_variant_and_npz_samples(models: dict[str, Path]) -> None:
    x = np.random.default_rng(5).random((2, 64), dtype=np.float32)
    r = compare_onnx_precisions(models["safe"], ["fp16"], array_sets=[("a.npz", {"x": x}),
                                                                     ("b.npz", {"x": x * 0.5})])
    assert r.inputs.source == "npz-dir" and r.inputs.files == ["a.npz", "b.npz"]
    assert r.inputs.shapes == {"x": [2, 64]}
    assert r.variants["fp16"].outputs["y"].element_count == 2 * 2 * 64


def test_npz_missing_an_input_is_bad_input() -> None:
    inputs = [TensorInfo(name="x", dtype="float32", shape=["batch", 64]),
              TensorInfo(name="mask", dtype="int64", shape=["batch", 64])]
    with pytest.raises(InputError, match="has no array for input.*'mask'"):
        prepare_samples(inputs, array_sets=[("in.npz", {"x": np.zeros((1, 64), np.float32)})])


def test_unknown_precision_and_missing_builder(models: dict[str, Path]) -> None:
    with pytest.raises(InputError, match="unknown precision"):
        compare_onnx_precisions(models["safe"], ["fp4"])
    with pytest.raises(InputError, match="cannot build a int8 variant"):
        compare_onnx_precisions(models["safe"], ["int8"])


# ----------------------------------------------------------------- engine-like backends


def _layernorm_fp16(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The test model computed with every op rounded to FP16 (numpy float16 arithmetic)."""
    h = x.astype(np.float16) @ w.astype(np.float16)
    c = h - h.mean(axis=-1, keepdims=True, dtype=np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        c2 = c * c
        var = c2.mean(axis=-1, keepdims=True, dtype=np.float16)
        y = c / np.sqrt(var + np.float16(1e-5))
    return y.astype(np.float32)


class FakeEngine(Backend):
    """A strongly-typed FP16 'engine' of the test model behind the Backend protocol."""

    def __init__(self, model: Any, input_name: str = "x", features: int = 64,
                 precision: str = "fp16", fn: Any = None) -> None:
        from onnx import numpy_helper

        self.w = numpy_helper.to_array(next(i for i in model.graph.initializer
                                            if i.name == "proj.weight"))
        self.input_name, self.features, self.precision = input_name, features, precision
        self.fn = fn or (lambda x: {"y": _layernorm_fp16(x, self.w)})
        self.calls = 0

    @property
    def info(self) -> BackendInfo:
        return BackendInfo(name="tensorrt", version="fake-10.x", device="fake GPU",
                           precision=self.precision)

    def activate(self) -> None:
        self._active = True

    def deactivate(self) -> None:
        self._active = False

    def input_specs(self) -> list[TensorInfo]:
        return [TensorInfo(name=self.input_name, dtype="float32",
                           shape=["batch", self.features])]

    def output_specs(self) -> list[TensorInfo]:
        return [TensorInfo(name="y", dtype="float32", shape=["batch", self.features])]

    def infer(self, feed: dict[str, Any]) -> InferOutput:
        self.calls += 1
        return InferOutput(outputs=self.fn(feed[self.input_name]))


def _compare_with_engine(path: Path, engine: Backend, label: str = "fp16",
                         precision: str = "fp16", bench: bool = False) -> Any:
    from trtcheck.backends.onnxruntime import OnnxRuntimeBackend
    from trtcheck.measure.bench.bench import StopRule

    ref = OnnxRuntimeBackend(path, intra_op_threads=1)
    with ref:
        feeds, info = prepare_samples(ref.input_specs(), None, 3, 0)
    rule = StopRule(warmup_s=0.0, warmup_min_iterations=1, min_duration_s=0.0, min_samples=5,
                    max_duration_s=5.0) if bench else None
    return compare_variants(
        Variant("fp32", "fp32", ref, str(path), "FP32 model"),
        [Variant(label, precision, engine, "model.plan", "fake engine built for the test")],
        str(path), feeds, info,
        CompareSettings(reference_onnx=str(path), threads=1, bench_rule=rule))


def test_engine_backend_that_overflows_fails_with_nonfinite(models: dict[str, Path]) -> None:
    import onnx

    eng = FakeEngine(onnx.load(str(models["overflow"])))
    r = _compare_with_engine(models["overflow"], eng)
    v = r.variants["fp16"]
    assert not v.passed
    assert eng.calls == 3
    assert v.backend.name == "tensorrt"
    o = v.outputs["y"]
    # a true FP16 computation: var = inf, y = c / inf = 0 -> the output collapses
    assert o.cosine_similarity is None or o.cosine_similarity < 0.9
    assert o.outside_tolerance_fraction > 0.5
    codes = {f.code for f in v.findings}
    assert {"precision-out-of-tolerance", "fp16-range-overflow"} <= codes
    assert "ort-cpu-fp16-upcast" not in codes
    loc = v.localization
    assert loc is not None and loc.range_overflows[0].node == OVERFLOW_NODE
    assert loc.first_failing == [] and loc.tensors_compared == 0
    assert any("layer-wise comparison is not available" in n and "tensorrt" in n
               for n in loc.notes)


def test_engine_backend_of_safe_model_passes_with_latency(models: dict[str, Path]) -> None:
    import onnx

    eng = FakeEngine(onnx.load(str(models["safe"])))
    r = _compare_with_engine(models["safe"], eng, bench=True)
    v = r.variants["fp16"]
    assert v.passed, [f.message for f in v.findings]
    assert v.outputs["y"].max_abs_error < 2e-2
    assert v.latency is not None and r.reference_latency is not None
    assert v.latency.bench.batches[0].stats.count >= 5
    assert v.latency.speedup_vs_reference == pytest.approx(
        r.reference_latency.median_ms / v.latency.median_ms)
    back = results_from_json(results_to_json(_results_with(r)))
    assert back.precision == r


def test_int8_engine_judged_by_top1_agreement(models: dict[str, Path]) -> None:
    import onnx

    model = onnx.load(str(models["safe"]))
    w = FakeEngine(model).w

    def flips(x: np.ndarray) -> dict[str, np.ndarray]:
        y = _layernorm_fp16(x, w)
        y[:, [0, 1]] = y[:, [1, 0]]  # permute two classes: top-1 changes on some rows
        y[:, 0] += 10.0  # make class 0 the arg-max everywhere
        return {"y": y}

    eng = FakeEngine(model, precision="int8", fn=flips)
    r = _compare_with_engine(models["safe"], eng, label="int8", precision="int8")
    v = r.variants["int8"]
    assert not v.passed
    assert v.tolerance.min_top1_agreement == 0.99
    assert v.outputs["y"].top1_agreement is not None and v.outputs["y"].top1_agreement < 0.99
    assert v.localization is None or v.localization.range_overflows == []


def test_engine_with_other_input_names_is_bad_input(models: dict[str, Path]) -> None:
    import onnx

    eng = FakeEngine(onnx.load(str(models["safe"])), input_name="images")
    with pytest.raises(InputError, match="different inputs"):
        _compare_with_engine(models["safe"], eng)


def test_engine_with_other_shapes_is_bad_input(models: dict[str, Path]) -> None:
    import onnx

    eng = FakeEngine(onnx.load(str(models["safe"])), features=32)
    with pytest.raises(InputError, match="axis 1 is 64 in the reference"):
        _compare_with_engine(models["safe"], eng)


def _results_with(p: Any) -> Results:
    from trtcheck.measure.bench.runner import new_results

    res = new_results(["trtcheck", "precision"])
    res.precision = p
    return res


def test_onnx_candidate_of_another_precision_is_localised_layer_by_layer(
        models: dict[str, Path], tmp_path: Path) -> None:
    import onnx
    from onnx import numpy_helper

    m = build_safe_model()
    w = next(i for i in m.graph.initializer if i.name == "proj.weight")
    arr = numpy_helper.to_array(w)
    noisy = arr + np.random.default_rng(0).standard_normal(arr.shape).astype(np.float32) * 0.5 * arr.std()
    w.CopyFrom(numpy_helper.from_array(noisy.astype(np.float32), "proj.weight"))
    path = tmp_path / "int8-ish.onnx"
    onnx.save_model(m, str(path))
    r = compare_onnx_precisions(models["safe"], ["int8"], candidates={"int8": str(path)},
                                sample_count=2)
    v = r.variants["int8"]
    assert not v.passed
    assert v.built_by.startswith("given by the user")
    loc = v.localization
    assert loc is not None and loc.range_overflows == []  # no FP16 range check for int8
    assert loc.tensors_compared >= 8
    assert loc.first_failing[0].node == "proj" and loc.first_failing[0].index == 0


def _constant_clamp_model() -> Any:
    """y = (1000 x) / sqrt(var) with var = 1e6 in an unnamed Constant node (like PP-OCR
    det's BatchNorm, running variance 1e7..1e8 on activations of matching scale): the FP16
    converter clamps var to 1e4, so y comes out 10x too large."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    var = numpy_helper.from_array(np.full((4,), 1e6, np.float32), "var")
    nodes = [helper.make_node("Constant", [], ["var"], value=var),  # no name, as p2o exports
             helper.make_node("Sqrt", ["var"], ["std"], name="std"),
             helper.make_node("Mul", ["x", "k"], ["xs"], name="scale_up"),
             helper.make_node("Div", ["xs", "std"], ["y"], name="normalize")]
    g = helper.make_graph(nodes, "clamp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                          initializer=[numpy_helper.from_array(np.array(1000, np.float32), "k")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def test_weights_clamped_by_the_converter_are_named_and_the_remedy_works(tmp_path: Path) -> None:
    import onnx

    path = tmp_path / "clamp.onnx"
    onnx.save_model(_constant_clamp_model(), str(path))
    r = compare_onnx_precisions(path, ["fp16"], sample_count=2)
    v = r.variants["fp16"]
    assert not v.passed
    clamp = next(f for f in v.findings if f.code == "fp16-weight-clamped")
    assert clamp.severity == "warning" and "'var' = 1e+06" in clamp.message
    assert "--keep-fp32-nodes std" in (clamp.remedy or "")
    # output is off by sqrt(1e6 / 1e4) = 10x; the localisation points at the Sqrt
    y = v.outputs["y"]
    assert y.max_rel_error == pytest.approx(9.0, rel=1e-2)
    assert y.rel_l2_error == pytest.approx(9.0, rel=1e-2)
    assert y.cosine_similarity == pytest.approx(1.0)  # a pure scale error: cosine is blind
    assert any("relative L2 error" in f for f in y.failures)
    assert v.localization is not None
    assert v.localization.first_failing[0].node == "std"
    r = compare_onnx_precisions(path, ["fp16"], sample_count=2, keep_fp32_nodes=["std"])
    v = r.variants["fp16"]
    assert v.passed, [f.message for f in v.findings]
    assert not [f for f in v.findings if f.code == "fp16-weight-clamped"]


def test_odd_node_and_tensor_names_are_quoted_and_localised(tmp_path: Path) -> None:
    """Node names with shell metacharacters are shell-quoted in the suggested command,
    and tensor names with Polygraphy wildcard characters ('[', '*') do not stop the
    layer-by-layer localisation."""
    import shlex

    import onnx

    from trtcheck.load.precision_models import build_overflow_model

    m = build_overflow_model()
    node_names = {"square": "sq;rm -rf x|[a]*", "variance": "v ar$(id)"}
    tensors = {}
    for node in m.graph.node:
        if node.name in node_names:
            node.name = node_names[node.name]
        for i, o in enumerate(node.output):
            if o != "y":
                tensors[o] = f"{o}[0]*"
                node.output[i] = tensors[o]
    for node in m.graph.node:
        for i, x in enumerate(node.input):
            node.input[i] = tensors.get(x, x)
    p = tmp_path / "odd.onnx"
    onnx.save_model(m, str(p))
    r = compare_onnx_precisions(p, ["fp16"], sample_count=2, seed=0)
    v = r.variants["fp16"]
    overflow = next(f for f in v.findings if f.code == "fp16-range-overflow")
    command = overflow.remedy.split("(--keep-fp32-nodes ", 1)[1].split("), or", 1)[0]
    assert shlex.split(command) == ["sq;rm -rf x|[a]*,v ar$(id)"]
    assert v.localization is not None


# ----------------------------------------------------------------- non-finite candidates


def test_inf_output_has_infinite_errors_and_fails_a_tolerance_only_gate(
        models: dict[str, Path], tmp_path: Path, recwarn: pytest.WarningsRecorder) -> None:
    import onnx

    from trtcheck.analyze.gate.gate_evaluate import evaluate
    from trtcheck.analyze.gate.gate_policy import parse_policy

    eng = FakeEngine(onnx.load(str(models["safe"])),
                     fn=lambda x: {"y": np.full((x.shape[0], 64), np.inf, np.float32)})
    r = _compare_with_engine(models["safe"], eng)
    v = r.variants["fp16"]
    o = v.outputs["y"]
    assert not r.passed and not v.passed
    assert o.max_abs_error == np.inf and o.mean_abs_error == np.inf
    assert o.p99_abs_error == np.inf and o.rel_l2_error == np.inf
    assert np.isnan(o.cosine_similarity) and np.isnan(v.min_cosine_similarity)
    assert v.max_abs_error == np.inf and v.nonfinite_count == o.element_count
    assert "precision-nonfinite" in {f.code for f in v.findings}
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    res = _results_with(r)
    for rule in ("precision.variants.fp16.max_abs_error <= 0.05",
                 "precision.variants.fp16.outputs.y.p99_abs_error <= 0.05",
                 "precision.variants.fp16.min_cosine_similarity >= 0.99",
                 "max(precision.variants[*].min_cosine_similarity) >= 0.5",
                 "min(precision.variants[*].min_cosine_similarity) >= 0.5"):
        rep = evaluate(parse_policy(f"budgets:\n  - {rule}\n"), res)
        assert rep.exit_code == 1, (rule, [c.message for c in rep.checks])
    back = results_from_json(results_to_json(res))
    assert back.precision.variants["fp16"].max_abs_error == np.inf


def test_one_nan_among_many_elements_still_makes_the_max_error_infinite() -> None:
    from trtcheck.measure.precision.precision import compare_output, tolerance_for

    ref = [np.ones((1, 1000), np.float32)]
    cand = [np.ones((1, 1000), np.float32)]
    cand[0][0, 7] = np.nan
    o = compare_output("y", ref, cand, tolerance_for("fp16"), None, "fp16")
    assert o.max_abs_error == np.inf and o.mean_abs_error == np.inf
    assert o.p99_abs_error == 0.0  # one element in 1000 is beyond the 99th percentile
    assert not o.passed and "NaN" in o.failures[0]


def test_fp32_model_passed_as_the_int8_candidate_is_an_error_finding(
        models: dict[str, Path]) -> None:
    r = compare_onnx_precisions(models["safe"], ["int8"], sample_count=2,
                                candidates={"int8": str(models["safe"])})
    v = r.variants["int8"]
    f = next(f for f in v.findings if f.code == "precision-not-in-candidate")
    assert f.severity == "error" and "INT8 was requested" in f.message
    assert not v.passed and not r.passed
    # the FP16 model trtcheck builds does hold FP16 tensors: no such finding
    r16 = compare_onnx_precisions(models["safe"], ["fp16"], sample_count=2)
    assert "precision-not-in-candidate" not in {f.code for f in r16.variants["fp16"].findings}


def test_our_conversion_rejected_by_the_runtime_is_not_blamed_on_the_model(
        models: dict[str, Path], tmp_path: Path) -> None:
    """A converted graph with an FP16/FP32 type clash (what a converter gets wrong) that
    ONNX Runtime refuses: exit 3 naming the conversion, not "check the model"."""
    import onnx
    from onnx import TensorProto, helper

    from trtcheck.backends.onnxruntime import OnnxRuntimeBackend
    from trtcheck.errors import EnvironmentProblem

    g = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["x16"], to=TensorProto.FLOAT16),
         helper.make_node("Add", ["x16", "x"], ["y"])], "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 64])])
    bad = tmp_path / "converted.fp16.onnx"
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save_model(m, str(bad))
    ref = OnnxRuntimeBackend(str(models["safe"]), intra_op_threads=1)
    with ref:
        feeds, info = prepare_samples(ref.input_specs(), None, 1, 0)
    variant = Variant("fp16", "fp16", OnnxRuntimeBackend(str(bad), precision="fp16"), str(bad),
                      "onnxconverter-common float16 with its default op block list",
                      onnx_path=str(bad), built_by_trtcheck=True)
    with pytest.raises(EnvironmentProblem, match="trtcheck's own FP16 conversion") as exc:
        compare_variants(Variant("fp32", "fp32", ref, str(models["safe"]), "FP32"), [variant],
                         str(models["safe"]), feeds, info, CompareSettings(localize=False))
    assert "--candidate fp16=PATH" in (exc.value.hint or "")
    given = Variant("fp16", "fp16", OnnxRuntimeBackend(str(bad), precision="fp16"), str(bad),
                    "given by the user", onnx_path=str(bad))
    with pytest.raises(InputError):  # the user's own file: bad input, as before
        compare_variants(Variant("fp32", "fp32", ref, str(models["safe"]), "FP32"), [given],
                         str(models["safe"]), feeds, info, CompareSettings(localize=False))
