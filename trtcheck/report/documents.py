"""The JSON documents trtcheck prints, each with its published JSON Schema.

Every JSON document starts with ``schema_version`` (the results schema version,
"MAJOR.MINOR") and ``kind``. This module is the one registry of the kinds that have a
schema (:data:`DOCUMENT_KINDS`): the model the body is serialised from, the command that
prints it, and :func:`document_schema`, which ``trtcheck schema KIND`` prints.

The schemas follow the same rule as results.json's (:func:`trtcheck.results.schema.
open_schema`): objects are open within a MAJOR version (a newer MINOR only adds fields,
so a CI step that validates against a pinned schema keeps passing), while field types,
``kind`` and the MAJOR version are closed.

Adding a kind is one call to :func:`register_kind` in this module (the model is named
by a function, so importing this module imports no analysis code)::

    register_kind(DocumentKind("KIND", "trtcheck COMMAND --format json", _model,
                               "what the document holds"))

``results`` and ``tune`` documents are both results documents (the results model): the
``results`` schema is the shipped one (which takes either kind, as the reader does), the
``tune`` one the same with ``kind: "tune"`` and the ``tune`` section required.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model


@dataclass(frozen=True)
class DocumentKind:
    """One kind of printed JSON document.

    Attributes:
        kind: the ``kind`` value (``"gate"``).
        printed_by: the command line that prints it (for the schema's description).
        body: returns the type the document's body is serialised from: a pydantic model
            class or a union of them (called only when a schema is generated).
        description: one line, what the document holds.
    """

    kind: str
    printed_by: str
    body: Callable[[], Any]
    description: str


DOCUMENT_KINDS: dict[str, DocumentKind] = {}
"""kind -> :class:`DocumentKind`, in registration order (``trtcheck schema --list``)."""


def register_kind(doc: DocumentKind) -> DocumentKind:
    """Add a document kind to :data:`DOCUMENT_KINDS`.

    Raises:
        ValueError: the kind is registered already.
    """
    if doc.kind in DOCUMENT_KINDS:
        raise ValueError(f"document kind {doc.kind!r} is registered twice")
    DOCUMENT_KINDS[doc.kind] = doc
    return doc


class MetricEntry(BaseModel):
    """One gateable value of a results document (``gate --list-metrics``).

    Attributes:
        path: the metric path a policy uses (``bench.batch[8].p99_ms``).
        value: its value in the document (numbers in the unit the path names;
            ``len(...)`` paths give a count).
    """

    model_config = ConfigDict(ser_json_inf_nan="strings")

    path: str
    value: bool | int | float | str | None


class MetricListing(BaseModel):
    """What ``trtcheck gate RESULTS --list-metrics --format json`` prints."""

    model_config = ConfigDict(ser_json_inf_nan="strings")

    metrics: list[MetricEntry]


class LoadDiagnosisEntry(BaseModel):
    """One diagnosis of a TensorRT load log (``preflight --log``)."""

    code: str
    message: str
    hint: str
    fatal: bool


def _plan_preflight() -> Any:
    """The plan pre-flight as ``preflight`` prints it: the plan record
    (:class:`~trtcheck.results.engine.PlanInfo`) with its ``kind`` as ``plan_kind``
    (``kind`` names the document)."""
    from trtcheck.results.engine import PlanInfo

    plan_fields: dict[str, Any] = getattr(PlanInfo, "model_fields")
    fields: dict[str, Any] = {name: (f.annotation, f) for name, f in
                              plan_fields.items() if name != "kind"}
    fields["plan_kind"] = (str, plan_fields["kind"])
    return create_model("PlanPreflight", __config__=ConfigDict(ser_json_inf_nan="strings"),
                        **fields)


def _preflight() -> Any:
    plan = _plan_preflight()
    log = create_model("PreflightLog", log_file=(str, ...),
                       diagnoses=(list[LoadDiagnosisEntry], ...),
                       plan=(plan | None, None))
    return plan | log


def _build() -> Any:
    from trtcheck.results.engine import PlanInfo

    engine = create_model(
        "BuiltEngine", plan_path=(str, ...), precision=(str, ...), runtime=(str, ...),
        runtime_version=(str, ...), build_s=(float, ...), plan_size_bytes=(int, ...),
        onnx_path=(str, ...), network_layer_count=(int, ...), plan=(PlanInfo, ...),
        notes=(list[str], ...))
    return create_model("BuildDocument", engines=(list[engine], ...))  # type: ignore[valid-type]


def _results() -> Any:
    from trtcheck.results import Results

    return Results


def _advice() -> Any:
    from trtcheck.results.advice import Advice

    return Advice


def _inspection() -> Any:
    from trtcheck.results.engine import EngineInspection
    from trtcheck.results.inspection import ModelInspection

    return ModelInspection | EngineInspection


def _gate() -> Any:
    from trtcheck.analyze.gate import GateReport

    return GateReport


def _compare() -> Any:
    from trtcheck.analyze.compare import Comparison

    return Comparison


register_kind(DocumentKind("results", "bench/serve/report --format json, results.json",
                           _results, "everything one trtcheck run measured and concluded"))
register_kind(DocumentKind("advise", "trtcheck advise --format json", _advice,
                           "the serving advice (the results' advice section)"))
register_kind(DocumentKind("inspect", "trtcheck inspect --format json", _inspection,
                           "an ONNX model's or a TensorRT engine's inspection"))
register_kind(DocumentKind("gate", "trtcheck gate --format json", _gate,
                           "every check of a gate policy and the verdict"))
register_kind(DocumentKind("gate-metrics", "trtcheck gate --list-metrics --format json",
                           lambda: MetricListing, "every metric path of a results file "
                           "with its value"))
register_kind(DocumentKind("compare", "trtcheck compare --format json", _compare,
                           "two results files side by side"))
register_kind(DocumentKind("tune", "trtcheck tune --format json, tune -o", _results,
                           "a results document with the tune section (live runs, "
                           "calibration, predictions, the pick measured)"))
register_kind(DocumentKind("preflight", "trtcheck preflight --format json", _preflight,
                           "a plan's pre-flight (plan_kind, version, loadability) and/or the "
                           "diagnoses of a TensorRT load log"))
register_kind(DocumentKind("build", "trtcheck build --format json", _build,
                           "the engines built, each with its plan pre-flight"))


def document_schema(kind: str) -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of the documents of ``kind`` printed by
    this trtcheck: the ``schema_version``/``kind`` envelope and the body's model, open
    within this MAJOR version (a new dict each call).

    Raises:
        KeyError: ``kind`` is not in :data:`DOCUMENT_KINDS`.
    """
    from trtcheck.results import SCHEMA_VERSION
    from trtcheck.results.schema import (
        SCHEMA_ID,
        generate_schema,
        major_version_pattern,
        model_json_schema,
        open_schema,
    )

    doc = DOCUMENT_KINDS[kind]
    if kind == "results":  # the shipped schema (it takes a tune document too)
        return generate_schema()
    if kind == "tune":  # a results document of kind tune, with its tune section
        tune = generate_schema()
        tune["properties"]["kind"] = {**tune["properties"]["kind"], "const": "tune"}
        tune["required"] = [*tune["required"], "kind", "tune"]
        tune["$id"] = SCHEMA_ID.replace("results.schema.json", "tune.schema.json")
        return tune
    body = model_json_schema(doc.body(), published=True)
    defs = body.pop("$defs", {})
    body.pop("title", None)
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID.replace("results.schema.json", f"{kind}.schema.json"),
        "$comment": f"trtcheck {kind} document, schema version {SCHEMA_VERSION}; printed "
                    f"by {doc.printed_by}; objects are open within a major version",
        "title": f"trtcheck {kind}",
        "description": doc.description,
        "type": "object",
        "properties": {
            "schema_version": {"type": "string", "pattern": major_version_pattern()},
            "kind": {"const": kind},
        },
        "required": ["schema_version", "kind"],
        "allOf": [body],
    }
    if defs:
        schema["$defs"] = defs
    return open_schema(schema)
