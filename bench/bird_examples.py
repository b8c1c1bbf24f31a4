"""BIRD's gold SQL of one database, through the BIRD importer, checked against it.

    python bench/bird_examples.py --dev-json dev.json --db-id california_schools \\
        (--sqlite california_schools.sqlite | --columns-csv COLUMNS.csv --tables-csv TABLES.csv)
        [--rename TABLE.COLUMN=NEW]

The questions of ``--db-id`` are imported as example units (sources add, refresh,
decide replace, in a temporary workspace) and checked with ``check --catalog sqlite``
against the database: BIRD's own ``.sqlite`` file, or, when only its schema is at
hand, an empty database rebuilt from a column list in ThothAI's ``setup_csv`` layout
(``id, original_column_name, ..., data_format, ..., sql_table_id``; names and order
are what the names check needs, rows are not).  Then one column is renamed in a copy
and the examples with findings are compared with the examples whose SQL names the
column (an identifier token of that spelling, any case): the two sets should be equal.
Nothing here is committed; the figures go into docs/catalog.md.  CI runs the same
check on a database of our own (tests/catalog/test_bird_examples.py).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from cli_runner import invoke  # noqa: E402


def tht(ws: Path, *args: str) -> dict[str, object]:
    done = invoke(["workspace", "evidence", *args, "--workspace-root", str(ws), "--json"])
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def schema_from_csv(columns: Path, tables: Path, out: Path) -> Path:
    names = {row["id"]: row["name"] for row in csv.DictReader(tables.open(encoding="utf-8"))}
    by_table: dict[str, list[tuple[int, str, str]]] = {}
    for row in csv.DictReader(columns.open(encoding="utf-8")):
        table = names.get(row["sql_table_id"])
        if table is not None:
            col = (int(row["id"]), row["original_column_name"].strip(), row["data_format"])
            by_table.setdefault(table, []).append(col)
    con = sqlite3.connect(out)
    for table, cols in by_table.items():
        spec = ", ".join(f'"{c}" {t or ""}' for _, c, t in sorted(cols))
        con.execute(f'CREATE TABLE "{table}" ({spec})')
    con.commit()
    con.close()
    return out


def import_questions(ws: Path, dev: Path, db_id: str) -> int:
    questions = [q for q in json.loads(dev.read_text(encoding="utf-8")) if q["db_id"] == db_id]
    folder = ws / "imports" / "bird"
    folder.mkdir(parents=True)
    (folder / "dev.json").write_text(json.dumps(questions), encoding="utf-8")
    assert invoke(["workspace", "new", str(ws), "--id", "bird", "--language", "en"]).exit_code == 0
    tht(ws, "init")
    tht(ws, "sources", "add", "--format", "bird", str(folder), "--language", "en")
    sid = hashlib.sha256(b"import:bird:imports/bird").hexdigest()
    tht(ws, "refresh", "--source-id", sid)
    shown = tht(ws, "sources", "show", sid)["result"]
    assert isinstance(shown, dict)
    decided = tht(
        ws,
        "decide",
        "--source-id",
        sid,
        "--revision",
        str(shown["pending_comparison"]),
        "--decision",
        "replace",
    )
    assert decided["ok"], decided
    return len(questions)


def check(ws: Path, db: Path, db_id: str) -> dict[str, object]:
    return tht(ws, "check", "--catalog", "sqlite", "--sqlite", f"{db_id}={db}")


def example_findings(result: dict[str, object]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in result["errors"]:  # type: ignore[attr-defined]
        if "/example/" in (e["path"] or ""):
            out.setdefault(e["unit_id"], []).append(f"{e['code']} {e['message']}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dev-json", type=Path, required=True)
    ap.add_argument("--db-id", default="california_schools")
    ap.add_argument("--sqlite", type=Path)
    ap.add_argument("--columns-csv", type=Path)
    ap.add_argument("--tables-csv", type=Path)
    ap.add_argument("--rename", default="satscores.NumTstTakr=NumTestTakers")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tht-bird-") as tmp:
        root = Path(tmp)
        if args.sqlite:
            db = root / "db.sqlite"
            shutil.copy(args.sqlite, db)
        else:
            db = schema_from_csv(args.columns_csv, args.tables_csv, root / "db.sqlite")
        ws = root / "ws"
        n = import_questions(ws, args.dev_json, args.db_id)
        start = time.perf_counter()
        clean = check(ws, db, args.db_id)
        took = time.perf_counter() - start
        result = clean["result"]
        assert isinstance(result, dict)
        found = example_findings(clean)
        warned = [w for w in clean["warnings"] if "/example/" in (w["path"] or "")]  # type: ignore[attr-defined]
        print(f"{args.db_id}: {n} questions, {result['examples_checked']} example SQL blocks")
        print(f"  names checked {result['names_checked']}, check took {took:.2f} s")
        print(f"  examples with findings: {len(found)}, with warnings: {len(warned)}")
        for uid, msgs in sorted(found.items()):
            print(f"    {uid}: {'; '.join(msgs)}")
        others = {e["code"] for e in clean["errors"] if "/example/" not in (e["path"] or "")}  # type: ignore[attr-defined]
        codes = [e["code"] for e in clean["errors"] if "/example/" not in (e["path"] or "")]  # type: ignore[attr-defined]
        units = {e["unit_id"] for e in clean["errors"] if "/example/" not in (e["path"] or "")}  # type: ignore[attr-defined]
        print(
            f"  other units: {len(codes)} finding(s) on {len(units)} unit(s), codes {sorted(others)}"
        )

        target, new = args.rename.split("=", 1)
        table, column = target.split(".", 1)
        copy = root / "renamed.sqlite"
        shutil.copy(db, copy)
        con = sqlite3.connect(copy)
        con.execute(f'ALTER TABLE "{table}" RENAME COLUMN "{column}" TO "{new}"')
        con.commit()
        con.close()
        renamed = example_findings(check(ws, copy, args.db_id))
        from evidence_tool.catalog.example_sqlite import tokens

        users = set()
        for path in (ws / "evidence" / "curated" / "example").glob("*.md"):
            text = path.read_text(encoding="utf-8")
            sql = text[text.find("```sql") + 6 :].split("```", 1)[0]
            # an identifier token spelled as the column (SQLite's case rule), wherever it is
            if any(t.name == column.lower() for t in tokens(sql) if t.kind in ("word", "quoted")):
                users.add(re.search(r"^id: (.+)$", text, re.M).group(1))  # type: ignore[union-attr]
        new_findings = set(renamed) - set(found)
        print(f"renamed {target} -> {new}:")
        print(f"  examples whose SQL names it (tokens):      {len(users)}")
        print(f"  examples with new findings:                {len(new_findings)}")
        print(f"  equal: {users == new_findings}")
        for uid in sorted(users ^ new_findings):
            print(f"    differs: {uid}")


if __name__ == "__main__":
    main()
