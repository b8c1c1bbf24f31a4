"""``search --table NAME`` with an unqualified name: resolved through the search path
(``evidence.catalog.search_path``, default ``public``) when several schemas hold a
table of that name, taken as is when one does, and a usage error when still ambiguous."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from activation_helpers import Tht, unit_text, write_unit

WORD = "wallaby"
UNITS = {
    "evidence:tbl:public-orders": ["public.orders"],
    "evidence:tbl:sales-orders": ["sales.orders"],
    "evidence:tbl:ward-stays": ["clinical.ward_stays"],
}


@pytest.fixture
def tabled(indexed: Path, tht: Tht) -> Path:
    for uid, tables in UNITS.items():
        name = uid.rsplit(":", 1)[1]
        text = unit_text(
            uid, "domain", "en", ["sql_generation"], f"{WORD} {name}", WORD, tables=tables
        )
        write_unit(indexed, "domain", name, text)
    assert tht("consolidate").json["result"]["status"] == "activated"
    return indexed


def _installation(tmp_path: Path, search_path: list[str]) -> Path:
    inst = tmp_path / "inst.yaml"
    catalog = {"kind": "ddl", "search_path": search_path}
    inst.write_text(json.dumps({"installation_version": 1, "evidence": {"catalog": catalog}}))
    return inst


def _ids(tht: Tht, *args: str, installation: Path | None = None) -> set[str]:
    result = tht("search", WORD, *args, "--limit", "100", installation=installation)
    assert result.exit_code == 0, result.stdout
    return {h["id"] for h in result.json["result"]["hits"]}


def test_a_name_only_one_schema_holds_is_that_table(tabled: Path, tht: Tht) -> None:
    assert _ids(tht, "--table", "WARD_STAYS") == {"evidence:tbl:ward-stays"}
    assert _ids(tht, "--table", "clinical.ward_stays") == {"evidence:tbl:ward-stays"}
    assert _ids(tht, "--table", "no_such_table") == set()


def test_a_name_several_schemas_hold_goes_by_the_search_path(
    tabled: Path, tht: Tht, tmp_path: Path
) -> None:
    assert _ids(tht, "--table", "orders") == {"evidence:tbl:public-orders"}  # default: public
    sales = _installation(tmp_path, ["sales", "public"])
    assert _ids(tht, "--table", "orders", installation=sales) == {"evidence:tbl:sales-orders"}
    # A qualified name is never resolved: it is the table asked for.
    assert _ids(tht, "--table", "public.orders", installation=sales) == {
        "evidence:tbl:public-orders"
    }


def test_a_name_the_search_path_cannot_settle_is_ambiguous(
    tabled: Path, tht: Tht, tmp_path: Path
) -> None:
    other = _installation(tmp_path, ["archive"])
    result = tht("search", WORD, "--table", "orders", installation=other)
    assert result.exit_code == 2
    message = result.json["errors"][0]["message"]
    assert "ambiguous" in message and "public.orders" in message and "sales.orders" in message
