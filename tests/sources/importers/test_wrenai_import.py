"""The WrenAI v5 importer on a project written for these tests: every element kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from wren_cortex_fixtures import WREN_PROJECT, by_id, check_spans, run, write_tree

from evidence_tool.unit import parse_unit, render

W = "evidence:wrenai:"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "velo", WREN_PROJECT)


def test_every_element_kind_becomes_its_unit(project: Path) -> None:
    result = run("wrenai", project)
    units = by_id(result)
    assert sorted(units) == sorted(
        W + x
        for x in (
            "model.rentals",
            "column.rentals.station_id",
            "column.rentals.minutes",
            "column.rentals.fare_eur",
            "calculated.rentals.fare_eur",
            "column.stations.label",
            "cube.ride_stats",
            "cube.ride_stats.ride_count",
            "cube.ride_stats.avg_minutes",
            "relationship.rental_start_station",
            "sql.rides-per-station",
            "rules.pricing.currency",
            "rules.pricing.free-rides",
            "glossary.dock",
        )
    )
    kinds = {uid: item.unit.kind for uid, item in units.items()}
    assert kinds[W + "column.rentals.station_id"] == "glossary"
    assert kinds[W + "calculated.rentals.fare_eur"] == "formula"
    assert kinds[W + "relationship.rental_start_station"] == "mapping"
    assert kinds[W + "sql.rides-per-station"] == "example"
    assert kinds[W + "rules.pricing.currency"] == "domain"
    assert result.review_items == []


def test_column_glossary_names_the_physical_column_of_the_table_reference(project: Path) -> None:
    unit = by_id(run("wrenai", project))[W + "column.rentals.station_id"].unit
    assert unit.payload.definition == "Station where the bike was unlocked."
    assert unit.metadata.applies_to.columns == ("ops.bike_rentals.station_id",)


def test_model_without_table_reference_takes_the_project_schema_else_the_option(
    project: Path,
) -> None:
    label = W + "column.stations.label"
    assert by_id(run("wrenai", project))[label].unit.metadata.applies_to.columns == (
        "public.stations.label",
    )
    with_option = by_id(run("wrenai", project, options={"schema": "analytics"}))
    assert with_option[label].unit.metadata.applies_to.columns == ("analytics.stations.label",)
    # the option names the schema of models without one; a table_reference still wins
    station = with_option[W + "column.rentals.station_id"].unit
    assert station.metadata.applies_to.columns == ("ops.bike_rentals.station_id",)


def test_formulas_from_calculated_columns_and_cube_measures(project: Path) -> None:
    units = by_id(run("wrenai", project))
    fare = units[W + "calculated.rentals.fare_eur"].unit
    assert (fare.payload.concept, fare.payload.sql) == ("fare_eur", "minutes * 0.25 + 1")
    avg = units[W + "cube.ride_stats.avg_minutes"].unit
    assert avg.payload.sql == "AVG(minutes)"
    assert avg.metadata.applies_to.tables == ("ops.bike_rentals",)


def test_relationship_condition_becomes_mapping_columns(project: Path) -> None:
    unit = by_id(run("wrenai", project))[W + "relationship.rental_start_station"].unit
    assert unit.payload.tables == ("ops.bike_rentals", "public.stations")
    assert unit.payload.columns == ("ops.bike_rentals.station_id", "public.stations.id")


def test_sql_pair_is_an_example_with_notes_and_fenced_sql(project: Path) -> None:
    item = by_id(run("wrenai", project))[W + "sql.rides-per-station"]
    assert item.unit.payload.question == "How many rides started at each station?"
    assert item.unit.payload.interpretation == (
        "Counts every rental, returned or not.\n\n```sql\nSELECT station_id, COUNT(*) AS rides\n"
        "FROM rentals\nGROUP BY station_id\n```"
    )
    texts = [s.text for s in item.spans]
    assert texts[0] == "How many rides started at each station?"
    assert texts[1].startswith("|\n  SELECT station_id")
    assert texts[2] == "Counts every rental, returned or not."


def test_rules_split_at_top_level_sections_not_inside_code_fences(project: Path) -> None:
    units = by_id(run("wrenai", project))
    free = units[W + "rules.pricing.free-rides"]
    assert free.unit.title == "Free rides"
    assert "# not a heading: inside a fence" in free.unit.payload.rule
    assert free.spans[0].text.startswith("## Free rides\n")
    assert free.spans[0].text.endswith("SELECT 1\n```")


def test_rules_without_a_file_title_split_at_their_shallowest_heading(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "p",
        {
            "knowledge/rules/ops.md": "Read this first.\n\n## Refunds\n\nRefunds are negative "
            "rows.\n\n### Detail\n\nKept in the section.\n\n## Empty\n\n## Units\n\nKm, not miles.\n"
        },
    )
    result = run("wrenai", root)
    units = by_id(result)
    assert sorted(units) == [W + "rules.ops.intro", W + "rules.ops.refunds", W + "rules.ops.units"]
    assert "### Detail" in units[W + "rules.ops.refunds"].unit.payload.rule
    assert result.skipped == {"empty section": 1}


def test_not_imported_and_skipped_are_listed(project: Path) -> None:
    result = run("wrenai", project)
    listed = {(n.element, n.what) for n in result.not_imported}
    for expected in (
        ("wrenai cube ride_stats", "time dimensions (and their time grains)"),
        ("wrenai cube ride_stats measure ride_count", "type"),
        ("wrenai relationship rental_start_station", "join_type"),
        ("wrenai sql pair knowledge/sql/rides-per-station.md", "tags"),
        ("wrenai model rentals column station_id", "properties.display_name"),
        ("wrenai model rentals", "cached, primary_key, column is_primary_key, column type"),
    ):
        assert expected in listed
    assert result.skipped == {
        "project settings": 2,
        "model or view SQL": 1,
        "placeholder": 1,
        "generated file": 1,
    }


def test_every_span_holds_its_bytes_and_every_unit_is_valid(project: Path) -> None:
    result = run("wrenai", project)
    assert check_spans(project, result) == 25
    for item in result.units:
        parsed = parse_unit(render(item.unit))
        assert parsed.errors == [] and parsed.unit == item.unit, item.unit.id


def test_spans_are_bytes_after_multibyte_text_and_a_bom(tmp_path: Path) -> None:
    model = (
        "\ufeffname: città\n# è un commento: ñ\ncolumns:\n  - name: zona\n"
        "    properties:\n      description: Quartiere «centro» o periferia.\n"
    )
    root = write_tree(tmp_path / "p", {"models/citta/metadata.yml": model})
    result = run("wrenai", root, language="it")
    item = by_id(result)[W + "column.citt.zona"]
    assert [s.text for s in item.spans] == ["zona", "Quartiere «centro» o periferia."]
    assert check_spans(root, result) == 2
    assert "## Definizione" in render(item.unit)
    assert item.unit.metadata.applies_to.columns == ('public."città".zona',)


def test_ids_are_stable_and_a_changed_description_keeps_its_id(project: Path) -> None:
    first = by_id(run("wrenai", project))
    assert by_id(run("wrenai", project)) == first
    meta = project / "models/rentals/metadata.yml"
    meta.write_text(meta.read_text().replace("rounded up", "rounded down"))
    second = by_id(run("wrenai", project))
    assert sorted(second) == sorted(first)
    uid = W + "column.rentals.minutes"
    assert second[uid].unit.payload.definition == "Ride length in whole minutes, rounded down."
    changed = [u for u in first if first[u].unit != second[u].unit]
    assert changed == [uid]


def test_template_expression_and_non_equality_condition_are_review_items(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "p",
        {
            "models/trips/metadata.yml": "name: trips\ncolumns:\n  - name: km\n",
            "models/bikes/metadata.yml": "name: bikes\ncolumns:\n  - name: id\n",
            "cubes/c/metadata.yml": "name: c\nbase_object: trips\nmeasures:\n"
            '  - name: recent_km\n    expression: "SUM({{ km_column }})"\n',
            "relationships.yml": "relationships:\n  - name: r\n    models: [trips, bikes]\n"
            "    condition: trips.bike_id > bikes.id\n",
        },
    )
    result = run("wrenai", root)
    assert [(code, uid) for code, _, uid in result.review_items] == [
        ("not-representable", W + "cube.c.recent_km"),
        ("not-representable", W + "relationship.r"),
    ]
    units = by_id(result)
    assert W + "cube.c.recent_km" not in units
    assert units[W + "relationship.r"].unit.payload.columns == ()


def test_two_elements_with_one_id_are_a_review_item_not_an_overwrite(tmp_path: Path) -> None:
    model = (
        "name: m\ncolumns:\n  - name: Order Id\n    properties: {description: first}\n"
        "  - name: order-id\n    properties: {description: second}\n"
    )
    result = run("wrenai", write_tree(tmp_path / "p", {"models/m/metadata.yml": model}))
    assert [item.unit.payload.definition for item in result.units] == ["first"]
    assert [code for code, _, _ in result.review_items] == ["invalid-element"]


def test_sql_file_without_pair_is_listed_not_guessed(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "p",
        {
            "knowledge/sql/readme.md": "These pairs are written by wren memory store.\n",
            "knowledge/sql/half.md": "---\nnl: Only a question\n---\n",
        },
    )
    result = run("wrenai", root)
    assert result.units == []
    assert sorted(n.element for n in result.not_imported) == [
        "file knowledge/sql/half.md",
        "file knowledge/sql/readme.md",
    ]


def test_rules_file_saved_with_bom_and_crlf_splits_like_any_other(tmp_path: Path) -> None:
    text = "# Regole\r\n\r\n## Turni\r\n\r\nUn turno dura otto ore.\r\n\r\n## Reparti\r\n\r\nSigle a tre lettere.\r\n"
    root = write_tree(
        tmp_path / "p", {"knowledge/rules/regole.md": b"\xef\xbb\xbf" + text.encode()}
    )
    result = run("wrenai", root, language="it")
    units = by_id(result)
    assert sorted(units) == [W + "rules.regole.reparti", W + "rules.regole.turni"]
    assert units[W + "rules.regole.turni"].unit.payload.rule == "Un turno dura otto ore."
    assert (
        units[W + "rules.regole.turni"].spans[0].text == "## Turni\r\n\r\nUn turno dura otto ore."
    )
    assert check_spans(root, result) == 2


def test_glossary_term_with_bom_cites_the_text_not_the_bom(tmp_path: Path) -> None:
    raw = "\ufeff## Reparto\n\nUnità operativa con un proprio primario.\n".encode()
    root = write_tree(tmp_path / "p", {"knowledge/glossary/reparto.md": raw})
    item = by_id(run("wrenai", root))[W + "glossary.reparto"]
    assert item.unit.title == "Reparto"
    assert item.unit.payload.definition == "Unità operativa con un proprio primario."
    assert item.spans[0].text.startswith("## Reparto") and item.spans[0].start == 3


def test_relationship_to_a_model_the_project_lacks_is_a_review_item_not_a_guess(
    tmp_path: Path,
) -> None:
    root = write_tree(
        tmp_path / "p",
        {
            "models/docks/metadata.yml": "name: docks\ncolumns:\n  - name: id\n",
            "relationships.yml": "relationships:\n  - name: dock_bike\n    models: [docks, bikez]\n"
            "    condition: docks.id = bikez.dock_id\n",
        },
    )
    result = run("wrenai", root)
    assert result.units == []
    [(code, message, uid)] = result.review_items
    assert (code, uid) == ("invalid-element", W + "relationship.dock_bike")
    assert "bikez" in message


@pytest.mark.parametrize(
    "rel, data, uid",
    [
        (
            "models/orders/metadata.yml",
            b"properties:\n  description: Orders placed online.\ncolumns: []\n",
            W + "model.orders",
        ),
        (
            "cubes/sales/metadata.yml",
            b"base_object: orders\nproperties:\n  description: Sales by day.\n",
            W + "cube.sales",
        ),
    ],
)
def test_a_described_model_or_cube_without_a_name_is_named_by_its_folder(
    tmp_path: Path, rel: str, data: bytes, uid: str
) -> None:
    """WrenAI names a model by its folder when ``name`` is left out: the glossary unit
    is imported, its excerpt the description alone (there is no name to cite)."""
    root = write_tree(tmp_path / "p", {rel: data})
    result = run("wrenai", root)
    item = by_id(result)[uid]
    assert item.unit.kind == "glossary"
    assert len(item.spans) == 1
    assert check_spans(root, result) >= 1
