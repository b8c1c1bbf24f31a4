"""``tht workspace evidence check`` against the fixture warehouse: DDL files and SQLite.

Every fixture unit checks clean; each deliberately broken unit, or each change of
the warehouse, gets its exact finding (code, file, line, column, did-you-mean) in
both catalog kinds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from catalog_helpers import PG_DIALECT_EXAMPLES, catalog_args, domain, enum, formula, write_units
from cli_runner import CliResult, tht

KINDS = ("ddl", "sqlite")


def check(ws: Path, tmp: Path, kind: str, extra_sql: str = "", *more: str) -> CliResult:
    return tht(ws, "check", *catalog_args(kind, tmp, extra_sql), *more)


def names_in(ws: Path) -> int:
    """Every table and column name the fixture units hold, counted without the checker:
    metadata lists, the Tables/Columns/Column fields, and each column reference of a
    formula's SQL (pglast's ColumnRef nodes, by their JSON)."""
    from pglast import parser

    from evidence_tool.unit import parse

    total = 0
    for path in sorted((ws / "evidence/curated").glob("*/*.md")):
        unit = parse(path.read_bytes())
        payload = unit.payload
        total += len(unit.metadata.applies_to.tables) + len(unit.metadata.applies_to.columns)
        total += len(getattr(payload, "tables", ())) + len(getattr(payload, "columns", ()))
        total += 1 if unit.kind == "enum" else 0
        if unit.kind == "formula":
            total += parser.parse_sql_json("SELECT " + payload.sql).count('"ColumnRef"')  # type: ignore[attr-defined]
        if unit.kind == "example":  # each relation and column reference of its SQL
            for sql in re.findall(r"```sql\n(.*?)```", payload.interpretation, re.S):  # type: ignore[attr-defined]
                tree = parser.parse_sql_json(sql)
                total += tree.count('"RangeVar"') + tree.count('"ColumnRef"')
    return total


def found(result: CliResult) -> list[tuple[str, str, int, int]]:
    return [(e["code"], e["path"], e["line"], e["column"]) for e in result.json["errors"]]


@pytest.mark.parametrize("kind", KINDS)
def test_every_fixture_unit_checks_clean(workspace: Path, tmp_path: Path, kind: str) -> None:
    result = check(workspace, tmp_path, kind)
    assert result.exit_code == 0, result.stdout + result.stderr
    summary = result.json["result"]
    units = len(list((workspace / "evidence/curated").glob("*/*.md")))
    assert units == 48 and summary["units_checked"] == units
    if kind == "ddl":
        assert summary["names_checked"] == names_in(workspace) == 271
        assert result.json["warnings"] == []
    else:  # SQLite's engine counts the columns it reads; the rest are PostgreSQL's SQL
        assert summary["names_checked"] > 179
        assert sorted(w["path"] for w in result.json["warnings"]) == PG_DIALECT_EXAMPLES
        assert {w["code"] for w in result.json["warnings"]} == {"W184"}
    assert summary["examples_checked"] == 6
    assert summary["catalog"]["relations"] == 19  # 18 tables and the view
    assert len(summary["catalog"]["fingerprint"]) == 19


@pytest.mark.parametrize("kind", KINDS)
def test_broken_units_get_their_exact_findings(workspace: Path, tmp_path: Path, kind: str) -> None:
    cur = "evidence/curated"
    write_units(
        workspace,
        {
            # a table name with a typo (the warehouse calls it ward_census)
            f"{cur}/domain/census.md": domain(
                "census", ["admin.ward_cencus"], ["admin.wards.ward_name"]
            ),
            # a misspelt column
            f"{cur}/domain/stay.md": domain(
                "stay", ["clinical.admissions"], ["clinical.admissions.admision_date"]
            ),
            # patient_id is a column of both tables
            f"{cur}/formula/ambiguous.md": formula(
                "ambiguous",
                ["admin.patients", "clinical.admissions"],
                ["admin.patients.birth_date"],
                "count(DISTINCT patient_id)",
            ),
            # the formula reads a table the unit does not name, and a missing column
            f"{cur}/formula/outside.md": formula(
                "outside",
                ["clinical.admissions"],
                ["clinical.admissions.admission_date", "clinical.admissions.admission_tss"],
                "clinical.admissions.admission_date\n  - lab.results.value + admision_date",
            ),
            f"{cur}/enum/consent.md": enum("consent", "admin.patients.research_consnt"),
        },
    )
    result = check(workspace, tmp_path, kind)
    assert result.exit_code == 1, result.stdout
    assert found(result) == [
        ("E180", f"{cur}/domain/census.md", 8, 12),
        ("E181", f"{cur}/domain/stay.md", 9, 13),
        ("E181", f"{cur}/enum/consent.md", 13, 1),
        ("E182", f"{cur}/formula/ambiguous.md", 24, 16),
        ("E181", f"{cur}/formula/outside.md", 20, 3),
        ("E183", f"{cur}/formula/outside.md", 26, 5),
        ("E181", f"{cur}/formula/outside.md", 26, 25),
    ]
    messages = {
        (e["path"].rsplit("/", 1)[1], e["code"]): e["message"] for e in result.json["errors"]
    }
    assert "did you mean admin.ward_census?" in messages[("census.md", "E180")]
    assert "did you mean admission_date?" in messages[("stay.md", "E181")]
    assert "did you mean research_consent?" in messages[("consent.md", "E181")]
    assert "admin.patients, clinical.admissions" in messages[("ambiguous.md", "E182")]
    assert "add lab.results to applies_to.tables" in messages[("outside.md", "E183")]
    outside = [e["message"] for e in result.json["errors"] if e["path"].endswith("outside.md")]
    assert "did you mean admission_ts?" in outside[0]
    assert "did you mean admission_date?" in outside[2]
    assert all(e["hint"] and e["unit_id"] for e in result.json["errors"])


@pytest.mark.parametrize("kind", KINDS)
def test_a_renamed_table_and_a_dropped_column_show_on_the_units_that_use_them(
    workspace: Path, tmp_path: Path, kind: str
) -> None:
    change = (
        "ALTER TABLE lab.tests RENAME TO test_catalog;\n"
        "ALTER TABLE admin.wards DROP COLUMN location_note;\n"
    )
    result = check(workspace, tmp_path, kind, change)
    assert result.exit_code == 1, result.stdout
    by_file: dict[str, list[tuple[str, int, int]]] = {}
    for code, path, line, column in found(result):
        by_file.setdefault(path.rsplit("/", 2)[-2] + "/" + path.rsplit("/", 1)[-1], []).append(
            (code, line, column)
        )
    assert by_file == {
        "glossary/ward.md": [("E181", 10, 65)],
        "mapping/lab-test.md": [
            ("E180", 9, 25),
            ("E180", 21, 3),
            ("E180", 26, 3),
            ("E180", 27, 3),
            ("E180", 28, 3),
        ],
        "reference/loinc-mapping.md": [("E180", 8, 12), ("E180", 9, 13)],
        # the last one in its SQL: FROM lab.tests
        "example/hba1c-above-threshold.md": [("E180", 9, 25), ("E180", 10, 32), ("E180", 38, 6)],
    }
    renamed = [e for e in result.json["errors"] if e["code"] == "E180"]
    assert len(renamed) == 10
    assert all("lab.test_catalog" in e["message"] for e in renamed)
    columns = [e["message"] for e in renamed if "applies_to.columns" in e["message"]]
    assert (
        columns
        == [
            "applies_to.columns names lab.tests.loinc_code, whose table lab.tests is not a table "
            "or view of the catalog; did you mean lab.test_catalog.loinc_code?"
        ]
        * 2
    )


def test_unqualified_reference_resolves_through_the_units_tables_in_sqlite_case_rules(
    workspace: Path, tmp_path: Path
) -> None:
    """SQLite matches names case-insensitively; PostgreSQL DDL does not fold quoted names."""
    unit = formula(
        "dose", ["pharmacy.administrations"], ['pharmacy.administrations."dosemg"'], '"dosemg" * 2'
    )
    write_units(workspace, {"evidence/curated/formula/dose.md": unit})
    ddl = check(workspace, tmp_path, "ddl")
    assert [(c, line) for c, _, line, _ in found(ddl)] == [("E181", 19), ("E181", 24)]
    assert all("did you mean DoseMg?" in e["message"] for e in ddl.json["errors"])
    assert check(workspace, tmp_path / "s", "sqlite").exit_code == 0


def test_a_whole_row_reference_to_a_unit_table_is_not_a_missing_column(
    workspace: Path, tmp_path: Path
) -> None:
    unit = formula(
        "wards", ["admin.wards"], ["admin.wards.ward_code"], "count(wards) + count(ward)"
    )
    write_units(workspace, {"evidence/curated/formula/wards.md": unit})
    result = check(workspace, tmp_path, "ddl")
    assert found(result) == [("E181", "evidence/curated/formula/wards.md", 24, 22)]
    assert "has a column ward;" in result.json["errors"][0]["message"]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_positions_hold_for_crlf_files_and_italian_mapping_fields(
    workspace: Path, tmp_path: Path, newline: str
) -> None:
    text = (
        "---\nschema_version: 4\nid: evidence:test:reparti\nkind: mapping\nlanguage: it\n"
        "purposes: [schema_linking]\n---\n\n# Reparti\n\n## Concetto\n\nreparto\n\n"
        "## Tabelle\n\n- admin.wards\n- admin.reparti\n\n"
        '## Colonne\n\n- admin.wards.ward_code\n- "admin.wards.ward_nam"\n'
    )
    path = workspace / "evidence/curated/mapping/reparti.md"
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    result = check(workspace, tmp_path, "ddl")
    assert found(result) == [
        ("E180", "evidence/curated/mapping/reparti.md", 18, 3),
        ("E181", "evidence/curated/mapping/reparti.md", 23, 3),
    ]
    messages = [e["message"] for e in result.json["errors"]]
    assert messages[0].startswith("## Tabelle names admin.reparti,")
    assert messages[1].startswith("## Colonne names admin.wards.ward_nam,")
    assert messages[1].endswith("did you mean ward_name?")
