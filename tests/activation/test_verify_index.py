"""``verify --index`` with the embedded index: drift is E702 (exit 7), consolidate repairs it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from activation_helpers import FORMULA, Tht, active_entries, write_installation
from helpers import codes

MISSING = "evidence:clinical:sdo"
EXTRA = "evidence:ghost:never-curated"


def _tamper(root: Path) -> None:
    with sqlite3.connect(root / ".evidence-cache" / "index.sqlite") as con:
        con.execute("DELETE FROM units WHERE id = ?", (MISSING,))
        con.execute("UPDATE units SET content_hash = ? WHERE id = ?", ("0" * 64, FORMULA))
        con.execute(
            "INSERT INTO units VALUES (?,?,?,?,?,?,?)",
            (EXTRA, "domain", "en", "Ghost", "manual", "1" * 64, "{}"),
        )


def test_verify_index_passes_after_consolidate(indexed: Path, tht: Tht) -> None:
    result = tht("verify", "--index")
    assert result.exit_code == 0, result.stdout
    index = result.json["result"]["index"]
    assert index["backend"] == "sqlite" and index["checked"] is True
    assert index["expected"] == index["held"] == len(active_entries(indexed)) == 48
    assert index["drift"] == 0


def test_missing_stale_and_extra_rows_are_each_reported(indexed: Path, tht: Tht) -> None:
    _tamper(indexed)
    result = tht("verify", "--index")
    assert result.exit_code == 7
    errors = result.json["errors"]
    assert codes(result.json) == ["E702"] * 3
    by_unit = {e["unit_id"]: e["message"] for e in errors}
    assert by_unit.keys() == {MISSING, FORMULA, EXTRA}
    assert "missing" in by_unit[MISSING]
    assert "stale" in by_unit[FORMULA]
    assert "not active" in by_unit[EXTRA]
    assert result.json["result"]["index"]["drift"] == 3
    # Without --index the archive itself is fine.
    assert tht("verify").exit_code == 0


def test_consolidate_repairs_the_drift(indexed: Path, tht: Tht) -> None:
    _tamper(indexed)
    result = tht("consolidate").json["result"]
    assert result["status"] == "reindexed"
    assert tht("verify", "--index").exit_code == 0


def test_a_missing_index_is_drift_when_something_is_active(workspace: Path, tht: Tht) -> None:
    result = tht("verify", "--index")  # the shipped copy has no .evidence-cache
    assert result.exit_code == 7 and codes(result.json) == ["E702"]
    assert "missing" in result.json["errors"][0]["message"]
    text = tht("verify", "--index", as_json=False)
    assert text.exit_code == 7 and "E702" in text.stdout


def test_backends_without_a_readable_index_are_not_checked(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    inst = write_installation(tmp_path / "none.yaml", {"kind": "none"})
    result = tht("verify", "--index", installation=inst)
    assert result.exit_code == 0
    assert result.json["result"]["index"]["checked"] is False


def test_an_index_search_cannot_read_is_drift_and_consolidate_repairs_it(
    indexed: Path, tht: Tht
) -> None:
    """Every row can match while the file says nothing of its format (meta dropped or
    emptied by hand) or names another: search refuses it (E702), so verify does too."""
    index = indexed / ".evidence-cache" / "index.sqlite"
    damages = (
        "DROP TABLE meta",
        "DELETE FROM meta",
        "UPDATE meta SET value = '2' WHERE key = 'format'",
    )
    for damage in damages:
        with sqlite3.connect(index) as con:
            con.execute(damage)
        assert tht("search", "admission").exit_code == 7, damage
        result = tht("verify", "--index")
        assert result.exit_code == 7, (damage, result.stdout)
        assert codes(result.json) == ["E702"] and "format" in result.json["errors"][0]["message"]
        assert tht("consolidate").exit_code == 0
        assert tht("verify", "--index").exit_code == 0, damage
    assert len(damages) == 3
