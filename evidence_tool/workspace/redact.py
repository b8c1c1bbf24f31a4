"""Secrets never printed: redaction of settings and URLs for output and provenance."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

REDACTED = "***"
_SECRET_WORDS = (
    r"pass(?:word|wd)?|secret|token|api[_-]?key|credential|signature|"
    r"access[_-]?key|session|auth"
)
_SECRET_KEY = re.compile(f"({_SECRET_WORDS})", re.IGNORECASE)
# A URL anywhere in a string ("--url=https://user:pw@host", "see https://...").
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
_WHOLE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")
# A command-line flag that names a secret: "--api-key=VALUE", or "--token" then VALUE.
_SECRET_FLAG = re.compile(
    f"^(?P<flag>-{{1,2}}[A-Za-z0-9_-]*(?:{_SECRET_WORDS})[A-Za-z0-9_-]*)(?P<value>=.*)?$", re.I
)


class MalformedUrl(ValueError):
    """A URL that cannot be stored or fetched as written; the message quotes none of it."""


# An '@' followed by a host name after the authority: a '#', '/' or '?' in a literal
# password cut the userinfo short, so the "host" urlsplit found is really the user name.
_HOST_AFTER_AT = re.compile(
    r"@(\[[0-9A-Fa-f:.]+\]|localhost|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)(:[^/?#]*)?([/?#]|$)"
)
_ENCODE_HINT = (
    "percent-encode '#', '/' and '?' in a user name or password (%23, %2F, %3F) or, better, "
    "write ${NAME} there and set NAME in the environment"
)
_CUT_USERINFO = f"a '#', '/' or '?' in its user name or password cuts the host off; {_ENCODE_HINT}"


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be stored or fetched as written, or None; quotes nothing of it."""
    try:
        parts = urlsplit(url)
    except ValueError:  # its message would quote the URL
        return "it does not parse as a URL"
    try:
        port = parts.port
    except ValueError:  # "Port could not be cast to integer value as 'pa'": a password
        port = 0
    if port == 0:
        hint = f"; {_ENCODE_HINT}" if "@" in url else ""  # the "port" may start a password
        return f"its port is not a number from 1 to 65535{hint}"
    if not parts.hostname:
        return "it names no host"
    if _userinfo_cut_short(url, parts.netloc, parts.hostname):
        return _CUT_USERINFO
    return None


def _userinfo_cut_short(url: str, netloc: str, host: str) -> bool:
    """``user:12#pw@docs.example.org/x`` parses as host ``user``, port 12: a one-label
    "host" with no userinfo, followed by ``@`` and a real host name, is a cut password.
    A dotted host (``h.example/list/me@example.org``) keeps its path as written."""
    if "@" in netloc or "." in host or ":" in host or host == "localhost":
        return False
    return bool(_HOST_AFTER_AT.search(url.split("//", 1)[-1][len(netloc) :]))


def query_pairs(query: str) -> list[tuple[str, str]]:
    """(name, value) pairs, split on '&' and on ';' (``a=1;token=x`` holds two)."""
    return [
        pair for part in re.split("[&;]", query) for pair in parse_qsl(part, keep_blank_values=True)
    ]


def public_url(url: str, safe_params: Collection[str] = ()) -> str:
    """What of a URL may be stored or printed: scheme, host, port, path and listed parameters.

    Userinfo, the fragment and every query parameter not in ``safe_params`` are
    dropped, as is a listed one whose value is a ``${NAME}`` reference.  Raises
    ``MalformedUrl`` (quoting nothing of the URL) when the URL does not parse.
    """
    problem = url_problem(url)
    if problem:
        raise MalformedUrl(problem)
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal loses its brackets in .hostname
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    kept = [(k, v) for k, v in query_pairs(parts.query) if k in safe_params and "${" not in v]
    return urlunsplit(
        (parts.scheme.lower(), netloc.lower(), parts.path or "/", urlencode(kept), "")
    )


def clean_url(url: str) -> str:
    """``public_url`` with no parameter kept; a URL that does not parse is replaced whole."""
    try:
        return public_url(url)
    except MalformedUrl:
        return REDACTED


def redact_urls(text: str) -> str:
    """``text`` with every URL in it (a library's error message, a flag) made public.

    Found from each ``://`` outwards rather than by ``_URL.sub``: the pattern is tried at
    every letter, and each try rescans the letters after it, quadratic in a long word.
    The URLs found are the pattern's: the scheme starts at the first letter of the run of
    scheme characters before ``://``, and the URL runs to a blank, a quote or ``<>``."""
    if "://" not in text:
        return text
    out: list[str] = []
    done = 0  # text before this is copied or replaced already
    at = text.find("://")
    while at != -1:
        start = at
        while start > done and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        while start < at and not (text[start].isascii() and text[start].isalpha()):
            start += 1  # a scheme starts with a letter
        body = _URL_BODY.match(text, at + 3)
        if start == at or body is None:
            at = text.find("://", at + 1)
            continue
        out += [text[done:start], clean_url(text[start : body.end()])]
        done = body.end()
        at = text.find("://", done)
    out.append(text[done:])
    return "".join(out)


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_URL_BODY = re.compile(r"[^\s\"'<>]+")


def scrub(text: str, values: Collection[str | None]) -> str:
    """``text`` with its URLs made public and every secret value in it (as given, URL-quoted
    or unquoted) replaced; values shorter than 3 characters would blank ordinary words."""
    found = [v for v in values if v and len(v) >= 3]
    forms = {*found, *(quote(v, safe="") for v in found), *(unquote(v) for v in found)}
    text = redact_urls(text)  # a library message may quote the whole URL
    for secret in sorted(forms, key=len, reverse=True):  # longest first: no partial leftovers
        text = text.replace(secret, REDACTED)
    return text


def _redact_text(value: str) -> str:
    flag = _SECRET_FLAG.match(value)
    if flag and flag.group("value"):
        return f"{flag.group('flag')}={REDACTED}"
    if _WHOLE_URL.fullmatch(value):  # a setting that is one URL: judged whole, quotes included
        return clean_url(value)
    return redact_urls(value)


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
        out = {k: redact(v, str(k)) for k, v in value.items()}
        safe = value.get("safe_query_params")
        if isinstance(value.get("url"), str) and isinstance(safe, list):
            # An http source shows the parameters its descriptor lists as safe.
            try:
                out["url"] = public_url(value["url"], [str(p) for p in safe])
            except MalformedUrl:
                out["url"] = REDACTED
        return out
    if isinstance(value, list):
        return _redact_list(value, key)
    if isinstance(value, str):
        if _SECRET_KEY.search(key) and not key.endswith("_env"):
            return REDACTED
        return _redact_text(value)
    return value
