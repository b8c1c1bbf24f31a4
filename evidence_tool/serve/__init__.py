"""Serving the active evidence to agents: MCP tools and a JSON API (SPEC.md 14).

``serve_settings`` finds the workspaces one server serves, ``EvidenceService`` answers
the four verbs from each one's active revision, ``serve`` runs it on stdio or HTTP.
The MCP SDK (the ``serve`` extra) is imported only by the transports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
    from evidence_tool.serve.run import serve
    from evidence_tool.serve.service import Answer, EvidenceService
    from evidence_tool.serve.workspaces import ServeSettings, serve_settings

__all__ = ["Answer", "EvidenceService", "ServeSettings", "serve", "serve_settings"]

lazy_face(
    __name__,
    {
        "Answer": "service",
        "EvidenceService": "service",
        "ServeSettings": "workspaces",
        "serve": "run",
        "serve_settings": "workspaces",
    },
)
