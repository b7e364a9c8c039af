"""``trtcheck schema [KIND]``: the JSON Schema of results.json or of another printed
JSON document."""

from __future__ import annotations

import click

from trtcheck.cli.common import overwrite_option

_KINDS = "{kinds}"


class _SchemaCommand(click.Command):
    """Fills the help's list of document kinds from the registry ``--list`` prints
    (:data:`trtcheck.report.documents.DOCUMENT_KINDS`) when the help is shown."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from trtcheck.report.documents import DOCUMENT_KINDS

        text = self.help
        self.help = (text or "").replace(_KINDS, ", ".join(DOCUMENT_KINDS))
        try:
            super().format_help_text(ctx, formatter)
        finally:
            self.help = text


@click.command("schema", cls=_SchemaCommand, epilog="Exit codes: 0 printed or written; 2 unknown KIND or bad "
               "output path. Versions and history: docs/results-schema.md.")
@click.argument("kind", required=False, default="results", metavar="[KIND]")
@click.option("--list", "list_kinds", is_flag=True,
              help="List the document kinds that have a schema, one a line, then exit.")
@click.option("--output", "-o", "output", type=click.Path(path_type=str), default=None,
              help="Write the schema to this file instead of stdout (refuses to replace an "
              "existing file unless --overwrite).")
@overwrite_option()
def cli(kind: str, list_kinds: bool, output: str | None, overwrite: bool) -> None:
    """Print the JSON Schema (draft 2020-12) of the results.json this trtcheck writes,
    or of the JSON document of KIND ({kinds}: `trtcheck schema --list`).

    \b
    It is generated from the results model; the one of results.json is the file shipped
    in the package (trtcheck/results/schema/results.schema.json). Validate a file:
      trtcheck schema -o results.schema.json
      check-jsonschema --schemafile results.schema.json results.json
      trtcheck schema gate -o gate.schema.json
    Numbers may also be the strings "Infinity", "-Infinity" or "NaN" (non-finite values
    kept in strict JSON). Objects are open within a major version: newer trtcheck
    versions of the same major version only add fields, this trtcheck reads their files
    and ignores what it does not know, and the schema accepts them.
    """
    from trtcheck.cli.common import check_output_file, write_text_atomic
    from trtcheck.errors import UsageError
    from trtcheck.report.documents import DOCUMENT_KINDS, document_schema
    from trtcheck.results.schema import schema_text

    if list_kinds:
        for name, doc in DOCUMENT_KINDS.items():
            click.echo(f"{name}\t{doc.description} ({doc.printed_by})")
        return
    if kind not in DOCUMENT_KINDS:
        raise UsageError(f"no schema for document kind {kind!r}",
                         "choose one of " + ", ".join(DOCUMENT_KINDS))
    text = schema_text(document_schema(kind))
    if output is None:
        click.echo(text, nl=False)
        return
    check_output_file(output, overwrite)
    write_text_atomic(output, text)
