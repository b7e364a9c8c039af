"""Shared option decorators and output helpers for the commands."""

from __future__ import annotations

import enum
import json
import logging
import math
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from trtcheck.backends.registry import BACKENDS
from trtcheck.cli.options import CommaList
from trtcheck.cli.options_backend import backend_options
from trtcheck.files import (  # noqa: F401  (re-exported: safe writes live in trtcheck.files)
    check_output_file,
    input_files,
    made_folders_removed_on_failure,
    output_parent,
    refuse_output_over_inputs,
    write_text_atomic,
)
from trtcheck.results.documents import results_input_kind
from trtcheck.units import MAX_DURATION_MS, MAX_DURATION_S  # noqa: F401  (re-exported)

F = TypeVar("F", bound=Callable[..., Any])


class FiniteFloatRange(click.FloatRange):
    """:class:`click.FloatRange` that also refuses ``nan`` and ``inf`` (Click's range
    check compares, and every comparison with ``nan`` is false, so ``nan`` passes it)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return rv


MAX_ARRIVAL_RATE_PER_S = 1e9
"""Highest ``--arrival-rate`` accepted, requests per second (a billion: far above any
single deployment; larger values only overflow the arithmetic and print absurd counts)."""


MAX_COUNT = 10**8
"""Largest count option (``--min-samples``, ``--repeats``, ``--warmup-requests``, closed
loop clients): beyond it a run only exhausts memory or time."""

MAX_INSTANCES = 1024
"""Most execution instances (``--instances``): each is a model copy and a thread."""

MAX_BATCH_SIZE = 2**31 - 1
"""Largest batch size (32-bit signed batch axis of every runtime trtcheck drives)."""

MAX_SEED = 2**63 - 1
"""Largest ``--seed``."""


def check_number(option: str, value: float | None, *, high: float, low: float = 0.0,
                 low_open: bool = False, unit: str = "", example: str) -> None:
    """One clear line for a number option outside ``[low, high]`` (``(low, high]`` when
    ``low_open``), ``nan`` or infinite; ``None`` (not given) passes.

    Args:
        option: the option's name as typed, e.g. ``"--arrival-rate"``.
        value: the parsed value.
        high: the largest accepted value (inclusive), e.g. :data:`MAX_DURATION_MS`.
        low: the smallest accepted value (inclusive unless ``low_open``).
        unit: appended to the numbers in the message, e.g. ``" ms"``.
        example: a valid value for the hint.

    Raises:
        InputError: the value is out of range or not finite.
    """
    from trtcheck.errors import InputError

    if value is None:
        return
    ok_low = value > low if low_open else value >= low
    if math.isfinite(value) and ok_low and value <= high:
        return
    rel = ">" if low_open else ">="
    raise InputError(f"{option} must be a finite number {rel} {low:g} and <= {high:g}{unit}, "
                     f"got {value:g}", f"e.g. {option} {example}")


class OutputFormat(str, enum.Enum):
    """Formats a command can print. Machine formats go to stdout, progress to stderr."""

    TEXT = "text"
    JSON = "json"
    MD = "md"


def format_option(*choices: OutputFormat) -> Callable[[F], F]:
    """``--format`` with the given choices (default: the first)."""
    names = [c.value for c in (choices or tuple(OutputFormat))]
    return click.option("--format", "output_format", type=click.Choice(names),
                        default=names[0], show_default=True,
                        help="Output format (machine formats print to stdout).")


BACKEND_NAMES = tuple(sorted(BACKENDS))
"""The ``--backend`` choices of every command (the keys of
:data:`trtcheck.backends.registry.BACKENDS`, sorted)."""

LOGGER_NAME = "trtcheck"
"""The logger of progress lines and notes; :func:`configure_logging` sends it to stderr."""

class _StderrHandler(logging.Handler):
    """Each record as one line on stderr (through Click, so test runners capture it), with
    control characters of untrusted names shown as escapes."""

    def emit(self, record: logging.LogRecord) -> None:
        from trtcheck.units import terminal_safe_lines

        try:
            text = terminal_safe_lines(self.format(record))
            display = sys.modules.get("trtcheck.cli.progress_display")
            if display is None or not display.write_above_bar(text):
                click.echo(text, err=True)
        except Exception:  # a closed stderr must not end the run
            self.handleError(record)


def configure_logging(verbosity: int = 0) -> None:
    """Send the ``trtcheck`` logger to stderr at the level ``-v``/``-q`` ask for.

    Args:
        verbosity: ``-v`` count minus ``-q`` count: >= 1 debug lines too, 0 progress
            lines and notes (default), -1 notes and warnings only, <= -2 errors only.
    """
    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler())
    logger.propagate = False
    level = (logging.DEBUG if verbosity >= 1 else logging.INFO if verbosity == 0
             else logging.WARNING if verbosity == -1 else logging.ERROR)
    logger.setLevel(level)


def progress_enabled() -> bool:
    """Whether progress lines are shown (not with ``-q``), terminal or not."""
    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        configure_logging()
    return logger.isEnabledFor(logging.INFO)


JSON_KINDS = ("results", "advise", "gate", "gate-metrics", "inspect", "compare",
              "preflight", "build", "tune")
"""The ``kind`` of every JSON document trtcheck prints (docs/results-schema.md)."""


def json_document(obj: Any, kind: str) -> str:
    """Indented JSON text of ``obj`` that starts with ``schema_version`` (the results
    schema version) and ``kind``, ends with a newline.

    Args:
        obj: a pydantic model or a JSON-able dict; its own top-level fields follow.
        kind: one of :data:`JSON_KINDS`.

    Raises:
        ValueError: an unknown kind, or ``obj`` is not an object.
    """
    from trtcheck.results.model import SCHEMA_VERSION, Results, results_to_json

    if kind not in JSON_KINDS:
        raise ValueError(f"unknown JSON document kind {kind!r}")
    if isinstance(obj, Results):
        return results_to_json(obj)
    data = json.loads(obj.model_dump_json()) if hasattr(obj, "model_dump_json") else obj
    if not isinstance(data, dict):
        raise ValueError("a JSON document is an object; wrap lists in a named field")
    clash = sorted({"schema_version", "kind"} & set(data))
    if clash:
        raise ValueError(f"the document's own fields {clash} clash with the envelope")
    body = data
    return json.dumps({"schema_version": SCHEMA_VERSION, "kind": kind, **body}, indent=2) + "\n"


def echo_json(obj: Any, kind: str) -> None:
    """Print ``obj`` as a JSON document of ``kind`` on stdout (:func:`json_document`)."""
    click.echo(json_document(obj, kind), nl=False)


def echo_text(text: str, nl: bool = True, err: bool = False) -> None:
    """Print a human rendering (text or Markdown) with every control character of the
    untrusted names in it shown as an escape, line breaks kept
    (:func:`trtcheck.units.terminal_safe_lines`). JSON goes through :func:`echo_json`."""
    from trtcheck.units import terminal_safe_lines

    click.echo(terminal_safe_lines(text), nl=nl, err=err)


def log(message: str) -> None:
    """A progress/status line for humans, on stderr (control characters escaped); hidden
    by ``-q`` (:func:`configure_logging`)."""
    if progress_enabled():
        logging.getLogger(LOGGER_NAME).info("%s", message)


BATCH_LIST = CommaList(int, min=1, max=MAX_BATCH_SIZE, empty_entries="refuse", empty="none",
                       example="1,2,4,8", noun="batch sizes")
"""A list of batch sizes (``--batch 1,2,4``): integers in 1..:data:`MAX_BATCH_SIZE`,
each once, no empty entry; an empty value is ``None`` (the command's default)."""


def batch_option(default: str | None = None, help: str = (
        "Batch sizes, comma-separated, e.g. 1,2,4,8 (sets axis 0 of every input whose "
        "axis 0 is dynamic).")) -> Callable[[F], F]:
    """``--batch LIST`` (:data:`BATCH_LIST`; parameter ``batch``: a list of ints or
    ``None``)."""
    return click.option("--batch", "batch", type=BATCH_LIST, default=default,
                        show_default=default is not None, metavar="LIST", help=help)


def model_path_argument(required: bool = True) -> Callable[[F], F]:
    """The MODEL argument (existence is checked by
    :func:`trtcheck.load.model_file.check_model_path`)."""
    return click.argument("model", required=required, type=click.Path(dir_okay=True,
                                                                      path_type=str))


def refuse_results_as_model(path: str | None, use: str) -> None:
    """A trtcheck results file or report folder given where a model is expected: say so
    and name the option that reads it, instead of failing to run it as a model.

    Args:
        path: the positional MODEL argument (``None``: nothing to check).
        use: what ``--from`` does in this command, e.g. ``"advise from its numbers"``.

    Raises:
        UsageError: ``path`` is a results file or a report folder.
    """
    import shlex

    from trtcheck.errors import UsageError

    if path is None:
        return
    kind = results_input_kind(path)
    if kind is not None:
        raise UsageError(f"{path} is a trtcheck {kind}, not a model",
                         f"use --from {shlex.quote(path)} to {use}")


def _enter_percentile_method(ctx: click.Context, _param: click.Parameter,
                             value: str | None) -> str | None:
    if value is not None:
        from trtcheck.stats import percentile_method

        ctx.with_resource(percentile_method(value))  # undone when the command ends
    return value


def percentile_method_option(f: F) -> F:
    """``--percentile-method linear|nearest-rank``: the method of every percentile the
    command computes (:func:`trtcheck.stats.percentile_method`), recorded in the results
    (``percentile_method`` of each latency statistics record)."""
    return click.option(
        "--percentile-method", "percentile_method", default=None, expose_value=False,
        type=click.Choice(["linear", "nearest-rank"]), callback=_enter_percentile_method,
        help="How percentiles (p25..p99) are computed: linear interpolation [default], or "
        "nearest-rank, the sample at rank ceil(q*n) as trtexec reports them (use it to put "
        "numbers next to trtexec's or perf_analyzer's).")(f)


def _apply(f: F, opts: list[Callable[[F], F]]) -> F:
    """``f`` decorated with ``opts`` in order (the first is the first in ``--help``)."""
    for opt in reversed(opts):
        f = opt(f)
    return f


def model_input_options(f: F) -> F:
    """How a model is fed and run (shapes, input data, runtime): shared by every command
    that runs a model (:func:`measurement_options`, ``advise MODEL``)."""
    return _apply(f, [
        click.option("--shapes", "shapes", multiple=True, metavar="NAME:DIMS",
                     help="Input shapes, e.g. x:1x3x320x320 (repeatable or comma-separated)."),
        click.option("--inputs", "inputs_npz", default=None, type=click.Path(dir_okay=False),
                     help="Input values from an .npz (one array per input name)."),
        click.option("--input-value", "input_values", multiple=True, metavar="NAME=VALUE",
                     help="A scalar value for an input (integer/scalar inputs), repeatable."),
        click.option("--backend", "backend_name", default=None,
                     type=click.Choice(BACKEND_NAMES),
                     help="Runtime [default: onnxruntime for .onnx, tensorrt or tensorrt_rtx "
                          "for plans by their header]."),
        backend_options(),
    ])


def stop_rule_options(f: F) -> F:
    """When a batch size's measurement stops (``--warmup``, ``--min-duration``,
    ``--min-samples``, ``--max-duration``: seconds and counts of
    :class:`~trtcheck.measure.bench.bench.StopRule`; ``None`` keeps the command's rule)."""
    return _apply(f, [
        click.option("--warmup", "warmup_s", type=FiniteFloatRange(min=0, max=MAX_DURATION_S),
                     default=None,
                     help="Warm-up seconds per batch size [default: 0.5]."),
        click.option("--min-duration", "min_duration_s",
                     type=FiniteFloatRange(min=0, max=MAX_DURATION_S),
                     default=None, help="Measure at least this many seconds per batch size "
                                        "[default: 2]."),
        click.option("--min-samples", type=click.IntRange(min=1, max=MAX_COUNT), default=None,
                     help="Measure at least this many executions per batch size [default: 50]."),
        click.option("--max-duration", "max_duration_s",
                     type=FiniteFloatRange(min=0.001, max=MAX_DURATION_S),
                     default=None, help="Stop a batch size after this many seconds "
                                        "[default: 30]."),
    ])


def measurement_options(f: F) -> F:
    """The options of a measured batch sweep, one group for every command that sweeps a
    model (bench, report): ``--batch`` (:func:`batch_option`), how the model is fed and
    run (:func:`model_input_options`), when each batch size stops
    (:func:`stop_rule_options`), ``--seed`` and ``--percentile-method``. ``advise MODEL``
    takes ``--batch`` and :func:`model_input_options` (its short bench has a fixed stopping
    rule, and its ``--seed`` also seeds the simulation). The values go to
    :func:`trtcheck.cli.options_build.run_options_from_cli`."""
    return _apply(f, [
        batch_option(),
        model_input_options,
        stop_rule_options,
        click.option("--seed", type=click.IntRange(min=0, max=MAX_SEED), default=0,
                     show_default=True, help="Seed of generated input data."),
        percentile_method_option,
    ])


def overwrite_option(help: str = "Replace an existing --output file.",
                     ) -> Callable[[F], F]:
    """The ``--overwrite`` flag every command that writes files takes (parameter
    ``overwrite``, default off: nothing the user has is replaced without it). ``help``
    says what it replaces for commands whose output is not one ``--output`` file."""
    return click.option("--overwrite", is_flag=True, help=help)


def emit_results(results: Any, output: str | None, output_format: str,
                 text: Callable[[], str], markdown: Callable[[], str]) -> None:
    """Save ``results`` to ``output`` (when given) and print it in ``output_format``.

    ``text``/``markdown`` render lazily, so only the chosen format is built. JSON goes to
    stdout untouched by progress lines (those go to stderr via :func:`log`).
    """
    if output:
        save_results_file(results, output)
        log(f"results saved to {output}")
    if output_format == OutputFormat.JSON.value:
        echo_json(results, "results")
    elif output_format == OutputFormat.MD.value:
        echo_text(markdown())
    else:
        echo_text(text())


def save_results_file(results: Any, output: str) -> None:
    """Save ``results`` as JSON to ``output`` (-o FILE): missing folders created
    (:func:`trtcheck.files.output_parent`), written atomically by
    :func:`trtcheck.results.save_results` (:func:`trtcheck.files.replace_atomically`, which
    gives the file the mode a normal ``open()`` would).

    Raises:
        InputError: the file or its folder cannot be written.
    """
    from trtcheck.results import save_results

    with output_parent(output):
        save_results(results, output)


def check_path_parameters(command: click.Command, params: dict[str, Any]) -> None:
    """Refuse, before any work, a path option or argument (a :class:`click.Path`
    parameter) with a component longer than the file systems allow
    (:data:`trtcheck.safe_io.MAX_NAME_BYTES`): such a file can neither exist nor be
    written, and every later ``stat`` of it would fail with ``ENAMETOOLONG``.

    Raises:
        InputError: naming the option.
    """
    from trtcheck.safe_io import check_name_lengths

    for param in command.params:
        if not isinstance(param.type, click.Path):
            continue
        value = params.get(param.name or "")
        values = value if isinstance(value, (list, tuple)) else [value]
        label = param.opts[0] if param.opts and param.param_type_name == "option" \
            else (param.name or "PATH").upper()
        for v in values:
            if v is not None and str(v):
                check_name_lengths(v, label)

