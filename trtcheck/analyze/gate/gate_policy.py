"""The CI gate's policy: a YAML file parsed and validated into a :class:`Policy`.

:func:`load_policy` parses and validates a policy file (every mistake is reported at
once, in one :class:`PolicyError` naming each line). The verdicts are decided in
:mod:`trtcheck.analyze.gate.gate_evaluate`.

Policy format (all keys optional except at least one rule)::

    version: 1
    settings:
      confidence: 0.95          # two-sided level of ratio intervals, in (0.5, 1)
      certify_confidence: 0.99  # early-stopping level for percentile budgets, in (0.5, 1)
      resamples: 300            # bootstrap resamples, 100..100000
      seed: 0
      run_to_run_cv: 1%         # assumed run-to-run variation a single run cannot show
      on_inconclusive: warn     # warn | fail   (baseline interval straddles the limit)
      on_uncertified: fail      # warn | fail   (percentile budget met but not certifiable)
      on_missing: fail          # warn | fail   (metric absent from the results file)
      environment_mismatch: warn   # ignore | warn | fail (fail: exit 3)
      on_invalid_run: fail      # warn | fail   (a measurement marked invalid, see below)
      cross_device: fail        # fail | warn | allow  (baseline from another GPU model or
                                #                       compute capability)
    budgets:                    # absolute limits
      - bench.batch[8].p99_ms <= 5 ms
      - bench.batch[8].throughput_samples_per_s >= 1500 samples/s
      - metric: inspection.parameter_bytes
        max: 100 MiB
      - len(inspection.lints[severity=error]) == 0
    baseline:                   # relative to --baseline results.json
      - metric: bench.batch[*].p99_ms
        max_regression: 5%      # may get worse by at most 5%
      - bench.batch[8].throughput_samples_per_s: 3%    # short form
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trtcheck.analyze.gate import regression as R
from trtcheck.analyze.gate.metricpath.metric_checks import (
    HIGHER,
    LOWER,
    PathInfo,
    check_path,
    fold_dotted_keys,
    infer_direction,
)
from trtcheck.analyze.gate.metricpath.metric_grammar import (
    MetricPath,
    MetricPathError,
    opens_quote,
    parse_path,
)
from trtcheck.errors import InputError
from trtcheck.units import Unit, UnitError, metric_unit, parse_quantity

POLICY_VERSION = 1

TOP_KEYS = ("version", "settings", "budgets", "baseline")
SETTING_KEYS = ("confidence", "certify_confidence", "resamples", "seed", "run_to_run_cv",
                "on_inconclusive", "on_uncertified", "on_missing", "environment_mismatch",
                "on_invalid_run", "cross_device")
BUDGET_KEYS = ("metric", "max", "min", "equals", "not_equals", "name", "on_uncertified",
               "on_missing")
BASELINE_KEYS = ("metric", "max_regression", "direction", "name", "on_inconclusive",
                 "on_missing")
OPS: dict[str, Any] = {"<=": operator.le, "<": operator.lt, ">=": operator.ge,
                       ">": operator.gt, "==": operator.eq, "!=": operator.ne}
_MAPPING_OPS = {"max": "<=", "min": ">=", "equals": "==", "not_equals": "!="}
_OP_CHARS = "=<>!\u2264\u2265\u2260"
#: operators people write that are not ours -> the one they mean
_OP_FIXES = {"=": "==", "=<": "<=", "=>": ">=", "<>": "!=", "=!": "!=", "===": "==",
             "\u2264": "<=", "\u2265": ">=", "\u2260": "!="}


def _split_expr(text: str) -> tuple[str, str, str] | None:
    """``PATH OP VALUE`` -> its three parts: the first run of operator characters outside
    brackets, parentheses and quotes (filters inside the path hold ``=`` too), or
    ``None`` when there is none or nothing on one side."""
    depth, in_sel, quote = 0, False, None  # selectors do not nest: '[' inside is text,
    for i, ch in enumerate(text):           # as in the metric path parser
        if quote:
            quote = None if ch == quote else quote
        elif in_sel and opens_quote(text, i):
            quote = ch
        elif in_sel:
            in_sel = ch != "]"
        elif ch == "[":
            in_sel = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and ch in _OP_CHARS:
            j = i
            while j < len(text) and text[j] in _OP_CHARS:
                j += 1
            path, op, value = text[:i].strip(), text[i:j], text[j:].strip()
            return (path, op, value) if path and value else None
    return None

MAX_POLICY_BYTES = 1_000_000


@dataclass(frozen=True)
class Settings:
    """Gate settings (see the module docstring for meanings and defaults)."""

    confidence: float = R.DEFAULT_CONFIDENCE
    certify_confidence: float = 0.99
    resamples: int = R.DEFAULT_RESAMPLES
    seed: int = 0
    run_to_run_cv: float = R.DEFAULT_RUN_TO_RUN_CV
    on_inconclusive: str = "warn"
    on_uncertified: str = "fail"
    on_missing: str = "fail"
    environment_mismatch: str = "warn"
    on_invalid_run: str = "fail"
    cross_device: str = "fail"


@dataclass(frozen=True)
class Rule:
    """One validated policy rule.

    Attributes:
        kind: ``"budget"`` or ``"baseline"``.
        line: 1-based line of the rule in the policy file.
        text: human form (``bench.batch[8].p99_ms <= 5 ms``).
        path: the parsed metric path; info: what static checking found.
        op, bound, bound_text: budget comparison (bound in the metric's unit).
        direction, max_regression: baseline rule (fraction, e.g. 0.05).
        on_inconclusive, on_uncertified, on_missing: ``"warn"`` or ``"fail"``.
    """

    kind: str
    line: int
    text: str
    path: MetricPath
    info: PathInfo
    name: str | None = None
    op: str | None = None
    bound: Any = None
    bound_text: str | None = None
    direction: str | None = None
    max_regression: float | None = None
    on_inconclusive: str = "warn"
    on_uncertified: str = "fail"
    on_missing: str = "fail"


@dataclass(frozen=True)
class Policy:
    """A validated gate policy: settings and rules, with the file name for messages."""

    source: str
    settings: Settings
    rules: tuple[Rule, ...]

    @property
    def has_baseline_rules(self) -> bool:
        return any(r.kind == "baseline" for r in self.rules)


# --------------------------------------------------------------------------- loading


class _PolicyError(Exception):
    def __init__(self, line: int, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.line, self.message, self.hint = line, message, hint


class PolicyError(InputError):
    """Every mistake of a policy file at once (exit code 2).

    One mistake reads ``<file>:<line>: <what>`` with its own hint (as before); several
    read ``<file> has N mistakes: line A: <what> (<hint>); line B: ...`` in line order,
    one line for the CLI summary, with a hint to fix them all before running again.

    Attributes:
        mistakes: ``(line, message, hint)`` per mistake, sorted by line (1-based).
    """

    def __init__(self, message: str, hint: str | None,
                 mistakes: list[tuple[int, str, str | None]]) -> None:
        super().__init__(message, hint)
        self.mistakes = mistakes

    @classmethod
    def of(cls, source: str, errors: list[_PolicyError]) -> PolicyError:
        seen: set[tuple[int, str]] = set()
        mistakes: list[tuple[int, str, str | None]] = []
        for e in sorted(errors, key=lambda e: e.line):  # stable: same line keeps order
            if (e.line, e.message) not in seen:
                seen.add((e.line, e.message))
                mistakes.append((e.line, e.message, e.hint))
        if len(mistakes) == 1:
            line, msg, hint = mistakes[0]
            return cls(f"{source}:{line}: {msg}", hint, mistakes)
        parts = [f"line {line}: {msg}" + (f" ({hint})" if hint else "")
                 for line, msg, hint in mistakes]
        return cls(f"{source} has {len(mistakes)} mistakes: " + "; ".join(parts),
                   "fix all of them, then run again (policy format: docs/gate.md)", mistakes)


def _line(node: Any) -> int:
    return int(node.start_mark.line) + 1 if node is not None and node.start_mark else 1


def _did_you_mean(key: str, choices: tuple[str, ...]) -> str:
    import difflib
    close = difflib.get_close_matches(key, choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return "valid keys: " + ", ".join(choices)


class _Doc:
    """PyYAML node tree with line numbers and safe scalar construction."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def value(self, node: Any) -> Any:
        """The Python value of ``node``; strings have lone surrogates escaped.

        Raises:
            _PolicyError: a scalar PyYAML cannot convert (an integer of more than
                4,300 digits, ``sys.get_int_max_str_digits``).
        """
        from trtcheck.safe_io import clean_strings

        try:
            v = clean_strings(self.loader.construct_object(node, deep=True))
        except ValueError as exc:
            raise _PolicyError(_line(node), f"a value YAML cannot convert "
                               f"({' '.join(str(exc).split())[:100]})",
                               "write an ordinary number") from None
        if isinstance(v, int) and v.bit_length() > 1024:  # beyond any float: 0x fff...
            raise _PolicyError(_line(node), f"a number of {v.bit_length()} bits, beyond "
                               "the float range", "write an ordinary number")
        return v

    def mapping(self, node: Any, what: str, allowed: tuple[str, ...],
                errs: _Errors | None = None) -> dict[str, tuple[Any, Any]]:
        """The mapping's valid keys -> ``(key node, value node)``.

        With ``errs``, each bad key (not text, duplicate, unknown) is recorded there and
        skipped, so the other keys are still checked; without it the first one raises.
        A node that is not a mapping always raises (nothing inside it can be checked).
        """
        import yaml
        if not isinstance(node, yaml.MappingNode):
            raise _PolicyError(_line(node), f"{what} must be a mapping (key: value), got "
                               f"{_kind(node)}")
        out: dict[str, tuple[Any, Any]] = {}
        for knode, vnode in node.value:
            key = self.value(knode)
            err: _PolicyError | None = None
            if not isinstance(key, str):
                err = _PolicyError(_line(knode), f"{what}: keys must be text, got {key!r}")
            elif key in out:
                err = _PolicyError(_line(knode), f"{what}: duplicate key {key!r} (first at "
                                   f"line {_line(out[key][0])})", "remove one of them")
            elif key not in allowed:
                err = _PolicyError(_line(knode), f"unknown key {key!r} in {what}",
                                   _did_you_mean(key, allowed))
            if err is not None:
                if errs is None:
                    raise err
                errs.add(err)
                continue
            out[key] = (knode, vnode)
        return out


class _Errors:
    """Every independent policy mistake found, in the order found (reported sorted by line)."""

    def __init__(self) -> None:
        self.items: list[_PolicyError] = []

    def add(self, err: _PolicyError) -> None:
        self.items.append(err)

    def __len__(self) -> int:
        return len(self.items)


def _kind(node: Any) -> str:
    import yaml
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return f"the value {node.value!r}" if isinstance(node, yaml.ScalarNode) else "nothing"


def load_policy(path: str | Path) -> Policy:
    """Read and validate a policy file.

    Raises:
        InputError: (exit 2) missing/unreadable/binary file or YAML syntax errors (the
            message starts with ``<file>:<line>:``).
        PolicyError: (an InputError, exit 2) every schema mistake at once (unknown keys
            with a close match, wrong types, bad units, percentiles out of range, unknown
            metric paths with close matches); one mistake reads ``<file>:<line>: ...``,
            several ``<file> has N mistakes: line A: ...; line B: ...``.
    """
    from trtcheck.safe_io import read_input_bytes

    p = Path(path)
    data = read_input_bytes(p, "policy file", MAX_POLICY_BYTES,
                            "check the path given to --policy (a YAML file)")
    return parse_policy(data, source=str(p))


def _policy_loader(text: str) -> Any:
    """A PyYAML ``SafeLoader`` for ``text`` that refuses aliases (``*name``).

    A policy has no use for them, and they are how a few hundred bytes expand to
    gigabytes ("billion laughs": each alias repeats an anchored list of aliases). The
    refusal happens while composing, before anything is expanded.

    Raises:
        yaml.reader.ReaderError: ``text`` holds a character YAML forbids (from the
            constructor, which reads the first characters).
    """
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise _AliasRefused(event.start_mark.line + 1)
            return super().compose_node(parent, index)

    return NoAliasLoader(text)


class _AliasRefused(Exception):
    """A YAML alias in a policy (carries the 1-based line)."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def parse_policy(data: bytes | str, source: str = "policy.yaml") -> Policy:
    """Parse and validate policy text (bytes or str); see :func:`load_policy`."""
    import yaml
    if isinstance(data, bytes):
        if len(data) > MAX_POLICY_BYTES:
            raise InputError(f"{source}:1: policy file is {len(data):,} bytes, too large "
                             "for a policy", "pass the YAML policy, not a data file")
        if b"\x00" in data[:8192]:
            raise InputError(f"{source}:1: not a text file (binary data)",
                             "pass a YAML policy file (see docs/gate.md)")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise InputError(f"{source}:{line}: not UTF-8 text",
                             "save the policy as UTF-8") from None
    else:
        text = data
    if not text.strip():
        raise InputError(f"{source}:1: the policy file is empty",
                         "add budgets: and/or baseline: rules (see docs/gate.md)")
    try:
        loader = _policy_loader(text)
    except yaml.reader.ReaderError as exc:  # a control character, checked on construction
        line = text[: max(0, exc.position)].count("\n") + 1
        raise InputError(f"{source}:{line}: the policy holds the control character "
                         f"U+{exc.character:04X}, which YAML does not allow"
                         if isinstance(exc.character, int) else
                         f"{source}:{line}: the policy holds a character YAML does not allow",
                         "remove it (a stray escape sequence or a binary paste?)") from None
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark else 1
            ctx = ""
            if exc.context:
                ctx_line = exc.context_mark.line + 1 if exc.context_mark else None
                ctx = f" ({exc.context}" + (f" that starts at line {ctx_line}"
                                            if ctx_line and ctx_line != line else "") + ")"
            raise InputError(f"{source}:{line}: YAML syntax error: {exc.problem}{ctx}",
                             "check indentation, colons and quotes on that line") from None
        except yaml.YAMLError as exc:
            raise InputError(f"{source}:1: not valid YAML: {' '.join(str(exc).split())[:200]}",
                             None) from None
        except _AliasRefused as exc:
            raise InputError(f"{source}:{exc.line}: YAML aliases (*name) are not allowed in "
                             "a policy", "write the value out in full") from None
        except RecursionError:
            raise InputError(f"{source}:1: the policy is nested too deeply",
                             "a policy is a few levels of mappings (see docs/gate.md)") \
                from None
        if root is None:
            raise InputError(f"{source}:1: the policy file holds no YAML document",
                             "add budgets: and/or baseline: rules (see docs/gate.md)")
        errs = _Errors()
        try:
            policy: Policy | None = _build(_Doc(loader), root, source, errs)
        except _PolicyError as exc:  # a mistake that leaves nothing else checkable
            errs.add(exc)
            policy = None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(f"{source}:{mark.line + 1 if mark else 1}: {exc}", None) from None
        if len(errs) or policy is None:
            raise PolicyError.of(source, errs.items)
        return policy
    finally:
        loader.dispose()


def _choice(doc: _Doc, node: Any, key: str, choices: tuple[str, ...]) -> str:
    v = doc.value(node)
    if not isinstance(v, str) or v not in choices:
        raise _PolicyError(_line(node), f"{key} must be one of {', '.join(choices)}, got {v!r}",
                           _did_you_mean(str(v), choices) if isinstance(v, str) else None)
    return v


def _fraction(doc: _Doc, node: Any, key: str, lo: float, hi: float,
              closed_lo: bool = False) -> float:
    v = doc.value(node)
    if isinstance(v, str) and v.strip().endswith("%"):
        try:
            v = float(v.strip()[:-1]) / 100.0
        except ValueError:
            raise _PolicyError(_line(node), f"{key}: {v!r} is not a percentage",
                               "write e.g. 5% or 0.05") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _PolicyError(_line(node), f"{key} must be a number or a percentage, got {v!r}",
                           "write e.g. 5% or 0.05")
    ok = (lo <= v if closed_lo else lo < v) and v < hi
    if not ok:
        raise _PolicyError(_line(node), f"{key} must lie in {'[' if closed_lo else '('}"
                           f"{lo:g}, {hi:g}), got {v:g}",
                           "fractions are 0..1 (0.95), or write a percentage (95%)")
    return float(v)


def _int(doc: _Doc, node: Any, key: str, lo: int, hi: int) -> int:
    v = doc.value(node)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _PolicyError(_line(node), f"{key} must be an integer in [{lo}, {hi}], got {v!r}")
    return v


def _build(doc: _Doc, root: Any, source: str, errs: _Errors) -> Policy | None:
    """Validate the whole policy, recording every independent mistake in ``errs``.

    A mistake that makes others meaningless is reported alone: a rule whose metric is
    unknown is not also checked for its unit, a misspelt key does not also count as the
    key that is then missing, and "no rules" is said only when nothing else is wrong.
    Returns the policy, or ``None`` when ``errs`` holds a mistake.
    """
    import yaml
    if not isinstance(root, yaml.MappingNode):
        raise _PolicyError(_line(root), f"a policy is a mapping with keys {', '.join(TOP_KEYS)}; "
                           f"this file holds {_kind(root)}",
                           "is this the right file? see docs/gate.md for the format")
    top = doc.mapping(root, "the policy", TOP_KEYS, errs)
    if "version" in top:
        v = doc.value(top["version"][1])
        if v != POLICY_VERSION or isinstance(v, bool):
            errs.add(_PolicyError(_line(top["version"][1]), f"unsupported policy version {v!r}",
                                  f"this trtcheck reads version {POLICY_VERSION}"))
    kw: dict[str, Any] = {}
    if "settings" in top:
        node = top["settings"][1]
        try:
            sm = doc.mapping(node, "settings", SETTING_KEYS, errs)
        except _PolicyError as exc:
            errs.add(exc)
            sm = {}
        for key, (_, vn) in sm.items():
            try:
                if key == "confidence" or key == "certify_confidence":
                    kw[key] = _fraction(doc, vn, key, 0.5, 1.0)
                elif key == "run_to_run_cv":
                    kw[key] = _fraction(doc, vn, key, 0.0, 1.0, closed_lo=True)
                elif key == "resamples":
                    kw[key] = _int(doc, vn, key, 100, 100_000)
                elif key == "seed":
                    kw[key] = _int(doc, vn, key, 0, 2**63 - 1)
                elif key == "environment_mismatch":
                    kw[key] = _choice(doc, vn, key, ("ignore", "warn", "fail"))
                elif key == "cross_device":
                    kw[key] = _choice(doc, vn, key, ("allow", "warn", "fail"))
                else:
                    kw[key] = _choice(doc, vn, key, ("warn", "fail"))
            except _PolicyError as exc:
                errs.add(exc)
    st = Settings(**kw)
    rules: list[Rule] = []
    for section, builder in (("budgets", _budget), ("baseline", _baseline)):
        if section not in top:
            continue
        _knode, node = top[section]
        if isinstance(node, yaml.ScalarNode) and doc.value(node) is None:
            continue
        if not isinstance(node, yaml.SequenceNode):
            errs.add(_PolicyError(_line(node), f"{section} must be a list of rules (lines "
                                  f"starting with '- '), got {_kind(node)}"))
            continue
        for item in node.value:
            try:
                rule = builder(doc, item, st, errs)
            except _PolicyError as exc:
                errs.add(exc)
                continue
            if rule is not None:
                rules.append(rule)
    if len(errs):
        return None
    if not rules:
        raise _PolicyError(_line(root), "the policy has no rules",
                           "add a budgets: or baseline: list (see docs/gate.md)")
    return Policy(source=source, settings=st, rules=tuple(rules))


def _path(line: int, text: Any) -> tuple[MetricPath, PathInfo]:
    if not isinstance(text, str):
        raise _PolicyError(line, f"metric must be a path like bench.batch[8].p99_ms, got {text!r}")
    try:
        p = fold_dotted_keys(parse_path(text))  # variants.fp16 = variants[fp16]
        return p, check_path(p)
    except MetricPathError as exc:
        raise _PolicyError(line, f"unknown metric {text.strip()!r}: {exc.message}",
                           exc.hint) from None


def _bound(line: int, raw: Any, op: str, path: MetricPath, info: PathInfo) -> tuple[Any, str]:
    text = str(raw).strip() if not isinstance(raw, bool) else str(raw).lower()
    scal = info.type.scalars
    if info.type.numeric:
        if op not in OPS:
            raise _PolicyError(line, f"unknown comparison {op!r}")
        unit = metric_unit(info.leaf) if path.func != "len" else Unit("none")
        try:
            return parse_quantity(raw, unit, what=f"bound of {path.text}"), text
        except UnitError as exc:
            raise _PolicyError(line, exc.message, exc.hint) from None
    if op not in ("==", "!="):
        raise _PolicyError(line, f"{path.text} is {info.type.describe()}, so only == and != "
                           f"apply (got {op})")
    if bool in scal:
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false", "yes", "no"):
            raw = raw.strip().lower() in ("true", "yes")
        if not isinstance(raw, bool):
            raise _PolicyError(line, f"{path.text} is true/false, got {raw!r}")
        return raw, text
    return (raw.strip().strip("'\"") if isinstance(raw, str) else str(raw)), text


def _warn_or_fail(doc: Any, mp: dict[str, Any], key: str, default: str,
                  errs: _Errors) -> str:
    """A rule's ``warn``/``fail`` setting ``key`` (``on_missing`` ...), or ``default`` when
    absent or wrong (a wrong value is recorded in ``errs``)."""
    if key not in mp:
        return default
    return _try(errs, _choice, doc, mp[key][1], key, ("warn", "fail")) or default


def _try(errs: _Errors, fn: Any, *args: Any) -> Any:
    """``fn(*args)``, or ``None`` with its :class:`_PolicyError` recorded in ``errs``."""
    try:
        return fn(*args)
    except _PolicyError as exc:
        errs.add(exc)
        return None


def _budget(doc: _Doc, node: Any, st: Settings, errs: _Errors) -> Rule | None:
    """One budget rule, or ``None`` with its mistakes recorded in ``errs`` (a mistake
    that leaves nothing else of the rule checkable is raised)."""
    import yaml
    line = _line(node)
    on_unc, on_miss, name = st.on_uncertified, st.on_missing, None
    pairs: list[tuple[str, Any, int]] = []  # (op, raw bound, line of the bound)
    n0 = len(errs)
    if isinstance(node, yaml.ScalarNode):
        text = doc.value(node)
        if not isinstance(text, str):
            raise _PolicyError(line, f"a budget is 'PATH OP VALUE' (e.g. "
                               f"bench.batch[8].p99_ms <= 5 ms), got {text!r}")
        parts = _split_expr(text.strip())
        if parts is None:
            raise _PolicyError(line, f"budget {text!r} has no comparison",
                               "write PATH <= VALUE, >=, <, >, == or != "
                               "(e.g. bench.batch[8].p99_ms <= 5 ms)")
        ptext, op, value = parts
        bad_op = None
        if op not in OPS:
            fix = _OP_FIXES.get(op)
            bad_op = _PolicyError(line, f"unknown comparison {op!r} in budget {text!r}",
                                  f"did you mean {fix!r}?" if fix else
                                  "comparisons: <=, <, >=, >, ==, !=")
        got = _try(errs, _path, line, ptext)  # independent of the operator
        if bad_op is not None:
            errs.add(bad_op)
        if got is None or bad_op is not None:
            return None
        path, info = got
        pairs = [(op, value, line)]
    elif isinstance(node, yaml.MappingNode):
        mp = doc.mapping(node, "a budget", BUDGET_KEYS, errs)
        key_mistakes = len(errs) > n0  # a misspelt key: do not also say what is missing
        if "name" in mp:
            name = str(doc.value(mp["name"][1]))
        on_unc = _warn_or_fail(doc, mp, "on_uncertified", on_unc, errs)
        on_miss = _warn_or_fail(doc, mp, "on_missing", on_miss, errs)
        for k, op in _MAPPING_OPS.items():
            if k in mp:
                pairs.append((op, doc.value(mp[k][1]), _line(mp[k][1])))
        if "metric" not in mp:
            if not key_mistakes:
                errs.add(_PolicyError(line, "budget without 'metric'",
                                      "add metric: <path>, e.g. metric: bench.batch[8].p99_ms"))
            return None
        got = _try(errs, _path, _line(mp["metric"][1]), doc.value(mp["metric"][1]))
        if got is None:
            return None  # its bounds cannot be checked against an unknown metric
        path, info = got
        if not pairs:
            if not key_mistakes:
                errs.add(_PolicyError(line, f"budget for {path.text} has no limit",
                                      "add max:, min:, equals: or not_equals:"))
            return None
        if len(pairs) > 1 and not (len(pairs) == 2 and {p[0] for p in pairs} == {"<=", ">="}):
            mixed = ", ".join(k for k in _MAPPING_OPS if k in mp)
            errs.add(_PolicyError(line, f"budget for {path.text} mixes {mixed}",
                                  "use max: and/or min:, or equals:/not_equals: alone"))
            return None
    else:
        raise _PolicyError(line, f"a budget is a line 'PATH OP VALUE' or a mapping with "
                           f"metric: and max:/min:, got {_kind(node)}")
    if info.type.kind != "scalar":
        errs.add(_PolicyError(line, f"{path.text} is not a single value"))
        return None
    bounds = []
    for op, raw, bline in pairs:
        got_b = _try(errs, _bound, bline, raw, op, path, info)
        if got_b is not None:
            bounds.append((op, got_b[0], got_b[1]))
    if len(errs) > n0:
        return None
    if len(bounds) == 2:
        lo = next(b for b in bounds if b[0] == ">=")
        hi = next(b for b in bounds if b[0] == "<=")
        if lo[1] > hi[1]:
            errs.add(_PolicyError(line, f"budget for {path.text}: min {lo[2]} is above max "
                                  f"{hi[2]}"))
            return None
        op, b, btext = "range", (lo[1], hi[1]), f"{lo[2]} .. {hi[2]}"
        text = f"{lo[2]} <= {path.text} <= {hi[2]}"
    else:
        op, b, btext = bounds[0]
        text = f"{path.text} {op} {btext}"
    return Rule(kind="budget", line=line, text=text, path=path, info=info, name=name, op=op,
                bound=b, bound_text=btext, on_uncertified=on_unc, on_missing=on_miss)


def _baseline(doc: _Doc, node: Any, st: Settings, errs: _Errors) -> Rule | None:
    """One baseline rule, or ``None`` with its mistakes recorded in ``errs``."""
    import yaml
    line = _line(node)
    if not isinstance(node, yaml.MappingNode):
        raise _PolicyError(line, "a baseline rule is a mapping: metric: PATH and "
                           "max_regression: 5% (or the short form 'PATH: 5%')",
                           f"got {_kind(node)}")
    keys = [doc.value(k) for k, _ in node.value]
    name = None
    direction = None
    direction_given = False
    on_inc, on_miss = st.on_inconclusive, st.on_missing
    n0 = len(errs)
    if len(keys) == 1 and isinstance(keys[0], str) and keys[0] not in BASELINE_KEYS \
            and re.search(r"[.(\[]", keys[0]):
        knode, vnode = node.value[0]
        got = _try(errs, _path, _line(knode), keys[0])
        reg = _try(errs, _fraction, doc, vnode, "max_regression", 0.0, 1.0, True)
    else:
        mp = doc.mapping(node, "a baseline rule", BASELINE_KEYS, errs)
        key_mistakes = len(errs) > n0
        got = None
        reg = None
        if "metric" not in mp:
            if not key_mistakes:
                errs.add(_PolicyError(line, "baseline rule without 'metric'",
                                      "add metric: <path>, e.g. metric: bench.batch[8].p99_ms"))
        else:
            got = _try(errs, _path, _line(mp["metric"][1]), doc.value(mp["metric"][1]))
        if "max_regression" not in mp:
            if not key_mistakes and "metric" in mp:
                what = got[0].text if got is not None else str(doc.value(mp["metric"][1]))
                errs.add(_PolicyError(line, f"baseline rule for {what} has no max_regression",
                                      "add max_regression: 5% (how much worse it may get)"))
        else:
            reg = _try(errs, _fraction, doc, mp["max_regression"][1], "max_regression",
                       0.0, 1.0, True)
        if "direction" in mp:
            direction_given = True
            direction = _try(errs, _choice, doc, mp["direction"][1], "direction",
                             (LOWER, HIGHER))
        if "name" in mp:
            name = str(doc.value(mp["name"][1]))
        on_inc = _warn_or_fail(doc, mp, "on_inconclusive", on_inc, errs)
        on_miss = _warn_or_fail(doc, mp, "on_missing", on_miss, errs)
    if got is None:
        return None  # direction and type cannot be judged without a known metric
    path, info = got
    if not info.type.numeric:
        errs.add(_PolicyError(line, f"{path.text} is {info.type.describe()}; baseline rules "
                              "compare numbers"))
        return None
    direction = direction or infer_direction(info.leaf)
    if direction is None:
        if not direction_given:  # a bad direction: value was already reported
            errs.add(_PolicyError(line, f"cannot tell whether lower or higher {path.text} "
                                  "is better", "add direction: lower or direction: higher"))
        return None
    if len(errs) > n0 or reg is None:
        return None
    verb = "grow" if direction == LOWER else "drop"
    text = f"{path.text}: may {verb} by at most {reg * 100:g}% vs baseline"
    return Rule(kind="baseline", line=line, text=text, path=path, info=info, name=name,
                direction=direction, max_regression=reg, on_inconclusive=on_inc,
                on_missing=on_miss)


__all__ = [
    "OPS",
    "Policy",
    "PolicyError",
    "Rule",
    "Settings",
    "load_policy",
    "parse_policy",
]
