"""Regenerate or check the shipped results schema.

``python -m trtcheck.results.schema --write``: after a change to the results model, write
``results.schema.json``; when what the schema accepts changed, bump ``SCHEMA_VERSION`` in
``trtcheck/results/model.py`` (MINOR when fields were only added, MAJOR when any was
removed or changed; ``--major`` forces MAJOR), record the new digest in
``versions.json`` and add a history line (the changed field paths) to
docs/results-schema.md, to be reworded by hand. Run it from a source checkout.

``python -m trtcheck.results.schema --check``: exit 1, naming the problem, when the
shipped schema, the recorded digest, the version or the history are out of date.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from trtcheck.results import model as model_module
from trtcheck.results.schema import (
    SCHEMA_FILE,
    VERSIONS_FILE,
    describe_change,
    generate_schema,
    model_schema,
    next_version,
    recorded_digests,
    schema_digest,
    schema_text,
    shipped_schema,
)

DOCS_FILE = Path(model_module.__file__).resolve().parents[2] / "docs" / "results-schema.md"
_VERSION_LINE = re.compile(r'^SCHEMA_VERSION = "(\d+\.\d+)"$', re.M)


def history_has(version: str, docs: Path = DOCS_FILE) -> bool:
    """Whether docs/results-schema.md has a table row for ``version`` (``| 1.1 |``)."""
    if not docs.is_file():
        return False
    return any(line.startswith(f"| {version} |") for line in docs.read_text().splitlines())


def add_history_line(row: str, docs: Path = DOCS_FILE) -> None:
    """Insert the table row ``row`` after the last row of the history table (the table
    under ``## History``), or at the end of ``docs`` when it has no such table."""
    lines = docs.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "## History"), None)
    at = len(lines)
    if start is not None:
        rows = [i for i in range(start, len(lines)) if lines[i].startswith("|")]
        # the table is the first run of rows after the heading
        for k, i in enumerate(rows):
            if k + 1 == len(rows) or rows[k + 1] != i + 1:
                at = i + 1
                break
    lines.insert(at, row)
    docs.write_text("\n".join(lines) + "\n")


def problems() -> list[tuple[str, str]]:
    """What is out of date: ``(problem, what to do)`` each (empty: all agree)."""
    version = model_module.SCHEMA_VERSION
    schema = generate_schema()
    digest = schema_digest(model_schema())
    out: list[tuple[str, str]] = []
    regenerate = "run python -m trtcheck.results.schema --write"
    recorded = recorded_digests().get(version)
    if recorded is None:
        out.append((f"versions.json records no digest for schema {version}", regenerate))
    elif recorded != digest:
        out.append((f"the results model changed but schema_version is still {version} "
                    f"(recorded {recorded[:19]}..., now {digest[:19]}...)",
                    regenerate + " (it bumps the version)"))
    if shipped_schema() != schema:
        out.append((f"{SCHEMA_FILE.name} differs from the schema generated from the model",
                    regenerate))
    if DOCS_FILE.is_file() and not history_has(version):
        out.append((f"docs/results-schema.md has no history line for {version}",
                    f"add a row `| {version} | <what changed> |` to its table"))
    return out


def write(force_major: bool = False) -> str:
    """Regenerate, bump when needed; returns a summary of what was done."""
    import json

    version = model_module.SCHEMA_VERSION
    schema = generate_schema()
    digest = schema_digest(model_schema())
    digests = recorded_digests()
    notes: list[str] = []
    if digests.get(version, digest) != digest:
        added, removed, changed = describe_change(shipped_schema(), schema)
        major = force_major or bool(removed or changed)
        new = next_version(version, major)
        src = Path(model_module.__file__)
        text = src.read_text()
        if not _VERSION_LINE.search(text):
            raise SystemExit(f"cannot find the SCHEMA_VERSION line in {src}")
        src.write_text(_VERSION_LINE.sub(f'SCHEMA_VERSION = "{new}"', text, count=1))
        model_module.SCHEMA_VERSION = new
        schema = generate_schema()  # the comment names the version
        what = "; ".join(part for part in (
            "added " + ", ".join(f"`{p}`" for p in added) if added else "",
            "removed " + ", ".join(f"`{p}`" for p in removed) if removed else "",
            "changed " + ", ".join(f"`{p}`" for p in changed) if changed else "") if part)
        if DOCS_FILE.is_file() and not history_has(new):
            add_history_line(f"| {new} | {what or 'constraints or defaults changed'} |")
            notes.append(f"added a history line for {new} to {DOCS_FILE} (reword it)")
        notes.insert(0, f"schema {version} -> {new} ({'major' if major else 'minor'}: "
                        f"{what or 'constraints or defaults changed'}); "
                        f"SCHEMA_VERSION updated in {src}")
        version = new
    digests[version] = digest
    VERSIONS_FILE.write_text(json.dumps(digests, indent=2, sort_keys=True) + "\n")
    SCHEMA_FILE.write_text(schema_text(schema))
    notes.append(f"wrote {SCHEMA_FILE} (schema {version}, {digest[:19]}...)")
    return "\n".join(notes)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--write`` [``--major``] or ``--check``."""
    ap = argparse.ArgumentParser(prog="python -m trtcheck.results.schema",
                                 description=__doc__.split("\n\n")[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true",
                       help="regenerate the shipped schema; bump the version if needed")
    group.add_argument("--check", action="store_true",
                       help="exit 1 when the shipped schema or version is out of date")
    ap.add_argument("--major", action="store_true",
                    help="with --write: bump MAJOR even when fields were only added")
    args = ap.parse_args(argv)
    if args.write:
        print(write(args.major))
        return 0
    found = problems()
    for problem, hint in found:
        print(f"error: {problem}; hint: {hint}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
