"""The verdict as people read it: first in report.html, report.md and ``report``'s stdout.

:func:`verdict_view` turns the stored :class:`~trtcheck.results.verdict.Verdict` into a
typed view model (the few deciding reasons, each with the section it links to);
:func:`render_verdict_text` prints it for a terminal. The HTML and Markdown blocks are the
templates ``verdict.html.j2`` and ``verdict.md.j2`` rendered from the same view.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trtcheck.report.findings_view import compact_where
from trtcheck.results.verdict import Verdict

MAX_REASONS_SHOWN = 5
"""Deciding reasons shown in full; the rest are counted ("and 3 more below")."""

STATUS_WORDS = {"ready": "Ready", "ready_with_warnings": "Ready with warnings",
                "cannot_tell": "Cannot tell", "not_ready": "Not ready"}
"""Each status in words."""

SECTION_TITLES = {"summary": "Summary", "inspection": "Model inspection",
                  "bench": "Latency and throughput", "engine": "Engine",
                  "precision": "Precision", "serve": "Serving", "advice": "Batching advice",
                  "tune": "Tune", "verdict": "Verdict"}
"""Link text for each section anchor a reason may point to."""


@dataclass(frozen=True)
class ReasonView:
    """One reason as shown: ``effect`` (``not_ready``, ``cannot_tell``, ``warning``,
    ``info``), its sentence, what to do, the section anchor and its title, and where it
    applies (batch sizes, variants), already joined."""

    effect: str
    label: str
    message: str
    remedy: str | None
    section: str
    section_title: str
    where: str


@dataclass(frozen=True)
class VerdictView:
    """The verdict block: status (machine value and words), headline, the deciding
    reasons (at most :data:`MAX_REASONS_SHOWN`), how many more were left out, and the
    serving advice headline (an ``info`` reason) when there is one; ``notes``: the other
    ``info`` reasons (findings about a runtime that is not the target), and ``target``:
    the deployment target judged for, in words."""

    status: str
    status_words: str
    headline: str
    reasons: list[ReasonView] = field(default_factory=list)
    more: int = 0
    advice: ReasonView | None = None
    gate_policy: str | None = None
    notes: list[ReasonView] = field(default_factory=list)
    target: str | None = None


_TARGET_WORDS = {"tensorrt": "TensorRT", "tensorrt_rtx": "TensorRT-RTX",
                 "onnxruntime": "ONNX Runtime", "triton": "Triton Inference Server"}

_EFFECT_LABELS = {"not_ready": "blocks", "cannot_tell": "undecided", "warning": "warning",
                  "info": "note"}


def _reason(r: object) -> ReasonView:
    section = getattr(r, "section")
    where = list(getattr(r, "where"))
    shown = compact_where(where[:8]) + (f" and {len(where) - 8} more" if len(where) > 8
                                        else "")
    return ReasonView(effect=getattr(r, "effect"), label=_EFFECT_LABELS[getattr(r, "effect")],
                      message=getattr(r, "message"), remedy=getattr(r, "remedy"),
                      section=section, section_title=SECTION_TITLES.get(section, section),
                      where=shown)


def _sentence(r: ReasonView) -> ReasonView:
    """``r`` with its message starting with a capital letter (shown on its own)."""
    from dataclasses import replace

    return replace(r, message=r.message[:1].upper() + r.message[1:])


def verdict_view(verdict: Verdict) -> VerdictView:
    """The view model of ``verdict`` (nothing is judged here; see
    :func:`trtcheck.analyze.derived.verdict.judge`)."""
    deciding = [r for r in verdict.reasons if r.effect != "info"]
    infos = [r for r in verdict.reasons if r.effect == "info"]
    advice = next((r for r in infos if r.kind == "advice"), None)
    return VerdictView(status=verdict.status,
                       status_words=STATUS_WORDS.get(verdict.status, verdict.status),
                       headline=verdict.headline,
                       reasons=[_reason(r) for r in deciding[:MAX_REASONS_SHOWN]],
                       more=max(0, len(deciding) - MAX_REASONS_SHOWN),
                       advice=_sentence(_reason(advice)) if advice is not None else None,
                       gate_policy=verdict.gate_policy,
                       notes=[_sentence(_reason(r)) for r in infos if r.kind != "advice"],
                       target=_TARGET_WORDS.get(verdict.target or "", verdict.target))


def render_verdict_text(verdict: Verdict, report_html: str | None = None) -> str:
    """The verdict for a terminal: the status line, then each deciding reason with what
    to do and the report section that shows it, then the serving advice headline.

    Args:
        verdict: the stored verdict.
        report_html: path of the report.html the sections are in (``None``: anchors only).
    """
    v = verdict_view(verdict)
    lines = [f"Verdict: {v.status_words} ({v.status})"
             + (f", judged for {v.target}" if v.target else ""), f"  {v.headline}"]
    target = report_html or ""
    for r in v.reasons:
        lines.append(f"  - [{r.label}] {r.message}")
        if r.where:
            lines.append(f"      where: {r.where}")
        if r.remedy:
            lines.append(f"      what to do: {r.remedy}")
        lines.append(f"      details: {target}#{r.section} ({r.section_title})")
    if v.more:
        lines.append(f"  ... and {v.more} more reason(s) in the report")
    for r in v.notes:
        lines.append(f"  - [note] {r.message}")
        if r.remedy:
            lines.append(f"      what to do: {r.remedy}")
    if v.advice is not None:
        lines.append(f"  {v.advice.message}")
        lines.append(f"      details: {target}#{v.advice.section} ({v.advice.section_title})")
    if v.gate_policy:
        lines.append(f"  (gate policy: {v.gate_policy})")
    return "\n".join(lines) + "\n"
