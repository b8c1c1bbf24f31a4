"""The dbt importer on a manifest.json (v12): every element of the fixture, and streaming."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from dbt_helpers import MANIFEST, MiB, assert_spans_exact, by_id, read

from evidence_tool.errors import SourceError
from evidence_tool.importers.base import ImportResult
from evidence_tool.unit.model import EnumPayload, FormulaPayload, GlossaryPayload, MappingPayload

FORMULAS = {
    "evidence:dbt:measure.occupied_nights": "SUM(CASE WHEN bed_state = 'O' THEN 1 ELSE 0 END)",
    "evidence:dbt:measure.bed_nights_total": "COUNT(1)",
    "evidence:dbt:measure.median_care_level": (
        "PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY care_level)"
    ),
    "evidence:dbt:measure.care_level_p90": "PERCENTILE_DISC(0.9) WITHIN GROUP (ORDER BY care_level)",
    "evidence:dbt:metric.occupied_bed_nights": "SUM(CASE WHEN bed_state = 'O' THEN 1 ELSE 0 END)",
    "evidence:dbt:metric.all_bed_nights": "COUNT(1)",
    "evidence:dbt:metric.occupancy_rate": (
        "CAST(SUM(CASE WHEN bed_state = 'O' THEN 1 ELSE 0 END) AS DOUBLE PRECISION) / "
        "CAST(NULLIF(COUNT(1), 0) AS DOUBLE PRECISION)"
    ),
    "evidence:dbt:metric.free_bed_nights": (
        "(COUNT(1)) - (SUM(CASE WHEN bed_state = 'O' THEN 1 ELSE 0 END))"
    ),
    # The 1.12 form: agg and expr on the metric itself (metric_aggregation_params).
    "evidence:dbt:metric.peak_care_level": "MAX(care_level)",
}


@pytest.fixture(scope="module")
def result() -> ImportResult:
    return read(MANIFEST)


def test_every_element_of_the_manifest_becomes_the_expected_unit(result: ImportResult) -> None:
    units = by_id(result)
    glossary = {
        uid: i.unit.payload.definition
        for uid, i in units.items()
        if isinstance(i.unit.payload, GlossaryPayload)
    }
    assert glossary == {
        "evidence:dbt:bed_stays": "Each night a patient spent in a bed. Nights, not admissions.",
        "evidence:dbt:bed_stays.stay_night": (
            "Calendar night of the stay (the date the night starts)."
        ),
        "evidence:dbt:bed_stays.bed_state": (
            "State of the bed that night:\n* `O` = occupied\n* `B` = blocked for cleaning\n"
            "* `F` = free"
        ),
        "evidence:dbt:bed_stays.care_level": "Intensity of nursing care. Values: `1`, `2`, `3`.",
        "evidence:dbt:bed_stays.ward_code": (
            "Ward of the bed; the ward's code joins to the wards table."
        ),
        "evidence:dbt:care_units": (
            "Care units \u2014 intensive, high dependency and general \u2014 with their nurse "
            "ratios."
        ),
        "evidence:dbt:care_units.unit_kind": (
            "| value | meaning |\n|---|---|\n| ICU | intensive care |\n"
            "| HDU | high dependency unit |\n| GEN | general ward |"
        ),
    }
    enums = {
        uid: (i.unit.payload.column, [(v.value, v.meaning) for v in i.unit.payload.values])
        for uid, i in units.items()
        if isinstance(i.unit.payload, EnumPayload)
    }
    assert enums == {
        "evidence:dbt:bed_stays.bed_state.values": (
            "planning.bed_stays_v2.bed_state",
            [("O", "occupied"), ("B", "blocked for cleaning"), ("F", "free")],
        ),
        "evidence:dbt:bed_stays.care_level.values": (
            "planning.bed_stays_v2.care_level",
            [("1", ""), ("2", ""), ("3", "")],
        ),
        "evidence:dbt:care_units.unit_kind.values": (
            "planning.care_units.unit_kind",
            [("ICU", "intensive care"), ("HDU", "high dependency unit"), ("GEN", "general ward")],
        ),
    }
    formulas = {
        uid: i.unit.payload.sql
        for uid, i in units.items()
        if isinstance(i.unit.payload, FormulaPayload)
    }
    assert formulas == FORMULAS
    mappings = {
        uid: (i.unit.payload.tables, i.unit.payload.columns)
        for uid, i in units.items()
        if isinstance(i.unit.payload, MappingPayload)
    }
    assert mappings == {
        "evidence:dbt:entity.bed_stays.bed_night": (("planning.bed_stays_v2",), ()),
        "evidence:dbt:entity.bed_stays.ward": ((), ("planning.bed_stays_v2.ward_code",)),
    }
    assert len(units) == len(glossary) + len(enums) + len(formulas) + len(mappings) == 21


def test_review_items_and_not_imported(result: ImportResult) -> None:
    items = sorted((code, uid) for code, _, uid in result.review_items)
    assert items == [
        ("meaning-missing", "evidence:dbt:bed_stays.care_level.values"),
        ("not-representable", "evidence:dbt:care_units.nurses_per_bed"),
        ("not-representable", "evidence:dbt:metric.weekend_occupied_nights"),
    ]
    listed = {(n.element, n.what) for n in result.not_imported}
    for entry in [
        ("dbt model bed_stays", "tags"),
        ("dbt model bed_stays column care_level", "tags"),
        ("dbt model bed_stays column ward_code", "meta"),
        ("dbt semantic model bed_nights", "dimensions"),
        ("manifest manifest.json", "seed (1)"),
        ("manifest manifest.json", "source (1)"),
        ("manifest manifest.json", "test not_null on bed_stays (1)"),
    ]:
        assert entry in listed, entry


def test_spans_are_the_json_values_bytes(result: ImportResult) -> None:
    assert assert_spans_exact(MANIFEST, result) == 23
    units = by_id(result)
    description = units["evidence:dbt:bed_stays.bed_state"].spans[0]
    assert json.loads(description.text) == (
        "State of the bed that night:\n* `O` = occupied\n* `B` = blocked for cleaning\n* `F` = free"
    )
    test_node = json.loads(units["evidence:dbt:bed_stays.bed_state.values"].spans[0].text)
    assert test_node["test_metadata"]["name"] == "accepted_values"
    measure = json.loads(units["evidence:dbt:measure.care_level_p90"].spans[0].text)
    assert measure["name"] == "care_level_p90"


def test_a_second_read_is_identical(result: ImportResult) -> None:
    again = read(MANIFEST)
    assert [(i.unit.to_json(), i.spans) for i in again.units] == [
        (i.unit.to_json(), i.spans) for i in result.units
    ]


def _big_manifest(path: Path, models: int, macro_bytes: int) -> int:
    """A manifest whose bulk is macros and compiled SQL (as in real projects); written in
    pieces so the test itself never holds it."""
    with path.open("w", encoding="utf-8") as out:
        out.write('{"metadata": {"dbt_schema_version": ')
        out.write('"https://schemas.getdbt.com/dbt/manifest/v12.json"}, "macros": {')
        body = "{% macro m() %} select '\\\"}]{[' {% endmacro %} " * 40
        written, n = 0, 0
        while written < macro_bytes:
            chunk = json.dumps({"name": f"m{n}", "macro_sql": body, "arguments": [[{}]]})
            out.write(("," if n else "") + f'"macro.p.m{n}": ' + chunk)
            written += len(chunk)
            n += 1
        out.write('}, "nodes": {')
        for m in range(models):
            node = {
                "resource_type": "model",
                "name": f"model_{m}",
                "schema": "wide",
                "alias": f"model_{m}",
                "description": f"Model number {m}.",
                "raw_code": "select 1 -- " + "x" * 2000,
                "columns": {
                    f"c{c}": {"name": f"c{c}", "description": f"Column {c} of model {m}."}
                    for c in range(10)
                },
            }
            out.write(("," if m else "") + f'"model.p.model_{m}": ' + json.dumps(node))
        out.write("}}")
    return path.stat().st_size


def test_a_large_manifest_streams_node_by_node(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    size = _big_manifest(path, models=100, macro_bytes=12 * MiB)
    assert size > 12 * MiB
    tracemalloc.start()
    try:
        result = read(path, max_bytes=MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(result.units) == 100 * 11
    # json.load of the whole file needs more than its size; node by node stays a fraction.
    assert peak < size // 4, (peak, size)


def test_a_node_larger_than_the_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    _big_manifest(path, models=2, macro_bytes=1000)
    with pytest.raises(SourceError) as caught:
        read(path, max_bytes=1000)
    assert caught.value.code == "E503" and "manifest.json" in caught.value.message


def test_formulas_name_the_table_they_compute_on(result: ImportResult) -> None:
    units = by_id(result)
    tables = {uid: units[uid].unit.metadata.applies_to.tables for uid in FORMULAS if uid in units}
    assert len(tables) == len(FORMULAS)
    # Through a measure, a ratio's inputs, or the 1.12 metric's own semantic model.
    assert set(tables.values()) == {("planning.bed_stays_v2",)}, tables


def test_versioned_models_keep_one_id_per_version(tmp_path: Path) -> None:
    def node(version: int) -> dict[str, object]:
        return {
            "resource_type": "model",
            "name": "wards",
            "version": version,
            "schema": "ops",
            "alias": f"wards_v{version}",
            "description": f"Wards, contract {version}.",
            "columns": {"code": {"name": "code", "description": f"Ward code ({version})."}},
        }

    manifest = {
        "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
        "nodes": {"model.p.wards.v1": node(1), "model.p.wards.v2": node(2)},
    }
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    units = by_id(read(path))
    assert sorted(units) == [
        "evidence:dbt:wards_v1",
        "evidence:dbt:wards_v1.code",
        "evidence:dbt:wards_v2",
        "evidence:dbt:wards_v2.code",
    ]
    assert units["evidence:dbt:wards_v2.code"].unit.metadata.applies_to.columns == (
        "ops.wards_v2.code",
    )
