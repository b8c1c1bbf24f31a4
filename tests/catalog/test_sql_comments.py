"""Comments in example SQL are read as the SQL's own dialect reads them (docs/catalog.md,
"Comments"): PostgreSQL nests block comments (``/* a /* b */ c */`` is one), SQLite does
not (its comment ends at the first ``*/``, or runs to the end of the text); a comment
marker inside a string, a quoted name or a dollar-quoted string is text, and ``--``
inside a block comment starts nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_helpers import write_units
from cli_runner import CliResult, invoke, tht
from pg_cluster import Cluster

from evidence_tool.catalog.example_sql import skip_blanks
from evidence_tool.catalog.example_sqlite import _first as sqlite_first

WAREHOUSE = "CREATE TABLE parcels (parcel_id integer, depot text, grams integer);\n"
MARK = "§"  # where the statement starts, or where the finding must point

# PostgreSQL: (text with the mark where the skip must stop).
PG_SKIPS = [
    "/* outer /* inner */ still outer */ §SELECT 1",
    "/* one /* two /* three */ two */ one */\n  §SELECT 1",
    "/* -- a line comment inside ends nothing */ §SELECT 1",
    "-- a line comment hides /* this opener\n§SELECT 1",
    "/* quotes inside: ' \" $$ are not strings */§SELECT 1",
    "/**/§SELECT 1",
    "/***/ §SELECT 1",
    "/* a */ /* b /* c */ d */ -- e\n\t§SELECT 1",
    "§SELECT '/*' || '*/'",
    "§'/* a string, not a comment */'",
    "/* unterminated /* nested */ to the end§",
]
# SQLite: comments do not nest; an unterminated one runs to the end of the text.
SQLITE_SKIPS = [
    "/* outer /* inner */ §still outer */ SELECT 1",
    "/* -- inside */ §SELECT 1",
    "-- hides /* this\n§SELECT 1",
    "/* never closed§",
    "  /* a */ -- b\n§SELECT 1",
    "§SELECT '/*'",
]


@pytest.mark.parametrize("text", PG_SKIPS)
def test_postgresql_skips_nested_comments_whole(text: str) -> None:
    sql = text.replace(MARK, "")
    assert skip_blanks(sql, 0) == text.index(MARK), text


@pytest.mark.parametrize("text", SQLITE_SKIPS)
def test_sqlite_comments_end_at_the_first_closer(text: str) -> None:
    sql = text.replace(MARK, "")
    assert sqlite_first(sql) == text.index(MARK), text


def test_the_sweeps_ran() -> None:
    assert (len(PG_SKIPS), len(SQLITE_SKIPS)) == (11, 6)


def _example(name: str, sql: str) -> str:
    return (
        f"---\nschema_version: 4\nid: evidence:depot:{name}\nkind: example\nlanguage: en\n"
        f"purposes: [sql_generation]\n---\n\n# {name}\n\n## Question\n\nHow heavy?\n\n"
        f"## Interpretation\n\nParcels are in `parcels`.\n\n```sql\n{sql}\n```\n"
    )


def _workspace(root: Path, units: dict[str, str]) -> dict[str, tuple[int, int]]:
    made = invoke(["workspace", "new", str(root), "--id", "depot", "--language", "en"])
    assert made.exit_code == 0, made.stderr
    where, files = {}, {}
    for name, sql in units.items():
        text = _example(name, sql)
        if MARK in text:
            before = text[: text.index(MARK)]
            where[name] = (before.count("\n") + 1, len(before) - before.rfind("\n"))
        files[f"evidence/curated/example/{name}.md"] = text.replace(MARK, "")
    write_units(root, files)
    return where


def _findings(result: CliResult) -> dict[str, list[tuple[str, int, int]]]:
    out: dict[str, list[tuple[str, int, int]]] = {}
    for e in result.json["errors"]:
        name = e["path"].rsplit("/", 1)[1].removesuffix(".md")
        out.setdefault(name, []).append((e["code"], e["line"], e["column"]))
    return out


REFUSED = {
    "second-after-nested": "SELECT grams FROM parcels;\n/* old /* older */ query */ §SELECT 1",
    "write-after-nested": "/* cleanup /* v2 */ step */\n§DELETE FROM parcels WHERE grams < 0",
}


def test_a_refusal_after_a_nested_comment_points_at_the_statement(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    where = _workspace(ws, REFUSED)
    ddl = tmp_path / "depot.sql"
    ddl.write_text(WAREHOUSE, encoding="utf-8")
    result = tht(ws, "check", "--catalog", "ddl", "--ddl", str(ddl))
    assert _findings(result) == {n: [("E184", *where[n])] for n in REFUSED}, result.stdout


# Each runs as one query: the comment markers inside strings, dollar quotes and quoted
# names are text, and what follows the closing semicolon is a comment (nested or not).
RUNS = {
    "marker-in-string": "SELECT 'a;--b' AS s, grams FROM parcels;",
    "marker-in-dollar-quote": "SELECT $q$;/* x */$q$ AS s, grams FROM parcels; -- done",
    "nested-after-semicolon": "SELECT grams FROM parcels; /* note /* inner */ more */",
    "marker-in-quoted-name": 'SELECT grams AS ";--" FROM parcels;',
}


def test_execute_runs_each_query_whatever_its_comments_hold(
    tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    _workspace(ws, RUNS)
    assert tht(ws, "consolidate").exit_code == 0
    dsn = pg_cluster.create_database(
        "depot_comments", extra_sql=WAREHOUSE + "INSERT INTO parcels VALUES (1, 'Biel', 250);"
    )
    monkeypatch.setenv("THT_CATALOG_DSN", dsn)
    result = tht(ws, "check", "--catalog", "postgres", "--execute")
    assert result.json["errors"] == [], result.stdout
    ran = {r["unit_id"].rsplit(":", 1)[1]: r for r in result.json["result"]["example_results"]}
    assert set(ran) == set(RUNS), ran
    for name, got in ran.items():
        assert got.get("error") is None and got["rows"] == 1, (name, got)
    assert result.json["warnings"] == [], result.json["warnings"]
