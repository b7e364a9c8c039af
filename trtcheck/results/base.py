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
        text instead, so every record can be written as UTF-8."""
        if isinstance(value, str):
            return escape_surrogates(value)
        if isinstance(value, list) and value and isinstance(value[0], str):
            return [escape_surrogates(v) if isinstance(v, str) else v for v in value]
        if isinstance(value, dict) and value and any(isinstance(k, str) for k in value):
            return {escape_surrogates(k) if isinstance(k, str) else k:
                    escape_surrogates(v) if isinstance(v, str) else v
                    for k, v in value.items()}
        return value

