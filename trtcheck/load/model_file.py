"""Checking the model file a user names, before any work (the ONNX loader's own checks
are :func:`trtcheck.load.onnx_model.check_model_file`)."""

from __future__ import annotations

import os


def check_model_path(path: str) -> None:
    """Check the MODEL a command is given (any kind of model file): one clear line for a missing path, a directory or an unreadable file; an ``.onnx``
    file also gets the ONNX loader's checks (truncated, text, plan, LFS pointer, missing
    external data), which include the first three.

    Raises:
        InputError: the path cannot be a model file.
    """
    from trtcheck.errors import InputError

    if path.lower().endswith(".onnx"):
        from trtcheck.load.onnx_model import load_onnx

        load_onnx(path, load_external_data=False)
        return
    if not os.path.exists(path):
        raise InputError(f"model file not found: {path}", "check the path")
    if os.path.isdir(path):
        raise InputError(f"{path} is a directory, not a model file",
                         "pass the .onnx (or .plan) file inside it")
    if not os.access(path, os.R_OK):
        raise InputError(f"cannot read {path}: permission denied", None)
    from trtcheck.safe_io import check_input_file

    check_input_file(path, "model file")  # a regular file: a FIFO or a device is refused
