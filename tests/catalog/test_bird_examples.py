"""BIRD's gold SQL, as the BIRD importer turns it into example units, checked by the
warehouse's own SQLite engine in SQLite's dialect (backquoted names with spaces and
parentheses, T1/T2 aliases).  The database is our own, in the shape of BIRD's
``california_schools`` (schools, frpm, satscores; CI has no network, and BIRD's files
are not ours to commit); bench/bird_examples.py runs the same check on the real one.

Every gold query checks clean; renaming one column in a copy of the database gives
findings on exactly the examples whose SQL uses it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from catalog_helpers import write_units
from cli_runner import CliResult, invoke, tht

DB = "california_schools"
SCHEMA = """
CREATE TABLE schools (
  CDSCode TEXT PRIMARY KEY, NCESDist TEXT, County TEXT, District TEXT, School TEXT,
  City TEXT, Zip TEXT, Charter INTEGER, FundingType TEXT, OpenDate DATE, Virtual TEXT,
  Latitude REAL, Longitude REAL
);
CREATE TABLE frpm (
  CDSCode TEXT PRIMARY KEY REFERENCES schools, `Academic Year` TEXT, `County Name` TEXT,
  `District Name` TEXT, `School Name` TEXT, `Educational Option Type` TEXT,
  `Low Grade` TEXT, `High Grade` TEXT, `Charter School (Y/N)` INTEGER,
  `Enrollment (K-12)` REAL, `Free Meal Count (K-12)` REAL, `FRPM Count (K-12)` REAL
);
CREATE TABLE satscores (
  cds TEXT PRIMARY KEY REFERENCES schools, rtype TEXT, sname TEXT, dname TEXT, cname TEXT,
  enroll12 INTEGER, NumTstTakr INTEGER, AvgScrRead INTEGER, AvgScrMath INTEGER,
  AvgScrWrite INTEGER, NumGE1500 INTEGER
);
INSERT INTO schools VALUES ('01100170109835', '0691051', 'Alameda', 'Alameda Unified',
  'Island High', 'Alameda', '94501', 0, NULL, '1985-09-01', 'F', 37.76, -122.24);
INSERT INTO frpm VALUES ('01100170109835', '2014-2015', 'Alameda', 'Alameda Unified',
  'Island High', 'Continuation School', '9', '12', 0, 150, 60, 75);
INSERT INTO satscores VALUES ('01100170109835', 'S', 'Island High', 'Alameda Unified',
  'Alameda', 40, 12, 410, 420, 400, 2);
"""
# Our own questions, written as BIRD writes its gold SQL (SQLite's dialect).
QUESTIONS = [
    (
        "What is the highest free meal rate for K-12 students in Alameda County?",
        "SELECT `Free Meal Count (K-12)` / `Enrollment (K-12)` FROM frpm "
        "WHERE `County Name` = 'Alameda' "
        "ORDER BY (CAST(`Free Meal Count (K-12)` AS REAL) / `Enrollment (K-12)`) DESC LIMIT 1",
    ),
    (
        "Give the zip codes of the charter schools of the Fresno County Office of Education.",
        "SELECT T2.Zip FROM frpm AS T1 INNER JOIN schools AS T2 ON T1.CDSCode = T2.CDSCode "
        "WHERE T1.`District Name` = 'Fresno County Office of Education' "
        "AND T1.`Charter School (Y/N)` = 1",
    ),
    (
        "Which three schools with an average reading score over 500 had the most test takers?",
        "SELECT sname FROM satscores WHERE AvgScrRead > 500 ORDER BY NumTstTakr DESC LIMIT 3",
    ),
    (
        "How many schools in Contra Costa have an average math score over 560?",
        "SELECT COUNT(T1.cds) FROM satscores AS T1 INNER JOIN schools AS T2 "
        "ON T1.cds = T2.CDSCode WHERE T2.County = 'Contra Costa' AND T1.AvgScrMath > 560",
    ),
    (
        "Which school with test takers over 1500 has the best average writing score?",
        "SELECT T2.School, T1.AvgScrWrite FROM satscores AS T1 INNER JOIN schools AS T2 "
        "ON T1.cds = T2.CDSCode WHERE T1.NumGE1500 > 0 ORDER BY T1.AvgScrWrite DESC LIMIT 1",
    ),
    (
        "Name the continuation schools with more than 100 students enrolled.",
        "SELECT `School Name` FROM frpm WHERE `Educational Option Type` = "
        "'Continuation School' AND `Enrollment (K-12)` > 100",
    ),
    (
        "In each city, what is the highest free meal rate?",
        "WITH rates AS (SELECT CDSCode, `Free Meal Count (K-12)` / `Enrollment (K-12)` AS rate "
        "FROM frpm) SELECT T2.City, MAX(T1.rate) FROM rates AS T1 "
        "INNER JOIN schools AS T2 ON T2.CDSCode = T1.CDSCode GROUP BY T2.City",
    ),
    (
        "What is the latitude of the school with the most SAT test takers?",
        "SELECT T2.Latitude FROM satscores AS T1 INNER JOIN schools AS T2 "
        "ON T1.cds = T2.CDSCode ORDER BY T1.NumTstTakr DESC LIMIT 1",
    ),
    (
        "Which districts have directly funded non-virtual schools opened after 2000?",
        "SELECT District FROM schools WHERE strftime('%Y', OpenDate) > '2000' "
        "AND Virtual = 'F' AND FundingType = 'Directly funded'",
    ),
    (
        "What share of the schools whose lowest grade is kindergarten are charter schools?",
        "SELECT CAST(SUM(CASE WHEN T2.Charter = 1 THEN 1 ELSE 0 END) AS REAL) * 100 / COUNT(*) "
        "FROM frpm AS T1 INNER JOIN schools AS T2 USING (CDSCode) WHERE T1.`Low Grade` = 'K'",
    ),
]
NUM_TEST_TAKERS = {2, 7}  # the questions whose SQL reads satscores.NumTstTakr
ENROLLMENT = {0, 5, 6}  # the questions whose SQL reads frpm.`Enrollment (K-12)`


def database(path: Path, extra: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(SCHEMA + extra)
    con.commit()
    con.close()
    return path


def imported(ws: Path) -> None:
    """Our questions through the BIRD importer (sources add, refresh, decide replace)."""
    rel = "imports/bird"
    dev = [
        {
            "question_id": i,
            "db_id": DB,
            "question": q,
            "evidence": "",
            "SQL": sql,
            "difficulty": "simple",
        }
        for i, (q, sql) in enumerate(QUESTIONS)
    ]
    write_units(ws, {f"{rel}/dev.json": json.dumps(dev, indent=1)})
    added = tht(ws, "sources", "add", "--format", "bird", str(ws / rel), "--language", "en")
    assert added.exit_code == 0, added.stdout + added.stderr
    sid = hashlib.sha256(f"import:bird:{rel}".encode()).hexdigest()
    refreshed = tht(ws, "refresh", "--source-id", sid)
    assert refreshed.exit_code == 0, refreshed.stdout + refreshed.stderr
    shown = tht(ws, "sources", "show", sid).json["result"]
    decided = tht(
        ws,
        "decide",
        "--source-id",
        sid,
        "--revision",
        shown["pending_comparison"],
        "--decision",
        "replace",
    )
    assert decided.exit_code == 0, decided.stdout + decided.stderr


def check(ws: Path, db: Path) -> CliResult:
    return tht(ws, "check", "--catalog", "sqlite", "--sqlite", f"{DB}={db}")


def findings(result: CliResult) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for e in result.json["errors"]:
        out.setdefault(e["unit_id"], []).append(e)
    return out


def question_id(i: int) -> str:
    return f"evidence:bird:{DB}.q{i}"


def test_birds_gold_sql_checks_clean_and_a_renamed_column_lands_on_its_examples(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    made = invoke(["workspace", "new", str(ws), "--id", "bird", "--language", "en"])
    assert made.exit_code == 0, made.stderr
    assert tht(ws, "init").exit_code == 0
    imported(ws)
    examples = sorted((ws / "evidence/curated/example").glob("*.md"))
    assert len(examples) == len(QUESTIONS)
    assert "`Free Meal Count (K-12)`" in examples[0].read_text(encoding="utf-8")

    clean = check(ws, database(tmp_path / "db" / "cs.sqlite"))
    assert clean.exit_code == 0, clean.stdout
    assert clean.json["errors"] == [] and clean.json["warnings"] == []
    assert clean.json["result"]["examples_checked"] == len(QUESTIONS)
    assert clean.json["result"]["names_checked"] >= 2 * len(QUESTIONS)

    for column, renamed, users in (
        (
            "satscores.NumTstTakr",
            "satscores RENAME COLUMN NumTstTakr TO NumTestTakers",
            NUM_TEST_TAKERS,
        ),
        (
            "frpm.`Enrollment (K-12)`",
            "frpm RENAME COLUMN `Enrollment (K-12)` TO `Enrolment`",
            ENROLLMENT,
        ),
    ):
        copy = database(tmp_path / column.split(".")[0] / "cs.sqlite", f"ALTER TABLE {renamed};")
        result = check(ws, copy)
        assert result.exit_code == 1, result.stdout
        found = findings(result)
        assert set(found) == {question_id(i) for i in users}, column
        for uid, errors in found.items():
            assert [e["code"] for e in errors] == ["E181"], errors
            text = (ws / errors[0]["path"]).read_text(encoding="utf-8").split("\n")
            line = text[errors[0]["line"] - 1]
            # the finding points at the old name as the SQL writes it
            old = column.split(".")[1]
            assert line[errors[0]["column"] - 1 :].lstrip("T1.").startswith(old), (uid, line)
            assert "did you mean" in errors[0]["message"], errors[0]["message"]
