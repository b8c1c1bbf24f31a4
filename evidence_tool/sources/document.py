"""One acquired document, and how a draft splits into its own metadata and v4 units.

A draft may open with a frontmatter that is not a unit: that is the
document's own metadata (title, identifiers).  Units then follow, each
starting at a line ``---`` directly followed by a line ``schema_version:...``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources.records import DocumentFacts, Identifier
from evidence_tool.unit.yaml_strict import YamlProblem, load_unique

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
        import hashlib

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
