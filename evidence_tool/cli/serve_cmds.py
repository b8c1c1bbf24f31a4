"""``tht workspace evidence serve``: parse the options, hand them to ``evidence_tool.serve``.

The server spans every workspace of the installation (SPEC.md 14), so it takes no
``Session`` of one workspace; the MCP SDK is imported only once the command runs.
"""

from __future__ import annotations

import click

from evidence_tool.cli.options import json_option, workspace_options
from evidence_tool.cli.output import Context, Report, run
from evidence_tool.cli.workspace_cmds import workspace_evidence


@workspace_evidence.command("serve")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: an MCP server for a client that starts it; http: MCP at /mcp plus the "
    "JSON API under /v1.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind (http); a non-loopback one needs the token variable set.",
)
@click.option("--port", type=int, default=8765, show_default=True, help="Port to bind (http).")
@click.option(
    "--workers",
    type=int,
    default=1,
    show_default=True,
    help="HTTP server processes on the one port (more: lower waits, more memory).",
)
@workspace_options
@json_option
@click.pass_context
def serve_cmd(
    cctx: click.Context,
    transport: str,
    host: str,
    port: int,
    workers: int,
    workspace_root: str | None,
    workspace_id: str | None,
    as_json: bool,
) -> None:
    """Serve the active evidence to agents (MCP tools and a JSON API), read-only."""
    # --json: a server that cannot start (or stops) says so in one envelope, as every
    # command does; with stdio it follows the MCP session, which has ended by then.
    ctx = Context(as_json, "workspace evidence serve")
    installation = (cctx.find_root().obj or {}).get("installation")

    def body() -> Report:
        from evidence_tool.serve import serve, serve_settings

        serve(
            serve_settings(installation, workspace_root, workspace_id),
            transport,
            host,
            port,
            workers,
        )
        return Report()

    run(ctx, body)
