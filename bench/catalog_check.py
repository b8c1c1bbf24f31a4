"""Catalog check cost: N generated units against a 500-table catalog, DDL and live paths.

    python bench/catalog_check.py [--n 10000] [--repeat 3] [--no-live]
                                  [--no-examples | --examples-only]

Generates (once) the benchmark workspace under bench/out/ and a DDL folder of
500 tables (the 485 tables the generated units name, 15 of their ``_hist``
tables), then measures, in-process: reading the DDL into a catalog, a full
``validate`` of the workspace, and the whole check (validate + catalog + every
unit checked).  The check's own cost per unit is the difference of the last two.

The live path loads the same 500 tables into a throwaway PostgreSQL cluster
(tests/pg_cluster.py: Debian's binaries, started and stopped here) and runs the
check against it: checks 1-3, every formula prepared and typed (check 4) and
every enum's values sampled (check 5); it prints the round trips counted.
Then the example check (issue 29): a copy of the workspace whose 1 in 8 example units
hold a realistic query (REAL_SQL) is checked against the same tables as DDL, as SQLite
files, and (unless --no-live) loaded into PostgreSQL; it prints the example check's
own cost per example (wall and CPU) and the live path's round trips.
Nothing asserts: the figures go into docs/performance.md (the bound on round trips
is asserted by tests/catalog/test_catalog_live.py, by counting).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import closing
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.generate import SCHEMAS, generate  # noqa: E402

OUT = HERE / "out"
COLUMNS = ["id bigint", "valid_from date"] + [f"c{k} numeric(12,2)" for k in range(13)]


def write_ddl(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tables = [f"{s}.t{t}" for s in SCHEMAS for t in range(97)]
    tables += [f"{s}.t{t}_hist" for s in SCHEMAS for t in range(3)]
    assert len(tables) == 500
    body = "".join(f"CREATE SCHEMA {s};\n" for s in SCHEMAS)
    body += "".join(f"CREATE TABLE {t} ({', '.join(COLUMNS)});\n" for t in tables)
    (folder / "warehouse.sql").write_text(body, encoding="utf-8")
    return folder


def timed(fn: object, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def cpu_timed(fn: object, repeat: int) -> float:
    """Median CPU seconds of this process: steadier than wall time on a shared machine."""
    runs = []
    for _ in range(repeat):
        start = time.process_time()
        fn()  # type: ignore[operator]
        runs.append(time.process_time() - start)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-live", action="store_true", help="skip the live PostgreSQL path")
    ap.add_argument("--no-examples", action="store_true", help="skip the example SQL check")
    ap.add_argument("--examples-only", action="store_true", help="only the example SQL check")
    args = ap.parse_args()
    from evidence_tool.catalog.ddl import read_ddl
    from evidence_tool.catalog.settings import CatalogSettings
    from evidence_tool.catalog.workspace_check import check_workspace
    from evidence_tool.workspace import validate_workspace

    ws = OUT / f"ws-{args.n}"
    if not (ws / "workspace.yaml").exists():
        generate(args.n, ws)
    ddl = write_ddl(OUT / "catalog-500")
    if args.examples_only:
        examples(ws, ddl / "warehouse.sql", args.n, args.repeat, not args.no_live)
        return
    settings = CatalogSettings("ddl", (str(ddl),))
    t_ddl = timed(lambda: read_ddl([str(ddl)]), args.repeat)
    t_validate = timed(lambda: validate_workspace(ws), args.repeat)
    result = check_workspace(ws, settings)
    t_check = timed(lambda: check_workspace(ws, settings), args.repeat)
    n = args.n
    print(f"units {n}, relations {len(result.catalog.relations)}, findings {len(result.errors)}")
    print(f"read 500-table DDL      {t_ddl:8.3f} s")
    print(f"validate                {t_validate:8.3f} s  {t_validate / n * 1e6:8.0f} µs/unit")
    print(f"check (validate + all)  {t_check:8.3f} s  {t_check / n * 1e6:8.0f} µs/unit")
    extra = (t_check - t_validate - t_ddl) / n * 1e6
    print(f"catalog checks alone    {extra:8.0f} µs/unit")
    if not args.no_live:
        live(ws, ddl / "warehouse.sql", n, t_validate, args.repeat)
    if not args.no_examples:
        examples(ws, ddl / "warehouse.sql", n, args.repeat, not args.no_live)


def live(ws: Path, ddl: Path, n: int, t_validate: float, repeat: int) -> None:
    """The same check against the 500 tables loaded into a throwaway cluster."""
    import os

    sys.path.insert(0, str(HERE.parent / "tests"))
    from pg_cluster import start_cluster

    from evidence_tool.catalog.postgres import open_live
    from evidence_tool.catalog.settings import CatalogSettings, open_catalog
    from evidence_tool.catalog.values import sample_of
    from evidence_tool.catalog.workspace_check import check_workspace

    cluster = start_cluster()
    try:
        os.environ["THT_BENCH_DSN"] = cluster.create_database("bench500", ddl)
        settings = CatalogSettings("postgres", dsn_env="THT_BENCH_DSN")
        result = check_workspace(ws, settings, sample_values=True)
        t_live = timed(lambda: check_workspace(ws, settings, sample_values=True), repeat)
        # the parts only the live path has, apart
        statements = [f.statement() for f in result.formulas]
        samples = [s for u, _, _ in result.enums if (s := sample_of(u, result.catalog))]
        t_read = timed(lambda: open_catalog(settings), repeat)  # one session, the catalog read
        with open_live("THT_BENCH_DSN", ("public",)) as session:
            t_types = timed(lambda: session.describe(statements), repeat)
            t_samples = timed(lambda: session.sample(samples), repeat)
    finally:
        cluster.stop()
    typed = sum(1 for t in result.types if t.type)
    print(
        f"live: relations {len(result.catalog.relations)}, formulas {len(result.types)} "
        f"({typed} typed), enums sampled {result.values_checked}, "
        f"round trips {result.round_trips}, findings {len(result.errors)}"
    )
    print(f"live check (all)        {t_live:8.3f} s  {t_live / n * 1e6:8.0f} µs/unit")
    print(f"live catalog checks     {(t_live - t_validate) / n * 1e6:8.0f} µs/unit")
    print(f"connect + read catalog  {t_read:8.3f} s")
    print(
        f"type-check formulas     {t_types:8.3f} s  {t_types / len(statements) * 1e6:8.0f} µs/formula"
    )
    print(
        f"sample enum values      {t_samples:8.3f} s  {t_samples / len(samples) * 1e6:8.0f} µs/enum"
    )


# The example SQL of the generated units is one line (SELECT count(*) FROM t); the
# example check is measured on a copy whose examples hold a query as people write them:
# a CTE, a join with USING, a correlated sub-select, GROUP BY and ORDER BY an output name.
REAL_SQL = """WITH recent AS (
    SELECT h.id, h.valid_from, h.c1 + h.c2 AS total
    FROM {s}.t{a} AS h
    WHERE h.valid_from >= '2024-01-01'
)
SELECT r.id, sum(r.total) AS total, count(o.c3) AS n
FROM recent AS r
JOIN {s}.t{b} AS o USING (id)
WHERE o.c4 > (SELECT avg(x.c4) FROM {s}.t{b} AS x WHERE x.valid_from = o.valid_from)
GROUP BY r.id
ORDER BY total DESC
LIMIT 10"""


def with_real_examples(ws: Path, out: Path) -> tuple[Path, int]:
    """A copy of ``ws`` whose example units each hold REAL_SQL on their own tables."""
    import re
    import shutil

    if not (out / "workspace.yaml").exists():
        shutil.copytree(ws, out, ignore=shutil.ignore_patterns(".evidence-cache"))
    files = sorted((out / "evidence" / "curated" / "example").glob("*.md"))
    fence = re.compile(r"```sql\n.*?\n```", re.S)
    for i, path in enumerate(files):
        text = path.read_text(encoding="utf-8")
        table = re.search(r"FROM (\w+)\.t(\d+)", text) or re.search(
            r"tables: \[(\w+)\.t(\d+)", text
        )
        schema, a = (table.group(1), int(table.group(2))) if table else (SCHEMAS[0], i % 97)
        sql = REAL_SQL.format(s=schema, a=a, b=(a + 1) % 97)
        new = fence.sub(lambda _, sql=sql: f"```sql\n{sql}\n```", text, count=1)  # type: ignore[misc]
        path.write_text(new, encoding="utf-8")
    return out, len(files)


def sqlite_warehouse(ddl: Path, folder: Path) -> list[str]:
    """The 500 tables as SQLite files, one per schema (``--sqlite SCHEMA=PATH``)."""
    import re
    import sqlite3

    folder.mkdir(parents=True, exist_ok=True)
    given = []
    for schema in SCHEMAS:
        path = folder / f"{schema}.db"
        if not path.exists():
            con = sqlite3.connect(path)
            for m in re.finditer(rf"CREATE TABLE {schema}\.(\w+) \((.*?)\);", ddl.read_text()):
                con.execute(f"CREATE TABLE {m.group(1)} ({m.group(2)})")
            con.commit()
            con.close()
        given.append(f"{schema}={path}")
    return given


def examples(ws: Path, ddl: Path, n: int, repeat: int, with_live: bool) -> None:
    """The example check's own cost per example (DDL and SQLite), and the live path's
    round trips with every example prepared."""
    from evidence_tool.catalog.example_sql import Resolver
    from evidence_tool.catalog.example_sqlite import SqliteExampleChecker, SqliteExamples
    from evidence_tool.catalog.fences import sql_blocks
    from evidence_tool.catalog.settings import CatalogSettings, open_catalog
    from evidence_tool.catalog.workspace_check import check_workspace
    from evidence_tool.workspace import validate_workspace

    real, count = with_real_examples(ws, OUT / f"ws-{n}-examples")
    files = sorted((real / "evidence" / "curated" / "example").glob("*.md"))
    texts = [(f"u{i}", p.read_text(encoding="utf-8")) for i, p in enumerate(files)]
    ddl_settings = CatalogSettings("ddl", (str(ddl.parent),))
    catalog, _ = open_catalog(ddl_settings)
    lite = CatalogSettings("sqlite", tuple(sqlite_warehouse(ddl, OUT / "catalog-500-sqlite")))
    lite_catalog, _ = open_catalog(lite)

    def pg_dialect() -> int:
        found = 0
        for uid, text in texts:
            for block in sql_blocks(text):
                found += len(Resolver(catalog, "x.md", uid, block).check().findings)
        return found

    def sqlite_engine() -> int:
        out = SqliteExamples()
        with closing(SqliteExampleChecker(list(lite.paths), lite_catalog)) as checker:
            for uid, text in texts:
                for block in sql_blocks(text):
                    checker.check(block, "x.md", uid, out)
        return len(out.findings) + len(out.warnings)

    print(f"examples {count} (of {n} units), {len(REAL_SQL)} bytes of SQL each")
    print(f"findings: DDL {pg_dialect()}, SQLite {sqlite_engine()} (0 expected)")
    for name, fn in (("DDL", pg_dialect), ("SQLite", sqlite_engine)):
        wall, cpu = timed(fn, repeat), cpu_timed(fn, repeat)
        print(
            f"example check, {name:6}  {wall:8.3f} s  {wall / count * 1e6:8.0f} µs/example wall, "
            f"{cpu / count * 1e6:6.0f} µs CPU"
        )
    t_validate = timed(lambda: validate_workspace(real), repeat)
    t_ddl = timed(lambda: check_workspace(real, ddl_settings), repeat)
    t_sqlite = timed(lambda: check_workspace(real, lite), repeat)
    print(f"validate                {t_validate:8.3f} s")
    for name, t in (("DDL", t_ddl), ("SQLite", t_sqlite)):
        over = (t - t_validate) / count * 1e6
        print(
            f"check, {name:6}          {t:8.3f} s  {over:8.0f} µs/example over validate (all checks)"
        )
    if with_live:
        live_examples(real, ddl, count)


def live_examples(ws: Path, ddl: Path, count: int) -> None:
    import os

    sys.path.insert(0, str(HERE.parent / "tests"))
    from pg_cluster import start_cluster

    from evidence_tool.catalog.settings import CatalogSettings
    from evidence_tool.catalog.workspace_check import check_workspace

    cluster = start_cluster()
    try:
        os.environ["THT_BENCH_DSN"] = cluster.create_database("bench500x", ddl)
        settings = CatalogSettings("postgres", dsn_env="THT_BENCH_DSN")
        start = time.perf_counter()
        result = check_workspace(ws, settings)
        took = time.perf_counter() - start
    finally:
        cluster.stop()
    prepared = sum(1 for *_, q in result.queries if q.statement is not None)
    print(
        f"live: {prepared} of {count} examples prepared, {len(result.formulas)} formulas typed, "
        f"round trips {result.round_trips}, findings {len(result.errors)}, {took:.1f} s"
    )


if __name__ == "__main__":
    main()
