"""Round trips of the archive's typed records (issue 18): ``from_json(to_json(x)) == x``.

Every record family the archive hands across a module boundary is drawn by
hypothesis: manifest unit entries and source blobs (checked against
``manifest-records.schema.json``), whole manifests through their canonical bytes
and the typed ``Manifest`` view, closed review items, journal entries, and the
staged.json changes read back through the accessors of ``archive.staged``.
Declarations and deletions have their own property tests in test_records.py.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_tool.archive import staged as staging
from evidence_tool.archive.journal import FileChange, Interrupted, JournalEntry
from evidence_tool.archive.manifest import (
    FORMAT,
    Manifest,
    SourceBlob,
    UnitEntry,
    manifest_bytes,
    parse_manifest,
)
from evidence_tool.archive.records import (
    ClosedBy,
    ClosedItem,
    Deletion,
    DeletionReason,
    DocumentDeclaration,
    ManualDeclaration,
)
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.unit.schemas import load_schema

SCHEMA = load_schema("manifest-records.schema.json")
HEX = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
TEXT = st.text(max_size=24)
WHEN = st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
IDS = st.from_regex(r"evidence:[a-z0-9._-]{1,16}(:[a-z0-9._-]{1,8})?", fullmatch=True)
PATHS = st.from_regex(r"evidence/curated/[a-z]{1,8}/[a-z0-9][a-z0-9._-]{0,12}\.md", fullmatch=True)
ITEMS = st.fixed_dictionaries(
    {"code": TEXT, "message": TEXT, "raised_by": TEXT, "raised_at": WHEN, "content_hash": HEX}
)


def _valid(definition: str, value: object) -> None:
    schema = {**SCHEMA, "$ref": f"#/$defs/{definition}"}
    jsonschema.Draft202012Validator(schema).validate(value)


def _through_json(value: dict[str, Any]) -> Any:
    """What a reader gets back: the canonical bytes, parsed (no shared objects)."""
    return json.loads(canonical_json(value))


DOCUMENTS = st.builds(
    DocumentDeclaration,
    source_id=HEX,
    source_path=st.text(min_size=1, max_size=30),
    source_hash=HEX,
    excerpts=st.lists(TEXT, max_size=3).map(tuple),
)
DECLARATIONS = DOCUMENTS | st.builds(
    ManualDeclaration, curator=TEXT, declared_at=WHEN, original=st.none() | DOCUMENTS
)


@st.composite
def unit_entries(draw: st.DrawFn, unit_id: str | None = None) -> UnitEntry:
    return UnitEntry.build(
        unit_id=unit_id or draw(IDS),
        path=draw(PATHS),
        kind=draw(st.sampled_from(["domain", "metric", "join", "caveat"])),
        content_hash=draw(HEX),
        file_hash=draw(HEX),
        provenance=draw(DECLARATIONS).to_json(),
        review_items=list(draw(st.lists(ITEMS, max_size=2))),
    )


DELETIONS = st.builds(
    Deletion,
    id=IDS,
    deleted_at=WHEN,
    last_revision=HEX,
    actor=TEXT,
    reason=st.sampled_from(DeletionReason),
    last_content_hash=HEX,
    source_id=st.none() | HEX,
)
SOURCES = st.builds(SourceBlob, path=PATHS, blob=HEX)


@settings(max_examples=60)
@given(unit_entries())
def test_unit_entry_round_trips_and_matches_the_schema(entry: UnitEntry) -> None:
    value = entry.raw
    _valid("unit_entry", value)
    back = UnitEntry(_through_json(value))
    assert back == entry
    assert (back.id, back.path, back.kind) == (entry.id, entry.path, entry.kind)
    assert back.identity() == (entry.content_hash, entry.file_hash, entry.path)
    assert back.declaration == entry.declaration
    assert back.provenance_kind == entry.declaration.to_json()["kind"]
    assert back.review_items == entry.review_items


@settings(max_examples=60)
@given(SOURCES)
def test_source_blob_round_trips_and_matches_the_schema(source: SourceBlob) -> None:
    value = source.to_json()
    _valid("source", value)
    assert SourceBlob.from_json(_through_json(value)) == source


@settings(max_examples=40)
@given(
    st.lists(unit_entries(), max_size=6, unique_by=lambda e: e.id),
    st.lists(DELETIONS, max_size=4, unique_by=lambda d: d.id),
    st.lists(SOURCES, max_size=3, unique_by=lambda s: s.path),
)
def test_manifest_view_reads_back_what_was_written(
    units: list[UnitEntry], deletions: list[Deletion], sources: list[SourceBlob]
) -> None:
    """A manifest through its canonical bytes: the view returns the records put in."""
    units = sorted(units, key=lambda e: e.id)
    deletions = sorted(deletions, key=lambda d: d.id)
    raw: dict[str, Any] = {
        "format": FORMAT,
        "units": [e.raw for e in units],
        "deletions": [d.to_json() for d in deletions],
        "suppressed_sources": sorted({d.source_id for d in deletions if d.source_id}),
        "sources": [s.to_json() for s in sources],
    }
    view = Manifest(parse_manifest(manifest_bytes(raw)))
    assert view.units() == units
    assert view.unit_count() == len(units)
    assert view.deletions() == deletions
    assert view.deleted_ids() == {d.id for d in deletions}
    assert view.sources() == sources
    assert view.suppressed_sources() == raw["suppressed_sources"]
    assert view.identities() == {e.id: e.identity() for e in units}
    assert view.catalog() is None and view.catalog_fingerprint() is None


def test_the_manifest_view_is_a_view_not_a_copy() -> None:
    """No per-entry copy on the no-op hot path: derive keeps entries by identity."""
    entries = [
        UnitEntry.build(
            unit_id=f"evidence:u{i}",
            path=f"evidence/curated/domain/u{i}.md",
            kind="domain",
            content_hash="a" * 64,
            file_hash="b" * 64,
            provenance=ManualDeclaration("alice", "2030-01-01T00:00:00Z").to_json(),
            review_items=[],
        ).raw
        for i in range(3)
    ]
    view = Manifest({"format": FORMAT, "units": entries, "deletions": []})
    assert len(view.units()) == 3
    assert all(e.raw is raw for e, raw in zip(view.units(), entries, strict=True))
    assert view.units()[0].same_object(UnitEntry(entries[0]))  # another view, same object
    assert not view.units()[0].same_object(UnitEntry(dict(entries[0])))


def test_a_damaged_entry_is_refused_not_trusted() -> None:
    good = UnitEntry.build(
        unit_id="evidence:x",
        path="evidence/curated/domain/x.md",
        kind="domain",
        content_hash="a" * 64,
        file_hash="b" * 64,
        provenance=ManualDeclaration("alice", "2030-01-01T00:00:00Z").to_json(),
        review_items=[],
    ).raw
    refused = 0
    for key, bad in (("id", 7), ("file_hash", None), ("provenance", "manual"), ("path", [])):
        entry = UnitEntry({**good, key: bad})
        try:  # read as derive, show and the index read it: the damaged field is refused
            entry.identity(), entry.id, entry.declaration
        except (ValueError, TypeError):
            refused += 1
    assert refused == 4


@settings(max_examples=60)
@given(
    IDS,
    ITEMS,
    st.sampled_from(ClosedBy),
    st.none() | TEXT,
)
def test_closed_item_round_trips(
    uid: str, item: dict[str, Any], by: ClosedBy, note: str | None
) -> None:
    closed = ClosedItem(uid, dict(item), by, note if by is ClosedBy.RESOLVED else None)
    value = closed.to_json()
    assert ("note" in value) == (by is ClosedBy.RESOLVED)  # the bytes of the old dicts
    assert type(value["closed_by"]) is str
    assert ClosedItem.from_json(_through_json(value)) == closed


FILE_CHANGES = st.builds(FileChange, path=PATHS, pre=st.none() | HEX, post=st.none() | HEX)


@settings(max_examples=60)
@given(
    st.builds(
        JournalEntry,
        op=st.sampled_from(["save", "remove", "restore", "decide"]),
        actor=TEXT,
        at=WHEN,
        files=st.lists(FILE_CHANGES, max_size=3).map(tuple),
        staged=st.builds(
            staging.declaration_change,
            IDS,
            HEX,
            DECLARATIONS.map(lambda d: d.to_json()),
        ),
        extra=st.dictionaries(st.sampled_from(["source_id", "comparison"]), TEXT, max_size=2),
    )
)
def test_journal_entry_round_trips(entry: JournalEntry) -> None:
    value = entry.to_json()
    assert JournalEntry.from_json(_through_json(value)) == entry
    shown = Interrupted("x.json", entry, ("a.md",)).to_json()
    assert shown["files"] == value["files"] and shown["conflicts"] == ["a.md"]


@settings(max_examples=60)
@given(IDS, HEX, HEX, DECLARATIONS, st.lists(ITEMS, max_size=3), TEXT)
def test_staged_changes_read_back_through_the_accessors(
    uid: str,
    content_hash: str,
    other_hash: str,
    decl: ManualDeclaration | DocumentDeclaration,
    items: list[dict[str, Any]],
    actor: str,
) -> None:
    """What a change stages is what derive reads back, bound to its exact content hash."""
    prov = decl.to_json()
    staged = staging.empty()
    for change in (
        staging.declaration_change(uid, content_hash, prov),
        staging.retirement_change(uid, DeletionReason.RETIRED.value, actor),
        {"review_items": {uid: items}},
        staging.resolution_change(uid, "ok", actor, "2030-01-01T00:00:00Z", [("a", "b", "c")]),
    ):
        staged = staging.merge(staged, _through_json(change))
    staged = _through_json(staged)  # as staged.json holds it
    assert staging.declared_ids(staged) == [uid]
    assert staging.declaration_for(staged, uid, content_hash) == prov
    assert (
        staging.declaration_for(staged, uid, other_hash if other_hash != content_hash else None)
        is None
    )
    assert staging.is_retiring(staged, uid)
    assert staging.retirement(staged, uid) == (actor, DeletionReason.RETIRED.value)
    assert staging.raised_items(staged, uid) == [
        i for n, i in enumerate(items) if i not in items[:n]
    ]
    assert staging.resolution(staged, uid) == ({("a", "b", "c")}, "ok")

    restored = staging.merge(staged, staging.restoration_change(uid, content_hash, prov, "f" * 64))
    record = staging.restoration(restored, uid)
    assert record is not None and staging.restored_provenance(record, content_hash) == prov
    assert not staging.is_retiring(restored, uid)  # a restore undoes the retirement
