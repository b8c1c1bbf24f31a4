"""Secrets never printed: redaction of settings and URLs for output and provenance."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"
_SECRET_KEY = re.compile(
    r"(pass(word)?|secret|token|api[_-]?key|credential|signature|"
    r"access[_-]?key|session|auth)",
    re.IGNORECASE,
)
# Query parameters that carry credentials (presigned S3 URLs, tokens).
_SECRET_PARAM = re.compile(
    r"^(x-amz-(signature|credential|security-token)|signature|sig|"
    r"token|access_token|api[_-]?key|key|auth|password|secret)$",
    re.IGNORECASE,
)


def clean_url(url: str) -> str:
    """The URL without userinfo and without credential query parameters."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    if ":" in host and not host.startswith("[") and host.count(":") > 1:
        host = f"[{host}]"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not _SECRET_PARAM.match(k)
    ]
    return urlunsplit((parts.scheme, host, parts.path, urlencode(query), ""))


def redact(value: Any, key: str = "") -> Any:
    """A copy of settings with secret-looking keys and URL credentials replaced."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        if _SECRET_KEY.search(key) and not key.endswith("_env"):
            return REDACTED
        if "://" in value:
            return clean_url(value)
    return value
