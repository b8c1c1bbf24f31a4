"""The catalog against a live PostgreSQL (a throwaway cluster the tests start), the DDL
files and an SQLite file built from the same rows: the fixture units check clean in
all three, each broken unit gets its exact finding in every kind where it applies,
formulas are type-checked (PostgreSQL) and enum values sampled (PostgreSQL, SQLite).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from catalog_helpers import (
    PG_DIALECT_EXAMPLES,
    build_sqlite,
    catalog_args,
    enum,
    formula,
    write_units,
)
from catalog_helpers import sqlite_dialect_warnings as without_w184
from cli_runner import CliResult, tht
from pg_cluster import Cluster, warehouse_sql

from evidence_tool.catalog.model import Column

KINDS = ("ddl", "sqlite", "postgres")
_names = itertools.count()


def check(
    ws: Path,
    tmp: Path,
    kind: str,
    cluster: Cluster | None,
    monkeypatch: pytest.MonkeyPatch,
    *more: str,
    extra_sql: str = "",
) -> CliResult:
    if kind != "postgres":
        return tht(ws, "check", *catalog_args(kind, tmp, extra_sql), *more)
    assert cluster is not None
    dsn = cluster.dsn()
    if extra_sql:
        dsn = cluster.create_database(f"w{next(_names)}", *warehouse_sql(), extra_sql=extra_sql)
    monkeypatch.setenv("THT_CATALOG_DSN", dsn)
    return tht(ws, "check", "--catalog", "postgres", *more)


@pytest.fixture
def live(request: pytest.FixtureRequest) -> Cluster | None:
    """The session's cluster, for the postgres kind only (the others need no server)."""
    kind = request.node.callspec.params.get("kind")
    return request.getfixturevalue("pg_cluster") if kind == "postgres" else None  # type: ignore[no-any-return]


FIXTURE_TYPES = {
    "age-at-admission.md": "integer",
    "bed-occupancy-rate.md": "numeric",
    "defined-daily-doses.md": "numeric",
    "giornate-di-degenza.md": "integer",
    "hba1c-ifcc-from-ngsp.md": "numeric",
    "tasso-di-mortalita.md": "numeric",
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_fixture_unit_checks_clean_in_every_kind(
    workspace: Path,
    tmp_path: Path,
    kind: str,
    live: Cluster | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    more = () if kind == "ddl" else ("--sample-values",)
    result = check(workspace, tmp_path, kind, live, monkeypatch, *more)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.json["errors"] == [] and without_w184(result.json) == []
    summary = result.json["result"]
    assert summary["units_checked"] == 48 and summary["examples_checked"] == 6
    if kind == "sqlite":  # the fixture's SQL is PostgreSQL's: see PG_DIALECT_EXAMPLES
        assert sorted(w["path"] for w in result.json["warnings"]) == PG_DIALECT_EXAMPLES
        assert summary["names_checked"] > 179
    else:  # 179 names in metadata, fields and formulas, 92 in the examples' SQL
        assert result.json["warnings"] == [] and summary["names_checked"] == 271
    assert summary["catalog"]["relations"] == 19
    if kind == "ddl":
        assert "formula_types" not in summary and "enums_sampled" not in summary
        return
    assert summary["enums_sampled"] == 6  # every enum of the fixture compared, none skipped
    if kind == "postgres":
        types = {t["path"].rsplit("/", 1)[1]: t["type"] for t in summary["formula_types"]}
        assert types == FIXTURE_TYPES
        # setup, catalog (with the volatile functions), one pipeline of formulas, type
        # names, samples, and one pipeline preparing the examples
        assert summary["round_trips"] == 6


def test_the_live_catalog_matches_the_ddl_catalog_relation_by_relation(
    workspace: Path, tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """format_type's spelling of every column type is what the DDL reader writes, so a
    fingerprint taken from DDL files and one taken from the live warehouse agree."""
    ddl = check(workspace, tmp_path, "ddl", None, monkeypatch).json["result"]["catalog"]
    pg = check(workspace, tmp_path, "postgres", pg_cluster, monkeypatch).json["result"]
    assert len(ddl["fingerprint"]) == 19
    assert pg["catalog"]["fingerprint"] == ddl["fingerprint"]


CUR = "evidence/curated"
# Each broken unit, the finding it must get (code, line, column), and the kinds it
# applies to: E188 needs PostgreSQL's parser, W186/W187 need stored rows.
BROKEN = {
    "renamed-table": (
        formula(
            "renamed-table",
            ["clinical.admission"],
            ["clinical.admissions.admission_date"],
            "count(*)",
        ),
        [("E180", 8, 12)],
        KINDS,
    ),
    "dropped-column": (
        formula(
            "dropped-column",
            ["admin.wards"],
            ["admin.wards.ward_code"],
            "count(DISTINCT admin.wards.bed_count)",
        ),
        [("E181", 24, 16)],
        KINDS,
    ),
    "ambiguous": (
        formula(
            "ambiguous",
            ["clinical.admissions", "clinical.discharges"],
            ["clinical.discharges.discharge_date"],
            "max(discharge_date - admission_date) + min(admission_id)",
        ),
        [("E182", 24, 44)],
        KINDS,
    ),
    "type-error": (
        formula(
            "type-error",
            ["clinical.admissions"],
            ["clinical.admissions.admission_date"],
            "min(\n  clinical.admissions.admission_date + 'x'\n)",
        ),
        [("E188", 25, 38)],  # PostgreSQL points at the operator
        ("postgres",),
    ),
    "code-never-stored": (
        enum("code-never-stored", "clinical.admissions.record_status")
        .replace('### "A"', '### "C"\n\nChiuso.\n\n### "A"')
        .replace("Attivo.", 'Attivo.\n\n### "Z"\n\nMai usato.'),
        [("W186", 25, None)],
        ("sqlite", "postgres"),
    ),
    "code-undocumented": (
        enum("code-undocumented", "clinical.admissions.record_status"),
        [("W187", 15, None)],
        ("sqlite", "postgres"),
    ),
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_broken_unit_gets_its_exact_finding_in_every_kind_it_applies_to(
    workspace: Path,
    tmp_path: Path,
    kind: str,
    live: Cluster | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cases = {name: case for name, case in BROKEN.items() if kind in case[2]}
    write_units(
        workspace,
        {
            f"{CUR}/{'enum' if '### ' in text else 'formula'}/{name}.md": text
            for name, (text, _, _) in cases.items()
        },
    )
    more = () if kind == "ddl" else ("--sample-values",)
    result = check(workspace, tmp_path, kind, live, monkeypatch, *more)
    assert result.exit_code == 1, result.stdout + result.stderr
    got: dict[str, list[tuple[str, int, int | None]]] = {}
    for e in result.json["errors"]:
        got.setdefault(e["path"].rsplit("/", 1)[1][:-3], []).append(
            (e["code"], e["line"], e["column"])
        )
    for w in without_w184(result.json):
        got.setdefault(w["path"].rsplit("/", 1)[1][:-3], []).append((w["code"], w["line"], None))
    assert got == {name: case[1] for name, case in cases.items()}
    ran = {"ddl": 3, "sqlite": 5, "postgres": 6}[kind]
    assert len(got) == len(cases) == ran
    messages = {e["path"].rsplit("/", 1)[1]: e["message"] for e in result.json["errors"]}
    messages.update({w["path"].rsplit("/", 1)[1]: w["message"] for w in result.json["warnings"]})
    assert "did you mean clinical.admissions?" in messages["renamed-table.md"]
    if kind == "postgres":
        assert "operator is not unique: date + unknown (42725)" in messages["type-error.md"]
        types = {t["unit_id"]: t["type"] for t in result.json["result"]["formula_types"]}
        assert types["evidence:test:type-error"] is None
    if kind != "ddl":
        assert 'the value "Z" is documented, but no row of' in messages["code-never-stored.md"]
        # 'C' is documented there; here it is not: the count of rows is told
        assert 'stores "C" in 5 row(s)' in messages["code-undocumented.md"]


def test_one_refused_formula_leaves_the_others_checked(
    workspace: Path, tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refusals interleaved with good formulas: the savepoint keeps the transaction
    usable, so every good formula still gets its type and every bad one its message."""
    units = {}
    for i in range(9):
        bad = i % 3 == 1
        sql = "admin.wards.ward_code || 1.5" if not bad else "admin.wards.is_active + 1"
        units[f"{CUR}/formula/f{i}.md"] = formula(
            f"f{i}", ["admin.wards"], ["admin.wards.ward_code"], sql
        )
    write_units(workspace, units)
    result = check(workspace, tmp_path, "postgres", pg_cluster, monkeypatch)
    assert result.exit_code == 1
    refused = sorted(e["path"].rsplit("/", 1)[1] for e in result.json["errors"])
    assert refused == ["f1.md", "f4.md", "f7.md"]
    assert all(
        "operator does not exist: boolean + integer" in e["message"] for e in result.json["errors"]
    )
    types = {t["unit_id"]: t["type"] for t in result.json["result"]["formula_types"]}
    assert [types[f"evidence:test:f{i}"] for i in range(9)] == [
        None if i % 3 == 1 else "text" for i in range(9)
    ]


@pytest.mark.parametrize(("formulas", "enums"), [(3, 0), (450, 45)])
def test_round_trips_stay_bounded_whatever_the_number_of_formulas(
    workspace: Path,
    tmp_path: Path,
    pg_cluster: Cluster,
    monkeypatch: pytest.MonkeyPatch,
    formulas: int,
    enums: int,
) -> None:
    """Counted, not timed: setup, catalog and type names are one round trip each, the
    formulas and the enum samples one per pipeline of up to PIPELINE_STATEMENTS (these
    are short: the byte limit does not bind); never one per formula or column."""
    from evidence_tool.catalog.postgres import PIPELINE_STATEMENTS

    units = {
        f"{CUR}/formula/n{i}.md": formula(
            f"n{i}",
            ["lab.results"],
            ["lab.results.value"],
            f"avg(lab.results.value) * {i} + count(lab.results.flag)",
        )
        for i in range(formulas)
    }
    for i in range(enums):
        text = enum(f"e{i}", "lab.results.status").replace('### "A"', '### "F"')
        units[f"{CUR}/enum/e{i}.md"] = text.replace("Attivo.", 'Finale.\n\n### "V"\n\nValidato.')
    write_units(workspace, units)
    result = check(workspace, tmp_path, "postgres", pg_cluster, monkeypatch, "--sample-values")
    assert result.exit_code == 0, result.stdout
    assert result.json["warnings"] == []
    summary = result.json["result"]
    assert len(summary["formula_types"]) == formulas + 6
    assert summary["enums_sampled"] == enums + 6
    pipelines = math.ceil((formulas + 6) / PIPELINE_STATEMENTS)
    pipelines += math.ceil((enums + 6) / PIPELINE_STATEMENTS)
    # + 1: the fixture's 6 examples prepared
    assert summary["round_trips"] == 3 + pipelines + 1 == {3: 6, 450: 8}[formulas]


def test_long_formulas_split_their_pipelines_by_bytes_and_all_get_their_type(
    workspace: Path, tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """150 formulas of about 1.5 KB each: fewer than PIPELINE_STATEMENTS, but more than
    PIPELINE_BYTES together, so they go in several pipelines (a pipeline is written whole
    before its replies are read, and must fit the socket buffers)."""
    from evidence_tool.catalog.postgres import PIPELINE_BYTES

    arms = " ".join(f"WHEN lab.results.value > {k} THEN {k}.5" for k in range(40))
    sql = f"sum(CASE {arms} ELSE 0 END)"
    assert 1400 < len(sql) < 1700
    write_units(
        workspace,
        {
            f"{CUR}/formula/long{i}.md": formula(
                f"long{i}", ["lab.results"], ["lab.results.value"], f"{sql} + {i}"
            )
            for i in range(150)
        },
    )
    result = check(workspace, tmp_path, "postgres", pg_cluster, monkeypatch)
    assert result.exit_code == 0, result.stdout
    types = result.json["result"]["formula_types"]
    assert len(types) == 156 and all(t["type"] == "numeric" for t in types if "long" in t["path"])
    least = math.ceil(150 * len(sql) / PIPELINE_BYTES)  # 4 for 150 x 1.5 KB
    # setup, catalog, type names, and the examples' one pipeline
    formula_pipelines = result.json["result"]["round_trips"] - 4
    assert least >= 3 and least <= formula_pipelines <= least + 1


def test_formulas_are_prepared_never_executed(
    workspace: Path, tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A formula with a side effect (nextval) is typed as bigint and the sequence has
    not moved: it was parsed and described, not run (nor would a read-only
    transaction let it)."""
    seq = "CREATE SEQUENCE admin.ticket_seq;"
    write_units(
        workspace,
        {
            f"{CUR}/formula/ticket.md": formula(
                "ticket",
                ["admin.wards"],
                ["admin.wards.ward_code"],
                "nextval('admin.ticket_seq') + count(admin.wards.ward_code)",
            )
        },
    )
    name = f"w{next(_names)}"
    dsn = pg_cluster.create_database(name, *warehouse_sql(), extra_sql=seq)
    monkeypatch.setenv("THT_CATALOG_DSN", dsn)
    result = tht(workspace, "check", "--catalog", "postgres")
    assert result.exit_code == 0, result.stdout
    types = {t["unit_id"]: t["type"] for t in result.json["result"]["formula_types"]}
    assert types["evidence:test:ticket"] == "bigint"
    import psycopg

    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT is_called FROM admin.ticket_seq").fetchone()
    assert row == (False,)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_numeric_codes_compare_as_the_database_prints_them(
    workspace: Path,
    tmp_path: Path,
    kind: str,
    live: Cluster | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An integer column's stored 24 matches the documented "24" in both databases;
    "24.0" does not (no numeric equality is guessed)."""
    text = (
        enum("beds", "admin.ward_census.available_beds")
        .replace('### "A"', '### "24"')
        .replace("Attivo.", 'Ventiquattro.\n\n### "24.0"\n\nNon scritto così.')
    )
    write_units(workspace, {f"{CUR}/enum/beds.md": text})
    result = check(workspace, tmp_path, kind, live, monkeypatch, "--sample-values")
    warnings = without_w184(result.json)
    assert [(w["code"], w["line"]) for w in warnings] == [("W186", 21)]
    assert '"24.0" is documented' in warnings[0]["message"]
    assert result.exit_code == 0


def test_sample_values_against_ddl_files_is_a_usage_error(workspace: Path, tmp_path: Path) -> None:
    result = tht(workspace, "check", *catalog_args("ddl", tmp_path), "--sample-values")
    assert result.exit_code == 2
    assert result.json["errors"][0]["code"] == "E901"
    assert "--catalog postgres or --catalog sqlite" in result.json["errors"][0]["message"]


def test_sqlite_sampling_is_stopped_at_its_time_limit(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A column too big to group in time gives W188 for its unit; the others are compared."""
    from evidence_tool.catalog import values

    big = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) "
        "INSERT INTO lab.results (result_id, patient_id, test_code, result_ts, flag, status) "
        "SELECT 100000 + i, 1, 'GLU', '2024-01-01', 'N', 'F' FROM n;"
    )
    args = ["--catalog", "sqlite"]
    for given in build_sqlite(tmp_path / "big", big):
        args += ["--sqlite", given]
    monkeypatch.setattr(values, "SAMPLE_TIMEOUT_S", -1.0)  # past the limit at the first tick
    result = tht(workspace, "check", *args, "--sample-values")
    codes = sorted((w["code"], w["path"].rsplit("/", 1)[1]) for w in result.json["warnings"])
    assert ("W188", "lab-result-flag.md") in codes
    assert all(
        "ran past its" in w["message"] for w in result.json["warnings"] if w["code"] == "W188"
    )
    assert result.exit_code == 0


@pytest.mark.parametrize("ci", ["true", None])
def test_without_postgresql_the_cluster_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, ci: str | None
) -> None:
    """CI never skips the live tests; a developer is told how to install PostgreSQL."""
    import pg_cluster

    monkeypatch.setattr(pg_cluster, "bin_dir", lambda: None)
    if ci:
        monkeypatch.setenv("CI", ci)
    else:
        monkeypatch.delenv("CI", raising=False)
    expected = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(expected) as caught:
        pg_cluster.start_cluster()
    assert "apt-get install postgresql" in str(caught.value)


def test_a_renamed_table_and_a_dropped_column_give_the_same_findings_live_as_in_ddl(
    workspace: Path, tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warehouse changed under the units: the live catalog (dropped columns are
    still in pg_attribute, marked attisdropped) finds exactly what the DDL files find."""
    change = (
        "ALTER TABLE lab.tests RENAME TO test_catalog;\n"
        "ALTER TABLE admin.wards DROP COLUMN location_note;\n"
    )
    ddl = check(workspace, tmp_path, "ddl", None, monkeypatch, extra_sql=change)
    live = check(workspace, tmp_path, "postgres", pg_cluster, monkeypatch, extra_sql=change)
    assert ddl.exit_code == live.exit_code == 1
    where = [
        (e["code"], e["path"], e["line"], e["column"], e["message"]) for e in ddl.json["errors"]
    ]
    assert len(where) == 11  # the last in an example's SQL: FROM lab.tests
    assert [
        (e["code"], e["path"], e["line"], e["column"], e["message"]) for e in live.json["errors"]
    ] == where


def test_every_kind_of_relation_postgresql_has_is_in_the_live_catalog(
    workspace: Path, tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Materialized views, partitioned tables and their partitions, foreign tables."""
    extra = (
        "CREATE MATERIALIZED VIEW lab.flag_counts AS "
        "SELECT flag, count(*) AS n FROM lab.results GROUP BY flag;\n"
        "CREATE TABLE lab.results_p (result_id bigint, result_day date) "
        "PARTITION BY RANGE (result_day);\n"
        "CREATE TABLE lab.results_p2024 PARTITION OF lab.results_p "
        "FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');\n"
        "CREATE EXTENSION file_fdw;\n"
        "CREATE SERVER files FOREIGN DATA WRAPPER file_fdw;\n"
        "CREATE FOREIGN TABLE lab.imported (code text, val numeric(8,2)) "
        "SERVER files OPTIONS (filename '/dev/null');\n"
    )
    unit = formula(
        "kinds",
        ["lab.flag_counts", "lab.results_p", "lab.results_p2024", "lab.imported"],
        ["lab.flag_counts.n", "lab.imported.val"],
        "sum(lab.flag_counts.n) + count(lab.results_p2024.result_day) + sum(lab.imported.val)",
    )
    write_units(workspace, {f"{CUR}/formula/kinds.md": unit})
    result = check(workspace, tmp_path, "postgres", pg_cluster, monkeypatch, extra_sql=extra)
    assert result.exit_code == 0, result.stdout
    assert result.json["result"]["catalog"]["relations"] == 19 + 4
    types = {t["unit_id"]: t["type"] for t in result.json["result"]["formula_types"]}
    assert types["evidence:test:kinds"] == "numeric"


def test_open_catalog_reads_a_live_warehouse_for_other_callers(
    pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """open_catalog (what drift and the opt-in steps call) reads PostgreSQL too, through
    the variable the settings name, and closes its session."""
    from evidence_tool.catalog.settings import CatalogSettings, open_catalog

    monkeypatch.setenv("OTHER_DSN", pg_cluster.dsn())
    catalog, findings = open_catalog(
        CatalogSettings("postgres", search_path=("clinical", "public"), dsn_env="OTHER_DSN")
    )
    assert findings == [] and catalog.kind == "postgres" and len(catalog.relations) == 19
    admissions = catalog.relation(None, "admissions")  # through the search path
    assert admissions is not None and admissions.schema == "clinical"
    assert admissions.column("admission_date") == Column("admission_date", "date")
    import psycopg

    query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'tht catalog check'"
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as conn:
        for _ in range(600):  # a closed backend leaves the view within moments; bounded wait
            open_sessions = conn.execute(query).fetchone()
            if open_sessions == (0,):
                break
            conn.execute("SELECT pg_sleep(0.1)")
    assert open_sessions == (0,)


def test_the_rows_folder_read_as_ddl_changes_nothing(workspace: Path) -> None:
    """The rows live apart (fixtures/warehouse/data) so --ddl fixtures/warehouse reads the
    schema alone; pointed at them too, the DDL reader skips every INSERT quietly."""
    from catalog_helpers import WAREHOUSE, data_files

    alone = tht(workspace, "check", "--catalog", "ddl", "--ddl", str(WAREHOUSE))
    both = tht(
        workspace,
        "check",
        "--catalog",
        "ddl",
        "--ddl",
        str(WAREHOUSE),
        "--ddl",
        str(WAREHOUSE / "data"),
    )
    assert alone.exit_code == both.exit_code == 0, both.stdout
    assert len(data_files()) == 4 and len(both.json["result"]["catalog"]["sources"]) == 7 + 4
    assert (
        both.json["result"]["catalog"]["fingerprint"]
        == alone.json["result"]["catalog"]["fingerprint"]
    )


def test_the_catalog_record_carries_a_type_error_on_its_unit(
    workspace: Path, tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-unit codes the review page shows come after checks 4 and 5: a formula
    PostgreSQL refuses is recorded with E188, a clean one with no code."""
    from evidence_tool.catalog.review import read_record
    from evidence_tool.workspace.layout import Layout

    bad = formula("bad", ["admin.wards"], ["admin.wards.ward_code"], "admin.wards.is_active + 1")
    write_units(workspace, {f"{CUR}/formula/bad.md": bad})
    result = check(workspace, tmp_path, "postgres", pg_cluster, monkeypatch)
    assert [e["code"] for e in result.json["errors"]] == ["E188"]
    units = read_record(Layout.at(workspace))["units"]
    assert units["evidence:test:bad"]["codes"] == ["E188"]
    assert units["evidence:clinical:age-at-admission"]["codes"] == []
    assert len(units) == 49
