"""The CI gate's verdicts: a validated policy checked against results (and a baseline).

:func:`evaluate` is a pure function from (policy, results, baseline) to a
:class:`GateReport` holding every check's verdict: nothing is printed and nothing raised
for failing checks, so all failures are collected and reported at once (pytest-benchmark /
pyperf style). The policy format is described in :mod:`trtcheck.analyze.gate.gate_policy`.

Verdicts per check: ``pass``, ``fail``, ``inconclusive`` (interval straddles the limit),
``not-certified`` (percentile budget met by the point estimate but too few samples, or
too many over the bound, to certify it), ``missing`` (path valid but absent from the
file), ``invalid`` (the measurement behind the value carries an error validity mark:
generator-limited, implausibly fast, interrupted), ``not-comparable`` (baseline from
another GPU model or compute capability). The policy maps inconclusive / not-certified /
missing / invalid / not-comparable to a gate outcome ``warn`` (exit 0) or ``fail``
(exit 1). ``new``: a baseline rule's member only the results hold (a batch size or
serving configuration added to the sweep): not compared, outcome ``pass``, counted apart.

Members of ``[*]`` pair with the baseline's by key (bench batch size, run label, a serving
configuration's load, window, max batch size and instances), never by list position.

Validity marks (``validity`` lists of bench batch results and serve configurations):
a value that meets its budget or baseline limit is still not a pass when the record it
comes from is marked: an ``error`` mark gives ``invalid`` (``on_invalid_run``, default
fail), a ``warning`` mark (unstable) gives ``inconclusive`` (``on_inconclusive``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from trtcheck.analyze.gate import regression as R
from trtcheck.analyze.gate.gate_policy import OPS, Policy, Rule, Settings
from trtcheck.analyze.gate.metricpath.metric_checks import LOWER
from trtcheck.analyze.gate.metricpath.metric_grammar import (
    MetricMissing,
    MetricPath,
    MetricPathError,
    stat_kind,
)
from trtcheck.analyze.gate.metricpath.metric_resolver import Value, evaluate_path, resolve
from trtcheck.errors import (
    EXIT_CHECK_FAILED,
    EXIT_ENVIRONMENT,
    EXIT_OK,
    UsageError,
)
from trtcheck.units import format_quantity, metric_unit

#: Stored percentiles from this one up (p90, p95, p99, ...) are tail budgets: without the
#: raw samples behind them they are reported ``not-certified`` instead of passing.
TAIL_QUANTILE = 0.9


# --------------------------------------------------------------------------- verdicts


class Check(BaseModel):
    """The verdict of one rule on one metric value (JSON-serialisable).

    Attributes:
        kind: ``budget``, ``baseline`` or ``environment``.
        source: ``policy.yaml:LINE`` of the rule.
        rule: the rule as text; name: the rule's optional name.
        metric: the concrete path checked (``[*]`` replaced by the key).
        verdict: ``pass``, ``fail``, ``inconclusive``, ``not-certified``, ``missing``,
            ``invalid``, ``not-comparable``, ``new`` (a baseline rule's member that only
            the results hold: not compared, outcome ``pass``), ``differs`` (environment)
            or ``same``.
        outcome: what it means for the gate: ``pass``, ``warn`` or ``fail``.
        message: one line with the numbers.
        value, baseline_value: the metric in the results / baseline (metric's unit).
        ratio, ratio_low, ratio_high, confidence: baseline ratio new/base and interval.
        samples, over_bound, max_over_allowed, min_samples_zero_over, certified:
            early-stopping certification of a percentile budget; certified_bound: the
            tightest budget these samples certify (MLPerf's early-stopping estimate).
            For ``max(...)``/``min(...)`` these describe ``element``.
        element: for ``max(...)``/``min(...)``, the member path holding the aggregate value
            (argmax/argmin); ``value`` is that member's value.
        uncertified_members: for ``max(...)``/``min(...)``, the members that had to be
            certified and were not (the named element first).
    """

    kind: str
    source: str
    line: int
    rule: str
    name: str | None = None
    metric: str
    verdict: str
    outcome: str
    message: str
    value: float | int | str | bool | None = None
    baseline_value: float | int | str | bool | None = None
    ratio: float | None = None
    ratio_low: float | None = None
    ratio_high: float | None = None
    confidence: float | None = None
    samples: int | None = None
    over_bound: int | None = None
    max_over_allowed: int | None = None
    min_samples_zero_over: int | None = None
    certified: bool | None = None
    certified_bound: float | None = None
    element: str | None = None
    uncertified_members: list[str] | None = None


class GateReport(BaseModel):
    """Everything :func:`evaluate` decided.

    Attributes:
        passed: no check failed and the environment was acceptable.
        exit_code: 0 pass, 1 a check failed, 3 the environments differ and the policy
            says ``environment_mismatch: fail``.
        policy, results, baseline: file names as given.
        checks: every check, in policy order.
        counts: checks per outcome (``pass``/``warn``/``fail``), and ``new``: baseline
            members only the results hold (outcome ``pass``, not counted under ``pass``).
        warnings: notes that do not fail the gate.
        environment_differences: ``field: results vs baseline`` lines.
    """

    passed: bool
    exit_code: int
    policy: str
    results: str
    baseline: str | None = None
    checks: list[Check]
    counts: dict[str, int]
    warnings: list[str] = []
    environment_differences: list[str] = []


def _fmt(v: Any, leaf: str, func: str | None) -> str:
    if func == "len":
        return str(v)
    return format_quantity(v, metric_unit(leaf))


def _outcome(verdict: str, policy_choice: str) -> str:
    if verdict == "pass":
        return "pass"
    if verdict == "fail":
        return "fail"
    return policy_choice


def _budget_checks(rule: Rule, results: Any, st: Settings, src: str) -> list[Check]:
    base: dict[str, Any] = {"kind": "budget", "source": src, "line": rule.line, "rule": rule.text,
            "name": rule.name}
    try:
        vals = evaluate_path(rule.path, results)
    except MetricMissing as exc:
        return [Check(**base, metric=rule.path.text, verdict="missing",
                      outcome=rule.on_missing, message=str(exc))]
    if not vals:
        return [Check(**base, metric=rule.path.text, verdict="missing", outcome=rule.on_missing,
                      message=f"{rule.path.text} matched nothing in this results file")]
    if rule.path.func in ("min", "max"):
        return [_aggregate_check(rule, results, st, base)]
    return [_budget_one(rule, v, st, base) for v in vals]


def _universal(func: str | None, op: str) -> bool:
    """Whether a ``max``/``min`` limit holds exactly when every member meets it.

    ``max(X) <= B`` means every X <= B (likewise ``min(X) >= B``); ``max(X) >= B`` and
    ``min(X) <= B`` only need the member holding the maximum (minimum).
    """
    return (func == "max" and op in ("<=", "<")) or (func == "min" and op in (">=", ">"))


def _aggregate_check(rule: Rule, results: Any, st: Settings, base: dict[str, Any]) -> Check:
    """One check for ``max(...)``/``min(...)``: the value is the aggregate, the element named
    is the member holding it (argmax/argmin, first on ties), and certification follows
    :func:`_universal`: a universal limit needs **every** member certified as if gated on
    its own, an existential one needs the named member certified. The certification
    counts (``samples``, ``over_bound``, ...) describe the named member; ``certified`` is
    the verdict over every member that had to be certified."""
    func = rule.path.func
    member_path = replace(rule.path, func=None)
    text = rule.path.text
    try:
        members = evaluate_path(member_path, results)
    except MetricMissing as exc:
        return Check(**base, metric=text, verdict="missing", outcome=rule.on_missing,
                     message=str(exc))
    nums = [m for m in members if isinstance(m.value, (int, float))
            and not isinstance(m.value, bool)]
    undefined = [m for m in nums if math.isnan(m.value)]
    if undefined:
        # a NaN metric (e.g. the cosine of outputs holding NaN/Inf) meets no bound: the
        # reduction must not skip it and pass on the other members
        return Check(**base, metric=text, verdict="fail", outcome="fail", value=_plain(math.nan),
                     element=undefined[0].path,
                     message=f"{text}: {undefined[0].path} is NaN (undefined), which meets no "
                             f"budget ({rule.bound_text})")
    if not nums:
        return Check(**base, metric=text, verdict="missing", outcome=rule.on_missing,
                     message=f"{text}: no values to reduce")
    pick = (max if func == "max" else min)(nums, key=lambda m: m.value)
    leaf = rule.info.leaf
    agg = pick.value
    head = f"{text} = {_fmt(agg, leaf, None)} ({pick.path})"
    if rule.op == "range":
        lo, hi = rule.bound
        limits = [(">=", lo), ("<=", hi)]
        ok = lo <= agg <= hi
    else:
        limits = [(str(rule.op), rule.bound)]
        ok = bool(OPS[str(rule.op)](agg, rule.bound))
    common = {"metric": text, "value": _plain(agg), "element": pick.path}
    if not ok:
        return Check(**base, **common, verdict="fail", outcome="fail",
                     message=f"{head}, budget {rule.bound_text}")
    named: Check | None = None
    problems: dict[str, Check] = {}
    needed = 0
    for op, b in limits:
        sub = replace(rule, path=member_path, op=op, bound=b)
        targets = nums if _universal(func, op) else [pick]
        for m in targets:
            chk = _budget_one(sub, m, st, base)
            if chk.certified is not None or chk.verdict == "not-certified":
                needed += 1
            if m is pick and (named is None or chk.verdict != "pass"):
                named = chk
            if chk.verdict != "pass" and m.path not in problems:
                problems[m.path] = chk
    cert = {}
    if named is not None and (named.certified is not None or named.verdict == "not-certified"):
        cert = {k: getattr(named, k) for k in ("samples", "over_bound", "max_over_allowed",
                                               "min_samples_zero_over", "certified_bound")}
    if problems:
        # the named member's own problem first, then the others in path order
        order = sorted(problems.values(), key=lambda c: (c.metric != pick.path, c.metric))
        def why(c: Check) -> str:
            return c.message.split(" but ", 1)[-1]
        others = [c for c in order if c.metric != pick.path]
        every = any(_universal(func, op) for op, _ in limits)
        rest = "; ".join(f"{c.metric}: {why(c)}" for c in others[:3])
        rest += f"; and {len(others) - 3} more" if len(others) > 3 else ""
        if order[0].metric == pick.path:
            msg = f"{head} meets {rule.bound_text} but it is not certified: {why(order[0])}"
            if others:
                msg += f"; nor are {len(others)} other member(s) (all must be): {rest}"
        else:
            msg = (f"{head} meets {rule.bound_text} and is certified, but {len(others)} other "
                   f"member(s) are not (all must be): {rest}")
        if not every:
            msg += f" (the member holding the {func}imum must be certified)"
        return Check(**base, **common, verdict="not-certified", outcome=rule.on_uncertified,
                     certified=False, uncertified_members=[c.metric for c in order], **cert,
                     message=msg)
    note = ""
    if needed:
        note = (f"; certified at {st.certify_confidence:.0%} for every member"
                if any(_universal(func, op) for op, _ in limits)
                else f"; certified at {st.certify_confidence:.0%} for {pick.path}")
        cert["certified"] = True
    return Check(**base, **common, verdict="pass", outcome="pass", **cert,
                 message=f"{head}, budget {rule.bound_text}{note}")


def _budget_one(rule: Rule, v: Value, st: Settings, base: dict[str, Any]) -> Check:
    leaf, func = rule.info.leaf, rule.path.func
    val = v.value
    shown = _fmt(val, leaf, func)
    if rule.op == "range":
        lo, hi = rule.bound
        ok = lo <= val <= hi
        limits = [(">=", lo), ("<=", hi)]
    else:
        ok = bool(OPS[str(rule.op)](val, rule.bound))
        limits = [(str(rule.op), rule.bound)]
    if not ok:
        return Check(**base, metric=v.path, verdict="fail", outcome="fail", value=_plain(val),
                     message=f"{v.path} = {shown}, budget {rule.bound_text}")
    # met by the point estimate: certify percentile budgets (MLPerf early stopping)
    stat = v.stat
    sk = stat_kind(leaf)
    if v.samples is None and func is None and sk is not None and sk[0] == "quantile" \
            and TAIL_QUANTILE <= sk[1] < 1.0 \
            and all(op in ("<=", "<", ">=", ">") for op, _ in limits):
        # a stored tail percentile without the raw samples it came from (serve configs,
        # precision, simulated predictions): its sample count is unknown, so it cannot be
        # certified; passing it would accept a p99 of 16 requests
        qname = f"p{sk[1] * 100:g}"
        head, _, _ = v.path.rpartition(".")
        if head.startswith("serve") and ".repeats[" not in v.path:
            # a serve configuration's field is the median over its repeats: each repeat
            # keeps the raw latencies behind its own value
            where = f"gate {head}.repeats[*].{leaf} (each repeat's raw latencies)"
        elif head.startswith("tune.") and ".runs[" not in v.path:
            # a tune measurement is a summary of one of the search's live runs, which
            # keeps its raw latencies; a short confirming run holds too few of them
            from trtcheck.stats import min_samples_to_certify

            need = min_samples_to_certify(sk[1], st.certify_confidence)
            where = (f"gate tune.runs[N].configs[0].repeats[*].{leaf} (the raw latencies of "
                     f"the live run that measured it; N is its measured.run): certifying "
                     f"{qname} takes at least {need} requests with none past the bound; a "
                     "confirming run with fewer cannot, and tune --duration-s lengthens it")
        else:
            where = f"gate a path with raw samples (bench.batch[N].{leaf})"
        if rule.on_uncertified != "warn":
            where += " or set on_uncertified: warn under the policy's settings"
        return Check(**base, metric=v.path, verdict="not-certified",
                     outcome=rule.on_uncertified, value=_plain(val), certified=False,
                     message=(f"{v.path} = {shown} meets {rule.bound_text} but no raw samples "
                              f"are kept for it, so trtcheck cannot certify {qname} (MLPerf "
                              f"early stopping counts samples); {where}"))
    if stat is not None and v.samples is not None and func is None and \
            stat.kind in ("quantile", "inverse_median") and 0.0 < stat.q < 1.0 and \
            all(op in ("<=", "<", ">=", ">") for op, _ in limits):
        worst = None
        worst_best: float | None = None
        for op, b in limits:
            upper = op in ("<=", "<")
            lat_bound = b
            if stat.kind == "inverse_median":
                if b <= 0:
                    continue
                lat_bound = stat.scale / b  # throughput >= X  <=>  median <= scale / X
                upper = not upper
            cert = R.certify_quantile(v.samples, stat.q, lat_bound, upper=upper,
                                      confidence=st.certify_confidence)
            if worst is None or not cert.certified:
                worst = cert
                best = R.early_stopping_bound(v.samples, stat.q, st.certify_confidence,
                                              upper=upper)
                if best is not None and stat.kind == "inverse_median":
                    best = stat.scale / best if best > 0 else None
                worst_best = best
        if worst is not None:
            qname = f"p{stat.q * 100:g}"
            cert_fields: dict[str, Any] = {"samples": worst.n, "over_bound": worst.over,
                           "max_over_allowed": worst.max_over_allowed,
                           "min_samples_zero_over": worst.min_samples_zero_over,
                           "certified": worst.certified, "certified_bound": worst_best}
            if worst.certified:
                return Check(**base, metric=v.path, verdict="pass", outcome="pass",
                             value=_plain(val), **cert_fields,
                             message=(f"{v.path} = {shown}, budget {rule.bound_text}; "
                                      f"{qname} certified at {st.certify_confidence:.0%} "
                                      f"({worst.over} of {worst.n} samples past the bound, "
                                      f"at most {worst.max_over_allowed} allowed)"))
            if worst.max_over_allowed < 0:
                why = (f"{worst.n} samples cannot certify {qname} at "
                       f"{st.certify_confidence:.0%} (MLPerf early stopping needs at least "
                       f"{worst.min_samples_zero_over} with none past the bound)")
            else:
                why = (f"{worst.over} of {worst.n} samples lie past the bound, at most "
                       f"{worst.max_over_allowed} allowed to certify {qname} at "
                       f"{st.certify_confidence:.0%} (MLPerf early stopping); these "
                       f"samples certify {_fmt(worst_best, leaf, func)}")
            return Check(**base, metric=v.path, verdict="not-certified",
                         outcome=rule.on_uncertified, value=_plain(val), **cert_fields,
                         message=f"{v.path} = {shown} meets {rule.bound_text} but {why}")
    return Check(**base, metric=v.path, verdict="pass", outcome="pass", value=_plain(val),
                 message=f"{v.path} = {shown}, budget {rule.bound_text}")


def _plain(v: Any) -> Any:
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return str(v)


def _baseline_checks(rule: Rule, results: Any, baseline: Any, st: Settings,
                     src: str) -> list[Check]:
    base: dict[str, Any] = {"kind": "baseline", "source": src, "line": rule.line, "rule": rule.text,
            "name": rule.name}
    try:
        new_vals = evaluate_path(rule.path, results)
    except MetricMissing as exc:
        return [Check(**base, metric=rule.path.text, verdict="missing",
                      outcome=rule.on_missing, message=f"results: {exc}")]
    try:
        old_vals = evaluate_path(rule.path, baseline)
    except MetricMissing as exc:
        return [Check(**base, metric=rule.path.text, verdict="missing",
                      outcome=rule.on_missing, message=f"baseline: {exc}")]
    old_by_key = {v.match_key: v for v in old_vals}
    out: list[Check] = []
    if not new_vals:
        return [Check(**base, metric=rule.path.text, verdict="missing",
                      outcome=rule.on_missing, message=f"{rule.path.text} matched nothing "
                      "in the results file")]
    pairs = _pair_chosen(rule.path, new_vals, old_vals)
    for nv in new_vals:
        ov = old_by_key.get(nv.match_key) or pairs.get(id(nv))
        if ov is None and nv.match_key:
            # a member only the results hold (a batch size or serving configuration added
            # to the sweep): nothing to compare it with, which is not a regression
            out.append(Check(**base, metric=nv.path, verdict="new", outcome="pass",
                             value=_plain(nv.value),
                             message=f"{nv.path} = {_fmt(nv.value, rule.info.leaf, rule.path.func)}"
                                     " is new: not in the baseline, not compared"))
            continue
        if ov is None:
            out.append(Check(**base, metric=nv.path, verdict="missing",
                             outcome=rule.on_missing, value=_plain(nv.value),
                             message=f"{nv.path} is not in the baseline"))
            continue
        out.append(_baseline_one(rule, nv, ov, st, base))
    # a member the baseline measured and the results lack (a batch size dropped from the
    # sweep, a precision no longer built) is missing too: a rule over `[*]` must not pass
    # by comparing fewer members
    new_keys = {nv.match_key for nv in new_vals}
    paired = {id(ov) for ov in pairs.values()}
    for ov in old_vals:
        if ov.match_key not in new_keys and id(ov) not in paired:
            out.append(Check(**base, metric=ov.path, verdict="missing",
                             outcome=rule.on_missing, baseline_value=_plain(ov.value),
                             message=f"{ov.path} is in the baseline but not in the results"))
    return out


def _pair_chosen(path: MetricPath, new_vals: list[Value],
                 old_vals: list[Value]) -> dict[int, Value]:
    """Values that pair although their keys differ: ``id(new value)`` -> baseline value.

    ``[*]`` pairs members by key only (a serving configuration with another window is
    another configuration). A filter the user wrote (``serve.configs[load.label=
    closed:2:60]``) chooses the members on both sides itself: among the values left
    unpaired that agree on every ``[*]`` key, the same number in each file pair in file
    order, so a policy can compare a configuration with the baseline's configuration of
    another window. A value's ``match_key`` holds one key per ``[*]`` or filter selector,
    in path order.
    """
    kinds = [sel.kind for seg in path.segments for sel in seg.selectors
             if sel.kind in ("all", "filter")]
    if "filter" not in kinds:
        return {}
    star = [i for i, k in enumerate(kinds) if k == "all"]

    def star_key(v: Value) -> tuple[str, ...]:
        return tuple(v.match_key[i] for i in star if i < len(v.match_key))

    new_keys = {v.match_key for v in new_vals}
    old_keys = {v.match_key for v in old_vals}
    groups: dict[tuple[str, ...], tuple[list[Value], list[Value]]] = {}
    for v in new_vals:
        if v.match_key not in old_keys:
            groups.setdefault(star_key(v), ([], []))[0].append(v)
    for v in old_vals:
        if v.match_key not in new_keys:
            groups.setdefault(star_key(v), ([], []))[1].append(v)
    out: dict[int, Value] = {}
    for left_new, left_old in groups.values():
        if left_new and len(left_new) == len(left_old):
            out.update({id(n): o for n, o in zip(left_new, left_old)})
    return out


def _baseline_one(rule: Rule, nv: Value, ov: Value, st: Settings,
                  base: dict[str, Any]) -> Check:
    assert rule.direction is not None and rule.max_regression is not None
    leaf, func = rule.info.leaf, rule.path.func
    a, b = ov.value, nv.value
    limit = R.regression_limit(rule.direction, rule.max_regression)
    worse_word = "slower/larger" if rule.direction == LOWER else "lower"
    common = {"metric": nv.path, "value": _plain(b), "baseline_value": _plain(a)}
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return Check(**base, **common, verdict="missing", outcome=rule.on_missing,
                     message=f"{nv.path}: not a number in one of the files")
    if a <= 0 or b < 0 or (a == 0 and b == 0):
        # ratios need a positive baseline: compare the plain values
        worse = (b > a) if rule.direction == LOWER else (b < a)
        verdict = "fail" if worse and not math.isclose(a, b) else "pass"
        return Check(**base, **common, verdict=verdict, outcome=_outcome(verdict, "fail"),
                     message=f"{nv.path}: {_fmt(b, leaf, func)} vs baseline {_fmt(a, leaf, func)}")
    if nv.samples is not None and ov.samples is not None and nv.stat is not None \
            and ov.stat is not None and nv.stat.kind == ov.stat.kind \
            and nv.samples.size >= 2 and ov.samples.size >= 2:
        try:
            ci = R.ratio_interval(ov.samples, nv.samples, nv.stat, confidence=st.confidence,
                                  resamples=st.resamples,
                                  seed=R.interval_seed(st.seed, nv.path),
                                  run_to_run_cv=st.run_to_run_cv)
            ratio, low, high, conf = b / a, ci.low, ci.high, st.confidence
            low, high = min(low, ratio), max(high, ratio)
        except ValueError:
            ratio = b / a
            low = high = ratio
            conf = None
    else:
        ratio = b / a
        low = high = ratio
        conf = None
    verdict = R.regression_verdict(low, high, rule.direction, rule.max_regression)
    pct = (ratio - 1.0) * 100.0
    interval = (f" [{(low - 1) * 100:+.1f}%, {(high - 1) * 100:+.1f}%] at {conf:.0%}"
                if conf is not None else " (no raw samples: point comparison)")
    noise_unknown = conf is None and verdict == "fail" and stat_kind(leaf) is not None
    if noise_unknown:
        # a latency or throughput statistic stored without its raw samples (serve
        # configurations, engine timing summaries): its run-to-run noise is unknown, so a
        # point past the limit cannot be told from noise (two serve runs of one engine
        # differed by 7.9% in open-loop QPS); the policy's on_inconclusive decides
        verdict = "inconclusive"
        interval += ", noise unknown"
    lim = f"limit {(limit - 1) * 100:+.1f}%"
    if verdict == "fail":
        what = f"regressed ({worse_word})"
    elif noise_unknown:
        what = "past the limit, but without raw samples a regression cannot be told from noise"
    elif verdict == "inconclusive":
        what = "interval straddles the limit"
    else:
        better = (high < 1.0) if rule.direction == LOWER else (low > 1.0)
        what = "improved" if better and conf is not None else "within the limit"
    other = f" ({ov.path})" if ov.path != nv.path else ""
    msg = (f"{nv.path}: {_fmt(b, leaf, func)} vs baseline {_fmt(a, leaf, func)}{other} = "
           f"{pct:+.1f}%{interval}; {lim}: {what}")
    return Check(**base, **common, verdict=verdict,
                 outcome=_outcome(verdict, rule.on_inconclusive),
                 ratio=ratio, ratio_low=low, ratio_high=high, confidence=conf, message=msg)


def validity_marks(path: MetricPath, results: Any) -> list[tuple[str, Any]]:
    """The validity marks (``(record path, Finding)``) of every record a metric path goes
    through: each shorter prefix of the path is resolved, and the ``validity`` list of
    each record reached is collected (bench batch results, serve configurations)."""
    out: list[tuple[str, Any]] = []
    for k in range(1, len(path.segments)):
        sub = replace(path, segments=path.segments[:k], func=None)
        try:
            vals = resolve(sub, results)
        except (MetricMissing, MetricPathError):
            continue
        for v in vals:
            for f in getattr(v.value, "validity", None) or []:
                out.append((v.path, f))
    return out


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


def _apply_validity(check: Check, marks: list[tuple[str, Any]], st: Settings,
                    on_inconclusive: str, aggregate: bool = False) -> Check:
    """Refuse a pass on a marked measurement: ``invalid`` for an error mark (also over a
    ``not-certified``/``inconclusive`` verdict, which a warn policy would let through),
    ``inconclusive`` for a warning mark on a pass; ``fail`` and the rest stay. A ``min``/``max``/``sum``
    rests on every member, so any member's mark counts."""
    if check.verdict not in ("pass", "not-certified", "inconclusive") or not marks:
        return check
    where = [check.metric] + ([check.element] if check.element else [])
    mine = [f for p, f in marks if aggregate or any(_under(w, p) for w in where)]
    errors = [f for f in mine if f.severity == "error"]
    warns = [f for f in mine if f.severity == "warning"]
    if check.verdict != "pass" and not errors:
        return check
    if errors:
        why = "; ".join(f"{f.code}: {f.message}" for f in errors[:2])
        return check.model_copy(update={
            "verdict": "invalid", "outcome": st.on_invalid_run,
            "message": f"{check.metric}: the measurement is not valid ({why}); "
                       f"the value alone: {check.message}"})
    if warns:
        why = "; ".join(f"{f.code}: {f.message}" for f in warns[:2])
        return check.model_copy(update={
            "verdict": "inconclusive", "outcome": on_inconclusive,
            "message": f"{check.metric}: the measurement is marked ({why}); "
                       f"the value alone: {check.message}"})
    return check


def device_differences(results: Any, baseline: Any) -> list[str]:
    """GPU model and compute capability lines that differ between the two files (results
    first); empty when both ran on the same GPU models (or neither had a GPU)."""
    def devs(r: Any) -> list[tuple[str, str | None]]:
        return [(g.name, g.compute_capability) for g in r.environment.gpus]

    a, b = devs(results), devs(baseline)
    out = []
    if [n for n, _ in a] != [n for n, _ in b]:
        out.append(f"GPUs: {[n for n, _ in a] or 'none'} vs {[n for n, _ in b] or 'none'}")
    ca, cb = [c for _, c in a], [c for _, c in b]
    if ca != cb and all(ca) and all(cb):
        out.append(f"compute capability: {', '.join(map(str, ca)) or 'none'} vs "
                   f"{', '.join(map(str, cb)) or 'none'}")
    return out


def environment_differences(results: Any, baseline: Any) -> list[str]:
    """Fields of :meth:`Environment.comparable_key` that differ, as
    ``"gpus: ['A100'] vs ['H200']"`` lines (results first, baseline second)."""
    a = results.environment.comparable_key()
    b = baseline.environment.comparable_key()
    out = []
    for k in a:
        if k == "runtimes":
            ra, rb = a[k], b.get(k, {})
            for name in sorted(set(ra) | set(rb)):
                if ra.get(name) != rb.get(name):
                    out.append(f"{name}: {ra.get(name, 'absent')} vs {rb.get(name, 'absent')}")
        elif a[k] != b.get(k):
            out.append(f"{k}: {a[k]} vs {b.get(k)}")
    return out


def _verdict_hint(check: Check, rule: Rule, results: Any, results_name: str) -> Check:
    """A ``missing`` check of a ``verdict.`` path on a file without a verdict (the
    results of ``bench``/``serve``/...) gets the command that writes one."""
    if check.verdict != "missing" or not rule.path.segments \
            or rule.path.segments[0].name != "verdict" \
            or getattr(results, "verdict", None) is not None:
        return check
    name = results_name or "results.json"
    return check.model_copy(update={"message": (
        f"{check.message}; the verdict is written by `trtcheck report`: run "
        f"`trtcheck report --from {name} -o DIR`, then gate DIR (or DIR/results.json)")})


def evaluate(policy: Policy, results: Any, baseline: Any | None = None,
             results_name: str = "results.json", baseline_name: str | None = None) -> GateReport:
    """Check every rule of ``policy``; collect every verdict (pure: no I/O, no printing).

    Args:
        policy: from :func:`load_policy`.
        results: the :class:`trtcheck.results.Results` to gate.
        baseline: the baseline results for ``baseline:`` rules, or ``None``.
        results_name, baseline_name: names used in the report.

    Returns:
        :class:`GateReport` (``exit_code`` 0, 1 or 3).

    Raises:
        UsageError: (exit 2) the policy has baseline rules but no baseline was given.
    """
    st = policy.settings
    if policy.has_baseline_rules and baseline is None:
        first = next(r for r in policy.rules if r.kind == "baseline")
        raise UsageError(f"{policy.source}:{first.line}: the policy has baseline rules but "
                         "no baseline results were given",
                         "pass --baseline baseline.json (results of the engine in production)")
    checks: list[Check] = []
    warnings: list[str] = []
    env_diff: list[str] = []
    env_failed = False
    dev_diff = device_differences(results, baseline) if baseline is not None else []
    if getattr(results, "incomplete", None):
        warnings.append(f"the results file is incomplete: {results.incomplete}")
    if baseline is not None and getattr(baseline, "incomplete", None):
        warnings.append(f"the baseline file is incomplete: {baseline.incomplete}")
    if baseline is not None:
        env_diff = environment_differences(results, baseline)
        if env_diff and st.environment_mismatch != "ignore":
            outcome = "fail" if st.environment_mismatch == "fail" else "warn"
            env_failed = outcome == "fail"
            checks.append(Check(kind="environment", source=f"{policy.source}", line=0,
                                rule="results and baseline come from comparable machines",
                                metric="environment", verdict="differs", outcome=outcome,
                                message="environments differ: " + "; ".join(env_diff)))
        if not policy.has_baseline_rules:
            warnings.append("a baseline was given but the policy has no baseline rules")
        from trtcheck.results.tune import tune_target_difference

        if (loads := tune_target_difference(baseline, results)) is not None:
            warnings.append(f"the tune searches of the baseline and the results had {loads}: "
                            "a change of tune.* between them is also a change of load")
    for rule in policy.rules:
        src = f"{policy.source}:{rule.line}"
        if rule.kind == "budget":
            marks = validity_marks(rule.path, results)
            agg = rule.path.func in ("min", "max", "sum")
            checks.extend(_apply_validity(_verdict_hint(c, rule, results, results_name),
                                          marks, st, st.on_inconclusive, agg)
                          for c in _budget_checks(rule, results, st, src))
        else:
            marks = validity_marks(rule.path, results) + validity_marks(rule.path, baseline)
            for c in _baseline_checks(rule, results, baseline, st, src):
                c = _apply_validity(c, marks, st, rule.on_inconclusive,
                                    rule.path.func in ("min", "max", "sum"))
                if dev_diff and st.cross_device != "allow" and c.verdict in (
                        "pass", "fail", "inconclusive"):
                    c = c.model_copy(update={
                        "verdict": "not-comparable", "outcome": st.cross_device,
                        "message": f"{c.metric}: not comparable ({'; '.join(dev_diff)}); "
                                   "settings: cross_device: allow compares anyway"})
                checks.append(c)
    counts = {"pass": 0, "warn": 0, "fail": 0, "new": 0}
    for c in checks:
        # a member new in the results passes the gate but was not compared: counted apart
        key = "new" if c.verdict == "new" else c.outcome
        counts[key] = counts.get(key, 0) + 1
    for c in checks:
        if c.outcome == "warn":
            warnings.append(f"{c.source}: {c.verdict}: {c.message}")
    rule_failed = any(c.outcome == "fail" and c.kind != "environment" for c in checks)
    if env_failed:
        code = EXIT_ENVIRONMENT
    elif rule_failed:
        code = EXIT_CHECK_FAILED
    else:
        code = EXIT_OK
    return GateReport(passed=code == EXIT_OK, exit_code=code, policy=policy.source,
                      results=results_name, baseline=baseline_name, checks=checks,
                      counts=counts, warnings=warnings, environment_differences=env_diff)


__all__ = [
    "Check",
    "GateReport",
    "TAIL_QUANTILE",
    "device_differences",
    "environment_differences",
    "evaluate",
    "validity_marks",
]
