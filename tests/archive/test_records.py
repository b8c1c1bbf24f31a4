"""The typed manifest records: to_json/from_json round trips, checked against the schema.

Property tests draw records of every shape (with and without ``original``, migrated
document declarations with who/when, deletions with and without a source); a real
archive's manifests then prove the records read back exactly what consolidate writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
from archive_helpers import ACTOR, UNIT, UNIT_PATH, edit_visibly, stage_document
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_tool.archive.local import ConsolidateStatus, LocalEvidenceArchive
from evidence_tool.archive.records import (
    Deletion,
    DeletionReason,
    DocumentDeclaration,
    ManualDeclaration,
    declaration_from_json,
)
from evidence_tool.unit.schemas import load_schema

SCHEMA = load_schema("manifest-records.schema.json")
HEX = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
TEXT = st.text(max_size=30)
WHEN = st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))


def _valid(definition: str, value: dict[str, Any]) -> None:
    schema = {**SCHEMA, "$ref": f"#/$defs/{definition}"}
    jsonschema.Draft202012Validator(schema).validate(value)


def _documents(who: bool) -> st.SearchStrategy[DocumentDeclaration]:
    return st.builds(
        DocumentDeclaration,
        source_id=HEX,
        source_path=st.text(min_size=1, max_size=40),
        source_hash=HEX,
        excerpts=st.lists(TEXT, max_size=4).map(tuple),
        declared_at=st.none() | WHEN if who else st.none(),
        actor=st.none() | TEXT if who else st.none(),
    )


MANUALS = st.builds(
    ManualDeclaration,
    curator=TEXT,
    declared_at=WHEN,
    original=st.none() | _documents(who=False),
)
DELETIONS = st.builds(
    Deletion,
    id=st.from_regex(r"evidence:[a-z0-9._-]{1,20}", fullmatch=True),
    deleted_at=WHEN,
    last_revision=HEX,
    actor=TEXT,
    reason=st.sampled_from(DeletionReason),
    last_content_hash=HEX,
    source_id=st.none() | HEX,
)


@settings(max_examples=60)
@given(MANUALS | _documents(who=True))
def test_declaration_round_trips_and_matches_the_schema(
    decl: ManualDeclaration | DocumentDeclaration,
) -> None:
    value = decl.to_json()
    _valid("declaration", value)
    assert declaration_from_json(value) == decl
    assert type(value["kind"]) is str  # not an enum member: the YAML fast path needs str


@settings(max_examples=60)
@given(DELETIONS)
def test_deletion_round_trips_and_matches_the_schema(deletion: Deletion) -> None:
    value = deletion.to_json()
    _valid("deletion", value)
    assert Deletion.from_json(value) == deletion
    assert type(value["reason"]) is str


@given(_documents(who=True))
def test_lineage_drops_who_and_when(decl: DocumentDeclaration) -> None:
    value = decl.lineage().to_json()
    _valid("lineage", value)
    assert set(value) == {"kind", "source_id", "source_path", "source_hash", "excerpts"}


def test_unknown_declaration_kind_is_refused() -> None:
    try:
        declaration_from_json({"kind": "hearsay"})
    except ValueError as exc:
        assert "hearsay" in str(exc)
    else:
        raise AssertionError("an unknown kind was read as a declaration")


def test_real_manifests_read_back_exactly(consolidated: Path) -> None:
    """Document, manual-with-original and sourced deletion, as consolidate writes them."""
    stage_document(consolidated)
    archive = LocalEvidenceArchive(consolidated)
    revisions = [archive.consolidate(ACTOR).revision]  # UNIT: document
    edit_visibly(consolidated / UNIT_PATH)
    revisions.append(archive.consolidate(ACTOR).revision)  # manual, the document as original
    (consolidated / UNIT_PATH).unlink()
    revisions.append(archive.consolidate("bob").revision)  # deleted, its source recorded
    assert len(set(revisions)) == 3

    seen: dict[str, int] = {"document": 0, "original": 0, "manual": 0, "deletion": 0}
    for revision in revisions:
        snapshot = archive.snapshot(revision)
        for unit in snapshot.manifest["units"]:
            value = unit["provenance"]
            _valid("declaration", value)
            assert declaration_from_json(value).to_json() == value
            seen[value["kind"]] += 1
            seen["original"] += "original" in value
        for record in snapshot.view.deletion_objects():
            _valid("deletion", record)
            assert Deletion.from_json(record).to_json() == record
            seen["deletion"] += record["source_id"] is not None
    assert seen["document"] >= 1 and seen["original"] >= 1 and seen["deletion"] >= 1, seen
    assert seen["manual"] > seen["original"], seen
    newest = archive.newest_snapshot()
    assert newest is not None and newest.entry(UNIT) is None


def test_consolidate_status_is_an_enum_written_as_plain_text(consolidated: Path) -> None:
    archive = LocalEvidenceArchive(consolidated)
    edit_visibly(consolidated / UNIT_PATH)
    results = [archive.consolidate(ACTOR, dry_run=True), archive.consolidate(ACTOR)]
    results.append(archive.initialize(ACTOR))
    statuses = [r.status for r in results]
    assert statuses == [
        ConsolidateStatus.WOULD_STAY_PENDING,
        ConsolidateStatus.PENDING_ACTIVATION,
        ConsolidateStatus.ALREADY_INITIALIZED,
    ]
    for result in results:
        value = result.to_json()["status"]
        assert type(value) is str and value == result.status
