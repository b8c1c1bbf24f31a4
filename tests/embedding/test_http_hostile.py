"""``kind: http`` against hostile or broken services on 127.0.0.1 (no model needed): a
redirect to another host must not carry the key, an answer is bounded in size and in
time as a whole, numbers are checked strictly, and what the service writes reaches
the operator only escaped, short and scrubbed."""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from helpers import codes

from evidence_tool.embedding import embedder_for
from evidence_tool.errors import EmbeddingError

KEY = "sk-hostile-51d0c4e2"
DIM = 6

Reply = Callable[[BaseHTTPRequestHandler, dict[str, Any]], None]


@contextlib.contextmanager
def _server(reply: Reply, host: str = "127.0.0.1") -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A loopback server answering every POST with ``reply``; yields its base URL and the
    requests it saw (path and Authorization header)."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw) if raw else {}
            seen.append({"path": self.path, "auth": self.headers.get("Authorization")})
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                reply(self, body)

        do_GET = do_POST  # a client that turned a 302/303 into a GET is seen too

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def _send(handler: BaseHTTPRequestHandler, status: int, data: bytes, **headers: str) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(data)


def _answer(vectors: list[list[Any]]) -> bytes:
    data = [{"index": i, "embedding": v} for i, v in enumerate(vectors)]
    return json.dumps({"data": data}).encode()


def _embedder(url: str, **settings: Any) -> Any:
    return embedder_for(
        {
            "kind": "http",
            "url": url + "/v1/embeddings",
            "model": "m",
            "dimensions": DIM,
            "retries": 0,
            "backoff_s": 0.01,
            **settings,
        }
    )


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_host_never_carries_the_key(
    status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBED_KEY", KEY)
    # 127.0.0.2 is another host to an HTTP client (loopback answers it on Linux).
    with _server(lambda h, b: _send(h, 200, _answer([[1.0] * DIM])), "127.0.0.2") as (
        other,
        taken,
    ):

        def redirect(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
            _send(h, status, b"{}", Location=other + "/steal?token=t0k3n")

        with _server(redirect) as (url, seen), pytest.raises(EmbeddingError) as err:
            _embedder(url, api_key_env="EMBED_KEY").embed(["ricoveri"])
    assert codes(err.value) == ["E402"]
    assert [r["auth"] for r in seen] == [f"Bearer {KEY}"]
    assert taken == []  # the other host saw nothing, key or not
    assert "redirect" in err.value.message
    assert "t0k3n" not in err.value.message  # the target's query is not repeated (G8)


def test_an_answer_larger_than_the_bound_is_refused_while_it_streams() -> None:
    sent = {"bytes": 0}

    def huge(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.end_headers()  # no Content-Length: the client learns the size by reading
        h.wfile.write(b'{"data": [{"index": 0, "embedding": [')
        chunk = b"0.125, " * 16384
        for _ in range(2000):  # up to ~230 MB if the client kept reading
            h.wfile.write(chunk)
            sent["bytes"] += len(chunk)

    with _server(huge) as (url, _), pytest.raises(EmbeddingError) as err:
        _embedder(url, timeout_s=60).embed(["a", "b", "c"])
    assert codes(err.value) == ["E402"]
    assert "larger than" in err.value.message
    assert sent["bytes"] < 50 * 1024 * 1024  # the client stopped reading long before


def test_a_declared_huge_length_is_refused_before_reading() -> None:
    def liar(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        h.send_response(200)
        h.send_header("Content-Length", str(400 * 1024 * 1024))
        h.end_headers()
        h.wfile.write(b"{")

    with _server(liar) as (url, _), pytest.raises(EmbeddingError, match="larger than"):
        _embedder(url, timeout_s=60).embed(["x"])


def test_a_slow_drip_ends_at_the_total_deadline_not_per_read() -> None:
    def drip(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "100000")
        h.end_headers()
        for _ in range(200):  # a byte every 0.15 s: each read succeeds well in time
            h.wfile.write(b" ")
            h.wfile.flush()
            time.sleep(0.15)

    start = time.monotonic()
    with _server(drip) as (url, seen), pytest.raises(EmbeddingError) as err:
        _embedder(url, timeout_s=1.0, retries=1).embed(["x"])
    took = time.monotonic() - start
    assert "timed out" in err.value.message
    assert len(seen) == 2
    # Two tries of 1 s each (plus backoff); a per-read timeout would wait 30 s per try.
    # A wide bound (no wall-clock precision asserted): far under one drip's 30 s.
    assert took < 15


@pytest.mark.parametrize(
    "raw",
    [
        b'{"data": [{"index": 0, "embedding": [NaN, 1, 1, 1, 1, 1]}]}',
        b'{"data": [{"index": 0, "embedding": [Infinity, 1, 1, 1, 1, 1]}]}',
        b'{"data": [{"index": 0, "embedding": [-Infinity, 1, 1, 1, 1, 1]}]}',
        b'{"data": [{"index": 0, "embedding": [1e999, 1, 1, 1, 1, 1]}]}',
        b'{"data": [{"index": 0, "embedding": [true, 1, 1, 1, 1, 1]}]}',
        b'{"data": [{"index": 0, "embedding": ["1", 1, 1, 1, 1, 1]}]}',
        b'{"data": [{"index": 0, "embedding": [null, 1, 1, 1, 1, 1]}]}',
    ],
)
def test_numbers_that_are_not_finite_floats_are_refused(raw: bytes) -> None:
    with _server(lambda h, b: _send(h, 200, raw)) as (url, _), pytest.raises(EmbeddingError) as err:
        _embedder(url).embed(["x"])
    assert codes(err.value) == ["E402"]
    assert "finite number" in err.value.message


@pytest.mark.parametrize(
    "raw",
    [
        b"not json at all",
        b"[1, 2, 3]",
        b'{"data": "vectors"}',
        b'{"data": [7]}',
        b'{"data": [{"index": "zero", "embedding": [1, 1, 1, 1, 1, 1]}]}',
        b'{"data": [{"index": 5, "embedding": [1, 1, 1, 1, 1, 1]}]}',
        b'{"data": [{"index": 0}]}',
        b'{"data": [{"index": 0, "embedding": {"a": 1}}]}',
        b"\xff\xfe garbage",
        b'{"data": [{"index": 0, "embedding": [1, 1, 1, 1, 1, 1]}, '
        b'{"index": 0, "embedding": [1, 1, 1, 1, 1, 1]}]}',
    ],
)
def test_malformed_answers_are_plain_messages(raw: bytes) -> None:
    with _server(lambda h, b: _send(h, 200, raw)) as (url, _), pytest.raises(EmbeddingError) as err:
        _embedder(url).embed(["x"] if b"}, {" not in raw else ["x", "y"])
    message = err.value.message
    assert codes(err.value) == ["E402"]
    for internal in (
        "Traceback",
        "Error(",
        "object has no attribute",
        "JSONDecodeError",
        "'NoneType'",
    ):
        assert internal not in message
    assert "/v1/embeddings" in message


def test_a_good_answer_still_embeds() -> None:
    """The strict reader accepts what a service really sends (ints too, any order)."""
    vectors = [[3, 4, 0, 0, 0, 0], [0.0, 0.0, 1.5, 0.0, 0.0, 2.0]]
    with _server(lambda h, b: _send(h, 200, _answer(vectors))) as (url, _):
        got = _embedder(url).embed(["a", "b"])
    assert [[round(x, 6) for x in v] for v in got] == [
        [0.6, 0.8, 0, 0, 0, 0],
        [0, 0, 0.6, 0, 0, 0.8],
    ]
    assert all(math.isfinite(x) for v in got for x in v)


def test_a_hostile_error_body_reaches_the_operator_escaped_short_and_scrubbed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EMBED_KEY", KEY)
    hostile = (
        "\x1b]0;pwned\x07\x1b[2J\n::error file=evil.md,line=1::owned " + KEY + " " + "A" * 5000
    )

    def refuse(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        _send(h, 400, json.dumps({"error": {"message": hostile}}).encode())

    with _server(refuse) as (url, _), pytest.raises(EmbeddingError) as err:
        _embedder(url, api_key_env="EMBED_KEY").embed(["x"])
    message = err.value.message
    assert "refused" in message and "400" in message
    assert KEY not in message
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in message)
    assert "\n::error" not in message
    assert len(message) < 600


def test_a_plain_text_error_body_is_not_repeated_raw() -> None:
    def refuse(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        _send(h, 403, b"<html>\x1b[31m" + b"x" * 3000 + b"</html>")

    with _server(refuse) as (url, _), pytest.raises(EmbeddingError) as err:
        _embedder(url).embed(["x"])
    assert "403" in err.value.message
    assert "\x1b" not in err.value.message and "x" * 300 not in err.value.message
