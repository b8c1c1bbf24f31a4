"""The HTTP face: MCP's streamable HTTP transport at ``/mcp`` and a plain JSON API.

``GET /v1/search``, ``GET /v1/units/{id}``, ``GET /v1/evidence-for``,
``POST /v1/cite-check``, ``GET /v1/health`` answer the tools' shapes in the CLI's
envelope.  When a token is configured every request (``/mcp`` and ``/v1`` alike) must
carry ``Authorization: Bearer <token>``; anything else is 401 with E920 and no word on
which part was wrong.

The /v1 endpoints are answered by a small ASGI dispatcher in front of the SDK's
Starlette app (which keeps ``/mcp`` and everything else): no router, request or response
objects per request, msgspec writes the JSON.  A ``bm25`` search over postings already
in memory runs on the event loop itself; whatever may block (a model, a file to load,
a parse) runs in a worker thread.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

import msgspec
from starlette.concurrency import run_in_threadpool

from evidence_tool.errors import UsageError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.serve.envelope import call, crashed, failed, unauthorized
from evidence_tool.serve.envelope import health as health_body
from evidence_tool.serve.mcp_app import build_mcp
from evidence_tool.serve.service import Answer, EvidenceService

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
MAX_BODY = 256 * 1024  # a cite-check body: 2 x 1,000 ids fit many times over
UNITS = "/v1/units/"
_encode = msgspec.json.Encoder().encode
# The method each /v1 path answers (``/v1/units/<id>`` is matched by its prefix).
METHODS = {
    "/v1/search": "GET",
    "/v1/evidence-for": "GET",
    "/v1/cite-check": "POST",
    "/v1/health": "GET",
}


def _query_args(query_string: bytes, lists: tuple[str, ...]) -> JsonObject:
    """Query parameters as the tools' arguments (parsed as Starlette does);
    ``tables``/``columns`` repeat, any other key's last value counts."""
    args: JsonObject = {}
    for key, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if key in lists:
            held = args.setdefault(key, [])
            assert isinstance(held, list)
            held.append(value)
        else:
            args[key] = value
    return args


async def _respond(send: Send, status: int, body: JsonObject, *extra: tuple[bytes, bytes]) -> None:
    data = _encode(body)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *extra]})
    await send({"type": "http.response.body", "body": data})


async def _body(receive: Receive) -> bytes:
    """The request body; a usage error as soon as it grows past ``MAX_BODY``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise UsageError(f"the request body holds more than {MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _object(body: bytes) -> JsonObject:
    try:
        args = msgspec.json.decode(body)
    except msgspec.DecodeError:
        raise UsageError("the body must be a JSON object") from None
    if not isinstance(args, dict):
        raise UsageError("the body must be a JSON object with 'cited' and 'retrieved'")
    return args


def build_http(
    service: EvidenceService, host: str, token: str | None, stateless: bool = False
) -> ASGIApp:
    """The ASGI app: the /v1 API, MCP at /mcp (the SDK's), behind the bearer check;
    ``stateless``: each MCP request stands alone (no session kept between requests)."""
    face = build_mcp(service)
    mcp = face.streamable_http_app(streamable_http_path="/mcp", host=host, stateless_http=stateless)
    expected = f"Bearer {token}".encode() if token else None

    async def v1(scope: Scope, receive: Receive, send: Send) -> None:
        path, method = scope["path"], scope["method"]
        command = f"{method} {path}"
        wanted = "GET" if path.startswith(UNITS) else METHODS.get(path)
        if wanted is None:
            return await mcp(scope, receive, send)  # not ours: Starlette's 404
        if method != wanted:
            exc = UsageError(f"{path} answers {wanted} only")
            return await _respond(send, 405, failed(command, exc), (b"allow", wanted.encode()))
        verb: Callable[[], Answer]
        if path == "/v1/health":
            result = await run_in_threadpool(service.health)
            return await _respond(send, 200, health_body(command, result))
        if path == "/v1/cite-check":
            try:
                cited = _object(await _body(receive))
            except UsageError as exc:
                return await _respond(send, 400, failed(command, exc))
            verb = lambda: service.check_citations(cited)  # noqa: E731
        elif path.startswith(UNITS):
            command = "GET /v1/units"
            found = {**_query_args(scope["query_string"], ()), "id": path[len(UNITS) :]}
            verb = lambda: service.get_evidence(found)  # noqa: E731
        else:
            args = _query_args(scope["query_string"], ("tables", "columns"))
            if path == "/v1/search":
                if service.searches_in_memory(args):  # CPU only: no thread hop
                    return await _respond(
                        send, *call(command, lambda: service.search_evidence(args))
                    )
                verb = lambda: service.search_evidence(args)  # noqa: E731
            else:
                verb = lambda: service.evidence_for(args)  # noqa: E731
        await _respond(send, *await run_in_threadpool(call, command, verb))

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if expected is not None:
                given = dict(scope.get("headers") or []).get(b"authorization", b"")
                if not hmac.compare_digest(given, expected):
                    body = unauthorized(f"{scope['method']} {scope['path']}")
                    realm = (b"www-authenticate", b'Bearer realm="evidence-tool"')
                    return await _respond(send, 401, body, realm)
            if scope["path"].startswith("/v1/"):
                try:
                    return await v1(scope, receive, send)
                except (TypeError, msgspec.EncodeError) as exc:  # an answer JSON cannot hold
                    return await _respond(send, 500, crashed(scope["path"], exc))
        await mcp(scope, receive, send)

    return app
