"""The harness every benchmark script shares: the result file, the environment record, the
table, and helpers (not part of the package).

A script runs as ``python benchmarks/NAME.py`` (Python puts ``benchmarks/`` on the path, so
``from _harness import ...`` works) against the *installed* trtcheck (``pip install -e .``);
no script edits the import path or imports from ``tests/``.

Result files: ``benchmarks/results/<benchmark>-<machine>.json``, one current file per
benchmark and machine (:func:`result_path`); a rerun replaces it, and git keeps the
history. ``<machine>`` names where it ran (``--machine``, default ``dev``: the 2-core
development VM; e.g. ``h200`` for the GPU machine), lower case letters, digits and ``-``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
_MACHINE_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


def add_machine_argument(parser: argparse.ArgumentParser, default: str = "dev") -> None:
    """``--machine NAME``: where the benchmark runs (part of the result file's name)."""
    parser.add_argument("--machine", default=default,
                        help=f"where this runs, in the result file name (default: {default})")


def result_path(benchmark: str, machine: str) -> Path:
    """``benchmarks/results/<benchmark>-<machine>.json``.

    Raises:
        ValueError: a machine name other than lower-case letters, digits and ``-``.
    """
    if not _MACHINE_RE.match(machine):
        raise ValueError(f"machine name {machine!r}: use lower-case letters, digits and -")
    return RESULTS_DIR / f"{benchmark}-{machine}.json"


def environment_record() -> dict[str, Any]:
    """Where and with what a benchmark ran: trtcheck's environment fingerprint
    (:func:`trtcheck.fingerprint.collect_environment`: CPU, GPUs, driver, packages, git
    commit) plus the load average at the start, as a JSON-ready dict."""
    from trtcheck.fingerprint import collect_environment

    env = collect_environment().model_dump(mode="json")
    try:
        env["load_average"] = list(os.getloadavg())
    except OSError:  # pragma: no cover - not on every platform
        env["load_average"] = None
    return env


def write_result(benchmark: str, machine: str, payload: dict[str, Any]) -> Path:
    """Write ``payload`` with the benchmark name, the machine, the time (UTC) and
    :func:`environment_record` to :func:`result_path`; print and return the path."""
    doc = {"benchmark": benchmark, "machine": machine,
           "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "environment": environment_record(), **payload}
    return write_json(result_path(benchmark, machine), doc)


def write_json(dest: Path, doc: dict[str, Any]) -> Path:
    """Write ``doc`` as indented UTF-8 JSON to ``dest`` (making its folder); print and
    return the path. :func:`write_result` is the usual way; this is for a script whose
    result file is named differently."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {dest}")
    return dest


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]]) -> str:
    """A plain-text table: ``columns`` are ``(key, header, format spec)``, e.g.
    ``("median_s", "median s", ".3f")``; text columns left-aligned, numbers right-aligned;
    a missing or ``None`` value prints ``-``."""
    cells = [[h for _, h, _ in columns]]
    for row in rows:
        line = []
        for key, _, spec in columns:
            v = row.get(key)
            line.append("-" if v is None else format(v, spec) if spec else str(v))
        cells.append(line)
    numeric = [all(isinstance(r.get(k), (int, float)) or r.get(k) is None for r in rows)
               for k, _, _ in columns]
    widths = [max(len(c[i]) for c in cells) for i in range(len(columns))]
    return "\n".join("  ".join(c.rjust(w) if num else c.ljust(w)
                               for c, w, num in zip(line, widths, numeric)).rstrip()
                     for line in cells)


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (``platform.processor()`` elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def torch_resnet18_fp16(autotune: bool = True) -> tuple[Any, Any, Callable[[dict], dict]]:
    """torchvision ResNet-18 (random weights: compute cost is what matters) in fp16 on
    CUDA, and its sync batch function as a Python service would run it:
    ``infer({"x": host fp16 [b, 3, 224, 224]}) -> {"y": host float32 [b, 1000]}``.
    ``autotune`` sets ``cudnn.benchmark`` (per-shape algorithm search: faster, but its
    choice varies run to run; on an H200 it once made T(4) 3.3 ms against T(8) 2.4 ms).

    Returns:
        ``(model, device, infer)``. The caller checks ``torch.cuda.is_available()`` first.
    """
    import torch
    import torchvision

    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = autotune
    model = torchvision.models.resnet18(weights=None).half().to(dev).eval()

    def infer(batch: dict) -> dict:
        x = torch.from_numpy(batch["x"]).to(dev)
        with torch.inference_mode():
            y = model(x)
        return {"y": y.float().cpu().numpy()}

    return model, dev, infer
