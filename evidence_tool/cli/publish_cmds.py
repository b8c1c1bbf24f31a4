"""``tht workspace evidence publish``: the active snapshot in a target engine's own form
(issue 33, SPEC.md 15)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from evidence_tool.cli.options import flag, force_option
from evidence_tool.cli.output import Report
from evidence_tool.cli.workspace_cmds import register

if TYPE_CHECKING:
    from evidence_tool.session import Session

# Spelled out (a test keeps them equal to evidence_tool.publish.FORMATS): importing the
# package for --help would load the archive at start-up.
FORMATS = ["cortex", "wrenai", "vanna", "dbt", "jsonl"]


def publish_body(
    s: Session, fmt: str, output: str, dry_run: bool, force: bool, database: str | None
) -> Report:
    """Publish the active snapshot for another engine: a Cortex Analyst semantic model,
    a WrenAI knowledge tree, Vanna training items, a dbt docs and properties patch, or
    the export's JSON lines."""
    from evidence_tool.cli.reporters.text_lines import publish_lines

    data = s.publish(fmt, output, dry_run=dry_run, force=force, database=database).to_json()
    return Report(result=data, text=publish_lines(data))


register(
    "publish",
    publish_body,
    click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        required=True,
        help="Target: cortex (semantic model YAML), wrenai (knowledge folder), vanna "
        "(training items JSONL), dbt (docs blocks + properties folder), jsonl (the export).",
    ),
    click.option(
        "--output",
        required=True,
        metavar="PATH",
        help="A file (cortex, vanna, jsonl) or a folder (wrenai, dbt) inside the workspace.",
    ),
    flag("--dry-run", help="List the files and entries that would change; write nothing."),
    force_option,
    click.option(
        "--database",
        metavar="NAME",
        help="cortex: the Snowflake database of every base_table (default: the workspace id).",
    ),
)
