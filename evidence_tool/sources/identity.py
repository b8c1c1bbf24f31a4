"""Source identity: canonical locators, ``source_id``, normalized text and ``content_hash``;
one acquired document, and how a draft splits into its own metadata and v4 units.

A draft may open with a frontmatter that is not a unit: that is the document's own
metadata (title, identifiers).  Units then follow, each starting at a line ``---``
directly followed by a line ``schema_version:...``.

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
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from urllib.parse import quote

from evidence_tool.errors import SourceError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources.records import DocumentFacts, Identifier
from evidence_tool.unit.yaml_strict import YamlProblem, load_unique
from evidence_tool.workspace.redact import public_url

IDENTIFIER_TYPES = ("doi", "url", "isbn", "issn", "arxiv", "urn")


@dataclass(frozen=True)
class Acquired:
    """What an adapter read: original bytes, normalized text, credential-free provenance."""

    source_id: str
    locator: str
    kind: str  # fs | http | s3 | import
    raw: bytes
    text: str
    content_hash: str
    # Credential-free provenance, written verbatim beside the bytes (a JSON boundary).
    provenance: JsonObject
    language: str | None = None
    title: str | None = None  # from the descriptor, when it names one

    @property
    def raw_hash(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    @property
    def bytes_read(self) -> int:
        """What acquiring it read, for the refresh's total bound."""
        return len(self.raw)


@dataclass(frozen=True)
class Candidate:
    """A discovered source: identity now, bytes later (fetching is the expensive part)."""

    source_id: str
    locator: str
    kind: str  # fs | http | s3 | import
    fetch: Callable[[], Acquired]


@dataclass
class DocumentMeta:
    title: str | None = None
    identifier: Identifier | None = None
    language: str | None = None
    problems: list[str] = field(default_factory=list)

    def facts(self) -> DocumentFacts:
        """What a comparison and a refiner request record of the document."""
        return DocumentFacts(self.title, self.identifier)


def split_units(text: str) -> tuple[str | None, list[tuple[int, str]]]:
    """(document frontmatter text or None, [(first line number, unit text), ...])."""
    lines = text.split("\n")
    # A unit opens at a line ``---`` followed by ``schema_version:``.
    starts = [
        i
        for i in range(len(lines) - 1)
        if lines[i] == "---" and lines[i + 1].startswith("schema_version:")
    ]
    front = None
    if lines and lines[0] == "---" and (not starts or starts[0] != 0):
        end = next((i for i in range(1, len(lines)) if lines[i] == "---"), None)
        if end is not None:
            front = "\n".join(lines[1:end])
    chunks = []
    for n, start in enumerate(starts):
        stop = starts[n + 1] if n + 1 < len(starts) else len(lines)
        chunk = "\n".join(lines[start:stop]).rstrip("\n") + "\n"
        chunks.append((start + 1, chunk))
    return front, chunks


def document_meta(text: str) -> DocumentMeta:
    """Title, first identifier (doi, url, isbn, issn, arxiv, urn) and language of the document."""
    front, _ = split_units(text)
    meta = DocumentMeta()
    if front is None:
        return meta
    try:
        value = load_unique(front, line_offset=1).value
    except YamlProblem as exc:
        meta.problems.append(f"the document's frontmatter is not valid YAML: {exc.message}")
        return meta
    if not isinstance(value, dict):
        meta.problems.append("the document's frontmatter is not a mapping of keys")
        return meta
    if isinstance(value.get("title"), str):
        meta.title = value["title"]
    if isinstance(value.get("language"), str):
        meta.language = value["language"]
    for kind in IDENTIFIER_TYPES:
        if isinstance(value.get(kind), str | int | float) and str(value[kind]).strip():
            meta.identifier = Identifier(kind, str(value[kind]))
            break
    return meta


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
