"""``kind: http``: an OpenAI-compatible ``POST /v1/embeddings`` endpoint.

Texts go in batches of ``batch_size``; a batch that fails with a transport error,
a timeout, 429 or 5xx is retried ``retries`` times with exponential backoff
(``backoff_s``, doubled each time).  The API key is read from the environment
variable ``api_key_env`` names, and scrubbed from every error message.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from evidence_tool.embedding.settings import EmbeddingSettings
from evidence_tool.embedding.vectors import normalized
from evidence_tool.errors import DescriptorError, EmbeddingError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.redact import scrub

_RETRIED_STATUS = {408, 425, 429, 500, 502, 503, 504}


class HttpEmbedder:
    def __init__(self, given: EmbeddingSettings | JsonObject) -> None:
        settings = EmbeddingSettings.of(given, "http")
        url, model, dim = settings.url, settings.model, settings.dimensions
        for key, value in (("url", url), ("model", model), ("dimensions", dim)):
            if not value:
                raise DescriptorError(f"evidence.embedding.{key} is required for kind 'http'")
        assert url and model and dim  # checked just above, with the key named
        if urlsplit(url).scheme not in ("http", "https"):
            raise DescriptorError("evidence.embedding.url must be an http or https URL")
        self.url = url
        self.model = model
        self.dim = dim
        self.batch_size = settings.batch_size
        self.timeout_s = settings.timeout_s
        self.retries = settings.retries
        self.backoff_s = settings.backoff_s
        self.key_env = settings.api_key_env
        self.model_id = f"http:{self.model}:{self.dim}"
        # Not part of model_id: the languages change which queries use the vectors, not them.
        self.languages = frozenset(x.lower() for x in settings.languages) or None
        self.requests = 0  # POSTs sent, retries included (tests count them)

    def _key(self) -> str | None:
        return os.environ.get(self.key_env) if self.key_env else None

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out += self._batch(texts[start : start + self.batch_size])
        return out

    def _batch(self, texts: list[str]) -> list[list[float]]:
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                return self._parse(self._post(texts), len(texts))
            except _Retry as exc:
                last = str(exc)
        raise EmbeddingError(
            f"the embedding service at {self.url} failed {self.retries + 1} time(s): "
            f"{self._scrub(last)}; check that it runs and answers /v1/embeddings"
        )

    def _post(self, texts: list[str]) -> Any:
        body = {"model": self.model, "input": texts, "dimensions": self.dim}
        headers = {"Content-Type": "application/json"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(
            self.url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )
        self.requests += 1
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read(500).decode("utf-8", "replace").strip()
            message = f"HTTP {exc.code} {exc.reason}" + (f": {detail}" if detail else "")
            if exc.code in _RETRIED_STATUS:
                raise _Retry(message) from None
            raise EmbeddingError(
                f"the embedding service at {self.url} refused the request: "
                f"{self._scrub(message)}; check evidence.embedding (model, api_key_env)"
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Retry(str(reason) or type(exc).__name__) from None
        except ValueError:
            raise _Retry("the answer is not JSON") from None

    def _parse(self, answer: Any, n: int) -> list[list[float]]:
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or len(data) != n:
            raise EmbeddingError(
                f"the embedding service at {self.url} answered {n} text(s) with "
                f"{len(data) if isinstance(data, list) else 'no'} embedding(s); "
                "it must speak the OpenAI /v1/embeddings protocol"
            )
        ordered = sorted(data, key=lambda d: d.get("index", 0))
        out = []
        for item in ordered:
            vec = item.get("embedding")
            if not isinstance(vec, list) or len(vec) != self.dim:
                raise EmbeddingError(
                    f"the embedding service at {self.url} returned a vector of "
                    f"{len(vec) if isinstance(vec, list) else 'no'} dimension(s), "
                    f"not {self.dim}: set evidence.embedding.dimensions to the model's size"
                )
            out.append(normalized([float(x) for x in vec]))
        return out

    def _scrub(self, text: str) -> str:
        return scrub(text, [self._key()])


class _Retry(Exception):
    """A failure worth another attempt (transport, timeout, 429, 5xx)."""
