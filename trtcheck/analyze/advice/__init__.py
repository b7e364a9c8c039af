"""Serving advice: the latency curve T(b) (``curve``), the discrete-event simulator
(``simulator``) and queueing formulas (``queueing``), the search for a recommended window
and max batch (``advise``, with the noise rules in ``advise_noise``), the inputs taken from
results (``inputs``), calibration against a live server (``live_calibration``) and the
predicted-vs-measured serving table (``serve_compare``).

The names below are the subsystem's public face; the rest of its modules is private. The
entry point :func:`trtcheck.analyze.advice.advise.advise` is imported from its module
(it shares the module's name, so the face does not rebind it).
"""

from __future__ import annotations

from trtcheck.analyze.advice.advise import (
    AdviseRequest,
    CLOSED_LOOP_DEFAULT_REQUESTS,
    service_model,
    what_if,
)
from trtcheck.analyze.advice.curve import (
    LatencyCurve,
    check_monotone,
    curve_from_bench,
    fit_linear,
    make_curve,
    parse_curve_text,
)
from trtcheck.analyze.advice.inputs import (
    advice_inputs,
    build_request,
    calibration_from_serve,
    overheads_from_serve,
)
from trtcheck.analyze.advice.live_calibration import (
    CALIBRATION_REQUESTS,
    LiveObservation,
    MAX_PER_BATCH_OVERHEAD_SHARE,
    MIN_CALIBRATION_OK,
    PREDICTION_REQUESTS,
    calibrate,
    inputs_from_live,
    predict,
)
from trtcheck.analyze.advice.serve_compare import open_loop_schedule, predict_serve_configs
from trtcheck.analyze.advice.simulator import (
    Candidate,
    ClosedLoop,
    ServiceModel,
    simulate,
    sweep,
)

__all__ = [
    "AdviseRequest",
    "CALIBRATION_REQUESTS",
    "MIN_CALIBRATION_OK",
    "CLOSED_LOOP_DEFAULT_REQUESTS",
    "Candidate",
    "ClosedLoop",
    "LatencyCurve",
    "LiveObservation",
    "MAX_PER_BATCH_OVERHEAD_SHARE",
    "PREDICTION_REQUESTS",
    "ServiceModel",
    "advice_inputs",
    "build_request",
    "calibrate",
    "calibration_from_serve",
    "check_monotone",
    "curve_from_bench",
    "fit_linear",
    "inputs_from_live",
    "make_curve",
    "open_loop_schedule",
    "overheads_from_serve",
    "parse_curve_text",
    "predict",
    "predict_serve_configs",
    "service_model",
    "simulate",
    "sweep",
    "what_if",
]
