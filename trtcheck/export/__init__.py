"""Export: the recommended serving settings as files a server loads, one module per
target format's concern. ``settings`` writes the settings for Triton (``config.pbtxt``),
Ray Serve and TorchServe from an advice's prediction; ``triton_repository`` writes a
Triton model repository entry (the model's tensors from the ONNX graph or a live run's
configuration, the configuration file and the copied model); ``triton_export`` is
``trtcheck export triton`` (settings from a results document, explicit values over them).

This stage reads results, ONNX graphs (:mod:`trtcheck.inspection.onnx`) and model files
(:mod:`trtcheck.load`); the commands and :mod:`trtcheck.pipeline` call it. The names
below are its public face; the rest of its modules is private.
"""

from __future__ import annotations

from trtcheck.export.settings import (
    TritonModelSpec,
    check_model_name,
    device_kind_from_results,
    export_settings,
    safe_model_name,
    spec_from_triton_config,
    triton_config,
)
from trtcheck.export.triton_export import export_triton_entry
from trtcheck.export.triton_repository import (
    live_config_from_results,
    model_spec,
    repository_outputs,
    settings_from,
    write_model_repository,
)

__all__ = [
    "TritonModelSpec",
    "check_model_name",
    "device_kind_from_results",
    "export_settings",
    "export_triton_entry",
    "live_config_from_results",
    "model_spec",
    "repository_outputs",
    "safe_model_name",
    "settings_from",
    "spec_from_triton_config",
    "triton_config",
    "write_model_repository",
]
