"""Options shared by commands, declared once."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def json_option(fn: F) -> F:
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print exactly one JSON object on stdout (schemas/cli/).",
    )(fn)


FORMATS = ("text", "json", "github", "sarif")


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


def warnings_as_errors_option(fn: F) -> F:
    return click.option(
        "--warnings-as-errors",
        is_flag=True,
        help="For CI: report every coded warning (such as W111) as error E190 and exit 1.",
    )(fn)


def workspace_options(fn: F) -> F:
    fn = click.option(
        "--workspace-root",
        "workspace_root",
        type=click.Path(file_okay=False),
        help="The workspace root folder (default: the current folder).",
    )(fn)
    fn = click.option(
        "--workspace",
        "workspace_id",
        help="Workspace id, resolved under the installation's workspace_registry_root/repo/<id>.",
    )(fn)
    return fn


def resolve_root(ctx: click.Context, workspace_root: str | None, workspace_id: str | None) -> Path:
    """Workspace root from --workspace-root, or --installation + --workspace, or the cwd.

    Every descriptor in play is validated here, so a misspelt key fails every command
    with its path (E902), and a root that does not exist is E603.
    """
    from evidence_tool.errors import AvailabilityError, UsageError
    from evidence_tool.workspace.descriptor import (
        load_installation,
        load_workspace_descriptor,
        workspace_root_from_installation,
    )

    if workspace_root and workspace_id:
        raise UsageError("give either --workspace-root or --workspace, not both")
    installation = (ctx.find_root().obj or {}).get("installation")
    if installation:
        load_installation(installation)
    if workspace_root:
        root = Path(os.path.abspath(workspace_root))
    elif workspace_id:
        if not installation:
            raise UsageError("--workspace ID needs --installation FILE (or THT_INSTALLATION)")
        root = workspace_root_from_installation(installation, workspace_id)
    else:
        root = Path(os.getcwd())
    if not root.is_dir():
        raise AvailabilityError(
            f"the workspace root {root} does not exist or is not a folder",
            code="E603",
            path=str(root),
        )
    if (root / "workspace.yaml").is_file():
        load_workspace_descriptor(root)
    return root
