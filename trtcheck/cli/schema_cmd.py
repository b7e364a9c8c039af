"""``trtcheck schema``: the JSON Schema of results.json."""

from __future__ import annotations

import click

from trtcheck.cli.common import overwrite_option


@click.command("schema", epilog="Exit codes: 0 printed or written; 2 bad output path. "
               "Versions and history: docs/results-schema.md.")
@click.option("--output", "-o", "output", type=click.Path(path_type=str), default=None,
              help="Write the schema to this file instead of stdout (refuses to replace an "
              "existing file unless --overwrite).")
@overwrite_option()
def cli(output: str | None, overwrite: bool) -> None:
    """Print the JSON Schema (draft 2020-12) of the results.json this trtcheck writes.

    \b
    It is generated from the results model and is the same as the file shipped in the
    package (trtcheck/results/schema/results.schema.json). Validate a file with it:
      trtcheck schema -o results.schema.json
      check-jsonschema --schemafile results.schema.json results.json
    Numbers may also be the strings "Infinity", "-Infinity" or "NaN" (non-finite values
    kept in strict JSON). Newer trtcheck versions of the same major version only add
    fields; this trtcheck reads their files and ignores what it does not know.
    """
    from trtcheck.cli.common import check_output_file, write_text_atomic
    from trtcheck.results.schema import generate_schema, schema_text

    text = schema_text(generate_schema())
    if output is None:
        click.echo(text, nl=False)
        return
    check_output_file(output, overwrite)
    write_text_atomic(output, text)
