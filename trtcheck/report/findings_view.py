"""Findings as a report shows them: one entry per kind, listing where each applies.

A sweep repeats one warning per batch size or configuration (``unstable-cv`` at batch 1,
2, 4, 8 and 16); :func:`group_findings` folds them into one entry per code, keeps the
first message as the example, names every place it applies and fits the remedy to the
device (:func:`trtcheck.analyze.derived.verdict.fit_remedy`: no ``nvidia-smi`` on a CPU run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trtcheck.analyze.derived import fit_remedy


@dataclass(frozen=True)
class FindingGroup:
    """Findings of one code: ``severity`` (the worst of them), ``code``, ``message`` (the
    first one's), ``count``, ``where`` (the places, joined compactly: ``batch 1, 2, 4``)
    and ``remedy``."""

    code: str
    severity: str
    message: str
    count: int
    where: str
    remedy: str | None


_RANK = {"error": 0, "warning": 1, "info": 2}


def compact_where(places: list[str]) -> str:
    """``["batch 1", "batch 4"]`` -> ``"batch 1, 4"``; other places joined with ``"; "``."""
    if places and all(p.startswith("batch ") for p in places):
        return "batch " + ", ".join(p[len("batch "):] for p in places)
    return "; ".join(places)


def group_findings(findings: list[Any], gpu: bool) -> list[FindingGroup]:
    """One :class:`FindingGroup` per finding code, in order of first appearance.

    Args:
        findings: ``trtcheck.results.Finding`` records.
        gpu: whether the run used a GPU (remedies naming GPU tools are kept only then).
    """
    groups: dict[str, list[Any]] = {}
    for f in findings:
        groups.setdefault(f.code, []).append(f)
    out = []
    for code, fs in groups.items():
        places: list[str] = []
        for f in fs:
            if f.where and f.where not in places:
                places.append(f.where)
        worst = min(fs, key=lambda f: _RANK.get(f.severity, 1))
        out.append(FindingGroup(code=code, severity=worst.severity, message=fs[0].message,
                                count=len(fs), where=compact_where(places),
                                remedy=fit_remedy(fs[0].remedy, gpu)))
    return out


def device_is_gpu(device: str) -> bool:
    """Whether a backend's device text names a GPU (``cuda:0 (NVIDIA H200)``)."""
    d = device.lower()
    return "cuda" in d or "gpu" in d
