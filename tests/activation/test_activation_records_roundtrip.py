"""Issue 18: each activation record survives its JSON pair, and its JSON is what the
schemas and the --json envelope expect (hypothesis, plus the records of a real index)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from evidence_tool.activation.citations import CitationCheck, CitationFlag, Flag, classify
from evidence_tool.activation.drift import IndexDrift
from evidence_tool.activation.reader import open_active_corpus
from evidence_tool.activation.records import Hit, IndexRecord, Scoring, SearchResult
from evidence_tool.activation.settings import ActivationSettings
from evidence_tool.activation.sqlite_index import Filters, search
from evidence_tool.errors import EvidenceWarning
from evidence_tool.workspace.layout import Layout

SCHEMAS = Path(__file__).resolve().parents[2] / "evidence_tool" / "schemas"
words = st.text(min_size=1, max_size=8)
ids = st.from_regex(r"evidence:[a-z]{1,6}:[a-z-]{1,10}", fullmatch=True)
scores = st.floats(min_value=0, max_value=1e6, allow_nan=False)
maybe = st.none() | scores

records = st.builds(
    lambda uid, kind, lang, title, purposes, tables, rev, prov: IndexRecord(
        {
            "revision": rev,
            "id": uid,
            "path": f"evidence/curated/{kind}/{title}.md",
            "kind": kind,
            "language": lang,
            "title": title,
            "metadata": {"purposes": purposes, "applies_to": {"tables": tables}},
            "payload": {"rule": title},
            "content_hash": "a" * 64,
            "file_hash": "b" * 64,
            "provenance": {"kind": prov} if prov else None,
            "provenance_kind": prov,
            "review_items": [],
        }
    ),
    ids,
    st.sampled_from(["formula", "rule", "glossary"]),
    st.sampled_from(["en", "it"]),
    words,
    st.lists(words, max_size=3),
    st.lists(words, max_size=3),
    st.none() | st.just("c" * 64),
    st.none() | st.sampled_from(["manual", "document"]),
)


@st.composite
def hits(draw: Any) -> Hit:
    record = draw(records)
    scoring = draw(st.sampled_from(Scoring))
    bm25 = (
        draw(maybe if scoring is Scoring.FUSED else scores)
        if scoring is not Scoring.POINT
        else None
    )
    dense = draw(maybe) if scoring is Scoring.FUSED else None
    matched = draw(st.lists(st.sampled_from(["title", "rule", "applies_to.tables"]), max_size=3))
    return Hit.of(record, draw(scores), matched, scoring, bm25, dense)


warnings = st.builds(EvidenceWarning, words, st.none(), st.none(), st.just("W702"))


@st.composite
def results(draw: Any) -> SearchResult:
    found = tuple(draw(st.lists(hits(), max_size=4)))
    head = (draw(words), draw(words), draw(st.sampled_from(["bm25", "dense", "hybrid"])), found)
    if draw(st.booleans()):  # qdrant: no rankings, dense path or warnings
        return SearchResult(*head)
    rankings = tuple(draw(st.lists(st.sampled_from(["bm25", "dense"]), max_size=2, unique=True)))
    path = draw(st.none() | st.sampled_from(["vec", "python"]))
    return SearchResult(*head, rankings, path, tuple(draw(st.lists(warnings, max_size=2))))


@given(records)
def test_index_record_round_trips_and_reads_its_fields(record: IndexRecord) -> None:
    raw = record.to_json()
    assert IndexRecord(json.loads(json.dumps(raw))) == record
    assert (record.id, record.title, record.kind) == (raw["id"], raw["title"], raw["kind"])
    assert "revision" not in record.stored() and len(record.stored()) == len(raw) - 1


HEAD = ["id", "kind", "language", "title", "score"]
TAIL = ["matched", "path", "provenance", "purposes", "record"]


@given(hits())
def test_hit_writes_the_keys_its_scoring_has(hit: Hit) -> None:
    """The search's --json hit; read back by hosts, not by the library (no decoder)."""
    raw = json.loads(json.dumps(hit.to_json()))
    keys = {
        Scoring.POINT: [*HEAD, *TAIL],
        Scoring.BM25: [*HEAD, "bm25", *TAIL],
        Scoring.FUSED: [*HEAD, "bm25", *TAIL, "dense"],
    }[hit.scoring]
    assert list(raw) == keys
    assert [raw[k] for k in HEAD] == [hit.id, hit.kind, hit.language, hit.title, hit.score]
    assert raw["record"] == hit.record.to_json() and raw["purposes"] == list(hit.purposes)
    assert raw.get("bm25") == hit.bm25 and raw.get("dense") == hit.dense


@settings(max_examples=50)
@given(results())
def test_search_result_writes_its_hits_and_rankings(result: SearchResult) -> None:
    raw = json.loads(json.dumps(result.to_json()))
    assert raw["hits"] == [json.loads(json.dumps(h.to_json())) for h in result.hits]
    assert [raw["revision"], raw["query"], raw["mode"]] == [
        result.revision,
        result.query,
        result.mode,
    ]
    if result.rankings is not None:
        assert (raw["rankings"], raw["dense_path"]) == (list(result.rankings), result.dense_path)
        assert raw["warnings"] == [w.to_dict() for w in result.warnings]
    assert ("warnings" in raw) == (result.rankings is not None)


checks = st.builds(
    CitationCheck,
    st.none() | st.just("d" * 64),
    *[st.lists(ids, max_size=3).map(tuple) for _ in range(4)],
    st.lists(
        st.builds(CitationFlag, ids, st.sampled_from(Flag), st.none() | words), max_size=3
    ).map(tuple),
)


@given(checks)
def test_citation_check_round_trips(check: CitationCheck) -> None:
    raw = json.loads(json.dumps(check.to_json()))
    assert CitationCheck.from_json(raw) == check
    assert raw["ok"] is (not check.ungrounded)


counts = st.integers(min_value=0, max_value=50_000)
drifts = st.builds(
    IndexDrift, words, st.none() | st.just("e" * 64), st.booleans(), note=st.none() | words
) | st.builds(
    IndexDrift,
    words,
    st.none() | st.just("e" * 64),
    st.booleans(),
    counts,
    counts,
    counts,
    st.none() | words,
)


@given(drifts)
def test_index_drift_round_trips(drift: IndexDrift) -> None:
    raw = json.loads(json.dumps(drift.to_json()))
    assert IndexDrift.from_json(raw) == drift
    assert list(raw)[:3] == ["backend", "active", "checked"]


def _activation_schema() -> Any:
    schema = json.loads((SCHEMAS / "installation.schema.json").read_text())

    def find(node: Any) -> Any:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict) and "activation" in props:
                return props["activation"]
            for value in node.values():
                if (found := find(value)) is not None:
                    return found
        return None

    found = find(schema)
    assert found is not None, "the installation schema describes evidence.activation"
    return found


ACTIVATION = Draft202012Validator(_activation_schema())
names = st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)
activations = st.builds(
    ActivationSettings,
    kind=st.sampled_from(["sqlite", "qdrant", "command", "none"]),
    command=st.lists(words, max_size=3).map(tuple),
    timeout_s=st.none() | st.floats(min_value=0.5, max_value=600),
    collection=names,
    url=st.none() | st.just("http://127.0.0.1:6333"),
    path=st.none() | words,
    api_key_env=st.none() | names,
    embedder=st.none()
    | st.from_regex(r"[a-z_][a-z0-9_]{0,8}:[a-z_][a-z0-9_]{0,8}", fullmatch=True),
)


@given(activations)
def test_activation_settings_round_trip_and_validate(typed: ActivationSettings) -> None:
    raw = json.loads(json.dumps(typed.to_json()))
    assert ActivationSettings.from_json(raw) == typed
    assert list(ACTIVATION.iter_errors(raw)) == []


def test_a_real_index_answers_records_that_round_trip(indexed: Path) -> None:
    """Not only generated values: the records, hits and citations of the fixture index."""
    corpus = open_active_corpus(indexed)
    assert len(corpus.records) == 48
    for record in corpus.records:
        assert IndexRecord(json.loads(json.dumps(record.to_json()))) == record
    found = search(Layout.at(indexed), "degenza", Filters(), limit=100)
    assert found.hits and all(h.scoring is Scoring.BM25 for h in found.hits)
    assert (
        json.loads(json.dumps(found.to_json()))["hits"][0]["record"]
        == found.hits[0].record.to_json()
    )
    check = classify_against(indexed, found.ids()[:1], found.ids())
    assert CitationCheck.from_json(check.to_json()) == check and check.ok


def classify_against(root: Path, cited: list[str], retrieved: list[str]) -> CitationCheck:
    from evidence_tool.activation.citations import citation_context
    from evidence_tool.archive.local import LocalEvidenceArchive

    return classify(citation_context(LocalEvidenceArchive(root)), cited, retrieved)
