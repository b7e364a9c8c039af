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
