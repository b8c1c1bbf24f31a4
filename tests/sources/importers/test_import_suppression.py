"""Issue 28 item 3: one curated deletion reserves the deleted ids of an import, not its future.

An importer's ids are upstream names, so a new column documented upstream is new knowledge,
not a retired unit coming back under another id (the rule that stays for documents).
"""

from __future__ import annotations

from pathlib import Path

from cli_runner import tht
from import_helpers import comparison, import_and_replace, refresh_one
from shop_project import document_column, write_shop

REL = "imports/shop"


def test_a_deleted_import_unit_stays_reserved_and_new_columns_are_still_proposed(
    workspace: Path,
) -> None:
    write_shop(workspace / REL, staging=False)
    comp = import_and_replace(workspace, "dbt", REL, "--language", "en")
    gone = "evidence:dbt:patrons.nickname"
    path = next(p["path"] for p in comp["proposed"] if p["id"] == gone)
    (workspace / path).unlink()
    assert tht(workspace, "consolidate").exit_code == 0

    document_column(workspace / REL, "baskets", "baked_at", "When the last loaf came out")
    document_column(workspace / REL, "patrons", "loyalty_tier", "The patron's card level")
    refreshed = refresh_one(workspace, "dbt", REL)
    assert refreshed.exit_code == 0, refreshed.stdout + refreshed.stderr
    comp = comparison(workspace, "dbt", REL)
    proposed = {p["id"] for p in comp["proposed"]}
    assert {"evidence:dbt:baskets.baked_at", "evidence:dbt:patrons.loyalty_tier"} <= proposed
    assert gone not in proposed
    assert comp["dropped"] == [{"id": gone, "reason": "reserved by a deletion record"}]
    listed = tht(workspace, "sources", "list")
    (entry,) = [s for s in listed.json["result"]["sources"] if s["kind"] == "import"]
    assert entry["suppressed"] is False  # only its deleted ids are
