"""Every record of the source registry survives its JSON: ``from_json(to_json(x)) == x``,
the registry through the very bytes sources.json holds, and the refiner's request and
response validate against their schemas (schemas/refiner-*.schema.json)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from evidence_tool.archive.local import ConsolidateStatus
from evidence_tool.errors import IntegrityError
from evidence_tool.record import UNSET
from evidence_tool.sources import store
from evidence_tool.sources.records import (
    Comparison,
    CurrentUnit,
    Decision,
    DecisionProgress,
    DecisionValue,
    DocumentFacts,
    Dropped,
    DropReason,
    Identifier,
    NotImportedItem,
    ProposedEntry,
    RecordError,
    Registry,
    Retraction,
    ReviewItem,
    SourceKind,
    SourceRecord,
    SourceStatus,
)
from evidence_tool.sources.refiner import (
    RefinerRequest,
    RefinerResponse,
    RequestUnit,
    ResponseItem,
    ResponseUnit,
)
from evidence_tool.unit.schemas import load_schema
from evidence_tool.workspace.layout import Layout

text = st.text(max_size=12)
hashes = st.text("0123456789abcdef", min_size=64, max_size=64)
maybe = st.none() | text
ids = st.lists(text, max_size=3).map(tuple)

identifiers = st.builds(
    Identifier, st.sampled_from(["doi", "url", "isbn", "issn", "arxiv", "urn"]), text
)
documents = st.builds(DocumentFacts, maybe, st.none() | identifiers)
review_items = st.builds(ReviewItem, text, text, maybe)
not_imported = st.builds(NotImportedItem, text, text, maybe)
provenance = st.fixed_dictionaries({"kind": st.sampled_from(["document", "manual"]), "by": text})
current_units = st.builds(CurrentUnit, text, text, hashes, hashes, provenance)
proposed = st.builds(ProposedEntry, text, text, text, hashes, text, ids)
dropped = st.builds(Dropped, text, st.sampled_from(list(DropReason)))
extras = st.fixed_dictionaries(
    {
        "not_imported": st.lists(not_imported, max_size=2).map(tuple),
        "skipped": st.dictionaries(text, st.integers(0, 10**6), max_size=2),
    }
)
plain_comparisons = st.builds(
    Comparison,
    revision=hashes,
    created_at=text,
    source_id=hashes,
    locator=text,
    content_hash=hashes,
    acquisition=hashes,
    base_hash=st.none() | hashes,
    document=documents,
    current=st.lists(current_units, max_size=2).map(tuple),
    proposed=st.lists(proposed, max_size=2).map(tuple),
    review_items=st.lists(review_items, max_size=2).map(tuple),
    retire=ids,
    dropped=st.lists(dropped, max_size=2).map(tuple),
    affected_files=st.dictionaries(text, st.none() | hashes, max_size=3),
)
# an import source's comparison also lists what it did not import, and what it skipped
comparisons = st.tuples(plain_comparisons, st.none() | extras).map(
    lambda ce: ce[0] if ce[1] is None else replace(ce[0], **ce[1])
)
decisions = st.builds(
    Decision,
    st.sampled_from(list(DecisionValue)),
    hashes,
    hashes,
    text,
    text,
    st.sampled_from([DecisionProgress.SAVED, *ConsolidateStatus]),
    ids,
    ids,
)
# a consolidated decision: how far it got
decisions = st.tuples(decisions, st.none() | st.tuples(hashes, maybe)).map(
    lambda do: (
        do[0] if do[1] is None else replace(do[0], snapshot=do[1][0], activation_error=do[1][1])
    )
)
retractions = st.builds(Retraction, text, text, text)
records = st.builds(
    SourceRecord,
    source_id=hashes,
    locator=text,
    kind=st.sampled_from(list(SourceKind)),
    first_seen_at=text,
    status=st.sampled_from([SourceStatus.ACTIVE, SourceStatus.MISSING]),
    last_hash=st.none() | hashes,
    title=maybe,
    identifier=st.none() | identifiers,
    adopted_hash=st.none() | hashes,
    acknowledged_hash=st.none() | hashes,
    comparison=st.none() | comparisons,
    decision=st.none() | decisions,
    retraction=st.none() | retractions,
    missing_since=st.just(UNSET) | text,
)
registries = st.lists(records, max_size=3).map(lambda rs: Registry({r.source_id: r for r in rs}))

FAMILIES: list[tuple[str, Any, Any]] = [
    ("review item", review_items, ReviewItem),
    ("not imported", not_imported, NotImportedItem),
    ("document", documents, DocumentFacts),
    ("current unit", current_units, CurrentUnit),
    ("proposed", proposed, ProposedEntry),
    ("dropped", dropped, Dropped),
    ("comparison", comparisons, Comparison),
    ("decision", decisions, Decision),
    ("retraction", retractions, Retraction),
    ("source", records, SourceRecord),
]


@pytest.mark.parametrize(("family", "strategy", "cls"), FAMILIES, ids=[f[0] for f in FAMILIES])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_each_record_comes_back_from_its_json(
    family: str, strategy: Any, cls: Any, data: st.DataObject
) -> None:
    value = data.draw(strategy)
    as_json = json.loads(json.dumps(value.to_json()))  # through real JSON text
    assert cls.from_json(as_json) == value, family


@settings(max_examples=30, deadline=None)
@given(registries)
def test_the_registry_comes_back_from_the_bytes_sources_json_holds(registry: Registry) -> None:
    rendered = store.render(registry)
    assert Registry.from_json(json.loads(rendered)) == registry
    assert store.render(Registry.from_json(json.loads(rendered))) == rendered


@settings(max_examples=40, deadline=None)
@given(
    st.builds(
        RefinerRequest,
        hashes,
        text,
        st.sampled_from(["fs", "http", "s3"]),
        hashes,
        text,
        text,
        documents,
        st.lists(st.builds(RequestUnit, text, text, text), max_size=2).map(tuple),
    )
)
def test_the_refiner_request_validates_and_comes_back(request: RefinerRequest) -> None:
    as_json = request.to_json()
    jsonschema.validate(as_json, load_schema("refiner-request.schema.json"))
    assert RefinerRequest.from_json(json.loads(json.dumps(as_json))) == request


@settings(max_examples=40, deadline=None)
@given(
    st.builds(
        RefinerResponse,
        st.lists(
            st.builds(
                ResponseUnit,
                st.text(min_size=1, max_size=20),
                st.lists(st.text(min_size=1, max_size=8), max_size=2).map(tuple),
            ),
            max_size=3,
        ).map(tuple),
        st.lists(st.builds(ResponseItem, st.text(min_size=1, max_size=10), maybe), max_size=2).map(
            tuple
        ),
    )
)
def test_the_refiner_response_validates_and_comes_back(response: RefinerResponse) -> None:
    as_json = response.to_json()
    jsonschema.validate(as_json, load_schema("refiner-response.schema.json"))
    assert RefinerResponse.from_json(json.loads(json.dumps(as_json))) == response


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda r: r.update(kind="filesystem"), "an unknown kind"),
        (lambda r: r.update(locator=7), "a locator that is not a string"),
        (lambda r: r["comparison"].update(retire="x"), "retire that is not a list"),
        (lambda r: r["decision"].update(decision="maybe"), "an unknown decision"),
        (lambda r: r.pop("first_seen_at"), "a missing key"),
    ],
)
def test_a_hand_edited_registry_is_refused_with_integrity_error(
    tmp_path: Any, edit: Any, why: str
) -> None:
    """A malformed record is E-coded (restore from Git), never a crash (exit 70)."""
    sample = SourceRecord(
        "a" * 64,
        "fs:evidence/source/x.md",
        SourceKind.FS,
        "2026-01-01T00:00:00Z",
        comparison=Comparison(
            "b" * 64,
            "t",
            "a" * 64,
            "fs:x",
            "c" * 64,
            "d" * 64,
            None,
            DocumentFacts(),
            (),
            (),
            (),
            (),
            (),
            {},
        ),
        decision=Decision(
            DecisionValue.KEEP, "b" * 64, "c" * 64, "alice", "t", DecisionProgress.SAVED, ()
        ),
    )
    value = Registry({sample.source_id: sample}).to_json()
    sources = value["sources"]
    assert isinstance(sources, dict)
    edit(sources["a" * 64])
    layout = Layout(tmp_path)
    layout.sources_json.parent.mkdir(parents=True)
    layout.sources_json.write_text(json.dumps(value), "utf-8")
    with pytest.raises(RecordError):
        Registry.from_json(value)
    with pytest.raises(IntegrityError, match="restore it from Git"):
        store.read(layout)
