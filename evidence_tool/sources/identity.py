"""Source identity: canonical locators, ``source_id``, normalized text and ``content_hash``.

A locator never carries credentials: userinfo and credential-like query
parameters are removed before it is hashed, stored or printed, so a rotated
token does not change a source's identity and no secret reaches a file.
"""

from __future__ import annotations

import hashlib
import os
import re
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from evidence_tool.errors import SourceError

# Query parameters that carry credentials or request signatures (S3/GCS/Azure
# presigned URLs, API tokens).  Matched case-insensitively on the name.
_SECRET_PARAM = re.compile(
    r"^(x-amz-.*|x-goog-.*|token|access_token|id_token|auth|authorization|api[-_]?key|key|"
    r"apikey|secret|password|passwd|pwd|signature|sig|credential|awsaccesskeyid|expires|"
    r"session[-_]?token|client_secret)$",
    re.IGNORECASE,
)
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def source_id(locator: str) -> str:
    """64 hex: the sha256 of the canonical locator (``fs:``, ``http:``, ``s3:``)."""
    return hashlib.sha256(locator.encode("utf-8")).hexdigest()


def normalize(data: bytes, what: str) -> str:
    """UTF-8 text with the BOM stripped and CRLF turned into LF (SPEC 6.1)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"{what} is not UTF-8 text (byte {exc.start}); save it as UTF-8", path=what
        ) from None
    if "\x00" in text:
        raise SourceError(f"{what} contains NUL bytes; it is not a text document", path=what)
    return text.replace("\r\n", "\n")


def content_hash(text: str) -> str:
    return sha256_text(text)


def _is_secret_param(name: str, value: str) -> bool:
    return bool(_SECRET_PARAM.match(name)) or bool(_ENV_REF.search(value))


def redact_url(url: str) -> str:
    """The URL without userinfo and without credential or signature query parameters."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not _is_secret_param(k, v)
    ]
    return urlunsplit(
        (parts.scheme.lower(), netloc.lower(), parts.path or "/", urlencode(query), "")
    )


def http_locator(url_template: str) -> str:
    """``http:<url without credentials>``, computed from the descriptor's URL template."""
    return "http:" + redact_url(url_template)


def s3_locator(bucket: str, key: str) -> str:
    return f"s3:{bucket}/{key}"


def fs_locator(rel: str) -> str:
    return f"fs:{rel}"


def expand_env(template: str) -> str:
    """Replace ``${NAME}`` with the environment variable (credentials stay out of the workspace).

    Values are percent-encoded so a secret with ``@`` or ``/`` cannot change the URL's shape.
    """

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        value = os.environ.get(name)
        if value is None:
            raise SourceError(
                f"the source URL names the environment variable {name}, which is not set"
            )
        return quote(value, safe="")

    return _ENV_REF.sub(sub, template)
