"""The published JSON Schema of results.json, generated from the results model.

The package ships it as ``trtcheck/results/schema/results.schema.json``
(:func:`shipped_schema`; ``trtcheck schema`` prints it), and records a digest of each
version's schema in ``versions.json``. ``python -m trtcheck.results.schema --write``
regenerates both after a change to the model and bumps :data:`SCHEMA_VERSION` (MINOR
when fields were only added, MAJOR otherwise), adding a history line to
docs/results-schema.md; ``--check`` says whether they are up to date (the test suite
runs the same check).

The schema is JSON Schema draft 2020-12 as pydantic writes it
(``Results.model_json_schema(mode="validation")``, :func:`model_schema`), with two changes
(:func:`open_schema`) so that it accepts what the reader accepts:

* every number may also be one of the strings ``"Infinity"``, ``"-Infinity"``, ``"NaN"``,
  which is how results files keep non-finite floats in strict JSON;
* records are open objects: a newer MINOR version only adds fields, and the reader
  ignores fields it does not know (with a note), so the schema allows them
  (``additionalProperties`` is left out where the model forbids extra keys). What the
  reader refuses stays closed: a known field of the wrong type, a map whose values have
  the wrong type (``environment.packages``: name -> version text), another ``kind``, and a
  ``schema_version`` of another MAJOR version (``^3\\.[0-9]+$`` for 3.x), or none.

The version digest (``versions.json``) is taken over the model's own schema (what this
trtcheck writes, extra keys forbidden), which the published one is derived from.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema

from trtcheck.results import model as _model
from trtcheck.results.model import Results

SCHEMA_DIR = Path(__file__).resolve().parent
SCHEMA_FILE = SCHEMA_DIR / "results.schema.json"
VERSIONS_FILE = SCHEMA_DIR / "versions.json"
SCHEMA_ID = "https://example.invalid/trtcheck/results.schema.json"
NON_FINITE = ["Infinity", "-Infinity", "NaN"]

#: keys that document a schema without changing what it accepts (left out of the digest)
_DOC_KEYS = frozenset({"title", "description", "examples", "$comment"})


#: numeric bounds of a number's schema
_BOUND_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


class _ResultsSchemaGenerator(GenerateJsonSchema):
    """Pydantic's generator, with numbers that may be written as non-finite strings.

    It writes one form wherever pydantic versions differ in form only, so that the
    shipped schema and its digest do not depend on the pydantic installed: a float
    field's integral bound is an integer (``"minimum": 0``; pydantic 2.10 writes ``0.0``)
    and a map of any values says ``"additionalProperties": true`` (pydantic 2.10 leaves
    the default out)."""

    def float_schema(self, schema: Any) -> dict[str, Any]:  # noqa: D102 (pydantic hook)
        number = super().float_schema(schema)
        for key in _BOUND_KEYS:
            bound = number.get(key)
            if isinstance(bound, float) and bound.is_integer():
                number[key] = int(bound)
        return {"anyOf": [number, {"type": "string", "enum": list(NON_FINITE)}]}

    def dict_schema(self, schema: Any) -> dict[str, Any]:  # noqa: D102 (pydantic hook)
        out = super().dict_schema(schema)
        if out.get("type") == "object" and "additionalProperties" not in out \
                and "patternProperties" not in out:
            out["additionalProperties"] = True
        return out


class _PublishedSchemaGenerator(_ResultsSchemaGenerator):
    """The published schema's generator: maps with integer keys (``points_ms``: batch
    size -> ms) also say their keys are integers (JSON keys are text; the reader parses
    them and refuses any other key)."""

    def dict_schema(self, schema: Any) -> dict[str, Any]:  # noqa: D102 (pydantic hook)
        out = super().dict_schema(schema)
        keys = schema.get("keys_schema", {})
        if keys.get("type") == "int":
            out["propertyNames"] = {"pattern": "^[+-]?[0-9]+$"}
        return out


def model_json_schema(model: Any, published: bool = False) -> dict[str, Any]:
    """Pydantic's validation JSON Schema of a model class (or a ``TypeAdapter``-able
    type), with numbers that may be written as the non-finite strings :data:`NON_FINITE`.
    Records forbid extra keys here (``additionalProperties: false``): this is what a
    writer of this version writes; :func:`open_schema` gives what a reader accepts.
    ``published``: also name the key type of integer-keyed maps (``propertyNames``),
    as the published schemas do."""
    gen = _PublishedSchemaGenerator if published else _ResultsSchemaGenerator
    if hasattr(model, "model_json_schema"):
        schema: dict[str, Any] = model.model_json_schema(mode="validation",
                                                         schema_generator=gen)
        return schema
    from pydantic import TypeAdapter

    return TypeAdapter(model).json_schema(mode="validation", schema_generator=gen)


def model_schema(published: bool = False) -> dict[str, Any]:
    """The results model's own schema (extra keys forbidden): the digest of a version is
    taken over it (a new dict each call; ``published``: see :func:`model_json_schema`)."""
    core = model_json_schema(Results, published)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            # read at call time: --write bumps the version and generates again
            "$comment": f"trtcheck results.json, schema version {_model.SCHEMA_VERSION}; "
                        "generated "
                        "from the results model by `python -m trtcheck.results.schema "
                        "--write`; objects are open within a major version",
            **core}


def major_version_pattern(version: str | None = None) -> str:
    """The ``schema_version`` pattern of one MAJOR version: ``"2.0"`` -> ``^2\\.[0-9]+$``
    (every minor version the reader of ``version`` reads without migration)."""
    major = (version or _model.SCHEMA_VERSION).split(".")[0]
    return rf"^{major}\.[0-9]+$"


def open_schema(schema: dict[str, Any], version: str | None = None) -> dict[str, Any]:
    """What a reader of ``version`` (default: this trtcheck's) accepts, from a model's
    schema: a copy where no object forbids extra keys (``additionalProperties: false``
    removed; typed maps keep their value schema) and where ``schema_version``, wherever
    a document declares it, matches only that MAJOR version (:func:`major_version_pattern`).
    """
    pattern = major_version_pattern(version)

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items()
               if not (k == "additionalProperties" and v is False)}
        props = out.get("properties")
        if isinstance(props, dict) and isinstance(props.get("schema_version"), dict) \
                and props["schema_version"].get("type") == "string":
            props["schema_version"] = {**props["schema_version"], "pattern": pattern}
        return out

    result: dict[str, Any] = walk(schema)
    return result


def generate_schema() -> dict[str, Any]:
    """The published JSON Schema of results.json (what ``trtcheck schema`` prints and the
    package ships): :func:`open_schema` of :func:`model_schema`, so it accepts every file
    of this MAJOR version the reader accepts (a new dict each call)."""
    schema = open_schema(model_schema(published=True))
    # the reader refuses a document without one (the model's default is for writing)
    schema["required"] = ["schema_version", *[r for r in schema.get("required", [])
                                              if r != "schema_version"]]
    return schema


def _strip_docs(node: Any, in_properties: bool = False) -> Any:
    if isinstance(node, dict):
        return {k: _strip_docs(v, k in ("properties", "$defs") and not in_properties)
                for k, v in node.items() if in_properties or k not in _DOC_KEYS}
    if isinstance(node, list):
        return [_strip_docs(v) for v in node]
    return node


def schema_digest(schema: dict[str, Any]) -> str:
    """``"sha256:<hex>"`` of what a schema accepts: its canonical JSON (sorted keys) with
    titles, descriptions, examples and comments left out, so that editing a docstring
    needs a regeneration but no version bump."""
    text = json.dumps(_strip_docs(schema), sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def schema_text(schema: dict[str, Any]) -> str:
    """The text of the shipped file: indented JSON, ends with a newline."""
    return json.dumps(schema, indent=2) + "\n"


def shipped_schema() -> dict[str, Any]:
    """The JSON Schema shipped in the package (what ``trtcheck schema`` prints)."""
    schema: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return schema


def recorded_digests() -> dict[str, str]:
    """Version -> digest of every released schema version (``versions.json``)."""
    digests: dict[str, str] = json.loads(VERSIONS_FILE.read_text(encoding="utf-8"))
    return digests


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target: dict[str, Any] = defs.get(ref[len("#/$defs/"):], {})
        return target
    return node


def field_paths(schema: dict[str, Any]) -> dict[str, str]:
    """Every field path of a results schema (``serve.runs[].stats.p99_ms``) -> the
    canonical JSON of what it accepts (documentation left out). Used to describe a change
    between two versions; cycles are cut at the second visit of a definition."""
    defs = schema.get("$defs", {})
    out: dict[str, str] = {}

    def walk(node: dict[str, Any], path: str, seen: frozenset[str]) -> None:
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                return
            seen = seen | {ref}
        node = _resolve(node, defs)
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, []):
                walk(sub, path, seen)
        if "items" in node and isinstance(node["items"], dict):
            walk(node["items"], path + "[]", seen)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], path + "{}", seen)
        for name, sub in node.get("properties", {}).items():
            child = f"{path}.{name}" if path else name
            out[child] = json.dumps(_strip_docs(_shallow(sub, defs)), sort_keys=True)
            walk(sub, child, seen)

    walk(schema, "", frozenset())
    return out


def _shallow(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A field's own constraints with nested objects' properties left out (their own
    paths describe them)."""
    node = _resolve(node, defs)
    return {k: (v if k != "properties" else sorted(v)) for k, v in node.items()
            if k not in ("$defs",)}


def describe_change(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], list[str],
                                                                       list[str]]:
    """``(added, removed, changed)`` field paths from schema ``old`` to ``new``."""
    a, b = field_paths(old), field_paths(new)
    added = _outermost(set(b) - set(a))
    removed = _outermost(set(a) - set(b))
    every = (set(b) - set(a)) | (set(a) - set(b))
    changed = sorted(p for p in set(a) & set(b) if a[p] != b[p] and not any(
        q.startswith(p + ".") or q.startswith(p + "[") or q.startswith(p + "{")
        for q in every))
    return added, removed, changed


def _outermost(paths: set[str]) -> list[str]:
    """``paths`` without those inside another one of them (``a.b[].c`` goes when ``a.b``
    is there), sorted."""
    def inside(p: str) -> bool:
        return any(p != q and p.startswith(q) and p[len(q)] in ".[{" for q in paths)

    return sorted(p for p in paths if not inside(p))


def next_version(version: str, major: bool) -> str:
    """``"1.1"`` -> ``"1.2"`` (``major=False``) or ``"2.0"`` (``major=True``)."""
    ma, mi = (int(x) for x in version.split("."))
    return f"{ma + 1}.0" if major else f"{ma}.{mi + 1}"
