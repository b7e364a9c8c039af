"""``trtcheck gate``: check a results file against a YAML policy (and a baseline)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from trtcheck.cli.common import OutputFormat, echo_json, format_option, log
from trtcheck.errors import EnvironmentProblem, GateFailed, InputError


def _write(path: str, text: str, inputs: list[str]) -> None:
    p = Path(path)
    for i in inputs:
        if i and p.exists() and Path(i).exists() and os.path.samefile(p, i):
            raise InputError(f"refusing to write the summary over the input file {i}",
                             "choose another output path")
    if p.is_dir():
        raise InputError(f"{p} is a directory", "give a file path for the summary")
    try:
        tmp = p.with_name(f".{p.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    except OSError as exc:
        raise InputError(f"cannot write {p}: {exc.strerror or exc}",
                         "choose a writable output path") from None


@click.command("gate", epilog="Exit codes: 0 all checks pass (warnings allowed); 1 a check "
               "failed; 2 bad policy, results or options; 3 the baseline comes from another "
               "machine/runtime and the policy says environment_mismatch: fail. "
               "Policy format: docs/gate.md.")
@click.argument("results", type=click.Path(dir_okay=True, path_type=str))
@click.option("--policy", "-p", "policy_path", required=True, type=click.Path(path_type=str),
              help="YAML policy file (budgets and baseline rules).")
@click.option("--baseline", "-b", "baseline_path", type=click.Path(path_type=str),
              default=None, help="results.json of the engine in production, for the "
              "policy's baseline rules.")
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
@click.option("--junit-xml", "junit_path", type=click.Path(path_type=str), default=None,
              help="Also write JUnit XML (one testcase per check) for CI test tabs.")
@click.option("--markdown", "markdown_path", type=click.Path(path_type=str), default=None,
              help="Also write a Markdown summary (append it to $GITHUB_STEP_SUMMARY).")
def cli(results: str, policy_path: str, baseline_path: str | None, output_format: str,
        junit_path: str | None, markdown_path: str | None) -> None:
    """Gate RESULTS (a trtcheck results.json) on budgets and baseline regressions.

    \b
    Every check is evaluated and reported at once:
      trtcheck gate results.json --policy gate.yaml
      trtcheck gate results.json -p gate.yaml --baseline prod.json --junit-xml gate.xml
    Regressions use a bootstrap interval of the ratio new/baseline on the raw samples:
    a check fails only when the whole interval is past the limit, and is "inconclusive"
    when it straddles it. Percentile budgets must be certifiable (MLPerf early stopping).
    """
    from trtcheck.analyze.gate import evaluate, load_policy
    from trtcheck.report import gate_render
    from trtcheck.results import load_results

    policy = load_policy(policy_path)
    res = load_results(results)
    base = load_results(baseline_path) if baseline_path else None
    report = evaluate(policy, res, base, results_name=results, baseline_name=baseline_path)
    inputs = [results, policy_path, baseline_path or ""]
    if junit_path:
        _write(junit_path, gate_render.render_junit(report), inputs)
    if markdown_path:
        _write(markdown_path, gate_render.render_markdown(report), inputs)
    if output_format == OutputFormat.JSON.value:
        echo_json(report)
    elif output_format == OutputFormat.MD.value:
        click.echo(gate_render.render_markdown(report), nl=False)
    else:
        click.echo(gate_render.render_text(report), nl=False)
    if report.exit_code == 3:
        raise EnvironmentProblem(
            "the baseline was measured on another machine or runtime: "
            + "; ".join(report.environment_differences),
            "re-measure the baseline here, or set settings: environment_mismatch: warn")
    if report.exit_code == 1:
        failed = [c for c in report.checks if c.outcome == "fail"]
        raise GateFailed(f"gate failed: {len(failed)} check(s) failed "
                         f"({', '.join(c.source.rsplit('/', 1)[-1] for c in failed[:5])}"
                         f"{', ...' if len(failed) > 5 else ''})",
                         "see the summary above")
    if output_format == OutputFormat.TEXT.value and report.counts.get("warn"):
        log(f"note: {report.counts['warn']} check(s) gave warnings, not failures")
