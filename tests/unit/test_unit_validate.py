"""validate(unit): a unit built in code is valid iff its canonical text reads back to it."""

from __future__ import annotations

import pytest

from evidence_tool.unit import (
    AppliesTo,
    DomainPayload,
    EnumPayload,
    EnumValue,
    FormulaPayload,
    GlossaryPayload,
    Metadata,
    Payload,
    ReferencePayload,
    Unit,
    validate,
)


def _meta(kind: str = "domain", **changes: object) -> Metadata:
    values: dict[str, object] = {
        "id": "evidence:test:x",
        "kind": kind,
        "language": "en",
        "purposes": ("rewriting",),
    }
    values.update(changes)
    return Metadata(**values)  # type: ignore[arg-type]


def test_a_valid_unit_has_no_diagnostics() -> None:
    assert validate(Unit(_meta(), "Title", DomainPayload("Count rows."))) == []


@pytest.mark.parametrize(
    "unit, code, fragment",
    [
        (Unit(_meta(id="evidence:Bad"), "T", DomainPayload("x")), "E122", "evidence:Bad"),
        (Unit(_meta(purposes=()), "T", DomainPayload("x")), "E106", "at least 1"),
        (Unit(_meta(language="EN"), "T", DomainPayload("x")), "E106", "language"),
        (
            Unit(_meta(applies_to=AppliesTo(tables=("wards",))), "T", DomainPayload("x")),
            "E106",
            "'wards'",
        ),
        (Unit(_meta(), "", DomainPayload("x")), "E110", "one nonempty line"),
        (Unit(_meta(), "Channel #", DomainPayload("x")), "E114", "its title"),
        (Unit(_meta(), "T", DomainPayload("")), "E113", "is empty"),
        (Unit(_meta(), "T", DomainPayload("a\n\n## Rule\n\nb")), "E112", "duplicate field"),
        (Unit(_meta(), "T", DomainPayload("a\n\n# Second")), "E110", "second title"),
        (Unit(_meta(), "T", DomainPayload("```\nopen")), "E114", "never closed"),
        (Unit(_meta(), "T", DomainPayload("\nleading blank line")), "E114", "field 'rule'"),
        (
            Unit(_meta("enum"), "T", EnumPayload("s.t.c", (EnumValue("a"), EnumValue("a")))),
            "E114",
            "appears twice",
        ),
        (Unit(_meta("enum"), "T", EnumPayload("s.t.c", ())), "E114", "at least one"),
        (
            Unit(_meta("formula"), "T", FormulaPayload("c", "a, b")),
            "E115",
            "2 expressions",
        ),
        (
            Unit(_meta("reference"), "T", ReferencePayload("ftp://x.org", "l", "d")),
            "E116",
            "ftp://x.org",
        ),
        (Unit(_meta("glossary"), "T", DomainPayload("x")), "E114", "cannot be rendered"),
    ],
    ids=[
        "invalid id",
        "no purposes",
        "invalid language",
        "invalid applies_to table",
        "empty title",
        "title ending in ' #'",
        "empty text field",
        "text holding a field heading",
        "text holding a title",
        "text ending in an open fence",
        "text with a leading blank line",
        "duplicate enum value",
        "enum without values",
        "formula with two expressions",
        "ftp reference",
        "payload of another kind",
    ],
)
def test_an_invalid_unit_built_in_code_is_reported_not_raised(
    unit: Unit, code: str, fragment: str
) -> None:
    diagnostics = validate(unit)

    assert {d.code for d in diagnostics} == {code}
    assert any(fragment in d.message for d in diagnostics), diagnostics


def test_list_values_must_be_tuples_to_compare_equal() -> None:
    payload: Payload = GlossaryPayload("d", synonyms=["a"])  # type: ignore[arg-type]
    [diagnostic] = validate(Unit(_meta("glossary"), "T", payload))
    assert "field 'synonyms'" in diagnostic.message
