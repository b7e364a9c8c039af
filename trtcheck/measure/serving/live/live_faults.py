"""What happened to a live server when a run against it broke: the server stopped
answering, restarted, the model was unloaded, or someone else loaded it again with
another configuration (``trtcheck serve --url``, ``trtcheck tune``).

A run that fails (every request failed, a statistics read failed or went backwards, an
answer failed its check) is followed by a short probe of the server
(:func:`diagnose_fault`, bounded by :data:`PROBE_TIMEOUT_S` per call): the sweep keeps
the configurations it finished, marks the run ``invalid`` with the probe's one-line
reason, and :func:`restore_skip_reason` says whether loading the model's original
configuration again would reach the server and undo nobody else's change.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from trtcheck.errors import EnvironmentProblem, InputError, TrtcheckError
from trtcheck.measure.serving.live.kserve import Endpoint, KServeClient
from trtcheck.results.kserve_answers import BadAnswer
from trtcheck.results.stats import Finding

#: Seconds each probe call (liveness, readiness, configuration) may take.
PROBE_TIMEOUT_S = 3.0
#: The code of the finding that marks a live run broken by a fault (severity error).
SERVER_FAULT = "server-fault"

#: Configuration fields compared to tell whether someone else loaded the model again.
_COMPARED = ("max_batch_size", "dynamic_batching", "instance_group")


@dataclass(frozen=True)
class Fault:
    """What the probe found.

    Attributes:
        kind: ``"server-gone"`` (no answer), ``"model-unloaded"`` (the server answers, the
            model is not ready), ``"config-changed"`` (loaded with another
            configuration), ``"stats-reset"`` (counters went backwards: restarted or
            reloaded with the same configuration), ``"bad-answer"`` (an answer failed its
            check) or ``"run-failed"`` (the server and model look as before: the
            run's own error stands).
        reason: one line for the user.
        reachable: whether the server answered the probe.
    """

    kind: str
    reason: str
    reachable: bool


def config_difference(expected: dict[str, Any], current: dict[str, Any]) -> str | None:
    """The first configuration field trtcheck sweeps (``max_batch_size``, the dynamic
    batching window and preferred sizes, instance kinds and counts) that differs between
    two checked configurations, as ``"field a -> b"``; ``None`` when they agree."""
    for k in _COMPARED:
        a: Any = expected.get(k)  # JSON of the model configuration
        b: Any = current.get(k)
        if k == "instance_group":  # the server names the groups itself
            a = [{kk: vv for kk, vv in g.items() if kk in ("kind", "count")}
                 for g in a or []]
            b = [{kk: vv for kk, vv in g.items() if kk in ("kind", "count")}
                 for g in b or []]
        if k == "dynamic_batching":
            a = {kk: (a or {}).get(kk) for kk in ("max_queue_delay_microseconds",
                                                  "preferred_batch_size")}
            b = {kk: (b or {}).get(kk) for kk in ("max_queue_delay_microseconds",
                                                  "preferred_batch_size")}
        if a != b:
            return f"{k} {a} -> {b}"
    return None


async def _probe(ep: Endpoint, model: str, version: str,
                 expected: dict[str, Any] | None) -> tuple[str, str, bool]:
    async with KServeClient(ep, timeout_s=PROBE_TIMEOUT_S) as c:
        try:
            await c.server_metadata()
        except EnvironmentProblem as exc:
            if "answered" in exc.message:  # reached, but a bad answer
                return "bad-answer", exc.message, True
            return ("server-gone", f"the server at {ep.url} stopped answering during the "
                    f"run ({exc.message})", False)
        try:
            await c.model_ready(model, version)
        except (EnvironmentProblem, InputError) as exc:
            return ("model-unloaded", f"model {model!r} was unloaded or is not ready any "
                    f"more (the server may have restarted): {exc.message}", True)
        if expected is not None:
            try:
                cur = await c.model_config(model, version)
            except TrtcheckError as exc:
                return "bad-answer", exc.message, True
            if cur and (d := config_difference(expected, cur)):
                return ("config-changed", f"model {model!r} was loaded again with another "
                        f"configuration during the run ({d}): someone else loaded it, or the "
                        "server restarted",
                        True)
    return "", "", True


def diagnose_fault(ep: Endpoint, model: str, version: str,
                   expected_config: dict[str, Any] | None, exc: BaseException) -> Fault:
    """Probe the server after a run failed with ``exc`` and say what happened.

    Args:
        ep, model, version: the target.
        expected_config: the configuration the run meant to measure (checked JSON), or
            ``None`` to skip the comparison.
        exc: the run's error (a :class:`~trtcheck.errors.TrtcheckError` or
            :class:`~trtcheck.results.kserve_answers.BadAnswer`).

    Returns:
        the :class:`Fault` (never raises: a probe that fails is a finding itself).
    """
    own = exc.message if isinstance(exc, TrtcheckError) else str(exc)
    try:
        kind, reason, reachable = asyncio.run(_probe(ep, model, version, expected_config))
    except Exception as probe_exc:  # noqa: BLE001 - the probe must not hide the fault
        kind, reason, reachable = ("server-gone", f"the server at {ep.url} could not be "
                                   f"probed after the run failed ({probe_exc})", False)
    if kind:
        return Fault(kind, reason, reachable)
    if isinstance(exc, BadAnswer):
        if "went backwards" in exc.reason or "disappeared" in exc.reason:
            return Fault("stats-reset", f"the server's statistics {exc}: its counts for "
                                        "this run cannot be trusted", True)
        return Fault("bad-answer", f"the server's statistics do not add up ({exc})", True)
    if isinstance(exc, EnvironmentProblem) and "answered" in own and "bad" in own:
        return Fault("bad-answer", own, True)
    return Fault("run-failed", own, True)


def restore_skip_reason(ep: Endpoint, model: str, version: str,
                        loaded: dict[str, Any]) -> str | None:
    """Why the model's original configuration must not be loaded again after a sweep:
    the server does not answer, the model is not loaded any more (someone unloaded it or
    the server restarted), or it runs a configuration trtcheck did not load (someone else
    loaded it). ``None``: restoring is safe.

    Args:
        loaded: the configuration trtcheck loaded last (checked JSON).
    """
    f = diagnose_fault(ep, model, version, loaded, EnvironmentProblem("restore check"))
    if f.kind in ("server-gone", "model-unloaded", "config-changed"):
        return f.reason
    return None


def missing_extension(server_metadata: dict[str, Any], url: str, *,
                      sweep: bool) -> TrtcheckError | None:
    """The error for a server that announces its extensions (``GET /v2``) without one
    trtcheck needs: ``statistics`` (the server's own counts; exit 3) always,
    ``model_repository`` for a sweep (configurations are loaded through it; exit 2).
    ``None`` when nothing is missing or the server announces no extensions at all."""
    exts = [str(x) for x in server_metadata.get("extensions") or []]
    if not exts:
        return None
    shown = ", ".join(exts[:12]) + (" ..." if len(exts) > 12 else "")
    if "statistics" not in exts:
        return EnvironmentProblem(
            f"the server at {url} has no statistics extension (it announces: {shown}); "
            "trtcheck reads the batches the server formed from GET /v2/models/NAME/stats",
            "measure on Triton (tritonserver) or a KServe v2 server with Triton's "
            "statistics extension")
    if sweep and "model_repository" not in exts:
        return InputError(
            f"the server at {url} has no model-repository extension (it announces: "
            f"{shown}), so it cannot load the swept configurations",
            "drop --window-ms/--max-batch/--instances/--preferred-batch to measure the "
            "model as loaded, or use tritonserver --model-control-mode=explicit")
    return None


def window_not_applied(window_us: float | None, loaded: dict[str, Any]) -> Finding | None:
    """The finding for a swept window the server does not run: the configuration it
    reports after the load has no ``dynamic_batching`` (dynamic batching off: requests
    run one by one, or as the client sent them), or another
    ``max_queue_delay_microseconds``. ``None`` when no window was asked or it applies.

    Args:
        window_us: the window asked for, microseconds (``None``: not swept).
        loaded: the configuration the server reports after loading (checked JSON).
    """
    if window_us is None:
        return None
    db = loaded.get("dynamic_batching")
    want = int(round(window_us))
    if isinstance(db, dict) and int(db.get("max_queue_delay_microseconds", 0) or 0) == want:
        return None
    got = ("no dynamic batching (it is off: the server does not wait for or form "
           "batches)" if not isinstance(db, dict) else
           f"a window of {int(db.get('max_queue_delay_microseconds', 0) or 0)} us")
    return Finding(
        code="window-not-applied", severity="warning", where=f"window {want} us",
        message=f"the window of {want} us was asked for, but the server runs the model "
                f"with {got}",
        remedy="check the model's config.pbtxt and the server log: a backend or scheduler "
               "that does not support dynamic batching ignores the window")


def settings_not_applied(max_batch: int | None, instances: int | None,
                         loaded: dict[str, Any], loaded_instances: int) -> Finding | None:
    """A ``config-not-applied`` finding when the server loaded the model but reports a
    ``max_batch_size`` or an instance count other than the one asked for (a server or
    repository agent that rewrites configurations; the run measures what the server
    runs, and its record says so). ``None`` when both apply or neither was asked.

    Args:
        max_batch, instances: what was asked (``None``: not swept).
        loaded: the configuration the server reports after loading (checked JSON).
        loaded_instances: its instance count (the sum of its instance groups).
    """
    diffs = []
    got_mb = int(loaded.get("max_batch_size", 0) or 0)
    if max_batch is not None and got_mb != int(max_batch):
        diffs.append(f"max batch {got_mb} (asked {int(max_batch)})")
    if instances is not None:
        got_n = int(loaded_instances)
        if got_n != int(instances):
            diffs.append(f"{got_n} instance(s) (asked {int(instances)})")
    if not diffs:
        return None
    return Finding(
        code="config-not-applied", severity="warning",
        where=f"max batch {max_batch} instances {instances}",
        message="the server loaded the model but runs it with " + " and ".join(diffs)
                + "; this configuration's numbers are for what the server runs",
        remedy="check the server log and any repository agent that rewrites configurations")


def run_fault(run: Any) -> str | None:
    """The fault that broke a live run (a :class:`~trtcheck.results.serve.ServeRun`):
    its ``server-fault`` finding's message (which configuration, what happened), or
    ``None`` for a run no fault broke."""
    for w in getattr(run, "warnings", None) or []:
        if w.code == SERVER_FAULT:
            return str(w.message)
    return None
