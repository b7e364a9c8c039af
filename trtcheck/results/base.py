"""Base class of every results-model record."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
