"""``trtcheck preflight PLAN``: can this plan load here? Read from its header, no GPU.

Exit codes: 0 the plan can load (or a lean/dispatch runtime may load it if it was built
version-compatible: the verdict says so); 3 when no runtime of the plan's kind is
installed here (the building version is still reported); any error-severity finding
exits non-zero whatever runtime is installed: 2 the file is not a usable plan (ONNX, text, empty, truncated, damaged
by a text-mode copy, a prefix in front); 3 a plan for another TensorRT version or runtime.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from trtcheck.cli.common import (
    OutputFormat,
    check_output_file,
    echo_json,
    echo_text,
    format_option,
    output_parent,
    refuse_output_over_inputs,
)
from trtcheck.errors import EnvironmentProblem, InputError


MAX_LOG_BYTES = 256 << 20
"""Largest ``--log`` read (256 MiB of log text)."""


@click.command("preflight", epilog="Exit codes: 0 the runtime here can load the plan; 2 bad "
                                    "input (not a plan, truncated, damaged); 3 environment "
                                    "(another TensorRT version or GPU, no runtime); 4 internal.")
@click.argument("plan", type=click.Path(path_type=Path), required=False)
@click.option("--runtime", type=click.Choice(["tensorrt", "tensorrt_rtx"]), default=None,
              help="Runtime you mean to load it with (default: the plan's own kind).")
@click.option("--log", "log_file", type=click.Path(path_type=Path), default=None,
              help="A TensorRT log of a failed load to translate into one line with the fix.")
@click.option("--strip-prefix", is_flag=True,
              help="Write the plan found after a prepended prefix (exporter metadata) to -o.")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Output file for --strip-prefix (never overwritten).")
@format_option(OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MD)
def cli(plan: Path | None, runtime: str | None, log_file: Path | None, strip_prefix: bool,
        output: Path | None, output_format: str) -> None:
    """Pre-flight PLAN: TensorRT or TensorRT-RTX, built by which version, complete or
    damaged, and whether the runtime installed here can load it.

    \b
    Examples:
      trtcheck preflight model.plan
      trtcheck preflight --log deserialize.log
      trtcheck preflight yolo.engine --strip-prefix -o clean.plan
    """
    from trtcheck.load.plan_header import (
        UNUSABLE_CODES,
        explain_load_log,
        read_plan_info,
    )
    from trtcheck.load.plan_header import strip_prefix as strip_plan_prefix

    if plan is None and log_file is None:
        raise InputError("nothing to check", "pass a PLAN file and/or --log FILE")
    if output is not None and not strip_prefix:
        raise InputError("-o is only written by --strip-prefix",
                         "add --strip-prefix, or drop -o")
    if strip_prefix:
        if plan is None:
            raise InputError("--strip-prefix needs a PLAN file", "e.g. trtcheck preflight "
                             "yolo.engine --strip-prefix -o clean.plan")
        if output is None:
            raise InputError("--strip-prefix needs -o OUTPUT", "e.g. -o clean.plan")
        # never an input, never an existing file, a writable folder (missing ones are made)
        refuse_output_over_inputs([("-o", str(output))], [("PLAN", str(plan)),
                                                          ("--log", log_file)])
        if output.exists() and output.is_file():  # no --overwrite here: never replaced
            raise InputError(f"{output} exists; not overwriting it",
                             "choose a new -o path")
        check_output_file(str(output), overwrite=False)
    log_json: dict[str, object] | None = None
    if log_file is not None:
        from trtcheck.safe_io import read_input_text

        text = read_input_text(log_file, "log file", MAX_LOG_BYTES,
                               "pass the TensorRT log saved to a file", errors="replace")
        diags = explain_load_log(text)
        if output_format == OutputFormat.JSON.value:
            log_json = {"log_file": str(log_file),
                        "diagnoses": [dataclasses.asdict(d) for d in diags]}
            if plan is None:
                echo_json(log_json, "preflight")
        else:
            if not diags:
                click.echo("no known TensorRT load failure in the log")
            for d in diags:
                echo_text(f"{'error' if d.fatal else 'warning'}: {d.message}")
                echo_text(f"  fix: {d.hint}")
        if plan is None:
            if any(d.fatal for d in diags):
                raise EnvironmentProblem(diags[0].message, diags[0].hint)
            return
    assert plan is not None
    if strip_prefix:
        assert output is not None
        try:
            with output_parent(output):  # missing folders made, removed again on failure
                removed = strip_plan_prefix(plan, output)
        except OSError as exc:  # a missing PLAN, a full disk: one line, exit 2
            raise InputError(f"cannot write {output} from {plan}: {exc.strerror or exc}",
                             "check both paths") from None
        echo_text(f"wrote {output} ({removed} prefix bytes removed)", err=True)
        plan = output
    info = read_plan_info(plan, prefer_runtime=runtime)
    if output_format == OutputFormat.JSON.value:
        doc = info.model_dump(mode="json")
        doc["plan_kind"] = doc.pop("kind")  # "kind" names the document
        if log_json is not None:  # one JSON document for both
            echo_json({**log_json, "plan": doc}, "preflight")
        else:
            echo_json(doc, "preflight")
    else:
        bullet = "- " if output_format == OutputFormat.MD.value else ""
        rows = [("file", f"{info.path} ({info.file_size_bytes:,} bytes)"),
                ("kind", info.kind), ("magic", info.magic),
                ("built with", info.built_with_version or "-"),
                ("runtime here", f"{info.runtime_name} {info.runtime_version}"
                 if info.runtime_name else "none installed"),
                ("verdict", info.verdict)]
        for k, v in rows:
            echo_text(f"{bullet}{k + ':':14s} {v}")
        for p in info.problems:
            echo_text(f"{bullet}{p.severity}: [{p.code}] {p.message}")
            if p.remedy:
                echo_text(f"{bullet}  fix: {p.remedy}")
    errors = [p for p in info.problems if p.severity == "error"]
    if info.can_load is False or errors:
        # every error-severity finding means the plan cannot load: exit 2 (not a usable
        # plan) or 3 (another runtime/version), whatever runtime is installed here
        first = errors[0] if errors else (info.problems[0] if info.problems else None)
        code = first.code if first else ""
        cls = InputError if code in UNUSABLE_CODES else EnvironmentProblem
        raise cls(f"{plan}: {info.verdict}", first.remedy if first else None)
    no_runtime = [p for p in info.problems if p.code == "plan-no-runtime"]
    if no_runtime:  # nothing here can load it: a CI preflight must not pass
        raise EnvironmentProblem(f"{plan}: {no_runtime[0].message}", no_runtime[0].remedy)
