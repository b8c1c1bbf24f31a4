"""Source identity: canonical locators, ``source_id``, normalized text and ``content_hash``.

A locator never carries credentials: it keeps a URL's scheme, host, port and
path, plus only the query parameters the descriptor lists as safe
(``workspace.redact.public_url``), so a rotated token does not change a
source's identity and no secret reaches a file.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
from collections.abc import Collection
from urllib.parse import quote

from evidence_tool.errors import SourceError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources.document import Acquired
from evidence_tool.workspace.redact import public_url

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def source_id(locator: str) -> str:
    """64 hex: the sha256 of the canonical locator (``fs:``, ``http:``, ``s3:``)."""
    return hashlib.sha256(locator.encode("utf-8")).hexdigest()


def normalize(data: bytes, what: str) -> str:
    """UTF-8 text with the BOM stripped and CRLF turned into LF (SPEC 6.1)."""
    try:
        text = data.removeprefix(codecs.BOM_UTF8).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"{what} is not UTF-8 text (byte {exc.start}); save it as UTF-8", path=what
        ) from None
    if "\x00" in text:
        raise SourceError(f"{what} contains NUL bytes; it is not a text document", path=what)
    return text.replace("\r\n", "\n")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def acquired(
    locator: str,
    kind: str,
    raw: bytes,
    provenance: JsonObject,
    shown: str,
    language: str | None = None,
    title: str | None = None,
) -> Acquired:
    """A document as an adapter read it: its text normalized (``shown`` names it in a
    message) and hashed."""
    text = normalize(raw, shown)
    return Acquired(
        source_id(locator),
        locator,
        kind,
        raw,
        text,
        content_hash(text),
        provenance,
        language,
        title,
    )


def http_locator(url_template: str, safe_params: Collection[str] = ()) -> str:
    """``http:<public URL>``, computed from the descriptor's URL template (never the expanded URL).

    For a URL without a query, or whose non-credential parameters are all listed in
    ``safe_params``, this is the locator the deny-list versions computed: its id is kept.
    """
    return "http:" + public_url(url_template, safe_params)


def s3_locator(bucket: str, key: str) -> str:
    return f"s3:{bucket}/{key}"


def fs_locator(rel: str) -> str:
    return f"fs:{rel}"


def expand_env(template: str) -> tuple[str, list[str]]:
    """The URL with each ``${NAME}`` replaced by the environment variable, and the values used.

    Values are percent-encoded so a secret with ``@`` or ``/`` cannot change the URL's shape;
    the caller scrubs the returned values from every message.
    """
    values: list[str] = []

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        value = os.environ.get(name)
        if value is None:
            raise SourceError(
                f"the source URL names the environment variable {name}, which is not set"
            )
        values.append(value)
        return quote(value, safe="")

    return _ENV_REF.sub(sub, template), values
