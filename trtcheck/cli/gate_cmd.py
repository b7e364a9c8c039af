"""``trtcheck gate``: check a results file against a YAML policy (and a baseline)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from trtcheck.cli.common import (
    OutputFormat,
    echo_json,
    echo_text,
    format_option,
    log,
    overwrite_option,
)
from trtcheck.errors import EnvironmentProblem, GateFailed, UsageError


def _results_path(path: str) -> str:
    """A report folder stands for the results.json inside it (``trtcheck report -o DIR``)."""
    p = Path(path)
    if p.is_dir() and (p / "results.json").is_file():
        return str(p / "results.json")
    return path


def _check_output(path: str | None, inputs: list[tuple[str, str | None]], overwrite: bool,
                  option: str = "-o") -> None:
    """Before any work: never an input file; an existing file only with --overwrite;
    never an empty name or ``-`` (a file named '-' is not stdout)."""
    from trtcheck.cli.common import check_output_file, refuse_output_over_inputs
    if path is None:
        return
    if not path.strip() or path.strip() == "-":
        raise UsageError(f"{option} needs a file name, got {path!r}",
                         "give a path, e.g. gate.xml / gate.md; --format md or json prints "
                         "to stdout")
    refuse_output_over_inputs([(option, path)], inputs)
    check_output_file(path, overwrite)


def _write(path: str, text: str) -> None:
    from trtcheck.cli.common import write_text_atomic

    write_text_atomic(path, text)


def _list(res: object, output_format: str) -> None:
    from trtcheck.analyze.gate.metricpath import list_metrics
    items = list_metrics(res)
    if output_format == OutputFormat.JSON.value:
        from trtcheck.report.documents import MetricEntry, MetricListing

        echo_json(MetricListing(metrics=[MetricEntry(path=p, value=v) for p, v in items]),
                  "gate-metrics")
        return
    from trtcheck.report.gate_render import render_metric_list

    text = render_metric_list(items, markdown=output_format == OutputFormat.MD.value)
    if text:
        echo_text(text)


@click.command("gate", epilog="Exit codes: 0 all checks pass (warnings allowed); 1 a check "
               "failed; 2 bad policy, results or options; 3 the baseline comes from another "
               "machine/runtime and the policy says environment_mismatch: fail. "
               "Policy format: docs/gate.md.")
@click.argument("results", type=click.Path(dir_okay=True, path_type=str))
@click.option("--policy", "-p", "policy_path", default=None, type=click.Path(path_type=str),
              help="YAML policy file (budgets and baseline rules); required unless "
              "--list-metrics.")
@click.option("--baseline", "-b", "baseline_path", type=click.Path(path_type=str),
              default=None, help="results.json of the engine in production, for the "
              "policy's baseline rules.")
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
@click.option("--junit-xml", "junit_path", type=click.Path(path_type=str), default=None,
              help="Also write JUnit XML (one testcase per check) for CI test tabs.")
@click.option("--markdown", "markdown_path", type=click.Path(path_type=str), default=None,
              help="Also write a Markdown summary (append it to $GITHUB_STEP_SUMMARY).")
@overwrite_option("Replace existing --junit-xml / --markdown files.")
@click.option("--list-metrics", is_flag=True,
              help="List every metric path of RESULTS with its value (to write a policy), "
              "then exit.")
def cli(results: str, policy_path: str | None, baseline_path: str | None, output_format: str,
        junit_path: str | None, markdown_path: str | None, overwrite: bool,
        list_metrics: bool) -> None:
    """Gate RESULTS (a trtcheck results.json) on budgets and baseline regressions.

    RESULTS and --baseline may also be a perf_analyzer -f CSV or a Triton
    /v2/models/NAME/stats JSON (docs/imports.md).

    \b
    Every check is evaluated and reported at once:
      trtcheck gate results.json --policy gate.yaml
      trtcheck gate results.json -p gate.yaml --baseline prod.json --junit-xml gate.xml
      trtcheck gate results.json --list-metrics   # the paths a policy can use
    Regressions use a bootstrap interval of the ratio new/baseline on the raw samples:
    a check fails only when the whole interval is past the limit, and is "inconclusive"
    when it straddles it. Percentile budgets must be certifiable (MLPerf early stopping).
    """
    from trtcheck.analyze.gate import evaluate
    from trtcheck.analyze.gate import load_policy
    from trtcheck.report import gate_render
    from trtcheck.results.documents import load_results_input as load_results

    results = _results_path(results)
    if baseline_path:
        baseline_path = _results_path(baseline_path)
    if list_metrics:
        _list(load_results(results), output_format)
        return
    if policy_path is None:
        raise UsageError("missing --policy", "pass --policy gate.yaml (see docs/gate.md), or "
                         "--list-metrics to see the metric paths of RESULTS")
    inputs = [("RESULTS", results), ("--policy", policy_path), ("--baseline", baseline_path)]
    if junit_path and markdown_path and \
            os.path.realpath(junit_path) == os.path.realpath(markdown_path):
        raise UsageError(f"--junit-xml and --markdown name the same file {junit_path}",
                         "give each summary its own path, e.g. gate.xml and gate.md")
    _check_output(junit_path, inputs, overwrite, "--junit-xml")
    _check_output(markdown_path, inputs, overwrite, "--markdown")
    policy = load_policy(policy_path)
    res = load_results(results)
    base = load_results(baseline_path) if baseline_path else None
    report = evaluate(policy, res, base, results_name=results, baseline_name=baseline_path)
    if junit_path:
        _write(junit_path, gate_render.render_junit(report))
    if markdown_path:
        _write(markdown_path, gate_render.render_markdown(report))
    if output_format == OutputFormat.JSON.value:
        echo_json(report, "gate")
    elif output_format == OutputFormat.MD.value:
        echo_text(gate_render.render_markdown(report), nl=False)
    else:
        echo_text(gate_render.render_text(report), nl=False)
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
