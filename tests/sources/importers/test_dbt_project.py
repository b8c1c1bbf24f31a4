"""The dbt importer on a project folder: every element of the fixture project, asserted."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt_helpers import PROJECT, assert_spans_exact, by_id, copy_project, read, write

from evidence_tool.importers.base import ImportResult
from evidence_tool.unit import parse_unit, render
from evidence_tool.unit.formula import check_expression
from evidence_tool.unit.model import (
    DomainPayload,
    EnumPayload,
    FormulaPayload,
    GlossaryPayload,
    MappingPayload,
)

GLOSSARY = {
    "evidence:dbt:admissions": "One row per hospital admission, from booking to discharge.",
    "evidence:dbt:admissions.admission_id": "Surrogate key of the admission.",
    "evidence:dbt:admissions.admission_source": "Channel through which the patient came in.",
    "evidence:dbt:admissions.los_days": (
        "Length of stay in whole days, counted from admission to discharge."
    ),
    "evidence:dbt:wards.ward_code": "Short code of the ward, as printed on the wristband.",
    "evidence:dbt:wards.beds": "Staffed beds on the ward today.",
}
ENUMS = {
    "evidence:dbt:admissions.status.values": (
        "public.fct_admissions.status",
        [
            ("booked", "a bed is reserved, the patient has not arrived"),
            ("admitted", "the patient is on the ward"),
            ("discharged", "the patient has left the ward"),
        ],
    ),
    "evidence:dbt:admissions.discharge_kind.values": (
        "public.fct_admissions.discharge_kind",
        [
            ("HOME", "discharged to the patient's home"),
            ("XFER", "transferred to another hospital"),
            ("DEAD", "died during the stay"),
        ],
    ),
    "evidence:dbt:admissions.triage_level.values": (
        "public.fct_admissions.triage_level",
        [("1", "immediate"), ("2", "very urgent"), ("3", "urgent"), ("4", "standard")],
    ),
    # No list names these values: the meanings stay empty and a review item says so.
    "evidence:dbt:admissions.admission_source.values": (
        "public.fct_admissions.admission_source",
        [("ER", ""), ("GP", ""), ("SCHED", "")],
    ),
}
FORMULAS = {
    "evidence:dbt:measure.total_los_days": "SUM(los_days)",
    "evidence:dbt:measure.admission_count": "COUNT(admission_id)",
    "evidence:dbt:measure.distinct_patients": "COUNT(DISTINCT patient_id)",
    "evidence:dbt:metric.admissions": "COUNT(admission_id)",
    "evidence:dbt:metric.total_los_days_metric": "SUM(los_days)",
    "evidence:dbt:metric.average_stay": (
        "CAST(SUM(los_days) AS DOUBLE PRECISION) / "
        "CAST(NULLIF(COUNT(admission_id), 0) AS DOUBLE PRECISION)"
    ),
    "evidence:dbt:metric.staffed_beds": "SUM(beds)",
    "evidence:dbt:metric.ward_total": "COUNT(DISTINCT ward_code)",
    "evidence:dbt:metric.beds_per_ward": "(SUM(beds)) / NULLIF((COUNT(DISTINCT ward_code)), 0)",
}
MAPPINGS = {
    "evidence:dbt:entity.admissions.admission": ((), ("public.fct_admissions.admission_id",)),
    "evidence:dbt:entity.admissions.patient": ((), ("public.fct_admissions.patient_id",)),
    "evidence:dbt:entity.wards.ward": ((), ("public.wards.ward_code",)),
    # An entity on an expression maps the table only (and says the expression is not imported).
    "evidence:dbt:entity.wards.ward_group": (("public.wards",), ()),
}
DOCS_RENDERED = {
    "evidence:dbt:admissions.status": "Where the admission stands in its life cycle.",
    "evidence:dbt:admissions.triage_level": "Manchester-style triage level",
    "evidence:dbt:admissions.discharge_kind": "How the stay ended.",
    "evidence:dbt:wards": "One row per hospital ward that can take in-patients.",
}
DOMAIN = "evidence:dbt:metric.cumulative_admissions"


@pytest.fixture(scope="module")
def result() -> ImportResult:
    return read(PROJECT)


def test_every_element_of_the_project_becomes_the_expected_unit(result: ImportResult) -> None:
    units = by_id(result)
    expected = {*GLOSSARY, *ENUMS, *FORMULAS, *MAPPINGS, *DOCS_RENDERED, DOMAIN}
    assert set(units) == expected
    for uid, definition in GLOSSARY.items():
        payload = units[uid].unit.payload
        assert isinstance(payload, GlossaryPayload) and payload.definition == definition
    for uid, start in DOCS_RENDERED.items():
        payload = units[uid].unit.payload
        assert isinstance(payload, GlossaryPayload) and payload.definition.startswith(start)
        assert "{{" not in payload.definition and "docs" not in payload.definition
    for uid, (column, values) in ENUMS.items():
        payload = units[uid].unit.payload
        assert isinstance(payload, EnumPayload)
        assert payload.column == column
        assert [(v.value, v.meaning) for v in payload.values] == values
        assert units[uid].unit.metadata.applies_to.columns == (column,)
    for uid, sql in FORMULAS.items():
        payload = units[uid].unit.payload
        assert isinstance(payload, FormulaPayload) and payload.sql == sql, uid
        assert check_expression(sql) is None, uid
    for uid, (tables, columns) in MAPPINGS.items():
        payload = units[uid].unit.payload
        assert isinstance(payload, MappingPayload)
        assert (payload.tables, payload.columns) == (tables, columns)
    domain = units[DOMAIN].unit.payload
    assert isinstance(domain, DomainPayload)
    assert domain.rule.startswith("Running count of admissions since the ward opened.")
    assert domain.rule.endswith(
        "Calculation (dbt cumulative metric): measure admission_count; grain_to_date month"
    )


def test_applies_to_uses_the_alias_and_the_default_or_given_schema(result: ImportResult) -> None:
    units = by_id(result)
    assert units["evidence:dbt:admissions"].unit.metadata.applies_to.tables == (
        "public.fct_admissions",
    )
    other = by_id(read(PROJECT, options={"schema": "Ward Ops"}))
    assert other["evidence:dbt:admissions.los_days"].unit.metadata.applies_to.columns == (
        '"Ward Ops".fct_admissions.los_days',
    )
    assert other["evidence:dbt:metric.staffed_beds"].unit.metadata.applies_to.tables == (
        '"Ward Ops".wards',
    )


def test_spans_are_the_exact_bytes_of_the_yaml_nodes_and_docs_blocks(
    result: ImportResult,
) -> None:
    assert assert_spans_exact(PROJECT, result) == 36
    units = by_id(result)
    status = [s.text for s in units["evidence:dbt:admissions.status.values"].spans]
    assert status[0].startswith("accepted_values:") and "'discharged'" in status[0]
    assert status[1] == "\"{{ doc('admission_status') }}\""
    assert status[2].startswith("Where the admission stands") and status[2].endswith(
        "the patient has left the ward"
    )
    # A value list nobody explained cites only the test: no description is claimed.
    source = units["evidence:dbt:admissions.admission_source.values"].spans
    assert len(source) == 1 and source[0].text.startswith("accepted_values:")
    assert (
        units["evidence:dbt:admissions.los_days"].spans[0].text
        == GLOSSARY["evidence:dbt:admissions.los_days"]
    )
    measure = units["evidence:dbt:measure.total_los_days"].spans[0]
    assert measure.text.startswith("name: total_los_days") and measure.text.endswith("los_days")


def test_review_items_never_invent_a_meaning_or_drop_a_filter(result: ImportResult) -> None:
    items = {(code, uid) for code, _, uid in result.review_items}
    assert items == {
        ("meaning-missing", "evidence:dbt:admissions.admission_source.values"),
        ("not-representable", "evidence:dbt:metric.long_stays"),
    }
    messages = " ".join(m for _, m, _ in result.review_items)
    assert "'ER', 'GP', 'SCHED'" in messages and "models/marts/admissions.yml:" in messages
    assert "evidence:dbt:metric.long_stays" not in by_id(result)


def test_what_no_unit_holds_is_listed_as_not_imported(result: ImportResult) -> None:
    listed = {(n.element, n.what) for n in result.not_imported}
    for entry in [
        ("dbt model admissions", "tags"),
        ("dbt model admissions column admission_id", "test unique"),
        ("dbt model admissions column admission_id", "test not_null"),
        ("dbt model admissions column admission_source", "meta"),
        ("dbt model admissions column los_days", "data_type"),
        ("dbt model admissions column los_days", "constraints"),
        ("dbt model admissions", "test dbt_utils.unique_combination_of_columns"),
        ("dbt model wards column opened_on", "granularity"),
        ("dbt model wards", "agg_time_dimension"),
        ("dbt semantic model admissions_sm", "dimensions"),
        ("dbt semantic model admissions_sm", "defaults"),
        ("dbt metric long_stays", "filter (Jinja)"),
        (
            "dbt metric cumulative_admissions",
            "calculation: a cumulative metric is not one SQL expression",
        ),
        ("dbt entity ward_group of wards", "expression left(ward_code, 1)"),
        ("dbt metric average_stay", "description"),
    ]:
        assert entry in listed, entry
    tagged = next(n for n in result.not_imported if n.what == "tags")
    assert tagged.span is not None and tagged.span.text == '["core"]'


def test_every_unit_renders_and_parses_back_unchanged(result: ImportResult) -> None:
    for imported in result.units:
        text = render(imported.unit)
        parsed = parse_unit(text)
        assert parsed.errors == [] and parsed.unit == imported.unit, imported.unit.id
    assert len(result.units) == 28


def test_ids_and_units_are_the_same_on_a_second_read(result: ImportResult) -> None:
    again = read(PROJECT)
    assert [i.unit.to_json() for i in again.units] == [i.unit.to_json() for i in result.units]
    assert [i.spans for i in again.units] == [i.spans for i in result.units]


def test_a_changed_description_keeps_its_id(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    yml = root / "models" / "semantic" / "wards.yml"
    yml.write_text(yml.read_text().replace("Staffed beds on the ward today.", "Beds open tonight."))
    units = by_id(read(root))
    payload = units["evidence:dbt:wards.beds"].unit.payload
    assert isinstance(payload, GlossaryPayload) and payload.definition == "Beds open tonight."
    assert set(units) == set(by_id(read(PROJECT)))


def test_italian_source_gets_italian_titles(tmp_path: Path) -> None:
    units = by_id(read(PROJECT, language="it"))
    assert (
        units["evidence:dbt:admissions.status.values"].unit.title == "Valori di admissions.status"
    )
    assert units["evidence:dbt:entity.wards.ward"].unit.title == "Entità ward di wards"
    domain = units[DOMAIN].unit.payload
    assert isinstance(domain, DomainPayload) and "Calcolo (metrica dbt cumulative)" in domain.rule
    assert {i.unit.language for i in units.values()} == {"it"}
    rendered = render(units["evidence:dbt:admissions.status.values"].unit)
    assert "## Valori" in rendered and "## Values" not in rendered


ACCEPTED_FORMS = """\
models:
  - name: beds
    data_tests:
      - accepted_values:
          column_name: bay
          values: [north, south]
    columns:
      - name: kind
        description: "- 'std' = standard bed\\n- 'iso' = isolation bed"
        tests:
          - accepted_values:
              values: ["std", "iso"]
      - name: state
        description: |
          * `clean` - ready for the next patient
          * `dirty` - waiting for cleaning
        data_tests:
          - accepted_values:
              arguments:
                values: [clean, dirty]
              config:
                where: "state is not null"
      - name: size
        data_tests:
          - name: size_is_known
            test_name: accepted_values
            values: [S, M, L]
"""


def test_accepted_values_in_every_spelling(tmp_path: Path) -> None:
    write(tmp_path, "dbt_project.yml", "name: beds_project\n")
    write(tmp_path, "models/beds.yml", ACCEPTED_FORMS)
    result = read(tmp_path)
    enums = {
        i.unit.id: [(v.value, v.meaning) for v in i.unit.payload.values]
        for i in result.units
        if isinstance(i.unit.payload, EnumPayload)
    }
    assert enums == {
        "evidence:dbt:beds.bay.values": [("north", ""), ("south", "")],
        "evidence:dbt:beds.kind.values": [("std", "standard bed"), ("iso", "isolation bed")],
        "evidence:dbt:beds.state.values": [
            ("clean", "ready for the next patient"),
            ("dirty", "waiting for cleaning"),
        ],
        "evidence:dbt:beds.size.values": [("S", ""), ("M", ""), ("L", "")],
    }
    missing = sorted(uid for code, _, uid in result.review_items if code == "meaning-missing")
    assert missing == ["evidence:dbt:beds.bay.values", "evidence:dbt:beds.size.values"]
    assert_spans_exact(tmp_path, result)


@pytest.mark.parametrize(
    "switch", ["semantic_model: false", "semantic_model:\n      enabled: false"]
)
def test_a_disabled_semantic_model_proposes_no_mapping_or_metric(
    tmp_path: Path, switch: str
) -> None:
    write(tmp_path, "dbt_project.yml", "name: theatres\n")
    write(
        tmp_path,
        "models/theatres.yml",
        f"models:\n  - name: theatres\n    {switch}\n    columns:\n"
        "      - name: theatre_id\n        description: Operating theatre.\n"
        "        entity:\n          type: primary\n          name: theatre\n"
        "    metrics:\n      - name: theatre_count\n        type: simple\n"
        "        agg: count\n        expr: theatre_id\n",
    )
    result = read(tmp_path)
    assert [i.unit.id for i in result.units] == ["evidence:dbt:theatres.theatre_id"]
    listed = {(n.element, n.what) for n in result.not_imported}
    assert ("dbt model theatres column theatre_id", "entity (semantic model disabled)") in listed
    assert ("dbt model theatres", "metrics (semantic model disabled)") in listed


def test_crlf_and_bom_files_give_the_same_units_with_exact_spans(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    converted = 0
    for path in sorted(root.rglob("*")):
        if path.is_file():
            path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
            converted += 1
    assert converted == 4
    result = read(root)
    assert_spans_exact(root, result)
    assert [i.unit.to_json() for i in result.units] == [
        i.unit.to_json() for i in read(PROJECT).units
    ]


def test_an_unknown_aggregation_is_never_turned_into_sql(tmp_path: Path) -> None:
    write(tmp_path, "dbt_project.yml", "name: theatres\n")
    write(
        tmp_path,
        "models/t.yml",
        "models:\n  - name: theatres\n    semantic_model: true\n    metrics:\n"
        "      - name: theatre_mode\n        type: simple\n        agg: mode\n        expr: kind\n"
        "semantic_models:\n  - name: theatres_sm\n    model: ref('theatres')\n    measures:\n"
        "      - name: kind_mode\n        agg: mode\n        expr: kind\n",
    )
    result = read(tmp_path)
    units = by_id(result)
    domain = units["evidence:dbt:metric.theatre_mode"].unit.payload
    assert isinstance(domain, DomainPayload)
    assert domain.rule == "Calculation (dbt simple metric): expr kind"
    assert "evidence:dbt:measure.kind_mode" not in units
    assert [(c, u) for c, _, u in result.review_items] == [
        ("invalid-element", "evidence:dbt:measure.kind_mode")
    ]


def test_a_test_entry_that_is_a_list_is_listed_by_a_placeholder_not_an_internal_repr(
    tmp_path: Path,
) -> None:
    # A tests list whose entries are a list and a scalar: neither is a test dbt reads, so
    # both are not imported; the list has no name to give and is named '?', never the
    # reader's internal node (before the one YAML node type it printed a dataclass repr).
    write(tmp_path, "dbt_project.yml", "name: wards\n")
    write(
        tmp_path,
        "models/wards.yml",
        "models:\n  - name: wards\n    columns:\n      - name: ward_code\n"
        "        data_tests:\n          - [unique, not_null]\n          - 0042\n",
    )
    result = read(tmp_path)
    listed = sorted(n.what for n in result.not_imported if "ward_code" in n.element)
    assert listed == ["test 0042", "test ?"]
