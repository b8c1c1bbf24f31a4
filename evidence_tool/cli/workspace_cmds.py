"""``tht workspace new`` (create a workspace) and ``tht workspace evidence ...`` (use one).

Every ``workspace evidence`` command is made one way (``register``): the command
module writes a body ``fn(session, **options) -> Report`` and its options; the
workspace options, ``--json`` or ``--format``, the Session and the reporter are
added here once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from evidence_tool.cli.lazy_group import LazyGroup
from evidence_tool.cli.options import (
    flag,
    format_options,
    json_option,
    resolve_format,
    resolve_root,
    warnings_as_errors_option,
    workspace_options,
)
from evidence_tool.cli.output import Context, Report, StderrProgress, run

if TYPE_CHECKING:
    from evidence_tool.session import Session


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
@flag("--example", help="Also write one valid example unit per kind, in --language.")
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
        name: f"evidence_tool.cli.{module}"
        for module, names in {
            "archive_cmds": "consolidate diff eval export git-commands init log recover "
            "restore review search show status verify",
            "catalog_cmds": "catalog check",
            "activation_cmds": "cite-check",
            "sources_cmds": "decide refresh sources",
            "publish_cmds": "publish",
            "report_cmds": "report",
            "serve_cmds": "serve",
        }.items()
        for name in names.split()
    },
)
def workspace_evidence() -> None:
    """The workspace's curated evidence and its local archive."""


actor_option = click.option(
    "--actor", help="Who does this (default: installation actor, THT_ACTOR, OS user)."
)
wait_option = click.option(
    "--wait",
    type=float,
    default=0.0,
    show_default=True,
    help="Seconds to wait for the archive lock before failing (E303).",
)


def open_session(
    cctx: click.Context, root_opt: str | None, ws_id: str | None, ctx: Context, wait: float = 0.0
) -> Session:
    """The Session of the workspace the options name (every workspace command's one face)."""
    from evidence_tool.session import Session

    root = resolve_root(cctx, root_opt, ws_id)
    ctx.workspace = str(root)
    # Long scans (more than a few hundred units) draw a bar on a terminal's stderr.
    progress = StderrProgress.for_terminal(min_total=300)
    return Session.open(
        root, (cctx.find_root().obj or {}).get("installation"), wait=wait, progress=progress
    )


def _command(
    name: str, fn: Callable[..., Report], takes_json: bool, formats: bool
) -> Callable[..., None]:
    """Wrap a body ``fn(session, **kwargs) -> Report`` into a workspace command; with
    ``takes_json`` the body is also told ``as_json`` (its result differs by format); with
    ``formats`` the command takes ``--format`` (text, json, github, sarif) beside ``--json``."""

    @(format_options if formats else json_option)
    @click.pass_context
    def command(
        cctx: click.Context,
        /,
        workspace_root: str | None,
        workspace_id: str | None,
        as_json: bool,
        output_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        fmt = resolve_format(output_format, as_json)
        label = name if name.startswith("config") else f"workspace evidence {name}"
        ctx = Context(fmt == "json", label, format=fmt)
        wait = kwargs.pop("wait", 0.0) or 0.0
        if takes_json:
            kwargs["as_json"] = as_json
        run(ctx, lambda: fn(open_session(cctx, workspace_root, workspace_id, ctx, wait), **kwargs))

    command.__doc__ = fn.__doc__
    return command


def register(
    name: str,
    body: Callable[..., Report],
    *decorators: Any,
    group: click.Group | None = None,
    takes_json: bool = False,
    formats: bool = False,
) -> None:
    """Add ``body`` as a command with its options (listed top to bottom as in --help; the
    workspace options come after them unless ``decorators`` places them)."""
    if workspace_options not in decorators:
        decorators = (*decorators, workspace_options)
    fn = _command(name, body, takes_json, formats)
    for deco in reversed(decorators):
        fn = deco(fn)
    (group or workspace_evidence).command(name.split()[-1])(fn)


def validate_body(s: Session, warnings_as_errors: bool) -> Report:
    """Validate every curated unit with the workspace rules (kind/folder, unique ids)."""
    found = s.validate(warnings_as_errors=warnings_as_errors)
    files, valid = found.counts["files"], found.counts["valid"]
    text = [f"{files} unit file(s), {valid} valid, {found.file_errors} error(s)"]
    if found.catalog is not None:
        from evidence_tool.catalog.step import summary_line

        text.append(summary_line(found.catalog))
    return Report(found.to_json(), found.errors, found.warnings, text)


register("validate", validate_body, workspace_options, warnings_as_errors_option, formats=True)
