"""The report's decision: can this model be deployed as measured (the ``verdict`` section).

The verdict is computed from the rest of the results model by
:func:`trtcheck.analyze.derived.verdict.judge` (rules in docs/verdict.md) and stored so that
``trtcheck gate`` can budget on it (``verdict.status == ready``).
"""

from __future__ import annotations

from trtcheck.results.base import Record

VERDICT_STATUSES: tuple[str, ...] = ("ready", "ready_with_warnings", "cannot_tell", "not_ready")
"""Machine values of :attr:`Verdict.status`, from best to worst."""

DEPLOYMENT_TARGETS: tuple[str, ...] = ("tensorrt", "tensorrt_rtx", "onnxruntime", "triton")
"""Runtimes a verdict can be judged for (``Results.target``, ``trtcheck report --target``)."""

REASON_EFFECTS: tuple[str, ...] = ("not_ready", "cannot_tell", "warning", "info")
"""Machine values of :attr:`VerdictReason.effect`, from the strongest."""


class VerdictReason(Record):
    """One reason that decided the verdict.

    Attributes:
        kind: stable identifier of the rule that fired: ``lint-error``,
            ``precision-failed``, ``gate-failed``, ``advice-unstable``, ``advice-slo``,
            ``advice-cannot-tell``, ``measurement-unstable``, ``nothing-measured``,
            ``findings`` (warnings grouped by code) or ``advice`` (the serving headline).
        effect: what it does to the status: ``not_ready``, ``cannot_tell``, ``warning``
            or ``info`` (informs, decides nothing).
        title: a few words for the headline (``TensorRT cannot build it``).
        message: one sentence with the numbers that triggered it.
        remedy: what to do, or ``None``.
        section: anchor id of the report section that shows the details
            (``inspection``, ``bench``, ``precision``, ``serve``, ``advice``, ``engine``,
            ``verdict`` for gate checks).
        codes: finding or check codes behind it (``onnx-shared-dim-name``, ``unstable-cv``).
        where: what it concerns (batch sizes, variants, tensors), in the order found.
    """

    kind: str
    effect: str
    title: str
    message: str
    remedy: str | None = None
    section: str
    codes: list[str] = []
    where: list[str] = []


class Verdict(Record):
    """Whether the model is ready to deploy as measured, and why.

    Attributes:
        status: ``ready``, ``ready_with_warnings``, ``cannot_tell`` or ``not_ready``
            (:data:`VERDICT_STATUSES`).
        headline: one sentence: the status in words and the deciding reason.
        reasons: the reasons, strongest effect first.
        gate_policy: the policy file whose budgets were judged (``report --policy``),
            or ``None``.
        unstable_cv_limit: the coefficient of variation (std / mean, a ratio) above which
            a timed batch size is a symptom of a noisy machine (part of the
            ``noisy-machine`` warning; it decides nothing by itself).
        median_ci_limit: half the width of a median's 95% interval over the median (a
            ratio) above which the claims resting on it are undecided (*cannot tell*).
        target: the deployment target judged for (:data:`DEPLOYMENT_TARGETS`).
    """

    status: str
    headline: str
    reasons: list[VerdictReason] = []
    gate_policy: str | None = None
    unstable_cv_limit: float
    median_ci_limit: float | None = None
    target: str | None = None
