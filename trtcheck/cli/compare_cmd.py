"""``trtcheck compare``: two results files side by side."""

from __future__ import annotations

from pathlib import Path

import click

from trtcheck.cli.common import FiniteFloatRange, log, overwrite_option


def _results_path(path: str) -> str:
    """A report folder stands for the results.json inside it (``trtcheck report -o DIR``)."""
    p = Path(path)
    if p.is_dir() and (p / "results.json").is_file():
        return str(p / "results.json")
    return path


@click.command("compare", epilog="Exit codes: 0 compared; 2 bad input (also two files that "
               "hold nothing compare can pair). compare never fails on a regression: use "
               "trtcheck gate for that.")
@click.argument("a", type=click.Path(path_type=str))
@click.argument("b", type=click.Path(path_type=str))
@click.option("--format", "output_format", type=click.Choice(["text", "md", "html", "json"]),
              default="text", show_default=True, help="Output format.")
@click.option("--output", "-o", "output", type=click.Path(path_type=str), default=None,
              help="Write to this file instead of stdout (refuses to replace an existing "
              "file unless --overwrite).")
@overwrite_option()
@click.option("--confidence", type=FiniteFloatRange(0.5, 1.0, min_open=True, max_open=True),
              default=0.95, show_default=True, help="Two-sided level of the ratio intervals.")
@click.option("--run-to-run-cv", type=FiniteFloatRange(0.0, 1.0, max_open=True), default=0.01,
              show_default=True, help="Assumed run-to-run variation (fraction) folded into "
              "the intervals.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True,
              help="Bootstrap seed (same inputs and seed give the same output).")
@click.option("--run-a", default=None, metavar="LABEL",
              help="Compare only this bench run of A (e.g. onnxruntime-fp32).")
@click.option("--run-b", default=None, metavar="LABEL",
              help="Compare only this bench run of B; with A = B compares two runs of one "
              "file.")
def cli(a: str, b: str, output_format: str, output: str | None, overwrite: bool,
        confidence: float, run_to_run_cv: float, seed: int, run_a: str | None,
        run_b: str | None) -> None:
    """Compare results A (reference) and B side by side.

    A and B: results.json files, report folders, perf_analyzer -f CSVs or Triton
    statistics JSON (docs/imports.md).

    \b
    Environments, model, and per bench run (matched by label) the median, p99 and
    throughput per batch size with a bootstrap interval of the change B/A; engine
    layers matched by name with their time deltas when both files have an engine;
    serving configurations and precision variants (accuracy metrics A vs B) present in
    both files; tune picks, and a tune pick with the serving configuration of its
    window, max batch and instances.
      trtcheck compare prod.json candidate.json
      trtcheck compare fp32.json fp16.json --format html -o compare.html
      trtcheck compare r.json r.json --run-a onnxruntime-fp32 --run-b onnxruntime-fp16
    """
    from trtcheck.analyze.compare.compare import compare
    from trtcheck.cli.common import check_output_file, refuse_output_over_inputs
    from trtcheck.report import compare_render
    from trtcheck.results.documents import load_results_input as load_results
    from trtcheck.units import terminal_safe_lines

    a, b = _results_path(a), _results_path(b)
    refuse_output_over_inputs([("--output", output)], [("A", a), ("B", b)])
    check_output_file(output, overwrite)
    ra, rb = load_results(a), load_results(b)
    comp = compare(ra, rb, name_a=a, name_b=b, confidence=confidence, seed=seed,
                   run_to_run_cv=run_to_run_cv, run_a=run_a, run_b=run_b)
    if comp.shares_nothing:
        from trtcheck.analyze.compare.compare import PAIRS, and_join
        from trtcheck.errors import InputError

        raise InputError(f"nothing to compare: A ({a}) holds {and_join(comp.holds_a)}; "
                         f"B ({b}) holds {and_join(comp.holds_b)}", PAIRS)
    if output_format == "json":
        from trtcheck.cli.common import json_document

        text = json_document(comp, "compare")
    elif output_format == "md":
        text = terminal_safe_lines(compare_render.render_markdown(comp))
    elif output_format == "html":
        text = compare_render.render_html(comp)
    else:
        text = terminal_safe_lines(compare_render.render_text(comp))
    if output is None:
        click.echo(text, nl=False)
        return
    from trtcheck.cli.common import write_text_atomic

    write_text_atomic(output, text)
    log(f"wrote {output}")
