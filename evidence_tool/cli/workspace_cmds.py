"""``tht workspace evidence ...``: commands on one workspace and its archive."""

from __future__ import annotations

import click

from evidence_tool.cli.options import (
    format_options,
    resolve_format,
    resolve_root,
    workspace_options,
)
from evidence_tool.cli.output import Context, Report, StderrProgress, run


@click.group()
def workspace() -> None:
    """Commands on a workspace."""


@workspace.group("evidence")
def wevidence() -> None:
    """The workspace's curated evidence and its local archive."""


@wevidence.command("validate")
@workspace_options
@format_options
@click.pass_context
def validate_cmd(
    cctx: click.Context,
    workspace_root: str | None,
    workspace_id: str | None,
    output_format: str | None,
    as_json: bool,
) -> None:
    """Validate every curated unit with the workspace rules (kind/folder, unique ids)."""
    fmt = resolve_format(output_format, as_json)
    ctx = Context(fmt == "json", "workspace evidence validate", format=fmt)

    def body() -> Report:
        from evidence_tool.workspace import validate_workspace

        root = resolve_root(cctx, workspace_root, workspace_id)
        ctx.workspace = str(root)
        scanned = validate_workspace(root, StderrProgress.for_terminal(min_total=300))
        summary = scanned.summary()
        return Report(
            result=summary,
            errors=scanned.errors,
            warnings=scanned.warnings,
            text=[
                f"{summary['files']} unit file(s), {summary['valid']} valid, "
                f"{len(scanned.errors)} error(s)"
            ],
        )

    run(ctx, body)
