"""``cited_sources`` reads a manifest provenance object without building its record
(refresh reads every unit's); it must agree with the typed declarations."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evidence_tool.archive.records import (
    CitedSources,
    DocumentDeclaration,
    ManualDeclaration,
    cited_sources,
)
from evidence_tool.sources.compare import cites

SID = st.text(alphabet="0123456789abcdef", min_size=8, max_size=64)
DOC = st.builds(
    DocumentDeclaration,
    source_id=SID,
    source_path=st.from_regex(r"evidence/sources/[a-z]{1,8}\.md", fullmatch=True),
    source_hash=SID,
    excerpts=st.lists(st.text(max_size=12), max_size=3).map(tuple),
)
MANUAL = st.builds(
    ManualDeclaration,
    curator=st.text(min_size=1, max_size=12),
    declared_at=st.just("2026-01-02T03:04:05Z"),
    original=st.none() | DOC,
)


@given(st.one_of(DOC, MANUAL), SID)
def test_cited_sources_agree_with_the_typed_declaration(
    decl: DocumentDeclaration | ManualDeclaration, other: str
) -> None:
    found = cited_sources(decl.to_json())
    if isinstance(decl, DocumentDeclaration):
        assert found == CitedSources(decl.source_id, None)
    else:
        assert found == CitedSources(None, decl.original.source_id if decl.original else None)
    named = {s for s in (found.source, found.original) if s}
    for sid in (*named, other):
        assert cites(decl.to_json(), sid) == (sid in named)


def test_a_broken_object_cites_nothing() -> None:
    for broken in ({}, {"kind": "document"}, {"kind": "manual", "original": "x"}, {"source_id": 5}):
        assert cited_sources(broken) == CitedSources(None, None)  # type: ignore[arg-type]
    assert not cites(None, "abc") and not cites({}, "abc")
