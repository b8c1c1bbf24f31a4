"""``kind: http``: an OpenAI-compatible ``POST /v1/embeddings`` endpoint (httpx).

Texts go in batches of ``batch_size``; a batch that fails with a transport error,
a timeout, 429 or 5xx is retried ``retries`` times with exponential backoff
(``backoff_s``, doubled each time).  The API key is read from the environment
variable ``api_key_env`` names, and scrubbed from every error message.

What a service answers is untrusted (docs/retrieval.md, "The HTTP client"):

- redirects are never followed: a POST redirected elsewhere would carry the key (or
  its body) to a host the operator did not name; the error names the target's host;
- ``timeout_s`` bounds each try as a whole (connect, send, wait and read), not each
  socket read: a service dripping a byte at a time cannot hold the archive lock;
- the answer is read up to a bound derived from the batch (``answer_limit``) and
  refused beyond it, declared or streamed;
- every vector component must be a finite JSON number (no NaN, Infinity, 1e999,
  booleans or strings), and every shape problem is a plain sentence;
- an error body reaches the operator as at most ``_DETAIL`` printable characters of
  its ``error.message`` (control characters escaped, the key scrubbed), never raw.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from evidence_tool.embedding.settings import EmbeddingSettings, embedding_settings
from evidence_tool.embedding.vectors import normalized
from evidence_tool.errors import DescriptorError, EmbeddingError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.redact import scrub

_RETRIED_STATUS = {408, 425, 429, 500, 502, 503, 504}
_DETAIL = 160  # characters of a service's error message shown to the operator
_CHUNK = 65536


def answer_limit(texts: int, dim: int) -> int:
    """Bytes an answer for ``texts`` vectors of ``dim`` may take: 32 per number (a
    float32 printed in full takes ~22 with its separator) plus room for the envelope."""
    return 1024 * 1024 + texts * (dim * 32 + 512)


def _printable(text: str, limit: int = _DETAIL) -> str:
    """One line of at most ``limit`` characters, control characters shown as ``\\xNN``."""
    out = "".join(
        c if c.isprintable() else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        for c in text[: limit * 2]
    )
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _detail(body: bytes) -> str:
    """What a refusing service says: its JSON ``error.message`` (or ``message``/``detail``),
    else nothing (an HTML page or raw bytes are not repeated)."""
    try:
        answer = json.loads(body)
    except ValueError:
        return ""
    error = answer.get("error") if isinstance(answer, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str) and isinstance(answer, dict):
        message = answer.get("message", answer.get("detail"))
    return _printable(message) if isinstance(message, str) else ""


class _Invalid(Exception):
    """The answer breaks the protocol (a plain sentence, shown as is)."""


def _strict_constant(name: str) -> float:
    raise _Invalid(f"it holds {name}, not a finite number")


def _vector(value: object, where: str, dim: int) -> list[float]:
    if not isinstance(value, list):
        raise _Invalid(f"{where}.embedding is not a list of numbers")
    if len(value) != dim:
        raise _DimMismatch(len(value))
    out = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise _Invalid(f"{where}.embedding holds {type(x).__name__}, not a finite number")
        f = float(x)
        if not math.isfinite(f):
            raise _Invalid(f"{where}.embedding holds {x!r}, not a finite number")
        out.append(f)
    return out


class _DimMismatch(Exception):
    def __init__(self, got: int) -> None:
        self.got = got


@dataclass
class _Exchange:
    """The outcome of one try, filled by the worker thread."""

    status: int = 0
    body: bytes = b""
    location: str | None = None
    error: BaseException | None = None
    sock: socket.socket | None = None  # the connection's, so a late try can be cut off

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: keeps the socket of the connection once it is open."""
        if event.endswith("connect_tcp.complete") or event.endswith("start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                self.sock = sock

    def cut(self) -> None:
        """End the try now: a read blocked on the socket returns at once."""
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)


class HttpEmbedder:
    def __init__(self, given: EmbeddingSettings | JsonObject) -> None:
        settings = embedding_settings(given, "http")
        url, model, dim = settings.url, settings.model, settings.dimensions
        for key, value in (("url", url), ("model", model), ("dimensions", dim)):
            if not value:
                raise DescriptorError(f"evidence.embedding.{key} is required for kind 'http'")
        assert url and model and dim  # checked just above, with the key named
        if urlsplit(url).scheme not in ("http", "https"):
            raise DescriptorError("evidence.embedding.url must be an http or https URL")
        self.url, self.model, self.dim, self.settings = url, model, dim, settings
        self.model_id = f"http:{self.model}:{self.dim}"
        # Not part of model_id: the languages change which queries use the vectors, not them.
        self.languages = frozenset(x.lower() for x in settings.languages) or None

    def _key(self) -> str | None:
        key_env = self.settings.api_key_env
        return os.environ.get(key_env) if key_env else None

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        size = self.settings.batch_size
        for start in range(0, len(texts), size):
            out += self._batch(texts[start : start + size])
        return out

    def _batch(self, texts: list[str]) -> list[list[float]]:
        last, retries = "", self.settings.retries
        for attempt in range(retries + 1):
            if attempt:
                time.sleep(self.settings.backoff_s * 2 ** (attempt - 1))
            try:
                return self._parse(self._post(texts), len(texts))
            except _Retry as exc:
                last = str(exc)
        raise EmbeddingError(
            f"the embedding service at {self._where()} failed {retries + 1} time(s): "
            f"{self._scrub(last)}; check that it runs and answers /v1/embeddings"
        )

    def _where(self) -> str:
        return self._scrub(self.url)

    def _post(self, texts: list[str]) -> bytes:
        """The body of a 200 answer; a retryable failure raises ``_Retry``."""
        body = json.dumps({"model": self.model, "input": texts, "dimensions": self.dim})
        headers = {"Content-Type": "application/json"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        limit = answer_limit(len(texts), self.dim)
        deadline = time.monotonic() + self.settings.timeout_s
        result = _Exchange()
        # The try runs in a thread the caller waits for until the deadline: httpx's timeouts
        # bound each socket operation, this bounds the whole exchange.  A late try's socket
        # is shut down, so its thread ends at once rather than at its next read timeout.
        worker = threading.Thread(
            target=self._exchange,
            args=(body.encode("utf-8"), headers, limit, deadline, result),
            daemon=True,
        )
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        late = worker.is_alive()
        if late:
            result.cut()
            worker.join(1.0)
        if late or isinstance(result.error, httpx.TimeoutException):
            raise _Retry(f"timed out after {self.settings.timeout_s:g} s")
        if isinstance(result.error, _TooLarge):
            raise EmbeddingError(
                f"the embedding service at {self._where()} sent an answer larger than "
                f"{limit // 1024} KiB for {len(texts)} text(s): it must speak the OpenAI "
                "/v1/embeddings protocol; a smaller evidence.embedding.batch_size lowers it"
            )
        if isinstance(result.error, httpx.HTTPError | OSError):
            reason = str(result.error) or type(result.error).__name__
            raise _Retry(_printable(reason))
        if result.error is not None:
            raise result.error
        return self._judge(result)

    def _judge(self, result: _Exchange) -> bytes:
        status = result.status
        if 300 <= status < 400:
            target = urlsplit(result.location or "")
            to = f"another address on {target.hostname}" if target.hostname else "elsewhere"
            raise EmbeddingError(
                f"the embedding service at {self._where()} answered HTTP {status}, a redirect "
                f"to {_printable(to, 80)}: redirects are not followed (the request and its key "
                "would go along); set evidence.embedding.url to the address that answers"
            )
        if status != 200:
            detail = _detail(result.body)
            message = f"HTTP {status}" + (f": {detail}" if detail else "")
            if status in _RETRIED_STATUS:
                raise _Retry(message)
            raise EmbeddingError(
                f"the embedding service at {self._where()} refused the request: "
                f"{self._scrub(message)}; check evidence.embedding (model, api_key_env)"
            )
        return result.body

    def _exchange(
        self,
        body: bytes,
        headers: dict[str, str],
        limit: int,
        deadline: float,
        out: _Exchange,
    ) -> None:
        try:
            timeout = httpx.Timeout(self.settings.timeout_s)
            with (
                httpx.Client(follow_redirects=False, timeout=timeout) as client,
                client.stream(
                    "POST",
                    self.url,
                    content=body,
                    headers=headers,
                    extensions={"trace": out.trace},
                ) as resp,
            ):
                out.status = resp.status_code
                out.location = resp.headers.get("location")
                declared = resp.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > limit:
                    raise _TooLarge
                # Error bodies are read only as far as their message needs.
                bound = limit if out.status == 200 else 16 * 1024
                data = bytearray()
                for chunk in resp.iter_raw(_CHUNK):
                    if time.monotonic() > deadline:  # still arriving: timed out as a whole
                        raise httpx.ReadTimeout("the deadline passed")
                    data += chunk
                    if len(data) > bound:
                        if out.status == 200:
                            raise _TooLarge
                        break
                out.body = bytes(data[:bound])
        except BaseException as exc:  # handed to the caller's thread, judged there
            out.error = exc

    def _parse(self, raw: bytes, n: int) -> list[list[float]]:
        try:
            return self._vectors(raw, n)
        except _Invalid as exc:
            raise EmbeddingError(
                f"the embedding service at {self._where()} sent an answer this tool cannot "
                f"use: {exc}; it must speak the OpenAI /v1/embeddings protocol"
            ) from None
        except _DimMismatch as exc:
            raise EmbeddingError(
                f"the embedding service at {self._where()} returned a vector of {exc.got} "
                f"dimension(s), not {self.dim}: set evidence.embedding.dimensions to the "
                "model's size"
            ) from None

    def _vectors(self, raw: bytes, n: int) -> list[list[float]]:
        try:
            answer = json.loads(raw.decode("utf-8"), parse_constant=_strict_constant)
        except (UnicodeDecodeError, ValueError):
            raise _Invalid("it is not JSON") from None
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list):
            raise _Invalid("it has no 'data' list")
        if len(data) != n:
            raise _Invalid(f"it answered {n} text(s) with {len(data)} embedding(s)")
        slots: list[list[float] | None] = [None] * n
        for pos, item in enumerate(data):
            where = f"data[{pos}]"
            if not isinstance(item, dict):
                raise _Invalid(f"{where} is not an object")
            index = item.get("index", pos)
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n:
                raise _Invalid(f"{where}.index is not one of 0..{n - 1}")
            if slots[index] is not None:
                raise _Invalid(f"index {index} is answered twice")
            slots[index] = _vector(item.get("embedding"), where, self.dim)
        return [normalized(v) for v in slots if v is not None]

    def _scrub(self, text: str) -> str:
        return scrub(text, [self._key()])


class _Retry(Exception):
    """A failure worth another attempt (transport, timeout, 429, 5xx)."""


class _TooLarge(Exception):
    """The answer passed ``answer_limit``."""
