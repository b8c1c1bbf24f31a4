"""Hostile catalog input: garbage DDL, huge files, statements PostgreSQL refuses, files
that are not SQLite.  Every one is a coded finding or error naming file and line,
never a traceback (exit 70), and the statements around a bad one still count."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cli_runner import CliResult, tht

from evidence_tool.catalog.ddl import read_ddl


def check_ddl(ws: Path, *paths: Path) -> CliResult:
    args = ["check", "--catalog", "ddl"]
    for p in paths:
        args += ["--ddl", str(p)]
    return tht(ws, *args)


def test_attack_garbage_ddl_between_good_statements_keeps_the_good_ones(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text(
        "CREATE TABLE a (x int);\n"
        "\n"
        "this is ) not ( sql at all;\n"
        "CREATE TABLE b (y int,\n"
        "  z int,,);\n"
        "CREATE TABLE c (w int);\n",
        encoding="utf-8",
    )
    catalog, findings = read_ddl([str(bad)])
    assert sorted(r.name for r in catalog.relations) == ["a", "c"]
    assert [(d.code, d.line, d.column) for d in findings] == [("E185", 3, 1), ("E185", 5, 9)]
    assert "syntax error" in findings[1].message


@pytest.mark.parametrize(
    ("name", "data", "line", "words"),
    [
        ("nul.sql", b"CREATE TABLE a (x int);\n\x00\n", 2, "NUL byte"),
        ("latin1.sql", b"CREATE TABLE a (x int);\n-- caf\xe9\n", 2, "not UTF-8"),
        ("quote.sql", b"CREATE TABLE a (x int);\nSELECT 'never closed\n;", 2, "unterminated"),
        ("deep.sql", b"SELECT " + b"(" * 20000 + b"1" + b")" * 20000 + b";\n", 1, "statement"),
        ("plpgsql.sql", b"CREATE TABLE t (a int) PARTITION BY;\n", 1, "syntax error"),
    ],
)
def test_attack_hostile_ddl_file_is_a_coded_finding(
    workspace: Path, tmp_path: Path, name: str, data: bytes, line: int, words: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    result = check_ddl(workspace, path)
    assert result.exit_code == 6, result.stdout + result.stderr
    e185 = [e for e in result.json["errors"] if e["code"] == "E185"]
    assert len(e185) == 1, e185
    assert e185[0]["path"] == str(path) and e185[0]["line"] == line
    assert words in e185[0]["message"]


def test_attack_five_megabytes_of_garbage_gives_a_bounded_report(
    workspace: Path, tmp_path: Path
) -> None:
    path = tmp_path / "huge.sql"
    chunk = "garbage ( ; " * 1000 + "\n"
    path.write_text(chunk * 440, encoding="utf-8")
    assert path.stat().st_size > 5 * 1024 * 1024
    result = check_ddl(workspace, path)
    assert result.exit_code == 6, result.stderr[-2000:]
    e185 = [e for e in result.json["errors"] if e["code"] == "E185"]
    # 20 statements reported, then one line saying the rest was skipped.
    assert len(e185) == 21
    assert sum("rest of it is skipped" in e["message"] for e in e185) == 1


def test_attack_valid_ddl_of_five_megabytes_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.sql"
    cols = ", ".join(f"c{i} numeric(12,2)" for i in range(200))
    path.write_text(
        "".join(f"CREATE TABLE s.t{n} ({cols});\n" for n in range(1400)), encoding="utf-8"
    )
    assert path.stat().st_size > 5 * 1024 * 1024
    catalog, findings = read_ddl([str(path)])
    assert findings == [] and len(catalog.relations) == 1400


def test_attack_sqlite_path_that_is_not_a_database(workspace: Path, tmp_path: Path) -> None:
    fake = tmp_path / "warehouse.db"
    fake.write_bytes(b"CREATE TABLE not_sqlite (x int);\n" * 100)
    result = tht(workspace, "check", "--catalog", "sqlite", "--sqlite", str(fake))
    assert result.exit_code == 6
    assert [e["code"] for e in result.json["errors"]] == ["E186"]
    assert result.json["errors"][0]["path"] == str(fake)


def test_attack_sqlite_check_never_writes_the_database(workspace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    db = folder / "w.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (x int)")
    con.commit()
    con.close()
    before = (db.read_bytes(), db.stat().st_mtime_ns)
    db.chmod(0o444)
    result = tht(workspace, "check", "--catalog", "sqlite", "--sqlite", f"main={db}")
    assert result.exit_code == 1  # the fixture units name tables this file lacks
    assert {e["code"] for e in result.json["errors"]} == {"E180"}
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert sorted(p.name for p in folder.iterdir()) == ["w.db"]  # no journal, no -wal


def test_attack_many_statements_cost_no_line_count_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Line numbers are counted from the file's start: counting them for every clean
    statement made a 40,000-table file quadratic. Counted: only for findings."""
    from evidence_tool.catalog import ddl

    counted: list[int] = []
    leading = ddl._leading_lines

    def counting(sql: str) -> int:
        counted.append(1)
        return leading(sql)

    monkeypatch.setattr(ddl, "_leading_lines", counting)
    path = tmp_path / "wide.sql"
    tables = 3_000
    path.write_text(
        "".join(f"CREATE TABLE w.t{n} (id int, label text);\n" for n in range(tables))
        + "CREATE TABLE w.t7 (again int);\n"  # one finding: created twice
    )
    catalog, findings = read_ddl([str(path)])
    assert len([r for r in catalog.relations if r.schema == "w"]) == tables
    assert [f.line for f in findings] == [tables + 1]
    assert len(counted) == len(findings) == 1
