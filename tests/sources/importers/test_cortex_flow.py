"""A Cortex Analyst semantic model end to end, through its review item.

The model's product names have sample values without meanings: that element is listed
as not imported (``meaning-missing``) and the rest is adopted; once the source says what
they mean, it is proposed; then replace, search, and an unchanged second refresh.
"""

from __future__ import annotations

from pathlib import Path

from cli_runner import tht
from import_helpers import (
    add,
    comparison,
    record_of,
    refresh_one,
    replace,
    search_ids,
)
from wren_cortex_fixtures import CORTEX_MODEL

REL = "imports/cortex/pharmacy.yaml"
C = "evidence:cortex:pharmacy_sales."
DESCRIBED = CORTEX_MODEL.replace(
    "description: Commercial name of the product.",
    "description: 'Commercial name of the product: Aspirin 500 = analgesic tablets; "
    "Vitamin D3 = supplement drops'",
)


def test_cortex_model_review_item_then_replace_search_and_unchanged(workspace: Path) -> None:
    path = workspace / REL
    path.parent.mkdir(parents=True)
    path.write_text(CORTEX_MODEL, encoding="utf-8")
    assert add(workspace, "cortex", REL, "--language", "en").exit_code == 0
    assert refresh_one(workspace, "cortex", REL).exit_code == 0
    comp = comparison(workspace, "cortex", REL)
    # The incomplete element is left out, with what to write where; the rest is adoptable.
    assert comp["review_items"] == []
    held = [(n["reason"], n["unit_id"]) for n in comp["not_imported"] if n.get("reason")]
    assert held == [("meaning-missing", C + "sales.product_name.values")]
    assert len(comp["proposed"]) == 18
    first = replace(workspace, "cortex", REL)
    assert first.exit_code == 0, first.stdout + first.stderr

    path.write_text(DESCRIBED, encoding="utf-8")
    assert refresh_one(workspace, "cortex", REL).exit_code == 0
    comp = comparison(workspace, "cortex", REL)
    assert comp["review_items"] == []
    values = next(p for p in comp["proposed"] if p["id"] == C + "sales.product_name.values")
    assert '### "Vitamin D3"\n\nsupplement drops' in values["markdown"]
    decided = replace(workspace, "cortex", REL)
    assert decided.exit_code == 0, decided.stdout + decided.stderr

    assert C + "sales.net_amount" in search_ids(workspace, "line amount after discounts")
    assert C + "query.web-share" in search_ids(workspace, "share of net sales web shop")
    shown = tht(workspace, "show", C + "sales.channel.values").json["result"]
    assert shown["imported_from"][0].startswith(f"{REL}:")
    assert tht(workspace, "verify").exit_code == 0

    again = refresh_one(workspace, "cortex", REL)
    assert [s["status"] for s in again.json["result"]["sources"]] == ["unchanged"]
    assert record_of(workspace, "cortex", REL)["comparison"] is None

    path.write_text(DESCRIBED.replace("One row per store.", "One row per pharmacy store."))
    assert refresh_one(workspace, "cortex", REL).exit_code == 0
    comp = comparison(workspace, "cortex", REL)
    current = {c["id"]: c["content_hash"] for c in comp["current"]}
    proposed = {p["id"]: p["content_hash"] for p in comp["proposed"]}
    assert sorted(current) == sorted(proposed) and comp["retire"] == []
    assert [uid for uid in proposed if proposed[uid] != current[uid]] == [C + "stores"]
