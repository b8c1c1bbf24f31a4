"""The BIRD importer read directly: which unit each element becomes, ids, spans, options."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import bird_fixture as bf
import pytest

from evidence_tool.importers.base import ImportResult
from evidence_tool.importers.bird import BirdImporter
from evidence_tool.importers.formats import importer_for
from evidence_tool.unit import parse, render
from evidence_tool.unit.model import EnumPayload, ExamplePayload, FormulaPayload, GlossaryPayload


def _read(root: Path, **kw: Any) -> ImportResult:
    return BirdImporter().read(bf.source_input(root, **kw))


def _by_id(result: ImportResult) -> dict[str, Any]:
    return {item.unit.id: item for item in result.units}


@pytest.fixture
def bird(tmp_path: Path) -> Path:
    return bf.write(tmp_path / "bird")


def test_every_element_becomes_a_valid_unit_whose_spans_hold_its_bytes(bird: Path) -> None:
    result = _read(bird)
    kinds = Counter(item.unit.kind for item in result.units)
    # 10 questions; 11 described columns; 4 code lists; evidence: 12 distinct named
    # fragments (10 expressions, 2 terms in words), 1 condition on a column.
    assert kinds == {"example": 10, "glossary": 13, "enum": 4, "formula": 10, "domain": 1}
    assert result.review_items == []
    checked = 0
    for item in result.units:
        assert parse(render(item.unit)) == item.unit  # the pipeline would accept it
        for span in item.spans:
            raw = (bird / span.path).read_bytes()
            assert raw[span.start : span.end].decode("utf-8") == span.text
            checked += 1
    assert checked == len(result.units) == 38
    assert importer_for("bird").format == "bird"


def test_question_becomes_example_with_evidence_and_fenced_sql(bird: Path) -> None:
    item = _by_id(_read(bird))["evidence:bird:harbor.q1"]
    payload = item.unit.payload
    assert isinstance(payload, ExamplePayload)
    assert payload.question == "What is the cancellation rate of port calls?"
    assert payload.interpretation == (
        "Evidence: cancellation rate = DIVIDE(COUNT(status = 'C'), COUNT(call_id)) * 100\n\n"
        "```sql\nSELECT CAST(SUM(status = 'C') AS REAL) * 100 / COUNT(call_id) FROM calls\n```"
    )
    # The span is the whole record, braces included.
    assert item.spans[0].text.startswith("{") and item.spans[0].text.endswith("}")
    assert '"question_id": 1' in item.spans[0].text


def test_named_expression_is_a_formula_in_postgres_quoting(bird: Path) -> None:
    units = _by_id(_read(bird))
    flag = units["evidence:bird:harbor:term.liberian-flag"]
    assert flag.unit.payload == FormulaPayload(concept="Liberian flag", sql="\"Flag State\" = 'LR'")
    # The span keeps the source's own backquotes: it is the evidence text as written.
    assert flag.spans[0].text == "Liberian flag refers to `Flag State` = 'LR'"
    rate = units["evidence:bird:harbor:term.cancellation-rate"].unit.payload
    assert rate.sql == "DIVIDE(COUNT(status = 'C'), COUNT(call_id)) * 100"
    assert units["evidence:bird:harbor:term.tonnage-in-kilotonnes"].unit.payload.sql == (
        "gross_tonnage / 1000"
    )


def test_definition_in_words_is_glossary_and_column_condition_is_domain(bird: Path) -> None:
    units = _by_id(_read(bird))
    heaviest = units["evidence:bird:harbor:term.heaviest"].unit
    assert heaviest.payload == GlossaryPayload(definition="the largest gross tonnage")
    assert heaviest.metadata.applies_to.concepts == ("heaviest",)
    # 'status = ...' names a described column: a condition, not a formula named "status".
    rules = [u for u in units.values() if u.unit.kind == "domain"]
    assert [r.unit.payload.rule for r in rules] == ["status = 'D'"]
    assert rules[0].unit.id.startswith("evidence:bird:harbor:rule.")


def test_repeated_fragment_is_one_unit_citing_its_first_occurrence(bird: Path) -> None:
    result = _read(bird)
    units = _by_id(result)
    double = units["evidence:bird:harbor:term.double-hull"]
    raw = (bird / "dev.json").read_bytes()
    first = raw.index(b"double-hull refers to")
    assert raw.index(b"double-hull refers to", first + 1) > first  # it does repeat (q2)
    assert [(s.start, s.end) for s in double.spans] == [(first, first + len(double.spans[0].text))]
    cats = [u for u in result.units if u.unit.id == "evidence:bird:clinic:term.cats"]
    assert len(cats) == 1  # q5 and q8 repeat the whole evidence


def test_description_rows_with_bom_crlf_multiline_cells_and_trailing_spaces(bird: Path) -> None:
    units = _by_id(_read(bird))
    flag = units["evidence:bird:harbor.vessels.flag-state"]
    assert flag.unit.payload == GlossaryPayload(
        definition="country whose flag the vessel flies, as\nan ISO code"
    )
    # The trailing space is not part of the name; the capital and space need quotes.
    assert flag.unit.metadata.applies_to.columns == ('harbor.vessels."Flag State"',)
    assert flag.spans[0].text.startswith("Flag State ,flag state,")
    assert flag.spans[0].text.endswith('ISO code",text,')
    vessel = units["evidence:bird:harbor.vessels.vesselid"]
    assert vessel.unit.metadata.applies_to.columns == ('harbor.vessels."VesselId"',)
    # The first row after a BOM header is cited from its own first byte.
    pet = units["evidence:bird:clinic.pets.pet_id"]
    raw = (bird / "clinic/database_description/pets.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and pet.spans[0].start == raw.index(b"pet_id,,")
    weight = units["evidence:bird:clinic.pets.weight_kg"].unit.payload
    assert weight.synonyms == ("weight",)  # the expanded name differs from the column's


def test_code_lists_become_enums_and_notes_stay_definitions(bird: Path) -> None:
    units = _by_id(_read(bird))
    hull = units["evidence:bird:harbor.vessels.hull_kind.values"].unit.payload
    assert isinstance(hull, EnumPayload)
    assert hull.column == "harbor.vessels.hull_kind"
    assert [(v.value, v.meaning) for v in hull.values] == [
        ("S", "single hull"),
        ("D", "double hull"),
        ("X", "unknown"),
    ]
    status = units["evidence:bird:harbor.calls.status.values"].unit.payload
    assert [v.value for v in status.values] == ["A", "D", "C"]
    neutered = units["evidence:bird:clinic.pets.neutered.values"].unit.payload
    assert [(v.value, v.meaning) for v in neutered.values] == [("0", "N"), ("1", "Y")]
    # 'unit: metric tonnes' and a commonsense note are not code lists...
    assert "evidence:bird:harbor.vessels.gross_tonnage.values" not in units
    assert "evidence:bird:harbor.calls.berth_hours.values" not in units
    # ...but are kept in the column's definition.
    tonnage = units["evidence:bird:harbor.vessels.gross_tonnage"].unit.payload
    assert tonnage.definition == "Gross Tonnage\n\nValues: unit: metric tonnes"


def test_schemas_option_maps_a_database_to_its_schema(bird: Path) -> None:
    units = _by_id(_read(bird, options={"schemas": {"harbor": "Port Ops", "clinic": "vet"}}))
    hull = units["evidence:bird:harbor.vessels.hull_kind.values"].unit
    assert hull.payload.column == '"Port Ops".vessels.hull_kind'
    assert hull.metadata.applies_to.tables == ('"Port Ops".vessels',)
    assert units["evidence:bird:clinic.pets.species"].unit.metadata.applies_to.columns == (
        "vet.pets.species",
    )
    assert parse(render(hull)) == hull


def test_difficulty_and_data_format_are_listed_as_not_imported(bird: Path) -> None:
    listed = {(n.element, n.what) for n in _read(bird).not_imported}
    assert listed == {
        ("BIRD harbor questions (5)", "difficulty"),
        ("BIRD clinic questions (5)", "difficulty"),
        ("BIRD harbor.vessels column descriptions (4)", "data_format"),
        ("BIRD harbor.calls column descriptions (3)", "data_format"),
        ("BIRD clinic.pets column descriptions (4)", "data_format"),
    }


def test_italian_source_gets_italian_headings_and_labels(bird: Path) -> None:
    units = _by_id(_read(bird, language="it"))
    example = render(units["evidence:bird:clinic.q5"].unit)
    assert "## Domanda" in example and "## Interpretazione" in example
    assert "Conoscenza esterna: cats refers to species = 1" in example
    enum = render(units["evidence:bird:clinic.pets.species.values"].unit)
    assert "## Colonna" in enum and "## Valori" in enum and "# Valori di pets.species" in enum
    assert "## Definizione" in render(units["evidence:bird:clinic.pets.pet_id"].unit)


def test_fragment_span_is_exact_with_json_escapes_and_non_ascii(tmp_path: Path) -> None:
    question = {
        "question_id": 41,
        "db_id": "harbor",
        "question": 'Ships named "Étoile"?',
        "evidence": "named \"Étoile\" refers to name = 'Étoile'; ✓ café means the on-board bar",
        "SQL": "SELECT * FROM vessels WHERE name = 'Étoile'",
        "difficulty": "simple",
    }
    root = bf.write(tmp_path / "bird", [question])
    # ensure_ascii spells é and ✓ as \u escapes: the span must cite them as written.
    (root / "dev.json").write_text(json.dumps([question], indent=2), encoding="utf-8")
    units = _by_id(_read(root))
    raw = (root / "dev.json").read_bytes()
    named = units["evidence:bird:harbor:term.named-toile"]
    assert named.unit.payload == FormulaPayload(concept='named "Étoile"', sql="name = 'Étoile'")
    span = named.spans[0]
    assert span.text == "named \\\"\\u00c9toile\\\" refers to name = '\\u00c9toile'"
    assert raw[span.start : span.end] == span.text.encode()
    cafe = units["evidence:bird:harbor:term.caf"]
    assert cafe.unit.payload == GlossaryPayload(definition="the on-board bar")
    assert (
        raw[cafe.spans[0].start : cafe.spans[0].end] == b"\\u2713 caf\\u00e9 means the on-board bar"
    )


def test_changed_evidence_keeps_the_id_and_changes_the_unit(bird: Path, tmp_path: Path) -> None:
    before = _by_id(_read(bird))
    changed = [dict(q) for q in bf.QUESTIONS]
    changed[4]["evidence"] = "tonnage in kilotonnes = gross_tonnage / 1000.0"
    after = _by_id(_read(bf.write(tmp_path / "again", changed)))
    uid = "evidence:bird:harbor:term.tonnage-in-kilotonnes"
    assert after[uid].unit.payload.sql == "gross_tonnage / 1000.0"
    assert before[uid].unit.payload.sql == "gross_tonnage / 1000"
    assert sorted(after) == sorted(set(before) - {"evidence:bird:harbor:term.heaviest"})
    # An unchanged source reads to the same units, in the same order.
    assert [i.unit for i in _read(bird).units] == [i.unit for i in before.values()]


def test_one_name_defined_two_ways_gives_two_units_first_keeps_the_plain_id(
    tmp_path: Path,
) -> None:
    qs = [dict(q) for q in bf.QUESTIONS[:2]]
    qs[0]["evidence"] = "busy port refers to calls > 100"
    qs[1]["evidence"] = "busy port refers to calls > 250"
    units = _by_id(_read(bf.write(tmp_path / "bird", qs)))
    terms = sorted(u for u in units if ":term.busy-port" in u)
    assert len(terms) == 2
    assert units["evidence:bird:harbor:term.busy-port"].unit.payload.sql == "calls > 100"
    other = next(u for u in terms if u != "evidence:bird:harbor:term.busy-port")
    assert units[other].unit.payload.sql == "calls > 250"


def test_train_file_without_question_ids_is_numbered_by_position(tmp_path: Path) -> None:
    root = tmp_path / "train"
    root.mkdir()
    qs = [
        {k: v for k, v in q.items() if k not in ("question_id", "difficulty")} for q in bf.QUESTIONS
    ]
    (root / "train.json").write_text(json.dumps(qs), encoding="utf-8")
    units = _by_id(_read(root))
    examples = sorted(u for u in units if units[u].unit.kind == "example")
    assert len(examples) == 10
    assert units["evidence:bird:clinic.q7"].unit.payload.question == "Name the heaviest dog."


def test_questions_option_and_a_file_source(bird: Path, tmp_path: Path) -> None:
    (bird / "dev.json").rename(bird / "mini_dev_sqlite.json")
    assert not [u for u in _read(bird).units if u.unit.kind == "example"]
    named = _read(bird, options={"questions": "mini_dev_sqlite.json"})
    assert sum(u.unit.kind == "example" for u in named.units) == 10
    alone = _read(bird / "mini_dev_sqlite.json")
    assert sum(u.unit.kind == "example" for u in alone.units) == 10
    assert not [u for u in alone.units if u.unit.kind == "enum"]


def test_words_that_happen_to_parse_as_sql_stay_definitions(tmp_path: Path) -> None:
    qs = [dict(bf.QUESTIONS[0])]
    qs[0]["evidence"] = (
        "crew refers to officers and ratings; grade span refers to K-12; "
        "speed unit refers to km; laid up refers to status IS NULL; "
        "coastal refers to route LIKE 'C%'"
    )
    units = _by_id(_read(bf.write(tmp_path / "bird", qs)))
    assert units["evidence:bird:harbor:term.crew"].unit.payload == GlossaryPayload(
        definition="officers and ratings"
    )
    assert units["evidence:bird:harbor:term.grade-span"].unit.kind == "glossary"
    assert units["evidence:bird:harbor:term.speed-unit"].unit.kind == "glossary"
    assert units["evidence:bird:harbor:term.laid-up"].unit.payload == FormulaPayload(
        concept="laid up", sql="status IS NULL"
    )
    assert units["evidence:bird:harbor:term.coastal"].unit.payload.sql == "route LIKE 'C%'"


def test_an_apostrophe_in_a_word_does_not_swallow_the_next_fragment(tmp_path: Path) -> None:
    qs = [dict(bf.QUESTIONS[0])]
    qs[0]["evidence"] = (
        "the vessel's flag refers to the flag state; owner's share = stake / 100; "
        "nickname refers to name = 'Bo''s boat; fast'"
    )
    units = _by_id(_read(bf.write(tmp_path / "bird", qs)))
    assert units["evidence:bird:harbor:term.the-vessel-s-flag"].unit.payload == GlossaryPayload(
        definition="the flag state"
    )
    assert units["evidence:bird:harbor:term.owner-s-share"].unit.payload.sql == "stake / 100"
    # A ';' inside a quoted SQL string (with a doubled quote) does not split.
    assert (
        units["evidence:bird:harbor:term.nickname"].unit.payload.sql == "name = 'Bo''s boat; fast'"
    )
