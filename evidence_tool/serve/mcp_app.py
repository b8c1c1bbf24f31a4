"""The MCP face: four tools and a resource template over ``EvidenceService``.

Each tool answers the envelope the HTTP API answers (``structured_content``, and the same
JSON as text for clients that read text only); a coded error is a tool result with
``is_error`` set, so the agent reads the code and its hint.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import CallToolResult, Resource, TextContent, ToolAnnotations

from evidence_tool import __version__
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.serve.envelope import call
from evidence_tool.serve.service import Answer, EvidenceService

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
INSTRUCTIONS = (
    "Curated text-to-SQL evidence with checked provenance. Search it before writing SQL, "
    "read the units you use with get_evidence, and check your citations with "
    "check_citations: cite only ids it calls grounded. A unit answered 'retired' must not "
    "be used."
)


def _result(name: str, verb: Callable[[], Answer]) -> CallToolResult:
    _status, body = call(name, verb)
    text = json.dumps(body, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=body,
        is_error=not body["ok"],
    )


def _args(**given: Any) -> JsonObject:
    return {k: v for k, v in given.items() if v is not None}


class EvidenceMCP(MCPServer[Any]):
    """``MCPServer`` whose resource list is every active unit of every served workspace
    (read from the revisions then active), so clients that browse resources find them."""

    def __init__(self, service: EvidenceService) -> None:
        super().__init__(
            "evidence-tool", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
        )
        self.service = service

    async def list_resources(self) -> list[Resource]:
        return await anyio.to_thread.run_sync(self._units)

    def _units(self) -> list[Resource]:
        found = []
        for ws in self.service.settings.workspaces:
            view = self.service.readers[ws.name].current()
            if view is None:
                continue
            about = f"unit of workspace {ws.name}, revision {view.revision[:12]}"
            found += [
                Resource(
                    uri=f"evidence://{ws.name}/{entry.id}",
                    name=entry.id,
                    description=f"{entry.kind} {about}",
                    mime_type="application/json",
                )
                for entry in view.entries.values()
            ]
        return found


def build_mcp(service: EvidenceService) -> MCPServer[Any]:
    """The MCP server of ``service`` (its transport is chosen by the caller)."""
    server = EvidenceMCP(service)
    _unit_tools(server, service)
    _context_tools(server, service)
    _unit_resource(server, service)
    return server


def _unit_tools(server: EvidenceMCP, service: EvidenceService) -> None:
    """search_evidence and get_evidence: the units themselves."""

    @server.tool(annotations=READ_ONLY)
    def search_evidence(
        query: str,
        mode: str | None = None,
        kind: str | None = None,
        purpose: str | None = None,
        tables: list[str] | None = None,
        columns: list[str] | None = None,
        language: str | None = None,
        limit: int = 10,
        workspace: str | None = None,
    ) -> CallToolResult:
        """Search the active evidence: ranked units with their text, applies_to, score,
        the mode that ranked them and their provenance. mode: bm25, dense or hybrid."""
        args = _args(
            query=query,
            mode=mode,
            kind=kind,
            purpose=purpose,
            tables=tables,
            columns=columns,
            language=language,
            limit=limit,
            workspace=workspace,
        )
        return _result("search_evidence", lambda: service.search_evidence(args))

    @server.tool(annotations=READ_ONLY)
    def get_evidence(id: str, workspace: str | None = None) -> CallToolResult:
        """One unit of the active revision by id; a deleted or retired id answers
        status 'retired' with when and by whom; an unknown id says 'did you mean'."""
        args = _args(id=id, workspace=workspace)
        return _result("get_evidence", lambda: service.get_evidence(args))


def _context_tools(server: EvidenceMCP, service: EvidenceService) -> None:
    """evidence_for and check_citations: what to read before SQL, what may be cited."""

    @server.tool(annotations=READ_ONLY)
    def evidence_for(
        tables: list[str] | None = None,
        columns: list[str] | None = None,
        workspace: str | None = None,
    ) -> CallToolResult:
        """Every active unit whose applies_to names these tables or columns, grouped by
        kind: what to read before writing SQL over them."""
        args = _args(tables=tables, columns=columns, workspace=workspace)
        return _result("evidence_for", lambda: service.evidence_for(args))

    @server.tool(annotations=READ_ONLY)
    def check_citations(
        cited: list[str], retrieved: list[str] | None = None, workspace: str | None = None
    ) -> CallToolResult:
        """Classify cited ids against the retrieved ones: grounded, ungrounded (never
        retrieved), inactive (retired since) and unused; cite only grounded ids."""
        args = _args(cited=cited, retrieved=retrieved or [], workspace=workspace)
        return _result("check_citations", lambda: service.check_citations(args))


def _unit_resource(server: EvidenceMCP, service: EvidenceService) -> None:
    """evidence://<workspace>/<id>: a unit for clients that browse resources."""

    @server.resource(
        "evidence://{workspace}/{unit_id}",
        name="evidence-unit",
        description="One unit of a workspace's active revision (get_evidence's answer).",
        mime_type="application/json",
    )
    def unit_resource(workspace: str, unit_id: str) -> str:
        args: JsonObject = {"workspace": workspace, "id": unit_id}
        _status, body = call("resource", lambda: service.get_evidence(args))
        if not body["ok"]:
            raise ResourceError(json.dumps(body["errors"], ensure_ascii=False))
        return json.dumps(body["result"], ensure_ascii=False)
