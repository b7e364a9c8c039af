"""Metric path checks against the results schema (no results document needed): which
fields a path may name, the folded dotted dict keys, every path a policy can use, and
whether lower or higher is better for a metric (its direction). The grammar is
:mod:`trtcheck.analyze.gate.metricpath.metric_grammar`; resolving a path in a document is
:mod:`trtcheck.analyze.gate.metricpath.metric_resolver`.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from trtcheck.analyze.gate.metricpath.metric_grammar import (
    COMPARISON_RE,
    PCT_RE,
    KEY_FIELDS,
    LEGACY_FILTER_FIELDS,
    SAMPLES_FIELDS,
    MetricPath,
    MetricPathError,
    Segment,
    Selector,
    comparison_error,
    percentile_of,
    stat_kind,
)


@dataclass(frozen=True)
class TypeInfo:
    """Static shape of a model field: ``kind`` is record, list, dict or scalar."""

    kind: str
    cls: type[BaseModel] | None = None
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


def record_fields(cls: type[BaseModel]) -> dict[str, Any]:
    """The pydantic fields of record class ``cls`` (name -> ``FieldInfo``), typed the same
    under every pydantic 2 release this package allows."""
    fields: dict[str, Any] = getattr(cls, "model_fields")
    return fields


def model_field_types(cls: type[BaseModel]) -> dict[str, TypeInfo]:
    """The fields of the results record class ``cls``: name -> :class:`TypeInfo`."""
    fields = record_fields(cls)
    return {n: type_info(f.annotation) for n, f in fields.items()}


def key_field(cls: type[BaseModel] | None) -> str | None:
    """The field that names the items of a list of ``cls`` records (the first of
    :data:`KEY_FIELDS` it has), or ``None``."""
    if cls is None:
        return None
    names = record_fields(cls)
    for k in KEY_FIELDS:
        if k in names:
            return k
    return None


def _samples_field(cls: type[BaseModel] | None) -> str | None:
    """The raw-samples field of a record class (``samples_ms``, ``latencies_ms``), if any."""
    if cls is None:
        return None
    flds = model_field_types(cls)
    for name in SAMPLES_FIELDS:
        t = flds.get(name)
        if t is not None and t.kind == "list" and t.item is not None and t.item.numeric:
            return name
    return None


def own_samples(obj: Any) -> list[float] | None:
    """The raw samples a record carries beside its statistics (a list), or ``None``."""
    name = _samples_field(type(obj)) if isinstance(obj, BaseModel) else None
    val = getattr(obj, name, None) if name else None
    return val if isinstance(val, list) else None


def stats_field(cls: type[BaseModel] | None) -> str | None:
    """The latency-statistics sub-record whose fields are reachable directly: ``stats``,
    or else the first record field that has ``median_ms`` and ``p99_ms`` (``latency``)."""
    if cls is None:
        return None
    flds = model_field_types(cls)
    cands = [n for n, t in flds.items() if t.kind == "record" and t.cls is not None
             and {"median_ms", "p99_ms"} <= set(record_fields(t.cls))]
    if "stats" in cands:
        return "stats"
    return cands[0] if cands else None


@dataclass(frozen=True)
class _Step:
    """How a NAME resolves on a record class: a chain of fields or a computed percentile."""

    fields: tuple[str, ...]
    info: TypeInfo
    percentile: float | None = None


def lookup(cls: type, name: str, has_samples: bool) -> _Step:
    """One step of a metric path: the field ``name`` of ``cls``, its plural list, or a field
    of its latency-statistics sub-record, or a ``pNN_ms`` computed from raw samples
    (``has_samples``: a record above keeps them).

    Raises:
        MetricPathError: no such field, or a percentile with no raw samples to compute it."""
    flds = model_field_types(cls)
    if name in flds:
        return _Step((name,), flds[name])
    for plural in (name + "s", name + "es"):
        if plural in flds and flds[plural].kind == "list":
            return _Step((plural,), flds[plural])
    sname = stats_field(cls)
    stats = flds.get(sname) if sname else None
    if stats is not None and stats.cls is not None:
        sub = model_field_types(stats.cls)
        if name in sub:
            return _Step((sname, name), sub[name])  # type: ignore[arg-type]
    q = percentile_of(name)
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
    cands += [singular(n) for n, t in flds.items() if t.kind == "list" and n.endswith("s")]
    if stats is not None and stats.cls is not None:
        cands += list(model_field_types(stats.cls))
    raise MetricPathError(f"{cls.__name__} has no field {name!r}", _did_you_mean(name, cands))


def singular(name: str) -> str:
    """The singular of a plural field name (``batches`` -> ``batch``, ``configs`` -> ``config``)."""
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


def samples_sibling(flds: dict[str, TypeInfo], dict_field: str) -> str | None:
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
                and key_field(cur.item.cls) == "label":
            cur = cur.item
        if cur.kind != "record" or cur.cls is None:
            return path
        try:
            info = lookup(cur.cls, seg.name, True).info
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
                and key_field(cur.item.cls) == "label":
            cur = cur.item  # implicit primary item of a list of labelled runs
        if cur.kind != "record" or cur.cls is None:
            raise MetricPathError(f"{where} is a {cur.describe()}, it has no field "
                                  f"{seg.name!r}", "select one item with [KEY] first"
                                  if cur.kind in ("list", "dict") else None)
        step = lookup(cur.cls, seg.name, has_samples)
        parent_fields = model_field_types(cur.cls)
        parent_has_samples = _samples_field(cur.cls) is not None
        if step.percentile is not None:
            info = step.info
            sample_backed = True
        else:
            info = step.info
            if step.fields[0] == stats_field(cur.cls):
                has_samples = has_samples or parent_has_samples
            elif info.kind == "record" and info.cls is not None:
                has_samples = _samples_field(info.cls) is not None
            sample_backed = (has_samples or parent_has_samples) and info.kind == "scalar" \
                and stat_kind(step.fields[-1]) is not None
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
                    cm = COMPARISON_RE.match(sel.key)
                    field = cm.group("field").split(".")[0] if cm else ""
                    if field in record_fields(item.cls) or field in LEGACY_FILTER_FIELDS:
                        raise comparison_error(sel.key, path.text)
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
                sib = samples_sibling(parent_fields, seg.name) if step.fields else None
                has_samples = sib is not None
                info = info.item or TypeInfo("scalar")
            elif prev is not None and info.kind == "record":
                # [a=1][b=2]: the first selector already chose records of the list
                both = prev.kind == "filter" and sel.kind == "filter"
                combined = "[" + ",".join(f"{f}={v}" for f, v in
                                          prev.shown() + sel.shown()) + "]"
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
        names = sorted(record_fields(cur.cls)) if cur.cls is not None else []
        extra = (" (or a stats field: median_ms, p99_ms, ...)" if stats_field(cur.cls) else "")
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
            flds = model_field_types(cls)
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
                f"{fpath}.{n}" for n in list(record_fields(t.cls))[:6])
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
        for name, info in model_field_types(cls).items():
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
    if re.search(r"_(ms|us|ns|s|bytes)$", name) or PCT_RE.fullmatch(name):
        return LOWER
    tokens = set(re.split(r"[_\W]+", name))
    if tokens & set(_HIGHER_WORDS):
        return HIGHER
    if tokens & set(_LOWER_WORDS):
        return LOWER
    return None
