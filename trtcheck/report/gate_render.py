"""Render a :class:`trtcheck.analyze.gate.gate_evaluate.GateReport`: one-screen text, Markdown
for CI job summaries, JUnit XML for CI test tabs (one testcase per check).

Pure functions from the report to a string; no I/O. Untrusted text (metric keys such as
run labels come from results files) is escaped for Markdown with
:func:`trtcheck.report.templating.md_escape` and for XML by ``xml.etree``.
"""

from __future__ import annotations

import re
import textwrap
import xml.etree.ElementTree as ET

from trtcheck.analyze.gate import Check, GateReport
from trtcheck.units import terminal_safe

_WORD = {"pass": "PASS", "warn": "WARN", "fail": "FAIL"}
_ICON = {"pass": "✅", "warn": "⚠️", "fail": "❌"}


def headline(report: GateReport) -> str:
    """``gate PASSED: 5 passed, 1 warning, 0 failed`` (or FAILED / ENVIRONMENT)."""
    c = report.counts
    state = "PASSED" if report.passed else (
        "FAILED (environment)" if report.exit_code == 3 else "FAILED")
    new = f", {c['new']} new (not in the baseline)" if c.get("new") else ""
    return (f"gate {state}: {c.get('pass', 0)} passed, {c.get('warn', 0)} warning(s), "
            f"{c.get('fail', 0)} failed{new}")


def _label(c: Check) -> str:
    v = c.verdict
    if v == "new":
        return "NEW"
    if c.outcome == "pass":
        return "PASS"
    if v in ("inconclusive", "not-certified", "missing", "differs"):
        tag = {"inconclusive": "INCONCL", "not-certified": "UNCERT", "missing": "MISSING",
               "differs": "ENV"}[v]
        return f"{tag}" if c.outcome == "warn" else f"FAIL:{tag}"
    return _WORD[c.outcome]


ONE_SCREEN_CHECKS = 20
"""Above this many checks, passing checks are folded into one line per rule."""


def render_text(report: GateReport, width: int = 100) -> str:
    """A one-screen summary: failures, then warnings, one line each with the numbers (a
    message longer than ``2 * width`` characters is wrapped at spaces onto indented
    continuation lines, never cut); passes one line each, or folded per rule when there
    are more than :data:`ONE_SCREEN_CHECKS` checks; then the headline."""
    lines = [f"trtcheck gate  policy {report.policy}  results {report.results}"
             + (f"  baseline {report.baseline}" if report.baseline else "")]
    order = {"fail": 0, "warn": 1, "new": 2, "pass": 3}
    fold = len(report.checks) > ONE_SCREEN_CHECKS
    folded: dict[tuple[int, str], list[Check]] = {}
    for c in sorted(report.checks, key=lambda c: (
            order.get("new" if c.verdict == "new" else c.outcome, 4), c.line)):
        where = c.source.rsplit("/", 1)[-1]
        if fold and c.outcome == "pass" and c.verdict != "new":
            folded.setdefault((c.line, where), []).append(c)
            continue
        head = f"  {_label(c):<13} {where:<16} "
        text = head + c.message
        if len(text) > width * 2:
            # a long message (a remedy after the numbers) is wrapped at spaces onto lines
            # aligned under the message, never cut: a path or a word stays whole
            text = textwrap.fill(text, width * 2, subsequent_indent=" " * len(head),
                                 break_long_words=False, break_on_hyphens=False)
        lines.extend(text.split("\n"))
    for (_, where), cs in folded.items():
        what = cs[0].metric if len(cs) == 1 else f"{cs[0].rule} ({len(cs)} values)"
        lines.append(f"  {'PASS':<13} {where:<16} {what}")
    for w in report.warnings:
        if not any(w.endswith(c.message) for c in report.checks):
            lines.append(f"  note: {w}")
    lines.append(headline(report))
    # policy strings and paths come from the user's files: one line each, escapes shown
    return "\n".join(terminal_safe(ln) for ln in lines) + "\n"


def render_markdown(report: GateReport) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY`` and similar: a headline and a table."""
    from trtcheck.report.templating import md_escape as e
    icon = "✅" if report.passed else "❌"
    out = [f"## {icon} trtcheck {e(headline(report))}", "",
           f"Policy {e(report.policy)}, results {e(report.results)}"
           + (f", baseline {e(report.baseline)}" if report.baseline else ""), "",
           "| | rule | metric | verdict | details |", "|---|---|---|---|---|"]
    for c in report.checks:
        icon = "🆕" if c.verdict == "new" else _ICON[c.outcome]
        out.append(f"| {icon} | {e(c.source.rsplit('/', 1)[-1])} {e(c.name or '')} "
                   f"| {e(c.metric)} | {e(c.verdict)} | {e(c.message)} |")
    if report.environment_differences:
        out += ["", "**Environment differences (results vs baseline):** "
                + "; ".join(e(d) for d in report.environment_differences)]
    return "\n".join(out) + "\n"


def render_junit(report: GateReport) -> str:
    """JUnit XML: one ``testsuite`` "trtcheck gate", one ``testcase`` per check.

    Valid against the Jenkins xUnit plugin's Surefire schema ``junit-10.xsd`` (which
    allows ``<properties>`` only on ``<testsuite>``): the suite's properties name the
    policy, results, baseline, exit code and schema version; each testcase's verdict and
    rule go in its ``<system-out>`` (``verdict: ...`` / ``rule: ...`` lines). Failed checks
    carry ``<failure>``; warnings pass with the reason in ``<system-out>``, so CI test tabs
    show them without failing; a baseline member new in the results (verdict ``new``,
    not compared) is ``<skipped>``.
    """
    from trtcheck.results.model import SCHEMA_VERSION

    suite = ET.Element("testsuite", name="trtcheck gate", tests=str(len(report.checks)),
                       failures=str(sum(c.outcome == "fail" for c in report.checks)),
                       errors="0",
                       skipped=str(sum(c.verdict == "new" for c in report.checks)), time="0")
    props = ET.SubElement(suite, "properties")
    for k, v in (("policy", report.policy), ("results", report.results),
                 ("baseline", report.baseline or ""), ("exit_code", str(report.exit_code)),
                 ("trtcheck.schema_version", SCHEMA_VERSION)):
        ET.SubElement(props, "property", name=k, value=v)
    for c in report.checks:
        name = f"{c.source.rsplit('/', 1)[-1]} {c.metric}" + (f" ({c.name})" if c.name else "")
        tc = ET.SubElement(suite, "testcase", classname=f"trtcheck.gate.{c.kind}", name=name,
                           time="0")
        if c.outcome == "fail":
            f = ET.SubElement(tc, "failure", message=c.message, type=c.verdict)
            f.text = c.message
        elif c.verdict == "new":
            # not compared: nothing in the baseline to compare it with
            ET.SubElement(tc, "skipped", message=c.message)
        so = ET.SubElement(tc, "system-out")
        lines = [f"verdict: {c.verdict}", f"rule: {c.rule}"]
        if c.outcome == "warn":
            lines.append(f"{c.verdict}: {c.message}")
        so.text = "\n".join(lines)
    ET.indent(suite)
    text = ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
    # ElementTree escapes markup but not the characters XML 1.0 forbids (control
    # characters in a user's run label); they only occur inside text and attributes
    return _XML_INVALID.sub("\ufffd", text)


#: Characters not allowed anywhere in an XML 1.0 document (W3C XML 1.0, section 2.2).
_XML_INVALID = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render_metric_list(items: list[tuple[str, object]], markdown: bool = False) -> str:
    """``gate --list-metrics`` as text (path and value in two columns, the path column at
    most 70 characters wide) or Markdown (``- `path` = value``); values carry their
    metric's unit (:func:`trtcheck.units.format_quantity`), counts do not.

    Args:
        items: ``(path, value)`` pairs from :func:`trtcheck.analyze.gate.metricpath.metric_resolver.list_metrics`.
        markdown: Markdown list instead of columns.

    Returns:
        the lines joined by newlines, without a final newline; ``""`` for no items.
    """
    from trtcheck.units import format_quantity, metric_unit

    width = min(70, max(len(p) for p, _ in items)) if items else 0
    lines = []
    for p, v in items:
        leaf = p.rsplit(".", 1)[-1]
        shown = str(v) if p.startswith("len(") else format_quantity(v, metric_unit(leaf))
        lines.append(f"- `{p}` = {shown}" if markdown else f"{p:<{width}}  {shown}")
    return "\n".join(lines)
