"""The harness every benchmark script shares: the result file, the environment record, the
table, and helpers (not part of the package).

A script runs as ``python benchmarks/NAME.py`` (Python puts ``benchmarks/`` on the path, so
``from _harness import ...`` works) against the *installed* trtcheck (``pip install -e .``);
no script changes where Python imports from or imports from ``tests/``.

Result files follow one rule, stated here once (:func:`result_path`,
:func:`parse_result_name`): ``benchmarks/results/<benchmark>-<machine>.json``, one current
file per benchmark and machine; a rerun replaces it, and git keeps the history.
``<benchmark>`` is the script's file name without ``.py`` (no ``-`` in it);
``<machine>`` is a label from :data:`MACHINES`, optionally followed by ``-<setup>`` for a
configuration that differs on purpose (``dev-cpu-onnxruntime``: another backend;
``h200-host-pin23``: pinned cores; ``dev-cpu-grpc``: another protocol), lower-case
letters, digits and ``-``.
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

BENCHMARKS_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCHMARKS_DIR / "results"

#: where benchmarks run: label -> description (a new machine gets a line here)
MACHINES = {
    "dev-cpu": "the 2-core x86-64 development VM (AMD EPYC), no GPU",
    "h200-host": "the lent GPU machine: one NVIDIA H200, 16-core Xeon",
    "h100-host": "the other lent GPU machine: one NVIDIA H100, 16 CPU cores",
}
DEFAULT_MACHINE = "dev-cpu"
_SETUP_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def benchmark_names() -> list[str]:
    """The benchmarks: the stems of the scripts in ``benchmarks/`` (``_harness`` is not
    one)."""
    return sorted(p.stem for p in BENCHMARKS_DIR.glob("*.py") if not p.stem.startswith("_"))


def check_machine(machine: str) -> str:
    """``machine`` if it is a label of :data:`MACHINES`, optionally followed by
    ``-<setup>`` (lower-case letters and digits in ``-``-separated words).

    Raises:
        ValueError: anything else.
    """
    for label in MACHINES:
        if machine == label or (machine.startswith(label + "-")
                                and _SETUP_RE.match(machine[len(label) + 1:])):
            return machine
    raise ValueError(f"machine name {machine!r}: use one of {', '.join(MACHINES)}, "
                     "optionally followed by -<setup> (lower-case letters, digits, -)")


def add_machine_argument(parser: argparse.ArgumentParser,
                         default: str = DEFAULT_MACHINE) -> None:
    """``--machine NAME``: where the benchmark runs (part of the result file's name); a name
    outside :func:`check_machine` is a usage error."""

    def machine(value: str) -> str:
        try:
            return check_machine(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parser.add_argument(
        "--machine", default=default, type=machine,
        help=f"where this runs: {', '.join(MACHINES)}, optionally followed by -<setup> "
             f"for a configuration that differs on purpose; names the result file "
             f"(default: {default})")


def result_path(benchmark: str, machine: str) -> Path:
    """``benchmarks/results/<benchmark>-<machine>.json``.

    Args:
        benchmark: a script's stem (:func:`benchmark_names`).
        machine: see :func:`check_machine`.

    Raises:
        ValueError: an unknown benchmark or a machine name outside the rule.
    """
    if benchmark not in benchmark_names():
        raise ValueError(f"no benchmark script benchmarks/{benchmark}.py")
    return RESULTS_DIR / f"{benchmark}-{check_machine(machine)}.json"


def parse_result_name(name: str) -> tuple[str, str]:
    """``(benchmark, machine)`` of a result file name that follows the rule.

    Raises:
        ValueError: a name outside the rule (not ``.json``, no existing benchmark, a
            machine name outside :func:`check_machine`).
    """
    if not name.endswith(".json") or "-" not in name:
        raise ValueError(f"{name}: not <benchmark>-<machine>.json")
    benchmark, machine = name[: -len(".json")].split("-", 1)
    if result_path(benchmark, machine).name != name:  # pragma: no cover - by construction
        raise ValueError(f"{name}: not <benchmark>-<machine>.json")
    return benchmark, machine


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
    return the path. :func:`write_result` is the usual way; this is for a script that
    records its own fields (``dest`` is :func:`result_path` unless the user gave one)."""
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
