"""What migration carries into the baseline survives its JSON form, and a carried manual
declaration is a manifest declaration (manifest-records.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_tool.migrate.provenance import Carried, CarriedDeclaration, CarriedItem
from evidence_tool.migrate.run import MigrationResult, MigrationStatus

_RECORDS = json.loads(
    (Path(__file__).parents[2] / "evidence_tool/schemas/manifest-records.schema.json").read_text()
)
_DECLARATION = jsonschema.Draft202012Validator(
    {"$ref": "#/$defs/declaration", "$defs": _RECORDS["$defs"]}
)

texts = st.text(min_size=1, max_size=12)
hashes = st.text("0123456789abcdef", min_size=64, max_size=64)
times = st.datetimes().map(lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ"))
manual = st.fixed_dictionaries({"kind": st.just("manual"), "curator": texts, "declared_at": times})
declarations = st.builds(CarriedDeclaration, hashes, manual)
items = st.builds(CarriedItem, texts, texts, texts, times, hashes)


@settings(max_examples=60)
@given(declarations)
def test_a_carried_declaration_round_trips_and_is_a_manifest_declaration(
    decl: CarriedDeclaration,
) -> None:
    data = json.loads(json.dumps(decl.to_json()))
    assert CarriedDeclaration.from_json(data) == decl
    assert decl.kind == "manual"
    _DECLARATION.validate(data["provenance"])


@settings(max_examples=60)
@given(items)
def test_a_carried_review_item_round_trips(item: CarriedItem) -> None:
    data = json.loads(json.dumps(item.to_json()))
    assert CarriedItem.from_json(data) == item
    assert list(data) == ["code", "message", "raised_by", "raised_at", "content_hash"]


@settings(max_examples=30)
@given(
    st.dictionaries(texts, declarations, max_size=3),
    st.dictionaries(texts, st.lists(items, max_size=2), max_size=3),
)
def test_the_staged_change_holds_every_carried_record(
    decls: dict[str, CarriedDeclaration], raised: dict[str, list[CarriedItem]]
) -> None:
    staged = Carried(decls, raised).staged_change()
    assert set(staged) == {"declarations", "review_items"}
    back = json.loads(json.dumps(staged))
    assert {u: CarriedDeclaration.from_json(d) for u, d in back["declarations"].items()} == decls
    assert {
        u: [CarriedItem.from_json(i) for i in v] for u, v in back["review_items"].items()
    } == raised


def test_a_migration_status_prints_as_its_plain_value() -> None:
    result = MigrationResult(MigrationStatus.NOTHING_TO_MIGRATE, True)
    assert json.dumps(result.to_json()["status"]) == '"nothing_to_migrate"'
    assert result.lines() == ["nothing to migrate: no evidence/manifest.yaml"]
    assert [str(s) for s in MigrationStatus] == [
        "migrated", "finished", "would_migrate", "would_finish", "nothing_to_migrate",
    ]  # fmt: skip
