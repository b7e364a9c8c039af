"""Metric path grammar: the language that names a number in the results model (parsing only).

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
condition (``serve.configs[window_us=0,max_batch_size=8]``); ``FIELD`` may name a field of
a sub-record (``serve.configs[load.kind=burst]``); ``[KEY]`` the item whose *key field*
equals KEY. Numbers compare as numbers (``[window_us=0]`` keeps ``0.0``), other values as
case-insensitive text; a value that cannot match the field's type (text for a number,
not ``true``/``false`` for a flag) is an error, never a filter matching nothing. Selectors
nest at any depth (``serve.configs[window_us=0].repeats[repeat=1].waterfall[name=compute_ms]
.median_ms``). Two selectors on one list (``[a=1][b=2]``) are an error naming the
comma form.
A filter on a field of an earlier results schema that the current one holds in another
unit is read in the current field's unit (:data:`LEGACY_FILTER_FIELDS`): the batching
window was ``window_ms`` (milliseconds) before schema 2.0 and is ``window_us``
(microseconds) since, so ``[window_ms=2]`` selects what ``[window_us=2000]`` does.
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
from collections.abc import Callable
from dataclasses import dataclass

from trtcheck.units import ms_to_us



FUNCTIONS = ("len", "min", "max", "sum")
KEY_FIELDS = ("batch_size", "label", "name", "code", "id", "index")
SAMPLES_FIELDS = ("samples_ms", "latencies_ms")
"""Names of raw-sample fields (lists of floats, ms) that statistics derive from."""

#: Filter fields of earlier results schemas -> (the current field, the conversion of a
#: value from the old unit to the current one). Policies written for schema 1.x keep
#: working.
LEGACY_FILTER_FIELDS: dict[str, tuple[str, Callable[[float], float]]] = {
    "window_ms": ("window_us", ms_to_us)}

PCT_RE = re.compile(r"p(\d+(?:\.\d+)?)_ms")
"""A percentile field name, ``p99_ms`` (group 1: the percent, ``99``)."""
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


@dataclass(frozen=True)
class Selector:
    """One ``[...]`` selector: ``kind`` is ``"all"``, ``"key"`` or ``"filter"``.

    A filter holds its conditions in ``conds`` (``(field, value)`` pairs, all of which
    must hold; a field may be dotted, ``load.kind``); ``field``/``value`` are the first
    condition. ``written`` holds the conditions as the user wrote them when that differs
    (a field of an earlier schema, :data:`LEGACY_FILTER_FIELDS`): messages show those.
    """

    kind: str
    key: str | None = None
    field: str | None = None
    value: str | None = None
    conds: tuple[tuple[str, str], ...] = ()
    written: tuple[tuple[str, str], ...] = ()

    def conditions(self) -> tuple[tuple[str, str], ...]:
        """Every ``(field, value)`` condition of a filter (empty for other kinds)."""
        if self.conds:
            return self.conds
        if self.kind == "filter" and self.field is not None:
            return ((self.field, self.value or ""),)
        return ()

    def shown(self) -> tuple[tuple[str, str], ...]:
        """The conditions as the user wrote them (for messages)."""
        return self.written or self.conditions()

    def text(self) -> str:
        if self.kind == "all":
            return "[*]"
        if self.kind == "filter":
            return "[" + ",".join(f"{f}={v}" for f, v in self.shown()) + "]"
        return f"[{self.key}]"


_FIELD_PATH_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def opens_quote(text: str, i: int) -> bool:
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
        elif opens_quote(text, i):
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
        elif opens_quote(body, j):
            quote = ch
        elif ch == "]":
            return j
    return -1


COMPARISON_RE = re.compile(r"\s*(?P<field>[A-Za-z_][\w.]*)\s*(!=|<=|>=|<|>)")
"""``FIELD<op>`` at the start of a selector: a comparison, which filters do not support."""


def comparison_error(inner: str, raw: str) -> MetricPathError:
    """The error for a filter ``[inner]`` of path ``raw`` that compares (filters test
    equality only)."""
    return MetricPathError(f"filter [{inner}] in {raw!r}: filters test equality only "
                           "(FIELD=VALUE)", "select the items with [*] and gate each "
                           "value, e.g. serve.configs[*].p99_ms <= 5 ms")


def _parse_filter(inner: str, raw: str) -> Selector:
    """``FIELD=VALUE[,FIELD=VALUE...]`` -> a filter selector (see the module grammar)."""
    example = "e.g. serve.configs[window_us=0,max_batch_size=8].p99_ms"
    conds: list[tuple[str, str]] = []
    written: list[tuple[str, str]] = []  # the conditions as written, for the messages
    for part in _split_unquoted(inner, ","):
        if COMPARISON_RE.match(part):
            raise comparison_error(inner, raw)
        if "=" not in part:
            raise MetricPathError(f"bad filter [{inner}] in {raw!r}: {part.strip()!r} is not "
                                  "FIELD=VALUE", "separate conditions with commas, each "
                                  "FIELD=VALUE (quote a value holding a comma); " + example)
        f, v = (x.strip() for x in part.split("=", 1))
        quoted = len(v) >= 2 and v[0] == v[-1] and v[0] in "'\""
        if not _FIELD_PATH_RE.fullmatch(f) or not v:
            raise MetricPathError(f"bad filter [{inner}] in {raw!r}",
                                  "filters look like [code=drift] or [window_us=0,"
                                  "max_batch_size=8]")
        if not quoted and "=" in v:
            raise MetricPathError(f"bad filter [{inner}] in {raw!r}: the value {v!r} holds "
                                  "'='", "combine conditions with commas, not words: "
                                  + example)
        written.append((f, v[1:-1] if quoted else v))
        conds.append(_current_field(*written[-1]))
    fields = [c[0] for c in conds]
    dup = sorted({f for f in fields if fields.count(f) > 1})
    if dup:
        same = sorted({w[0] for w, c in zip(written, fields) if c == dup[0]})
        raise MetricPathError(f"filter [{inner}] in {raw!r} tests {' and '.join(same)} twice"
                              if len(same) == 1 else
                              f"filter [{inner}] in {raw!r} tests one field twice "
                              f"({' and '.join(same)} name the same field)",
                              "an item has one value per field: keep one condition")
    return Selector("filter", field=conds[0][0], value=conds[0][1], conds=tuple(conds),
                    written=tuple(written) if written != conds else ())


def _current_field(fpath: str, value: str) -> tuple[str, str]:
    """A filter condition on a field of an earlier schema (:data:`LEGACY_FILTER_FIELDS`)
    as the condition on the current field, its number converted to the current unit
    (``window_ms``, ``"2"`` -> ``window_us``, ``"2000.0"``); any other condition as it is.

    Raises:
        MetricPathError: the value of such a field is not a number (it could not be
            converted; the message names the field as written).
    """
    *head, name = fpath.split(".")
    if name not in LEGACY_FILTER_FIELDS:
        return fpath, value
    new, convert = LEGACY_FILTER_FIELDS[name]
    try:
        number = float(value)
    except ValueError:
        raise MetricPathError(f"filter [{fpath}={value}]: {name} is a number, {value!r} is "
                              "not, so nothing could match",
                              f"write a plain number, e.g. [{name}=2] (the results hold "
                              f"{new})") from None
    # converted as the option was (--window-ms 0.3 and [window_ms=0.3] agree)
    converted = repr(convert(number)) if math.isfinite(number) else value
    return ".".join([*head, new]), converted


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


def percentile_of(name: str) -> float | None:
    """``p99_ms`` -> 0.99 (a fraction); ``None`` when ``name`` is not a percentile field."""
    m = PCT_RE.fullmatch(name)
    return float(m.group(1)) / 100.0 if m else None


def stat_kind(name: str) -> tuple[str, float] | None:
    """Which statistic of raw samples a stored field is (``("quantile", 0.99)``...)."""
    if name == "median_ms":
        return ("quantile", 0.5)
    if name == "mean_ms":
        return ("mean", 0.0)
    if name == "min_ms":
        return ("quantile", 0.0)
    if name == "max_ms":
        return ("quantile", 1.0)
    q = percentile_of(name)
    if q is not None:
        return ("quantile", q)
    if name.startswith("throughput_") and name.endswith("_per_s"):
        return ("inverse_median", 0.5)
    return None
