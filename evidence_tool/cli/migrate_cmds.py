"""``tht evidence migrate ROOT``: convert legacy units (schema_version 1-3) to v4."""

from __future__ import annotations

import os

import click

from evidence_tool.cli.evidence_cmds import evidence
from evidence_tool.cli.options import flag, json_option
from evidence_tool.cli.output import Context, Report, run


@evidence.command("migrate")
@click.argument("root", type=click.Path(file_okay=False))
@flag("--dry-run", help="Report the plan; write nothing.")
@click.option("--actor", help="Who migrates (default: installation actor, THT_ACTOR, OS user).")
@json_option
@click.pass_context
def migrate_cmd(
    cctx: click.Context, root: str, dry_run: bool, actor: str | None, as_json: bool
) -> None:
    """Convert legacy units to v4 and initialize the archive baseline (no activation).

    ROOT is the workspace root; it must be inside a Git worktree.  Ids, typed
    content, provenance and review items are preserved; a field v4 cannot hold
    losslessly fails with E160 and nothing is written.  A second run is a no-op.
    """
    ctx = Context(as_json, "evidence migrate", os.path.abspath(root))

    def body() -> Report:
        from evidence_tool.session import Session

        installation = (cctx.find_root().obj or {}).get("installation")
        result = Session.migrate(root, installation, actor, dry_run=dry_run)
        return Report(result=result.to_json(), warnings=result.warnings, text=result.lines())

    run(ctx, body)
