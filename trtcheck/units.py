"""Quantities with units, in one place: human formatting for the CLI and reports, and the
units of results metrics (which unit a metric is in, reading a number with a unit from a
policy, writing it back), converted only here.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from typing import Any


def si(value: float | None, unit: str = "") -> str:
    """Decimal SI prefixes, 3 significant digits: ``1.82e9, "MACs"`` -> ``"1.82 GMACs"``.

    ``None`` gives ``"-"``; values under 1000 print as integers (``"512 MACs"``).
    """
    if value is None:
        return "-"
    v = float(value)
    for prefix in ("", "K", "M", "G", "T", "P"):
        if abs(v) < 1000 or prefix == "P":
            text = f"{v:.0f}" if prefix == "" else f"{v:.3g}"
            return f"{text} {prefix}{unit}".rstrip()
        v /= 1000
    return str(value)  # pragma: no cover


def sig(value: float | None, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, never in exponent notation where it
    is at least 1: ``1184.2`` -> ``"1184"``, ``0.6891`` -> ``"0.689"``, ``12.0`` -> ``"12"``;
    ``None`` -> ``"-"``. Values of ``10 ** digits`` and above keep every integer digit."""
    if value is None:
        return "-"
    v = float(value)
    text = format(v, f".{digits}g")
    if "e+" in text:
        return f"{v:.0f}"
    return text


def human_bytes(n: int | float | None) -> str:
    """Bytes in binary units (IEC): ``535412`` -> ``"522.9 KiB"``; ``None`` -> ``"-"``."""
    if n is None:
        return "-"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return f"{n} B"  # pragma: no cover


def terminal_safe(text: object) -> str:
    """``text`` for a terminal or a plain-text/Markdown output: every non-printable
    character shown as its Python escape (``\\x1b``, ``\\r``, ``\\n``, ``\\x00``,
    ``\\u202e``), every printable one (any script, accents, CJK) kept as it is.

    Names and strings from files the user gave (model file names, layer and tensor names
    inside ONNX models or engine JSON, YAML policy strings) are untrusted: raw, an ANSI
    escape could recolour or clear the terminal, ``\\r`` overwrite a line, a bidi override
    reorder it, a newline forge an extra line (e.g. a passing verdict). "Printable" is
    :meth:`str.isprintable` (Unicode categories other than Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs,
    ASCII space allowed). JSON needs none of this (it escapes control characters itself),
    nor does HTML rendered with autoescape.
    """
    s = str(text)
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in s)


def terminal_safe_lines(text: str) -> str:
    """:func:`terminal_safe` on each line of ``text``, keeping its line breaks (``\\n``):
    for whole renderings built from lines that may hold untrusted strings."""
    return "\n".join(terminal_safe(line) for line in text.split("\n"))


def int_ranges(values: list[int] | tuple[int, ...]) -> str:
    """Integers as compact ranges: ``[1, 2, 3, 7, 9, 10]`` -> ``"1-3, 7, 9-10"`` (sorted,
    duplicates removed; ``""`` for none)."""
    vs = sorted(set(int(v) for v in values))
    parts: list[str] = []
    i = 0
    while i < len(vs):
        j = i
        while j + 1 < len(vs) and vs[j + 1] == vs[j] + 1:
            j += 1
        parts.append(f"{vs[i]}" if i == j else f"{vs[i]}-{vs[j]}")
        i = j + 1
    return ", ".join(parts)


# --------------------------------------------------------------------------- durations in us

US_PER_MS = 1000.0
"""Microseconds per millisecond."""

S_PER_US = 1e-6
"""Seconds per microsecond."""


def ms_to_us(ms: float, ndigits: int | None = 3) -> float:
    """A duration given in milliseconds (``--window-ms``, a window in a schema-1.x results
    file, a gate filter ``window_ms=2``) in microseconds, the one unit of the batching
    window inside trtcheck (Triton's ``max_queue_delay_microseconds``).

    A setting is rounded to ``ndigits`` decimals of a microsecond (default 3: the
    nanosecond) so that a decimal millisecond value gives the decimal microsecond value a
    user writes back in a filter (``0.3`` -> ``300.0``, not ``300.00000000000006``);
    ``ndigits=None`` keeps the exact product (a computed duration).
    """
    us = float(ms) * US_PER_MS
    return us if ndigits is None else round(us, ndigits)


def us_to_ms(us: float) -> float:
    """A duration in microseconds in milliseconds, for text (``2000.0`` -> ``2.0``)."""
    return float(us) / US_PER_MS


def us_to_s(us: float) -> float:
    """A duration in microseconds in seconds, for clock arithmetic (``time.monotonic()``,
    the simulator's clock): ``2000.0`` -> ``0.002``."""
    return float(us) * S_PER_US


# --------------------------------------------------------------------------- metric units

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


MAX_DURATION_MS = 1e7
"""Longest duration accepted for a latency-curve time, an overhead or a P99 objective, ms
(10^7 ms = 2.8 hours: longer is no serving latency)."""

MAX_DURATION_S = MAX_DURATION_MS / 1000.0
"""The same bound in seconds, for the measuring time options (``--warmup``,
``--min-duration``, ``--max-duration``, ``--duration-s``, ``--drain-timeout-s``)."""
