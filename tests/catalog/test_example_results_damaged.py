"""A hand-damaged ``.evidence-cache/example-results.json`` (the results ``check --execute``
recorded) is said as what it is: warning W189 naming the file and what to do, never a
misleading W185 ("over 10,000 rows then") and never silence; the run's own results then
replace what could not be read, and the next run compares with them again."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import tht
from test_example_sql import sqlite_db, workspace

STORE = ".evidence-cache/example-results.json"
UNITS = {
    "few-orders": "SELECT order_id\nFROM orders\nWHERE amount > 1;",
    "by-city": "SELECT c.city, count(*) AS n\nFROM customers AS c\nGROUP BY c.city;",
}


def _renamed(rec: dict[str, Any]) -> None:
    entry = rec["results"][_key(rec, "few-orders")]
    entry["row_count"] = entry.pop("rows")


def _key(rec: dict[str, Any], name: str) -> str:
    return next(k for k in rec["results"] if f":{name}#" in k)


def _typed(value: object) -> Callable[[dict[str, Any]], None]:
    def edit(rec: dict[str, Any]) -> None:
        rec["results"][_key(rec, "few-orders")]["rows"] = value

    return edit


def _entry(value: object) -> Callable[[dict[str, Any]], None]:
    def edit(rec: dict[str, Any]) -> None:
        rec["results"][_key(rec, "few-orders")] = value

    return edit


# One entry damaged: the other example's change is still compared (W185), the damaged
# one is W189 naming its key.
ENTRY_DAMAGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "rows_renamed": _renamed,
    "rows_a_string": _typed("2"),
    "rows_a_float": _typed(2.0),
    "rows_negative": _typed(-3),
    "rows_true": _typed(True),
    "rows_past_the_bound": _typed(10_001),  # more is written as null ("over"), never a count
    "entry_a_list": _entry([1, 2]),
    "entry_a_number": _entry(7),
}

# The whole file damaged: nothing could be compared.
FILE_DAMAGES: dict[str, Callable[[bytes], bytes]] = {
    "truncated": lambda raw: raw[: len(raw) // 2],
    "not_utf8": lambda raw: raw.replace(b'"format"', b'"form\xffat"', 1),
    "a_list": lambda raw: b"[" + raw + b"]",
    "a_string": lambda raw: b'"results"',
    "results_a_list": lambda raw: b'{"format": 1, "results": [1, 2]}',
    "no_results": lambda raw: b'{"format": 1}',
    "another_format": lambda raw: raw.replace(b'"format": 1', b'"format": 7', 1),
    "bom": lambda raw: b"\xef\xbb\xbf" + raw,
    "utf16": lambda raw: raw.decode("utf-8").encode("utf-16"),
}


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("results")
    ws = base / "ws"
    workspace(ws, UNITS)
    db = sqlite_db(base / "db")
    first = tht(ws, "check", "--catalog", "sqlite", "--sqlite", str(db), "--execute")
    assert first.exit_code == 0 and first.json["warnings"] == [], first.stdout
    return base


def _copy(executed: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    import shutil

    shutil.copytree(executed, tmp_path / "c")
    ws, db = tmp_path / "c" / "ws", tmp_path / "c" / "db" / "shop.db"
    con = sqlite3.connect(db)  # both examples' results change
    con.execute("INSERT INTO orders VALUES (12, 1, 40.00, '2026-03-01')")
    con.execute("INSERT INTO customers VALUES (3, 'Cleo', 'Genf')")
    con.commit()
    con.close()
    return ws, ["check", "--catalog", "sqlite", "--sqlite", str(db), "--execute"]


def _w189(result: Any) -> list[dict[str, Any]]:
    return [w for w in result.json["warnings"] if w["code"] == "W189"]


def _settles(ws: Path, args: list[str]) -> None:
    """The damaged store was replaced: the next run reads it and warns about nothing."""
    assert json.loads((ws / STORE).read_bytes().decode("utf-8"))["results"]
    again = tht(ws, *args)
    assert again.exit_code == 0 and again.json["warnings"] == [], again.stdout


@pytest.mark.parametrize("damage", sorted(ENTRY_DAMAGES))
def test_a_damaged_entry_is_w189_and_the_others_still_compare(
    executed: Path, tmp_path: Path, damage: str
) -> None:
    ws, args = _copy(executed, tmp_path)
    store = ws / STORE
    rec = json.loads(store.read_text(encoding="utf-8"))
    ENTRY_DAMAGES[damage](rec)
    store.write_text(json.dumps(rec), encoding="utf-8")

    result = tht(ws, *args)

    assert result.exit_code == 0, result.stdout
    assert "over 10,000" not in result.stdout
    changed = [w for w in result.json["warnings"] if w["code"] == "W185"]
    assert [w["path"].rsplit("/", 1)[1] for w in changed] == ["by-city.md"], result.stdout
    damaged = _w189(result)
    assert len(damaged) == 1, result.stdout
    assert damaged[0]["path"] == STORE
    assert "few-orders#" in damaged[0]["message"]
    assert "check --execute" in damaged[0]["message"]
    _settles(ws, args)


@pytest.mark.parametrize("damage", sorted(FILE_DAMAGES))
def test_a_damaged_store_is_w189_never_silence(executed: Path, tmp_path: Path, damage: str) -> None:
    ws, args = _copy(executed, tmp_path)
    store = ws / STORE
    store.write_bytes(FILE_DAMAGES[damage](store.read_bytes()))

    result = tht(ws, *args)

    assert result.exit_code == 0, result.stdout
    assert [w["code"] for w in result.json["warnings"]] == ["W189"], result.stdout
    (warning,) = _w189(result)
    assert warning["path"] == STORE and "check --execute" in warning["message"]
    _settles(ws, args)


def test_a_missing_store_is_a_first_run_not_a_damage(executed: Path, tmp_path: Path) -> None:
    ws, args = _copy(executed, tmp_path)
    (ws / STORE).unlink()
    result = tht(ws, *args)
    assert result.exit_code == 0 and result.json["warnings"] == [], result.stdout


def test_the_sweep_ran_every_damage() -> None:
    assert (len(ENTRY_DAMAGES), len(FILE_DAMAGES)) == (8, 9)
