"""Secrets never printed: redaction of settings and URLs for output and provenance."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"
_SECRET_WORDS = (
    r"pass(?:word|wd)?|secret|token|api[_-]?key|credential|signature|"
    r"access[_-]?key|session|auth"
)
_SECRET_KEY = re.compile(f"({_SECRET_WORDS})", re.IGNORECASE)
# Query parameters that carry credentials (presigned S3 URLs, tokens, X-Api-Key, ...).
_SECRET_PARAM = re.compile(f"({_SECRET_WORDS})|^(key|sig|x-amz-.*)$", re.IGNORECASE)
# A URL anywhere in a string ("--url=https://user:pw@host", "see https://...").
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
# A command-line flag that names a secret: "--api-key=VALUE", or "--token" then VALUE.
_SECRET_FLAG = re.compile(
    f"^(?P<flag>-{{1,2}}[A-Za-z0-9_-]*(?:{_SECRET_WORDS})[A-Za-z0-9_-]*)(?P<value>=.*)?$", re.I
)


def clean_url(url: str) -> str:
    """The URL without userinfo and without credential query parameters.

    A URL that does not parse is replaced whole: the parser's message would quote
    the part it choked on, which for ``https://user:pa/ss@host`` is the password.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return REDACTED
    if ":" in host:  # an IPv6 literal loses its brackets in .hostname
        host = f"[{host}]"
    if port:
        host = f"{host}:{port}"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not _SECRET_PARAM.search(k)
    ]
    return urlunsplit((parts.scheme, host, parts.path, urlencode(query), ""))


def _redact_text(value: str) -> str:
    flag = _SECRET_FLAG.match(value)
    if flag and flag.group("value"):
        return f"{flag.group('flag')}={REDACTED}"
    return _URL.sub(lambda m: clean_url(m.group(0)), value) if "://" in value else value


def _redact_list(values: list[Any], key: str) -> list[Any]:
    out: list[Any] = []
    secret_next = False
    for v in values:
        if secret_next and isinstance(v, str):
            out.append(REDACTED)
        else:
            out.append(redact(v, key))
        flag = _SECRET_FLAG.match(v) if isinstance(v, str) else None
        secret_next = bool(flag and not flag.group("value"))
    return out


def redact(value: Any, key: str = "") -> Any:
    """A copy of settings with secret-looking keys, flags and URL credentials replaced."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return _redact_list(value, key)
    if isinstance(value, str):
        if _SECRET_KEY.search(key) and not key.endswith("_env"):
            return REDACTED
        return _redact_text(value)
    return value
