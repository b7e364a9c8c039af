"""Turn the shared measurement options into a :class:`~trtcheck.measure.bench.runner.RunOptions`."""

from __future__ import annotations

from typing import Any

from trtcheck.cli.common import progress_enabled


def run_options_from_cli(batch: list[int] | None, shapes: tuple[str, ...], inputs_npz: str | None,
                         input_values: tuple[str, ...], backend_name: str | None,
                         providers: list[str] | None, threads: int | None, warmup_s: float | None,
                         min_duration_s: float | None, min_samples: int | None,
                         max_duration_s: float | None, seed: int,
                         cuda_graph: bool = False, profile_index: int | None = None,
                         base_rule: Any = None) -> Any:
    """Parse and validate the shared options (raises InputError / click.BadParameter);
    ``--inputs`` data must be finite (:func:`trtcheck.load.input_checks.check_finite_data`)."""
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
        providers=list(providers) if providers else None,
        threads=threads,
        rule=rule_from_options(warmup_s, min_duration_s, min_samples, max_duration_s,
                               base_rule),
        seed=seed,
        progress=progress_enabled(),
        cuda_graph=cuda_graph,
        profile_index=profile_index,
    )
