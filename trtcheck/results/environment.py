"""Environment fingerprint record: where a number was measured."""

from __future__ import annotations

from trtcheck.results.base import Record


class GpuInfo(Record):
    """One GPU as reported by the driver (``nvidia-smi`` or CUDA)."""

    name: str
    index: int = 0
    driver_version: str | None = None
    cuda_version: str | None = None
    compute_capability: str | None = None
    memory_total_bytes: int | None = None
    uuid: str | None = None


class Environment(Record):
    """The machine and software that produced a results file.

    Two results files are comparable when their fingerprints agree on the fields that
    move performance: CPU model, GPU name, driver, CUDA and runtime versions
    (:meth:`comparable_key`).
    """

    hostname: str
    os: str
    machine: str
    cpu_model: str
    cpu_count: int
    memory_total_bytes: int | None = None
    python_version: str
    python_implementation: str
    trtcheck_version: str
    packages: dict[str, str] = {}
    gpus: list[GpuInfo] = []
    cuda_driver_version: str | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None

    def comparable_key(self) -> dict[str, object]:
        """Return the fields that must match for two runs to be compared directly.

        Returns:
            dict with CPU model, GPU names, driver and the versions of the inference
            runtimes (onnxruntime, tensorrt, tensorrt_rtx) when present.
        """
        runtimes = {k: v for k, v in self.packages.items()
                    if k in ("onnxruntime", "tensorrt", "tensorrt_rtx", "torch")}
        return {
            "cpu_model": self.cpu_model,
            "gpus": [g.name for g in self.gpus],
            "driver": self.cuda_driver_version,
            "runtimes": runtimes,
        }
