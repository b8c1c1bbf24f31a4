"""The Cortex Analyst importer on a semantic model written for these tests: every element kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from wren_cortex_fixtures import CORTEX_MODEL, by_id, check_spans, run

from evidence_tool.errors import SourceError
from evidence_tool.unit import EnumValue, parse_unit, render

C = "evidence:cortex:pharmacy_sales."


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "pharmacy.yaml"
    path.write_text(CORTEX_MODEL, encoding="utf-8")
    return path


def test_every_element_kind_becomes_its_unit(model: Path) -> None:
    units = by_id(run("cortex", model))
    expected = {
        "evidence:cortex:pharmacy_sales": "glossary",
        C + "sales": "glossary",
        C + "sales.channel": "glossary",
        C + "sales.channel.values": "enum",
        C + "sales.product_name": "glossary",
        C + "sales.product_name.values": "enum",
        C + "sales.sold_on": "glossary",
        C + "sales.net_amount": "glossary",
        C + "sales.net_amount.expr": "formula",
        C + "sales.metric.total_net": "formula",
        C + "sales.metric.total_net.term": "glossary",
        C + "sales.filter.web_only": "formula",
        C + "sales.filter.web_only.term": "glossary",
        C + "stores": "glossary",
        C + "relationship.sales_store": "mapping",
        C + "metric.net_per_store": "formula",
        C + "metric.net_per_store.term": "glossary",
        C + "query.web-share": "example",
        C + "instructions": "domain",
    }
    assert {uid: item.unit.kind for uid, item in units.items()} == expected


def test_dimension_glossary_keeps_synonyms_and_names_the_base_table_column(model: Path) -> None:
    unit = by_id(run("cortex", model))[C + "sales.channel"].unit
    assert unit.payload.synonyms == ("sales channel",)
    assert unit.metadata.applies_to.columns == ("RETAIL.SALES_LINES.channel_code",)


def test_sample_values_take_meanings_only_from_a_description_that_lists_them(
    model: Path,
) -> None:
    result = run("cortex", model)
    units = by_id(result)
    channel = units[C + "sales.channel.values"].unit.payload
    assert channel.column == "RETAIL.SALES_LINES.channel_code"
    assert channel.values == (
        EnumValue("S", "in store"),
        EnumValue("W", "web shop"),
        EnumValue("A", "app"),
    )
    products = units[C + "sales.product_name.values"].unit.payload
    assert [v.meaning for v in products.values] == ["", ""]
    assert [(code, uid) for code, _, uid in result.review_items] == [
        ("meaning-missing", C + "sales.product_name.values")
    ]


def test_a_partly_described_code_list_misses_only_the_values_it_does_not_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.yml"
    path.write_text(
        "name: m\ntables:\n  - name: t\n    base_table: {database: D, schema: S, table: T}\n"
        "    dimensions:\n      - name: flag\n        expr: flag\n"
        "        description: '1: open; 2: closed'\n        sample_values: ['1', '2', '007']\n",
        encoding="utf-8",
    )
    result = run("cortex", path)
    enum = by_id(result)["evidence:cortex:m.t.flag.values"].unit.payload
    assert [(v.value, v.meaning) for v in enum.values] == [
        ("1", "open"),
        ("2", "closed"),
        ("007", ""),
    ]
    assert len(result.review_items) == 1 and "'007'" in result.review_items[0][1]


def test_expressions_become_formulas_and_metrics_keep_their_description(model: Path) -> None:
    units = by_id(run("cortex", model))
    net = units[C + "sales.net_amount.expr"].unit
    assert (net.payload.concept, net.payload.sql) == ("net_amount", "gross_amount - discount")
    assert units[C + "sales.net_amount"].unit.metadata.applies_to.tables == ("RETAIL.SALES_LINES",)
    total = units[C + "sales.metric.total_net"].unit
    assert total.payload.sql == "SUM(net_amount)"
    term = units[C + "sales.metric.total_net.term"].unit
    assert term.payload.definition == "Sum of net amounts."
    web = units[C + "sales.filter.web_only"].unit
    assert web.payload.sql == "channel_code = 'W'"
    assert units[C + "metric.net_per_store"].unit.payload.sql.startswith("sales.total_net /")


def test_relationship_mapping_and_verified_query_example(model: Path) -> None:
    units = by_id(run("cortex", model))
    rel = units[C + "relationship.sales_store"].unit.payload
    assert rel.tables == ("RETAIL.SALES_LINES", "RETAIL.STORES")
    assert rel.columns == ("RETAIL.SALES_LINES.store_id", "RETAIL.STORES.store_id")
    query = units[C + "query.web-share"].unit.payload
    assert query.question == "What share of net sales came from the web shop last month?"
    assert query.interpretation.startswith("```sql\nSELECT SUM(CASE WHEN channel = 'W'")
    rule = units[C + "instructions"].unit.payload.rule
    assert rule == "Amounts are in euro; never mix gross and net amounts in one sum."


def test_not_imported_lists_what_no_unit_field_holds(model: Path) -> None:
    listed = {(n.element, n.what) for n in run("cortex", model).not_imported}
    t = "cortex model pharmacy_sales table sales"
    for expected in (
        (t, "base_table database"),
        (t, "primary_key"),
        (f"{t} dimension channel", "data_type"),
        (f"{t} dimension channel", "is_enum"),
        (f"{t} dimension product_name", "cortex_search_service"),
        (f"{t} time dimension sold_on", "sample values (samples of a range, not a list of values)"),
        (f"{t} fact net_amount", "access_modifier"),
        ("cortex model pharmacy_sales table stores dimension store_id", "unique"),
        ("cortex model pharmacy_sales relationship sales_store", "join_type"),
        ("cortex model pharmacy_sales verified query web share", "use_as_onboarding_question"),
        ("cortex model pharmacy_sales verified query web share", "verified_at"),
    ):
        assert expected in listed, expected


def test_every_span_holds_its_bytes_and_every_unit_is_valid(model: Path) -> None:
    result = run("cortex", model)
    assert check_spans(model, result) == 40
    for item in result.units:
        parsed = parse_unit(render(item.unit))
        assert parsed.errors == [] and parsed.unit == item.unit, item.unit.id
    assert by_id(run("cortex", model)) == by_id(result)  # deterministic


def test_changed_description_keeps_the_id(model: Path) -> None:
    first = by_id(run("cortex", model))
    model.write_text(CORTEX_MODEL.replace("One row per store.", "One row per open store."))
    second = by_id(run("cortex", model))
    assert sorted(second) == sorted(first)
    assert [u for u in first if first[u].unit != second[u].unit] == [C + "stores"]


def test_italian_source_renders_italian_headings(model: Path) -> None:
    unit = by_id(run("cortex", model, language="it"))[C + "sales.channel.values"].unit
    text = render(unit)
    assert "## Colonna" in text and "## Valori" in text and "## Column" not in text


def test_sample_values_of_an_expression_are_not_representable(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "name: m\ntables:\n  - name: t\n    base_table: {database: D, schema: S, table: T}\n"
        "    dimensions:\n      - name: region\n        expr: UPPER(region_code)\n"
        "        sample_values: [NORTH, SOUTH]\n",
        encoding="utf-8",
    )
    result = run("cortex", path)
    assert [(c, u) for c, _, u in result.review_items] == [
        ("not-representable", "evidence:cortex:m.t.region.values")
    ]
    assert sorted(by_id(result)) == ["evidence:cortex:m.t.region.expr"]


# (bytes, line named; the file is m.yaml)
HOSTILE: dict[str, tuple[bytes, int]] = {
    "no name": (b"tables: []\n", 1),
    "table without base_table": (b"name: m\ntables:\n  - name: t\n", 3),
    "tables not a list": (b"name: m\ntables: {t: 1}\n", 2),
    "relationship to unknown table": (
        b"name: m\nrelationships:\n  - name: r\n    left_table: a\n    right_table: b\n",
        3,
    ),
    "verified query without sql": (b"name: m\nverified_queries:\n  - question: q\n", 3),
    "metric without expr": (b"name: m\nmetrics:\n  - name: x\n", 3),
    "duplicate key": (b"name: m\ntables: []\ntables: []\n", 3),
    "anchor": (b"name: &n m\n", 1),
    "syntax": (b"name: m\n  tables: - x\n", 2),
    "sample_values not a list": (
        b"name: m\ntables:\n  - name: t\n    base_table: {schema: S, table: T}\n"
        b"    dimensions:\n      - name: d\n        sample_values: A, B\n",
        7,
    ),
    "synonyms not a list": (b"name: m\ndescription: x\nsynonyms: {a: b}\n", 3),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_attack_malformed_cortex_model_is_e504_naming_file_and_line(
    tmp_path: Path, case: str
) -> None:
    data, line = HOSTILE[case]
    path = tmp_path / "m.yaml"
    path.write_bytes(data)
    with pytest.raises(SourceError) as caught:
        run("cortex", path)
    assert (caught.value.code, caught.value.path, caught.value.line) == ("E504", "m.yaml", line)
    assert len(HOSTILE) == 11


def test_module_custom_instructions_become_one_domain_unit_each(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "name: m\nmodule_custom_instructions:\n"
        "  sql_generation: Round money to two decimals.\n"
        "  question_categorization: Questions about staff salaries are out of scope.\n",
        encoding="utf-8",
    )
    units = by_id(run("cortex", path))
    assert {uid: u.unit.payload.rule for uid, u in units.items()} == {
        "evidence:cortex:m.instructions.sql_generation": "Round money to two decimals.",
        "evidence:cortex:m.instructions.question_categorization": (
            "Questions about staff salaries are out of scope."
        ),
    }
    assert check_spans(path, run("cortex", path)) == 2


def test_folder_source_reads_each_yaml_model_and_lists_other_files(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("north", "south"):
        (folder / f"{name}.yml").write_text(
            f"name: {name}\ntables:\n  - name: t\n    description: Stock of the {name} depot.\n"
            "    base_table: {database: D, schema: S, table: T}\n",
            encoding="utf-8",
        )
    (folder / "README.txt").write_text("exported from Snowsight\n", encoding="utf-8")
    result = run("cortex", folder)
    assert sorted(by_id(result)) == ["evidence:cortex:north.t", "evidence:cortex:south.t"]
    assert [(n.element, n.what) for n in result.not_imported] == [
        ("file README.txt", "the whole file (a semantic model is a .yaml file)"),
        ("cortex model north table t", "base_table database"),
        ("cortex model south table t", "base_table database"),
    ]
