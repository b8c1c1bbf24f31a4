"""The server driven by the MCP SDK's own client, over stdio and over streamable HTTP:
initialize, list the tools, call each one, read a unit as a resource."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from serve_helpers import child_env, http_server, tht_argv

TOOLS = {"search_evidence", "get_evidence", "evidence_for", "check_citations"}
KNOWN = "evidence:clinical:giornate-di-degenza"
TIMEOUT_S = 120  # bounds a session (a cold stdio server included), never a pause


def _structured(result: Any) -> dict[str, Any]:
    body = result.structured_content
    assert body == json.loads(result.content[0].text)  # text clients read the same object
    assert body["ok"] is (not result.is_error), body
    return body  # type: ignore[no-any-return]


async def _exercise(session: ClientSession) -> dict[str, Any]:
    """Every tool and the resource template once; what each answered."""
    init = await session.initialize()
    assert init.server_info.name == "evidence-tool"
    listed = await session.list_tools()
    assert {t.name for t in listed.tools} == TOOLS
    assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)
    seen: dict[str, Any] = {}
    seen["search"] = _structured(
        await session.call_tool("search_evidence", {"query": "degenza", "limit": 2})
    )
    seen["get"] = _structured(await session.call_tool("get_evidence", {"id": KNOWN}))
    seen["for"] = _structured(
        await session.call_tool("evidence_for", {"columns": ["admissions.admission_date"]})
    )
    seen["cite"] = _structured(
        await session.call_tool("check_citations", {"cited": [KNOWN], "retrieved": [KNOWN]})
    )
    seen["bad"] = _structured(await session.call_tool("get_evidence", {"id": "no id"}))
    seen["limit"] = _structured(
        await session.call_tool("search_evidence", {"query": "degenza", "limit": 1000})
    )
    templates = await session.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == [
        "evidence://{workspace}/{unit_id}"
    ]
    listed_units = await session.list_resources()
    seen["listed"] = [r.uri for r in listed_units.resources]
    read = await session.read_resource(f"evidence://psd-clinical/{KNOWN}")
    seen["resource"] = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    try:
        await session.read_resource("evidence://psd-clinical/evidence:clinical:nope")
    except MCPError as exc:
        seen["missing"] = str(exc)
    return seen


def _check(seen: dict[str, Any]) -> None:
    search = seen["search"]["result"]
    assert 1 <= len(search["hits"]) <= 2 and search["hits"][0]["mode"] == "bm25"
    revision = search["revision"]
    assert seen["get"]["result"]["unit"]["id"] == KNOWN
    assert seen["get"]["result"]["revision"] == revision
    assert seen["for"]["result"]["count"] >= 1
    assert seen["for"]["result"]["resolved"] == {
        "admissions.admission_date": ["clinical.admissions.admission_date"]
    }
    assert seen["cite"]["result"]["grounded"] == [KNOWN]
    assert [e["code"] for e in seen["bad"]["errors"]] == ["E901"]
    assert [e["code"] for e in seen["limit"]["errors"]] == ["E901"]
    assert seen["resource"]["status"] == "active" and seen["resource"]["unit"]["id"] == KNOWN
    assert "E904" in seen["missing"]
    assert f"evidence://psd-clinical/{KNOWN}" in [str(u) for u in seen["listed"]]
    assert len(seen["listed"]) > 40  # every active unit of the fixture


def test_the_sdk_client_over_stdio(served: Path) -> None:
    argv = tht_argv("workspace", "evidence", "serve", "--workspace-root", str(served))
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env(), cwd=served)

    async def main() -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT_S):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                return await _exercise(s)

    _check(anyio.run(main))


@pytest.mark.parametrize("workers", [1, 3])  # one process keeps sessions; several: stateless
def test_the_sdk_client_over_streamable_http_with_the_token(served: Path, workers: int) -> None:
    with http_server(served, token="tok-123", workers=workers) as server:

        async def main() -> dict[str, Any]:
            headers = {"Authorization": "Bearer tok-123"}
            with anyio.fail_after(TIMEOUT_S):
                async with (
                    httpx2.AsyncClient(headers=headers, timeout=30) as http,
                    streamable_http_client(f"{server.url}/mcp", http_client=http) as (read, write),
                    ClientSession(read, write) as s,
                ):
                    return await _exercise(s)

        _check(anyio.run(main))


def test_sigterm_stops_a_stdio_server_cleanly(served: Path) -> None:
    import signal
    import subprocess

    argv = tht_argv("workspace", "evidence", "serve", "--workspace-root", str(served))
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    with subprocess.Popen(
        argv,
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(hello) + "\n")
            process.stdin.flush()
            answer = json.loads(process.stdout.readline())  # up and answering
            assert answer["id"] == 1
            assert answer["result"]["serverInfo"]["name"] == "evidence-tool"
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=TIMEOUT_S) == 0
            assert "Traceback" not in (process.stderr.read() if process.stderr else "")
        finally:
            if process.poll() is None:
                process.kill()
