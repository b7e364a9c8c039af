"""Base class of every results-model record."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from trtcheck.safe_io import escape_surrogates


class Record(BaseModel):
    """A strict, JSON-serialisable record of the results model.

    Unknown keys are errors (``extra="forbid"``) so that a typo in a hand-edited results
    file, or a file from a newer schema, is reported instead of silently dropped.
    Non-finite floats (an infinite relative error, a NaN metric) are written as the JSON
    strings ``"Infinity"``, ``"-Infinity"`` and ``"NaN"``, which keeps the file strict
    JSON and reads back to the same float (``null`` would not).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False, frozen=False,
                              ser_json_inf_nan="strings")

    @field_validator("*", mode="before")
    @classmethod
    def _no_lone_surrogates(cls, value: Any) -> Any:
        """Strings (also in flat lists and dicts) with lone surrogates -- undecodable
        bytes of a file name, ``"\\ud800"`` from a JSON input -- get ``\\udXXX`` escape
        text instead, and bytes where text belongs (an ONNX string field that is not
        UTF-8) are decoded with ``\\xNN`` escapes, so every record can be written as
        UTF-8."""
        if isinstance(value, (str, bytes)):
            return _text(value)
        if isinstance(value, list) and value and isinstance(value[0], (str, bytes)):
            return [_text(v) if isinstance(v, (str, bytes)) else v for v in value]
        if isinstance(value, dict) and value and any(isinstance(k, (str, bytes))
                                                     for k in value):
            return {_text(k) if isinstance(k, (str, bytes)) else k:
                    _text(v) if isinstance(v, (str, bytes)) else v
                    for k, v in value.items()}
        return value


def _text(value: str | bytes) -> str:
    """Text safe to encode as UTF-8: lone surrogates escaped; bytes (what protobuf gives
    for an ONNX string field that is not valid UTF-8) decoded with each bad byte shown as
    ``\\xNN``."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return escape_surrogates(value)

