"""Property: any legacy value either converts exactly or is refused naming its field; list
values and enum stored values, written as JSON strings in v4, always convert."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from evidence_tool.migrate.convert import convert
from evidence_tool.migrate.legacy import LegacyUnit
from evidence_tool.migrate.reading import ManifestUnit
from evidence_tool.unit import parse
from evidence_tool.unit.yaml_strict import YamlDoc

# Any Unicode text a YAML file can hold (no lone surrogates).
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


def legacy(kind: str, title: str, payload: dict[str, Any]) -> LegacyUnit:
    entry = ManifestUnit("evidence:p", f"evidence/units/{kind}/p.yaml", 1, None)
    metadata = {"id": "evidence:p", "kind": kind, "language": "en", "purposes": ["rewriting"]}
    return LegacyUnit(entry, 1, entry.path, "p", b"", YamlDoc({}), metadata, title, payload)


@settings(max_examples=300, deadline=None)
@given(title=texts, definition=texts, synonyms=st.lists(texts, max_size=5))
@example(title="T", definition="d", synonyms=["\x00"])  # was rendered raw: a NUL in the file
def test_glossary_converts_exactly_or_names_the_field(
    title: str, definition: str, synonyms: list[str]
) -> None:
    result = convert(legacy("glossary", title, {"definition": definition, "synonyms": synonyms}))
    if isinstance(result, list):
        fields = {p.field for p in result}
        assert fields <= {"title", "payload.definition"} | {
            f"payload.synonyms[{i}]" for i in range(len(synonyms))
        }
        if len(set(synonyms)) == len(synonyms):
            assert not any(f.startswith("payload.synonyms") for f in fields)
        return
    back = parse(result.text)
    assert back == result.unit
    assert back.title == title
    assert back.payload.to_json()["definition"] == definition.rstrip("\n")
    assert list(back.payload.to_json()["synonyms"]) == synonyms


@settings(max_examples=200, deadline=None)
@given(values=st.lists(texts, min_size=1, max_size=5, unique=True), concept=texts)
def test_enum_stored_values_and_line_values_always_convert(values: list[str], concept: str) -> None:
    enum = legacy("enum", "Codes", {"column": "s.t.c", "values": [{"value": v} for v in values]})
    result = convert(enum)
    assert not isinstance(result, list), result
    assert [v.value for v in parse(result.text).payload.values] == values  # type: ignore[attr-defined]
    mapping = legacy("mapping", "M", {"concept": concept, "tables": ["s.t"]})
    result = convert(mapping)
    assert not isinstance(result, list), result
    assert parse(result.text).payload.concept == concept  # type: ignore[attr-defined]
