"""Issue 28: dbt ``relationships`` tests are the join paths a text-to-SQL system most needs;
each becomes a ``mapping`` unit (from column, to column, the join) citing the test's bytes.
"""

from __future__ import annotations

from pathlib import Path

from dbt_helpers import assert_spans_exact, by_id, read, write
from shop_project import write_shop

from evidence_tool.unit import render

JOIN = "evidence:dbt:baskets.patron_id.joins.patrons.patron_id"


def test_a_relationships_test_becomes_a_join_mapping_with_its_span(tmp_path: Path) -> None:
    root = write_shop(tmp_path / "dbt", staging=False)
    result = read(root, options={"schema": "shop"})
    units = by_id(result)
    join = units[JOIN]
    payload = join.unit.payload
    assert join.unit.kind == "mapping"
    assert payload.columns == ("shop.baskets.patron_id", "shop.patrons.patron_id")  # type: ignore[attr-defined]
    assert payload.tables == ("shop.baskets", "shop.patrons")  # type: ignore[attr-defined]
    assert payload.concept == "shop.baskets.patron_id = shop.patrons.patron_id"  # type: ignore[attr-defined]
    (span,) = join.spans
    assert span.text.startswith("relationships:") and "field: patron_id" in span.text
    assert assert_spans_exact(root, result) >= len(result.units)
    assert "## Columns" in render(join.unit)
    # No longer listed as not imported.
    assert not [n for n in result.not_imported if n.what == "test relationships"]


def test_the_arguments_form_and_a_target_without_a_ref(tmp_path: Path) -> None:
    root = write_shop(tmp_path / "dbt", staging=False)
    write(
        root,
        "models/marts/more.yml",
        "version: 2\nmodels:\n  - name: ovens\n    columns:\n      - name: bakery_id\n"
        "        data_tests:\n          - relationships:\n              arguments:\n"
        "                to: ref('bakeries')\n                field: id\n"
        "      - name: supplier_id\n        data_tests:\n          - relationships:\n"
        "              to: source('erp', 'suppliers')\n              field: id\n",
    )
    result = read(root)
    units = by_id(result)
    join = units["evidence:dbt:ovens.bakery_id.joins.bakeries.id"]
    assert join.unit.payload.columns == ("public.ovens.bakery_id", "public.bakeries.id")  # type: ignore[attr-defined]
    # A source() target names a table the project does not describe: listed, with its place.
    listed = [n for n in result.not_imported if n.what == "test relationships"]
    assert [n.element for n in listed] == ["dbt model ovens column supplier_id"]
    assert listed[0].span is not None
