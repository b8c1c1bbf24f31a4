"""Helpers for source tests: CLI calls, registry reads, tree hashes, a real HTTP server."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cli_runner import CliResult, decide, invoke, record, registry, tht  # noqa: F401 -- re-exported

LAB = "fs:evidence/source/lab-handbook.md"
WARD = "fs:evidence/incoming/ward-codes.md"
IGNORED = {".evidence-archive.lock"}


def tree_state(root: Path) -> dict[str, str]:
    """sha256 of every file under the workspace (derived cache and lock aside)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and rel not in IGNORED and not rel.startswith(".evidence-cache/"):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def refresh(ws: Path, *args: str, installation: Path | None = None) -> CliResult:
    return tht(ws, "refresh", *args, installation=installation)


def source_line(result: CliResult, locator: str) -> dict[str, Any]:
    return next(s for s in result.json["result"]["sources"] if s["locator"] == locator)


def manifest_entry(ws: Path, unit_id: str) -> dict[str, Any] | None:
    state = (ws / "evidence/.local/state.yaml").read_text()
    newest = [
        line.split(": ")[1] for line in state.splitlines() if line.startswith(("pending", "active"))
    ]
    rev = next(r for r in newest if r != "null")
    manifest = json.loads((ws / f"evidence/.local/snapshots/{rev}/manifest.json").read_text())
    return next((u for u in manifest["units"] if u["id"] == unit_id), None)


def deletions(ws: Path) -> dict[str, dict[str, Any]]:
    state = (ws / "evidence/.local/state.yaml").read_text()
    rev = [
        line.split(": ")[1] for line in state.splitlines() if line.startswith(("pending", "active"))
    ]
    rev = [r for r in rev if r != "null"]
    manifest = json.loads((ws / f"evidence/.local/snapshots/{rev[0]}/manifest.json").read_text())
    return {d["id"]: d for d in manifest["deletions"]}


def installation(tmp: Path, **evidence: Any) -> Path:
    path = tmp / "installation.yaml"
    path.write_text(json.dumps({"installation_version": 1, "evidence": evidence}))
    return path


def use_remote_sources(ws: Path, sources: list[dict[str, Any]]) -> None:
    """workspace.yaml with an Evidence descriptor v2 naming these remote sources."""
    desc = {
        "descriptor_version": 4,
        "id": "psd-clinical",
        "name": "PSD clinical",
        "default_language": "it",
        "evidence": {"descriptor_version": 2, "sources": sources},
    }
    (ws / "workspace.yaml").write_text(json.dumps(desc, indent=2))


# -- HTTP -------------------------------------------------------------------------------

DRAFT = """---
title: Remote glossary
doi: 10.5555/remote.1
---

# Remote glossary

---
schema_version: 4
id: evidence:remote:discharge
kind: glossary
language: en
purposes: [disambiguation]
---

# Discharge

## Definition

The end of an inpatient stay, recorded in `adt.discharges`.
"""


SIGNED_TOKEN = "tok-5f0c2e9ab71d"  # a redirect target's path token: never stored


class _Handler(BaseHTTPRequestHandler):
    server: DocServer

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        self.server.requests.append(
            {"path": parts.path, "query": parts.query, "auth": self.headers.get("Authorization")}
        )
        route = getattr(
            self, "route_" + parts.path.strip("/").replace("-", "_").replace(".", "_"), None
        )
        if parts.path.startswith("/signed/"):  # a CDN's signed download link
            route = self.route_doc_md
        if route is None:
            self._send(404, b"not found")
            return
        # The client giving up mid-body is what the limits are for.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            route(parse_qs(parts.query))

    def route_doc_md(self, q: dict[str, list[str]]) -> None:
        self._send(200, self.server.docs["doc"].encode(), {"ETag": '"v1"'})

    def route_secret_md(self, q: dict[str, list[str]]) -> None:
        token = self.server.secret
        import base64

        expected = "Basic " + base64.b64encode(f"reader:{token}".encode()).decode()
        if self.headers.get("Authorization") != expected or q.get("token") != [token]:
            self._send(401, b"who are you")
            return
        self._send(200, self.server.docs["doc"].encode())

    def route_fail(self, q: dict[str, list[str]]) -> None:
        self._send(500, b"boom")

    def route_redirect_away(self, q: dict[str, list[str]]) -> None:
        self._send(302, b"", {"Location": "http://forbidden.invalid/doc.md"})

    def route_redirect_signed(self, q: dict[str, list[str]]) -> None:
        self._send(302, b"", {"Location": f"/signed/{SIGNED_TOKEN}/doc.md"})

    def route_redirect_local(self, q: dict[str, list[str]]) -> None:
        self._send(302, b"", {"Location": "/doc.md"})

    def route_big(self, q: dict[str, list[str]]) -> None:
        self._send(200, b"# big\n" + b"x" * (2 * 1024 * 1024))

    def route_drip(self, q: dict[str, list[str]]) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        for _ in range(100):  # at most 10 s, long after the client's deadline
            self.wfile.write(b"x")
            self.wfile.flush()
            time.sleep(0.1)

    def route_endless(self, q: dict[str, list[str]]) -> None:
        self.send_response(200)
        self.end_headers()
        chunk = b"y" * 65536
        for _ in range(4096):  # 256 MiB at most; the client stops long before
            self.wfile.write(chunk)

    def route_bomb(self, q: dict[str, list[str]]) -> None:
        self._send(200, self.server.bomb, {"Content-Encoding": "gzip"})


class DocServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.docs = {"doc": DRAFT}
        self.secret = ""
        self.bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"
