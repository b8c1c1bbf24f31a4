"""A real ``tht workspace evidence serve`` in a subprocess, and a workspace it serves."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from evidence_tool.activation import backend_for
from evidence_tool.archive import LocalEvidenceArchive

REPO = Path(__file__).resolve().parents[2]
ACTOR = "alice"
START_S = 120.0  # a cold interpreter with the SDK on a loaded 2-core machine (a bound, not a pause)


def tht_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "evidence_tool.cli.main", *args]


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("THT_INSTALLATION", "THT_SERVE_TOKEN")}
    env["PYTHONPATH"] = str(REPO)
    env["THT_ACTOR"] = ACTOR
    return {**env, **extra}


def consolidate(root: Path, installation: dict[str, object] | None = None) -> str:
    """Consolidate ``root`` with the sqlite backend (or the given activation settings)."""
    archive = LocalEvidenceArchive(root)
    settings = (installation or {}).get("activation") or {"kind": "sqlite"}
    result = archive.consolidate(ACTOR, backend_for(settings, archive.layout))  # type: ignore[arg-type]
    assert result.revision is not None
    return result.revision


def free_port() -> int:
    """A port free now, for a server that refuses before it binds.  One that serves is
    started with ``--port 0`` and its address read from its banner (``bound_url``): a port
    picked free here and bound later may be taken meanwhile by another test's socket."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


BANNER = re.compile(r"serving (http://\S+)/mcp and /v1")


def bound_url(process: subprocess.Popen[str]) -> str:
    """The address a server started with ``--port 0`` listens on, from the banner it
    writes to stderr once bound.  Only the lines up to the banner are read: the rest stays
    in the pipe for the test."""
    assert process.stderr is not None
    stream, found = process.stderr, threading.Event()
    lines: list[str] = []

    def read() -> None:
        for line in stream:  # until the banner, or the end if the server exits first
            lines.append(line)
            if BANNER.search(line):
                break
        found.set()

    threading.Thread(target=read, daemon=True).start()
    if not found.wait(START_S):
        raise AssertionError(f"the server did not bind within {START_S} s: {lines}")
    banner = BANNER.search(lines[-1]) if lines else None
    if banner is None:
        raise AssertionError(f"the server exited: {''.join(lines)}")
    return banner.group(1)


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    token: str | None

    def client(self, token: str | None = "default") -> httpx.Client:
        given = self.token if token == "default" else token
        headers = {"Authorization": f"Bearer {given}"} if given else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=120)


def wait_ready(server: Server) -> None:
    deadline = time.monotonic() + START_S
    with server.client() as http:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                raise AssertionError(f"the server exited: {server.process.stderr.read()}")  # type: ignore[union-attr]
            try:
                if http.get("/v1/health").status_code in (200, 401):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
    raise AssertionError(f"the server did not answer within {START_S} s")


@contextmanager
def http_server(
    root: Path | None,
    *,
    token: str | None = None,
    installation: Path | None = None,
    cwd: Path | None = None,
    workers: int | None = None,
) -> Iterator[Server]:
    """``serve --transport http`` on a free loopback port (``workers`` processes; None:
    the server's default), stopped by SIGTERM after."""
    args = ["--installation", str(installation)] if installation else []
    args += ["workspace", "evidence", "serve", "--transport", "http", "--port", "0"]
    args += ["--workspace-root", str(root)] if root else []
    args += ["--workers", str(workers)] if workers else []
    env = child_env(**({"THT_SERVE_TOKEN": token} if token else {}))
    process = subprocess.Popen(
        tht_argv(*args),
        cwd=cwd or root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = Server(process, "", token)
    try:
        server.url = bound_url(process)
        wait_ready(server)
        yield server
    finally:
        server.stop()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


class EmbeddingService:
    """A real loopback ``POST /v1/embeddings`` with toy vectors (words hashed into 16
    dimensions), which can be switched to failing (503) to test degradation."""

    DIM = 16

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        service = self
        self.failing = False
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                service.requests += 1
                if service.failing:
                    answer, status = {"error": {"message": "overloaded"}}, 503
                else:
                    data = [
                        {"object": "embedding", "index": i, "embedding": _toy(t)}
                        for i, t in enumerate(body["input"])
                    ]
                    answer, status = {"object": "list", "model": body["model"], "data": data}, 200
                raw = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/embeddings"

    def settings(self) -> dict[str, object]:
        return {
            "kind": "http",
            "url": self.url,
            "model": "toy",
            "dimensions": self.DIM,
            "retries": 0,
            "backoff_s": 0.01,
            "timeout_s": 10,
        }

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=30)


def _toy(text: str) -> list[float]:
    import zlib

    vector = [0.0] * EmbeddingService.DIM
    for word in text.lower().split():
        vector[zlib.crc32(word.encode()) % EmbeddingService.DIM] += 1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]
