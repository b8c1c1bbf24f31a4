"""The publishers as the pure functions they are: a snapshot of typed units in, files out
(no workspace, nothing written)."""

from __future__ import annotations

import json

from yaml_check import load_exactly

from evidence_tool.publish import cortex, dbt, vanna, wrenai
from evidence_tool.publish.model import Entry, Snapshot
from evidence_tool.unit import (
    AppliesTo,
    ExamplePayload,
    GlossaryPayload,
    Metadata,
    Payload,
    Unit,
)

REV = "ab" * 32


def unit(uid: str, title: str, payload: Payload, **applies: tuple[str, ...]) -> Unit:
    meta = Metadata(uid, payload.kind, "en", ("sql_generation",), AppliesTo(**applies))
    return Unit(meta, title, payload)


def snap(*units: Unit, when: str | None = "2026-01-02T03:04:05Z") -> Snapshot:
    entries = tuple(Entry(u, "ada", when) for u in sorted(units, key=lambda u: u.id))
    return Snapshot("ward-ops", REV, entries)


def test_an_example_without_sql_is_listed_never_dropped() -> None:
    prose = unit("evidence:t:q", "Q", ExamplePayload("How many?", "Count them by hand."))
    for publisher in (vanna.publish, wrenai.publish):
        out = publisher(snap(prose))
        assert [n.unit_id for n in out.not_exported] == ["evidence:t:q"]
        assert "fenced sql" in out.not_exported[0].reason
        assert out.exported == []


def test_verified_query_provenance_is_the_curator_and_epoch_seconds() -> None:
    q = unit(
        "evidence:t:q",
        "Beds",
        ExamplePayload("How many beds?", "```sql\nSELECT count(*) FROM admin.beds\n```"),
        tables=("admin.beds",),
    )
    model = load_exactly(cortex.publish(snap(q)).files[""])
    [query] = model["verified_queries"]
    assert query == {
        "name": "Beds",
        "question": "How many beds?",
        "sql": "SELECT count(*) FROM admin.beds",
        "verified_by": "ada",
        "verified_at": 1767323045,  # 2026-01-02T03:04:05Z
    }
    undated = load_exactly(cortex.publish(snap(q, when=None)).files[""])
    assert "verified_at" not in undated["verified_queries"][0]


def test_dbt_docs_block_names_stay_unique_when_two_ids_slug_alike() -> None:
    a = unit("evidence:t:a.b", "A", GlossaryPayload("First."), columns=("s.t.c1",))
    b = unit("evidence:t:a-b", "B", GlossaryPayload("Second."), columns=("s.t.c2",))
    out = dbt.publish(snap(a, b))
    docs = out.files["evidence_docs.md"].decode()
    assert docs.count("{% docs evidence__t_a_b %}") == 1
    assert docs.count("{% docs evidence__t_a_b_2 %}") == 1
    props = load_exactly(out.files["evidence_properties.yml"])
    described = [c["description"] for c in props["models"][0]["columns"]]
    assert sorted(described) == ["{{ doc('evidence__t_a_b') }}", "{{ doc('evidence__t_a_b_2') }}"]


def test_vanna_rows_are_the_training_data_columns_plus_the_revision() -> None:
    q = unit("evidence:t:q", "Q", ExamplePayload("How many?", "Note.\n\n```sql\nSELECT 1\n```"))
    g = unit("evidence:t:g", "Ward", GlossaryPayload("A unit of beds.", ("reparto",)))
    rows = [json.loads(line) for line in vanna.publish(snap(q, g)).files[""].splitlines()]
    assert rows == [
        {
            "content": "Ward: A unit of beds.\n\nAlso called: reparto.",
            "id": "evidence:t:g",
            "question": None,
            "revision": REV,
            "training_data_type": "documentation",
        },
        {
            "content": "SELECT 1",
            "id": "evidence:t:q",
            "question": "How many?",
            "revision": REV,
            "training_data_type": "sql",
        },
    ]
