"""Human formatting of quantities with units (one implementation for CLI and reports)."""

from __future__ import annotations


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
