"""Analyses derived from what a run recorded, computed once and stored in the results.

:func:`complete` is the step between measuring and rendering: it adds what the recorded
numbers imply and the results do not hold yet, so that reports, the verdict and
``trtcheck gate`` read one stored value instead of each recomputing it:

* the ``enqueue-bound`` warning on each bench batch whose host enqueue time reaches the
  threshold of :func:`trtcheck.analyze.derived.engine_timing.enqueue_bound_finding`
  (gate: ``len(bench.batch[*].warnings[code=enqueue-bound]) == 0``);
* the predicted-vs-measured serving table, ``advice.serve_predictions``
  (:func:`trtcheck.analyze.advice.serve_compare.predict_serve_configs`), when the results hold
  both advice and an open-loop serving measurement
  (gate: ``advice.serve_predictions[window_us=0].predicted_p99_ms``);
* the verdict (:func:`trtcheck.analyze.derived.verdict.judge`) when the results hold none.

Nothing is rendered here.
"""

from __future__ import annotations

from typing import Any

from trtcheck.analyze.derived.engine_timing import enqueue_bound_finding


def add_enqueue_bound_findings(results: Any) -> int:
    """Append the ``enqueue-bound`` warning to every bench batch that shows it and does
    not hold it yet (in place).

    Returns:
        the number of findings added.
    """
    added = 0
    for run in results.bench:
        for b in run.batches:
            f = enqueue_bound_finding(b)
            if f is not None and all(w.code != f.code for w in b.warnings):
                b.warnings.append(f)
                added += 1
    return added


def add_serve_predictions(results: Any) -> bool:
    """Store the predicted-vs-measured serving table in ``results.advice`` (in place)
    when the results hold advice and a serving measurement and the table is not stored
    yet.

    Returns:
        whether a table was computed.
    """
    adv = getattr(results, "advice", None)
    serve = getattr(results, "serve", None)
    if adv is None or serve is None or not serve.configs or adv.serve_predictions:
        return False
    from trtcheck.analyze.advice import predict_serve_configs

    adv.serve_predictions = predict_serve_configs(results, adv)
    return True


def complete(results: Any) -> Any:
    """A copy of ``results`` with the derived analyses of this module filled in where
    missing (the input is not changed; what is stored already is kept as it is)."""
    out = results.model_copy(deep=True)
    add_enqueue_bound_findings(out)
    add_serve_predictions(out)
    if out.verdict is None:
        from trtcheck.analyze.derived.verdict import judge

        out.verdict = judge(out)
    return out
