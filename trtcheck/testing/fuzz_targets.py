"""Property-based fuzzing of every parser trtcheck owns: one target per parser, each a
Hypothesis strategy of inputs and the parse call, with the error types the parser may
raise (anything else is a crash).

Shared by ``tests/test_parser_fuzz.py`` (a CI-sized run) and
``benchmarks/fuzz_parsers.py`` (longer runs with recorded counts). Strategies mix three
kinds of input so both the surface and the depths of a parser are reached: random bytes
or text; structured documents built from the parser's own vocabulary (keys, units,
separators); and single-field mutations of a real, valid document.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from hypothesis import strategies as st

from trtcheck.errors import TrtcheckError

REPO = Path(__file__).resolve().parents[2]  # the source checkout (trtcheck/testing/ is two down)
EXPORTS = REPO / "tests" / "data" / "trtexec-exports" / "resnet18-a100-fp16"


@dataclass(frozen=True)
class Target:
    """One parser under fuzzing.

    Attributes:
        name: short id (``plan-header``).
        strategy: inputs.
        call: runs the parser on one input.
        allowed: the exception types it may raise (the project's own errors).
    """

    name: str
    strategy: st.SearchStrategy[Any]
    call: Callable[[Any], Any]
    allowed: tuple[type[BaseException], ...] = (TrtcheckError,)


# --- building blocks ---------------------------------------------------------------------

_SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, 5e-324, 3.5, -1.5)
_SPECIAL_TEXT = ("\ud800", "NaN", "Infinity", "-1", "1e400", "", "\x00", "$\\frac$", "a[0]*",
                 "\x1b[2J", "\u202e", "9" * 50)
_BIG_INTS = (2**63, 2**64, -2**63 - 1, 2**70, 10**30, -1, 0)


def json_from_bytes(data: bytes, keys: tuple[str, ...]) -> Any:
    """A JSON value built from ``data`` read as a little program (one byte an opcode:
    scalar kinds, lists and dicts of the next values, dict keys from ``keys``). Random
    bytes are cheap for Hypothesis to make and to shrink, and this turns them into deep,
    odd documents in a parser's vocabulary."""
    pos = 0

    def byte() -> int:
        nonlocal pos
        if pos >= len(data):
            return 0
        pos += 1
        return data[pos - 1]

    def value(depth: int) -> Any:
        op = byte() % 10
        if op == 0 or depth > 8 or pos >= len(data):
            return None if op == 0 else byte()
        if op == 1:
            return bool(byte() & 1)
        if op == 2:
            return byte() - 64
        if op == 3:
            return _BIG_INTS[byte() % len(_BIG_INTS)]
        if op == 4:
            return _SPECIAL_FLOATS[byte() % len(_SPECIAL_FLOATS)]
        if op == 5:
            return _SPECIAL_TEXT[byte() % len(_SPECIAL_TEXT)]
        if op == 6:
            n = byte() % 6
            return data[pos:pos + n].decode("latin-1") if n else keys[byte() % len(keys)]
        if op == 7:
            return keys[byte() % len(keys)]
        if op == 8:
            return [value(depth + 1) for _ in range(byte() % 5)]
        return {keys[byte() % len(keys)]: value(depth + 1) for _ in range(byte() % 5)}

    return value(0)


def json_values(keys: list[str] | None = None, max_size: int = 80) -> st.SearchStrategy[Any]:
    """Nested JSON values whose dict keys come from ``keys`` (a parser's vocabulary)."""
    vocab = tuple(keys or ["a", "b"])
    return st.binary(min_size=1, max_size=max_size).map(lambda b: json_from_bytes(b, vocab))


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:4]):  # enough to reach every kind of element
            out += _paths(v, prefix + (i,))
    return out


def mutations(valid: Any, keys: list[str]) -> st.SearchStrategy[Any]:
    """``valid`` with one value (at any depth) replaced by a random JSON value, or one key
    deleted."""
    paths = _paths(valid)
    text = json.dumps(valid)
    vocab = tuple(keys)

    def mutate(args: tuple[int, bool, bytes]) -> Any:
        index, delete, data = args
        path = paths[index % len(paths)]
        doc = json.loads(text)  # a fresh copy
        if not path:
            return json_from_bytes(data, vocab)
        node = doc
        for k in path[:-1]:
            node = node[k]
        if delete and isinstance(node, dict):
            node.pop(path[-1], None)
        else:
            node[path[-1]] = json_from_bytes(data, vocab)
        return doc

    return st.tuples(st.integers(0, len(paths) - 1), st.booleans(),
                     st.binary(min_size=1, max_size=24)).map(mutate)


# --- plan header ----------------------------------------------------------------------

def _plan(version: tuple[int, int, int, int], length: int, body: bytes, magic: bytes) -> bytes:
    return magic + b"\0" * 12 + struct.pack("<Q", length % 2**64) + bytes(version) + body


def plan_bytes() -> st.SearchStrategy[bytes]:
    """Random bytes, and headers with every field drawn (magic, length, version, body,
    prefixes)."""
    byte = st.integers(0, 255)
    header = st.builds(
        _plan, st.tuples(byte, byte, byte, byte),
        st.integers(0, 2**64 - 1) | st.integers(0, 5000),
        st.binary(max_size=600) | st.just(b"\0" * 4068) | st.just(b"\n\r\n" * 100),
        st.sampled_from([b"ftrt", b"vtrt", b"ptrt", b"FTRT", b"\0\0\0\0"]))
    prefixed = st.builds(lambda p, h: p + h, st.binary(max_size=40)
                         | st.builds(lambda j: struct.pack("<i", len(j)) + j,
                                     st.text(max_size=30).map(
                                         lambda t: json.dumps({t: 1}).encode())), header)
    return st.binary(max_size=400) | header | prefixed


def _plan_call(data: bytes) -> Any:
    from trtcheck.load.plan_header import Runtime, plan_info_from_bytes

    runtimes = {"tensorrt": Runtime("tensorrt", "10.8.0.43", "tensorrt-cu12"),
                "tensorrt_rtx": Runtime("tensorrt_rtx", "1.7.1.116", "tensorrt-rtx-cu13")}
    info = plan_info_from_bytes(data, runtimes=runtimes)
    info.model_dump_json()
    return info


LOAD_LOG_WORDS = ["expecting library version", "got", "0.0.0", "10.8.0.43", "magicTag",
                  "(1825 != 1953657958)", "(", "!=", ")", "Current Version:",
                  "Serialized Engine Version:", "expecting compute", "got compute",
                  "cannot run on this GPU, which has compute capability", "out of memory",
                  "9" * 30, "\n", " "]


def _log_call(text: str) -> Any:
    from trtcheck.load.plan_header import explain_load_log, load_failure_error

    explain_load_log(text)
    return load_failure_error(text.splitlines(), "m.plan")


# --- trtexec exports and engine-inspector JSON ------------------------------------------

EXPORT_KEYS = ["Layers", "Bindings", "I/O Tensors", "Name", "LayerType", "Inputs", "Outputs",
               "Dimensions", "Shape", "Format/Datatype", "Datatype", "Format", "Location",
               "Mode", "Weights", "Bias", "Count", "Type", "TacticName", "TacticValue",
               "Origin", "Metadata", "count", "name", "averageMs", "timeMs", "computeMs",
               "startEnqMs", "endEnqMs", "h2dMs", "d2hMs"]


def _graph_doc() -> Any:
    return json.loads(next(EXPORTS.glob("*.graph.json")).read_text())


def _small_graph_doc() -> Any:
    doc = _graph_doc()
    return {"Layers": doc["Layers"][:3], "Bindings": doc.get("Bindings", [])}


def _layer_info_call(doc: Any) -> Any:
    from trtcheck.inspection.engine import lint_engine
    from trtcheck.load.engine_json import parse_layer_info

    insp = parse_layer_info(doc, "g.json")
    lint_engine(insp)
    return insp.model_dump_json()


def _profile_doc() -> Any:
    return json.loads(next(EXPORTS.glob("*.profile.json")).read_text())[:4]


def _profile_call(doc: Any) -> Any:
    from trtcheck.inspection.engine import parse_profile

    return parse_profile(doc, "p.json")


def _timing_doc() -> Any:
    return json.loads(next(EXPORTS.glob("*.timing.json")).read_text())[:3]


def _timing_call(doc: Any) -> Any:
    from trtcheck.inspection.engine import timing_from_times

    t = timing_from_times(doc, "t.json")
    t.model_dump_json()
    return t


def _json_text_call(text: str) -> Any:
    from trtcheck.safe_io import parse_json_text

    return parse_json_text(text, "x.json", None, strict=False)


JSON_TEXT = (st.text(max_size=60)
             | st.integers(1, 3000).map(lambda n: "[" * n + "]" * n)
             | st.integers(1, 6000).map(lambda n: "[" + "9" * n + "]")
             | json_values(EXPORT_KEYS).map(lambda v: json.dumps(v, allow_nan=True)))


# --- results --------------------------------------------------------------------------

RESULT_KEYS = ["schema_version", "bench", "batches", "batch_size", "samples_ms", "stats",
               "serve", "configs", "repeats", "latencies_ms", "parts_ms", "median_repeat",
               "model_path", "label", "environment", "components_ms"]


def _results_doc() -> Any:
    from trtcheck.results import results_to_json
    from trtcheck.testing import synthetic_results as g

    doc = json.loads(results_to_json(g.results({1: 2.0, 4: 3.0}, n=4, seed=1)))
    return doc


def _results_call(doc: Any) -> Any:
    from trtcheck.results import results_from_json, results_to_json

    text = doc if isinstance(doc, str) else json.dumps(doc, allow_nan=True)
    r = results_from_json(text, "r.json")
    return results_to_json(r)


# --- gate policies --------------------------------------------------------------------

POLICY_WORDS = ["version: 1\n", "settings:\n", "budgets:\n", "baseline:\n", "  - ", "    ",
                "metric: ", "max: ", "min: ", "bench.batch[8].p99_ms", "bench.batch[*]",
                "serve.configs[window_ms=2].p99_ms", " <= ", " >= ", "5 ms", "800 us",
                "1e308 ms", "10%", "&a ", "*a", "[", "]", "{", "}", ": ", "\n", "'", '"',
                "\x07", "\t", "- bench.batch[1].median_ms < 1 s\n", "0x" + "f" * 300,
                "9" * 40, "nan", ".inf", "tolerance: ", "confidence: 0.95", "on_missing: "]


def _policy_call(data: bytes) -> Any:
    from trtcheck.analyze.gate import parse_policy

    return parse_policy(data, "p.yaml")


_METRICS = ["bench.batch[1].p99_ms", "bench.batch[*].throughput_samples_per_s",
            "bench.batch[8].p99.9_ms", "inspection.parameter_bytes", "len(bench.batch[*])",
            "serve.configs[window_ms=2].p99_ms", "engine.layers[precision=fp32]",
            "precision.variants[fp16].max_abs_error", "bench[x].batch[1].median_ms",
            "max(bench.batch[*].p99_ms)", "no.such.metric", "bench.batch[1]"]
_OPS = ["<=", "<", ">=", ">", "==", "!=", "=<", ""]
_VALUES = ["5", "5 ms", "800 us", "1.5 s", "100 MiB", "1500 samples/s", "-1", "0", "nan",
          "1e308 ms", "5%", "abc", "10 parsecs", "true", ""]


def _policy_text(rules: list[tuple[int, int, int]], baseline: list[tuple[int, int]],
                 settings: list[tuple[int, int]]) -> bytes:
    """A block-style policy from drawn rule parts (metric, op, value indices)."""
    lines = ["version: 1"]
    if settings:
        keys = ["confidence", "resamples", "seed", "on_missing", "direction", "tolerance"]
        vals = ["0.95", "0", "-1", "1e9", "warn", "fail", "2", "x", "1.5"]
        lines.append("settings:")
        lines += [f"  {keys[k % len(keys)]}: {vals[v % len(vals)]}" for k, v in settings]
    if rules:
        lines.append("budgets:")
        lines += [f"  - {_METRICS[m % len(_METRICS)]} {_OPS[o % len(_OPS)]} "
                  f"{_VALUES[v % len(_VALUES)]}" for m, o, v in rules]
    if baseline:
        lines.append("baseline:")
        for m, v in baseline:
            lines += [f"  - metric: {_METRICS[m % len(_METRICS)]}",
                      f"    max_regression: {_VALUES[v % len(_VALUES)]}"]
    return ("\n".join(lines) + "\n").encode()


_IDX = st.integers(0, 50)
POLICY_BYTES = (st.binary(max_size=200)
                | st.lists(st.sampled_from(POLICY_WORDS), max_size=30).map(
                    lambda ws: "".join(ws).encode("utf-8", "surrogatepass"))
                | st.builds(_policy_text, st.lists(st.tuples(_IDX, _IDX, _IDX), max_size=4),
                            st.lists(st.tuples(_IDX, _IDX), max_size=2),
                            st.lists(st.tuples(_IDX, _IDX), max_size=2)))


# --- traces, shapes, curves, load specs, metric paths ---------------------------------

TRACE_TEXT = (st.text(max_size=80)
              | st.lists(st.floats(allow_nan=True, allow_infinity=True)
                         | st.integers(-2**80, 2**80), max_size=12).map(
                  lambda v: "\n".join(map(str, v)))
              | st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=12).map(
                  json.dumps)
              | JSON_TEXT)


def _trace_call(text: str) -> Any:
    from trtcheck.traces import arrival_times_from_text

    return arrival_times_from_text(text, "t.txt")


SHAPE_TEXT = st.lists(st.sampled_from(["x", ":", "1", "3", "224", "0", "-1", ",", "in:put",
                                       "99999999999999999999", " ", "x:1x3", "1.5", ""]),
                      max_size=12).map("".join) | st.text(max_size=30)


def _shapes_call(text: str) -> Any:
    from trtcheck.load.shapes import parse_shapes, resolve_shapes
    from trtcheck.results.inspection import TensorInfo

    shapes = parse_shapes(text)
    inputs = [TensorInfo(name=n, dtype="float32", shape=["b"] + [None] * (len(d) - 1))
              for n, d in shapes.items()]
    return resolve_shapes(inputs, shapes, 2)


CURVE_TEXT = st.lists(st.sampled_from(["1", ":", "0.29", ",", "8", "1.02", "1e308", "nan",
                                       "-1", "0", "100000000000000000000", " ", "inf", "2"]),
                      max_size=14).map("".join) | st.text(max_size=30)


def _curve_call(text: str) -> Any:
    from trtcheck.analyze.advice import fit_linear, parse_curve_text
    from trtcheck.backends.synthetic import parse_curve

    try:
        parse_curve(text)
    except TrtcheckError:
        pass
    return fit_linear(parse_curve_text(text))


LOAD_TEXT = st.lists(st.sampled_from(["burst", "closed", "open", "trace", ":", "64", "1e308",
                                      "0", "-3", "poisson", "constant", "nan", "inf",
                                      "100000000", "3000", "1.5"]), max_size=8).map("".join) \
    | st.text(max_size=20)


def _load_call(text: str) -> Any:
    from trtcheck.measure.serving import parse_load

    if text.startswith("trace:"):  # a file name: the trace reader is fuzzed on its own
        return None
    return parse_load(text, 2.0)


METRIC_TEXT = st.lists(st.sampled_from(["bench", ".", "batch", "[", "]", "8", "*", "p99_ms",
                                        "serve", "configs", "window_ms=2", ",", "=", "len(",
                                        "max(", ")", "p99.9_ms", "median_ms", "engine",
                                        "layers", "precision=fp32", "'", "\\", " ", "-1",
                                        "99999999999999999999", "throughput_samples_per_s"]),
                       max_size=14).map("".join) | st.text(max_size=30)

_SAMPLE_RESULTS: list[Any] = []


def _metric_call(text: str) -> Any:
    from trtcheck.analyze.gate.metricpath import parse_path
    from trtcheck.analyze.gate.metricpath import evaluate_path

    if not _SAMPLE_RESULTS:
        from trtcheck.testing import synthetic_results as g

        _SAMPLE_RESULTS.append(g.results({1: 2.0, 8: 5.0}, n=20, seed=3))
    return evaluate_path(parse_path(text), _SAMPLE_RESULTS[0])


def _metric_errors() -> tuple[type[BaseException], ...]:
    from trtcheck.analyze.gate.metricpath import MetricMissing, MetricPathError

    return (TrtcheckError, MetricPathError, MetricMissing)


BATCH_TEXT = st.text(alphabet="0123456789,- x", max_size=20) | st.text(max_size=10)


def _batch_call(text: str) -> Any:
    from trtcheck.cli.common import BATCH_LIST

    option = click.Option(["--batch"], type=BATCH_LIST)
    return BATCH_LIST.convert(text, option, None)


def _finite(x: float) -> bool:
    return math.isfinite(x)


# --- live answers (KServe v2 / Triton 2.51) -------------------------------------------

TRITON_ANSWERS = REPO / "tests" / "data" / "triton-2.51"
LIVE_KEYS = ["name", "version", "versions", "platform", "backend", "max_batch_size",
             "input", "output", "inputs", "outputs", "dims", "shape", "data_type",
             "datatype", "dynamic_batching", "max_queue_delay_microseconds",
             "preferred_batch_size", "default_queue_policy", "max_queue_size",
             "instance_group", "count", "kind", "gpus", "parameters", "string_value",
             "model_stats", "inference_count", "execution_count", "inference_stats",
             "success", "fail", "queue", "compute_input", "compute_infer", "compute_output",
             "batch_stats", "batch_size", "ns", "last_inference", "extensions", "config",
             "model_name", "model_version", "binary_data_size", "KIND_CPU", "KIND_GPU",
             "TYPE_FP32", "FP32", "BYTES", "INT64", "-1", "4"]


def _answer(name: str) -> Any:
    return json.loads((TRITON_ANSWERS / f"{name}.json").read_text())


def _live_errors() -> tuple[type[BaseException], ...]:
    from trtcheck.results.kserve_answers import BadAnswer, BadResponse

    return (TrtcheckError, BadAnswer, BadResponse)


def _live_config_call(doc: Any) -> Any:
    """Every reader of a model configuration: the boundary check, then what the live
    measurement and the exports read from it (each also checks a raw one itself)."""
    from trtcheck.export.settings import spec_from_triton_config
    from trtcheck.measure.serving.live.live import instances_of, override_config, window_us_of
    from trtcheck.results.kserve_answers import check_model_config

    if isinstance(doc, dict) and isinstance(doc.get("config"), dict):
        doc = doc["config"]  # gRPC's wrapper
    try:
        window_us_of(doc)  # raw: checks it first
    except TrtcheckError:
        pass
    cfg = check_model_config(doc)
    window_us_of(cfg)
    instances_of(cfg)
    mb = int(cfg.get("max_batch_size", 0))
    override_config(cfg, window_us=500.0, max_batch=max(1, mb // 2), instances=2,
                    preferred=[1, 2, 64])
    try:
        spec_from_triton_config(cfg)
    except TrtcheckError:
        pass
    return json.dumps(cfg)


def _live_metadata_call(doc: Any) -> Any:
    from trtcheck.measure.serving.live.live import request_tensors
    from trtcheck.results.kserve_answers import check_model_metadata

    md = check_model_metadata(doc)
    return request_tensors(md, _answer("model_config"), seed=0)[2]


def _live_stats_call(doc: Any) -> Any:
    """A statistics answer against the real one read before it, both ways round."""
    from trtcheck.measure.serving.live.live import stats_delta
    from trtcheck.results.kserve_answers import BadAnswer, check_model_stats

    entries = check_model_stats(doc)
    [real] = check_model_stats(_answer("model_stats"))
    out = []
    for e in entries[:2]:
        for before, after in ((real, e), (e, real), ({}, e)):
            try:
                out.append(stats_delta(before, after).model_dump_json())
            except BadAnswer:
                pass
    return out


def _live_server_call(doc: Any) -> Any:
    from trtcheck.measure.serving.live.live_faults import missing_extension
    from trtcheck.results.kserve_answers import check_server_metadata

    md = check_server_metadata(doc)
    return missing_extension(md, "http://h:1", sweep=True)


def _infer_body(doc: Any) -> tuple[bytes, int | None]:
    if isinstance(doc, (bytes, bytearray)):  # a mutated binary answer
        hl = int((TRITON_ANSWERS / "infer_binary.header_length").read_text())
        return bytes(doc), hl if len(doc) >= hl else len(doc) // 2
    return json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass"), None


def _live_infer_call(doc: Any) -> Any:
    """An inference answer through the HTTP load path's parser and the output check."""
    from trtcheck.measure.serving.live.kserve_http import InferHttpError, parse_infer_response
    from trtcheck.measure.serving.live.live import TensorSpec, check_outputs

    body, hl = _infer_body(doc)
    try:
        result = parse_infer_response(200, body, hl)
    except InferHttpError:  # pragma: no cover - 200 never is
        raise
    check_outputs(result, [TensorSpec("OUTPUT0", "FP32", (1, 4))])
    return result.get_response()


def _binary_mutations() -> st.SearchStrategy[bytes]:
    real = (TRITON_ANSWERS / "infer_binary.bin").read_bytes()

    def mutate(args: tuple[int, int, bytes]) -> bytes:
        at, cut, data = args
        at %= len(real) + 1
        return real[:at] + data + real[at + cut:]

    return st.tuples(st.integers(0, len(real)), st.integers(0, 40),
                     st.binary(max_size=24)).map(mutate)


def targets() -> list[Target]:
    """Every fuzzed parser."""
    graph, profile, timing, results = (_small_graph_doc(), _profile_doc(), _timing_doc(),
                                       _results_doc())
    return [
        Target("plan-header", plan_bytes(), _plan_call),
        Target("load-log", st.lists(st.sampled_from(LOAD_LOG_WORDS), max_size=12).map("".join)
               | st.text(max_size=60), _log_call),
        Target("layer-info", json_values(EXPORT_KEYS) | mutations(graph, EXPORT_KEYS),
               _layer_info_call),
        Target("trtexec-profile", json_values(EXPORT_KEYS) | mutations(profile, EXPORT_KEYS),
               _profile_call),
        Target("trtexec-times", json_values(EXPORT_KEYS) | mutations(timing, EXPORT_KEYS),
               _timing_call),
        Target("json-text", JSON_TEXT, _json_text_call),
        Target("results", mutations(results, RESULT_KEYS) | json_values(RESULT_KEYS)
               | JSON_TEXT, _results_call),
        Target("gate-policy", POLICY_BYTES, _policy_call),
        Target("trace", TRACE_TEXT, _trace_call),
        Target("shapes", SHAPE_TEXT, _shapes_call),
        Target("curve", CURVE_TEXT, _curve_call),
        Target("load-spec", LOAD_TEXT, _load_call),
        Target("metric-path", METRIC_TEXT, _metric_call, _metric_errors()),
        Target("batch-list", BATCH_TEXT, _batch_call, (TrtcheckError, click.UsageError)),
        Target("live-config", mutations(_answer("model_config"), LIVE_KEYS)
               | mutations(_answer("grpc_model_config"), LIVE_KEYS)
               | json_values(LIVE_KEYS), _live_config_call, _live_errors()),
        Target("live-metadata", mutations(_answer("model_metadata"), LIVE_KEYS)
               | mutations(_answer("grpc_model_metadata"), LIVE_KEYS)
               | json_values(LIVE_KEYS), _live_metadata_call, _live_errors()),
        Target("live-stats", mutations(_answer("model_stats"), LIVE_KEYS)
               | mutations(_answer("grpc_model_stats"), LIVE_KEYS)
               | json_values(LIVE_KEYS), _live_stats_call, _live_errors()),
        Target("live-server", mutations(_answer("server_metadata"), LIVE_KEYS)
               | json_values(LIVE_KEYS), _live_server_call, _live_errors()),
        Target("live-infer", mutations(_answer("infer_json"), LIVE_KEYS)
               | _binary_mutations() | json_values(LIVE_KEYS), _live_infer_call,
               _live_errors()),
    ]
