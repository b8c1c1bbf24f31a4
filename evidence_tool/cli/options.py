"""Options shared by commands, declared once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from evidence_tool.cli.reporters import FORMATS

F = TypeVar("F", bound=Callable[..., Any])


def flag(*decls: str, help: str) -> Callable[[F], F]:
    """An on/off option (``is_flag``): its names and its help."""
    return click.option(*decls, is_flag=True, help=help)


json_option = flag(
    "--json", "as_json", help="Print exactly one JSON object on stdout (schemas/cli/)."
)
# The commands that write where the operator says (workspace.outputs).
force_option = flag(
    "--force",
    help="Replace an existing file this command did not write "
    "(never workspace.yaml, .git/, the lock or evidence/).",
)


def format_options(fn: F) -> F:
    """``--format text|json|github|sarif``, with ``--json`` kept as ``--format json``."""
    fn = click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default=None,
        help="Output: text (default), json (same as --json), github (workflow "
        "annotations) or sarif (SARIF 2.1.0 log).",
    )(fn)
    return json_option(fn)


def resolve_format(output_format: str | None, as_json: bool) -> str:
    if as_json and output_format not in (None, "json"):
        raise click.UsageError(
            f"--json means --format json; it conflicts with --format {output_format}"
        )
    return "json" if as_json else (output_format or "text")


warnings_as_errors_option = flag(
    "--warnings-as-errors",
    help="For CI: report every coded warning (such as W111) as error E190 and exit 1.",
)


def workspace_options(fn: F) -> F:
    fn = click.option(
        "--workspace-root",
        "workspace_root",
        type=click.Path(file_okay=False),
        help="The workspace root folder (default: the nearest folder at or above the "
        "current one that holds workspace.yaml).",
    )(fn)
    fn = click.option(
        "--workspace",
        "workspace_id",
        help="Workspace id, resolved under the installation's workspace_registry_root/repo/<id>.",
    )(fn)
    return fn


def resolve_root(ctx: click.Context, workspace_root: str | None, workspace_id: str | None) -> Path:
    """The workspace root the options name, else the nearest one at or above the cwd."""
    from evidence_tool.workspace.locate import resolve_workspace

    installation = (ctx.find_root().obj or {}).get("installation")
    return resolve_workspace(workspace_root, workspace_id, installation)
