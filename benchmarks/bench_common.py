"""Helpers shared by the benchmark scripts (not part of the package)."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any, Callable


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
