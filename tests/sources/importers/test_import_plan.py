"""Issue 28 item 4: a proposal says what it changes, and replace never overwrites a hand fix
silently.

After two imported units are fixed by hand (their provenance becomes ``manual`` with the
dbt lineage) and one dbt description is edited, the refresh line and ``sources show``
count added/changed/identical/retired; ``decide --decision replace`` names the manual
units it would overwrite and needs ``--overwrite-manual`` or ``--exclude ID``; ``--dry-run``
prints the same plan and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_runner import CliResult, invoke, tht
from import_helpers import comparison, import_and_replace, refresh_one
from shop_project import write_shop

REL = "imports/shop"


def tree_state(root: Path) -> dict[str, bytes]:
    """Every file of the workspace but the lock and the derived cache."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.name != ".evidence-archive.lock"
        and ".evidence-cache" not in p.relative_to(root).parts
    }


FIXED = ["evidence:dbt:patrons.nickname", "evidence:dbt:baskets.total_cents"]


def _hand_fix(ws: Path, comp: dict[str, Any], uid: str, old: str, new: str) -> None:
    path = ws / next(p["path"] for p in comp["proposed"] if p["id"] == uid)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _prepared(ws: Path) -> dict[str, Any]:
    write_shop(ws / REL, staging=False)
    comp = import_and_replace(ws, "dbt", REL, "--language", "en")
    _hand_fix(ws, comp, FIXED[0], "What the staff call", "The name the staff use for")
    _hand_fix(ws, comp, FIXED[1], "in cents", "in euro cents, tax included")
    assert tht(ws, "consolidate").exit_code == 0
    schema = ws / REL / "models/marts/schema.yml"
    schema.write_text(
        schema.read_text(encoding="utf-8").replace(
            "The identifier of a basket", "The till's identifier of a basket"
        ),
        encoding="utf-8",
    )
    refreshed = refresh_one(ws, "dbt", REL)
    assert refreshed.exit_code == 0, refreshed.stdout + refreshed.stderr
    (line,) = [x for x in refreshed.json["result"]["sources"] if x["status"] == "compared"]
    assert line["changes"] == {"added": 0, "changed": 3, "identical": 8, "retired": 0}
    return comparison(ws, "dbt", REL)


def _decide(ws: Path, comp: dict[str, Any], *extra: str) -> CliResult:
    return tht(
        ws,
        "decide",
        "--source-id",
        str(comp["source_id"])[:10],
        "--revision",
        str(comp["revision"]),
        "--decision",
        "replace",
        *extra,
    )


def test_replace_names_the_hand_fixed_units_it_would_overwrite(workspace: Path) -> None:
    comp = _prepared(workspace)
    shown = tht(workspace, "sources", "show", str(comp["source_id"])[:12])
    changes = shown.json["result"]["changes"]
    assert sorted(changes["changed"]) == sorted([*FIXED, "evidence:dbt:baskets.basket_id"])
    assert len(changes["identical"]) == 8 and changes["added"] == changes["retired"] == []
    text = invoke(
        [
            "workspace",
            "evidence",
            "sources",
            "show",
            str(comp["source_id"])[:12],
            "--workspace-root",
            str(workspace),
        ]
    ).stdout
    assert "3 changed, 8 identical" in text
    assert "proposed evidence:dbt:patrons.nickname" in text and "(changed, manual)" in text

    before = tree_state(workspace)
    refused = _decide(workspace, comp)
    assert refused.exit_code != 0
    error = refused.json["errors"][0]
    assert error["code"] == "E306"
    assert all(uid in error["message"] for uid in FIXED)
    assert tree_state(workspace) == before

    planned = _decide(workspace, comp, "--dry-run")
    assert planned.exit_code == 0, planned.stdout
    plan = planned.json["result"]
    assert plan["dry_run"] is True and sorted(plan["overwrites_manual"]) == sorted(FIXED)
    assert len(plan["changes"]["identical"]) == 8
    assert tree_state(workspace) == before

    kept = _decide(workspace, comp, "--exclude", FIXED[0], "--exclude", FIXED[1])
    assert kept.exit_code == 0, kept.stdout
    result = kept.json["result"]
    assert sorted(result["excluded"]) == sorted(FIXED)
    assert all("patrons.nickname" not in p for p in result["written"])
    assert "The name the staff use for" in tht(workspace, "show", FIXED[0]).stdout
    assert "till's identifier" in tht(workspace, "show", "evidence:dbt:baskets.basket_id").stdout


def test_overwrite_manual_lets_replace_put_the_source_text_back(workspace: Path) -> None:
    comp = _prepared(workspace)
    done = _decide(workspace, comp, "--overwrite-manual")
    assert done.exit_code == 0, done.stdout
    assert sorted(done.json["result"]["overwrote_manual"]) == sorted(FIXED)
    assert "What the staff call" in tht(workspace, "show", FIXED[0]).stdout
