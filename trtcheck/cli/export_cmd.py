"""``trtcheck export``: serving settings as files a server loads.

``trtcheck export triton MODEL -o REPO`` writes a Triton model repository entry,
``REPO/NAME/config.pbtxt`` and ``REPO/NAME/1/<model file>`` (docs:
user_guide/model_repository.md); the repository entry is written by
:mod:`trtcheck.export` (shared with ``advise --export-dir``).
"""

from __future__ import annotations

import click

from trtcheck.cli.common import (
    BATCH_LIST,
    FiniteFloatRange,
    log,
    overwrite_option,
    refuse_results_as_model,
)
from trtcheck.cli.options import GPU_IDS, gpu_ids
from trtcheck.export import export_triton_entry
from trtcheck.units import ms_to_us

@click.group("export", epilog="Exit codes: 0 ok; 2 bad input; 3 environment; 4 internal.")
def cli() -> None:
    """Write serving settings as files a server loads."""


@cli.command("triton", epilog="Exit codes: 0 ok; 2 bad input; 3 environment; 4 internal.")
@click.argument("model", required=False, type=click.Path(dir_okay=False, path_type=str))
@click.option("-o", "--output", "repo", required=True, type=click.Path(file_okay=False),
              help="Model repository folder; the model goes in REPO/NAME/.")
@click.option("--from", "from_path", default=None, type=click.Path(dir_okay=True),
              help="Take the settings from a results JSON: its advice's recommendation, or "
                   "the configuration a live Triton run recorded (backend, tensors, kind).")
@click.option("--model-name", default=None,
              help="Folder and model name: ASCII letters, digits, _ - . (not first), at most "
                   "128 characters [default: the model file's name].")
@click.option("--max-batch", type=click.IntRange(0, 65536), default=None,
              help="max_batch_size (0: no batch axis) [default: from --from, else 1].")
@click.option("--window-ms", type=FiniteFloatRange(0.0, 1e7), default=None,
              help="max_queue_delay in ms (0 to 1e7) [default: from --from, else 0].")
@click.option("--preferred-batch", default=None, metavar="LIST", type=BATCH_LIST,
              help="preferred_batch_size list, each <= --max-batch [default: max batch].")
@click.option("--instances", type=click.IntRange(1, 100_000), default=None,
              help="instance_group count in one server (1 to 100000) [default: from "
                   "--from, else 1].")
@click.option("--device-kind", type=click.Choice(["cpu", "gpu"]), default=None,
              help="KIND_CPU or KIND_GPU [default: as measured; a plan: gpu; unknown: gpu, "
                   "said in a comment].")
@click.option("--gpus", default=None, metavar="IDS", type=GPU_IDS,
              help="GPU ids to list in instance_group, e.g. 0,1 [default: none, every "
                   "visible GPU].")
@overwrite_option("Replace an existing config.pbtxt and model "
                  "file in REPO/NAME (other files there are kept).")
def triton(model: str | None, repo: str, from_path: str | None, model_name: str | None,
           max_batch: int | None, window_ms: float | None, preferred_batch: list[int] | None,
           instances: int | None, device_kind: str | None, gpus: list[int] | None,
           overwrite: bool) -> None:
    """Write a Triton model repository entry: REPO/NAME/config.pbtxt and
    REPO/NAME/1/<model file> (model.onnx for the onnxruntime backend, model.plan for
    tensorrt_plan, model.py for a live run's python backend).

    \b
    Examples:
      trtcheck export triton model.onnx -o repo --device-kind cpu
      trtcheck export triton model.onnx -o repo --from advice.json
      trtcheck export triton model.py -o repo --from live.json --window-ms 2 --max-batch 16
    """
    refuse_results_as_model(model, "export the settings in it")
    for path in export_triton_entry(
            model, repo, from_path=from_path, model_name=model_name, max_batch=max_batch,
            window_us=None if window_ms is None else ms_to_us(window_ms),
            preferred_batch=preferred_batch, instances=instances, device_kind=device_kind,
            gpus=gpu_ids(gpus), overwrite=overwrite, log=log):
        log(f"wrote {path}")
