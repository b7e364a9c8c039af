"""Metric paths: name any number in the results model, check names against the schema.

A metric path addresses values in a :class:`trtcheck.results.Results` document. It is
resolved *generically* over the pydantic model, so sections added later (serve, advice,
engine, precision, ...) are addressable without changes here.

Grammar::

    expr     := FUNC "(" path ")" | path          FUNC: len, min, max, sum
    path     := segment ("." segment)*
    segment  := NAME selector*
    selector := "[" ( "*" | KEY | cond ("," cond)* ) "]"
    cond     := FIELD ("." FIELD)* "=" VALUE      VALUE: text, or quoted '...' / "..."

Rules, in the order they are tried for a NAME on a record:

1. a field of the record (``inspection.parameter_bytes``);
2. the singular of a list field (``batch`` -> ``batches``);
3. a field of the record's ``stats`` sub-record (``bench.batch[8].p99_ms`` is
   ``bench.batch[8].stats.p99_ms``);
4. ``pNN_ms`` / ``pNN.N_ms`` on a record that keeps raw ``samples_ms``: that percentile
   computed from the raw samples with :func:`trtcheck.stats.percentile`
   (``bench.batch[8].p99.9_ms``); ``NN`` must lie in ``(0, 100)``.

Selectors on a list: ``[*]`` every item (the rule is checked for each); ``[FIELD=VALUE]``
the items whose field equals the value; ``[F1=V1,F2=V2]`` the items meeting every
condition (``serve.configs[window_ms=0,max_batch_size=8]``); ``FIELD`` may name a field of
a sub-record (``serve.configs[load.kind=burst]``); ``[KEY]`` the item whose *key field*
equals KEY. Numbers compare as numbers (``[window_ms=0]`` keeps ``0.0``), other values as
case-insensitive text; a value that cannot match the field's type (text for a number,
not ``true``/``false`` for a flag) is an error, never a filter matching nothing. Selectors
nest at any depth (``serve.configs[window_ms=0].repeats[repeat=1].waterfall[name=compute_ms]
.median_ms``). Two selectors on one list (``[a=1][b=2]``) are an error naming the
comma form.
The key field is the first of ``batch_size``, ``label``, ``name``, ``code``, ``id``,
``index`` the item record has; an integer KEY on a list whose key field is not an
integer is a 0-based position. A list of labelled runs used without a selector means
its first item (``bench.batch[8]`` is the primary run ``results.bench[0]``). On a dict:
``[KEY]`` that entry, ``[*]`` every entry, and on a dict of records a filter keeps
the entries whose record meets it (``precision.variants[precision=fp16]``).

Functions: ``len(path)`` counts the items the path reaches (a list leaf counts its
items), e.g. ``len(inspection.lints[severity=error])``; ``min``/``max``/``sum`` reduce
numeric values.

Every metric knows whether lower or higher is better (:func:`infer_direction`) and its
unit (:func:`metric_unit`); budget values may carry units (:func:`parse_quantity`).
"""

from __future__ import annotations

import difflib
import math
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel

from trtcheck.stats import PERCENTILE_METHODS, numpy_quantile_method

FUNCTIONS = ("len", "min", "max", "sum")
KEY_FIELDS = ("batch_size", "label", "name", "code", "id", "index")
SAMPLES_FIELDS = ("samples_ms", "latencies_ms")
"""Names of raw-sample fields (lists of floats, ms) that statistics derive from."""

_PCT_RE = re.compile(r"p(\d+(?:\.\d+)?)_ms")
_NAME_RE = re.compile(r"p\d+(?:\.\d+)?_ms|[A-Za-z_][A-Za-z0-9_]*")


class MetricPathError(ValueError):
    """A metric path that cannot be parsed or does not exist in the schema.

    Attributes:
        message: what is wrong.
        hint: close matches or the valid choices, or ``None``.
    """

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class MetricMissing(LookupError):
    """A valid path whose value is absent from this results file (section not run,
    batch size not measured, label not present)."""


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class Selector:
    """One ``[...]`` selector: ``kind`` is ``"all"``, ``"key"`` or ``"filter"``.

    A filter holds its conditions in ``conds`` (``(field, value)`` pairs, all of which
    must hold; a field may be dotted, ``load.kind``); ``field``/``value`` are the first
    condition.
    """

    kind: str
    key: str | None = None
    field: str | None = None
    value: str | None = None
    conds: tuple[tuple[str, str], ...] = ()

    def conditions(self) -> tuple[tuple[str, str], ...]:
        """Every ``(field, value)`` condition of a filter (empty for other kinds)."""
        if self.conds:
            return self.conds
        if self.kind == "filter" and self.field is not None:
            return ((self.field, self.value or ""),)
        return ()

    def text(self) -> str:
        if self.kind == "all":
            return "[*]"
        if self.kind == "filter":
            return "[" + ",".join(f"{f}={v}" for f, v in self.conditions()) + "]"
        return f"[{self.key}]"


_FIELD_PATH_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def _opens_quote(text: str, i: int) -> bool:
    """Whether ``text[i]`` starts a quoted value: a ' or " at the start of a value (after
    ``[``, ``=`` or ``,``, spaces allowed); elsewhere (``it's``) it is plain text."""
    if text[i] not in "'\"":
        return False
    before = text[:i].rstrip()
    return not before or before[-1] in "[=,"


def _split_unquoted(text: str, sep: str) -> list[str]:
    """Split ``text`` at ``sep`` outside quoted values ('...' / "...")."""
    parts, cur, quote = [], [], None
    for i, ch in enumerate(text):
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
        elif _opens_quote(text, i):
            quote = ch
            cur.append(ch)
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _close_bracket(body: str, start: int) -> int:
    """Index of the ``]`` closing the ``[`` at ``start`` (a quoted value may hold ``]``),
    or -1."""
    quote = None
    for j in range(start + 1, len(body)):
        ch = body[j]
        if quote:
            if ch == quote:
                quote = None
        elif _opens_quote(body, j):
            quote = ch
        elif ch == "]":
            return j
    return -1


#: ``FIELD<op>`` at the start of a selector: a comparison, which filters do not support
_COMPARISON_RE = re.compile(r"\s*(?P<field>[A-Za-z_][\w.]*)\s*(!=|<=|>=|<|>)")


def _comparison_error(inner: str, raw: str) -> MetricPathError:
    return MetricPathError(f"filter [{inner}] in {raw!r}: filters test equality only "
                           "(FIELD=VALUE)", "select the items with [*] and gate each "
                           "value, e.g. serve.configs[*].p99_ms <= 5 ms")


def _parse_filter(inner: str, raw: str) -> Selector:
    """``FIELD=VALUE[,FIELD=VALUE...]`` -> a filter selector (see the module grammar)."""
    example = "e.g. serve.configs[window_ms=0,max_batch_size=8].p99_ms"
    conds: list[tuple[str, str]] = []
    for part in _split_unquoted(inner, ","):
        if _COMPARISON_RE.match(part):
            raise _comparison_error(inner, raw)
        if "=" not in part:
            raise MetricPathError(f"bad filter [{inner}] in {raw!r}: {part.strip()!r} is not "
                                  "FIELD=VALUE", "separate conditions with commas, each "
                                  "FIELD=VALUE (quote a value holding a comma); " + example)
        f, v = (x.strip() for x in part.split("=", 1))
        quoted = len(v) >= 2 and v[0] == v[-1] and v[0] in "'\""
        if not _FIELD_PATH_RE.fullmatch(f) or not v:
            raise MetricPathError(f"bad filter [{inner}] in {raw!r}",
                                  "filters look like [code=drift] or [window_ms=0,"
                                  "max_batch_size=8]")
        if not quoted and "=" in v:
            raise MetricPathError(f"bad filter [{inner}] in {raw!r}: the value {v!r} holds "
                                  "'='", "combine conditions with commas, not words: "
                                  + example)
        conds.append((f, v[1:-1] if quoted else v))
    fields = [c[0] for c in conds]
    dup = sorted({f for f in fields if fields.count(f) > 1})
    if dup:
        raise MetricPathError(f"filter [{inner}] in {raw!r} tests {dup[0]} twice",
                              "an item has one value per field: keep one condition")
    return Selector("filter", field=conds[0][0], value=conds[0][1], conds=tuple(conds))


@dataclass(frozen=True)
class Segment:
    """One dotted part of a path: a name and its selectors."""

    name: str
    selectors: tuple[Selector, ...] = ()


@dataclass(frozen=True)
class MetricPath:
    """A parsed metric expression.

    Attributes:
        text: the expression as written (whitespace stripped).
        func: ``None`` or one of :data:`FUNCTIONS`.
        segments: the dotted parts.
    """

    text: str
    func: str | None
    segments: tuple[Segment, ...]

    @property
    def leaf(self) -> str:
        """Name of the last segment (``p99_ms`` in ``bench.batch[8].p99_ms``)."""
        return self.segments[-1].name


def parse_path(text: str) -> MetricPath:
    """Parse a metric expression.

    Raises:
        MetricPathError: syntax errors (unbalanced brackets, empty parts, unknown
            function), with the position.
    """
    if not isinstance(text, str) or not text.strip():
        raise MetricPathError("empty metric path", "write e.g. bench.batch[8].p99_ms")
    raw = text.strip()
    func = None
    body = raw
    m = re.fullmatch(r"([A-Za-z_]+)\s*\((.*)\)", raw, flags=re.DOTALL)
    if m:
        func = m.group(1)
        body = m.group(2).strip()
        if func not in FUNCTIONS:
            close = difflib.get_close_matches(func, FUNCTIONS, n=1)
            raise MetricPathError(f"unknown function {func!r} in {raw!r}",
                                  f"did you mean {close[0]!r}?" if close else
                                  f"functions: {', '.join(FUNCTIONS)}")
    segs: list[Segment] = []
    i = 0
    n = len(body)
    while True:
        mm = _NAME_RE.match(body, i)
        if not mm:
            where = body[i:i + 10] or "end of path"
            raise MetricPathError(f"bad metric path {raw!r}: expected a name at {where!r}",
                                  "paths look like bench.batch[8].p99_ms")
        name = mm.group(0)
        i = mm.end()
        sels: list[Selector] = []
        while i < n and body[i] == "[":
            j = _close_bracket(body, i)
            if j < 0:
                raise MetricPathError(f"bad metric path {raw!r}: '[' without ']'",
                                      "close the selector, e.g. batch[8]")
            inner = body[i + 1:j].strip()
            if not inner:
                raise MetricPathError(f"bad metric path {raw!r}: empty selector []",
                                      "use [*], [KEY] or [FIELD=VALUE]")
            if inner == "*":
                sels.append(Selector("all"))
            elif "=" in inner:
                sels.append(_parse_filter(inner, raw))
            else:
                sels.append(Selector("key", key=inner.strip("'\"")))
            i = j + 1
        segs.append(Segment(name, tuple(sels)))
        if i >= n:
            break
        if body[i] != ".":
            raise MetricPathError(f"bad metric path {raw!r}: unexpected {body[i]!r}",
                                  "separate parts with '.' and select with [..]")
        i += 1
    return MetricPath(raw, func, tuple(segs))


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class TypeInfo:
    """Static shape of a model field: ``kind`` is record, list, dict or scalar."""

    kind: str
    cls: type | None = None
    item: TypeInfo | None = None
    scalars: tuple[type, ...] = ()

    def describe(self) -> str:
        if self.kind == "record":
            return self.cls.__name__ if self.cls else "record"
        if self.kind == "list":
            return f"list of {self.item.describe() if self.item else '?'}"
        if self.kind == "dict":
            return f"dict of {self.item.describe() if self.item else '?'}"
        return "/".join(t.__name__ for t in self.scalars) or "value"

    @property
    def numeric(self) -> bool:
        return self.kind == "scalar" and any(t in (int, float) for t in self.scalars)


def type_info(annotation: Any) -> TypeInfo:
    """Describe a pydantic field annotation (``list[BatchResult]``, ``float | None``...)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        infos = [type_info(a) for a in args]
        if len(infos) == 1:
            return infos[0]
        if all(t.kind == "scalar" for t in infos):
            return TypeInfo("scalar", scalars=tuple(s for t in infos for s in t.scalars))
        return infos[0]
    if origin in (list, tuple, set, frozenset):
        args = typing.get_args(annotation)
        return TypeInfo("list", item=type_info(args[0]) if args else TypeInfo("scalar"))
    if origin is dict:
        args = typing.get_args(annotation)
        return TypeInfo("dict", item=type_info(args[1]) if len(args) == 2 else TypeInfo("scalar"))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return TypeInfo("record", cls=annotation)
    if annotation in (int, float, str, bool):
        return TypeInfo("scalar", scalars=(annotation,))
    return TypeInfo("scalar", scalars=(object,))


def _fields(cls: type) -> dict[str, TypeInfo]:
    fields = cls.model_fields  # type: ignore[attr-defined]
    return {n: type_info(f.annotation) for n, f in fields.items()}


def _key_field(cls: type | None) -> str | None:
    if cls is None:
        return None
    names = cls.model_fields  # type: ignore[attr-defined]
    for k in KEY_FIELDS:
        if k in names:
            return k
    return None


def _samples_field(cls: type | None) -> str | None:
    """The raw-samples field of a record class (``samples_ms``, ``latencies_ms``), if any."""
    if cls is None:
        return None
    flds = _fields(cls)
    for name in SAMPLES_FIELDS:
        t = flds.get(name)
        if t is not None and t.kind == "list" and t.item is not None and t.item.numeric:
            return name
    return None


def _own_samples(obj: Any) -> list[float] | None:
    name = _samples_field(type(obj)) if isinstance(obj, BaseModel) else None
    val = getattr(obj, name, None) if name else None
    return val if isinstance(val, list) else None


def _stats_field(cls: type | None) -> str | None:
    """The latency-statistics sub-record whose fields are reachable directly: ``stats``,
    or else the first record field that has ``median_ms`` and ``p99_ms`` (``latency``)."""
    if cls is None:
        return None
    flds = _fields(cls)
    cands = [n for n, t in flds.items() if t.kind == "record" and t.cls is not None
             and {"median_ms", "p99_ms"} <= set(t.cls.model_fields)]
    if "stats" in cands:
        return "stats"
    return cands[0] if cands else None


def _recorded_percentile_method(obj: Any) -> str:
    """The ``percentile_method`` recorded with a record's latency statistics (on the
    record itself, or on its statistics sub-record); ``"linear"`` where none is recorded
    (files from before the field existed were computed with it)."""
    for rec in (obj, getattr(obj, _stats_field(type(obj)) or "", None)
                if isinstance(obj, BaseModel) else None):
        method = getattr(rec, "percentile_method", None)
        if method in PERCENTILE_METHODS:
            return method
    return "linear"


def _percentile_of(name: str) -> float | None:
    m = _PCT_RE.fullmatch(name)
    return float(m.group(1)) / 100.0 if m else None


@dataclass(frozen=True)
class _Step:
    """How a NAME resolves on a record class: a chain of fields or a computed percentile."""

    fields: tuple[str, ...]
    info: TypeInfo
    percentile: float | None = None


def _lookup(cls: type, name: str, has_samples: bool) -> _Step:
    flds = _fields(cls)
    if name in flds:
        return _Step((name,), flds[name])
    for plural in (name + "s", name + "es"):
        if plural in flds and flds[plural].kind == "list":
            return _Step((plural,), flds[plural])
    sname = _stats_field(cls)
    stats = flds.get(sname) if sname else None
    if stats is not None and stats.cls is not None:
        sub = _fields(stats.cls)
        if name in sub:
            return _Step((sname, name), sub[name])  # type: ignore[arg-type]
    q = _percentile_of(name)
    if q is not None and (has_samples or _samples_field(cls) is not None):
        if not 0.0 < q < 1.0:
            raise MetricPathError(f"percentile {name} is out of range",
                                  "percentiles must lie strictly between p0 and p100, "
                                  "e.g. p99_ms or p99.9_ms")
        return _Step((), TypeInfo("scalar", scalars=(float,)), percentile=q)
    if q is not None:
        raise MetricPathError(f"{name}: {cls.__name__} keeps no raw samples to compute "
                              "a percentile from", "use a percentile stored in the "
                              "results (p25, p50 as median, p75, p90, p95, p99)")
    cands = list(flds)
    cands += [_singular(n) for n, t in flds.items() if t.kind == "list" and n.endswith("s")]
    if stats is not None and stats.cls is not None:
        cands += list(_fields(stats.cls))
    raise MetricPathError(f"{cls.__name__} has no field {name!r}", _did_you_mean(name, cands))


def _singular(name: str) -> str:
    if re.search(r"(ch|sh|x|ss)es$", name):
        return name[:-2]
    return name[:-1]


def _did_you_mean(name: str, cands: list[str]) -> str:
    close = difflib.get_close_matches(name, cands, n=3, cutoff=0.5)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    shown = sorted(set(cands))
    more = "" if len(shown) <= 12 else f" (and {len(shown) - 12} more)"
    return "valid names here: " + ", ".join(shown[:12]) + more


def _samples_sibling(flds: dict[str, TypeInfo], dict_field: str) -> str | None:
    """``component_stats`` -> ``components_ms`` (raw samples kept beside stats dicts)."""
    if not dict_field.endswith("_stats"):
        return None
    stem = dict_field[: -len("_stats")]
    for cand in (stem + "s_ms", stem + "_ms"):
        if cand in flds and flds[cand].kind == "dict":
            return cand
    return None


@dataclass(frozen=True)
class PathInfo:
    """What static checking learnt about a path.

    Attributes:
        leaf: the leaf name used for unit and direction inference (``"len"`` for counts).
        type: the type of the leaf values (after the function, if any).
        multi: the path can reach several values (``[*]`` or a filter, no function).
        sample_backed: values are statistics of raw samples (bootstrap possible).
    """

    leaf: str
    type: TypeInfo
    multi: bool
    sample_backed: bool


def fold_dotted_keys(path: MetricPath, root: type | None = None) -> MetricPath:
    """Read a dotted name after a dict field as its key: ``precision.variants.fp16.
    max_abs_error`` is ``precision.variants[fp16].max_abs_error`` (and ``outputs.y`` is
    ``outputs[y]``). Only a dict field written without a selector is folded, so a path
    that already selects is unchanged; anything the schema walk cannot follow is left as
    written for :func:`check_path` to report.

    Args:
        path: a parsed path; root: the root record class (default ``Results``).

    Returns:
        the path with such names turned into ``[KEY]`` selectors (``text`` as written).
    """
    if root is None:
        from trtcheck.results import Results
        root = Results
    segs = list(path.segments)
    out: list[Segment] = []
    cur = TypeInfo("record", cls=root)
    folded = False
    for seg in segs:
        if cur.kind == "dict" and out and not out[-1].selectors and "[" not in seg.name:
            out[-1] = Segment(out[-1].name, (Selector("key", key=seg.name),) + seg.selectors)
            folded = True
            cur = cur.item or TypeInfo("scalar")
            for sel in seg.selectors:
                if cur.kind in ("list", "dict"):
                    cur = cur.item or TypeInfo("scalar")
            continue
        out.append(seg)
        if cur.kind == "list" and cur.item is not None and cur.item.kind == "record" \
                and _key_field(cur.item.cls) == "label":
            cur = cur.item
        if cur.kind != "record" or cur.cls is None:
            return path
        try:
            info = _lookup(cur.cls, seg.name, True).info
        except MetricPathError:
            return path
        for sel in seg.selectors:
            if info.kind in ("list", "dict"):
                info = info.item or TypeInfo("scalar")
            else:
                return path
        cur = info
    if not folded:
        return path
    return MetricPath(path.text, path.func, tuple(out))


def check_path(path: MetricPath, root: type | None = None) -> PathInfo:
    """Check ``path`` against the results schema without any data.

    Args:
        path: a parsed path.
        root: the root record class (default :class:`trtcheck.results.Results`).

    Raises:
        MetricPathError: unknown names (with close matches), selectors on values that
            are not lists/dicts, unknown filter fields, functions on the wrong type.
    """
    if root is None:
        from trtcheck.results import Results
        root = Results
    cur = TypeInfo("record", cls=root)
    has_samples = False
    multi = False
    sample_backed = False
    where = root.__name__
    segs = path.segments
    for idx, seg in enumerate(segs):
        last = idx == len(segs) - 1
        if cur.kind == "list" and cur.item is not None and cur.item.kind == "record" \
                and _key_field(cur.item.cls) == "label":
            cur = cur.item  # implicit primary item of a list of labelled runs
        if cur.kind != "record" or cur.cls is None:
            raise MetricPathError(f"{where} is a {cur.describe()}, it has no field "
                                  f"{seg.name!r}", "select one item with [KEY] first"
                                  if cur.kind in ("list", "dict") else None)
        step = _lookup(cur.cls, seg.name, has_samples)
        parent_fields = _fields(cur.cls)
        parent_has_samples = _samples_field(cur.cls) is not None
        if step.percentile is not None:
            info = step.info
            sample_backed = True
        else:
            info = step.info
            if step.fields[0] == _stats_field(cur.cls):
                has_samples = has_samples or parent_has_samples
            elif info.kind == "record" and info.cls is not None:
                has_samples = _samples_field(info.cls) is not None
            sample_backed = (has_samples or parent_has_samples) and info.kind == "scalar" \
                and _stat_kind(step.fields[-1]) is not None
        where = seg.name
        prev: Selector | None = None
        for sel in seg.selectors:
            if info.kind == "list":
                item = info.item or TypeInfo("scalar")
                if sel.kind == "filter":
                    _check_filter(sel, item, where, info)
                    multi = True
                elif sel.kind == "all":
                    multi = True
                elif item.kind == "record" and item.cls is not None and sel.key:
                    cm = _COMPARISON_RE.match(sel.key)
                    if cm and cm.group("field").split(".")[0] in item.cls.model_fields:
                        raise _comparison_error(sel.key, path.text)
                info = item
                if info.kind == "record" and info.cls is not None:
                    has_samples = _samples_field(info.cls) is not None
            elif info.kind == "dict":
                if sel.kind == "filter":
                    item = info.item or TypeInfo("scalar")
                    if item.kind != "record":
                        raise MetricPathError(f"filter {sel.text()} cannot apply to the dict "
                                              f"{where} ({info.describe()})", "use [KEY] or [*]")
                    _check_filter(sel, item, where, info)
                    multi = True
                if sel.kind == "all":
                    multi = True
                sib = _samples_sibling(parent_fields, seg.name) if step.fields else None
                has_samples = sib is not None
                info = info.item or TypeInfo("scalar")
            elif prev is not None and info.kind == "record":
                # [a=1][b=2]: the first selector already chose records of the list
                both = prev.kind == "filter" and sel.kind == "filter"
                combined = "[" + ",".join(f"{f}={v}" for f, v in
                                          prev.conditions() + sel.conditions()) + "]"
                raise MetricPathError(
                    f"{where}{prev.text()}{sel.text()}: two selectors on one list are not "
                    f"supported ({where}{prev.text()} already chose {info.describe()} "
                    "records)", f"combine the conditions in one filter: {where}{combined}"
                    if both else "use one selector per list: [KEY], [*] or "
                    "[FIELD=VALUE,FIELD=VALUE]")
            else:
                raise MetricPathError(f"{where} is a {info.describe()}; {sel.text()} "
                                      "selects only in lists and dicts")
            prev = sel
        if not last and info.kind == "scalar":
            raise MetricPathError(f"{where} is a single value ({info.describe()}), it has "
                                  f"no field {segs[idx + 1].name!r}")
        cur = info
    leaf = path.leaf
    if path.func == "len":
        return PathInfo("len", TypeInfo("scalar", scalars=(int,)), False, False)
    if path.func in ("min", "max", "sum"):
        if not cur.numeric:
            raise MetricPathError(f"{path.func}() needs numbers, {path.leaf} is a "
                                  f"{cur.describe()}")
        return PathInfo(leaf, cur, False, False)
    if cur.kind in ("list", "dict"):
        raise MetricPathError(f"{path.text} is a {cur.describe()}, not a single value",
                              f"count it with len({path.text}) or select one item with [KEY]")
    if cur.kind == "record":
        names = sorted(cur.cls.model_fields) if cur.cls is not None else []
        extra = (" (or a stats field: median_ms, p99_ms, ...)" if _stats_field(cur.cls) else "")
        raise MetricPathError(f"{path.text} is a record ({cur.describe()}), not a value",
                              "name one of its fields: " + ", ".join(names[:14]) + extra)
    return PathInfo(leaf, cur, multi, sample_backed)


def _check_filter(sel: Selector, item: TypeInfo, where: str, container: TypeInfo) -> None:
    """Check a filter's fields against the item record and its values against their
    types, so that a filter never silently matches nothing.

    Raises:
        MetricPathError: items that are not records, unknown (or non-scalar) fields, a
            value that cannot equal the field (text for a number, not true/false for a
            flag).
    """
    if item.kind != "record" or item.cls is None:
        raise MetricPathError(f"filter {sel.text()} needs a list of records, "
                              f"{where} is a {container.describe()}")
    for fpath, value in sel.conditions():
        cls: type = item.cls
        names = fpath.split(".")
        t: TypeInfo | None = None
        for k, name in enumerate(names):
            flds = _fields(cls)
            if name not in flds:
                raise MetricPathError(f"{cls.__name__} has no field {name!r} to filter on",
                                      _did_you_mean(name, list(flds)))
            t = flds[name]
            if k < len(names) - 1:
                if t.kind != "record" or t.cls is None:
                    raise MetricPathError(f"filter field {fpath!r}: {name} is a "
                                          f"{t.describe()}, it has no field {names[k + 1]!r}")
                cls = t.cls
        assert t is not None
        if t.kind != "scalar":
            hint = ("filter on one of its fields: " + ", ".join(
                f"{fpath}.{n}" for n in list(t.cls.model_fields)[:6])
                if t.kind == "record" and t.cls is not None else None)
            raise MetricPathError(f"filter [{fpath}={value}] compares one value, but {fpath} "
                                  f"is a {t.describe()}", hint)
        kinds = set(t.scalars)
        if kinds and kinds <= {int, float}:
            try:
                float(value)
            except ValueError:
                raise MetricPathError(f"filter [{fpath}={value}]: {fpath} is a number, "
                                      f"{value!r} is not, so nothing could match",
                                      f"write a plain number in the field's unit, e.g. "
                                      f"[{fpath}=0]") from None
        elif kinds == {bool} and value.lower() not in ("true", "false"):
            raise MetricPathError(f"filter [{fpath}={value}]: {fpath} is true/false, got "
                                  f"{value!r}", f"write [{fpath}=true] or [{fpath}=false]")


def _filter_item_value(item: Any, fpath: str) -> Any:
    """The value a (possibly dotted) filter field has on ``item``, or ``None``."""
    v = item
    for name in fpath.split("."):
        v = getattr(v, name, None)
        if v is None:
            return None
    return v


def _filter_keeps(item: Any, sel: Selector) -> bool:
    """Whether ``item`` meets every condition of the filter ``sel``."""
    return all(_filter_match(_filter_item_value(item, f), v) for f, v in sel.conditions())


def schema_paths(root: type | None = None, max_depth: int = 6) -> list[str]:
    """Every simple path of the schema (for close-match hints and documentation).

    Lists appear as ``name[*]``; the ``stats`` shorthand is not expanded.
    """
    if root is None:
        from trtcheck.results import Results
        root = Results
    out: list[str] = []

    def walk(cls: type, prefix: str, depth: int) -> None:
        if depth > max_depth:
            return
        for name, info in _fields(cls).items():
            p = f"{prefix}.{name}" if prefix else name
            t = info
            if t.kind in ("list", "dict"):
                p += "[*]"
                t = t.item or TypeInfo("scalar")
            if t.kind == "record" and t.cls is not None:
                walk(t.cls, p, depth + 1)
            else:
                out.append(p)

    walk(root, "", 0)
    return out


# --------------------------------------------------------------------------- statistics


def _stat_kind(name: str) -> tuple[str, float] | None:
    """Which statistic of raw samples a stored field is (``("quantile", 0.99)``...)."""
    if name == "median_ms":
        return ("quantile", 0.5)
    if name == "mean_ms":
        return ("mean", 0.0)
    if name == "min_ms":
        return ("quantile", 0.0)
    if name == "max_ms":
        return ("quantile", 1.0)
    q = _percentile_of(name)
    if q is not None:
        return ("quantile", q)
    if name.startswith("throughput_") and name.endswith("_per_s"):
        return ("inverse_median", 0.5)
    return None


@dataclass(frozen=True)
class SampleStat:
    """How a metric value derives from raw latency samples (ms).

    ``kind``: ``"quantile"`` (value = quantile ``q`` of the samples), ``"mean"``, or
    ``"inverse_median"`` (value = ``scale / median``, e.g. throughput with
    ``scale = batch_size * 1000``). ``method``: the percentile method of a ``"quantile"``
    (``"linear"`` or ``"nearest-rank"``, :mod:`trtcheck.stats`), the one the results file
    records in ``percentile_method`` for a percentile field; medians, minima and maxima
    use ``"linear"`` (the same under both methods, the median as in ``median_ms``).
    """

    kind: str
    q: float = 0.5
    scale: float = 1.0
    method: str = "linear"

    def of(self, samples: np.ndarray, axis: int | None = None) -> Any:
        """The statistic of ``samples`` (along ``axis`` for a 2-D bootstrap array)."""
        if self.kind == "mean":
            return np.mean(samples, axis=axis)
        if self.kind == "quantile":
            return np.quantile(samples, self.q, axis=axis,
                               method=numpy_quantile_method(self.method))
        return self.scale / np.quantile(samples, 0.5, axis=axis, method="linear")


@dataclass
class Value:
    """One resolved metric value.

    Attributes:
        path: display path with ``[*]``/filters replaced by the keys reached
            (``bench.batch[8].p99_ms``).
        match_key: the keys chosen by ``[*]``/filters, used to pair values of two files.
        value: the number (or string/bool) stored in, or computed from, the results.
        samples: raw latency samples (ms) the value is a statistic of, else ``None``.
        stat: which statistic of ``samples`` the value is, else ``None``.
    """

    path: str
    match_key: tuple[str, ...]
    value: Any
    samples: np.ndarray | None = None
    stat: SampleStat | None = None


@dataclass
class _Cursor:
    obj: Any
    parts: list[str] = field(default_factory=list)
    keys: tuple[str, ...] = ()
    samples: list[float] | None = None
    stat: SampleStat | None = None


def _item_key(item: Any, kf: str | None) -> str:
    return str(getattr(item, kf)) if kf else "?"


def _available(items: list[Any], kf: str | None) -> str:
    if kf:
        return f"{kf} " + ", ".join(str(getattr(x, kf)) for x in items) if items else "none"
    return f"{len(items)} items"


def _filter_match(field_value: Any, text: Any) -> bool:
    """Whether a filter ``[FIELD=VALUE]`` keeps an item: numbers compare as numbers
    (``[window_ms=0]`` keeps ``0.0``), everything else as case-insensitive text."""
    if isinstance(field_value, (int, float)) and not isinstance(field_value, bool):
        try:
            return float(field_value) == float(str(text))
        except ValueError:
            return False
    return str(field_value).lower() == str(text).lower()


def resolve(path: MetricPath, results: Any) -> list[Value]:
    """Resolve ``path`` on a results document.

    Returns:
        one :class:`Value` per value reached (one unless ``[*]`` or a filter is used
        without a function; possibly zero for a filter that matches nothing).

    Raises:
        MetricPathError: the path does not fit the schema (call :func:`check_path` first
            to get these before any data is read).
        MetricMissing: a section, batch size, label or key is absent from this file.
    """
    cursors = [_Cursor(results)]
    segs = path.segments
    for idx, seg in enumerate(segs):
        nxt: list[_Cursor] = []
        for c in cursors:
            obj = c.obj
            parts = list(c.parts)
            if isinstance(obj, list) and not obj:
                raise MetricMissing(f"{'.'.join(parts)} is empty in this results file")
            if isinstance(obj, list) and isinstance(obj[0], BaseModel) \
                    and _key_field(type(obj[0])) == "label":
                obj = obj[0]
            if not isinstance(obj, BaseModel):
                raise MetricPathError(f"{'.'.join(parts) or 'results'} has no field {seg.name!r}")
            cls = type(obj)
            has_samples = c.samples is not None
            step = _lookup(cls, seg.name, has_samples)
            own = _own_samples(obj)
            samples = c.samples if c.samples is not None else own
            stat: SampleStat | None = None
            if step.percentile is not None:
                if not samples:
                    raise MetricMissing(f"{'.'.join(parts + [seg.name])}: no raw samples "
                                        "kept to compute a percentile from")
                arr = np.asarray(samples, dtype=np.float64)
                stat = SampleStat("quantile", step.percentile,
                                  method=_recorded_percentile_method(obj))
                val: Any = float(stat.of(arr))
            else:
                val = obj
                for f in step.fields:
                    val = getattr(val, f)
                fname = step.fields[-1]
                if isinstance(val, BaseModel):
                    own2 = _own_samples(val)
                    if own2 is not None:
                        samples = own2
                    elif step.fields[0] != _stats_field(cls):
                        samples = None
                sk = _stat_kind(fname)
                if sk is not None and samples and isinstance(val, (int, float)):
                    kind, q = sk
                    if kind == "inverse_median":
                        med = float(np.quantile(np.asarray(samples, dtype=np.float64), 0.5))
                        stat = SampleStat(kind, 0.5, float(val) * med)
                    elif _percentile_of(fname) is not None:  # p90_ms, p99_ms, ...
                        stat = SampleStat(kind, q, method=_recorded_percentile_method(obj))
                    else:
                        stat = SampleStat(kind, q)
            parts.append(seg.name)
            if val is None:
                raise MetricMissing(f"{'.'.join(parts)} is not present in this results file")
            branch = [(val, parts, c.keys, samples)]
            for sel in seg.selectors:
                new_branch = []
                for v, p, keys, smp in branch:
                    if isinstance(v, list):
                        kf = _key_field(type(v[0])) if v and isinstance(v[0], BaseModel) else None
                        if sel.kind == "all":
                            for i, it in enumerate(v):
                                k = _item_key(it, kf) if kf else str(i)
                                new_branch.append((it, p[:-1] + [f"{p[-1]}[{k}]"], keys + (k,),
                                                   _own_samples(it)))
                        elif sel.kind == "filter":
                            for i, it in enumerate(v):
                                if _filter_keeps(it, sel):
                                    k = _item_key(it, kf) if kf else str(i)
                                    new_branch.append((it, p[:-1] + [f"{p[-1]}[{k}]"],
                                                       keys + (k,),
                                                       _own_samples(it)))
                        else:
                            key = sel.key or ""
                            found = None
                            ftype = None
                            if kf and v:
                                ftype = type(getattr(v[0], kf))
                            if kf and ftype is not None and not (
                                    ftype is str and re.fullmatch(r"-?\d+", key)
                                    and all(str(getattr(x, kf)) != key for x in v)):
                                for it in v:
                                    if str(getattr(it, kf)) == key:
                                        found = it
                                        break
                                if found is None:
                                    raise MetricMissing(
                                        f"{'.'.join(p)}[{key}]: no item with {kf} {key} "
                                        f"(present: {_available(v, kf)})")
                            else:
                                try:
                                    found = v[int(key)]
                                except (ValueError, IndexError):
                                    raise MetricMissing(
                                        f"{'.'.join(p)}[{key}]: no such position "
                                        f"(the list has {len(v)} items)") from None
                            new_branch.append((found, p[:-1] + [f"{p[-1]}[{key}]"], keys,
                                               _own_samples(found)))
                    elif isinstance(v, dict):
                        sib = _samples_sibling(_fields(cls), seg.name)
                        sib_d = getattr(obj, sib) if sib else {}
                        if sel.kind in ("all", "filter"):
                            for k2, it in v.items():
                                if sel.kind == "filter" and not (
                                        isinstance(it, BaseModel) and _filter_keeps(it, sel)):
                                    continue
                                new_branch.append((it, p[:-1] + [f"{p[-1]}[{k2}]"],
                                                   keys + (str(k2),), sib_d.get(k2)))
                        else:
                            key = sel.key or ""
                            if key not in v:
                                present = ", ".join(map(str, v)) or "none"
                                raise MetricMissing(f"{'.'.join(p)}[{key}]: no such key "
                                                    f"(present: {present})")
                            new_branch.append((v[key], p[:-1] + [f"{p[-1]}[{key}]"], keys,
                                               sib_d.get(key)))
                    else:
                        raise MetricPathError(f"{'.'.join(p)} is not a list or dict")
                branch = new_branch
            for v, p, keys, smp in branch:
                if isinstance(v, BaseModel):
                    own3 = _own_samples(v)
                    smp2 = own3 if own3 is not None else smp
                    nxt.append(_Cursor(v, p, keys, smp2 if smp2 else None, None))
                else:
                    nxt.append(_Cursor(v, p, keys, smp if smp else None,
                                       stat if not seg.selectors else None))
        cursors = nxt
    out: list[Value] = []
    for c in cursors:
        arr = np.asarray(c.samples, dtype=np.float64) if c.samples and c.stat else None
        out.append(Value(".".join(c.parts), c.keys, c.obj, arr,
                         c.stat if arr is not None else None))
    return out


def evaluate_path(path: MetricPath, results: Any) -> list[Value]:
    """Resolve ``path`` and apply its function.

    Returns:
        for ``len``/``min``/``max``/``sum`` exactly one :class:`Value`; otherwise what
        :func:`resolve` returns.

    Raises:
        MetricPathError, MetricMissing: see :func:`resolve`; ``MetricMissing`` also for
        ``min``/``max`` over nothing.
    """
    vals = resolve(path, results)
    if path.func is None:
        return vals
    if path.func == "len":
        total = 0
        for v in vals:
            total += len(v.value) if isinstance(v.value, (list, dict)) else 1
        return [Value(path.text, (), total)]
    nums = [v.value for v in vals if isinstance(v.value, (int, float)) and
            not isinstance(v.value, bool)]
    if not nums:
        raise MetricMissing(f"{path.text}: no values to reduce")
    red = {"min": min, "max": max, "sum": sum}[path.func](nums)
    return [Value(path.text, (), red)]


# --------------------------------------------------------------------------- direction


LOWER = "lower"
HIGHER = "higher"

_HIGHER_WORDS = ("accuracy", "cosine", "similarity", "psnr", "snr", "top1", "top5",
                 "efficiency", "recall", "precision_score", "f1", "iou", "map", "speedup",
                 "gain", "agreement")
_LOWER_WORDS = ("error", "diff", "mse", "rmse", "mae", "loss", "fallback", "latency",
                "memory", "delay", "cv", "std", "mad", "iqr", "drift", "overhead")


def infer_direction(leaf: str) -> str | None:
    """Whether lower or higher values of a metric are better, from its name.

    ``_ms``/``_us``/``_ns``/``_s`` (durations), ``_bytes`` and names with error, diff,
    loss, latency, memory, cv, ... -> ``"lower"``; ``_per_s``, ``_qps``, and accuracy,
    cosine, similarity, psnr, top1, efficiency, ... -> ``"higher"``; ``len(...)``
    counts -> ``"lower"`` (fewer findings is better). ``None`` when the name says
    nothing (the policy must then give ``direction``).
    """
    name = leaf.lower()
    if name == "len":
        return LOWER
    if name.endswith(("_per_s", "_qps")) or name == "qps":
        return HIGHER
    if re.search(r"_(ms|us|ns|s|bytes)$", name) or _PCT_RE.fullmatch(name):
        return LOWER
    tokens = set(re.split(r"[_\W]+", name))
    if tokens & set(_HIGHER_WORDS):
        return HIGHER
    if tokens & set(_LOWER_WORDS):
        return LOWER
    return None


# --------------------------------------------------------------------------- units

_TIME_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0}
_BYTES = {"b": 1, "byte": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_RATE_NOUNS = {"samples": "samples", "sample": "samples", "images": "samples",
               "img": "samples", "queries": "queries", "query": "queries",
               "requests": "queries", "req": "queries", "inferences": "queries",
               "executions": "queries", "batches": "queries"}
_RATE_ALIASES = {"qps": "queries", "rps": "queries", "sps": "samples"}
#: ``X_per_s`` names whose X is not what is counted: they are request (query) rates
_REQUEST_RATE_NOUNS = ("rate", "instance", "gpu")
_ALL_UNITS = (list(_TIME_S) + ["B", "KB", "MB", "GB", "KiB", "MiB", "GiB", "TiB", "bytes"]
              + [f"{n}/s" for n in ("samples", "queries", "requests", "images")]
              + list(_RATE_ALIASES) + ["/s", "%"])

_QTY_RE = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


@dataclass(frozen=True)
class Unit:
    """The unit of a metric: ``dim`` is time, bytes, rate or none; ``base`` its scale
    (seconds per unit for time; the counted noun for rates)."""

    dim: str
    name: str = ""
    base: float = 1.0
    noun: str | None = None


def metric_unit(leaf: str) -> Unit:
    """Unit of a metric from its name suffix (``p99_ms`` -> ms, ``parameter_bytes`` ->
    bytes, ``throughput_samples_per_s`` -> samples/s); ``Unit("none")`` otherwise."""
    name = leaf.lower()
    m = re.search(r"(?:^|_)(\w+?)_per_s$", name)
    if m:
        noun = m.group(1).split("_")[-1]
        if noun in _REQUEST_RATE_NOUNS:  # rate_per_s, capacity_per_instance_per_s
            return Unit("rate", "requests/s", 1.0, "queries")
        return Unit("rate", f"{noun}/s", 1.0, _RATE_NOUNS.get(noun, noun))
    if name.endswith("_qps") or name == "qps":
        return Unit("rate", "queries/s", 1.0, "queries")
    if name.endswith("_bytes"):
        return Unit("bytes", "bytes", 1.0)
    m = re.search(r"_(ns|us|ms|s)$", name)
    if m:
        return Unit("time", m.group(1), _TIME_S[m.group(1)])
    return Unit("none")


class UnitError(ValueError):
    """A quantity whose unit is unknown or does not fit the metric."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_quantity(raw: Any, unit: Unit, what: str = "value") -> float:
    """Convert a policy value to the metric's own unit.

    Args:
        raw: a number (taken in the metric's unit) or a string ``"<number> <unit>"``
            (``"5 ms"``, ``"250us"``, ``"2 GiB"``, ``"1500 samples/s"``, ``"40 qps"``).
        unit: the metric's unit (:func:`metric_unit`).
        what: name used in messages.

    Returns:
        the value in the metric's unit (ms for ``_ms``, bytes for ``_bytes``, per second
        for rates).

    Raises:
        UnitError: not a number, unknown unit (with a close match), a unit of another
            dimension (``"5 ms"`` for a bytes metric), another counted noun
            (``queries/s`` for a ``samples_per_s`` metric), or a unit on a unitless metric.
    """
    if isinstance(raw, bool) or raw is None:
        raise UnitError(f"{what} must be a number, got {raw!r}")
    if isinstance(raw, (int, float)):
        if not math.isfinite(raw):
            raise UnitError(f"{what} must be a finite number, got {raw!r}")
        return float(raw)
    if not isinstance(raw, str):
        raise UnitError(f"{what} must be a number or a string like '5 ms', got "
                        f"{type(raw).__name__}")
    m = _QTY_RE.match(raw)
    if not m:
        raise UnitError(f"{what} {raw!r} is not a number with an optional unit",
                        "write e.g. 5, '5 ms', '2 GiB' or '1500 samples/s'")
    num = float(m.group(1))
    if not math.isfinite(num):  # '1e400' overflows to inf
        raise UnitError(f"{what} {raw!r} must be a finite number",
                        "write e.g. 5, '5 ms', '2 GiB' or '1500 samples/s'")
    u = m.group(2)
    if not u:
        return num
    ul = u.lower().replace(" ", "")
    if ul in _TIME_S or u in _TIME_S:
        factor = _TIME_S.get(u, _TIME_S.get(ul))
        if unit.dim != "time":
            raise UnitError(f"{what} {raw!r} is a duration but the metric is "
                            f"{_dim_words(unit)}", _unit_hint(unit))
        return num * factor / unit.base  # type: ignore[operator]
    if ul in _BYTES:
        if unit.dim != "bytes":
            raise UnitError(f"{what} {raw!r} is a size but the metric is {_dim_words(unit)}",
                            _unit_hint(unit))
        return num * _BYTES[ul]
    noun = None
    if ul in _RATE_ALIASES:
        noun = _RATE_ALIASES[ul]
    elif ul == "/s":
        noun = unit.noun or "any"
    elif ul.endswith("/s") and ul[:-2] in _RATE_NOUNS:
        noun = _RATE_NOUNS[ul[:-2]]
    if noun is not None:
        if unit.dim != "rate":
            raise UnitError(f"{what} {raw!r} is a rate but the metric is {_dim_words(unit)}",
                            _unit_hint(unit))
        if noun not in ("any", unit.noun):
            raise UnitError(f"{what} {raw!r} counts {noun} but the metric counts "
                            f"{unit.noun}", f"write '{m.group(1)} {unit.name}'")
        return num
    close = difflib.get_close_matches(u, _ALL_UNITS, n=1, cutoff=0.4)
    if close and close[0] == "s" and len(u) > 1:
        close = ["s"]
    raise UnitError(f"{what} {raw!r}: unknown unit {u!r}",
                    (f"did you mean {close[0]!r}? " if close else "") + _unit_hint(unit))


def _dim_words(unit: Unit) -> str:
    return {"time": f"a duration in {unit.name}", "bytes": "a size in bytes",
            "rate": f"a rate in {unit.name}", "none": "a plain number"}[unit.dim]


def _unit_hint(unit: Unit) -> str:
    return {"time": "durations take ns, us, ms or s (e.g. '5 ms')",
            "bytes": "sizes take B, KB, MB, GB, KiB, MiB or GiB (e.g. '2 GiB')",
            "rate": f"rates take {unit.name} (e.g. '1500 {unit.name}')",
            "none": "give a plain number"}[unit.dim]


def format_quantity(value: Any, unit: Unit) -> str:
    """Human form of a value in a metric's unit (``4.213 ms``, ``8.45 us``, ``1.5 GiB``,
    ``1,234 samples/s``); durations are shown in the unit that keeps them >= 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    v = float(value)
    if unit.dim == "bytes":
        from trtcheck.units import human_bytes
        return human_bytes(v)
    if unit.dim == "time":
        secs = v * unit.base  # shown in the unit that keeps 1..1000 when possible
        if secs == 0:
            return f"0 {unit.name}"
        for name in ("s", "ms", "us", "ns"):
            if abs(secs) >= _TIME_S[name] or name == "ns":
                return f"{secs / _TIME_S[name]:.4g} {name}"
    if unit.dim == "rate":
        return f"{v:,.1f} {unit.name}"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{v:.4g}"


# --------------------------------------------------------------------------- listing


def list_metrics(results: Any, max_items: int = 50) -> list[tuple[str, Any]]:
    """Every gateable value of a results document as ``(path, value)``, in model order.

    Paths use the short forms a policy would (``bench.batch[8].p99_ms`` for the primary
    run, ``bench[LABEL].batch[8].p99_ms`` for the others, stats fields directly on their
    record); raw sample lists are left out; lists of plain values appear as ``len(...)``;
    at most ``max_items`` entries of any one list or dict are listed.
    """
    out: list[tuple[str, Any]] = []

    def join(prefix: str, name: str) -> str:
        return f"{prefix}.{name}" if prefix else name

    def walk(obj: Any, prefix: str) -> None:
        cls = type(obj)
        sfield = _stats_field(cls)
        skip = set(SAMPLES_FIELDS) | {"warmup_samples_ms"}
        for name, info in _fields(cls).items():
            val = getattr(obj, name)
            if val is None or name in skip:
                continue
            if name == sfield and isinstance(val, BaseModel):
                walk(val, prefix)  # stats shorthand
                continue
            path = join(prefix, name)
            if isinstance(val, BaseModel):
                walk(val, path)
            elif isinstance(val, list):
                if not val or not isinstance(val[0], BaseModel):
                    if not (info.item is not None and info.item.numeric and name.endswith("_ms")):
                        out.append((f"len({path})", len(val)))
                    continue
                kf = _key_field(type(val[0]))
                short = join(prefix, _singular(name)) if name.endswith("s") and kf not in (
                    None, "label") else path
                out.append((f"len({path})", len(val)))
                for i, item in enumerate(val[:max_items]):
                    if kf == "label":
                        walk(item, path if i == 0 else f"{path}[{getattr(item, kf)}]")
                    elif kf is not None:
                        walk(item, f"{short}[{getattr(item, kf)}]")
                    else:
                        walk(item, f"{path}[{i}]")
            elif isinstance(val, dict):
                for k, v in list(val.items())[:max_items]:
                    key = k if str(k) else "''"
                    if isinstance(v, BaseModel):
                        walk(v, f"{path}[{key}]")
                    elif isinstance(v, (int, float, str, bool)):
                        out.append((f"{path}[{key}]", v))
            elif isinstance(val, (int, float, str, bool)):
                out.append((path, val))

    walk(results, "")
    return out
