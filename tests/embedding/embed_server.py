"""A real loopback server speaking OpenAI's ``POST /v1/embeddings``, for the tests.

It answers with the vectors of ``encode`` (the local all-MiniLM-L6-v2 model in the
tests) and records every request, so tests count batches and embedded texts.  Knobs
make it fail (``fail_next`` answers with ``fail_status``), stall (``sleep_s``) or
echo the request's Authorization header into its errors (a leaky service).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Encode = Callable[[list[str]], list[list[float]]]


@dataclass
class ServerState:
    encode: Encode
    fail_next: int = 0  # answer this many requests with fail_status, then serve
    fail_status: int = 503
    sleep_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def texts(self) -> int:
        """Texts embedded (answered with vectors), retries and failures excluded."""
        return sum(len(r["input"]) for r in self.requests if r["status"] == 200)


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                failing = state.fail_next > 0
                state.fail_next -= 1 if failing else 0
                status = state.fail_status if failing else 200
                state.requests.append(
                    {
                        "path": self.path,
                        "input": body["input"],
                        "model": body["model"],
                        "auth": self.headers.get("Authorization"),
                        "status": status,
                    }
                )
            if state.sleep_s:
                time.sleep(state.sleep_s)
            if self.path != "/v1/embeddings":
                return self._send(404, {"error": {"message": "not found"}})
            if failing:
                leak = self.headers.get("Authorization", "")
                return self._send(status, {"error": {"message": f"overloaded ({leak})"}})
            vectors = state.encode(body["input"])
            data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ]
            # Out of order on purpose: clients must sort by 'index'.
            self._send(200, {"object": "list", "model": body["model"], "data": data[::-1]})

        def _send(self, status: int, answer: dict[str, Any]) -> None:
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            # The client may have given up (its timeout).
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

    return Handler


@contextmanager
def embedding_server(encode: Encode) -> Iterator[tuple[str, ServerState]]:
    """``(url of /v1/embeddings, state)`` of a server running on 127.0.0.1."""
    state = ServerState(encode)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/embeddings", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)
