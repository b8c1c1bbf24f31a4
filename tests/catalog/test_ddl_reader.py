"""The DDL reader: statements apply in file order, as PostgreSQL would apply them."""

from __future__ import annotations

from pathlib import Path

from catalog_helpers import WAREHOUSE

from evidence_tool.catalog.ddl import read_ddl
from evidence_tool.catalog.model import Catalog


def ddl(tmp: Path, *files: str) -> tuple[Catalog, list[tuple[str, int | None, str]]]:
    paths = []
    for i, text in enumerate(files):
        p = tmp / f"{i:02d}.sql"
        p.write_text(text, encoding="utf-8")
        paths.append(str(p))
    catalog, findings = read_ddl(paths)
    return catalog, [(Path(d.path or "").name, d.line, d.message) for d in findings]


def columns(catalog: Catalog, schema: str, name: str) -> list[tuple[str, str]]:
    rel = catalog.relation(schema, name)
    assert rel is not None, f"{schema}.{name} missing"
    return [(c.name, c.type) for c in rel.columns]


def test_types_print_as_postgresql_prints_them(tmp_path: Path) -> None:
    catalog, problems = ddl(
        tmp_path,
        "CREATE TABLE s.t (a int, b bigint, c numeric(8,2), d varchar(4), e char(2), "
        "f timestamptz, g double precision, h int[], i bool, j text, k timestamp(3));",
    )
    assert problems == []
    assert columns(catalog, "s", "t") == [
        ("a", "integer"),
        ("b", "bigint"),
        ("c", "numeric(8,2)"),
        ("d", "character varying(4)"),
        ("e", "character(2)"),
        ("f", "timestamp with time zone"),
        ("g", "double precision"),
        ("h", "integer[]"),
        ("i", "boolean"),
        ("j", "text"),
        ("k", "timestamp(3) without time zone"),
    ]


def test_alter_rename_and_drop_apply_in_file_order(tmp_path: Path) -> None:
    catalog, problems = ddl(
        tmp_path,
        "CREATE TABLE ward (code text, name text, note text);\nCREATE TABLE old_stuff (x int);",
        "ALTER TABLE ward ADD COLUMN beds integer, DROP COLUMN note;\n"
        "ALTER TABLE ward RENAME COLUMN name TO ward_name;\n"
        "ALTER TABLE ward ALTER COLUMN beds TYPE bigint;\n"
        "ALTER TABLE ward RENAME TO wards;\n"
        "DROP TABLE old_stuff;\n"
        "ALTER TABLE IF EXISTS nowhere ADD COLUMN y int;",
    )
    assert problems == []
    assert catalog.relation(None, "ward") is None and catalog.relation(None, "old_stuff") is None
    assert columns(catalog, "public", "wards") == [
        ("code", "text"),
        ("ward_name", "text"),
        ("beds", "bigint"),
    ]


def test_views_take_their_columns_from_the_select_list_and_expand_stars(tmp_path: Path) -> None:
    catalog, problems = ddl(
        tmp_path,
        "CREATE TABLE a.x (id bigint, d date);\nCREATE TABLE a.y (id bigint, v numeric);",
        "CREATE VIEW a.both AS SELECT x.*, y.v AS value, count(*), y.v::text "
        "FROM a.x JOIN a.y ON y.id = x.id;\n"
        "CREATE VIEW a.renamed (key, day) AS SELECT * FROM a.x;\n"
        "CREATE VIEW a.union_of AS SELECT id FROM a.x UNION SELECT id FROM a.y;",
    )
    assert problems == []
    assert columns(catalog, "a", "both") == [
        ("id", "bigint"),
        ("d", "date"),
        ("value", "numeric"),
        ("count", "unknown"),
        ("v", "text"),
    ]
    assert columns(catalog, "a", "renamed") == [("key", "bigint"), ("day", "date")]
    assert columns(catalog, "a", "union_of") == [("id", "bigint")]
    assert catalog.relation("a", "both").kind == "view"  # type: ignore[union-attr]


def test_the_fixture_warehouse_reads_without_a_finding() -> None:
    catalog, problems = read_ddl([str(WAREHOUSE)])
    assert problems == []
    stays = catalog.relation("clinical", "closed_stays")
    assert stays is not None and stays.kind == "view"
    assert [c.name for c in stays.columns][-3:] == [
        "fiscal_year",
        "discharge_date",
        "discharge_mode",
    ]
    assert catalog.relation("pharmacy", "administrations").column("DoseMg") is not None  # type: ignore[union-attr]


def test_fingerprint_changes_with_a_column_type_and_only_for_that_relation(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    before, _ = ddl(tmp_path / "a", "CREATE TABLE t (a int); CREATE TABLE u (b int);")
    after, _ = ddl(tmp_path / "b", "CREATE TABLE t (a bigint); CREATE TABLE u (b int);")
    fa, fb = before.fingerprint(), after.fingerprint()
    assert list(fa) == ["public.t", "public.u"]
    assert fa["public.t"] != fb["public.t"] and fa["public.u"] == fb["public.u"]


def test_views_over_subqueries_and_ctes_expand_their_stars(tmp_path: Path) -> None:
    catalog, problems = ddl(
        tmp_path,
        "CREATE TABLE w.stays (stay_id bigint, ward text);\n"
        "CREATE VIEW w.per_ward AS\n"
        "WITH busy AS (SELECT ward, count(*) AS n FROM w.stays GROUP BY ward)\n"
        "SELECT b.*, s.* FROM busy AS b\n"
        "JOIN (SELECT stay_id, ward AS ward_code FROM w.stays) AS s ON s.ward_code = b.ward;\n",
    )
    assert problems == []
    assert columns(catalog, "w", "per_ward") == [
        ("ward", "text"),
        ("n", "unknown"),
        ("stay_id", "bigint"),
        ("ward_code", "text"),
    ]


def test_a_relation_created_twice_keeps_the_first_as_postgresql_does(tmp_path: Path) -> None:
    catalog, problems = ddl(
        tmp_path,
        "CREATE TABLE k.ward (code text);\nCREATE TABLE k.ward (name text, beds int);\n"
        "CREATE TABLE k.snap AS SELECT code FROM k.ward;\n"
        "CREATE TABLE IF NOT EXISTS k.snap AS SELECT code, code AS again FROM k.ward;",
    )
    assert columns(catalog, "k", "ward") == [("code", "text")]
    assert columns(catalog, "k", "snap") == [("code", "text")]
    assert [(line, "first definition is kept" in msg) for _f, line, msg in problems] == [(2, True)]


def test_the_documented_forms_give_their_columns(tmp_path: Path) -> None:
    """LIKE, INHERITS, CREATE TABLE AS, materialized and VALUES views (docs/catalog.md)."""
    catalog, problems = ddl(
        tmp_path,
        "CREATE TABLE d.base (id bigint, at date);\n"
        "CREATE TABLE d.copy (LIKE d.base, extra text);\n"
        "CREATE TABLE d.child (note text) INHERITS (d.base);\n"
        "CREATE TABLE d.cta AS SELECT id, at AS day FROM d.base;\n"
        "CREATE MATERIALIZED VIEW d.mat AS SELECT id FROM d.base;\n"
        "CREATE VIEW d.vals (code, label) AS VALUES ('A', 'alpha');",
    )
    assert problems == []
    assert columns(catalog, "d", "copy") == [("id", "bigint"), ("at", "date"), ("extra", "text")]
    assert columns(catalog, "d", "child") == [("id", "bigint"), ("at", "date"), ("note", "text")]
    assert columns(catalog, "d", "cta") == [("id", "bigint"), ("day", "date")]
    assert [c for c, _t in columns(catalog, "d", "mat")] == ["id"]
    assert [c for c, _t in columns(catalog, "d", "vals")] == ["code", "label"]
