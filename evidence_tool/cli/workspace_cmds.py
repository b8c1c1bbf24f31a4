"""``tht workspace evidence ...``: commands on one workspace and its archive."""

from __future__ import annotations

import click

from evidence_tool.cli.options import (
    format_options,
    resolve_format,
    resolve_root,
    warnings_as_errors_option,
    workspace_options,
)
from evidence_tool.cli.output import Context, Report, StderrProgress, run, scan_report


@click.group()
def workspace() -> None:
    """Commands on a workspace."""


@workspace.group("evidence")
def wevidence() -> None:
    """The workspace's curated evidence and its local archive."""


@wevidence.command("validate")
@workspace_options
@warnings_as_errors_option
@format_options
@click.pass_context
def validate_cmd(
    cctx: click.Context,
    workspace_root: str | None,
    workspace_id: str | None,
    warnings_as_errors: bool,
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
        return scan_report(scanned, warnings_as_errors, "unit file(s)")

    run(ctx, body)
