"""v3 provenance and review items -> the staged change ``initialize(carried=...)`` records.

A document declaration must survive the archive's re-check (source bytes at
``source_path`` hash to ``source_hash`` and hold every excerpt), so the legacy
source is checked here, before anything is written, and its normalized text
is placed at ``evidence/source/acquired/<source-id>/<sha256>.md``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from evidence_tool.archive.objects import HEX64
from evidence_tool.archive.records import DocumentDeclaration
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.migrate.convert import Converted, describe
from evidence_tool.migrate.reading import (
    SOURCE_DIR,
    FieldPath,
    LegacyManifest,
    Problem,
    decode_text,
    read_bytes,
)
from evidence_tool.record import AnyObject, Record
from evidence_tool.workspace.layout import Layout

TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
MANUAL_KEYS = frozenset({"kind", "curator", "declared_at"})
DOCUMENT_KEYS = frozenset(
    {"kind", "source_path", "source_hash", "excerpts", "declared_at", "actor"}
)
ITEM_KEYS = ("code", "message", "raised_by", "raised_at")


@dataclass(frozen=True)
class AcquiredSource:
    legacy_path: str
    data: bytes  # normalized text

    # Cached: a source cited by thousands of units is hashed and decoded once.
    @cached_property
    def hash(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @cached_property
    def text(self) -> str:
        return self.data.decode("utf-8")

    @property
    def source_id(self) -> str:
        """SPEC.md 6.1: sha256 of the canonical locator ``fs:<workspace-relative path>``."""
        return hashlib.sha256(f"fs:{self.legacy_path}".encode()).hexdigest()

    @property
    def target(self) -> str:
        return f"{SOURCE_DIR}/acquired/{self.source_id}/{self.hash}.md"


class CarriedDeclaration(Record, frozen=True):
    """A unit's legacy provenance, bound to its converted content."""

    content_hash: str
    provenance: AnyObject  # the declaration as the staged change holds it (manual or document)

    @property
    def kind(self) -> str:
        return str(self.provenance["kind"])


class CarriedItem(Record, frozen=True):
    """A legacy review item, bound to the converted content (a visible change closes it)."""

    code: str
    message: str
    raised_by: str
    raised_at: str
    content_hash: str


@dataclass
class Carried:
    """What the baseline must record besides the files: declarations, review items, sources."""

    declarations: dict[str, CarriedDeclaration] = field(default_factory=dict)
    review_items: dict[str, list[CarriedItem]] = field(default_factory=dict)
    sources: dict[str, AcquiredSource] = field(default_factory=dict)

    def staged_change(self) -> JsonObject:
        """The staged change (staged.json's sections) that ``initialize`` records."""
        return {
            "declarations": {uid: d.to_json() for uid, d in self.declarations.items()},
            "review_items": {
                uid: [i.to_json() for i in items] for uid, items in self.review_items.items()
            },
        }


class SourceReader:
    """Reads, normalizes and caches the legacy source documents cited by document provenance."""

    def __init__(self, layout: Layout, manifest: LegacyManifest) -> None:
        self.layout = layout
        self.manifest = manifest
        self.cache: dict[str, AcquiredSource | str] = {}

    def get(self, rel: str) -> AcquiredSource | str:
        if rel not in self.cache:
            self.cache[rel] = self._read(rel)
        return self.cache[rel]

    def _read(self, rel: str) -> AcquiredSource | str:
        if not rel.startswith(SOURCE_DIR + "/") or rel.startswith(f"{SOURCE_DIR}/acquired/"):
            return f"legacy sources live under {SOURCE_DIR}/ (not under {SOURCE_DIR}/acquired/)"
        if rel not in self.manifest.sources:
            return "the source is not listed under 'sources' in the legacy manifest"
        data = read_bytes(self.layout, rel)
        if isinstance(data, str):
            return f"the source document {rel}: {data}"
        try:
            return AcquiredSource(rel, decode_text(data, bom=True).encode("utf-8"))
        except ValueError:  # not UTF-8
            return f"the source document {rel} is not UTF-8 text"


def carry(converted: Converted, sources: SourceReader, out: Carried) -> list[Problem]:
    """Add the unit's declaration and review items to ``out``; return what prevents it."""
    legacy, uid = converted.legacy, converted.unit.id
    problems: list[Problem] = []
    prov = legacy.provenance
    if prov is not None:
        decl = _declaration(converted, prov, sources, problems, out)
        if decl is not None:
            out.declarations[uid] = CarriedDeclaration(converted.unit.content_hash, decl)
    items = legacy.review_items
    if items is not None:
        carried = _review_items(converted, items, problems)
        if carried:
            out.review_items[uid] = carried
    return problems


def _text(value: JsonValue) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _declaration(
    c: Converted, prov: JsonValue, sources: SourceReader, problems: list[Problem], out: Carried
) -> JsonObject | None:
    def bad(path: FieldPath, reason: str) -> None:
        problems.append(c.legacy.problem(("provenance", *path), reason))

    kind = prov.get("kind") if isinstance(prov, dict) else None
    keys = MANUAL_KEYS if kind == "manual" else DOCUMENT_KEYS if kind == "document" else None
    if keys is None or not isinstance(prov, dict) or set(prov) != keys:
        bad(
            (),
            "must be {kind: manual, curator, declared_at} or {kind: document, source_path, "
            "source_hash, excerpts, declared_at, actor}",
        )
        return None
    declared = prov["declared_at"]
    if not (isinstance(declared, str) and TIME_RE.fullmatch(declared)):
        bad(("declared_at",), "must be a UTC time 'YYYY-MM-DDTHH:MM:SSZ'")
    person = "curator" if kind == "manual" else "actor"
    if not _text(prov[person]):
        bad((person,), f"must be a nonempty string, got {describe(prov[person])}")
    if kind == "manual":
        return None if problems else dict(prov)
    return _document(prov, sources, bad, out, bool(problems))


def _document(
    prov: JsonObject,
    sources: SourceReader,
    bad: Callable[[FieldPath, str], None],
    out: Carried,
    failed: bool,
) -> JsonObject | None:
    rel, digest, excerpts = prov["source_path"], prov["source_hash"], prov["excerpts"]
    if not (isinstance(digest, str) and HEX64.fullmatch(digest)):
        bad(("source_hash",), "must be 64 lowercase hex digits (sha256 of the normalized text)")
        return None
    if not isinstance(excerpts, list) or not excerpts or not all(_text(e) for e in excerpts):
        bad(("excerpts",), "must be a nonempty list of nonempty strings")
        return None
    source = sources.get(rel) if isinstance(rel, str) else "must be a string"
    if isinstance(source, str) or not isinstance(rel, str):
        bad(("source_path",), str(source))
        return None
    if sources.manifest.sources[rel] != digest:
        bad(("source_hash",), f"differs from the hash the legacy manifest lists for {rel}")
        return None
    if source.hash != digest:
        bad(
            ("source_hash",),
            f"the source document {rel} no longer has this hash (its normalized text changed); "
            "restore the cited version so the provenance can be carried",
        )
        return None
    cited = [str(e) for e in excerpts]  # all nonempty strings (checked above)
    for i, excerpt in enumerate(cited):
        if excerpt not in source.text:
            bad(("excerpts", i), f"{excerpt[:60]!r} does not occur verbatim in {rel}")
            failed = True
    if failed:
        return None
    out.sources[rel] = source
    return DocumentDeclaration(
        source_id=source.source_id,
        source_path=source.target,
        source_hash=digest,
        excerpts=tuple(cited),
        declared_at=str(prov["declared_at"]),
        actor=str(prov["actor"]),
    ).to_json()


def _review_items(c: Converted, items: JsonValue, problems: list[Problem]) -> list[CarriedItem]:
    if not isinstance(items, list):
        problems.append(c.legacy.problem(("review_items",), "must be a list"))
        return []
    out: list[CarriedItem] = []
    keys: list[tuple[str, str, str]] = []
    for i, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or set(item) != set(ITEM_KEYS)
            or not all(_text(item[k]) for k in ITEM_KEYS)
            or not TIME_RE.fullmatch(str(item["raised_at"]))
        ):
            problems.append(
                c.legacy.problem(
                    ("review_items", i),
                    "each review item has nonempty code, message, raised_by and a UTC "
                    "raised_at 'YYYY-MM-DDTHH:MM:SSZ'",
                )
            )
            continue
        code, message, raised_by, raised_at = (str(item[k]) for k in ITEM_KEYS)
        key = (code, message, raised_at)
        if key in keys:
            problems.append(
                c.legacy.problem(
                    ("review_items", i),
                    f"repeats review item [{keys.index(key)}] (same code, message and "
                    "raised_at, which identify a v4 review item), so one would be lost",
                )
            )
            continue
        keys.append(key)
        # Bound to the converted content: a visible change closes it (SPEC.md 5.3).
        out.append(CarriedItem(code, message, raised_by, raised_at, c.unit.content_hash))
    return out
