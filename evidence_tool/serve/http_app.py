"""The HTTP face: MCP's streamable HTTP transport at ``/mcp`` and a plain JSON API.

``GET /v1/search``, ``GET /v1/units/{id}``, ``POST /v1/cite-check``, ``GET /v1/health``
answer the tools' shapes in the CLI's envelope.  When a token is configured every
request (``/mcp`` and ``/v1`` alike) must carry ``Authorization: Bearer <token>``;
anything else is 401 with E920 and no word on which part was wrong.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, cast

from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from evidence_tool.errors import UsageError
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.serve.envelope import call, failed, unauthorized
from evidence_tool.serve.envelope import health as health_body
from evidence_tool.serve.mcp_app import build_mcp
from evidence_tool.serve.service import Answer, EvidenceService

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
MAX_BODY = 256 * 1024  # a cite-check body: 2 x 1,000 ids fit many times over


def _json(status: int, body: JsonObject) -> Response:
    return JSONResponse(body, status_code=status)


async def _run(command: str, verb: Callable[[], Answer]) -> Response:
    status, body = await run_in_threadpool(call, command, verb)
    return _json(status, body)


def _query_args(request: Request, lists: tuple[str, ...]) -> JsonObject:
    """Query parameters as the tools' arguments; ``tables``/``columns`` repeat."""
    args: JsonObject = {}
    for key in set(request.query_params.keys()):
        values = request.query_params.getlist(key)
        args[key] = list[JsonValue](values) if key in lists else values[-1]
    return args


Endpoint = Callable[[Request], Awaitable[Response]]


def _route(server: MCPServer[Any], path: str, method: str) -> Callable[[Endpoint], Endpoint]:
    """``custom_route`` of the SDK, typed (its decorator is not)."""
    register = cast(Callable[[Endpoint], Endpoint], server.custom_route(path, methods=[method]))
    return register


def build_http(service: EvidenceService, host: str, token: str | None) -> ASGIApp:
    """The ASGI app: MCP at /mcp plus the /v1 API, behind the bearer check."""
    mcp = build_mcp(service)

    @_route(mcp, "/v1/search", "GET")
    async def search(request: Request) -> Response:
        args = _query_args(request, ("tables", "columns"))
        return await _run("GET /v1/search", lambda: service.search_evidence(args))

    @_route(mcp, "/v1/units/{unit_id:path}", "GET")
    async def unit(request: Request) -> Response:
        args = {**_query_args(request, ()), "id": request.path_params["unit_id"]}
        return await _run("GET /v1/units", lambda: service.get_evidence(args))

    @_route(mcp, "/v1/evidence-for", "GET")
    async def evidence_for(request: Request) -> Response:
        args = _query_args(request, ("tables", "columns"))
        return await _run("GET /v1/evidence-for", lambda: service.evidence_for(args))

    @_route(mcp, "/v1/cite-check", "POST")
    async def cite_check(request: Request) -> Response:
        command = "POST /v1/cite-check"
        body = await request.body()
        try:
            if len(body) > MAX_BODY:
                raise UsageError(f"the request body holds {len(body)} bytes; at most {MAX_BODY}")
            try:
                args = json.loads(body)
            except ValueError:
                raise UsageError("the body must be a JSON object") from None
            if not isinstance(args, dict):
                raise UsageError("the body must be a JSON object with 'cited' and 'retrieved'")
        except UsageError as exc:
            return _json(400, failed(command, exc))
        return await _run(command, lambda: service.check_citations(args))

    @_route(mcp, "/v1/health", "GET")
    async def health(request: Request) -> Response:
        return _json(200, health_body("GET /v1/health", await run_in_threadpool(service.health)))

    app = mcp.streamable_http_app(streamable_http_path="/mcp", host=host)
    return _guarded(app, token) if token else app


def _guarded(app: Starlette, token: str) -> ASGIApp:
    """Every HTTP request must carry the bearer token (compared in constant time)."""
    expected = f"Bearer {token}".encode()

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = json.dumps(unauthorized(f"{scope['method']} {scope['path']}")).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="evidence-tool"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guard
