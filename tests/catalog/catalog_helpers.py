"""Build the fixture warehouse as DDL files or SQLite databases, and broken units."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WAREHOUSE = REPO / "fixtures" / "warehouse"
SCHEMAS = ("admin", "clinical", "lab", "pharmacy")

# The fixture's examples SQLite cannot parse (::date, TIMESTAMP '...', INTERVAL): against
# the fixture warehouse loaded into SQLite they are W184, their names checked all the same.
PG_DIALECT_EXAMPLES = [
    f"evidence/curated/example/{name}.md"
    for name in (
        "accessi-ps-codice-rosso",
        "admissions-per-month",
        "antibiotic-ddd-icu",
        "degenza-media-cardiologia",
        "hba1c-above-threshold",
    )
]


def sqlite_dialect_warnings(result_json: dict[str, object]) -> list[object]:
    """The warnings of a check, less the fixture's W184 (see PG_DIALECT_EXAMPLES)."""
    warnings = result_json["warnings"]
    assert isinstance(warnings, list)
    return [w for w in warnings if not (w["code"] == "W184" and w["path"] in PG_DIALECT_EXAMPLES)]


def warehouse_files() -> list[Path]:
    files = sorted(WAREHOUSE.glob("*.sql"))
    assert len(files) >= 5, files
    return files


def data_files() -> list[Path]:
    """The fixture warehouse's rows: loaded after every DDL file (INSERTs only)."""
    files = sorted((WAREHOUSE / "data").glob("*.sql"))
    assert len(files) >= 4, files
    return files


def build_sqlite(folder: Path, extra_sql: str = "") -> list[str]:
    """The fixture warehouse and its rows loaded by SQLite itself, one database file per
    schema (SQLite's ATTACH gives ``schema.table`` names); returns the --sqlite arguments."""
    folder.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(":memory:")
    try:
        for schema in SCHEMAS:
            con.execute(f"ATTACH DATABASE ? AS {schema}", (str(folder / f"{schema}.db"),))
        for path in warehouse_files():
            sql = path.read_text(encoding="utf-8")
            if "CREATE SCHEMA" in sql:
                continue  # PostgreSQL's schemas are SQLite's attached files
            if "CREATE VIEW" in sql:
                # A stored SQLite view may only name tables of its own file, unqualified.
                sql = re.sub(r"\b(FROM|JOIN) \w+\.", r"\1 ", sql)
            con.executescript(sql)
        for path in data_files():
            con.executescript(path.read_text(encoding="utf-8"))
        if extra_sql:
            con.executescript(extra_sql)
        con.commit()
    finally:
        con.close()
    return [f"{schema}={folder / f'{schema}.db'}" for schema in SCHEMAS]


def catalog_args(kind: str, tmp: Path, extra_sql: str = "") -> list[str]:
    """``--catalog KIND`` and its sources for the fixture warehouse (plus ``extra_sql``)."""
    if kind == "ddl":
        args = ["--catalog", "ddl", "--ddl", str(WAREHOUSE)]
        if extra_sql:
            extra = tmp / "99-extra.sql"
            extra.write_text(extra_sql, encoding="utf-8")
            args += ["--ddl", str(extra)]
        return args
    args = ["--catalog", "sqlite"]
    for given in build_sqlite(tmp / "sqlite", extra_sql):
        args += ["--sqlite", given]
    return args


def write_units(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def formula(name: str, tables: list[str], columns: list[str], sql: str) -> str:
    cols = "\n".join(f"- {c}" for c in columns)
    return (
        "---\n"
        "schema_version: 4\n"
        f"id: evidence:test:{name}\n"
        "kind: formula\n"
        "language: en\n"
        "purposes: [sql_generation]\n"
        "applies_to:\n"
        f"  tables: [{', '.join(tables)}]\n"
        "---\n\n"
        f"# {name}\n\n"
        "## Concept\n\n"
        f"{name}\n\n"
        "## Columns\n\n"
        f"{cols}\n\n"
        "## SQL\n\n"
        "```sql\n"
        f"{sql}\n"
        "```\n"
    )


def domain(name: str, tables: list[str], columns: list[str]) -> str:
    return (
        "---\n"
        "schema_version: 4\n"
        f"id: evidence:test:{name}\n"
        "kind: domain\n"
        "language: en\n"
        "purposes: [sql_generation]\n"
        "applies_to:\n"
        f"  tables: [{', '.join(tables)}]\n"
        f"  columns: [{', '.join(columns)}]\n"
        "---\n\n"
        f"# {name}\n\n"
        "## Rule\n\n"
        "A rule.\n"
    )


def enum(name: str, column: str) -> str:
    return (
        "---\n"
        "schema_version: 4\n"
        f"id: evidence:test:{name}\n"
        "kind: enum\n"
        "language: it\n"
        "purposes: [sql_generation]\n"
        "---\n\n"
        f"# {name}\n\n"
        "## Colonna\n\n"
        f"{column}\n\n"
        "## Valori\n\n"
        '### "A"\n\n'
        "Attivo.\n"
    )
