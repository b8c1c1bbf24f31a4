"""The catalog's records survive their JSON form: fingerprints, changes, drift items,
checked units and the status ``status`` prints."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_tool.catalog.drift import Change, ChangeKind, DriftItem
from evidence_tool.catalog.fingerprint import Fingerprint, RelationPrint, parse_fingerprint
from evidence_tool.catalog.model import Catalog, Column, Relation
from evidence_tool.catalog.review import CatalogStatus, CheckedStatus, CheckedUnit

names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=8)
maybe = st.none() | names
positions = st.none() | st.integers(1, 10**5)
relations = st.builds(
    Relation,
    names,
    names,
    st.sampled_from(["table", "view"]),
    st.lists(st.builds(Column, names, names), max_size=4).map(tuple),
)
changes = st.builds(Change, st.sampled_from(list(ChangeKind)), names, maybe, maybe, maybe, maybe)
items = st.builds(DriftItem, names, names, positions, positions, changes, names)
units = st.builds(CheckedUnit, names, st.none() | names, st.lists(names, max_size=3).map(tuple))


@settings(max_examples=50)
@given(st.lists(relations, max_size=5), st.lists(names, min_size=1, max_size=3).map(tuple))
def test_a_fingerprint_parses_back_to_itself_with_its_digest(
    rels: list[Relation], search: tuple[str, ...]
) -> None:
    fp = Fingerprint.of(Catalog("ddl", tuple(rels), search))
    again = parse_fingerprint(fp.data)
    assert again == fp and again.digest == fp.digest
    assert Fingerprint.of(again.catalog()).digest == fp.digest


def test_a_fingerprint_written_without_schema_and_name_keeps_its_bytes() -> None:
    old = {"kind": "table", "columns": [["id", "bigint"]], "hash": "ab" * 32}
    data = {"format": 1, "kind": "ddl", "search_path": ["s"], "fold_case": True}
    fp = parse_fingerprint(json.dumps({**data, "relations": {"s.t": old}}).encode())
    assert fp.relations["s.t"] == RelationPrint(
        kind="table", columns=(("id", "bigint"),), hash="ab" * 32
    )
    assert fp.to_json()["relations"] == {"s.t": old}
    assert fp.relations["s.t"].names("s.t") == ("s", "t")


@settings(max_examples=80)
@given(changes)
def test_a_change_round_trips(change: Change) -> None:
    data = json.loads(json.dumps(change.to_json()))
    assert Change.from_json(data) == change
    assert set(data) <= {"change", "relation", "column", "old", "new", "renamed_to"}


@settings(max_examples=80)
@given(items)
def test_a_drift_item_round_trips_and_stays_an_e191_review_item(item: DriftItem) -> None:
    data = json.loads(json.dumps(item.to_json()))
    assert DriftItem.from_json(data) == item
    assert data["code"] == "E191" and data["raised_by"] == "catalog"
    assert item.diagnostic("u1").code == "E191"


@settings(max_examples=50)
@given(units)
def test_a_checked_unit_round_trips(unit: CheckedUnit) -> None:
    assert CheckedUnit.from_json(json.loads(json.dumps(unit.to_json()))) == unit


def test_status_without_a_run_prints_only_checked_and_items() -> None:
    assert CatalogStatus(False, {}).to_json() == {"checked": False, "review_items": {}}
    shown = CheckedStatus(True, {"u": [{"code": "E191"}]}, changes=2).to_json()
    assert list(shown) == [
        "checked", "checked_at", "fingerprint", "base", "note", "changes", "review_items",
        "deleted_since", "edited_since",
    ]  # fmt: skip


def test_the_parse_tree_view_reads_what_postgresql_leaves_out_as_empty() -> None:
    from pglast import parser

    from evidence_tool.catalog.pgtree import Node
    from evidence_tool.catalog.statements import DdlState, apply_statement

    sql = (
        "CREATE TABLE s.t (id int4, at timestamptz(3), tags text[]);"
        "CREATE VIEW s.v (ident) AS WITH w AS (SELECT id, tags FROM s.t) SELECT * FROM w;"
        "ALTER TABLE s.t RENAME COLUMN tags TO labels;"
        "DROP VIEW IF EXISTS s.gone;"
    )
    state = DdlState(("s",))
    tree = Node(json.loads(parser.parse_sql_json(sql)))
    problems = [apply_statement(stmt["stmt"], state) for stmt in tree.nodes("stmts")]
    assert problems == [None, None, None, None]
    table, view = state.relations[("s", "t")], state.relations[("s", "v")]
    assert [(c.name, c.type) for c in table.columns] == [
        ("id", "integer"),
        ("at", "timestamp(3) with time zone"),
        ("labels", "text[]"),
    ]
    assert [c.name for c in view.columns] == ["ident", "tags"]
    missing = Node({"a": 1})
    assert missing["b"]["c"].raw is None and missing.nodes("b") == [] and not missing.flag("b")
    assert missing.text("b", "dflt") == "dflt" and missing.int("a") == 1
