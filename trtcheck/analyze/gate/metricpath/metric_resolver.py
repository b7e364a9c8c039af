"""Metric path resolution: the values a checked path reaches in one results document,
statistics computed from raw samples, and the listing of every gateable value
(``trtcheck gate --list-metrics``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel

from trtcheck.analyze.gate.metricpath.metric_checks import (
    model_field_types,
    key_field,
    lookup,
    own_samples,
    samples_sibling,
    singular,
    stats_field,
)
from trtcheck.analyze.gate.metricpath.metric_grammar import (
    SAMPLES_FIELDS,
    MetricMissing,
    MetricPath,
    MetricPathError,
    Selector,
    percentile_of,
    stat_kind,
)
from trtcheck.stats import PERCENTILE_METHODS, numpy_quantile_method


def _recorded_percentile_method(obj: Any) -> str:
    """The ``percentile_method`` recorded with a record's latency statistics (on the
    record itself, or on its statistics sub-record); ``"linear"`` where none is recorded
    (files from before the field existed were computed with it)."""
    for rec in (obj, getattr(obj, stats_field(type(obj)) or "", None)
                if isinstance(obj, BaseModel) else None):
        method = getattr(rec, "percentile_method", None)
        if method in PERCENTILE_METHODS:
            return method
    return "linear"


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
            method: Any = numpy_quantile_method(self.method)  # a NumPy method name
            return np.quantile(samples, self.q, axis=axis, method=method)
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


def _quote_filter_value(text: str) -> str:
    """``text`` as a filter value: quoted where it holds a character the selector
    grammar reads (``,``, ``]``, ``[``, ``=``, quotes, leading/trailing spaces)."""
    if not text or text != text.strip() or any(ch in text for ch in ",[]='\""):
        q = "'" if "'" not in text else '"'
        return f"{q}{text}{q}"
    return text


def _match_key(item: Any) -> str | None:
    """The key of a list item without a key field whose class declares ``match_fields``
    (a serve configuration): the filter that selects it, ``FIELD=VALUE`` joined by
    commas, fields whose value is ``None`` left out; ``None`` for other items."""
    names = getattr(type(item), "match_fields", None)
    if not names:
        return None
    conds = []
    for name in names:
        v = _filter_item_value(item, name)
        if v is None:
            continue
        shown = str(v)
        if isinstance(v, float):  # 2000.0 -> "2000"; a value :g would round keeps repr
            shown = f"{v:g}" if float(f"{v:g}") == v else repr(v)
        conds.append(f"{name}={_quote_filter_value(shown)}")
    return ",".join(conds)


def _position_key(item: Any, kf: str | None, i: int, items: list[Any]) -> str:
    """The key ``[*]``/a filter gives a list item: its key field, else its
    ``match_fields`` filter when no other item of ``items`` has the same one, else its
    position."""
    if kf:
        return _item_key(item, kf)
    key = _match_key(item)
    if key is None or sum(_match_key(x) == key for x in items) > 1:
        return str(i)
    return key


def _available(items: list[Any], kf: str | None) -> str:
    if kf:
        return f"{kf} " + ", ".join(str(getattr(x, kf)) for x in items) if items else "none"
    return f"{len(items)} items"


def _filter_match(field_value: Any, text: Any) -> bool:
    """Whether a filter ``[FIELD=VALUE]`` keeps an item: numbers compare as numbers
    (``[window_us=0]`` keeps ``0.0``), everything else as case-insensitive text."""
    if isinstance(field_value, (int, float)) and not isinstance(field_value, bool):
        try:
            return float(field_value) == float(str(text))
        except ValueError:
            return False
    return str(field_value).lower() == str(text).lower()


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


def _single_repeat(obj: Any, fname: str, value: Any) -> Any | None:
    """The one repeat whose statistic ``fname`` a record's ``fname`` is, else ``None``.

    A serve configuration's latency fields are medians over its repeats; with a single
    repeat (``serve --url`` runs one by default) the field *is* that repeat's statistic,
    so its raw latencies certify it. Returned only when the record has exactly one
    repeat, the repeat keeps raw samples, and its own ``fname`` equals ``value``.
    """
    reps = getattr(obj, "repeats", None)
    if not isinstance(reps, list) or len(reps) != 1 or not isinstance(reps[0], BaseModel):
        return None
    rep = reps[0]
    if not own_samples(rep):
        return None
    try:
        step = lookup(type(rep), fname, True)
    except MetricPathError:
        return None
    rv: Any = rep
    if step.percentile is not None:  # p50_ms of a repeat: computed from its samples
        rv = float(SampleStat("quantile", step.percentile,
                              method=_recorded_percentile_method(rep)).of(
            np.asarray(own_samples(rep), dtype=np.float64)))
    for f in step.fields:
        rv = getattr(rv, f, None)
        if rv is None:
            return None
    if not isinstance(rv, (int, float)) or isinstance(rv, bool) \
            or not math.isclose(float(rv), float(value), rel_tol=1e-9, abs_tol=1e-12):
        return None
    return rep


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
                    and key_field(type(obj[0])) == "label":
                obj = obj[0]
            if not isinstance(obj, BaseModel):
                raise MetricPathError(f"{'.'.join(parts) or 'results'} has no field {seg.name!r}")
            cls = type(obj)
            has_samples = c.samples is not None
            step = lookup(cls, seg.name, has_samples)
            own = own_samples(obj)
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
                    own2 = own_samples(val)
                    if own2 is not None:
                        samples = own2
                    elif step.fields[0] != stats_field(cls):
                        samples = None
                sk = stat_kind(fname)
                method_of = obj
                if sk is not None and not samples and sk[0] != "inverse_median" \
                        and isinstance(val, (int, float)) and not isinstance(val, bool):
                    single = _single_repeat(obj, fname, val)
                    if single is not None:
                        method_of, samples = single, own_samples(single)
                if sk is not None and samples and isinstance(val, (int, float)):
                    kind, q = sk
                    if kind == "inverse_median":
                        med = float(np.quantile(np.asarray(samples, dtype=np.float64), 0.5))
                        stat = SampleStat(kind, 0.5, float(val) * med)
                    elif percentile_of(fname) is not None:  # p90_ms, p99_ms, ...
                        stat = SampleStat(kind, q,
                                          method=_recorded_percentile_method(method_of))
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
                        kf = key_field(type(v[0])) if v and isinstance(v[0], BaseModel) else None
                        if sel.kind == "all":
                            for i, it in enumerate(v):
                                k = _position_key(it, kf, i, v)
                                new_branch.append((it, p[:-1] + [f"{p[-1]}[{k}]"], keys + (k,),
                                                   own_samples(it)))
                        elif sel.kind == "filter":
                            for i, it in enumerate(v):
                                if _filter_keeps(it, sel):
                                    k = _position_key(it, kf, i, v)
                                    new_branch.append((it, p[:-1] + [f"{p[-1]}[{k}]"],
                                                       keys + (k,),
                                                       own_samples(it)))
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
                                               own_samples(found)))
                    elif isinstance(v, dict):
                        sib = samples_sibling(model_field_types(cls), seg.name)
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
                    own3 = own_samples(v)
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
    reduce: dict[str, Callable[[list[float]], float]] = {"min": min, "max": max, "sum": sum}
    red = reduce[str(path.func)](nums)
    return [Value(path.text, (), red)]


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
        sfield = stats_field(cls)
        skip = set(SAMPLES_FIELDS) | {"warmup_samples_ms"}
        for name, info in model_field_types(cls).items():
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
                kf = key_field(type(val[0]))
                short = join(prefix, singular(name)) if name.endswith("s") and kf not in (
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
