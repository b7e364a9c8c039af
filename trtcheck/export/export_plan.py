"""One set of serving settings for every export target.

The Triton, Ray Serve and TorchServe exports of one advice must deploy the same max
batch, window and instances. :func:`plan_export` settles them once, from the
recommended configuration and what is known of the model and the measured server, and
says why wherever a target cannot take a setting as it is (:attr:`ExportPlan.notes`);
the renderers in :mod:`trtcheck.export.settings` only write what it settled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from trtcheck.results.advice import SimPrediction

Target = Literal["triton", "ray", "torchserve"]
TARGETS: tuple[Target, ...] = ("triton", "ray", "torchserve")


@dataclass(frozen=True)
class ExportPlan:
    """The settings every target deploys, and the notes that explain them.

    Attributes:
        prediction: the recommended configuration with the max batch every target
            deploys (``max_batch_size`` 1 when the model has no batch axis); window
            (``window_us``, microseconds) and ``instances`` (in all) as recommended.
        batch_axis: whether the model has a batch axis a server can batch on (Triton
            then writes ``max_batch_size: 0``).
        kept_server_max_batch: the max batch is the measured server's own, kept because
            the advice assessed no larger size (``None``: the advice's own value).
        notes: comment lines (without ``#``) per target, in order: shared ones first.
    """

    prediction: SimPrediction
    batch_axis: bool = True
    kept_server_max_batch: int | None = None
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def notes_for(self, target: Target) -> tuple[str, ...]:
        """The comment lines of ``target`` (shared ones first)."""
        return self.notes.get("all", ()) + self.notes.get(target, ())


def plan_export(p: SimPrediction, *, batch_axis: bool = True,
                configured_max_batch_size: int | None = None,
                assessed_max_batch_size: int | None = None,
                preferred_batch_sizes: tuple[int, ...] = ()) -> ExportPlan:
    """Settle the max batch, window and instances all targets deploy for ``p``.

    Rules (the same for every target):

    * no batch axis (``batch_axis`` false): max batch 1 everywhere; Triton writes
      ``max_batch_size: 0``.
    * the measured server's own max batch (``configured_max_batch_size``) is kept when
      the advice recommends less but assessed no batch above its recommendation
      (``assessed_max_batch_size``, the largest batch size of its T(b)): larger sizes
      are unknown, not worse, and a max batch is a ceiling (the window bounds every
      request's wait either way).
    * ``preferred_batch_sizes`` are Triton's alone: Ray Serve and TorchServe form batches
      up to the max batch, which is what the advice simulated (a note says so).

    Args:
        p: the recommended (or given) configuration; window in microseconds.
        batch_axis: whether the model batches on its first axis.
        configured_max_batch_size: the measured Triton server's ``max_batch_size``.
        assessed_max_batch_size: the largest batch size the advice measured.
        preferred_batch_sizes: Triton ``preferred_batch_size`` values to be written.
    """
    notes: dict[str, list[str]] = {t: [] for t in ("all", *TARGETS)}
    mbs = p.max_batch_size
    kept = None
    if not batch_axis:
        mbs = 1
        if p.max_batch_size > 1:
            notes["all"].append(f"max batch 1: the model has no batch axis a server can "
                                f"batch on (the advice's {p.max_batch_size} cannot apply)")
    elif (configured_max_batch_size is not None and assessed_max_batch_size is not None
          and 1 < mbs < configured_max_batch_size and assessed_max_batch_size <= mbs):
        kept = configured_max_batch_size
        notes["all"].append(
            f"max batch {kept} (the measured Triton server's max_batch_size): the server's "
            f"own, kept; the advice recommends "
            f"{mbs}, but assessed no batch above {assessed_max_batch_size} (the largest its "
            "calibration measured), so larger sizes are unknown, not worse; calibrate at a "
            "higher rate or a longer window to assess them")
        mbs = kept
    if (batch_axis and kept is None and configured_max_batch_size is not None
            and mbs < configured_max_batch_size):
        notes["all"].append(
            f"max batch {mbs}, below the measured server's {configured_max_batch_size}: "
            f"the max batch also bounds each request, so a client that sends requests of "
            f"more than {mbs} row{'s' if mbs != 1 else ''} is refused; keep "
            f"{configured_max_batch_size} if clients send batched requests")
    pref = sorted({int(b) for b in preferred_batch_sizes if 1 <= b <= mbs})
    if pref and mbs > 1:
        for t in ("ray", "torchserve"):
            notes[t].append(f"Triton's preferred_batch_size [{', '.join(map(str, pref))}] "
                            "has no equivalent here: batches form up to the max batch")
    return ExportPlan(prediction=p.model_copy(update={"max_batch_size": mbs}),
                      batch_axis=batch_axis, kept_server_max_batch=kept,
                      notes={k: tuple(v) for k, v in notes.items() if v})
