"""HTTP sources through httpx: read-only GET under the installation's network policy.

Redirects are followed by hand so that each hop is checked (allowed host, no
https -> http downgrade, at most five).  The body is decoded here, not by
httpx, so ``max_bytes`` counts decoded bytes while streaming and a gzip bomb
stops at the limit instead of expanding in memory.  Secrets from ``${ENV}``
references or userinfo are scrubbed from every message.
"""

from __future__ import annotations

import os
import ssl
import time
import zlib
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urljoin, urlsplit

from evidence_tool.archive.clock import now
from evidence_tool.errors import SourceError
from evidence_tool.sources.candidates import Candidate
from evidence_tool.sources.document import Acquired
from evidence_tool.sources.identity import (
    content_hash,
    expand_env,
    http_locator,
    normalize,
    redact_url,
    source_id,
)
from evidence_tool.sources.policy import MAX_REDIRECTS, NetworkPolicy

_REDIRECTS = (301, 302, 303, 307, 308)


class _Scrubber:
    """Removes every secret value from a message before it can be printed."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.secrets = [s for s in (parts.username, parts.password) if s and len(s) >= 3]
        self.secrets += [v for _, v in _query_pairs(parts.query) if len(v) >= 3]
        self.secrets += [quote(s, safe="") for s in self.secrets] + [
            unquote(s) for s in self.secrets
        ]
        self.secrets.sort(key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def _query_pairs(query: str) -> list[tuple[str, str]]:
    return parse_qsl(query, keep_blank_values=True)


def _decoder(encoding: str, shown: str) -> Any:
    enc = encoding.strip().lower()
    if enc in ("", "identity"):
        return None
    if enc in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if enc == "deflate":
        return zlib.decompressobj()
    raise SourceError(f"{shown}: unsupported Content-Encoding {enc!r}")


def _too_big(shown: str, limit: int) -> SourceError:
    return SourceError(
        f"{shown}: the document is larger than max_bytes ({limit} bytes, counted decoded); "
        "raise evidence.network.max_bytes if it is expected",
        code="E503",
    )


def _read_body(resp: Any, limit: int, deadline: float, shown: str) -> bytes:
    """Decoded body, refused past ``limit`` decoded bytes or past the total deadline."""
    length = resp.headers.get("content-length")
    encoded = resp.headers.get("content-encoding", "")
    if length and length.isdigit() and not encoded and int(length) > limit:
        raise _too_big(shown, limit)
    dec = _decoder(encoded, shown)
    out = bytearray()
    try:
        for chunk in resp.iter_raw():  # no chunk_size: re-chunking would wait for 64 KiB
            if time.monotonic() > deadline:
                raise SourceError(f"{shown}: the download took longer than the timeout")
            data = chunk
            while data:
                if dec is None:
                    out += data
                    break
                out += dec.decompress(data, limit + 1 - len(out))
                if len(out) > limit:
                    raise _too_big(shown, limit)
                data = dec.unconsumed_tail
            if len(out) > limit:
                raise _too_big(shown, limit)
        if dec is not None:
            out += dec.flush()
    except zlib.error:
        raise SourceError(f"{shown}: the compressed body is corrupt") from None
    if len(out) > limit:
        raise _too_big(shown, limit)
    return bytes(out)


def _tls_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or None)


def _check_hop(url: str, previous: str | None, policy: NetworkPolicy) -> None:
    parts = urlsplit(url)
    shown = redact_url(url)
    if parts.scheme not in ("http", "https"):
        raise SourceError(f"{shown}: only http and https URLs are fetched")
    if previous and urlsplit(previous).scheme == "https" and parts.scheme == "http":
        raise SourceError(f"{shown}: a redirect from https to http is refused")
    if not policy.allows(parts.hostname, parts.port):
        raise SourceError(
            f"{shown}: host {parts.hostname!r} is not in the installation's "
            "evidence.network.allowed_hosts"
        )


def fetch_url(template: str, policy: NetworkPolicy) -> tuple[bytes, dict[str, Any]]:
    """(decoded bytes, credential-free provenance) of one read-only GET."""
    import httpx

    url = expand_env(template)
    scrub = _Scrubber(url)
    first_shown = redact_url(url)
    deadline = time.monotonic() + policy.timeout_s
    previous: str | None = None
    headers = {"Accept-Encoding": "gzip, deflate", "User-Agent": "evidence-tool refresh"}
    try:
        # trust_env=False: no proxy or .netrc credentials picked up behind the operator's back;
        # a private CA bundle named by SSL_CERT_FILE is still honoured.
        with httpx.Client(
            follow_redirects=False,
            timeout=policy.timeout_s,
            trust_env=False,
            headers=headers,
            verify=_tls_context(),
        ) as client:
            for _hop in range(MAX_REDIRECTS + 1):
                _check_hop(url, previous, policy)
                shown = redact_url(url)
                with client.stream("GET", url) as resp:
                    if resp.status_code in _REDIRECTS:
                        target = resp.headers.get("location")
                        if not target:
                            raise SourceError(f"{shown}: redirect without a Location")
                        previous, url = url, urljoin(url, target)
                        continue
                    if resp.status_code != 200:
                        raise SourceError(f"{shown}: HTTP {resp.status_code}; nothing recorded")
                    raw = _read_body(resp, policy.max_bytes, deadline, shown)
                    meta = {
                        "url": first_shown,
                        "final_url": shown,
                        "status": resp.status_code,
                        "etag": resp.headers.get("etag"),
                        "content_type": resp.headers.get("content-type"),
                        "size": len(raw),
                        "fetched_at": now(),
                    }
                    return raw, meta
            raise SourceError(f"{first_shown}: more than {MAX_REDIRECTS} redirects")
    except SourceError as exc:
        raise SourceError(scrub(exc.message), code=exc.code) from None
    except httpx.TimeoutException:
        raise SourceError(f"{first_shown}: timed out after {policy.timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise SourceError(scrub(f"{first_shown}: {type(exc).__name__}: {exc}")) from None


def discover(sources: list[dict[str, Any]], policy: NetworkPolicy) -> list[Candidate]:
    """One candidate per ``kind: http`` entry of the Evidence descriptor (no request yet)."""
    found = []
    for spec in sources:
        if spec.get("kind") != "http":
            continue
        template = spec["url"]
        locator = http_locator(template)
        sid = source_id(locator)

        def fetch(template: str = template, locator: str = locator, spec: Any = spec) -> Acquired:
            raw, meta = fetch_url(template, policy)
            text = normalize(raw, meta["url"])
            return Acquired(
                source_id(locator),
                locator,
                "http",
                raw,
                text,
                content_hash(text),
                meta,
                spec.get("language"),
                spec.get("title"),
            )

        found.append(Candidate(sid, locator, "http", fetch))
    return found
