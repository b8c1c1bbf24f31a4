"""Snapshot manifests: canonical JSON, the revision, and the YAML mirror ``local-manifest.yaml``.

A manifest names no revision of its own; its revision is the sha256 of its
canonical JSON, so consolidating unchanged files yields the same revision.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from evidence_tool.archive._speed import splice
from evidence_tool.archive.records import (
    Declaration,
    DeclarationKind,
    Deletion,
    declaration_from_json,
)
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.record import Record
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.unit.yaml_strict import dump, load, scalar

FORMAT = 1
# Lists that read better in flow style in the YAML mirror, as SPEC.md 5 shows.
_FLOW_KEYS = frozenset({"excerpts", "suppressed_sources"})


def empty_manifest() -> JsonObject:
    return {"format": FORMAT, "units": [], "deletions": [], "suppressed_sources": [], "sources": []}


# The canonical layout: canonical JSON (sorted keys, no insignificant whitespace) except
# that every element of these top-level arrays starts a line of its own.  JSON escapes
# every newline inside strings, so a line is exactly one element: a new snapshot copies
# the lines of the entries it shares with the previous one (see splice.py) instead of
# re-encoding them, and Git sees one changed line per changed unit.
# Each array's entries are found again by this key.
_LINED = {"deletions": "id", "sources": "path", "units": "id"}


def manifest_bytes(manifest: JsonObject, previous: PreviousJson | None = None) -> bytes:
    """The canonical bytes; ``previous`` lends the bytes of entries taken over unchanged."""
    parts: list[splice.Buffer] = [b"{"]
    for i, key in enumerate(sorted(manifest)):
        value = manifest[key]
        parts.append(b"," if i else b"")
        parts.append(canonical_json(key) + b":")
        if key in _LINED and isinstance(value, list) and value:
            section = previous.splice(key, value) if previous is not None else None
            parts.append(b"[\n")
            if section is None:
                parts.append(b",\n".join([canonical_json(e) for e in value]))
            else:
                parts.extend(section)
            parts.append(b"\n]")
        else:
            parts.append(canonical_json(value))
    parts.append(b"}")
    return b"".join(parts)


@dataclass(frozen=True)
class PreviousJson:
    """A manifest's bytes beside the objects parsed from exactly those bytes (the previous
    snapshot, as ``load_snapshot`` reads it), written by this very ``manifest_bytes``
    (the archive's seal proves it): a line is then the canonical encoding of the element
    it stands for.  Lines of another writer could parse alike and still not be canonical."""

    data: bytes
    manifest: JsonObject  # JSON boundary: the parsed objects of exactly ``data``

    def splice(self, key: str, new: list[JsonValue]) -> list[splice.Buffer] | None:
        """The lined array ``key`` of a new manifest, copying the entries it took over."""
        prev = self.manifest.get(key)
        if not isinstance(prev, list) or not prev:
            return None
        # A raw newline never occurs inside JSON strings: these markers are structural.
        opener = b'"' + key.encode() + b'":[\n'
        start = self.data.find(opener)
        if start < 0:
            return None  # an older compact manifest: encode afresh
        start += len(opener)
        last = key == max(k for k in self.manifest)  # sorted last: its end is near the end
        end = self.data.rfind(b"\n]") if last else self.data.find(b"\n]", start)
        label = b'"' + _LINED[key].encode() + b'":'

        def needle(k: int) -> bytes:
            return label + canonical_json(_object(prev[k])[_LINED[key]])

        section = splice.Section(self.data, start, end, len(prev), b",\n", b"\n", 1, needle, False)
        try:
            pieces = splice.plan(prev, new, _LINED[key])
            return section.splice(pieces, canonical_json) if end > start else None
        except (KeyError, TypeError):
            return None


def parse_manifest(data: bytes) -> JsonObject:
    value = json.loads(data)
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise ValueError("not a snapshot manifest of format 1")
    return value


# Key order of the YAML mirror, for people reading it in a diff (JSON manifests sort keys).
_ORDER = (
    "id",
    "path",
    "kind",
    "content_hash",
    "file_hash",
    "provenance",
    "review_items",
    "curator",
    "declared_at",
    "actor",
    "source_id",
    "source_path",
    "source_hash",
    "excerpts",
    "original",
    "code",
    "message",
    "raised_by",
    "raised_at",
    "deleted_at",
    "last_revision",
    "reason",
    "last_content_hash",
    "blob",
)


_RANK = {k: i for i, k in enumerate(_ORDER)}
_ORDER_CACHE: dict[tuple[str, ...], list[str]] = {}


def _ordered(value: JsonValue) -> JsonValue:
    if isinstance(value, dict):
        keys = tuple(value)
        order = _ORDER_CACHE.get(keys)
        if order is None:  # entries share a handful of key sets: sort each set once
            order = sorted(keys, key=lambda k: (_RANK.get(k, len(_ORDER)), k))
            _ORDER_CACHE[keys] = order
        return {k: _ordered(value[k]) for k in order}
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


# A sha256 hex digest is a plain YAML scalar unless it reads as a number (all digits,
# digits with one exponent, a YAML 1.1 binary): then the general emitter quotes it.
_PLAIN_HEX = re.compile(r"(?![0-9]+(?:[eE][0-9]+)?$|0b[01]+$)[0-9a-f]{64}")
_MANUAL_UNIT = {"id", "path", "kind", "content_hash", "file_hash", "provenance", "review_items"}
_MANUAL_DECL = {"kind", "curator", "declared_at"}


# Valid ids and curated paths are always plain (they start with 'e' and hold no indicator).
_PLAIN_ID = re.compile(r"evidence:[a-z0-9._-]+(?::[a-z0-9._-]+)*")
_PLAIN_PATH = re.compile(r"evidence/curated/[a-z]+/[a-z0-9][a-z0-9._-]*\.md")


def _hex(value: str) -> str:
    return value if _PLAIN_HEX.fullmatch(value) else scalar(value)


def _fast_unit(e: JsonObject, memo: dict[str, str]) -> str | None:
    """The common entry (a manual declaration, no review items) without the general emitter:
    the same bytes ``dump`` writes, at a fraction of the cost for 10,000-unit manifests."""
    p = e.get("provenance")
    if e.keys() != _MANUAL_UNIT or e["review_items"] or not isinstance(p, dict):
        return None
    if p.keys() != _MANUAL_DECL or p["kind"] != "manual":
        return None
    uid, path, kind, ch, fh = e["id"], e["path"], e["kind"], e["content_hash"], e["file_hash"]
    curator, declared_at = p["curator"], p["declared_at"]
    if not (
        type(uid) is str
        and type(path) is str
        and type(kind) is str
        and type(ch) is str
        and type(fh) is str
        and type(curator) is str
        and type(declared_at) is str
    ):
        return None

    def m(value: str) -> str:
        out = memo.get(value)
        if out is None:
            out = memo[value] = scalar(value)
        return out

    uid = uid if _PLAIN_ID.fullmatch(uid) else scalar(uid)
    path = path if _PLAIN_PATH.fullmatch(path) else scalar(path)
    return (
        f"- id: {uid}\n  path: {path}\n  kind: {m(kind)}\n"
        f"  content_hash: {_hex(ch)}\n  file_hash: {_hex(fh)}\n"
        f"  provenance:\n    kind: manual\n    curator: {m(curator)}\n"
        f"    declared_at: {m(declared_at)}\n  review_items: []\n"
    )


@dataclass(frozen=True)
class PreviousYaml:
    """The local-manifest.yaml written last time, known (by its hash) to be exactly what
    was rendered for ``manifest``: the blocks of entries that did not change are copied.
    Only construct it with that proof in hand (see ``LocalEvidenceArchive._previous_yaml``)."""

    data: bytes
    manifest: JsonObject  # the previous manifest, whose entry objects were rendered

    def splice(
        self, key: str, new: list[JsonObject], block: Callable[[JsonObject], bytes]
    ) -> list[splice.Buffer] | None:
        """The blocks of the sequence ``key`` (without the final newline), or None.

        In the mirror, a unit or deletion block is the only text that starts a line with
        '- id: ', and the top-level keys follow each other in a fixed order.
        """
        prev = self.manifest.get(key)
        opener = b"\n" + key.encode() + b":\n"
        start = self.data.find(opener)
        end = self.data.rfind(b"\n" + _NEXT_KEY[key] + b":")
        if not isinstance(prev, list) or not prev or start < 0 or end <= start:
            return None

        def needle(k: int) -> bytes:
            return b"\n- id: " + scalar(_object(prev[k])["id"]).encode() + b"\n"

        section = splice.Section(
            self.data,
            start + len(opener),
            end,
            len(prev),
            b"\n",
            b"\n- id: ",
            0,
            needle,
            True,
            verify=False,  # the seal proved these bytes are the rendering of ``manifest``
        )
        try:
            return section.splice(splice.plan(prev, new, "id"), lambda e: block(_object(e))[:-1])
        except (KeyError, TypeError, ValueError):
            return None


_NEXT_KEY = {"units": b"deletions", "deletions": b"suppressed_sources"}


def _unit_block(e: JsonObject, memo: dict[str, str]) -> bytes:
    return (_fast_unit(e, memo) or dump([_ordered(e)], flow_keys=_FLOW_KEYS)).encode("utf-8")


def _record_block(e: JsonObject) -> bytes:
    return dump([_ordered(e)], flow_keys=_FLOW_KEYS).encode("utf-8")


def _sequence_yaml(
    key: str,
    entries: list[JsonObject],
    block: Callable[[JsonObject], bytes],
    previous: PreviousYaml | None,
) -> list[splice.Buffer]:
    """``key:`` and its blocks, spliced from the previous mirror where it can be."""
    if not entries:
        return [key.encode() + b": []\n"]
    spliced = previous.splice(key, entries, block) if previous is not None else None
    if spliced is not None:
        return [key.encode() + b":\n", *spliced, b"\n"]
    return [key.encode() + b":\n", *[block(e) for e in entries]]


def mirror_header(revision: str) -> str:
    return (
        "# Derived by evidence-tool from snapshot " + revision + ".\n"
        "# Do not edit: 'tht workspace evidence verify' fails on hand edits.\n"
    )


def render_local_manifest(
    manifest: JsonObject, revision: str, previous: PreviousYaml | None = None
) -> bytes:
    """``local-manifest.yaml``: the manifest plus its revision, sorted by id, for Git review."""
    head = dump({"format": FORMAT, "revision": revision})
    tail = {key: _ordered(manifest.get(key, [])) for key in ("suppressed_sources", "sources")}
    if "catalog" in manifest:  # what the catalog step checked against (catalog.md)
        tail["catalog"] = _ordered(manifest["catalog"])
    memo: dict[str, str] = {}
    view = Manifest(manifest)
    return b"".join(
        [
            (mirror_header(revision) + head).encode("utf-8"),
            *_sequence_yaml("units", view.unit_objects(), lambda e: _unit_block(e, memo), previous),
            *_sequence_yaml("deletions", view.deletion_objects(), _record_block, previous),
            dump(tail, flow_keys=_FLOW_KEYS).encode("utf-8"),
        ]
    )


def load_local_manifest(data: bytes) -> tuple[str, JsonObject]:
    """(revision, manifest) from ``local-manifest.yaml`` bytes."""
    value = load(data.decode("utf-8")).value
    if not isinstance(value, dict) or "revision" not in value:
        raise ValueError("local-manifest.yaml has no revision")
    revision = value.pop("revision")
    return revision, value


def _text(raw: JsonObject, key: str) -> str:
    """A string field of a manifest entry; anything else is a damaged manifest."""
    value = raw[key]
    if type(value) is not str:
        raise ValueError(f"manifest entry field {key!r} is not a string")
    return value


def _object(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        raise ValueError("manifest entry: expected an object")
    return value


def _array(value: JsonValue) -> list[JsonValue]:
    if not isinstance(value, list):
        raise ValueError("manifest: expected an array")
    return value


# Derive's hot path: plain functions over an entry's own object, no view built (a no-op
# consolidate runs them once per unit of a 50,000-unit manifest).


def kept_as_is(raw: JsonObject, path: str, kind: str, content_hash: str, file_hash: str) -> bool:
    """Whether a working file is exactly this entry, with no open review items and a
    declaration that needs no re-check (document-derived ones re-check their source)."""
    provenance = raw["provenance"]
    return (
        raw["file_hash"] == file_hash
        and raw["path"] == path
        and raw["content_hash"] == content_hash
        and raw["kind"] == kind
        and not raw.get("review_items")
        and isinstance(provenance, dict)
        and provenance.get("kind") != "document"
    )


def cited_source_paths(units: list[JsonObject]) -> set[str]:
    """The source paths the entries' declarations and their lineage (``original``) cite."""
    out = set()
    for raw in units:
        provenance = raw["provenance"]
        if not isinstance(provenance, dict):
            continue
        if provenance.get("kind") == "document":
            out.add(_text(provenance, "source_path"))
        original = provenance.get("original")
        if isinstance(original, dict) and original.get("kind") == "document":
            out.add(_text(original, "source_path"))
    return out


def _objects(value: JsonValue) -> list[JsonObject]:
    """An array of objects, narrowed without a copy (entries are kept by identity)."""
    items = _array(value)
    if not all(isinstance(e, dict) for e in items):
        raise ValueError("manifest: expected an array of objects")
    return cast(list[JsonObject], items)  # every element checked just above


class UnitEntry:
    """A typed, read-only view of one unit entry of a manifest.

    A view, not a copy: the manifest of 50,000 units is loaded by every no-op
    consolidate (issue 20), and derive keeps unchanged entries by identity.  Its JSON is
    ``raw``; a damaged field raises ValueError when it is read.  Not a ``Record``: for
    50,000 entries the records cost 4x the views, and 20x more to become objects again
    (``bench/unit_entries.py``, CONTRIBUTING.md).
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: JsonObject) -> None:
        self._raw = raw

    @classmethod
    def build(
        cls,
        *,
        unit_id: str,
        path: str,
        kind: str,
        content_hash: str,
        file_hash: str,
        provenance: JsonObject,
        review_items: list[JsonValue],
    ) -> UnitEntry:
        """A new entry, in the key order every writer has always used."""
        return cls(
            {
                "id": unit_id,
                "path": path,
                "kind": kind,
                "content_hash": content_hash,
                "file_hash": file_hash,
                "provenance": provenance,
                "review_items": review_items,
            }
        )

    @property
    def raw(self) -> JsonObject:
        """The manifest's own object (JSON boundary: it is what is encoded)."""
        return self._raw

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnitEntry) and other._raw == self._raw

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"UnitEntry({self._raw!r})"

    def same_object(self, other: UnitEntry | None) -> bool:
        """Whether ``other`` views this very entry object (kept over from a snapshot)."""
        return other is not None and other._raw is self._raw

    @property
    def id(self) -> str:
        return _text(self._raw, "id")

    @property
    def path(self) -> str:
        return _text(self._raw, "path")

    @property
    def kind(self) -> str:
        return _text(self._raw, "kind")

    @property
    def content_hash(self) -> str:
        return _text(self._raw, "content_hash")

    @property
    def file_hash(self) -> str:
        return _text(self._raw, "file_hash")

    def identity(self) -> tuple[str, str, str]:
        """(content hash, file hash, path): what tells a unit's versions apart."""
        return (self.content_hash, self.file_hash, self.path)

    @property
    def provenance_json(self) -> JsonObject:
        """The declaration object itself (not a copy): derive compares it by identity."""
        return _object(self._raw["provenance"])

    @property
    def provenance(self) -> JsonObject:
        """A copy of the declaration object, for output (JSON boundary: show, export)."""
        return dict(self.provenance_json)

    @property
    def declaration(self) -> Declaration:
        return declaration_from_json(self.provenance_json)

    @property
    def provenance_kind(self) -> DeclarationKind:
        return DeclarationKind(_text(self.provenance_json, "kind"))

    @property
    def review_items(self) -> list[JsonObject]:
        """Open review items (JSON objects: shown and carried as recorded)."""
        return [_object(i) for i in _array(self._raw.get("review_items", []))]


class SourceBlob(Record, frozen=True):
    """A source document a declaration points at, kept as the blob ``blob``."""

    path: str
    blob: str


class Manifest:
    """A typed, read-only view of a parsed snapshot manifest (the owner of its keys).

    Other packages read a manifest only through this view (``Snapshot.view``): no
    manifest key is spelled outside the archive.
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: JsonObject) -> None:
        self._raw = raw

    @property
    def raw(self) -> JsonObject:
        return self._raw

    def unit_objects(self) -> list[JsonObject]:
        """The unit entries' own objects, in manifest (id) order (the manifest's own list)."""
        return _objects(self._raw.get("units", []))

    def units(self) -> list[UnitEntry]:
        return [UnitEntry(e) for e in self.unit_objects()]

    def unit_count(self) -> int:
        return len(self.unit_objects())

    def objects_by_id(self) -> dict[str, JsonObject]:
        """id -> the unit entry's own object (derive keeps unchanged ones by identity)."""
        by_id = {e["id"]: e for e in self.unit_objects()}
        if not all(type(k) is str for k in by_id):
            raise ValueError("manifest: a unit entry without a string id")
        return cast(dict[str, JsonObject], by_id)  # every key checked just above

    def identities(self) -> dict[str, tuple[str, str, str]]:
        """id -> (content hash, file hash, path) of every unit."""
        return {entry.id: entry.identity() for entry in self.units()}

    def deletion_objects(self) -> list[JsonObject]:
        return _objects(self._raw.get("deletions", []))

    def deletions(self) -> list[Deletion]:
        return [Deletion.from_json(d) for d in self.deletion_objects()]

    def deleted_ids(self) -> set[str]:
        return {_text(d, "id") for d in self.deletion_objects()}

    def suppressed_sources(self) -> list[str]:
        """Source ids whose units an operator removed: refresh proposes them no more."""
        return [s for s in _array(self._raw.get("suppressed_sources", [])) if isinstance(s, str)]

    def source_objects(self) -> list[JsonObject]:
        return [_object(s) for s in _array(self._raw.get("sources", []))]

    def sources(self) -> list[SourceBlob]:
        return [SourceBlob.from_json(s) for s in self.source_objects()]

    def catalog(self) -> JsonObject | None:
        """What the catalog step checked against (JSON boundary: catalog.md), if it ran."""
        value = self._raw.get("catalog")
        return value if isinstance(value, dict) else None

    def catalog_fingerprint(self) -> str | None:
        catalog = self.catalog()
        value = catalog.get("fingerprint") if catalog else None
        return value if isinstance(value, str) and value else None
