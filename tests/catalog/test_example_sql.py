"""The SQL of example units against the catalog: every relation and column it names is
resolved (aliases, CTEs, sub-selects, joins, USING), and SQL that is not one read-only
query is refused (E184), each finding at the SQL's own line and column in the unit
file; the same examples on DDL files, an SQLite database and a live PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from catalog_helpers import write_units
from cli_runner import CliResult, invoke, tht
from pg_cluster import Cluster

# A warehouse of its own (not the fixture's): two tables, unqualified names.
SHOP = """
CREATE TABLE customers (customer_id integer, name text, city text);
CREATE TABLE orders (order_id integer, customer_id integer, amount numeric(10,2), ordered_at date);
"""
ROWS = """
INSERT INTO customers VALUES (1, 'Ada', 'Bern'), (2, 'Ben', 'Chur');
INSERT INTO orders VALUES (10, 1, 12.50, '2026-01-03'), (11, 2, 99.00, '2026-02-01');
"""
KINDS = ("ddl", "sqlite", "postgres")
MARK = "§"  # where the finding must point; removed from the SQL

# name -> (SQL with the mark, expected code)
BROKEN = {
    "misspelt-column": ("SELECT o.order_id,\n       §o.amout\nFROM orders AS o", "E181"),
    "misspelt-table": ("SELECT count(*)\nFROM §ordres AS o\nWHERE o.amount > 10", "E180"),
    "alias-used-wrongly": ("SELECT o.order_id, §orders.amount\nFROM orders AS o", "E180"),
    "cte-column": (
        "WITH totals AS (\n"
        "    SELECT customer_id, sum(amount) AS total\n"
        "    FROM orders\n"
        "    GROUP BY customer_id\n"
        ")\n"
        "SELECT t.customer_id, §t.totl\n"
        "FROM totals AS t",
        "E181",
    ),
    "using-join": (
        "SELECT c.name, o.amount\nFROM orders AS o\n  JOIN customers AS c USING (§customer_ref)",
        "E181",
    ),
    "subquery": (
        "SELECT s.n\n"
        "FROM (\n"
        "    SELECT customer_id, count(*) AS n\n"
        "    FROM orders\n"
        "    WHERE §amont > 10\n"
        "    GROUP BY customer_id\n"
        ") AS s",
        "E181",
    ),
    "dml": ("-- clean up\n§DELETE FROM orders\nWHERE amount < 0", "E184"),
    "two-statements": (
        "SELECT count(*) FROM orders;\n  §SELECT count(*) FROM customers;",
        "E184",
    ),
}
CLEAN = (
    "WITH big AS (SELECT customer_id, sum(amount) AS spent FROM orders GROUP BY customer_id)\n"
    "SELECT c.name, b.spent AS total, o.order_id\n"
    "FROM customers AS c\n"
    "  JOIN orders AS o USING (customer_id)\n"
    "  JOIN big AS b ON b.customer_id = c.customer_id\n"
    "WHERE EXISTS (SELECT 1 FROM orders AS x WHERE x.customer_id = c.customer_id)\n"
    "  AND o.amount > (SELECT avg(amount) FROM orders)\n"
    "ORDER BY total DESC"
)


def example(name: str, sql: str) -> str:
    return (
        "---\n"
        "schema_version: 4\n"
        f"id: evidence:test:{name}\n"
        "kind: example\n"
        "language: en\n"
        "purposes: [sql_generation]\n"
        "---\n\n"
        f"# {name}\n\n"
        "## Question\n\n"
        "What did each customer spend?\n\n"
        "## Interpretation\n\n"
        "Orders are in `orders`; the customer's name is in `customers`.\n\n"
        f"```sql\n{sql}\n```\n"
    )


def expected_at(text: str) -> tuple[int, int]:
    """(line, column) of the mark in a unit file, 1-based."""
    before = text[: text.index(MARK)]
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def workspace(root: Path, units: dict[str, str]) -> dict[str, tuple[int, int]]:
    """The examples written (mark removed); where each one's finding must be."""
    where: dict[str, tuple[int, int]] = {}
    files: dict[str, str] = {}
    for name, sql in units.items():
        text = example(name, sql)
        if MARK in text:
            where[name] = expected_at(text)
        files[f"evidence/curated/example/{name}.md"] = text.replace(MARK, "")
    made = invoke(["workspace", "new", str(root), "--id", "shop", "--language", "en"])
    assert made.exit_code == 0, made.stderr
    write_units(root, files)
    return where


def sqlite_db(folder: Path, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "shop.db"
    con = sqlite3.connect(path)
    con.executescript(SHOP + ROWS + extra)
    con.commit()
    con.close()
    return path


@pytest.fixture(scope="module")
def shop_dsn(pg_cluster: Cluster) -> str:
    return pg_cluster.create_database(
        "shop_examples",
        extra_sql=SHOP
        + ROWS
        + "CREATE FUNCTION bump() RETURNS integer VOLATILE LANGUAGE sql AS 'SELECT 1';",
    )


def run_check(
    ws: Path, tmp: Path, kind: str, request: pytest.FixtureRequest, mp: pytest.MonkeyPatch
) -> CliResult:
    if kind == "ddl":
        ddl = tmp / "shop.sql"
        ddl.write_text(SHOP, encoding="utf-8")
        return tht(ws, "check", "--catalog", "ddl", "--ddl", str(ddl))
    if kind == "sqlite":
        return tht(ws, "check", "--catalog", "sqlite", "--sqlite", str(sqlite_db(tmp / "db")))
    mp.setenv("THT_CATALOG_DSN", request.getfixturevalue("shop_dsn"))
    return tht(ws, "check", "--catalog", "postgres")


def findings_by_unit(result: CliResult) -> dict[str, list[tuple[str, int, int]]]:
    out: dict[str, list[tuple[str, int, int]]] = {}
    for e in result.json["errors"]:
        name = e["path"].rsplit("/", 1)[1].removesuffix(".md")
        out.setdefault(name, []).append((e["code"], e["line"], e["column"]))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_each_broken_example_gets_its_code_at_its_line_and_column(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    where = workspace(ws, {**{n: sql for n, (sql, _) in BROKEN.items()}, "clean": CLEAN})
    result = run_check(ws, tmp_path, kind, request, monkeypatch)
    assert result.exit_code == 1, result.stdout + result.stderr
    got = findings_by_unit(result)
    want = {n: [(code, *where[n])] for n, (_, code) in BROKEN.items()}
    assert got == want, result.stdout
    summary = result.json["result"]
    assert summary["units_checked"] == len(BROKEN) + 1
    assert summary["examples_checked"] == len(BROKEN) + 1
    assert result.json["warnings"] == []
    messages = {e["path"].rsplit("/", 1)[1]: e["message"] for e in result.json["errors"]}
    assert "did you mean o.amount?" in messages["misspelt-column.md"] or (
        "did you mean amount?" in messages["misspelt-column.md"]
    )
    assert "did you mean public.orders?" in messages["misspelt-table.md"] or (
        "did you mean main.orders?" in messages["misspelt-table.md"]
    )
    assert "did you mean o?" in messages["alias-used-wrongly.md"]
    assert "did you mean total?" in messages["cte-column.md"] or kind == "sqlite"
    assert "DELETE" in messages["dml.md"]
    assert "2 statements" in messages["two-statements.md"]
    if kind == "sqlite":  # prepared, never executed: the DELETE removed nothing
        con = sqlite3.connect(tmp_path / "db" / "shop.db")
        assert con.execute("SELECT count(*) FROM orders").fetchone() == (2,)
        con.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_correct_example_checks_clean_and_its_names_are_counted(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    workspace(ws, {"clean": CLEAN})
    result = run_check(ws, tmp_path, kind, request, monkeypatch)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.json["errors"] == [] and result.json["warnings"] == []
    assert result.json["result"]["examples_checked"] == 1
    assert result.json["result"]["names_checked"] >= 10  # every table and column of it


def test_postgresql_prepares_the_examples_for_what_names_cannot_tell(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Types (E188 with PostgreSQL's message and position) and a volatile function of the
    warehouse's own (E184): both need the server; neither is executed."""
    ws = tmp_path / "ws"
    where = workspace(
        ws,
        {
            "type-error": "SELECT o.amount §+ c.name\nFROM orders AS o\n"
            "  JOIN customers AS c USING (customer_id)",
            "volatile": "SELECT o.order_id, §bump()\nFROM orders AS o",
            "clean": CLEAN,
        },
    )
    result = run_check(ws, tmp_path, "postgres", request, monkeypatch)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert findings_by_unit(result) == {
        "type-error": [("E188", *where["type-error"])],
        "volatile": [("E184", *where["volatile"])],
    }
    message = next(e["message"] for e in result.json["errors"] if e["code"] == "E188")
    assert "operator does not exist: numeric + text (42883)" in message
    assert result.json["result"]["round_trips"] <= 6


def test_sqlite_reads_its_own_dialect(tmp_path: Path) -> None:
    """Backquoted and bracketed identifiers, as BIRD's gold SQL writes them, are SQLite's
    to read: a misspelt backquoted column is found at its backquote."""
    ws = tmp_path / "ws"
    where = workspace(
        ws,
        {
            "backquoted": "SELECT `o`.`amount`, [c].[name]\nFROM `orders` AS `o`\n"
            "INNER JOIN customers AS c ON c.customer_id = o.customer_id",
            "backquoted-typo": "SELECT T1.`order_id`\nFROM orders AS T1\nWHERE §T1.`amuont` > 5",
        },
    )
    db = sqlite_db(tmp_path / "db")
    result = tht(ws, "check", "--catalog", "sqlite", "--sqlite", str(db))
    assert findings_by_unit(result) == {"backquoted-typo": [("E181", *where["backquoted-typo"])]}
    assert "did you mean amount?" in result.json["errors"][0]["message"]


def test_verify_strict_with_the_catalog_step_checks_the_examples(tmp_path: Path) -> None:
    """The gate of a pull request: the installation's catalog step includes the example
    SQL; without block its findings are warnings that keep their code and column, with
    block: true they fail verify --strict."""
    ws = tmp_path / "ws"
    where = workspace(ws, {"misspelt-column": BROKEN["misspelt-column"][0], "clean": CLEAN})
    ddl = tmp_path / "shop.sql"
    ddl.write_text(SHOP, encoding="utf-8")
    assert tht(ws, "consolidate").exit_code == 0
    for block, exit_code in ((False, 0), (True, 1)):
        inst = tmp_path / f"installation-{block}.yaml"
        section = {"kind": "ddl", "paths": [str(ddl)], "block": block}
        inst.write_text(
            json.dumps({"installation_version": 1, "evidence": {"catalog": section}}),
            encoding="utf-8",
        )
        result = tht(ws, "verify", "--strict", installation=inst)
        assert result.exit_code == exit_code, result.stdout
        found = result.json["errors"] if block else result.json["warnings"]
        catalog = [f for f in found if (f["code"] or "").startswith("E18")]
        assert [(f["code"], f["line"], f["column"]) for f in catalog] == [
            ("E181", *where["misspelt-column"])
        ]
        assert result.json["result"]["catalog"]["findings"] == {"E181": 1}


def test_what_is_not_one_read_only_query_is_refused_at_its_place(tmp_path: Path) -> None:
    """Every way a query can write, lock or change the session, each E184 at the statement,
    the clause or the call; and SQL PostgreSQL's parser does not read at all."""
    refused = {
        "insert": "§INSERT INTO orders (order_id) VALUES (1)",
        "copy": "§COPY orders TO STDOUT",
        "select-into": "§SELECT * INTO scratch FROM orders",
        "for-update": "§SELECT * FROM orders\nFOR UPDATE",
        "writing-with": "WITH §gone AS (DELETE FROM orders RETURNING order_id)\nSELECT * FROM gone",
        "nextval": "SELECT order_id, §nextval('seq')\nFROM orders",
        "advisory-lock": "SELECT §pg_advisory_lock(42)",
        "qualified-call": "SELECT §pg_catalog.setval('seq', 1)",
        "create": "§CREATE TABLE t2 AS SELECT * FROM orders",
        "set": "§SET search_path TO shop",
        "no-parse": "SELECT order_id\nFROM orders\nWHERE§",
        "empty": "§-- nothing but a comment",
    }
    ws = tmp_path / "ws"
    where = workspace(ws, refused)
    ddl = tmp_path / "shop.sql"
    ddl.write_text(SHOP, encoding="utf-8")
    result = tht(ws, "check", "--catalog", "ddl", "--ddl", str(ddl))
    assert result.exit_code == 1
    assert findings_by_unit(result) == {n: [("E184", *where[n])] for n in refused}
    assert result.json["result"]["examples_checked"] == len(refused)


# A query that prepares but fails when run: only --execute can tell.
FAILS_WHEN_RUN = {
    "sqlite": "SELECT abs(-9223372036854775807 - 1) AS x\nFROM orders",
    "postgres": "SELECT 1 / (SELECT count(*) - 2 FROM orders) AS x\nFROM orders",
}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_execute_records_results_and_warns_when_one_changed(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    workspace(
        ws,
        {
            "big-orders": "SELECT order_id, amount\nFROM orders\nWHERE amount > 10;",
            "clean": CLEAN,
            "fails-when-run": FAILS_WHEN_RUN[kind],
        },
    )
    assert tht(ws, "consolidate").exit_code == 0
    if kind == "sqlite":
        db = sqlite_db(tmp_path / "db")
        args = ["--catalog", "sqlite", "--sqlite", str(db)]
    else:
        cluster: Cluster = request.getfixturevalue("pg_cluster")
        monkeypatch.setenv(
            "THT_CATALOG_DSN", cluster.create_database("shop_execute", extra_sql=SHOP + ROWS)
        )
        args = ["--catalog", "postgres"]

    # Without the flag nothing runs: the failing query checks clean, nothing is recorded.
    plain = tht(ws, "check", *args)
    assert plain.exit_code == 0 and plain.json["warnings"] == [], plain.stdout
    assert "example_results" not in plain.json["result"]
    assert not (ws / ".evidence-cache" / "example-results.json").exists()

    first = tht(ws, "check", *args, "--execute")
    assert first.exit_code == 0, first.stdout
    results = {r["unit_id"].rsplit(":", 1)[1]: r for r in first.json["result"]["example_results"]}
    assert set(results) == {"big-orders", "clean", "fails-when-run"}
    assert results["big-orders"]["rows"] == 2 and results["big-orders"]["fingerprint"]
    assert results["fails-when-run"]["error"]
    assert [(w["code"], w["path"].rsplit("/", 1)[1]) for w in first.json["warnings"]] == [
        ("W185", "fails-when-run.md")
    ]
    again = tht(ws, "check", *args, "--execute")
    assert [w["code"] for w in again.json["warnings"]] == ["W185"]  # only the failing one

    more = "INSERT INTO orders VALUES (12, 1, 40.00, '2026-03-01');"
    if kind == "sqlite":
        con = sqlite3.connect(db)
        con.execute(more)
        con.commit()
        con.close()
    else:
        cluster.execute(more, "shop_execute")
    changed = tht(ws, "check", *args, "--execute")
    assert changed.exit_code == 0
    by_file = {w["path"].rsplit("/", 1)[1]: w["message"] for w in changed.json["warnings"]}
    assert "2 row(s) then, 3 row(s) now" in by_file["big-orders.md"]
    # on PostgreSQL the third order makes the divisor 1: the query no longer fails
    assert ("fails-when-run.md" in by_file) == (kind == "sqlite")
    # the data was read, never written: the check's own transaction changed nothing
    if kind == "sqlite":
        con = sqlite3.connect(db)
        assert con.execute("SELECT count(*) FROM orders").fetchone() == (3,)
        con.close()


def test_execute_needs_a_database(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    workspace(ws, {"clean": CLEAN})
    ddl = tmp_path / "shop.sql"
    ddl.write_text(SHOP, encoding="utf-8")
    result = tht(ws, "check", "--catalog", "ddl", "--ddl", str(ddl), "--execute")
    assert result.exit_code == 2
    assert "DDL files hold no rows" in result.json["errors"][0]["message"]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_an_example_results_store_not_in_plain_utf8_is_unreadable(
    tmp_path: Path, encoding: str
) -> None:
    """The tool writes example-results.json as UTF-8 without a BOM; a copy an editor saved
    with a BOM or as UTF-16 is W189 (no W185 'changed' from a misread), then rewritten."""
    ws = tmp_path / "ws"
    workspace(ws, {"few-orders": "SELECT order_id\nFROM orders\nWHERE amount > 1;"})
    db = sqlite_db(tmp_path / "db")
    args = ["check", "--catalog", "sqlite", "--sqlite", str(db), "--execute"]
    assert tht(ws, *args).json["warnings"] == []
    store = ws / ".evidence-cache" / "example-results.json"
    store.write_bytes(store.read_text(encoding="utf-8").encode(encoding))
    con = sqlite3.connect(db)
    con.execute("INSERT INTO orders VALUES (12, 1, 40.00, '2026-03-01')")
    con.commit()
    con.close()
    after = tht(ws, *args)
    assert after.exit_code == 0, after.stdout
    assert [w["code"] for w in after.json["warnings"]] == ["W189"], after.stdout
    assert json.loads(store.read_bytes().decode("utf-8"))["results"]  # rewritten as UTF-8
