"""Turn the shared measurement options into a :class:`~trtcheck.measure.bench.runner.RunOptions`."""

from __future__ import annotations

from typing import Any

from trtcheck.cli.common import progress_enabled
from trtcheck.cli.progress_display import cli_progress


def run_options_from_cli(batch: list[int] | None, shapes: tuple[str, ...], inputs_npz: str | None,
                         input_values: tuple[str, ...], backend_name: str | None,
                         warmup_s: float | None, min_duration_s: float | None,
                         min_samples: int | None, max_duration_s: float | None, seed: int,
                         base_rule: Any = None, **backend_options: Any) -> Any:
    """Parse and validate the shared options (raises InputError / click.BadParameter);
    ``--inputs`` data must be finite (:func:`trtcheck.load.input_checks.check_finite_data`).
    ``backend_options`` are the values of the backends' options
    (:func:`trtcheck.cli.options_backend.backend_options`), checked when the backend is
    chosen."""
    from trtcheck.load.inputs import load_npz, parse_input_values
    from trtcheck.load.shapes import parse_shapes
    from trtcheck.measure.bench import RunOptions, rule_from_options

    arrays = None
    if inputs_npz:
        from trtcheck.load.input_checks import check_finite_data

        arrays = load_npz(inputs_npz)
        check_finite_data(arrays, inputs_npz)
    return RunOptions(
        batch_sizes=list(batch) if batch else None,
        shapes=parse_shapes(shapes),
        arrays=arrays,
        arrays_source=inputs_npz or "--inputs data",
        values=parse_input_values(input_values) or None,
        backend_name=backend_name,
        backend_options=dict(backend_options),
        rule=rule_from_options(warmup_s, min_duration_s, min_samples, max_duration_s,
                               base_rule),
        seed=seed,
        progress=(cli_progress() or False) if progress_enabled() else False,
    )
