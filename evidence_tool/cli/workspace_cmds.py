"""``tht workspace new`` (create a workspace) and ``tht workspace evidence ...`` (use one)."""

from __future__ import annotations

import os

import click

from evidence_tool.cli.lazy_group import LazyGroup
from evidence_tool.cli.options import (
    format_options,
    json_option,
    resolve_format,
    resolve_root,
    warnings_as_errors_option,
    workspace_options,
)
from evidence_tool.cli.output import Context, Report, StderrProgress, run


@click.group()
def workspace() -> None:
    """Commands on a workspace."""


@workspace.command("new")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option(
    "--id", "workspace_id", required=True, help="Workspace id: [a-z0-9][a-z0-9._-]*, at most 100."
)
@click.option(
    "--language",
    required=True,
    help="Default language of the units (BCP 47: en, it, it-CH, de, ...).",
)
@click.option("--name", help="Human-readable name (default: the id).")
@click.option(
    "--example", is_flag=True, help="Also write one valid example unit per kind, in --language."
)
@json_option
def new_cmd(
    directory: str | None,
    workspace_id: str,
    language: str,
    name: str | None,
    example: bool,
    as_json: bool,
) -> None:
    """Create a workspace in DIRECTORY (default: the current folder).

    Writes workspace.yaml, evidence/curated/<kind>/ for the eight kinds and the
    .gitignore lines the archive needs; refuses a folder that already holds a
    workspace (E903).
    """
    ctx = Context(as_json, "workspace new", os.path.abspath(directory or "."))

    def body() -> Report:
        from evidence_tool.session import Session

        created = Session.create(
            directory or ".", workspace_id, language, name=name, example=example
        )
        return Report(
            result=created.to_json(),
            text=[f"created workspace {created.id} in {created.root}"]
            + [f"  wrote {rel}" for rel in created.written],
        )

    run(ctx, body)


@workspace.group(
    "evidence",
    cls=LazyGroup,
    # The module that registers each command: only the one run is imported.
    lazy={
        "catalog": "evidence_tool.cli.catalog_cmds",
        "check": "evidence_tool.cli.catalog_cmds",
        "cite-check": "evidence_tool.cli.activation_cmds",
        "consolidate": "evidence_tool.cli.archive_cmds",
        "decide": "evidence_tool.cli.sources_cmds",
        "diff": "evidence_tool.cli.archive_cmds",
        "eval": "evidence_tool.cli.archive_cmds",
        "export": "evidence_tool.cli.archive_cmds",
        "git-commands": "evidence_tool.cli.archive_cmds",
        "init": "evidence_tool.cli.archive_cmds",
        "log": "evidence_tool.cli.archive_cmds",
        "publish": "evidence_tool.cli.publish_cmds",
        "recover": "evidence_tool.cli.archive_cmds",
        "refresh": "evidence_tool.cli.sources_cmds",
        "report": "evidence_tool.cli.report_cmds",
        "restore": "evidence_tool.cli.archive_cmds",
        "review": "evidence_tool.cli.archive_cmds",
        "search": "evidence_tool.cli.archive_cmds",
        "serve": "evidence_tool.cli.serve_cmds",
        "show": "evidence_tool.cli.archive_cmds",
        "sources": "evidence_tool.cli.sources_cmds",
        "status": "evidence_tool.cli.archive_cmds",
        "verify": "evidence_tool.cli.archive_cmds",
    },
)
def workspace_evidence() -> None:
    """The workspace's curated evidence and its local archive."""


@workspace_evidence.command("validate")
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
        from evidence_tool.session import Session

        root = resolve_root(cctx, workspace_root, workspace_id)
        ctx.workspace = str(root)
        installation = (cctx.find_root().obj or {}).get("installation")
        progress = StderrProgress.for_terminal(min_total=300)
        found = Session.open(root, installation, progress=progress).validate(
            warnings_as_errors=warnings_as_errors
        )
        files, valid = found.counts["files"], found.counts["valid"]
        text = [f"{files} unit file(s), {valid} valid, {found.file_errors} error(s)"]
        if found.catalog is not None:
            from evidence_tool.catalog.step import summary_line

            text.append(summary_line(found.catalog))
        return Report(found.to_json(), found.errors, found.warnings, text)

    run(ctx, body)
