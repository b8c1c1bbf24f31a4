"""``tht workspace evidence check``: units against the warehouse catalog (SPEC.md 13)."""

from __future__ import annotations

import click

from evidence_tool.cli.options import (
    format_options,
    resolve_format,
    resolve_root,
    workspace_options,
)
from evidence_tool.cli.output import Context, Report, StderrProgress, run
from evidence_tool.cli.workspace_cmds import workspace_evidence


@workspace_evidence.command("check")
@click.option(
    "--catalog",
    "kind",
    type=click.Choice(["postgres", "ddl", "sqlite"]),
    help="Where the warehouse's tables come from (default: the installation's "
    "evidence.catalog.kind). postgres is not in this version.",
)
@click.option(
    "--ddl",
    multiple=True,
    help="A DDL file or a folder of *.sql, read in order (repeatable).",
)
@click.option(
    "--sqlite",
    multiple=True,
    help="An SQLite database, read-only; SCHEMA=PATH names its schema (default main). Repeatable.",
)
@click.option(
    "--sample-values",
    is_flag=True,
    help="Compare enum values with the column's stored values (not in this version).",
)
@workspace_options
@format_options
@click.pass_context
def check_cmd(
    cctx: click.Context,
    kind: str | None,
    ddl: tuple[str, ...],
    sqlite: tuple[str, ...],
    sample_values: bool,
    workspace_root: str | None,
    workspace_id: str | None,
    output_format: str | None,
    as_json: bool,
) -> None:
    """Check every unit's tables and columns against the warehouse catalog.

    applies_to tables and columns, the Tables/Columns/Column fields, and every
    column reference of a formula's SQL must exist (with a 'did you mean').
    Exit 0 when clean, 1 with findings, 6 when the catalog cannot be read.
    """
    fmt = resolve_format(output_format, as_json)
    ctx = Context(fmt == "json", "workspace evidence check", format=fmt)

    def body() -> Report:
        from evidence_tool.catalog import catalog_settings, check_workspace
        from evidence_tool.errors import AvailabilityError
        from evidence_tool.workspace.descriptor import load_installation

        # The workspace first, as every workspace command: outside one the answer is E603.
        root = resolve_root(cctx, workspace_root, workspace_id)
        ctx.workspace = str(root)
        installation = load_installation((cctx.find_root().obj or {}).get("installation"))
        settings = catalog_settings(installation, kind=kind, ddl=ddl, sqlite=sqlite)
        if sample_values:
            raise AvailabilityError(
                "--sample-values is not in this version of evidence-tool; run the check without it",
                code="E187",
            )
        checked = check_workspace(root, settings, StderrProgress.for_terminal(min_total=300))
        cat = checked.catalog
        return Report(
            result=checked.summary(),
            errors=checked.errors,
            warnings=checked.warnings,
            text=[
                f"{checked.units} unit(s) checked against {len(cat.relations)} relation(s) "
                f"({cat.kind}), {len(checked.errors)} finding(s)"
            ],
        )

    run(ctx, body)
