"""Validated answers of a KServe v2 (Triton) server: the types every answer passes through
before trtcheck uses one of its values.

A live server (``trtcheck serve --url``, ``trtcheck tune``) is not trusted: each answer is
checked here at the boundary, field by field (types, ranges against sane bounds), and a
bad one becomes :class:`BadAnswer` naming the field, which the caller turns into one
line naming the endpoint (:func:`trtcheck.measure.serving.live.kserve.KServeClient` raises
:class:`~trtcheck.errors.EnvironmentProblem`, exit 3). The answers are Triton 2.x's
(``tests/data/triton-2.51/`` holds real ones, HTTP and gRPC JSON):

========================  ====================================  ==========================
answer                    endpoint                              checked by
========================  ====================================  ==========================
server metadata           ``GET /v2``                           :func:`check_server_metadata`
model metadata            ``GET /v2/models/NAME[/versions/V]``  :func:`check_model_metadata`
model configuration       ``GET /v2/models/NAME/config``        :func:`check_model_config`
statistics                ``GET /v2/models/NAME/stats``         :func:`check_model_stats`
two statistics reads      before and after one run              :func:`check_stats_pair`
inference answers         ``POST /v2/models/NAME/infer``        :class:`BadResponse` (see
                                                                ``kserve_http`` and ``live``)
========================  ====================================  ==========================

gRPC's JSON carries int64 fields as decimal strings; they are read as integers here, so
both protocols give the same values. The checkers return plain JSON (``dict``) with every
checked field normalised (ints where Triton has integers) and every other field kept as
the server sent it: a configuration is sent back to the server as an override, so
nothing it holds is dropped.

Bounds (a value outside is refused, never clipped): ``max_batch_size`` 0 to
:data:`MAX_BATCH_SIZE` (Triton's int32); a dimension -1 (variable) to
:data:`MAX_DIM`; at most :data:`MAX_RANK` dimensions; a tensor's fixed dimensions
multiply to at most :data:`MAX_TENSOR_ELEMENTS`; counts and nanoseconds 0 to 2^63 - 1;
an instance group's ``count`` 0 to :data:`MAX_INSTANCES`; a batching window 0 to
:data:`MAX_QUEUE_DELAY_US`; names 1 to 512 characters; at most :data:`MAX_LIST` entries
in any list (tensors, batch sizes, extensions).
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import (
    BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator,
)

#: Largest ``max_batch_size`` (and batch size in statistics) accepted: Triton's int32.
MAX_BATCH_SIZE = 2**31 - 1
#: Largest tensor dimension accepted (``-1``: variable).
MAX_DIM = 2**31 - 1
#: Most dimensions of one tensor.
MAX_RANK = 16
#: Most elements of one tensor's fixed dimensions (2^31: 8 GiB of FP32); a request
#: trtcheck generates is bounded again by what it can allocate.
MAX_TENSOR_ELEMENTS = 2**31
#: Largest count or nanosecond total in statistics (int64).
MAX_COUNT = 2**63 - 1
#: Most execution instances in one instance group.
MAX_INSTANCES = 65536
#: Largest ``max_queue_delay_microseconds`` accepted (one hour).
MAX_QUEUE_DELAY_US = 3_600_000_000
#: Most entries in any list of an answer.
MAX_LIST = 4096

_INT_TEXT = re.compile(r"-?[0-9]{1,19}")


class BadAnswer(ValueError):
    """A server's answer that fails its check.

    Attributes:
        field: the dotted path of the bad field (``"max_batch_size"``,
            ``"inputs[0].shape[1]"``, ``"inference_count"``), ``""`` for the whole answer.
        reason: what is wrong with it, one line.
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field or 'the answer'}: {reason}")
        self.field = field
        self.reason = reason


class BadResponse(Exception):
    """An inference answer that cannot be read, or whose outputs do not match the model's
    metadata (one request's outcome: counted, never a crash)."""


def _as_int(value: Any) -> Any:
    """An integer from JSON: an int (not a bool), a float holding an integer, or a decimal
    string (gRPC's int64). Anything else is left for pydantic to refuse."""
    if isinstance(value, bool):
        raise ValueError("a boolean, not an integer")
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ValueError(f"{value!r} is not an integer")
        return int(value)
    if isinstance(value, str):
        if not _INT_TEXT.fullmatch(value.strip()):
            raise ValueError(f"{value[:40]!r} is not an integer")
        return int(value.strip())
    if isinstance(value, int):
        return value
    raise ValueError(f"a {type(value).__name__}, not an integer")


def _text(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"a {type(value).__name__}, not text")
    return value


Int = Annotated[int, BeforeValidator(_as_int)]
Count = Annotated[int, BeforeValidator(_as_int), Field(ge=0, le=MAX_COUNT)]
Dim = Annotated[int, BeforeValidator(_as_int), Field(ge=-1, le=MAX_DIM)]
BatchSize = Annotated[int, BeforeValidator(_as_int), Field(ge=1, le=MAX_BATCH_SIZE)]
Name = Annotated[str, BeforeValidator(_text), Field(min_length=1, max_length=512)]
Text = Annotated[str, BeforeValidator(_text), Field(max_length=4096)]


class _Answer(BaseModel):
    """Every answer type: fields not named here are kept as sent."""

    model_config = ConfigDict(extra="allow", strict=False)


def _fixed_elements(dims: list[int], what: str) -> None:
    n = 1
    for d in dims:
        if d > 0:
            n *= d
            if n > MAX_TENSOR_ELEMENTS:
                raise ValueError(f"{what}: {dims} holds more than "
                                 f"{MAX_TENSOR_ELEMENTS:,} elements")


# --------------------------------------------------------------------------- metadata


class ServerMetadata(_Answer):
    """``GET /v2``: the server's name, version and protocol extensions."""

    name: Text = ""
    version: Text = ""
    extensions: list[Text] = Field(default=[], max_length=MAX_LIST)


class TensorMetadata(_Answer):
    """One input or output in model metadata: name, KServe datatype, shape (``-1``:
    variable)."""

    name: Name
    datatype: Annotated[str, BeforeValidator(_text), Field(min_length=1, max_length=16)]
    shape: list[Dim] = Field(default=[], max_length=MAX_RANK)

    @model_validator(mode="after")
    def _size(self) -> TensorMetadata:
        _fixed_elements(self.shape, "shape")
        return self


class ModelMetadata(_Answer):
    """``GET /v2/models/NAME[/versions/V]``: name, versions, platform, inputs, outputs."""

    name: Text = ""
    versions: list[Text] = Field(default=[], max_length=MAX_LIST)
    platform: Text = ""
    inputs: list[TensorMetadata] = Field(default=[], max_length=MAX_LIST)
    outputs: list[TensorMetadata] = Field(default=[], max_length=MAX_LIST)

    @model_validator(mode="after")
    def _unique(self) -> ModelMetadata:
        for what, ts in (("inputs", self.inputs), ("outputs", self.outputs)):
            names = [t.name for t in ts]
            if len(set(names)) != len(names):
                raise ValueError(f"{what}: two share a name")
        return self


# --------------------------------------------------------------------------- configuration


class ConfigTensor(_Answer):
    """One ``input``/``output`` of a Triton model configuration."""

    name: Name
    data_type: Annotated[str, BeforeValidator(_text), Field(max_length=32)] = ""
    dims: list[Dim] = Field(default=[], max_length=MAX_RANK)

    @model_validator(mode="after")
    def _size(self) -> ConfigTensor:
        _fixed_elements(self.dims, "dims")
        return self


class QueuePolicy(_Answer):
    """``default_queue_policy`` (``max_queue_size`` 0: unbounded)."""

    max_queue_size: Annotated[int, BeforeValidator(_as_int), Field(ge=0, le=MAX_COUNT)] = 0


class DynamicBatching(_Answer):
    """``dynamic_batching``: the window (µs), the preferred batch sizes, the queue policy."""

    max_queue_delay_microseconds: Annotated[
        int, BeforeValidator(_as_int), Field(ge=0, le=MAX_QUEUE_DELAY_US)] = 0
    preferred_batch_size: list[BatchSize] = Field(default=[], max_length=MAX_LIST)
    default_queue_policy: QueuePolicy | None = None


class InstanceGroup(_Answer):
    """One ``instance_group`` entry: kind, count, GPU ids."""

    kind: Annotated[str, BeforeValidator(_text), Field(max_length=32)] = "KIND_AUTO"
    count: Annotated[int, BeforeValidator(_as_int), Field(ge=0, le=MAX_INSTANCES)] = 1
    gpus: list[Annotated[int, BeforeValidator(_as_int), Field(ge=0, le=65535)]] = Field(
        default=[], max_length=MAX_LIST)
    name: Text = ""


class ModelConfig(_Answer):
    """``GET /v2/models/NAME/config``: Triton's ``ModelConfig`` (the fields trtcheck reads;
    the rest are kept as sent)."""

    name: Text = ""
    platform: Text = ""
    backend: Text = ""
    max_batch_size: Annotated[int, BeforeValidator(_as_int),
                              Field(ge=0, le=MAX_BATCH_SIZE)] = 0
    input: list[ConfigTensor] = Field(default=[], max_length=MAX_LIST)
    output: list[ConfigTensor] = Field(default=[], max_length=MAX_LIST)
    instance_group: list[InstanceGroup] = Field(default=[], max_length=MAX_LIST)
    dynamic_batching: DynamicBatching | None = None
    parameters: dict[str, Any] = {}

    @model_validator(mode="after")
    def _preferred(self) -> ModelConfig:
        db = self.dynamic_batching
        if db is not None and self.max_batch_size > 0:
            over = [p for p in db.preferred_batch_size if p > self.max_batch_size]
            if over:
                raise ValueError(f"dynamic_batching.preferred_batch_size: {over} is above "
                                 f"max_batch_size {self.max_batch_size}")
        return self


# --------------------------------------------------------------------------- statistics


class Duration(_Answer):
    """A Triton ``StatisticDuration``: how many, and their total in nanoseconds (gRPC
    leaves an all-zero one empty)."""

    count: Count = 0
    ns: Count = 0


class InferenceStats(_Answer):
    """``inference_stats``: per-request durations."""

    success: Duration = Duration()
    fail: Duration = Duration()
    queue: Duration = Duration()
    compute_input: Duration = Duration()
    compute_infer: Duration = Duration()
    compute_output: Duration = Duration()
    cache_hit: Duration = Duration()
    cache_miss: Duration = Duration()


class BatchStat(_Answer):
    """One ``batch_stats`` entry: executions of one batch size and their times."""

    batch_size: BatchSize
    compute_input: Duration = Duration()
    compute_infer: Duration = Duration()
    compute_output: Duration = Duration()


class ModelStats(_Answer):
    """One ``model_stats`` entry of ``GET /v2/models/NAME/stats``."""

    name: Text = ""
    version: Text = ""
    last_inference: Count = 0
    inference_count: Count = 0
    execution_count: Count = 0
    inference_stats: InferenceStats = InferenceStats()
    batch_stats: list[BatchStat] = Field(default=[], max_length=MAX_LIST)

    @model_validator(mode="after")
    def _sums(self) -> ModelStats:
        sizes = [b.batch_size for b in self.batch_stats]
        if len(set(sizes)) != len(sizes):
            raise ValueError("batch_stats: lists a batch size twice")
        if self.execution_count > self.inference_count:
            raise ValueError(f"execution_count: {self.execution_count} is above "
                             f"inference_count {self.inference_count} (each execution "
                             "infers at least one sample)")
        return self


class StatsAnswer(_Answer):
    """The whole statistics answer: ``model_stats`` entries (one per version)."""

    model_stats: list[ModelStats] = Field(default=[], max_length=MAX_LIST)


# --------------------------------------------------------------------------- checks


def _field_of(exc: ValidationError) -> BadAnswer:
    err = exc.errors(include_url=False)[0]
    loc = ""
    for part in err.get("loc", ()):
        loc += f"[{part}]" if isinstance(part, int) else (f".{part}" if loc else str(part))
    msg = str(err.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    # a check across fields names its field first: "FIELD: reason"
    if (m := re.match(r"([A-Za-z_][\w.\[\]]*): (.*)", msg, re.S)) is not None:
        loc = f"{loc}.{m.group(1)}" if loc else m.group(1)
        msg = m.group(2)
    got = err.get("input")
    if not isinstance(got, (dict, list)) and err.get("type") not in ("missing",
                                                                     "value_error"):
        shown = repr(got)
        msg += f" (got {shown[:60]}{'...' if len(shown) > 60 else ''})"
    return BadAnswer(loc, " ".join(msg.split()))


def _check(model: type[_Answer], raw: Any) -> _Answer:
    if not isinstance(raw, dict):
        raise BadAnswer("", f"a {type(raw).__name__}, not a JSON object")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise _field_of(exc) from None
    except (RecursionError, OverflowError, ValueError, TypeError) as exc:
        raise BadAnswer("", f"unreadable ({type(exc).__name__})") from None


def _dump(obj: _Answer) -> dict[str, Any]:
    """The answer as JSON: checked fields normalised, fields the server gave and the model
    does not name kept; defaults the server did not send are not added."""
    return obj.model_dump(exclude_unset=True)


def check_server_metadata(raw: Any) -> dict[str, Any]:
    """``GET /v2`` checked (:class:`ServerMetadata`).

    Raises:
        BadAnswer: naming the bad field.
    """
    return _dump(_check(ServerMetadata, raw))


def check_model_metadata(raw: Any) -> dict[str, Any]:
    """Model metadata checked (:class:`ModelMetadata`): ``shape`` lists of ints (-1
    variable), names unique, fixed dimensions within :data:`MAX_TENSOR_ELEMENTS`.

    Raises:
        BadAnswer: naming the bad field (``"inputs[0].shape[1]"``).
    """
    return _dump(_check(ModelMetadata, raw))


def check_model_config(raw: Any) -> dict[str, Any]:
    """A Triton model configuration checked (:class:`ModelConfig`): ``max_batch_size``
    0..2^31-1, the window, preferred sizes within the max batch, instance counts, tensor
    dims; every other field kept as sent.

    Raises:
        BadAnswer: naming the bad field (``"max_batch_size"``).
    """
    return _dump(_check(ModelConfig, raw))


def check_model_stats(raw: Any) -> list[dict[str, Any]]:
    """A statistics answer checked (:class:`StatsAnswer`): every ``model_stats`` entry,
    counts and nanoseconds ints in 0..2^63-1, batch sizes >= 1 and listed once,
    ``execution_count <= inference_count``. Zero durations gRPC leaves empty are filled.

    Returns:
        the entries (possibly empty).

    Raises:
        BadAnswer: naming the bad field (``"model_stats[0].batch_stats[0].batch_size"``).
    """
    ans = _check(StatsAnswer, raw)
    return [m.model_dump() for m in ans.model_stats]  # type: ignore[attr-defined]


def _durations(entry: dict[str, Any]) -> dict[str, tuple[int, int]]:
    out = {}
    for k, v in (entry.get("inference_stats") or {}).items():
        if isinstance(v, dict):
            out[f"inference_stats.{k}"] = (int(v.get("count", 0)), int(v.get("ns", 0)))
    for b in entry.get("batch_stats") or []:
        for k in ("compute_input", "compute_infer", "compute_output"):
            v = b.get(k) or {}
            out[f"batch_stats[{b['batch_size']}].{k}"] = (int(v.get("count", 0)),
                                                          int(v.get("ns", 0)))
    return out


def check_stats_pair(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Two checked ``model_stats`` entries of one model, read before and after a run:
    every counter and total must not go backwards (Triton resets them when the model is
    loaded again or the server restarts), and the run's executions must add up (the
    executions per batch size sum to ``execution_count``, and sizes x executions to
    ``inference_count``, when the server reports per-batch statistics).

    Raises:
        BadAnswer: the field that went backwards or does not add up.
    """
    for k in ("inference_count", "execution_count"):
        b, a = int(before.get(k, 0)), int(after.get(k, 0))
        if a < b:
            raise BadAnswer(k, f"went backwards during the run ({b} -> {a}): the model "
                               "was loaded again or the server restarted")
    d0, d1 = _durations(before), _durations(after)
    for k, (c1, n1) in d1.items():
        c0, n0 = d0.get(k, (0, 0))
        if c1 < c0 or n1 < n0:
            what = "count" if c1 < c0 else "ns"
            v0, v1 = (c0, c1) if c1 < c0 else (n0, n1)
            raise BadAnswer(f"{k}.{what}", f"went backwards during the run ({v0} -> {v1}): "
                            "the model was loaded again or the server restarted")
    for k, (c0, n0) in d0.items():
        if k not in d1 and k.startswith("batch_stats") and c0:
            raise BadAnswer(k, "disappeared during the run: the model was loaded again or "
                               "the server restarted")
    if not after.get("batch_stats"):
        return
    exe = int(after.get("execution_count", 0)) - int(before.get("execution_count", 0))
    inf = int(after.get("inference_count", 0)) - int(before.get("inference_count", 0))
    sum_exe = sum_inf = 0
    for b in after.get("batch_stats") or []:
        k = f"batch_stats[{b['batch_size']}].compute_infer"
        n = d1[k][0] - d0.get(k, (0, 0))[0]
        sum_exe += n
        sum_inf += n * int(b["batch_size"])
    if sum_exe != exe:
        raise BadAnswer("batch_stats", f"the run's executions per batch size add up to "
                                       f"{sum_exe}, but execution_count grew by {exe}")
    if sum_inf != inf:
        raise BadAnswer("batch_stats", f"the run's batch sizes x executions add up to "
                                       f"{sum_inf}, but inference_count grew by {inf}")
