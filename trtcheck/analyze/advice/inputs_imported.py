"""``advise --from`` a file of another tool: what a Triton statistics dump or a
perf_analyzer CSV holds for the advice, and what it lacks."""

from __future__ import annotations

from typing import Any

from trtcheck.analyze.advice.curve import MONOTONE_NOISE_TOLERANCE, LatencyCurve, make_curve
from trtcheck.errors import InputError
from trtcheck.units import int_ranges

STATS_COMMAND = "curl -s http://HOST:8000/v2/models/NAME/stats > stats.json"


def inputs_from_imported(run: Any, source: str, min_executions: int
                         ) -> tuple[LatencyCurve, dict[str, Any]]:
    """T(b) and the measured inputs of the advice from imported measurements.

    * Triton statistics: T(b) is the server's mean compute per execution
      (``compute_input + compute_infer + compute_output``) of each batch size in
      ``batch_stats``, for the first model that has them; sizes executed fewer than
      ``min_executions`` times are left out (the caller passes
      :data:`~trtcheck.analyze.advice.inputs.MIN_SERVE_CURVE_EXECUTIONS`).
      The notes say what the statistics lack (the spread of the times, client and
      network time, sizes never formed).
    * a perf_analyzer CSV holds no compute time per batch size: refused, saying so.

    Returns:
        ``(curve, measured)`` with ``model_name`` and ``source`` in ``measured``.

    Raises:
        InputError: a perf_analyzer CSV; statistics without any ``batch_stats``.
    """
    if run.source == "perf_analyzer-csv":
        raise InputError(f"{source} is a perf_analyzer CSV: it holds client latencies and "
                         "server averages per load level, not compute time per batch size, "
                         "so T(b) is unknown",
                         f"pass Triton's statistics of the same server ({STATS_COMMAND}), "
                         "or --latency-curve")
    model = next((m for m in run.models if m.batches), None)
    if model is None:
        raise InputError(f"{source} holds Triton statistics without batch_stats, so T(b) "
                         "is unknown", f"serve some requests first, then {STATS_COMMAND}")
    kept = [b for b in model.batches if b.executions >= min_executions] or \
        [max(model.batches, key=lambda b: b.executions)]
    notes = [f"T(b) from Triton's statistics of {model.model} ({source}): the mean compute "
             "per execution of each batch size; the statistics hold no spread, so the "
             "simulation uses these means",
             "the statistics hold no client or network time: the per-request overhead is "
             "0 unless given (--per-request-overhead-ms)",
             f"batch sizes above {max(b.batch_size for b in kept)} were never executed "
             "(enough), so larger sizes are not assessed"]
    dropped = sorted({b.batch_size for b in model.batches} - {b.batch_size for b in kept})
    if dropped:
        notes.append(f"batch sizes executed fewer than {min_executions} times "
                     f"are left out of T(b): {int_ranges(dropped)}")
    others = [m.model for m in run.models if m is not model]
    if others:
        notes.append(f"the dump holds {len(run.models)} models; this advice is for "
                     f"{model.model}")
    curve = make_curve([(b.batch_size, b.compute_ms) for b in kept],
                       source=f"Triton statistics of {model.model} ({source})",
                       noise_tolerance=MONOTONE_NOISE_TOLERANCE)
    return curve.with_notes(notes), {"model_name": model.model}
